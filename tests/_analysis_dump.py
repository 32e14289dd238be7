"""An analysis as plain data, to compare the results of two passes (fast and plain, in a server).

`dump` is the reference format's `Analysis`; `dump_session` another format's
`SessionAnalysis`, with the types of every value (1 is not 1.0, -0.0 is not 0.0).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import msgspec

from transcript_view.core.analysis import Analysis
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.transcript import Transcript


def _plain(o: object) -> object:
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return {f.name: _plain(getattr(o, f.name)) for f in dataclasses.fields(o)}
    if isinstance(o, dict):
        return {repr(k): _plain(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_plain(v) for v in o]
    if isinstance(o, float):
        return repr(o)
    if isinstance(o, Path | Transcript):
        return str(o)
    return o


def dump(a: Analysis) -> dict[str, object]:
    """Everything an analysis says, as plain data (operations and replay read back)."""
    return {
        "lines": a.lines,
        "envelopes": a.envelopes,
        "types": list(a.type_counts.items()),
        "meta": a.meta_line,
        "problems": _plain(a.problems),
        "sites": _plain([dataclasses.replace(s, op=None) for s in a.sites]),
        "site_ops": _plain([s.op for s in a.sites]),
        "replay_problems": a.replay_problems,
        "findings": _plain(a.findings),
        "compactions": _plain(a.compactions),
        "ops": _plain(list(a.operations)),
        "replay": _plain(list(a.replay)),
    }


def _plain_session(o: object) -> object:
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return {f.name: _plain_session(getattr(o, f.name)) for f in dataclasses.fields(o)}
    if isinstance(o, msgspec.Struct):
        return {f: _plain_session(getattr(o, f)) for f in o.__struct_fields__} | {
            "": type(o).__name__
        }
    if isinstance(o, dict):
        return [(repr(k), _plain_session(v)) for k, v in o.items()]
    if isinstance(o, (list, tuple)):
        return [type(o).__name__, *(_plain_session(v) for v in o)]
    if isinstance(o, float):
        return ("float", repr(o), math.copysign(1, o))
    if isinstance(o, Path | Transcript):
        return str(o)
    return (type(o).__name__, o)


def dump_session(a: SessionAnalysis) -> dict[str, object]:
    """Everything an analysis says, as plain data, in its order (dicts as item lists)."""
    return {
        "format": a.format,
        "artifact_dir": str(a.artifact_dir),
        "lines": a.lines,
        "envelopes": a.envelopes,
        "types": list(a.type_counts.items()),
        "problems": _plain_session(a.problems),
        "sites": _plain_session(a.sites),
        "findings": _plain_session(a.findings),
        "named": sorted(a.named),
        "tags": _plain_session(a.tags),
        "links": _plain_session(a.links),
        "owns_orphans": a.owns_orphans,
    }

"""An analysis as plain data, to compare the results of two passes (fast and plain, in a server)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from transcript_view.core.analysis import Analysis
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

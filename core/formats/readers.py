"""One entry point per format: the pass that reads a transcript of that format.

The seam a new format plugs into: its reader module, its `Format` member and
signature (`detect`), and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from transcript_view.core.analysis import Analysis, analyse
from transcript_view.core.artifacts import artifact_dir_for
from transcript_view.core.decoding import Measure, Measured
from transcript_view.core.formats.claude_code import analyse_claude, sidecar_dir
from transcript_view.core.formats.codex import analyse_codex
from transcript_view.core.formats.copilot import analyse_copilot
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.gemini import analyse_gemini
from transcript_view.core.formats.gemini import sidecar_dir as gemini_sidecar_dir
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.formats.opencode import analyse_opencode
from transcript_view.core.formats.opencode import sidecar_dir as opencode_sidecar_dir
from transcript_view.core.formats.qwen import analyse_qwen
from transcript_view.core.formats.qwen import sidecar_dir as qwen_sidecar_dir
from transcript_view.core.found import Found
from transcript_view.core.transcript import Transcript

Reader = Callable[..., Analysis | SessionAnalysis]
"""`(transcript, progress, *, found=None, measure=None, measured=None)`: a format's pass
(see `core.analysis.analyse`)."""

READERS: dict[Format, Reader] = {
    Format.REFERENCE: analyse,
    Format.CLAUDE_CODE: analyse_claude,
    Format.CODEX: analyse_codex,
    Format.QWEN: analyse_qwen,
    Format.GEMINI: analyse_gemini,
    Format.OPENCODE: analyse_opencode,
    Format.COPILOT: analyse_copilot,
}


def artifact_dir_of(path: Path, fmt: Format) -> Path | None:
    """Where a transcript of `fmt` keeps the rest of its markers (None: nowhere)."""
    if fmt is Format.CLAUDE_CODE:
        return sidecar_dir(path)
    if fmt in (Format.CODEX, Format.COPILOT):
        return None
    if fmt is Format.QWEN:
        return qwen_sidecar_dir(path)
    if fmt is Format.GEMINI:
        return gemini_sidecar_dir(path)
    if fmt is Format.OPENCODE:
        return opencode_sidecar_dir(path)
    return artifact_dir_for(path)


def analyse_as(
    transcript: Transcript,
    fmt: Format,
    progress: Callable[[int, int], None] | None = None,
    *,
    found: Found | None = None,
    measure: Measure | None = None,
    measured: Measured | None = None,
) -> Analysis | SessionAnalysis:
    """Read `transcript` as `fmt` (index it first); `found`: see `core.found.Found`.

    `measure` is taken of each line where it is mapped (`core.decoding.Measure`;
    a reference transcript's lines that are no envelope get -1), and
    `measured` is told each batch's measures, in file order.
    """
    extra: dict[str, object] = {}
    if found is not None:
        extra["found"] = found
    if measure is not None:
        extra.update(measure=measure, measured=measured)
    return READERS[fmt](transcript, progress, **extra)

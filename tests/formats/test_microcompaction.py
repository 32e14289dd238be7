"""Claude Code's microcompaction (2.1.9+): which results left the model's view, and where
their full outputs are."""

from __future__ import annotations

from pathlib import Path

import pytest
from _real_shapes import microcompacted_session
from _sessions import ClaudeSession

from transcript_view.core.formats.claude_code import ClaudePass
from transcript_view.core.formats.model import SessionAnalysis, SpillForm
from transcript_view.core.report import verify
from transcript_view.core.verification import MarkerState


def test_each_cleared_result_is_a_marker_on_the_boundary_naming_its_sidecar(
    tmp_path: Path,
) -> None:
    path = microcompacted_session(tmp_path)
    report = verify(path)
    analysis = report.analysis
    assert isinstance(analysis, SessionAnalysis)
    (m,) = analysis.microcompactions
    assert (m.line, m.trigger, m.pre_tokens, m.tokens_saved) == (8, "auto", 71221, 34078)
    assert [(c.tool_use_id, c.call, c.result) for c in m.cleared] == [
        ("toolu_M0", 2, 3), ("toolu_M1", 4, 5), ("toolu_M2", 6, 7)]
    sites = [s for s in analysis.sites if s.form is SpillForm.MICROCOMPACTED]
    assert [(s.line, s.offset, s.file, s.tool, s.cleared_result) for s in sites] == [
        (8, 0, "toolu_M0.txt", "Read", 3),
        (8, 1, "toolu_M1.txt", "Read", 5),
        (8, 2, "toolu_M2.txt", "Read", 7),
    ]
    # --check counts them; the one gone and the one of another size are notes, not errors.
    assert report.markers == 3 and report.present == 2
    assert [b.state for b in report.badges] == [
        MarkerState.PRESENT, MarkerState.PRESENT, MarkerState.NOT_STORED]
    notes = [(f.kind, f.line, f.file) for f in report.findings]
    assert ("cleared-result", 8, "toolu_M1.txt") in notes
    assert ("cleared-result", 8, "toolu_M2.txt") in notes
    assert all(f.severity.value == "note" for f in report.findings)
    assert not report.orphans
    # The result's own line says the model stopped seeing it there.
    assert any("microcompaction on line 8" in t for t in analysis.tags[3])


def test_a_session_before_the_record_has_the_files_and_no_markers(tmp_path: Path) -> None:
    report = verify(microcompacted_session(tmp_path, record=False))
    assert isinstance(report.analysis, SessionAnalysis)
    assert report.markers == 0 and not report.analysis.microcompactions
    assert not report.orphans  # named after tool calls: not orphans (the file cannot tell)


def test_a_hostile_tool_id_in_the_record_is_an_unsafe_name_never_a_path(tmp_path: Path) -> None:
    path = microcompacted_session(tmp_path)
    text = path.read_text().replace('"toolu_M2"]', '"../../etc/passwd"]')
    path.write_text(text)
    report = verify(path)
    assert [b.state for b in report.badges][-1] is MarkerState.UNSAFE_NAME
    (unsafe,) = [f for f in report.findings if f.kind == "unsafe-name"]
    # It names the tool id the file would be named after (there is no marker path).
    assert "'../../etc/passwd'" in unsafe.message and "None" not in unsafe.message


def test_ids_listed_again_and_again_are_read_once_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile boundary listing one id thousands of times (and boundaries repeating it)
    read the result's line again for each: minutes for a megabyte of file whose result
    is a few megabytes (found in review). Each line is read once per question."""
    s = ClaudeSession(tmp_path)
    s.user("go")
    s.tool_use("toolu_X", "Read", {"file_path": "x"})
    s.tool_result("toolu_X", "y" * 1000)
    meta = {"trigger": "auto", "compactedToolIds": ["toolu_X"] * 500}
    for _ in range(20):
        s.raw({**s._base("system"), "subtype": "microcompact_boundary",
               "content": "Context microcompacted", "microcompactMetadata": meta})
    reads: list[int] = []
    real = ClaudePass._read

    def counted(self: ClaudePass, line: int) -> object:
        reads.append(line)
        return real(self, line)

    monkeypatch.setattr(ClaudePass, "_read", counted)
    report = verify(s.write())
    assert isinstance(report.analysis, SessionAnalysis)
    assert len(report.analysis.microcompactions) == 20
    assert len(reads) < 50, len(reads)
    # One marker a boundary, and one note on the result for each boundary.
    assert report.markers == 20
    assert len(report.analysis.tags[3]) == 20

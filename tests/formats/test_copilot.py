"""Reading a GitHub Copilot CLI session (`core.formats.copilot`): its large outputs said, its
calls sized, the damage a crash leaves found on its lines.

The sessions are synthetic (`tests/_copilot.py`, from Copilot CLI 1.0.102's own texts and
event schema); each test builds the case it needs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _copilot import CopilotSession, size_words, too_large

from transcript_view.core.calls import COPILOT_USAGE, RECORDED_WINDOWS
from transcript_view.core.formats.copilot_markers import find_saved
from transcript_view.core.formats.detect import Format, detect, sniff
from transcript_view.core.formats.model import SpillForm
from transcript_view.core.formats.sessions import list_sessions, tree_format
from transcript_view.core.report import Report, verify
from transcript_view.core.transcript import Transcript

LOG = "\n".join(f"PASS tests/test_{i:04d}.py::test_case" for i in range(3000))
FILE = "1796412667518-copilot-tool-output-3704-8d7d30e5-9111-4e99-8d0c-4a9da33db938.txt"


def _session(tmp_path: Path) -> CopilotSession:
    s = CopilotSession(tmp_path / ".copilot")
    s.started()
    s.user("Why is the suite slow?")
    s.call(5_200)
    s.assistant("Running it.", [("call_1", "bash", {"command": "pytest -q"})])
    return s


def _kinds(report: Report) -> list[str]:
    return [f.kind for f in report.findings]


def test_a_session_is_detected_as_copilot_cli(tmp_path: Path) -> None:
    s = _session(tmp_path)
    path = s.write()
    assert detect(path).format is Format.COPILOT
    head = path.read_bytes().split(b"\n")[0][:120]  # a first line too long to read whole
    assert sniff(head, complete=False).format is Format.COPILOT


def test_a_large_output_is_a_marker_whose_file_is_not_looked_for(tmp_path: Path) -> None:
    s = _session(tmp_path)
    (tmp_path / "tmp").mkdir()
    (tmp_path / "tmp" / FILE).write_text(LOG)  # there, in a temp folder: still not read
    s.spilled("call_1", LOG, FILE, tmp=str(tmp_path / "tmp"))
    report = verify(s.write())
    assert report.format is Format.COPILOT and report.artifact_dir is None
    assert [b.state.value for b in report.badges] == ["not stored"]
    (f,) = report.findings
    assert f.kind == "not-stored" and f.severity.value == "note"
    assert "OS temp folder" in f.message and "not looked for" in f.message
    (site,) = report.analysis.sites  # type: ignore[union-attr]
    assert (site.form, site.file, site.tool) == (SpillForm.COPILOT_SAVED, FILE, "bash")
    assert site.size_text == size_words(len(LOG)) and site.preview == LOG[:500]
    assert report.errors == 0


@pytest.mark.parametrize("size", [800, 30_700, 168_894, 1_988_895])
def test_every_size_copilot_prints_is_read(size: int) -> None:
    output = ("x" * 99 + "\n") * (size // 100) + "y" * (size % 100)
    saved = find_saved(too_large(output, "/tmp/" + FILE))
    assert saved is not None and saved.size == size_words(size) and saved.path == "/tmp/" + FILE
    assert saved.preview == output[:500]


def test_a_marker_quoted_in_a_result_is_text(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.result("call_1", "The CLI said:\n" + too_large(LOG, "/tmp/" + FILE))
    report = verify(s.write())
    assert report.markers == 0 and report.findings == []


def test_each_usage_record_is_a_call_sized_by_its_input_tokens(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.result("call_1", "3000 passed")
    s.call(7_300, limit=128_000)
    s.assistant("All pass.")
    report = verify(s.write())
    calls = report.analysis.calls  # type: ignore[union-attr]
    assert list(calls.tokens) == [5_200, 7_300]
    assert list(calls.fields) == [COPILOT_USAGE, COPILOT_USAGE]
    assert list(calls.windows) == [64_000, 128_000]
    assert "maxPromptTokens" in RECORDED_WINDOWS[COPILOT_USAGE]
    assert calls.model_names == ["gpt-4.1"]


def test_a_compaction_and_a_truncation_shorten_the_context(tmp_path: Path) -> None:
    from transcript_view.core.call_context import context_of_call

    s = _session(tmp_path)
    s.result("call_1", "3000 passed")
    s.compaction(24_137, 10_519, "We ran the suite; it passes.")
    s.user("Now the linter.")
    s.call(10_600)
    s.truncation(24_137, 10_483)
    s.call(10_700)
    path = s.write()
    report = verify(path)
    a = report.analysis
    compaction, truncation = a.calls.compactions  # type: ignore[union-attr]
    assert (compaction.kind, compaction.tokens_before, compaction.tokens_after) == (
        "compaction", 24_137, 10_519
    )
    assert (truncation.kind, truncation.tokens_after) == ("truncation", 10_483)
    t = Transcript.open(path)
    try:
        ctx = context_of_call(t, a, 1)  # type: ignore[arg-type]
    finally:
        t.close()
    assert [e.role for e in ctx.entries] == ["summary", "user"]
    assert ctx.entries[0].line == compaction.line


def test_nul_bytes_and_events_run_together_are_findings_on_their_lines(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.result("call_1", "3000 passed")
    cut = s.text().split(b"\n")[-2][:40]  # the result's first 40 bytes, as written
    s.call(6_000)
    whole = s.text().split(b"\n")
    damaged = b"\n".join([*whole[:-2], cut + whole[-2], b""]) + b"\x00" * 512
    s.path.parent.mkdir(parents=True, exist_ok=True)
    s.path.write_bytes(damaged)
    report = verify(s.path)
    kinds = {f.line: f for f in report.findings}
    run_together = kinds[len(whole) - 1]
    assert run_together.kind == "malformed-line" and "run into it" in run_together.message
    nuls = kinds[len(whole)]
    assert nuls.kind == "torn-tail" and "512 NUL bytes" in nuls.message
    assert report.lines == len(whole)  # every other line read


def test_a_session_state_folder_lists_its_sessions(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.write()
    other = CopilotSession(tmp_path / ".copilot", session_id="9a8b7c6d-0000-4000-8000-00000000000f",
                           cwd="/Users/someone/other", start="2026-11-23T09:00:00")  # fmt: skip
    other.started()
    other.user("List the TODOs.")
    other.write()
    for where in (tmp_path / ".copilot", tmp_path / ".copilot" / "session-state"):
        assert tree_format(where) is Format.COPILOT
        listed = list_sessions(where, Format.COPILOT)
        assert {x.first_prompt for x in listed} == {"Why is the suite slow?", "List the TODOs."}
        assert {x.project for x in listed} == {"proj", "other"}
        assert all(x.started and x.started.startswith("2026-11-2") for x in listed)

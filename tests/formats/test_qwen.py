"""Reading a Qwen Code session (`core.formats.qwen`): its stubs verified, its calls sized.

The sessions are synthetic (`tests/_qwen.py`, from Qwen Code 0.24.4's own
templates); each test builds the case it needs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from _qwen import QwenSession, fit_text, sanitized
from _support import QWEN_EXAMPLE

from transcript_view.core.calls import QWEN_USAGE, WindowSource
from transcript_view.core.formats.detect import Format, detect, sniff
from transcript_view.core.formats.model import SpillForm
from transcript_view.core.formats.qwen import project_root, sidecar_dir
from transcript_view.core.formats.qwen_markers import tool_results_dir
from transcript_view.core.report import Report, verify

TESTS = "".join(f"PASS src/test_{i:04d}.py\n" for i in range(3000))


def _session(tmp_path: Path) -> QwenSession:
    s = QwenSession(tmp_path / ".qwen")
    s.user("run the tests")
    s.assistant("Running them.", [("call_1", "run_shell_command", {"command": "pytest"})],
                tokens=12_000)  # fmt: skip
    return s


def _states(report: Report) -> list[str]:
    return [b.state.value for b in report.badges]


def _kinds(report: Report) -> list[str]:
    return [f.kind for f in report.findings]


def test_a_session_is_detected_as_qwen_code_not_claude_code(tmp_path: Path) -> None:
    s = _session(tmp_path)
    path = s.write()
    assert detect(path).format is Format.QWEN
    # A first line too long to read whole is told by the keys it opens with.
    head = path.read_bytes().split(b"\n")[0][:200]
    assert sniff(head, complete=False).format is Format.QWEN


def test_a_stub_with_its_sha256_is_verified_against_the_projects_file(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.spill("call_1", "run_shell_command", TESTS)
    report = verify(s.write())
    assert report.format is Format.QWEN
    assert report.artifact_dir == s.results
    assert (report.markers, report.verified, _states(report)) == (1, 1, ["verified"])
    assert report.findings == []
    (site,) = report.analysis.sites  # type: ignore[union-attr]
    assert site.form is SpillForm.QWEN_PERSISTED and site.file == "call_1.txt"
    assert site.digest == hashlib.sha256(TESTS.encode()).hexdigest()
    assert site.path is not None and site.path.startswith("/home/alice/.qwen/tmp/")


def test_the_results_folder_is_found_from_the_records_cwd(tmp_path: Path) -> None:
    s = _session(tmp_path)
    path = s.write()
    assert project_root(path) == "/home/alice/proj"
    assert sidecar_dir(path) == tool_results_dir(path, "/home/alice/proj") == s.results
    assert s.path.parent.parent.name == sanitized("/home/alice/proj") == "-home-alice-proj"


def test_a_file_gone_after_its_24_hours_is_a_note_not_an_error(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.spill("call_1", "run_shell_command", TESTS, file=False)
    report = verify(s.write())
    assert (_states(report), _kinds(report), report.errors) == (
        ["expired"], ["expired-artifact"], 0
    )
    assert report.expired == 1
    assert "after 24 hours" in report.findings[0].message


@pytest.mark.parametrize(
    ("stored", "state", "kind"),
    [
        (TESTS.replace("0001", "000X"), "digest mismatch", "digest-mismatch"),  # same size
        (TESTS + "x" * 4000, "size mismatch", "size-mismatch"),  # 4 KB more
    ],
    ids=["edited", "grown"],
)
def test_a_file_that_is_not_the_output_the_stub_hashed_is_an_error(
    tmp_path: Path, stored: str, state: str, kind: str
) -> None:
    s = _session(tmp_path)
    s.spill("call_1", "run_shell_command", TESTS, stored=stored)
    report = verify(s.write())
    assert (_states(report), _kinds(report)) == ([state], [kind])


def test_a_preview_that_is_not_the_files_start_is_an_excerpt_mismatch(tmp_path: Path) -> None:
    s = _session(tmp_path)
    record = s.spill("call_1", "run_shell_command", TESTS)
    response = record["message"]["parts"][0]["functionResponse"]["response"]
    response["output"] = response["output"].replace("PASS src/test_0002", "FAIL src/test_0002")
    report = verify(s.write())
    assert (_states(report), _kinds(report)) == (["excerpt mismatch"], ["excerpt-mismatch"])


def test_a_stub_from_before_the_digest_line_is_matched_never_verified(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.spill("call_1", "run_shell_command", TESTS, digest=False)
    report = verify(s.write())
    assert (_states(report), report.verified, report.matched) == (["preview matches"], 0, 1)


def test_a_stub_whose_file_could_not_be_written_says_why(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.not_persisted("call_1", "run_shell_command", TESTS, "(session disk budget exhausted)")
    report = verify(s.write())
    assert (_states(report), _kinds(report), report.errors) == (
        ["could not be stored"], ["not-stored"], 0
    )
    assert "(session disk budget exhausted)" in report.findings[0].message


def test_a_batch_budget_cut_is_matched_by_its_head_and_tail(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.budget_cut("call_1", "run_shell_command", TESTS, 4000)
    report = verify(s.write())
    assert (_states(report), report.findings, report.matched) == (["excerpt matches"], [], 1)
    (site,) = report.analysis.sites  # type: ignore[union-attr]
    assert site.preview is not None and site.tail is not None
    assert TESTS.startswith(site.preview) and TESTS.endswith(site.tail)


def test_a_cut_whose_file_lost_its_end_is_an_excerpt_mismatch(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.budget_cut("call_1", "run_shell_command", TESTS, 4000)
    (s.results / "call_1.txt").write_text(TESTS[:-500])
    report = verify(s.write())
    assert _states(report) == ["excerpt mismatch"]
    assert report.findings[0].message == "the tail the model saw is not the end of the file"


def test_a_cut_naming_several_files_checks_each_is_there(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.results.mkdir(parents=True)
    for name in ("call_1.txt", "call_1-1.txt"):
        (s.results / name).write_text(TESTS)
    files = [s.foreign_path("call_1.txt"), s.foreign_path("call_1-1.txt")]
    s.tool_result("call_1", "run_shell_command", fit_text(TESTS, 4000, files))
    report = verify(s.write())
    # Which part of the text each file holds is not said: each is only there.
    assert _states(report) == ["excerpt matches", "excerpt matches"]
    assert [b.file for b in report.badges] == ["call_1.txt", "call_1-1.txt"]


def test_a_stub_quoted_inside_other_text_is_text(tmp_path: Path) -> None:
    s = _session(tmp_path)
    record = s.spill("call_1", "run_shell_command", TESTS)
    response = record["message"]["parts"][0]["functionResponse"]["response"]
    response["output"] = "The tool said:\n" + response["output"]
    report = verify(s.write())
    assert report.markers == 0 and report.findings == []


def test_a_stub_path_is_never_opened_only_its_name_in_the_projects_folder(tmp_path: Path) -> None:
    # The path names a real file on this machine, with the right bytes: it is not read.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "call_1.txt").write_text(TESTS)
    s = _session(tmp_path)
    s.home = str(elsewhere.parent)
    record = s.spill("call_1", "run_shell_command", TESTS, file=False)
    response = record["message"]["parts"][0]["functionResponse"]["response"]
    response["output"] = response["output"].replace(
        s.foreign_path("call_1.txt"), str(elsewhere / "call_1.txt")
    )
    report = verify(s.write())
    assert _states(report) == ["expired"]


def test_no_session_reports_the_projects_other_files_as_orphans(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.spill("call_1", "run_shell_command", TESTS)
    s.results.joinpath("call_of_another_session.txt").write_text("theirs")
    report = verify(s.write())
    assert report.orphans == [] and report.findings == []


def test_each_assistant_record_is_a_call_sized_by_its_prompt_tokens(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.spill("call_1", "run_shell_command", TESTS)
    s.assistant("It passed.", tokens=14_500)
    s.compression("Ran the tests; they pass.", before=14_600, after=900)
    s.user("thanks")
    s.assistant("You're welcome.", tokens=1_200)
    report = verify(s.write())
    calls = list(report.analysis.calls)  # type: ignore[union-attr]
    assert [c.tokens for c in calls] == [12_000, 14_500, 1_200]
    assert all(c.recorded and c.field == "usageMetadata.promptTokenCount" for c in calls)
    assert calls[0].window == 1_000_000 and calls[0].window_source is WindowSource.RECORDED
    assert calls[0].window_basis == "contextWindowSize"
    assert calls[0].model == "qwen3-coder-plus"
    (compaction,) = report.analysis.calls.compactions  # type: ignore[union-attr]
    assert (compaction.kind, compaction.trigger) == ("chat_compression", "auto")
    assert (compaction.tokens_before, compaction.tokens_after) == (14_600, 900)
    assert compaction.after_field == "systemPayload.info.newTokenCount (Qwen Code's estimate)"
    assert calls[2].compactions == (compaction,)


def test_the_records_of_one_turn_are_one_call(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.tool_result("call_1", "run_shell_command", "ok")
    s.assistant("thinking", thought="hm", uuid="turn-2")
    s.assistant("done", uuid="turn-2", tokens=13_000)  # its usage on the turn's last record
    report = verify(s.write())
    calls = report.analysis.calls  # type: ignore[union-attr]
    assert list(calls.tokens) == [12_000, 13_000]
    assert list(calls.fields) == [QWEN_USAGE, QWEN_USAGE]


def test_a_rewind_and_a_compression_are_told_on_their_lines(tmp_path: Path) -> None:
    s = _session(tmp_path)
    first = s.records[0]
    s.rewind(str(first["uuid"]))
    report = verify(s.write())
    tags = report.analysis.tags  # type: ignore[union-attr]
    assert any("rewind" in t for t in tags[3])


def test_the_bundled_example_shows_every_form(tmp_path: Path) -> None:
    report = verify(QWEN_EXAMPLE)
    assert _states(report) == [
        "verified",
        "expired",
        "preview matches",
        "digest mismatch",
        "could not be stored",
        "excerpt matches",
    ]
    assert (report.errors, report.warnings) == (1, 0)
    rows = [json.loads(x) for x in QWEN_EXAMPLE.read_text().splitlines()]
    assert {r["type"] for r in rows} == {"user", "assistant", "tool_result", "system"}


def test_the_context_of_a_call_after_a_rewind_leaves_out_the_dead_branch(tmp_path: Path) -> None:
    from transcript_view.core.call_context import context_of_call
    from transcript_view.core.transcript import Transcript

    s = QwenSession(tmp_path / ".qwen")
    s.user("first question")
    s.assistant("first answer", tokens=1_000)
    turn = s.user("a question taken back")  # line 3
    s.assistant("an answer taken back", tokens=1_100)  # line 4: the dead branch
    s.rewind(str(turn["parentUuid"]))  # back to before line 3
    s.user("the question asked instead")
    s.assistant("the answer", tokens=1_050)
    path = s.write()
    report = verify(path)
    with Transcript(path) as t:
        t.build_index()
        context = context_of_call(t, report.analysis, 2)  # type: ignore[arg-type]
    assert [e.line for e in context.entries] == [1, 2, 6]  # not 3 and 4; the rewind: no role

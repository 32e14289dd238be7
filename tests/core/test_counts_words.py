"""Counts and words that tell the truth: what `--check` and the ledger say, in core.

A newcomer read `problems 3` where `p` reached two (the third was an orphan),
"1 markers", the same reason for every orphan, and a compaction that "replaces
through 38393639…". Each of those is pinned here where core decides it; the
viewer's side is in tests/viewer/test_findings_rows.py and
tests/viewer/test_orphans_screen.py, and tests/contracts/test_agreement.py
holds the two to each other.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from _runs import line, write_run
from _support import EXAMPLES, REFERENCE, REFERENCE_TRANSCRIPTS

from transcript_view.core.analysis import Analysis, analyse
from transcript_view.core.check import run_check
from transcript_view.core.findings import Severity
from transcript_view.core.ledger import (
    NO_DISPATCH,
    NOT_AN_ARTIFACT_NAME,
    ORPHAN_KINDS,
    TRANSCRIPT_GONE,
    VerificationLedger,
    explain_orphans,
    is_orphan,
    is_problem,
    partial_target,
)
from transcript_view.core.report import verify
from transcript_view.core.text import COPY_HINT, clip_middle, copied
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import check_file, list_orphans

# -- transcripts made for the orphans ------------------------------------------------------


def _dispatch(n: int, op_id: str, call: str) -> str:
    return line(n, "tool-dispatched", {"arguments": "{}", "call-id": call, "tool": "sh"}, op_id)


def write_orphan_run(directory: Path) -> Path:
    """Operations that got different distances, and one file per way of being orphaned.

    - `op-one` settled (line 4) naming nothing: its `op-one.txt` is named by no line;
    - `op-two` settled (line 7) naming `other.txt`: its `op-two.txt` is not that;
    - `op/three` (sanitised `op_three`) was dispatched on line 8 and never settled;
    - `zzz.txt` matches no dispatch; `notes.bin` is not an artifact's name;
    - a temp file of an interrupted write of `op_three.txt`.
    """
    lines = [
        line(1, "session-meta", {}),
        _dispatch(2, "op-one", "c1"),
        line(3, "message", {"content": "ok", "role": "tool", "tool-call-id": "c1"}),
        line(4, "tool-settled", {"op-id": "op-one", "outcome": "completed"}),
        _dispatch(5, "op-two", "c2"),
        line(6, "message", {"content": "ok", "role": "tool", "tool-call-id": "c2"}),
        line(
            7,
            "tool-settled",
            {"artifact": {"file": "other.txt"}, "op-id": "op-two", "outcome": "completed"},
        ),
        _dispatch(8, "op/three", "c3"),
    ]
    path = directory / "run.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    art = directory / "run.artifacts"
    art.mkdir()
    for name in ("op-one.txt", "op-two.txt", "op_three.txt", "zzz.txt", "notes.bin",
                 ".tmp-op_three.txt.4242.abcd.partial"):  # fmt: skip
        (art / name).write_text("x")
    return path


EXPECTED_REASONS = {
    ".tmp-op_three.txt.4242.abcd.partial": (
        "an interrupted write of op_three.txt; dispatched at line 8, never settled"
    ),
    "notes.bin": NOT_AN_ARTIFACT_NAME,
    "op-one.txt": "dispatched at line 2; its settle on line 4 does not name it",
    "op-two.txt": "dispatched at line 5; its settle on line 7 names 'other.txt' instead",
    "op_three.txt": "dispatched at line 8, never settled",
    "zzz.txt": NO_DISPATCH,
}


def _analysis(path: Path) -> Analysis:
    t = Transcript(path)
    t.build_index()
    return analyse(t)


def _check(path: Path, *, as_json: bool = False) -> str:
    out = io.StringIO()
    run_check([path], as_json=as_json, strict=False, out=out)
    return out.getvalue()


EXAMPLE_TRANSCRIPTS = [EXAMPLES / "demo.jsonl", EXAMPLES / "broken.jsonl"]

# -- problems and orphans: one rule, counted apart ------------------------------------------


def test_orphans_are_counted_apart_from_the_problems_p_visits(tmp_path: Path) -> None:
    run = write_run(tmp_path, "digest mismatch")
    (run.artifact_dir / "stray.txt").write_text("nobody names me")
    ledger = VerificationLedger(_analysis(run.path))
    for name in ledger.wanted():
        ledger.record(check_file(run.artifact_dir, name))
    ledger.record_orphans(list_orphans(run.artifact_dir, ledger.analysis.named_files()))
    assert [f.kind for f in ledger.problems()] == ["digest-mismatch"]
    assert [f.kind for f in ledger.orphan_warnings()] == ["orphan-artifact"]
    # Every problem is on a line `p` can go to; an orphan is on none.
    assert ledger.problem_lines() == [f.line for f in ledger.problems()]
    for f in ledger.findings():
        assert is_problem(f) == (f.severity is not Severity.NOTE and not is_orphan(f)), f


@pytest.mark.parametrize(
    "path",
    [*(REFERENCE / f"{s}.jsonl" for s in REFERENCE_TRANSCRIPTS), *EXAMPLE_TRANSCRIPTS],
    ids=lambda p: p.stem,
)
def test_every_problem_has_a_line_and_every_orphan_none(path: Path) -> None:
    """`p` walks lines; what it cannot reach must not be counted as one of its problems."""
    for f in verify(path).findings:
        if is_problem(f):
            assert f.line is not None, f
        if is_orphan(f):
            assert f.line is None, f


def test_the_broken_example_says_two_problems_and_one_orphan() -> None:
    first = _check(EXAMPLES / "broken.jsonl").splitlines()[0]
    assert first.endswith("; 2 errors, 1 warning, 1 note; 2 problems, 1 orphan"), first


# -- singular forms -----------------------------------------------------------------------


def test_summary_line_says_1_marker_not_1_markers(tmp_path: Path) -> None:
    run = write_run(tmp_path, "missing")
    first = _check(run.path).splitlines()[0]
    assert ", 1 marker, 0 verified; 1 error, 0 warnings, 0 notes; 1 problem, 0 orphans" in first
    assert "1 markers" not in first and "1 errors" not in first


def test_summary_line_singulars_on_the_command_line(tmp_path: Path) -> None:
    """The same words from the installed command, as a script or CI sees them."""
    run = write_run(tmp_path, "verified")
    (run.artifact_dir / "stray.txt").write_text("x")
    result = subprocess.run(
        [sys.executable, "-m", "transcript_view", "--check", str(run.path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    first = result.stdout.splitlines()[0]
    assert "8 envelopes on 8 lines, 1 marker, 1 verified;" in first, first
    assert "0 errors, 1 warning, 0 notes; 0 problems, 1 orphan" in first, first
    # A one-byte orphan is "1 byte", not "1 bytes".
    assert "(1 byte)" in result.stdout, result.stdout


# -- each orphan its own reason ---------------------------------------------------------------


def test_each_orphan_gets_its_own_reason(tmp_path: Path) -> None:
    path = write_orphan_run(tmp_path)
    analysis = _analysis(path)
    orphans = list_orphans(tmp_path / "run.artifacts", analysis.named_files())
    explained = {o.name: o.reason for o in explain_orphans(orphans, analysis)}
    assert explained == EXPECTED_REASONS


def test_check_prints_the_same_reason_as_the_orphans_screen_reads(tmp_path: Path) -> None:
    path = write_orphan_run(tmp_path)
    row = json.loads(_check(path, as_json=True))
    by_file = {f["file"]: f["message"] for f in row["findings"] if f["kind"] in ORPHAN_KINDS}
    assert set(by_file) == set(EXPECTED_REASONS)
    for name, reason in EXPECTED_REASONS.items():
        assert reason in by_file[name], (name, by_file[name])
    plain = _check(path)
    assert "op_three.txt: no line names this file; dispatched at line 8, never settled" in plain


def test_a_lost_artifact_directory_says_its_transcript_is_gone(tmp_path: Path) -> None:
    d = tmp_path / "gone.artifacts"
    d.mkdir()
    (d / "lost.txt").write_text("x")
    (d / ".tmp-lost.txt.1.ab.partial").write_text("x")
    reasons = {o.name: o.reason for o in explain_orphans(list_orphans(d, ()), None)}
    assert reasons == {
        "lost.txt": TRANSCRIPT_GONE,
        ".tmp-lost.txt.1.ab.partial": f"an interrupted write of lost.txt; {TRANSCRIPT_GONE}",
    }


def test_partial_target_reads_the_store_temp_name() -> None:
    assert partial_target(".tmp-abc.txt.4242.deadbeef.partial") == "abc.txt"
    assert partial_target(".tmp-weird.partial") is None
    assert partial_target("abc.txt") is None


def test_the_broken_examples_orphan_has_no_dispatch() -> None:
    """The one reason the bundled example can show: its orphan's op id is nobody's."""
    row = json.loads(_check(EXAMPLES / "broken.jsonl", as_json=True))
    (orphan,) = [f for f in row["findings"] if f["kind"] == "orphan-artifact"]
    assert orphan["message"] == f"no line names this file; {NO_DISPATCH} (48,000 bytes)"


# -- compactions by line -------------------------------------------------------------------


def test_a_compaction_knows_which_lines_it_replaced() -> None:
    analysis = _analysis(REFERENCE / "compaction.jsonl")
    # Line 2 is the sticky system prompt (kept); lines 3-5 are replaced, through
    # the message whose id the compaction names.
    assert analysis.compactions == {10: (3, 5)}


def _compaction_run(directory: Path, through: str) -> Path:
    lines = [
        line(1, "session-meta", {}),
        line(2, "message", {"content": "q", "role": "user"}, "m-user"),
        line(3, "message", {"content": "a", "role": "assistant"}, "m-answer"),
        _dispatch(4, "op-x", "c1"),
        line(5, "compaction", {"replaces-through-id": "m-answer", "summary": "s"}, "comp-1"),
        line(6, "compaction", {"replaces-through-id": through, "summary": "t"}, "comp-2"),
    ]
    path = directory / f"c-{through}.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("through", "said"),
    [
        ("m-user", "through line 2 ('m-user'), which an earlier compaction already replaced"),
        ("op-x", "through line 4 ('op-x'), a tool-dispatched line, not a message"),
        ("nobody", "through 'nobody', an id no earlier line has"),
    ],
    ids=["already-replaced", "not-a-message", "unknown-id"],
)
def test_a_compaction_that_cuts_nothing_says_where_its_id_is(
    tmp_path: Path, through: str, said: str
) -> None:
    analysis = _analysis(_compaction_run(tmp_path, through))
    assert analysis.compactions == {5: (2, 3)}
    assert analysis.replay_problems == [f"line 6: the compaction replaces {said}"]


# -- what a copy toast shows -----------------------------------------------------------------


def test_clip_middle_keeps_both_ends_and_shows_controls() -> None:
    assert clip_middle("short") == "short"
    path = "/a/" + "d" * 300 + "/66613832.txt"
    cut = clip_middle(path, 40)
    assert len(cut) == 40 and cut.startswith("/a/ddd") and cut.endswith("66613832.txt")
    assert "…" in cut
    assert clip_middle("evil\x1b[2J") == "evil␛[2J"


def test_copied_shows_the_text_and_says_it_may_not_have_reached_the_clipboard() -> None:
    body = copied("/tmp/run.artifacts/x.txt")
    assert body.splitlines() == ["/tmp/run.artifacts/x.txt", COPY_HINT]
    assert "tmux" in COPY_HINT

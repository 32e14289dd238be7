"""Following a live transcript tells the truth about a file that is still being written.

Follow mode reads a transcript while its writer appends to it. Two things are
true of such a file that are never true of a finished one: its last line may
be only partly written (a buffered writer lands one line in two writes), and
its last tool calls may still be running. A one-shot `analyse` (what `--check`
runs) calls the first a torn tail and the second "the settle never landed",
which is right for a file nobody writes any more; a follower must instead
re-read the line once it is complete, and say "running" meanwhile.

Each test writes a transcript with `_runs.line`, appends to it the way a writer
does, and reads it the way the viewer's follow mode does: `Transcript.refresh`,
then `Analyser.update` whenever the refresh says something changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _runs import line

from transcript_view.core.analyser import Analyser
from transcript_view.core.analysis import Analysis, analyse
from transcript_view.core.report import verify
from transcript_view.core.transcript import Transcript

CALL = [{"function": {"arguments": "{}", "name": "ls"}, "id": "c1", "type": "function"}]
OP = "6f7d06d2-f2c5-45a3-b687-c72851c5ef8a"


def start(path: Path) -> list[str]:
    """A run up to an assistant turn that calls one tool."""
    lines = [
        line(1, "session-meta", {"scenario": "live"}),
        line(2, "message", {"content": "list the files", "role": "user"}),
        line(3, "message", {"content": "", "role": "assistant", "tool-calls": CALL}),
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return lines


def dispatch(n: int = 4) -> str:
    return line(n, "tool-dispatched", {"arguments": "{}", "call-id": "c1", "tool": "ls"}, OP)


def tool_message(n: int = 5) -> str:
    return line(n, "message", {"content": "a b c", "role": "tool", "tool-call-id": "c1"})


def settled(n: int = 6) -> str:
    return line(n, "tool-settled", {"duration": 0.5, "op-id": OP, "outcome": "completed"})


def append(path: Path, text: str | bytes) -> None:
    with path.open("ab") as fh:
        fh.write(text.encode() if isinstance(text, str) else text)


def follow(transcript: Transcript, analyser: Analyser) -> Analysis | None:
    """One follow-mode poll: refresh the index, analyse again if anything changed."""
    new = transcript.refresh()
    if new or transcript.last_line_grew:
        return analyser.update()
    return None


def kinds(a: Analysis) -> list[str]:
    return [f.kind for f in a.findings]


def summary(a: Analysis) -> dict[str, Any]:
    return {
        "lines": a.lines,
        "envelopes": a.envelopes,
        "problems": [(p.line, p.kind) for p in a.problems],
        "findings": [(f.kind, f.line, f.message) for f in a.findings],
    }


# -- a line written in two writes -----------------------------------------------------------


def test_the_index_says_when_its_unterminated_last_line_grew(tmp_path: Path) -> None:
    """A line completed by a later write adds no line, but the index must say it changed."""
    path = tmp_path / "live.jsonl"
    start(path)
    whole = line(4, "message", {"content": "a new question", "role": "user"}).encode()
    with Transcript.open(path) as t:
        assert t.refresh() == 0 and not t.last_line_grew  # nothing appended
        append(path, whole[:30])
        assert t.refresh() == 1 and not t.last_line_grew  # a new (partial) line
        append(path, whole[30:60])
        assert t.refresh() == 0 and t.last_line_grew  # still partial, but longer
        append(path, whole[60:])
        assert t.refresh() == 0 and t.last_line_grew  # complete now
        assert t.line_terminated(4)
        assert t.refresh() == 0 and not t.last_line_grew  # nothing since
        append(path, dispatch(5))
        assert t.refresh() == 1 and not t.last_line_grew  # the old last line was complete


def test_a_line_completed_by_a_later_write_is_read_again_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    start(path)
    whole = line(4, "message", {"content": "a new question", "role": "user"}).encode()
    with Transcript.open(path) as t:
        analyser = Analyser(t, live=True)
        analyser.update()
        append(path, whole[:40])
        assert follow(t, analyser) is not None
        append(path, whole[40:])
        done = follow(t, analyser)
        assert done is not None, "the completed line was never analysed again"
        assert done.envelopes == 4 and done.problems == []
        assert "torn-tail" not in kinds(done)
        assert summary(done) == summary(analyse(t))


def test_a_live_analysis_does_not_call_a_line_still_being_written_torn(tmp_path: Path) -> None:
    """Half a line at the end of a live file is unfinished, not a crash: no finding yet."""
    path = tmp_path / "live.jsonl"
    start(path)
    append(path, line(4, "message", {"content": "half", "role": "user"}).encode()[:25])
    with Transcript.open(path) as t:
        live = Analyser(t, live=True).update()
        assert live.problems == [] and "torn-tail" not in kinds(live)
        assert live.envelopes == 3
        assert live.live
        # Read once, as `--check` does, the same half line is a torn tail.
        once = analyse(t)
        assert [p.kind for p in once.problems] == ["torn-tail"] and not once.live
        assert summary(Analyser(t).update()) == summary(once)


def test_a_complete_bad_last_line_of_a_live_file_is_still_reported(tmp_path: Path) -> None:
    """Only a line without its newline is unfinished: a written bad line is bad now."""
    path = tmp_path / "live.jsonl"
    start(path)
    append(path, b"{not json\n")
    with Transcript.open(path) as t:
        live = Analyser(t, live=True).update()
        assert [p.kind for p in live.problems] == ["torn-tail"]


# -- a call whose settle has not arrived yet ------------------------------------------------


def test_an_open_call_at_the_end_of_a_live_file_reads_running(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    start(path)
    with Transcript.open(path) as t:
        analyser = Analyser(t, live=True)
        analyser.update()
        for text, when_check in (
            (dispatch(), "running when the process died"),
            (tool_message(), "completed; the settle never landed"),
        ):
            append(path, text)
            a = follow(t, analyser)
            assert a is not None
            (op,) = a.operations
            assert op.describe_state() == "running"
            assert "unsettled-operation" not in kinds(a)  # not a problem while it runs
            (then,) = analyse(t).operations
            assert then.describe_state() == when_check
        append(path, settled())
        a = follow(t, analyser)
        assert a is not None
        (op,) = a.operations
        assert op.describe_state() == "completed"
        assert summary(a) == summary(analyse(t))


def test_check_keeps_its_wording_for_the_same_file(tmp_path: Path) -> None:
    """`--check` never follows: an open call is still a warning there, in its words."""
    path = tmp_path / "live.jsonl"
    start(path)
    append(path, dispatch() + tool_message())
    (finding,) = [f for f in verify(path).findings if f.kind == "unsettled-operation"]
    assert finding.message == "ls call 'c1': completed; the settle never landed"


def test_a_call_left_open_before_a_later_turn_is_not_running(tmp_path: Path) -> None:
    """Only the last turn's calls can still run: the loop moved on from an earlier one."""
    path = tmp_path / "live.jsonl"
    start(path)
    append(path, dispatch() + tool_message())
    append(path, line(6, "message", {"content": "done", "role": "assistant"}))
    with Transcript.open(path) as t:
        a = Analyser(t, live=True).update()
        (op,) = a.operations
        assert op.describe_state() == "completed; the settle never landed"
        assert "unsettled-operation" in kinds(a)


def test_a_call_not_dispatched_yet_is_not_never_dispatched(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    start(path)
    with Transcript.open(path) as t:
        (op,) = Analyser(t, live=True).update().operations
        assert op.describe_state() == "not dispatched yet"
        (then,) = analyse(t).operations
        assert then.describe_state() == "never dispatched"


def test_an_analyser_no_longer_live_equals_one_pass(tmp_path: Path) -> None:
    """When following stops, one more update (reading only the last line) gives `--check`'s view."""
    path = tmp_path / "live.jsonl"
    start(path)
    append(path, dispatch() + tool_message())
    append(path, line(6, "message", {"content": "x", "role": "user"}).encode()[:9])
    with Transcript.open(path) as t:
        analyser = Analyser(t, live=True)
        assert summary(analyser.update()) != summary(analyse(t))
        analyser.live = False
        last = analyser.update()
        assert not last.live
        assert summary(last) == summary(analyse(t))

"""The tables' public build API: filled by hand, they read back what the pass builds.

The analysis pass is the tables' one writer in the program, but it writes only
through `Operations.add_call`/`add_dispatch`/`set_*` and `Replay.append`/
`find`/`compact`/`set_stub`. Building the same tables by hand through those
methods, from a transcript whose line numbers are known, must give exactly
what `analyse` gives.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from transcript_view.core.analysis import analyse
from transcript_view.core.envelopes import ToolSettled
from transcript_view.core.keys import IdKeys
from transcript_view.core.records import OpState
from transcript_view.core.session import Session
from transcript_view.core.tables import Operations, Replay, id_at
from transcript_view.core.transcript import Transcript


def write(path: Path) -> None:
    """Thirteen lines: calls settled, failed with an artifact, never dispatched, unannounced."""
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": f"t{i}", "arguments": "{}"}}
        for i in range(3)
    ]
    with Session.create(path, limit=60) as s:  # line 1: session-meta
        s.append_message("system", "sys", sticky=True)  # 2
        user = s.append_message("user", "hi")  # 3
        s.append_message("assistant", "go", tool_calls=calls)  # 4
        op0 = s.append_tool_dispatched("c0", "t0", "{}")  # 5
        settled = s.settle(op0, "c0", "small", duration=0.25)  # 6 message, 7 settle
        op1 = s.append_tool_dispatched("c1", "t1", "{}")  # 8
        s.settle(op1, "c1", "y" * 400, is_error=True)  # 9 message (excerpted), 10 settle
        s.append_tool_dispatched("c9", "t9", "{}")  # 11: no assistant turn announced it
        s.append_compaction("summary", user)  # 12
        s.append_elision([(settled.message_id, "[stubbed]")])  # 13


def test_tables_built_by_hand_equal_the_pass(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path)
    with Transcript.open(path) as t:
        a = analyse(t)
        settle10 = t.parse(10)
        assert isinstance(settle10, ToolSettled) and settle10.artifact is not None

        ops = Operations(t)
        r0, r1, r2 = ops.add_call(4, 0), ops.add_call(4, 1), ops.add_call(4, 2)
        ops.set_dispatch(r0, 5)
        ops.set_message(r0, 6, is_error=False)
        before = ops[r0]  # read mid-build: later steps must not leave it stale
        ops.set_settle(r0, 7, None)
        ops.set_dispatch(r1, 8)
        ops.set_message(r1, 9, is_error=True)
        ops.set_settle(r1, 10, settle10.artifact)
        r3 = ops.add_dispatch(11)

        assert before.state is OpState.SETTLE_NEVER_LANDED
        assert [asdict(op) for op in ops] == [asdict(op) for op in a.operations]
        assert [ops.state(r) for r in (r0, r1, r2, r3)] == [
            OpState.SETTLED,
            OpState.SETTLED,
            OpState.NEVER_DISPATCHED,
            OpState.RUNNING,
        ]
        assert ops.with_artifacts() == a.operations.with_artifacts() == {r1: settle10.artifact}
        assert ops.at("message", 9) == a.operations.at("message", 9)
        assert ops[r1].is_error and not ops[r0].is_error

        replay = Replay(t, IdKeys.new())
        for line, role in ((2, "system"), (3, "user"), (4, "assistant"), (6, "tool"), (9, "tool")):
            replay.append(line, id_at(t, line), role, sticky=line == 2, summary=False)
        replay.compact(replay.find(id_at(t, 3)), 12, id_at(t, 12))
        replay.set_stub(replay.find(id_at(t, 6)), "[stubbed]")

        assert list(replay) == list(a.replay)
        assert [(e.line, e.summary, e.stub) for e in replay] == [
            (2, False, None),
            (12, True, None),
            (4, False, None),
            (6, False, "[stubbed]"),
            (9, False, None),
        ]
        assert replay.find("no-such-id") == -1


def test_an_entry_found_by_line_follows_every_change_of_the_replay(tmp_path: Path) -> None:
    """`index_of_line` caches how to look (bisection, or a table): each change resets it."""
    path = tmp_path / "t.jsonl"
    write(path)
    with Transcript.open(path) as t:
        replay = Replay(t, IdKeys.new())
        replay.append(2, "a", "system", sticky=True, summary=False)
        replay.append(4, "b", "user", sticky=False, summary=False)
        assert replay.index_of_line(4) == 1 and replay.index_of_line(3) is None
        replay.append(6, "c", "user", sticky=False, summary=False)
        assert replay.index_of_line(6) == 2
        replay.compact(1, 9, "s")  # line 2 (sticky) kept, the summary from line 9, then 6
        assert [replay.line_at(i) for i in range(len(replay))] == [2, 9, 6]
        assert [replay.index_of_line(n) for n in (2, 4, 6, 9)] == [0, None, 2, 1]
        replay.append(12, "d", "user", sticky=False, summary=False)
        assert replay.index_of_line(12) == 3

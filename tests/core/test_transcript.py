"""Reading transcripts: the line index, on-demand parsing, line problems, follow mode."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from transcript_view.core.analysis import analyse
from transcript_view.core.canonical import canonical_json
from transcript_view.core.envelopes import Message, SessionMeta, Subagent, ToolDispatched, Unknown
from transcript_view.core.records import OpState
from transcript_view.core.transcript import LineProblem, Transcript, TranscriptError


def env(type_: str, payload: dict[str, object], id_: str, v: object = 1) -> str:
    return canonical_json(
        {"id": id_, "payload": payload, "ts": "2026-01-01T00:00:00.000000Z", "type": type_, "v": v}
    )


def write(path: Path, *lines: str, end: str = "\n") -> Path:
    path.write_bytes((end.join(lines) + end).encode("utf-8") if lines else b"")
    return path


META = env("session-meta", {"app": "t"}, "m")


def parsed(path: Path) -> list[object]:
    with Transcript.open(path) as t:
        return list(t)


def test_typed_envelopes_for_every_type(tmp_path: Path) -> None:
    p = write(
        tmp_path / "t.jsonl",
        META,
        env("message", {"role": "user", "content": "hi"}, "u"),
        env("tool-dispatched", {"call-id": "c", "tool": "t", "arguments": "{}"}, "op"),
        env("subagent-spawned", {"x": 1}, "s"),
        env("brand-new-type", {"y": 2}, "n"),
    )
    got = parsed(p)
    assert [type(e) for e in got] == [SessionMeta, Message, ToolDispatched, Subagent, Unknown]
    assert isinstance(got[1], Message) and got[1].content == "hi" and got[1].line == 2


def test_blank_lines_are_ignored_but_keep_their_numbers(tmp_path: Path) -> None:
    p = write(
        tmp_path / "t.jsonl", META, "", "   ", env("message", {"role": "user", "content": "x"}, "u")
    )
    got = parsed(p)
    assert [e.line for e in got] == [1, 4]  # type: ignore[attr-defined]


def test_malformed_lines_are_reported_with_their_number(tmp_path: Path) -> None:
    p = write(
        tmp_path / "t.jsonl",
        META,
        "not json",
        "[1,2]",
        '{"type": 3, "v": 1}',
        env("message", {}, "x", v=2),
        env("message", {"role": "user", "content": "ok"}, "u"),
    )
    got = parsed(p)
    problems = [g for g in got if isinstance(g, LineProblem)]
    assert [(g.line, g.kind) for g in problems] == [
        (2, "malformed-line"),
        (3, "malformed-line"),
        (4, "malformed-line"),
        (5, "unknown-version"),
    ]
    assert "array" in problems[1].message
    assert "version 2" in problems[3].message


def test_a_torn_last_line_inside_a_multibyte_character(tmp_path: Path) -> None:
    good = env("message", {"role": "user", "content": "日本語"}, "u")
    torn = good.encode()[:-9]
    p = tmp_path / "t.jsonl"
    p.write_bytes(META.encode() + b"\n" + torn)
    got = parsed(p)
    assert isinstance(got[-1], LineProblem)
    assert got[-1].kind == "torn-tail" and got[-1].line == 2


def test_the_references_invalid_escape_is_a_malformed_line(tmp_path: Path) -> None:
    bad = '{"id":"x","payload":{"content":"\\u000ç","role":"tool"},"ts":"t","type":"message","v":1}'
    p = write(
        tmp_path / "t.jsonl", META, bad, env("message", {"role": "user", "content": "after"}, "u")
    )
    got = parsed(p)
    assert isinstance(got[1], LineProblem) and got[1].kind == "malformed-line"


def test_invalid_utf8_inside_a_line(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(META.encode() + b'\n{"id":"\xff\xfe"}\n' + META.encode() + b"\n")
    got = parsed(p)
    assert isinstance(got[1], LineProblem) and "UTF-8" in got[1].message


def test_crlf_line_endings_read(tmp_path: Path) -> None:
    p = write(
        tmp_path / "t.jsonl",
        META,
        env("message", {"role": "user", "content": "x"}, "u"),
        end="\r\n",
    )
    got = parsed(p)
    assert [type(e) for e in got] == [SessionMeta, Message]


def test_empty_file_has_no_lines(tmp_path: Path) -> None:
    p = write(tmp_path / "t.jsonl")
    with Transcript.open(p) as t:
        assert t.line_count == 0 and list(t) == []


def test_no_trailing_newline_keeps_the_last_line(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(META.encode())
    with Transcript.open(p) as t:
        assert t.line_count == 1 and isinstance(t.parse(1), SessionMeta)
        assert not t.line_terminated(1)


def test_index_in_steps_and_random_access(tmp_path: Path) -> None:
    lines = [META] + [
        env("message", {"role": "user", "content": f"m{i}"}, f"id{i}") for i in range(500)
    ]
    p = write(tmp_path / "t.jsonl", *lines)
    with Transcript(p) as t:
        done = t.build_index(max_bytes=1000)
        assert not done and 0 < t.line_count < 501
        while not t.build_index(max_bytes=1000):
            pass
        assert t.line_count == 501
        m = t.parse(301)
        assert isinstance(m, Message) and m.content == "m299"
        assert t.raw_line(1) == META.encode()


def test_refresh_picks_up_appended_lines_only(tmp_path: Path) -> None:
    p = write(tmp_path / "t.jsonl", META)
    with Transcript.open(p) as t:
        assert t.line_count == 1
        with open(p, "ab") as fh:
            fh.write(env("message", {"role": "user", "content": "late"}, "u").encode()[:20])
        assert t.refresh() == 1  # a partial line, still being written
        assert not t.line_terminated(2)
        with open(p, "ab") as fh:
            fh.write(env("message", {"role": "user", "content": "late"}, "u").encode()[20:] + b"\n")
        assert t.refresh() == 0
        assert isinstance(t.parse(2), Message) and t.line_terminated(2)
        with open(p, "ab") as fh:
            fh.write(META.encode() + b"\n")
        assert t.refresh() == 1 and t.line_count == 3


def test_paths_that_are_not_transcript_files(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="no such file"):
        Transcript(tmp_path / "missing.jsonl")
    with pytest.raises(TranscriptError, match="directory"):
        Transcript(tmp_path)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result: list[BaseException] = []

    def attempt() -> None:
        try:
            Transcript(fifo)
        except BaseException as exc:
            result.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "opening a fifo blocked"
    assert isinstance(result[0], TranscriptError) and "fifo" in str(result[0])


def test_nothing_is_written(tmp_path: Path) -> None:
    p = write(tmp_path / "t.jsonl", META, "garbage")
    before = (p.read_bytes(), os.stat(p).st_mtime_ns)
    with Transcript.open(p) as t:
        list(t)
        t.refresh()
    assert (p.read_bytes(), os.stat(p).st_mtime_ns) == before
    assert sorted(os.listdir(tmp_path)) == ["t.jsonl"]


def _call(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "t", "arguments": "{}"}}


def test_operation_states_follow_the_crash_table(tmp_path: Path) -> None:
    p = write(
        tmp_path / "t.jsonl",
        META,
        env(
            "message",
            {"role": "assistant", "content": "", "tool-calls": [_call(c) for c in "abcd"]},
            "a",
        ),
        env("tool-dispatched", {"call-id": "b", "tool": "t", "arguments": "{}"}, "op-b"),
        env("tool-dispatched", {"call-id": "c", "tool": "t", "arguments": "{}"}, "op-c"),
        env("message", {"role": "tool", "content": "r", "tool-call-id": "c"}, "m-c"),
        env("tool-dispatched", {"call-id": "d", "tool": "t", "arguments": "{}"}, "op-d"),
        env("message", {"role": "tool", "content": "r", "tool-call-id": "d"}, "m-d"),
        env("tool-settled", {"op-id": "op-d", "outcome": "completed", "duration": 1.5}, "s-d"),
    )
    with Transcript.open(p) as t:
        a = analyse(t)
    states = {op.call_id: op.state for op in a.operations}
    assert states == {
        "a": OpState.NEVER_DISPATCHED,
        "b": OpState.RUNNING,
        "c": OpState.SETTLE_NEVER_LANDED,
        "d": OpState.SETTLED,
    }
    unsettled = [f for f in a.findings if f.kind == "unsettled-operation"]
    assert [f.line for f in unsettled] == [3, 4]
    assert "running when the process died" in unsettled[0].message
    assert "the settle never landed" in unsettled[1].message


def test_settling_an_unknown_or_settled_operation_is_a_finding(tmp_path: Path) -> None:
    p = write(
        tmp_path / "t.jsonl",
        META,
        env("tool-dispatched", {"call-id": "c", "tool": "t", "arguments": "{}"}, "op"),
        env("tool-settled", {"op-id": "op", "outcome": "completed"}, "s1"),
        env("tool-settled", {"op-id": "op", "outcome": "failed"}, "s2"),
        env("tool-settled", {"op-id": "ghost", "outcome": "completed"}, "s3"),
        env("message", {"role": "user", "content": "dup"}, "s3"),
    )
    with Transcript.open(p) as t:
        a = analyse(t)
    msgs = [(f.kind, f.line) for f in a.findings]
    assert ("malformed-line", 4) in msgs and ("malformed-line", 5) in msgs
    assert ("malformed-line", 6) in msgs  # a duplicate envelope id

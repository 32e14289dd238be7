"""Issue 27: the context of any model call, per format, from the file alone.

Each session is built from the spec's shapes (`../shared/spec`): a rewound
branch, a compaction and its summary, a microcompaction, a parallel batch, a
spill marker (Claude Code); a `compacted` history and an encrypted remote
`compaction` (Codex); and LLM::Agent's replay, which the context of the next
call must equal, and of an earlier call must equal the replay of the file cut
before it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _real_shapes import rewound_session, usage
from _runs import line as ref_line
from _sessions import ClaudeSession, codex_line

from transcript_view.core.analysis import Analysis, analyse
from transcript_view.core.call_context import (
    CLEARED_TEXT,
    ENCRYPTED_SUMMARY,
    CallContext,
    call_at_line,
    context_of_call,
)
from transcript_view.core.calls import estimate_tokens
from transcript_view.core.formats.detect import Format, detect
from transcript_view.core.formats.readers import READERS
from transcript_view.core.transcript import Transcript


def _context(path: Path, index: int | None) -> CallContext:
    fmt = detect(path).format
    assert fmt is not None
    with Transcript.open(path) as t:
        analysis = READERS[fmt](t, None, workers=1)
        return context_of_call(t, analysis, index)


def _number(s: ClaudeSession, obj: dict[str, Any]) -> int:
    return s.lines.index(obj) + 1


# -- Claude Code -----------------------------------------------------------------------------------


def test_a_rewound_branch_is_not_in_the_context(tmp_path: Path) -> None:
    s, at = rewound_session(tmp_path)
    path = s.write()
    ctx = _context(path, 2)  # the call answering the re-asked prompt
    assert ctx.call is not None and ctx.call.line == _number(s, at["y"])
    assert [e.line for e in ctx.entries] == [_number(s, at[k]) for k in ("p1", "a1", "p3")]
    assert [e.role for e in ctx.entries] == ["user", "assistant", "user"]
    # The abandoned answer's own call had the abandoned prompt.
    abandoned = _context(path, 1)
    assert [e.line for e in abandoned.entries] == [_number(s, at[k]) for k in ("p1", "a1", "p2")]
    # The next call: the branch the file ends on, its last response included.
    nxt = _context(path, None)
    assert nxt.call is None and nxt.not_in_file is None
    assert [e.line for e in nxt.entries] == [_number(s, at[k]) for k in ("p1", "a1", "p3", "y")]


def test_not_in_file_is_the_recorded_size_less_the_entries_estimate(tmp_path: Path) -> None:
    s, at = rewound_session(tmp_path)
    ctx = _context(s.write(), 2)
    chars = len("fix the build") + len("Looking.") + len("no: the docs")
    assert ctx.chars == chars
    assert ctx.not_in_file == 20_050 - estimate_tokens(chars)
    assert "about 20,041 tokens not in the file: system prompt and tool definitions" in (
        ctx.not_in_file_words()
    )
    assert "estimate" in ctx.not_in_file_words()
    # A call whose size is an estimate: nothing is implied, and it says so.
    del at["y"]["message"]["usage"]
    bare = _context(s.write(), 2)
    assert bare.not_in_file is None and bare.call is not None and not bare.call.recorded
    assert "not in the file and not counted" in bare.not_in_file_words()
    assert "estimate" in bare.tokens_words()


def test_never_negative(tmp_path: Path) -> None:
    s, at = rewound_session(tmp_path)
    usage(at["y"], 4)  # smaller than the file's own text: a figure, not a fact to subtract
    assert _context(s.write(), 2).not_in_file == 0


def _compacted(root: Path) -> tuple[ClaudeSession, dict[str, dict[str, Any]]]:
    s = ClaudeSession(root)
    at: dict[str, dict[str, Any]] = {}
    s.user("fix the build")
    s.assistant({"type": "text", "text": "Looking."}, msg_id="m1", request="r1")
    boundary = s._base("system")
    boundary.update(subtype="compact_boundary", content="Conversation compacted",
                    compactMetadata={"trigger": "auto", "preTokens": 170_012},
                    logicalParentUuid=s.lines[-1]["uuid"], parentUuid=None)  # fmt: skip
    at["boundary"] = s.raw(boundary)
    at["summary"] = s.user("This session is being continued from a previous conversation ...")
    at["summary"]["isCompactSummary"] = True
    at["after"] = s.assistant({"type": "text", "text": "Continuing."}, msg_id="m2", request="r2")
    usage(at["after"], 9_000)
    return s, at


def test_the_context_after_a_compaction_starts_with_its_summary(tmp_path: Path) -> None:
    s, at = _compacted(tmp_path)
    ctx = _context(s.write(), 1)
    assert [(e.line, e.role) for e in ctx.entries] == [(_number(s, at["summary"]), "summary")]
    assert ctx.entries[0].summary
    assert ctx.compaction is not None and ctx.compaction.line == _number(s, at["boundary"])
    assert f"compact_boundary on line {ctx.compaction.line}" in ctx.compaction_words()
    # The first call's context is what came before it: no compaction yet.
    first = _context(s.write(), 0)
    assert first.compaction is None and [e.role for e in first.entries] == ["user"]


def test_a_parallel_batch_is_one_turn_and_every_result(tmp_path: Path) -> None:
    """Each result hangs off the line of its own `tool_use`, beside the chain."""
    s = ClaudeSession(tmp_path)
    s.user("look everywhere")
    lines = s.parallel(
        [("toolu_a", "Grep", "found a"), ("toolu_b", "Grep", "found b"), ("toolu_c", "Read", "c")],
        msg_id="m2",
    )
    answer = s.assistant({"type": "text", "text": "Found."}, msg_id="m3", request="r3")
    usage(answer, 30_000)
    path = s.write()
    ctx = _context(path, 1)
    holders = [_number(s, x) for x in lines if x["type"] == "assistant"]
    results = [_number(s, x) for x in lines if x["type"] == "user"]
    assert [e.role for e in ctx.entries] == ["user", "assistant", "tool", "tool", "tool"]
    turn = ctx.entries[1]
    assert turn.all_lines == tuple(holders) and turn.what.startswith("response, lines")
    assert [e.line for e in ctx.entries[2:]] == results
    assert sum(e.chars for e in ctx.entries[2:]) == len("found a") + len("found b") + len("c")
    # The next call's context, the last result the leaf: every line of the batch still.
    nxt = _context(path, None)
    assert [e.line for e in nxt.entries][2:5] == results


def test_a_spilled_result_is_its_marker_as_the_model_saw_it(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path)
    s.user("search")
    marker = s.spill("toolu_01", "".join(f"row {i}\n" for i in range(3000)))
    answer = s.assistant({"type": "text", "text": "Many rows."}, msg_id="m9", request="r9")
    usage(answer, 12_000)
    ctx = _context(s.write(), 1)
    result = ctx.entries[-1]
    assert result.role == "tool" and result.chars == len(marker)
    assert "<persisted-output>" in marker


def test_a_result_microcompaction_cleared_is_said_to_be(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path)
    s.user("run it")
    s.tool_use("toolu_a", "Bash", {"command": "make"})
    result = s.tool_result("toolu_a", "x" * 5_000)
    first = s.assistant({"type": "text", "text": "Built."}, msg_id="m5", request="r5")
    micro = s._base("system")
    meta = {"trigger": "auto", "preTokens": 71_221, "tokensSaved": 34_078,
            "compactedToolIds": ["toolu_a"]}  # fmt: skip
    micro.update(subtype="microcompact_boundary", content="Context microcompacted",
                 microcompactMetadata=meta)  # fmt: skip
    s.raw(micro)
    s.user("and again")
    later = s.assistant({"type": "text", "text": "Again."}, msg_id="m6", request="r6")
    usage(later, 8_000)
    path = s.write()
    # Before the microcompaction, the call had the result whole.
    before = _context(path, 1)
    assert before.call is not None and before.call.line == _number(s, first)
    whole = next(e for e in before.entries if e.line == _number(s, result))
    assert whole.chars == 5_000 and whole.cleared_at is None
    after = _context(path, 2)
    cleared = next(e for e in after.entries if e.line == _number(s, result))
    assert cleared.cleared_at == s.lines.index(micro) + 1
    assert cleared.chars == len(CLEARED_TEXT) and cleared.cleared == ("toolu_a",)
    assert "cleared by the microcompaction" in cleared.what


def test_the_agents_records_are_not_sent(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path)
    s.user("run it")
    s.tool_use("toolu_a", "Bash", {"command": "make"})
    progress = s.progress("toolu_a")
    result = s.tool_result("toolu_a", "ok")
    result["parentUuid"] = progress["uuid"]  # an older version chained its progress lines
    s.assistant({"type": "text", "text": "Done."}, msg_id="m7", request="r7")
    ctx = _context(s.write(), 1)
    assert [e.role for e in ctx.entries] == ["user", "assistant", "tool"]
    assert _number(s, progress) not in [e.line for e in ctx.entries]


def test_a_line_belongs_to_its_responses_call(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path)
    s.user("look everywhere")
    lines = s.parallel([("toolu_a", "Grep", "a"), ("toolu_b", "Grep", "b")], msg_id="m2")
    path = s.write()
    with Transcript.open(path) as t:
        analysis = READERS[Format.CLAUDE_CODE](t, None, workers=1)
        holders = [_number(s, x) for x in lines if x["type"] == "assistant"]
        assert call_at_line(analysis, holders[1]) == 0  # the second line of the response
        assert call_at_line(analysis, 1) == 0  # the prompt: the call after it
        assert call_at_line(analysis, len(s.lines)) is None  # after the last: the next


# -- Codex -----------------------------------------------------------------------------------------


def _rollout(path: Path) -> tuple[Path, dict[str, int]]:
    lines: list[dict[str, Any]] = []
    at: dict[str, int] = {}

    def add(kind: str, payload: dict[str, Any], name: str | None = None) -> int:
        lines.append(codex_line(kind, payload, len(lines)))
        if name:
            at[name] = len(lines)
        return len(lines)

    text = [{"type": "input_text", "text": "build it"}]
    said = [{"type": "output_text", "text": "done"}]
    count = {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 20_000},
                                             "model_context_window": 272_000}}  # fmt: skip
    add("session_meta", {"id": "0199", "cwd": "/p", "cli_version": "0.60.0"})
    add("turn_context", {"cwd": "/p", "model": "gpt-5-codex"})
    add("response_item", {"type": "message", "role": "user", "content": text}, "ask")
    add("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                          "arguments": '{"command":["make"]}'}, "call")  # fmt: skip
    add("event_msg", count)
    add("response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"}, "out")
    add("response_item", {"type": "ghost_snapshot", "ghost_commit": {}})
    add("response_item", {"type": "message", "role": "assistant", "content": said}, "said")
    add("event_msg", count)
    add("compacted", {"message": "SUMMARY: built it", "replacement_history": [
        {"type": "message", "role": "user", "content": text},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "SUMMARY: built it"}]},
    ]}, "compacted")  # fmt: skip
    add("response_item", {"type": "message", "role": "assistant", "content": said}, "after")
    add("event_msg", count)
    add("response_item", {"type": "compaction", "encrypted_content": "gAAAA..."}, "remote")
    add("response_item", {"type": "message", "role": "user", "content": text}, "ask2")
    add("response_item", {"type": "message", "role": "assistant", "content": said}, "last")
    add("event_msg", count)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return path, at


def test_codex_context_is_the_items_since_the_last_compaction(tmp_path: Path) -> None:
    path, at = _rollout(tmp_path / "rollout.jsonl")
    second = _context(path, 1)  # the answer after the output: ghost snapshot, events not sent
    assert [(e.line, e.role) for e in second.entries] == [
        (at["ask"], "user"), (at["call"], "assistant"), (at["out"], "tool")]  # fmt: skip
    assert second.not_in_file == 20_000 - estimate_tokens(second.chars)
    # After `compacted`: its replacement history first, each item one entry.
    third = _context(path, 2)
    assert [(e.line, e.item) for e in third.entries] == [
        (at["compacted"], 0), (at["compacted"], 1)]  # fmt: skip
    assert third.chars == len("build it") + len("SUMMARY: built it")
    assert third.compaction is not None and third.compaction.kind == "compacted"


def test_codex_encrypted_compaction_says_its_summary_cannot_be_read(tmp_path: Path) -> None:
    path, at = _rollout(tmp_path / "rollout.jsonl")
    last = _context(path, 3)
    assert last.entries[0].line == at["remote"] and last.entries[0].summary
    assert ENCRYPTED_SUMMARY in last.entries[0].what
    assert [e.line for e in last.entries[1:]] == [at["ask2"]]
    assert last.compaction is not None and ENCRYPTED_SUMMARY in last.compaction_words()
    nxt = _context(path, None)
    assert [e.line for e in nxt.entries] == [at["remote"], at["ask2"], at["last"]]


# -- LLM::Agent ------------------------------------------------------------------------------------


def _reference(path: Path) -> Path:
    cut = "00000000-0000-4000-8000-000000000005"
    elided = [{"id": "00000000-0000-4000-8000-000000000006", "stub": "[gone]"}]
    usage = {"prompt-tokens": 37}
    compaction = {"summary": "Z" * 60, "tokens-before": 300, "tokens-after": 90,
                  "replaces-through-id": cut, "fallback": False}  # fmt: skip
    lines = [
        ref_line(1, "session-meta", {"app": "t"}),
        ref_line(2, "message", {"role": "system", "content": "S" * 40, "sticky": True}),
        ref_line(3, "message", {"role": "user", "content": "U" * 100}),
        ref_line(4, "message", {"role": "assistant", "content": "A" * 20, "usage": usage}),
        ref_line(5, "message", {"role": "user", "content": "V" * 400}),
        ref_line(6, "message", {"role": "assistant", "content": "B" * 8}),
        ref_line(7, "message", {"role": "user", "content": "W" * 10}),
        ref_line(8, "compaction", compaction),
        ref_line(9, "message", {"role": "assistant", "content": "C"}),
        ref_line(10, "elision", {"items": elided}),
        ref_line(11, "message", {"role": "assistant", "content": "E"}),
    ]
    path.write_text("".join(lines), "utf-8")
    return path


def _replay_lines(path: Path) -> tuple[list[int], list[str | None], int]:
    with Transcript.open(path) as t:
        a = analyse(t)
        replay = a.replay
        slots = [replay.slot(i) for i in range(len(replay))]
        return [s.line for s in slots], [s.stub for s in slots], replay.chars_total


def test_the_next_call_of_an_llm_agent_transcript_is_todays_replay(tmp_path: Path) -> None:
    path = _reference(tmp_path / "t.jsonl")
    lines, stubs, chars = _replay_lines(path)
    ctx = _context(path, None)
    assert [e.line for e in ctx.entries] == lines
    assert [e.stub for e in ctx.entries] == stubs
    assert ctx.chars == chars == sum(e.chars for e in ctx.entries)


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_an_llm_agent_call_is_the_replay_of_the_lines_before_it(
    tmp_path: Path, index: int
) -> None:
    """The context of call k equals the replay of the file cut before its response: the
    start of the whole replay (no edit after it) or the lines replayed again."""
    path = _reference(tmp_path / "t.jsonl")
    ctx = _context(path, index)
    assert ctx.call is not None
    kept = path.read_text("utf-8").splitlines(keepends=True)[: ctx.call.line - 1]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(kept), "utf-8")
    lines, stubs, chars = _replay_lines(cut)
    assert [e.line for e in ctx.entries] == lines
    assert [e.stub for e in ctx.entries] == stubs
    assert ctx.chars == chars


def test_an_llm_agent_call_without_later_edits_takes_the_start_of_the_replay(
    tmp_path: Path,
) -> None:
    """No compaction nor elision after the call: the whole file's replay, cut (no pass)."""
    lines = [
        ref_line(1, "message", {"role": "user", "content": "U" * 100}),
        ref_line(2, "message", {"role": "assistant", "content": "A" * 20}),
        ref_line(3, "message", {"role": "user", "content": "V" * 40}),
        ref_line(4, "message", {"role": "assistant", "content": "B" * 8}),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines), "utf-8")
    with Transcript.open(path) as t:
        a = analyse(t)
        assert isinstance(a, Analysis)
        ctx = context_of_call(t, a, 1)
        assert [e.line for e in ctx.entries] == [1, 2, 3]
        assert ctx.chars == 160 == a.calls.context_chars(1)
        assert ctx.not_in_file is None  # no usage: an estimate, nothing implied



def test_an_llm_agent_system_prompt_is_in_the_file_so_only_tools_are_missing(
    tmp_path: Path,
) -> None:
    """The reference records the system prompt as a message: the words say only the tool
    definitions are missing, and name the prompt's line; without one, both are."""
    usage = {"prompt-tokens": 900}
    lines = [
        ref_line(1, "message", {"role": "system", "content": "S" * 40, "sticky": True}),
        ref_line(2, "message", {"role": "user", "content": "U" * 100}),
        ref_line(3, "message", {"role": "assistant", "content": "A" * 20, "usage": usage}),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines), "utf-8")
    with Transcript.open(path) as t:
        a = analyse(t)
        ctx = context_of_call(t, a, 0)
        assert ctx.system_line == 1 and ctx.unrecorded == "tool definitions"
        assert ctx.not_in_file == 900 - estimate_tokens(140)
        words = ctx.not_in_file_words()
        assert f"about {ctx.not_in_file:,} tokens not in the file: tool definitions " in words
        assert "system prompt is in it (line 1)" in words
        bare = context_of_call(t, a, None)  # the next call: an estimate
        assert "The tool definitions are not in the file and not counted" in (
            bare.not_in_file_words()
        )
    path.write_text("".join(lines[1:]), "utf-8")
    with Transcript.open(path) as t:
        ctx = context_of_call(t, analyse(t), 0)
        assert ctx.system_line is None
        assert "not in the file: system prompt and tool definitions" in ctx.not_in_file_words()


def test_a_result_replaced_at_request_time_is_the_replacement(tmp_path: Path) -> None:
    """A `content-replacement` records the exact string the model got for a result."""
    s = ClaudeSession(tmp_path)
    s.user("Read it.")
    s.spill("toolu_01", "".join(f"row {i}\n" for i in range(3000)))
    result = s.lines[-1]
    s.raw({"type": "content-replacement", "sessionId": "s", "replacements": [
        {"kind": "tool-result", "toolUseId": "toolu_01", "replacement": "[too long: dropped]"}]})
    answer = s.assistant({"type": "text", "text": "Dropped."}, msg_id="m9", request="r9")
    answer["parentUuid"] = result["uuid"]  # the replacement line is none of the chain's
    ctx = _context(s.write(), 1)
    entry = next(e for e in ctx.entries if e.line == _number(s, result))
    assert entry.chars == len("[too long: dropped]")
    assert "replaced at request time by line" in entry.what


def test_a_codex_item_belongs_to_the_response_it_is_part_of(tmp_path: Path) -> None:
    path, at = _rollout(tmp_path / "rollout.jsonl")
    with Transcript.open(path) as t:
        analysis = READERS[Format.CODEX](t, None, workers=1)
        assert call_at_line(analysis, at["call"]) == 0  # the call's own first item
        assert call_at_line(analysis, at["call"] + 1) == 1  # the token count: the next call
        assert call_at_line(analysis, at["out"]) == 1  # an input: the call after it
        assert call_at_line(analysis, at["last"]) == 3


def test_a_codex_response_of_several_items_is_one_call_for_M(tmp_path: Path) -> None:
    said = [{"type": "output_text", "text": "done"}]
    items = [
        ("response_item", {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "go"}]}),
        ("response_item", {"type": "reasoning", "summary": [{"type": "summary_text",
                                                             "text": "plan"}]}),
        ("event_msg", {"type": "agent_reasoning", "text": "plan"}),
        ("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                           "arguments": "{}"}),
        ("response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"}),
        ("response_item", {"type": "message", "role": "assistant", "content": said}),
    ]  # fmt: skip
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(codex_line(k, p, i)) + "\n"
                            for i, (k, p) in enumerate(items)), "utf-8")  # fmt: skip
    with Transcript.open(path) as t:
        analysis = READERS[Format.CODEX](t, None, workers=1)
        assert list(analysis.calls.lines) == [2, 6]
        assert [call_at_line(analysis, n) for n in range(1, 7)] == [0, 0, 1, 0, 1, 1]


def test_an_llm_agent_context_without_its_entries_is_the_same_replay(tmp_path: Path) -> None:
    """What the model view asks for: the replay and its size, no line read back per entry."""
    path = _reference(tmp_path / "t.jsonl")
    with Transcript.open(path) as t:
        a = analyse(t)
        for index in (None, 1, 3):
            whole = context_of_call(t, a, index)
            bare = context_of_call(t, a, index, entries=False)
            assert bare.entries == () and bare.replay is not None
            assert [bare.replay.line_at(i) for i in range(len(bare.replay))] == [
                e.line for e in whole.entries
            ]
            assert bare.chars == whole.chars and bare.not_in_file == whole.not_in_file


def test_a_chain_past_the_last_compaction_starts_after_its_own(tmp_path: Path) -> None:
    """A branch from before the last compaction (the file's, not the chain's): its lines
    are read from the start, and its compaction is the one its chain went through."""
    s, at = _compacted(tmp_path)
    boundary2 = s._base("system")
    boundary2.update(subtype="compact_boundary", content="Conversation compacted",
                     compactMetadata={"trigger": "manual", "preTokens": 90_000},
                     logicalParentUuid=s.lines[-1]["uuid"], parentUuid=None)  # fmt: skip
    s.raw(boundary2)
    s.user("summary two")["isCompactSummary"] = True
    s.assistant({"type": "text", "text": "Two."}, msg_id="m3", request="r3")
    branch = s.user("back on the first branch")
    branch["parentUuid"] = at["after"]["uuid"]
    s.assistant({"type": "text", "text": "Back."}, msg_id="m4", request="r4")
    ctx = _context(s.write(), None)
    want = [_number(s, at["summary"]), _number(s, at["after"]), _number(s, branch)]
    assert [e.line for e in ctx.entries] == [*want, len(s.lines)]
    assert ctx.compaction is not None and ctx.compaction.line == _number(s, at["boundary"])
    assert not ctx.problems

"""Issue 27, "where each message lived": which calls had a line in context, and what it cost.

Every case on a synthetic session of the spec's shapes with usage recorded: a
compaction that drops a line, a microcompaction that clears a result, a rewind
that leaves a branch, a line still in context at the last call, one never sent;
a cost exact from two calls' usage, an estimate labelled so, a spilled result
against its whole output; Codex's `compacted` and encrypted `compaction`, and
LLM::Agent's `compaction` envelopes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _real_shapes import (
    codex_compacted_rollout,
    context_session,
    microcompacted_session,
    usage,
)
from _runs import line as ref_line
from _sessions import ClaudeSession, codex_line

import transcript_view.core.transcript as transcript_module
from transcript_view.core.analysis import Analysis
from transcript_view.core.call_context import context_of_call
from transcript_view.core.calls import estimate_tokens
from transcript_view.core.formats.detect import Format, detect
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.formats.readers import READERS
from transcript_view.core.lifetime import (
    Lifetime,
    Lifetimes,
    compaction_figures,
    cost,
    lifetime,
)
from transcript_view.core.transcript import Transcript


def _analyse(path: Path) -> tuple[Transcript, Analysis | SessionAnalysis]:
    fmt = detect(path).format
    assert fmt is not None
    t = Transcript.open(path)
    return t, READERS[fmt](t, None, workers=1)


def _span(lt: Lifetime) -> tuple[int | None, int | None, str, int | None]:
    return lt.first, lt.last, lt.end, lt.end_line


# -- Claude Code -----------------------------------------------------------------------------------


def test_a_line_lives_from_the_next_call_to_the_last_before_the_compaction(
    tmp_path: Path,
) -> None:
    t, a = _analyse(context_session(tmp_path / "projects" / "p"))
    with t:
        assert list(a.calls.lines) == [2, 6, 8, 10, 13]
        lives = Lifetimes.of(a)
        assert _span(lives.at(5)) == (2, 4, "compaction", 11)
        assert lives.at(5).words() == (
            "in context for calls 2–4 (3 calls); left at the compaction on line 11"
        )
        assert lives.at(9).words() == (
            "in context for call 4 (1 call); left at the compaction on line 11"
        )
        # The summary after it: still there at the last call.
        assert _span(lives.at(12)) == (5, 5, "still", None)
        assert lives.at(12).words().endswith("; still in context at the last call")
        # The reply the compaction came right after: no call had it.
        assert lives.at(10).words() == (
            "never sent: the compaction on line 11 came before any call"
        )
        assert lives.at(13).words() == "never sent: no call after it"
        # The same rule, asked directly of the calls.
        assert lifetime(a.calls, 5) == lives.at(5)


def test_a_cost_is_exact_from_usage_only_where_one_item_and_its_turn_came_between(
    tmp_path: Path,
) -> None:
    """Call 1 (12,000) → call 2 (12,180) added the Bash result (line 5) and the response
    that asked for it: 180 tokens, from usage. The prompt on line 9 likewise, with the
    reply before it. A line that shares the difference with an input is an estimate."""
    t, a = _analyse(context_session(tmp_path / "projects" / "p"))
    with t:
        lives = Lifetimes.of(a)
        result = lives.cost(t, 5)
        assert (result.tokens, result.from_usage, result.calls) == (180, True, (1, 2))
        assert result.words() == (
            "~180 tokens from usage (calls 1→2, with the turn that asked for it)"
        )
        prompt = lives.cost(t, 9)
        assert (prompt.tokens, prompt.from_usage) == (13_100 - 13_000, True)
        assert "with the response before it" in prompt.words()
        # Line 6 (the Grep call) was added with its result: no difference is its own.
        call = lives.cost(t, 6)
        assert not call.from_usage
        assert call.tokens == estimate_tokens(len(json.dumps({"pattern": "x"}).replace(" ", "")))
        assert call.words().endswith("tokens (estimate: characters / 4)")
        # The first line: no call before it to take a difference from.
        assert not lives.cost(t, 1).from_usage
        # The summary: a compaction came between the calls around it.
        summary = lives.cost(t, 12)
        assert not summary.from_usage and "estimate" in summary.words()


def test_a_spilled_result_says_what_it_cost_against_its_whole_output(tmp_path: Path) -> None:
    t, a = _analyse(context_session(tmp_path / "projects" / "p"))
    with t:
        spilled = Lifetimes.of(a).cost(t, 7)
        assert (spilled.tokens, spilled.from_usage) == (13_000 - 12_180, True)
        # The marker states 23.4KB (Claude Code's size, KB of 1024): / 4, an estimate.
        assert spilled.full_tokens == estimate_tokens(int(23.4 * 1024))
        assert spilled.words().endswith(
            f"; the whole output would have cost ~{spilled.full_tokens:,} tokens "
            "(estimate: the marker's size 23.4KB / 4)"
        )


def test_a_cost_with_no_usage_on_either_side_is_an_estimate(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("go")
    s.tool_use("toolu_1", "Bash", {"command": "ls"})
    s.tool_result("toolu_1", "y" * 401)
    usage(s.assistant({"type": "text", "text": "done"}, msg_id="m2"), 900)
    t, a = _analyse(s.write())
    with t:
        got = cost(a.calls, Format.CLAUDE_CODE, t, 3)
        assert (got.tokens, got.from_usage) == (estimate_tokens(401), False)
        assert got.words() == "~101 tokens (estimate: characters / 4)"


def test_a_result_a_microcompaction_cleared_left_at_that_boundary(tmp_path: Path) -> None:
    t, a = _analyse(microcompacted_session(tmp_path / "projects" / "p"))
    with t:
        assert isinstance(a, SessionAnalysis)
        (micro,) = a.microcompactions
        first = micro.cleared[0].result
        assert first is not None
        life = Lifetimes.of(a).at(first)
        assert (life.end, life.end_line) == ("cleared", micro.line)
        before = [n + 1 for n, at in enumerate(a.calls.lines) if first < at < micro.line]
        assert (life.first, life.last) == (before[0], before[-1])
        assert life.words().endswith(
            f"cleared at the microcompaction on line {micro.line:,} (a stand-in stayed: "
            "[Old tool result content cleared])"
        )
        # The result read back afterwards is no cleared one.
        assert Lifetimes.of(a).at(a.lines).end in ("still", "never")


def test_a_line_on_a_branch_a_rewind_left_is_not_in_the_later_calls(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path / "projects" / "p")
    first = s.user("write a poem")  # 1
    usage(s.assistant({"type": "text", "text": "Roses…"}, msg_id="m1"), 1_000)  # 2: call 1
    s.user("make it longer")  # 3: left by the rewind
    usage(s.assistant({"type": "text", "text": "Roses, longer…"}, msg_id="m2"), 1_100)  # 4
    again = s.user("make it shorter")  # 5: the rewind, back to line 2
    again["parentUuid"] = s.lines[1]["uuid"]
    usage(s.assistant({"type": "text", "text": "Roses."}, msg_id="m3"), 1_050)  # 6: call 3
    s.user("thanks")  # 7
    usage(s.assistant({"type": "text", "text": "You're welcome."}, msg_id="m4"), 1_070)  # 8
    t, a = _analyse(s.write())
    with t:
        assert isinstance(a, SessionAnalysis)
        assert a.branches == [(5, 2)]
        lives = Lifetimes.of(a)
        assert _span(lives.at(3)) == (2, 2, "rewind", 5)
        assert lives.at(3).words() == (
            "in context for call 2 (1 call); left at line 5, where the conversation went "
            "back to line 2 (a rewind, retry or fork)"
        )
        # The lines the conversation went on from stay.
        assert _span(lives.at(1)) == (1, 4, "still", None)
        assert first["message"]["content"] == "write a poem"


def test_a_line_a_later_branch_goes_back_through_is_in_context_again(tmp_path: Path) -> None:
    """A rewind leaves a line; a later one that goes on from after it brings it back: the
    lifetime is two runs of calls, as the model view at each call has it."""
    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("write a poem")  # 1
    usage(s.assistant({"type": "text", "text": "Roses…"}, msg_id="m1"), 1_000)  # 2: call 1
    s.user("make it longer")  # 3
    usage(s.assistant({"type": "text", "text": "Roses, longer…"}, msg_id="m2"), 1_100)  # 4
    back = s.user("make it shorter")  # 5: back to line 2, leaving 3 and 4
    back["parentUuid"] = s.lines[1]["uuid"]
    usage(s.assistant({"type": "text", "text": "Roses."}, msg_id="m3"), 1_050)  # 6: call 3
    again = s.user("no, the longer one")  # 7: on from line 4 again
    again["parentUuid"] = s.lines[3]["uuid"]
    usage(s.assistant({"type": "text", "text": "Roses, longer…"}, msg_id="m4"), 1_200)  # 8
    t, a = _analyse(s.write())
    with t:
        assert isinstance(a, SessionAnalysis)
        assert a.branches == [(5, 2), (7, 4)]
        life = Lifetimes.of(a).at(3)
        assert life.spans == ((2, 2), (4, 4)) and life.calls == 2 and life.end == "still"
        assert life.words() == (
            "in context for calls 2 and 4 (2 calls); still in context at the last call"
        )
        assert [3 in held for held in _holding(t, a)] == [False, True, False, True]


def test_a_line_that_names_no_parent_starts_the_context_over(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("write a poem")  # 1
    usage(s.assistant({"type": "text", "text": "Roses…"}, msg_id="m1"), 1_000)  # 2: call 1
    fresh = s.user("start again")  # 3: no parent
    fresh["parentUuid"] = None
    usage(s.assistant({"type": "text", "text": "Again."}, msg_id="m2"), 900)  # 4: call 2
    t, a = _analyse(s.write())
    with t:
        assert isinstance(a, SessionAnalysis)
        assert a.branches == [(3, 0)]  # the file's first line is no such line
        life = Lifetimes.of(a).at(1)
        assert _span(life) == (1, 1, "rewind", 3)
        assert life.words() == (
            "in context for call 1 (1 call); left at line 3, where the conversation "
            "started over (the line names no parent)"
        )
        assert [1 in held for held in _holding(t, a)] == [True, False]


def _holding(t: Transcript, a: SessionAnalysis) -> list[set[int]]:
    """Each call's context's lines (`core.call_context`), for the lifetime to agree with."""
    return [
        {n for e in context_of_call(t, a, i).entries for n in e.all_lines}
        for i in range(len(a.calls))
    ]


def test_a_compaction_row_says_its_trigger_and_the_context_before_and_after(
    tmp_path: Path,
) -> None:
    t, a = _analyse(context_session(tmp_path / "projects" / "p"))
    with t:
        f = compaction_figures(a.calls, 11)
        assert f is not None
        assert f.trigger_words() == "compaction · trigger auto"
        assert f.before_words() == "context before: 13,150 tokens (compactMetadata.preTokens)"
        assert f.after_words() == "context after: 2,400 tokens (call 5's size, recorded)"
        assert compaction_figures(a.calls, 10) is None


def test_a_microcompaction_row_says_what_it_saved(tmp_path: Path) -> None:
    t, a = _analyse(microcompacted_session(tmp_path / "projects" / "p"))
    with t:
        (c,) = a.calls.compactions
        f = compaction_figures(a.calls, c.line)
        assert f is not None
        assert f.trigger_words() == (
            "microcompaction · trigger auto · saved 34,078 tokens "
            "(microcompactMetadata.tokensSaved) · no summary: old tool results were cleared"
        )
        assert f.before_words() == (
            "context before: 71,221 tokens (microcompactMetadata.preTokens)"
        )
        assert f.after_words().endswith("'s size, estimate)")


# -- Codex -----------------------------------------------------------------------------------------


def test_codex_lines_leave_at_compacted_and_at_an_encrypted_compaction(tmp_path: Path) -> None:
    t, a = _analyse(codex_compacted_rollout(tmp_path / "rollout.jsonl"))
    with t:
        assert list(a.calls.lines) == [4, 7, 10, 15]
        lives = Lifetimes.of(a)
        assert _span(lives.at(6)) == (2, 2, "compaction", 9)
        assert lives.at(6).words() == (
            "in context for call 2 (1 call); left at the compaction on line 9"
        )
        assert _span(lives.at(12)) == (None, None, "compaction", 13)
        assert _span(lives.at(14)) == (4, 4, "still", None)
        # The output between calls 1 and 2 with the call that asked for it: from usage.
        got = lives.cost(t, 6)
        assert (got.tokens, got.from_usage, got.with_) == (450, True, "the turn that asked for it")
        encrypted = compaction_figures(a.calls, 13)
        assert encrypted is not None
        assert encrypted.trigger_words() == (
            "compaction · trigger not recorded · summary not readable: encrypted by the provider"
        )
        assert encrypted.before_words() == "context before: 3,000 tokens (call 3's size, recorded)"
        assert encrypted.after_words() == "context after: 1,000 tokens (call 4's size, recorded)"


# -- LLM::Agent ------------------------------------------------------------------------------------


def _answer(text: str, tokens: int) -> dict[str, Any]:
    return {"role": "assistant", "content": text, "usage": {"prompt-tokens": tokens}}


def _run(path: Path) -> Path:
    compaction = {"summary": "Z" * 60, "tokens-before": 300, "tokens-after": 90,
                  "replaces-through-id": "00000000-0000-4000-8000-000000000005",
                  "fallback": False}  # fmt: skip
    lines = [
        ref_line(1, "session-meta", {"app": "t"}),
        ref_line(2, "message", {"role": "system", "content": "S" * 40, "sticky": True}),
        ref_line(3, "message", {"role": "user", "content": "U" * 100}),
        ref_line(4, "message", _answer("A" * 20, 37)),
        ref_line(5, "message", {"role": "user", "content": "V" * 400}),
        ref_line(6, "message", _answer("B" * 8, 150)),
        ref_line(7, "compaction", compaction),
        ref_line(8, "message", _answer("C", 91)),
    ]
    path.write_text("".join(lines), "utf-8")
    return path


def test_llm_agent_messages_leave_at_the_compaction_that_replaced_them(tmp_path: Path) -> None:
    t, a = _analyse(_run(tmp_path / "run.jsonl"))
    with t:
        assert isinstance(a, Analysis)
        assert list(a.calls.lines) == [4, 6, 8]
        lives = Lifetimes.of(a)
        assert _span(lives.at(3)) == (1, 2, "compaction", 7)
        # A sticky message no compaction drops; the last user message, after the cut, stays.
        assert _span(lives.at(2, kept=True)) == (1, 3, "still", None)
        assert _span(lives.at(6)) == (3, 3, "still", None)
        # 37 → 150: the answer on line 4 and the message on line 5 between them.
        got = lives.cost(t, 5)
        assert (got.tokens, got.from_usage) == (113, True)
        assert "with the response before it" in got.words()
        f = compaction_figures(a.calls, 7)
        assert f is not None
        assert f.before_words() == "context before: 300 tokens (tokens-before)"
        assert f.after_words() == "context after: 90 tokens (tokens-after)"


def test_the_branches_are_the_same_however_the_lines_are_batched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A branch found inside a batch and one whose parent is in an earlier batch (the
    fold's) are recorded alike: the same list cut anywhere, mapped in worker processes."""
    s = ClaudeSession(tmp_path / "projects" / "p")
    for i in range(6):
        s.user(f"try {i}")
        usage(s.assistant({"type": "text", "text": f"answer {i}"}, msg_id=f"m{i}"), 100 + i)
    s.user("again")["parentUuid"] = s.lines[1]["uuid"]  # back to line 2
    s.user("and again")["parentUuid"] = s.lines[5]["uuid"]  # back to line 6
    path = s.write()
    want = [(13, 2), (14, 6)]
    for chunk in (1, 200, 1 << 22):
        monkeypatch.setattr(transcript_module, "READ_CHUNK", chunk)
        t, a = _analyse(path)
        with t:
            assert isinstance(a, SessionAnalysis)
            assert a.branches == want, chunk
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 300)
    with Transcript.open(path) as t:
        a = READERS[Format.CLAUDE_CODE](t, None, workers=2)
        assert isinstance(a, SessionAnalysis)
        assert a.branches == want


def test_a_codex_cut_says_what_the_whole_output_would_have_cost(tmp_path: Path) -> None:
    """Codex's own counts: the characters it cut (added to those shown, / 4), or the
    original token count its warning states."""
    outputs = {
        4: "head\u202612000 chars truncated\u2026tail",
        6: "Warning: truncated output (original token count: 5000)\nTotal output lines: 300\n\nx",
    }
    lines: list[dict[str, Any]] = []
    for n, (line, output) in enumerate(outputs.items()):
        lines.append(codex_line("response_item", {"type": "function_call", "name": "shell",
                                                  "call_id": f"c{n}", "arguments": "{}"}, line))
        lines.append(codex_line("response_item", {"type": "function_call_output",
                                                  "call_id": f"c{n}", "output": output}, line))
    lines.insert(0, codex_line("session_meta", {"id": "0199", "cwd": "/p"}, 0))
    lines.insert(1, codex_line("turn_context", {"cwd": "/p", "model": "gpt-5-codex"}, 1))
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    t, a = _analyse(path)
    with t:
        assert sorted({s.line for s in a.sites}) == [4, 6]
        lives = Lifetimes.of(a)
        chars = lives.cost(t, 4)
        shown = len(outputs[4])
        assert chars.full_tokens == estimate_tokens(shown + 12_000)
        assert chars.words().endswith("(estimate: the characters shown and cut / 4)")
        original = lives.cost(t, 6)
        assert original.full_tokens == 5_000
        assert "(estimate: Codex's own count of the original output" in original.words()


def test_an_attachment_between_the_calls_makes_the_cost_an_estimate(tmp_path: Path) -> None:
    """Claude Code adds an attachment's text to the next request without recording it: the
    difference across one is not the result's and its turn's alone."""
    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("go")
    usage(s.tool_use("toolu_1", "Bash", {"command": "ls"}), 1_000)
    s.tool_result("toolu_1", "y" * 400)
    s.raw({**s._base("attachment"), "attachment": {"type": "hook_additional_context"}})
    usage(s.assistant({"type": "text", "text": "done"}, msg_id="m2"), 1_500)
    t, a = _analyse(s.write())
    with t:
        got = Lifetimes.of(a).cost(t, 3)
        assert (got.tokens, got.from_usage) == (estimate_tokens(400), False)

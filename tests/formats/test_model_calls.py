"""Issue 27: the model calls of every format, from the same pass, held to the files' own figures.

Per format, a session built from the spec (`../shared/spec`) whose recorded sizes
are known: each call's size is its usage field (Claude Code's three `usage` parts,
read once per response; Codex's `token_count` after the call; LLM::Agent's
`usage`), each compaction is its record, and a call whose file records nothing is
an estimate, labelled so. Then the same calls whatever the batches: cut
anywhere (`READ_CHUNK` down to one line), mapped in two worker processes.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from _random_transcripts import mutate, random_transcript
from _runs import line as ref_line
from _sessions import ClaudeSession, codex_line, random_claude_session
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transcript_view.core.transcript as transcript_module
from transcript_view.cli import main
from transcript_view.core.analyser import Analyser
from transcript_view.core.analysis import analyse
from transcript_view.core.calls import (
    ESTIMATE_RULE,
    FIELDS,
    WINDOWS,
    Compaction,
    ModelCalls,
    WindowSource,
    estimate_tokens,
    known_window,
)
from transcript_view.core.context import context_json, context_text, run_context
from transcript_view.core.envelopes import Message, field_text
from transcript_view.core.formats import claude_lines
from transcript_view.core.formats.detect import Format, detect
from transcript_view.core.formats.readers import READERS
from transcript_view.core.tables import read_envelope
from transcript_view.core.transcript import Transcript

CLAUDE_FIELD = FIELDS[1]
CODEX_FIELD = FIELDS[2]

# -- reading the calls ---------------------------------------------------------------------------


def _read(path: Path, workers: int = 1, fmt: Format | None = None) -> ModelCalls:
    fmt = fmt or detect(path).format
    assert fmt is not None
    with Transcript.open(path) as t:
        return READERS[fmt](t, None, workers=workers).calls


def _rows(calls: ModelCalls) -> list[tuple[Any, ...]]:
    """Every call as a reader sees it, estimates made (so the columns' layout is not compared)."""
    out = []
    for c in calls:
        out.append(
            (
                c.line,
                c.model,
                c.tokens,
                c.recorded,
                c.field,
                c.window,
                c.window_source,
                c.items_added,
                c.biggest_line,
                c.biggest_chars,
                tuple(x.line for x in c.compactions),
                calls.context_chars(c.number - 1),
            )
        )
    return out


def _same_calls_in_any_batches(
    path: Path, monkeypatch: pytest.MonkeyPatch, chunks: tuple[int, ...] = (1, 150, 1 << 20)
) -> list[tuple[Any, ...]]:
    """The calls of `path`, the same however its lines are cut into batches and wherever they
    are mapped; returns them."""
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 1 << 22)
    want = _rows(_read(path))
    want_compactions = _read(path).compactions
    for chunk in chunks:
        monkeypatch.setattr(transcript_module, "READ_CHUNK", chunk)
        assert _rows(_read(path)) == want, chunk
        assert _read(path).compactions == want_compactions, chunk
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 300)
    assert _rows(_read(path, workers=2)) == want
    return want


# -- Claude Code -----------------------------------------------------------------------------------


def _usage(line: dict[str, Any], cached: int, created: int, fresh: int = 3) -> int:
    """Put a `message.usage` on an assistant line, as the spec gives it; the context size."""
    line["message"]["usage"] = {
        "input_tokens": fresh,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": created,
        "output_tokens": 9_999,  # undercounts the response: never the context's size
    }
    return fresh + cached + created


def _claude_truth(root: Path) -> tuple[Path, list[tuple[int, int | None]], list[Compaction]]:
    """A session of every shape the spec names: (its path, each call's (line, recorded
    size), the compactions)."""
    s = ClaudeSession(root)
    want: list[tuple[int, int | None]] = []
    s.user("fix the build")  # 1
    first = s.assistant({"type": "text", "text": "Looking."}, msg_id="m1", request="r1")  # 2
    size = _usage(first, 12_000, 1_500)
    want.append((2, size))
    again = s.tool_use("toolu_1", "Bash", {"command": "make"}, msg_id="m1")  # 3: same response
    again["requestId"] = "r1"
    _usage(again, 12_000, 1_500)  # repeated: read once
    s.progress("toolu_1")  # 4
    s.tool_result("toolu_1", "make: *** [all] Error 2")  # 5
    # A parallel batch: three lines of one response, results and progress between.
    lines = s.parallel(
        [("toolu_a", "Grep", "a"), ("toolu_b", "Grep", "b"), ("toolu_c", "Read", "c")],
        msg_id="m2",
    )
    sizes = [_usage(x, 13_600, 40) for x in lines if x["type"] == "assistant"]
    want.append((s.lines.index(lines[0]) + 1, sizes[0]))
    # A response whose first line records no usage, its second does.
    no_usage = s.assistant({"type": "text", "text": "Two more."}, msg_id="m3", request="r3")
    later = s.assistant({"type": "text", "text": "And this."}, msg_id="m3", request="r3")
    want.append((s.lines.index(no_usage) + 1, _usage(later, 14_000, 0, fresh=120)))
    # A line Claude Code writes itself: no model call.
    synthetic = s.assistant({"type": "text", "text": "No response requested."}, msg_id="m-syn")
    synthetic["message"]["model"] = "<synthetic>"
    _usage(synthetic, 0, 0, fresh=0)
    # A compaction, and its summary.
    boundary = s._base("system")
    boundary.update(
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 170_012},
        logicalParentUuid=s.lines[-1]["uuid"],
        parentUuid=None,
    )
    s.raw(boundary)
    compact_line = len(s.lines)
    summary = s.user("This session is being continued from a previous conversation ...")
    summary["isCompactSummary"] = True
    after = s.assistant({"type": "text", "text": "Continuing."}, msg_id="m4", request="r4")
    want.append((s.lines.index(after) + 1, _usage(after, 0, 9_000)))
    micro = s._base("system")
    micro.update(
        subtype="microcompact_boundary",
        content="Context microcompacted",
        microcompactMetadata={
            "trigger": "auto",
            "preTokens": 71_221,
            "tokensSaved": 34_078,
            "compactedToolIds": ["toolu_a"],
            "clearedAttachmentUUIDs": [],
        },
    )
    s.raw(micro)
    micro_line = len(s.lines)
    bare = s.assistant({"type": "text", "text": "No usage on me."}, msg_id="m5", request="r5")
    want.append((s.lines.index(bare) + 1, None))
    path = s.write()
    compactions = [
        Compaction(compact_line, "compact_boundary", "auto", 170_012, "compactMetadata.preTokens"),
        Compaction(
            micro_line,
            "microcompact_boundary",
            "auto",
            71_221,
            "microcompactMetadata.preTokens",
            tokens_saved=34_078,
            summary="none",
            resets=False,
        ),
    ]
    return path, want, compactions


def test_claude_code_calls_are_its_responses_and_their_sizes_the_usage_fields(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each response is one call on its first line (lines sharing `message.id` are one call,
    a parallel batch's too), its size `input + cache read + cache creation` (never
    `output_tokens`), read on the first of its lines that has it; a `<synthetic>` line is no
    call; the compactions are the `compact_boundary` and `microcompact_boundary` records."""
    path, want, compactions = _claude_truth(tmp_path / "projects" / "p")
    rows = _same_calls_in_any_batches(path, monkeypatch)
    calls = _read(path)
    assert [(c.line, c.tokens if c.recorded else None) for c in calls] == want
    assert calls.compactions == compactions
    for c in calls:
        assert c.model == "claude-sonnet-4-5"
        assert c.field == (CLAUDE_FIELD if c.recorded else ESTIMATE_RULE)
        assert (c.window, c.window_source) == (200_000, WindowSource.ASSUMED)
    by_line = {c.line: c for c in calls}
    assert by_line[want[3][0]].compactions == (compactions[0],)
    assert by_line[want[4][0]].compactions == (compactions[1],)
    # After the compaction the estimate counts from its summary: the last call's
    # context is the summary, the response after it and its own text.
    last = calls.call(len(calls) - 1)
    texts = [
        "This session is being continued from a previous conversation ...",
        "Continuing.",
    ]
    assert calls.context_chars(len(calls) - 1) == sum(map(len, texts))
    assert last.tokens == estimate_tokens(sum(map(len, texts)))
    assert len(rows) == len(want)


#: `message.usage` shapes: all three parts (the usual), some missing, some not counts.
_USAGES: list[dict[str, Any]] = [
    {"input_tokens": 3, "cache_read_input_tokens": 12_000, "cache_creation_input_tokens": 500},
    {"input_tokens": 1_200},
    {"input_tokens": 7, "cache_read_input_tokens": 900},
    {"input_tokens": 7, "cache_creation_input_tokens": 40},
    {"input_tokens": 5, "cache_read_input_tokens": -1, "cache_creation_input_tokens": 10},
    {"input_tokens": 5, "cache_read_input_tokens": True, "cache_creation_input_tokens": "10"},
    {"cache_read_input_tokens": 800, "cache_creation_input_tokens": 20},
    {"input_tokens": -3, "cache_read_input_tokens": 60},
    {"input_tokens": True, "cache_read_input_tokens": 60},
    {"output_tokens": 50},
]


def test_the_pass_reads_every_usage_as_usage_tokens_does(tmp_path: Path) -> None:
    """The map reads a response's usage inline (a line at a time, where a call costs more
    than the work): what it reads is `usage_tokens`' answer for every shape."""
    s = ClaudeSession(tmp_path / "projects" / "p")
    for i, usage in enumerate(_USAGES):
        s.user(f"question {i}")
        line = s.assistant({"type": "text", "text": "answer"}, msg_id=f"m{i}", request=f"r{i}")
        line["message"]["usage"] = usage
    calls = _read(s.write())
    shapes = [msgspec.convert(u, claude_lines.Usage) for u in _USAGES]
    assert [c.tokens if c.recorded else -1 for c in calls] == [
        claude_lines.usage_tokens(u) for u in shapes
    ]
    assert [c.recorded for c in calls] == [True] * 9 + [False]  # a part is enough


def test_the_items_a_call_added_are_the_lines_since_the_call_before_began(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("go")  # 1
    s.assistant({"type": "text", "text": "a"}, msg_id="m1")  # 2: call 1
    s.tool_use("toolu_1", "Bash", {"command": "ls -la"}, msg_id="m1")["requestId"] = "req_01"  # 3
    s.progress("toolu_1")  # 4: no item
    s.tool_result("toolu_1", "x" * 500)  # 5
    s.assistant({"type": "text", "text": "b"}, msg_id="m2")  # 6: call 2
    path = s.write()
    calls = list(_read(path))
    assert [(c.line, c.items_added) for c in calls] == [(2, 1), (6, 3)]
    assert (calls[1].biggest_line, calls[1].biggest_chars) == (5, 500)
    tool_input = len(json.dumps({"command": "ls -la"}, separators=(",", ":")))
    assert _read(path).context_chars(1) == len("go") + len("a") + tool_input + 500


# -- Codex -----------------------------------------------------------------------------------------


def _codex_item(kind: str, **payload: Any) -> dict[str, Any]:
    return {"type": kind, **payload}


def _token_count(size: object, window: object = 272_000) -> dict[str, Any]:
    info = None
    if size is not None:
        cached = size // 2 if type(size) is int else size
        total = size + 87 if type(size) is int else size
        usage = {"input_tokens": size, "cached_input_tokens": cached, "output_tokens": 77,
                 "reasoning_output_tokens": 10, "total_tokens": total}  # fmt: skip
        info = {"total_token_usage": usage, "last_token_usage": usage}
        if window is not None:
            info["model_context_window"] = window
    return {"type": "token_count", "info": info, "rate_limits": {"primary": None}}


def _codex_truth(path: Path) -> tuple[Path, list[tuple[int, int | None, int | None]]]:
    """A rollout of every shape CODEX.md names: (its path, each call's (line, recorded size,
    recorded window))."""
    lines: list[dict[str, Any]] = []
    want: list[tuple[int, int | None, int | None]] = []

    def add(kind: str, payload: dict[str, Any]) -> int:
        lines.append(codex_line(kind, payload, len(lines)))
        return len(lines)

    text = [{"type": "input_text", "text": "build it"}]
    said = [{"type": "output_text", "text": "done"}]
    add("session_meta", {"id": "0199", "cwd": "/p", "cli_version": "0.60.0"})
    add("turn_context", {"cwd": "/p", "model": "gpt-5-codex"})
    add("event_msg", _token_count(None))  # the heartbeat: no info
    add("response_item", _codex_item("message", role="user", content=text))
    call = add("response_item", _codex_item("reasoning", summary=[{"type": "summary_text",
                                                                   "text": "plan"}]))  # fmt: skip
    add("response_item", _codex_item("function_call", name="shell", call_id="c1",
                                     arguments='{"command":["make"]}'))  # fmt: skip
    add("event_msg", _token_count(20_000))
    add("event_msg", _token_count(20_000))  # repeated: the call has its size
    want.append((call, 20_000, 272_000))
    add("response_item", _codex_item("function_call_output", call_id="c1", output="ok"))
    call = add("response_item", _codex_item("message", role="assistant", content=said))
    add("event_msg", {"type": "agent_message", "message": "done"})
    add("event_msg", _token_count(20_500, window=None))
    want.append((call, 20_500, None))
    add("response_item", _codex_item("ghost_snapshot", ghost_commit={}))  # never sent
    add("turn_context", {"cwd": "/p", "model": "gpt-5.1-codex"})
    add("response_item", _codex_item("message", role="user", content=text))
    call = add("response_item", _codex_item("message", role="assistant", content=said))
    want.append((call, None, None))  # no token_count after it
    add("compacted", {"message": "SUMMARY: built it", "replacement_history": [
        {"type": "message", "role": "user", "content": text},
        {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                         "text": "SUMMARY: built it"}]},
    ]})  # fmt: skip
    add("event_msg", _token_count(250_000))  # the summarising call's: no call of the file's
    call = add("response_item", _codex_item("message", role="assistant", content=said))
    add("event_msg", _token_count(3_000))
    want.append((call, 3_000, 272_000))
    add("response_item", _codex_item("compaction", encrypted_content="gAAAA..."))
    add("response_item", _codex_item("message", role="user", content=text))
    call = add("response_item", _codex_item("function_call", name="shell", call_id="c2",
                                            arguments="{}"))  # fmt: skip
    add("event_msg", _token_count(1_000))
    want.append((call, 1_000, 272_000))
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return path, want


def test_codex_calls_take_the_token_count_that_follows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call is a run of the model's items; its size the `last_token_usage.input_tokens` of
    the `token_count` after it (a repeated one, or one with no `info`, changes nothing), its
    window `model_context_window` (recorded), else the model's (assumed); the model is the
    last `turn_context`'s; `compacted` is readable, `compaction` encrypted."""
    path, want = _codex_truth(tmp_path / "rollout.jsonl")
    _same_calls_in_any_batches(path, monkeypatch)
    calls = _read(path)
    got = [(c.line, c.tokens if c.recorded else None, c.window) for c in calls]
    assert got == [
        (line, size, window if window is not None else 272_000) for line, size, window in want
    ]
    assert [c.window_source for c in calls] == [
        WindowSource.RECORDED,
        WindowSource.ASSUMED,
        WindowSource.ASSUMED,
        WindowSource.RECORDED,
        WindowSource.RECORDED,
    ]
    assert [c.model for c in calls] == ["gpt-5-codex"] * 2 + ["gpt-5.1-codex"] * 3
    assert [c.field for c in calls if c.recorded] == [CODEX_FIELD] * 4
    assert [(c.kind, c.summary) for c in calls.compactions] == [
        ("compacted", "readable"),
        ("compaction", "encrypted"),
    ]
    assert [len(c.compactions) for c in calls] == [0, 0, 0, 1, 1]
    # After `compacted`, the context is the history it records: two messages.
    assert calls.context_chars(3) == len("build it") + len("SUMMARY: built it")
    # After the encrypted one, nothing the file can count, then the user's message.
    assert calls.context_chars(4) == len("build it")


# -- LLM::Agent ------------------------------------------------------------------------------------


def _reference_truth(path: Path) -> tuple[Path, list[tuple[int, int | None]]]:
    usage = {"prompt-tokens": 37, "completion-tokens": 5}
    cut = "00000000-0000-4000-8000-000000000005"
    answer = {"role": "assistant", "content": "C", "usage": {"prompt_tokens": 91}}
    elided = [{"id": "00000000-0000-4000-8000-000000000006", "stub": "[gone]"}]
    compaction = {"summary": "Z" * 60, "tokens-before": 300, "tokens-after": 90,
                  "replaces-through-id": cut, "fallback": False}  # fmt: skip
    lines = [
        ref_line(1, "session-meta", {"app": "t"}),
        ref_line(2, "message", {"role": "system", "content": "S" * 40, "sticky": True}),
        ref_line(3, "message", {"role": "user", "content": "U" * 100}),
        ref_line(4, "message", {"role": "assistant", "content": "A" * 20, "usage": usage}),
        ref_line(5, "message", {"role": "user", "content": "V" * 400}),
        ref_line(6, "message", {"role": "assistant", "content": "B" * 8}),
        ref_line(7, "compaction", compaction),
        ref_line(8, "message", answer),
        ref_line(9, "message", {"role": "assistant", "content": "D", "injected": True}),
        ref_line(10, "elision", {"items": elided}),
        ref_line(11, "message", {"role": "assistant", "content": "E"}),
    ]
    path.write_text("".join(lines), "utf-8")
    return path, [(4, 37), (6, None), (8, 91), (11, None)]


def test_reference_calls_are_assistant_messages_their_size_the_usage_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each assistant message is a call (an `injected` one is the application's, not the
    model's), its size the `usage` it carries; else an estimate of what the replay had then:
    sticky messages kept, the summary at the cut, an elided message as its stub."""
    path, want = _reference_truth(tmp_path / "run.jsonl")
    _same_calls_in_any_batches(path, monkeypatch)
    calls = _read(path)
    assert [(c.line, c.tokens if c.recorded else None) for c in calls] == want
    assert [c.field for c in calls] == [
        "usage.prompt-tokens", ESTIMATE_RULE, "usage.prompt_tokens", ESTIMATE_RULE
    ]
    assert [c.model for c in calls] == [None] * 4
    assert [c.window for c in calls] == [None] * 4
    # Call 2 (line 6): the system, user, first answer and second user message.
    assert calls.context_chars(1) == 40 + 100 + 20 + 400
    # Call 4 (line 11): the sticky system message, the summary, then lines 6, 8, 9 (line 6
    # elided to its stub on line 10).
    assert calls.context_chars(3) == 40 + 60 + len("[gone]") + 1 + 1
    (c,) = calls.compactions
    assert (c.line, c.kind, c.tokens_before, c.tokens_after) == (7, "compaction", 300, 90)
    assert calls.call(2).compactions == (c,)


def test_the_reference_fixture_records_its_usage(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[1] / "data" / "reference" / "basic.jsonl"
    if not fixture.is_file():
        pytest.skip("the reference fixtures are not in this checkout")
    calls = _read(fixture)
    assert [(c.line, c.tokens, c.field) for c in calls] == [
        (4, 120, "usage.prompt-tokens"),
        (11, 17_000, "usage.prompt-tokens"),
    ]


def _replay_chars(path: Path, upto: int) -> int:
    """What the reference's replay holds before line `upto`, counted from the entries read
    back (the replay's own rules, not the pass's running count)."""
    head = b"".join(path.read_bytes().splitlines(keepends=True)[: upto - 1])
    part = path.with_name("head.jsonl")
    part.write_bytes(head)
    total = 0
    with Transcript.open(part) as t:
        a = analyse(t)
        for entry in a.replay:
            env = read_envelope(t, entry.line, limit=None)
            if entry.stub is not None:
                total += len(entry.stub)
            elif entry.summary:
                assert env is not None
                total += len(field_text(env.payload.get("summary")))
            else:
                assert isinstance(env, Message)
                calls = env.payload.get("tool-calls")
                total += len(env.content)
                for call in calls if isinstance(calls, list) else ():
                    function = call.get("function") if isinstance(call, dict) else None
                    arguments = function.get("arguments") if isinstance(function, dict) else None
                    total += len(arguments) if isinstance(arguments, str) else 0
    return total


@pytest.mark.parametrize("seed", [1, 2, 5, 8, 13])
def test_a_reference_estimate_is_what_the_replay_held_before_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Random transcripts (compactions, elisions, bad lines): each call's estimate is the
    characters of the replay as it stood before the call's line, ÷ 4; the same in any
    batches, and as the follow mode's `Analyser` brings it up to date line by line."""
    path = tmp_path / "run.jsonl"
    path.write_bytes(random_transcript(seed, 80))
    _same_calls_in_any_batches(path, monkeypatch)
    calls = _read(path, fmt=Format.REFERENCE)
    assert len(calls)
    for i in range(len(calls)):
        assert calls.context_chars(i) == _replay_chars(path, calls.lines[i]), i
    data = path.read_bytes()
    path.write_bytes(b"")
    transcript = Transcript(path)
    follower = Analyser(transcript)
    written = 0
    for cut in (len(data) // 3, len(data) // 2, len(data)):
        with path.open("ab") as f:
            f.write(data[written:cut])
        written = cut
        transcript.refresh()
        followed = follower.update()
        with Transcript.open(path) as t:
            assert _rows(followed.calls) == _rows(analyse(t).calls), cut
    transcript.close()
    assert _rows(followed.calls) == _rows(calls)


# -- any batches ---------------------------------------------------------------------------------


def _claude_with_usage(root: Path, seed: int) -> Path:
    """A random session (`random_claude_session`), its assistant lines given usage (one in
    five none) and models, and a compaction's `preTokens` now and then."""
    rng = random.Random(seed)
    path = random_claude_session(root, seed, 120)
    out = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            obj = json.loads(raw)
        except ValueError:
            out.append(raw)
            continue
        if isinstance(obj, dict) and obj.get("type") == "assistant":
            message = obj.get("message")
            if isinstance(message, dict) and rng.random() < 0.8:
                message["usage"] = {"input_tokens": rng.randint(1, 9),
                                    "cache_read_input_tokens": rng.randint(0, 90_000)}  # fmt: skip
                message["model"] = rng.choice(["claude-opus-4-6", "claude-sonnet-4-5", ""])
        if isinstance(obj, dict) and isinstance(obj.get("compactMetadata"), dict):
            obj["compactMetadata"]["preTokens"] = rng.randint(1, 200_000)
        out.append(json.dumps(obj).encode())
    path.write_bytes(b"\n".join(out))
    return path


def _random_rollout(path: Path, seed: int, steps: int = 150) -> Path:
    """A rollout of every line the calls read, in random order: turns, the model's items,
    inputs, token counts (some empty, some repeated), compactions of both kinds."""
    rng = random.Random(seed)
    lines = [codex_line("session_meta", {"id": "0199", "cwd": "/p"}, 0)]
    for i in range(steps):
        r = rng.random()
        text = [{"type": "input_text", "text": "x" * rng.randint(0, 300)}]
        if r < 0.05:
            payload: dict[str, Any] = {"model": rng.choice(["gpt-5-codex", "o3", 7])}
            lines.append(codex_line("turn_context", payload, i))
        elif r < 0.45:
            item = rng.choice([
                _codex_item("message", role="assistant", content=text),
                _codex_item("reasoning", summary=[{"type": "summary_text", "text": "t" * 9}]),
                _codex_item("function_call", call_id=f"c{i}", arguments="{}" * rng.randint(0, 9)),
                _codex_item("custom_tool_call", call_id=f"c{i}", input="patch" * 3),
            ])  # fmt: skip
            lines.append(codex_line("response_item", item, i))
        elif r < 0.7:
            item = rng.choice([
                _codex_item("message", role="user", content=text),
                _codex_item("function_call_output", call_id="c1", output="o" * rng.randint(0, 99)),
                _codex_item("ghost_snapshot"),
                _codex_item("message", role="developer", content=text),
            ])  # fmt: skip
            lines.append(codex_line("response_item", item, i))
        elif r < 0.92:
            # Counts that are none too: negative, a string, a bool; windows the same.
            size = rng.choice([None, rng.randint(1, 300_000), rng.randint(1, 9), -5, "12", True])
            count = _token_count(size, rng.choice([None, 272_000, 272_000, 0, -1, "big"]))
            if rng.random() < 0.05:
                count = {"type": "token_count", "info": {"last_token_usage": [size]}}
            lines.append(codex_line("event_msg", count, i))
        elif r < 0.96:
            history = [_codex_item("message", role="user", content=text)] * rng.randint(0, 3)
            payload = {"message": rng.choice(["", "SUMMARY"]), "replacement_history": history}
            lines.append(codex_line("compacted", payload, i))
        else:
            lines.append(codex_line("response_item", _codex_item("compaction"), i))
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return path


_BATCHES = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_BATCHES
@given(seed=st.integers(0, 10**6), chunk=st.integers(1, 3000), mutated=st.booleans())
def test_claude_code_calls_are_the_same_in_any_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, chunk: int, mutated: bool
) -> None:
    """A response cut across batches is one call; items, characters and the biggest item
    carried over; a batch's first call checked against the last one before it."""
    root = tmp_path / f"s{seed}-{chunk}-{mutated}" / "projects" / "p"
    path = _claude_with_usage(root, seed)
    if mutated:
        path.write_bytes(mutate(path.read_bytes(), seed))
    _same_calls_in_any_batches(path, monkeypatch, (chunk,))


@_BATCHES
@given(seed=st.integers(0, 10**6), chunk=st.integers(1, 3000))
def test_codex_calls_are_the_same_in_any_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, chunk: int
) -> None:
    """A call's items and its `token_count` in different batches; a `turn_context` before the
    batch; a compaction between a call and a count."""
    path = _random_rollout(tmp_path / f"r{seed}-{chunk}.jsonl", seed)
    rows = _same_calls_in_any_batches(path, monkeypatch, (chunk,))
    assert rows


# -- the window table ----------------------------------------------------------------------------


def test_every_assumed_window_says_where_it_comes_from() -> None:
    assert all(w.source and w.tokens > 0 for w in WINDOWS)
    assert known_window("claude-sonnet-4-5-20250929") is not None
    assert known_window("claude-sonnet-4-5-20250929").tokens == 200_000  # type: ignore[union-attr]
    assert known_window("gpt-5-codex").tokens == 272_000  # type: ignore[union-attr]
    assert known_window("codex-mini-latest").tokens == 200_000  # type: ignore[union-attr]
    assert known_window("o3-pro") is None  # `o3` is exact
    assert known_window("a-model-nobody-knows") is None
    assert known_window(None) is None


# -- --context -----------------------------------------------------------------------------------


def _every_session(tmp_path: Path) -> list[Path]:
    claude, _, _ = _claude_truth(tmp_path / "projects" / "p")
    codex, _ = _codex_truth(tmp_path / "rollout.jsonl")
    ref, _ = _reference_truth(tmp_path / "run.jsonl")
    return [claude, codex, ref]


def _context(path: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["--context", *argv, str(path)])
    return status, out.getvalue()


def test_an_estimate_is_never_shown_without_its_label(tmp_path: Path) -> None:
    """Every row of `--context` that shows an estimated number says `estimate` (and marks the
    number `~`); a recorded size never does; in `--json`, `source` says which."""
    for path in _every_session(tmp_path):
        calls = _read(path)
        status, text = _context(path)
        assert status == 0
        rows = [r for r in text.splitlines() if r[:6].strip().replace(",", "").isdigit()]
        assert len(rows) == len(calls)
        for row, call in zip(rows, calls, strict=True):
            tokens = f"{call.tokens:,}"
            if call.recorded:
                assert f" {tokens} " in row and f"~{tokens}" not in row, row
                assert " recorded " in row
            else:
                assert f"~{tokens} " in row and " estimate " in row, row
        for line in text.splitlines():
            if "~" in line:
                assert "estimate" in line, line
        status, out = _context(path, "--json")
        assert status == 0
        objects = [json.loads(x) for x in out.splitlines()]
        summary = objects.pop()
        assert summary["type"] == "summary" and summary["calls"] == len(calls)
        for obj, call in zip(objects, calls, strict=True):
            assert obj["type"] == "call" and obj["line"] == call.line
            assert obj["tokens"] == call.tokens
            assert obj["source"] == ("recorded" if call.recorded else "estimate")
            assert obj["field"] == (call.field if call.recorded else ESTIMATE_RULE)
            if obj["biggest_item"] is not None:
                assert obj["biggest_item"]["source"] == "estimate"
        if summary["closest"] is not None:
            best = max((o for o in objects if o["fill"] is not None), key=lambda o: o["fill"])
            assert summary["closest"]["call"] == best["call"]
            assert summary["closest"]["source"] == best["source"]


def test_context_text_places_each_compaction_between_its_calls(tmp_path: Path) -> None:
    path, want, compactions = _claude_truth(tmp_path / "projects" / "p")
    calls = _read(path)
    text = context_text(path, Format.CLAUDE_CODE, calls, None)
    body = text.splitlines()
    at = next(i for i, r in enumerate(body) if "compact_boundary (auto)" in r)
    assert "170,012 tokens before (compactMetadata.preTokens)" in body[at]
    assert body[at - 1].split()[1] == f"{want[2][0]:,}"  # the call before it
    assert body[at + 1].split()[1] == f"{want[3][0]:,}"  # and the call after it
    assert "microcompaction, microcompact_boundary (auto)" in text
    assert "34,078 saved" in text
    assert text.rstrip().splitlines()[-1].startswith("closest to its window: call")
    assert json.loads(context_json(path, Format.CLAUDE_CODE, calls, None).splitlines()[-1])[
        "compactions"
    ] == [c.as_dict() for c in compactions]


def test_window_sets_the_window_only_where_the_file_records_none(tmp_path: Path) -> None:
    codex, _ = _codex_truth(tmp_path / "rollout.jsonl")
    _, out = _context(codex, "--json", "--window", "100,000")
    calls = [json.loads(x) for x in out.splitlines()][:-1]
    assert [(c["window"], c["window_source"]) for c in calls] == [
        (272_000, "recorded"),
        (100_000, "option"),
        (100_000, "option"),
        (272_000, "recorded"),
        (272_000, "recorded"),
    ]
    ref, _ = _reference_truth(tmp_path / "run.jsonl")
    _, out = _context(ref, "--json", "--window", "50")
    first = json.loads(out.splitlines()[0])
    assert (first["window"], first["window_source"], first["fill"]) == (50, "option", 37 / 50)


def test_context_exit_status_is_2_for_what_is_no_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "notes.jsonl"
    junk.write_text("hello\n")
    assert main(["--context", str(junk)]) == 2
    assert main(["--context", "--json", str(junk)]) == 2
    assert "error" in json.loads(capsys.readouterr().out.splitlines()[-1])
    assert main(["--context", str(tmp_path)]) == 2
    assert main(["--context", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["--window", "5", str(junk)]) == 2
    with pytest.raises(SystemExit) as exc:
        main(["--context", "--window", "0", str(junk)])
    assert exc.value.code == 2
    ref, _ = _reference_truth(tmp_path / "run.jsonl")
    assert main(["--context", str(ref), str(ref)]) == 2
    assert main(["--context", "--check", str(ref)]) == 2
    assert run_context(ref, as_json=False, out=io.StringIO()) == 0


def test_a_reader_that_stops_early_is_no_error(tmp_path: Path) -> None:
    """`--context FILE | head`: the report stops quietly where the reader did (exit 0, no
    traceback on stderr), as a command in a pipe should."""
    path = tmp_path / "run.jsonl"
    lines = [ref_line(1, "session-meta", {"app": "t"})]
    for n in range(2, 3000):
        role = "assistant" if n % 2 else "user"
        lines.append(ref_line(n, "message", {"role": role, "content": "x" * 50}))
    path.write_text("".join(lines), "utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "transcript_view", "--context", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(200)
    proc.stdout.close()
    errors = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert b"Traceback" not in errors, errors


# -- what a viewer keeps: the columns narrowed ------------------------------------------------


def test_narrowed_columns_hold_the_same_calls_in_less_memory() -> None:
    """Each column in the narrowest array its numbers fit; every call reads the same."""
    from array import array

    from transcript_view.core.calls import NARROW, ModelCalls

    n = 1000
    calls = ModelCalls(
        lines=array("q", range(1, 2 * n, 2)),
        tokens=array("q", [-1, 120_000] * (n // 2)),
        fields=array("q", [0, 3] * (n // 2)),
        chars=array("q", range(n)),
        windows=array("q", [-1, 1_000_000] * (n // 2)),
        added=array("q", [1] * n),
        models=array("q", [-1, 0] * (n // 2)),
        big_lines=array("q", range(n)),
        big_chars=array("q", [3 << 40] + [5] * (n - 1)),  # one number past 4 bytes
        model_names=["qwen3-coder-plus"],
    )
    before = [calls.call(i) for i in range(n)]
    size = sum(getattr(calls, name).itemsize for name in NARROW)
    calls.narrow()
    assert [calls.call(i) for i in range(n)] == before
    assert calls.fields.typecode == "b" and calls.tokens.typecode == "i"
    assert calls.big_chars.typecode == "q"  # too big for 4 bytes: kept as it was
    assert sum(getattr(calls, name).itemsize for name in NARROW) == 7 * 4 + 1 + 8 < size
    calls.narrow()  # again: nothing to do
    assert [calls.call(i) for i in range(n)] == before

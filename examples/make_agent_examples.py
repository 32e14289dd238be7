#!/usr/bin/env python3
"""Write the bundled Claude Code session and Codex rollout examples.

Both are synthetic, written here from the exact strings in the formats'
specs (`tests/_sessions.py` holds the builders the tests use too): no real
person's session is committed. The Claude Code example is a project folder
as `~/.claude/projects/` holds it, with one session showing each marker form
(2.1.2+ `<persisted-output>` for a generic tool, for Bash and with a `.json`
sidecar; the older "Tool result saved to"; MCP's "Output has been saved to";
`[N characters truncated]`; `[Old tool result content cleared]`; a
`content-replacement`) and each check (a sidecar edited after the fact, one
deleted, the full output also written inline), plus a subagent with its own
spill, a compaction, a rewind and a response written as several lines, a parallel
batch of three calls with hook and Bash progress among its results, a retried API
error, a microcompaction clearing two old results, a turn duration and a session
title; and an orphan and a hook file in `tool-results/`. The Codex
example has each truncation notice (lines omitted, bytes, characters, tokens,
text items, with and without `Total output lines:` and the token warning) and a
clean output.

Both record what each model call was sent, as the agents do (`record_claude_usage`,
`record_codex_token_counts`): the sizes are made up, but grow with the
conversation as a real session's do (a fixed part for the system prompt and tool
definitions, which no file holds, plus the conversation so far), drop after the
compaction, and the compaction's `preTokens` is the call before it and its response.

Deterministic (fixed ids and timestamps); rerun only to change them:

    .venv/bin/python examples/make_agent_examples.py
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from _copilot import CopilotSession  # noqa: E402
from _gemini import GeminiSession  # noqa: E402
from _opencode import OpenCodeSession, write_storage  # noqa: E402
from _qwen import QwenSession  # noqa: E402
from _sessions import (  # noqa: E402
    CLAUDE_UNSEEN,
    ClaudeSession,
    claude_preview,
    codex_chars_truncated,
    codex_line,
    codex_lines_omitted,
    made_up_tokens,
    mcp_marker,
    numbered,
    persisted_marker,
    record_claude_usage,
    saved_marker,
    write_codex_rollout,
)

from transcript_view.core.formats.claude_markers import (  # noqa: E402
    format_file_size,
    utf16_units,
)


def grep_output() -> str:
    rows = [
        f"src/module_{i // 7:02d}.py:{i * 13 % 997}: def handler_{i}(event):" for i in range(400)
    ]
    return "\n".join(rows) + "\n"


def build_log() -> str:
    rows = [f"   Compiling crate-{i:03d} v0.{i % 9}.{i % 4}" for i in range(900)]
    rows.append("error[E0308]: mismatched types --> src/main.rs:42:17")
    return "\n\n" + "\n".join(rows) + "\n"


#: The same for Codex: its instructions and tool definitions.
CODEX_UNSEEN = 9_216
#: gpt-5-codex's window, as Codex records it in `token_count`.
CODEX_WINDOW = 272_000


def record_codex_token_counts(path: Path, unseen: int = CODEX_UNSEEN) -> None:
    """Write a `token_count` event after each model call of a rollout, as Codex does
    (CODEX.md): `last_token_usage.input_tokens` the context the call was sent (its
    cached part in `cached_input_tokens`), `total_token_usage` the session's sum so far,
    and `model_context_window`. A call is a run of the model's items; its event comes
    after the last of them, before the input that answers it."""
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    out: list[dict[str, object]] = []
    conversation = previous = 0
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0,
             "reasoning_output_tokens": 0, "total_tokens": 0}  # fmt: skip
    model_items = ("function_call", "reasoning", "custom_tool_call")

    def by_model(row: dict[str, object]) -> bool:
        payload = row.get("payload")
        if row.get("type") != "response_item" or not isinstance(payload, dict):
            return False
        kind = payload.get("type")
        return kind in model_items or (kind == "message" and payload.get("role") == "assistant")

    size = 0
    for i, row in enumerate(rows):
        if by_model(row) and (not out or not by_model(out[-1])):
            size = unseen + conversation  # a call begins: what it was sent
        out.append(row)
        if row.get("type") == "response_item":
            conversation += made_up_tokens(row["payload"])
        if by_model(row) and (i + 1 == len(rows) or not by_model(rows[i + 1])):
            answer = 12 + size % 97
            last = {"input_tokens": size, "cached_input_tokens": previous,
                    "output_tokens": answer, "reasoning_output_tokens": answer // 3,
                    "total_tokens": size + answer}  # fmt: skip
            for key, value in last.items():
                total[key] += value
            info = {"total_token_usage": dict(total), "last_token_usage": last,
                    "model_context_window": CODEX_WINDOW}  # fmt: skip
            payload = {"type": "token_count", "info": info, "rate_limits": None}
            out.append({"timestamp": row["timestamp"], "type": "event_msg", "payload": payload})
            previous = size
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out), "utf-8")


def _progress(s: ClaudeSession, kind: str, tool_id: str, n: int) -> None:
    """A `progress` line as 2.1.x writes it (outside the uuid chain)."""
    s.raw(
        {
            "type": "progress",
            "data": {"type": kind, "hookEvent": "PreToolUse", "hookName": f"check {n}"},
            "toolUseID": tool_id,
            "parentToolUseID": tool_id,
            "uuid": f"p-{tool_id}-{n}",
            "timestamp": "2026-01-01T00:09:00.000Z",
            "sessionId": s.lines[0]["sessionId"],
        }
    )


def claude(root: Path) -> Path:
    project = root / "claude" / "projects" / "-Users-someone-proj"
    s = ClaudeSession(project)
    s.user("Find every event handler and build the project.")
    s.assistant(
        {"type": "thinking", "thinking": "Grep first, then cargo build.", "signature": "x"},
        msg_id="msg_01A",
    )
    s.assistant({"type": "text", "text": "Searching for handlers."}, msg_id="msg_01A")
    s.spill("toolu_01GREP", grep_output(), name="Grep")
    s.bash_spill("toolu_02BASH", "bq8xk2m1p", build_log())
    # A sidecar edited after the session: its preview no longer matches.
    s.spill("toolu_03READ", numbered(300), name="Read")
    (s.tool_results / "toolu_03READ.txt").write_text("rewritten later\n" + numbered(300))
    # One deleted (cleaned up, or never copied with the transcript).
    s.spill("toolu_04GLOB", numbered(250, 40), name="Glob", write_file=False)
    # The full output also written inline in toolUseResult (as up to 2.1.37).
    s.spill("toolu_05LOG", numbered(500), name="Bash", inline=True)
    # A subagent, whose results go to the same tool-results/.
    s.tool_use("toolu_06TASK", "Task", {"description": "scan tests", "prompt": "List tests"})
    s.tool_result(
        "toolu_06TASK",
        [{"type": "text", "text": "Found 212 tests in 31 files."}],
        {"agentId": "a1b2c3", "status": "completed", "totalDurationMs": 5120},
    )
    sub = s.subagent("a1b2c3")
    sub.user("List tests")
    sub.spill("toolu_S1GREP", numbered(260), name="Grep")
    # Compaction: the boundary, then the summary the model continued from.
    boundary = s.raw(
        {
            **s._base("system"),
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            # `preTokens`: the call before and its response (`record_claude_usage`).
            "compactMetadata": {"trigger": "manual", "preTokens": 0},
            "logicalParentUuid": s.lines[-1]["uuid"],
        }
    )
    boundary["parentUuid"] = None
    summary = s.user("This session is being continued from a previous conversation. Summary: ...")
    summary["isCompactSummary"] = True
    prompt = s.user("Now fix the mismatched types.")
    s.assistant({"type": "text", "text": "Looking at src/main.rs."}, msg_id="msg_09")
    # A rewind: the user went back to the prompt and asked again.
    retry = s.user("Actually, explain the error first.")
    retry["parentUuid"] = prompt["uuid"]
    s.tool_use("toolu_07MINI", "Read", {"file_path": "src/main.rs"}, msg_id="msg_10")
    s.tool_result("toolu_07MINI", 'fn main() { let x: u32 = "a"; }')
    # A result that was an array of text blocks: its sidecar is the pretty-printed JSON.
    blocks = [{"type": "text", "text": grep_output()}, {"type": "text", "text": "(2 files)"}]
    s.spill(
        "toolu_08JSON",
        json.dumps(blocks, indent=2),
        name="mcp__search__grep",
        sidecar="toolu_08JSON.json",
    )
    # The older forms: saved (2.0.60-2.1.1) and MCP over the token limit; both name a file.
    (s.tool_results / "toolu_09OLD.txt").write_text(numbered(150))
    s.tool_use("toolu_09OLD", "Read", {"file_path": "big.log"})
    s.tool_result("toolu_09OLD", saved_marker(s.foreign_path("toolu_09OLD.txt")))
    (s.tool_results / "toolu_10MCP.json").write_text(json.dumps({"rows": list(range(4000))}))
    s.tool_use("toolu_10MCP", "mcp__db__query", {"sql": "select *"})
    s.tool_result("toolu_10MCP", mcp_marker(23891, s.foreign_path("toolu_10MCP.json")))
    # Cut with nothing stored: before 2.1.2 Bash cut the middle; microcompaction clears.
    s.tool_use("toolu_11CUT", "Bash", {"command": "make test"})
    s.tool_result("toolu_11CUT", "running 212 tests\n... [48,112 characters truncated] ...\nok")
    s.tool_use("toolu_12CLR", "Read", {"file_path": "notes.md"})
    s.tool_result("toolu_12CLR", "[Old tool result content cleared]")
    # The transcript holds a result whole, but a per-message budget replaced it in the
    # request: the content-replacement line is what the model saw.
    whole = numbered(120)
    (s.tool_results / "toolu_13BIG.txt").write_text(whole)
    s.tool_use("toolu_13BIG", "Read", {"file_path": "data.csv"})
    s.tool_result("toolu_13BIG", whole)
    preview, more = claude_preview(whole)
    replacement = persisted_marker(
        format_file_size(utf16_units(whole)), s.foreign_path("toolu_13BIG.txt"), preview, more
    )
    s.raw(
        {
            "type": "content-replacement",
            "sessionId": s.lines[0]["sessionId"],
            "replacements": [
                {"kind": "tool-result", "toolUseId": "toolu_13BIG", "replacement": replacement}
            ],
        }
    )
    s.raw({"type": "file-history-snapshot", "messageId": "msg_10", "snapshot": {"files": 3}})
    s.raw({"type": "custom-title", "customTitle": "handlers and build", "sessionId": "s"})
    # A parallel batch as 2.1.x writes it: one response's three calls on three lines, each
    # result parented on its own call, hook and Bash progress among them (never sent).
    s.user("Check the three config files.")
    calls = [
        s.tool_use(f"toolu_2{i}CFG", "Read", {"file_path": f"conf/{n}.toml"}, msg_id="msg_20")
        for i, n in enumerate(("app", "db", "log"))
    ]
    for call in calls:  # one response: one request
        call["requestId"] = "req_msg_20"
    for i, call in enumerate(calls):
        for hook in range(3):
            _progress(s, "hook_progress", f"toolu_2{i}CFG", hook)
        if i == 1:
            _progress(s, "bash_progress", f"toolu_2{i}CFG", 9)
        result = s.tool_result(f"toolu_2{i}CFG", f"[{i}]\nlevel = {i}\n")
        result["parentUuid"] = result["sourceToolAssistantUUID"] = call["uuid"]
    # A failed API call, retried.
    s.raw(
        {
            **s._base("system"),
            "subtype": "api_error",
            "level": "error",
            "error": {"status": 529, "error": {"type": "error", "error": {
                "type": "overloaded_error", "message": "Overloaded"}}},
            "retryInMs": 1150.5,
            "retryAttempt": 1,
            "maxRetries": 10,
        }
    )
    s.assistant({"type": "text", "text": "All three set a level."}, msg_id="msg_21")
    # Microcompaction (2.1.9+): two old results leave the model's view; their full outputs
    # are the tool-results/ files named after their ids.
    (s.tool_results / "toolu_20CFG.txt").write_text("[0]\nlevel = 0\n")
    s.raw(
        {
            **s._base("system"),
            "subtype": "microcompact_boundary",
            "content": "Context microcompacted",
            "microcompactMetadata": {
                "trigger": "auto",
                "preTokens": 0,  # both set by `record_claude_usage`
                "tokensSaved": 0,
                "compactedToolIds": ["toolu_07MINI", "toolu_20CFG"],
                "clearedAttachmentUUIDs": [],
            },
        }
    )
    s.raw({**s._base("system"), "subtype": "turn_duration", "durationMs": 41250})
    s.raw({"type": "summary", "summary": "Event Handlers And Build Fix", "leafUuid": "x"})
    record_claude_usage(s.lines)
    record_claude_usage(sub.lines, unseen=CLAUDE_UNSEEN // 3)  # a subagent's own prompt
    path = s.write()
    sub.write()
    results = s.tool_results
    (results / "hook-9f3e.txt").write_text("pre-commit hook output\n")
    (results / "toolu_07MINI.txt").write_text('fn main() { let x: u32 = "a"; }')
    (results / "toolu_99LOST.txt").write_text(numbered(80))  # nothing names it: an orphan
    return path


def codex(root: Path) -> Path:
    day = root / "codex" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    path = day / "rollout-2026-01-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl"
    write_codex_rollout(
        path,
        [
            codex_lines_omitted(1200),
            "all 212 tests passed",
            codex_chars_truncated(48211),
            "Warning: truncated output (original token count: 40000)\nTotal output lines: 5000\n\n"
            "head of a long listing\u20262350 tokens truncated\u2026tail of it",
            "first 10 KiB of a log\n[... output truncated to fit 10240 bytes ...]\n\n",
            "first item\n[omitted 3 text items ...]",
        ],
        json_string=True,
    )
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(
            json.dumps(
                codex_line(
                    "response_item",
                    {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": "The build failed."}],
                    },
                    58,
                )
            )
            + "\n"
        )
        fh.write(
            json.dumps(codex_line("event_msg", {"type": "token_count", "info": None}, 59)) + "\n"
        )
    record_codex_token_counts(path)
    return path


#: The Qwen Code example's context window, as its assistant records give it.
QWEN_WINDOW = 1_000_000
#: What a Qwen Code call is sent besides the conversation (system prompt, tools).
QWEN_UNSEEN = 11_500


def qwen(root: Path) -> Path:
    """A Qwen Code session under `qwen/` as `~/.qwen` holds it, with each marker form and each
    check: a stub verified by its sha256, one whose file is gone (expired after 24 hours),
    one from before the digest line (0.21: matched by size and preview), one whose file was
    edited (digest mismatch), one whose file could not be written, a batch budget's cut
    (head and tail matched), a compression, a rewind and telemetry records."""
    s = QwenSession(root / "qwen", cwd="/Users/someone/proj", home="/Users/someone/.qwen")
    tokens = QWEN_UNSEEN

    def turn(text: str | None, calls: list[tuple[str, str, dict[str, object]]] = (),  # type: ignore[assignment]
             **kw: object) -> None:  # fmt: skip
        nonlocal tokens
        s.assistant(text, calls, tokens=tokens, **kw)  # type: ignore[arg-type]
        tokens += 40 + sum(len(json.dumps(a)) // 4 for _, _, a in calls)

    def result(record: dict[str, object]) -> None:
        nonlocal tokens
        tokens += len(json.dumps(record["message"])) // 4

    s.user("The test suite is slow and something fails; find out what.")
    tokens += 15
    turn("Let me run the tests first.", [("call_01test", "run_shell_command",
         {"command": "pytest -q"})], thought="Start with the whole suite.")  # fmt: skip
    tests = "".join(f"PASS tests/test_{i:04d}.py::test_case ({i % 7}.{i % 10}s)\n"
                    for i in range(1400)) + "FAIL tests/test_1400.py::test_login\n"  # fmt: skip
    result(s.spill("call_01test", "run_shell_command", tests))
    turn("One failure, in test_login. Its log:", [("call_02log", "run_shell_command",
         {"command": "cat build/test.log"})])  # fmt: skip
    result(s.spill("call_02log", "run_shell_command", build_log(), file=False))
    turn(None, [("call_03grep", "grep_search", {"pattern": "def handler_"})])
    result(s.spill("call_03grep", "grep_search", grep_output(), digest=False))
    turn(None, [("call_04cfg", "read_file", {"absolute_path": "/Users/someone/proj/app.cfg"})])
    config = "".join(f"option_{i} = {i * 3}\n" for i in range(2600))
    result(s.spill("call_04cfg", "read_file", config,
                   stored=config.replace("option_7 = 21", "option_7 = 22")))  # fmt: skip
    turn(None, [("call_05dump", "run_shell_command", {"command": "cat core.dump | xxd"})])
    dump = "".join(f"{i * 16:08x}: " + "00 " * 16 + "\n" for i in range(800))
    result(s.not_persisted("call_05dump", "run_shell_command", dump,
                           "(file too large to persist)"))  # fmt: skip
    both = [("call_06a", "list_directory", {"path": "src"}),
            ("call_06b", "run_shell_command", {"command": "git log"})]  # fmt: skip
    turn("Two things at once:", both)
    listing = "".join(f"src/module_{i:03d}.py\n" for i in range(600))
    result(s.budget_cut("call_06a", "list_directory", listing, 3000))
    result(s.tool_result("call_06b", "run_shell_command", "a1b2c3 Fix login timeout\n"))
    s.system("ui_telemetry", {"uiEvent": {"event.name": "api_response", "duration_ms": 2210}})
    s.compression(
        "The user asked why the suite is slow and what fails. test_login fails (see "
        "tests/test_1400.py); the log is gone; app.cfg sets option_7.", tokens, 4_200)
    tokens = QWEN_UNSEEN + 4_200
    before = s.user("Fix test_login.")
    tokens += 5
    turn("I'll change the timeout.", [("call_07edit", "replace",
         {"file_path": "src/login.py", "old": "timeout=1", "new": "timeout=5"})])  # fmt: skip
    result(s.tool_result("call_07edit", "replace", "Edited src/login.py (1 replacement)."))
    s.rewind(str(before["parentUuid"]))
    s.user("Fix test_login without touching the timeout.")
    turn("Then the retry count is the thing to change.")
    return s.write()


def gemini(root: Path) -> Path:
    """A Gemini CLI session under `gemini/` as `~/.gemini` holds it (`tmp/<project>/chats/`),
    each message written again as it changes, as Gemini CLI writes it: a shell output cut
    to a head and a tail whose file matches, one whose file was deleted, one whose file
    lost its end, a result masked from the history later (a `$set` of every message), a
    rewind, and the UI's own messages."""
    s = GeminiSession(root / "gemini" / "tmp" / "proj", home="/Users/someone/.gemini/tmp/proj")
    s.user("The test suite is slow and something fails; find out what.")
    run = [("run_shell_command-1732", "run_shell_command", {"command": "pytest -q"})]
    first = s.gemini("Running the suite.", run, tokens=9_850, thought="Run everything.")
    tests = "".join(f"PASS tests/test_{i:04d}.py::test_case ({i % 7}.{i % 10}s)\n"
                    for i in range(1400)) + "FAIL tests/test_1400.py::test_login\n"  # fmt: skip
    s.spill(first, "run_shell_command-1732", tests)
    second = s.gemini("test_login fails. Its log:", [("run_shell_command-1733",
                      "run_shell_command", {"command": "cat build/test.log"})],
                      tokens=11_020)  # fmt: skip
    s.spill(second, "run_shell_command-1733", build_log() * 3, file=False)
    third = s.gemini("And the config:", [("read_file-1734", "read_file",
                     {"absolute_path": "/Users/someone/proj/app.cfg"})], tokens=11_600)  # fmt: skip
    s.result(third, "read_file-1734", "".join(f"option_{i} = {i * 3}\n" for i in range(400)))
    fourth = s.gemini("The grep:", [("run_shell_command-1735", "run_shell_command",
                      {"command": "grep -rn handler src"})], tokens=14_300)  # fmt: skip
    out = grep_output() * 3
    s.spill(fourth, "run_shell_command-1735", out, stored=out[:-400])
    s.lines.append({"id": "msg-info-1", "timestamp": "2026-11-20T10:09:00.000Z", "type": "info",
                    "content": "Older tool outputs were masked to save context."})  # fmt: skip
    s.mask(third, "read_file-1734")
    s.user("Fix test_login.")
    wrong = s.gemini("Raising the timeout.", tokens=6_400)
    s.rewind(str(wrong["id"]))
    s.gemini("Then the retry count is the thing to change.", tokens=6_420)
    return s.write()


def opencode(root: Path) -> Path:
    """OpenCode's data folder under `opencode/` as `~/.local/share/opencode` holds it: a real
    SQLite database with OpenCode's schema, its `tool-output/` files, and one session of the
    older storage tree. The main session has each form and check: a cut by lines (head) and
    one by bytes (tail) whose files match, one whose file is gone (more than 7 days ago:
    expired), one whose file was edited afterwards, the shell's own cut, a result OpenCode
    cleared from the history later, reasoning, and a compaction; a second session is a
    subagent's (a task)."""
    data = root / "opencode"
    s = OpenCodeSession(data, directory="/Users/someone/proj", title="Why is the suite slow?",
                        start_ms=1_795_510_800_000, model="claude-sonnet-4-5")  # fmt: skip
    s.user("The test suite is slow and something fails; find out what.")
    s.message("assistant")
    s.step(input_tokens=9_850, cache_read=2_000)
    s.part({"type": "reasoning", "text": "Run the whole suite first.", "time": {"start": 1}})
    s.text("Running the suite.")
    tests = "\n".join(f"PASS tests/test_{i:04d}.py::test_case ({i % 7}.{i % 10}s)"
                      for i in range(1400)) + "\nFAIL tests/test_1400.py::test_login"  # fmt: skip
    s.tool("bash", {"command": "pytest -q"}, tests, max_bytes=200_000, max_lines=1000)
    s.finish()
    s.step(input_tokens=12_400, cache_read=2_000)
    s.text("One failure, in test_login. Its log, from the end:")
    s.tool("bash", {"command": "cat build/test.log"}, build_log() * 4, direction="tail",
           task=True)  # fmt: skip
    s.finish()
    s.step(input_tokens=14_900, cache_read=2_000)
    s.tool("grep", {"pattern": "def handler_"}, grep_output() * 20, save=False)
    s.finish()
    s.step(input_tokens=16_100, cache_read=2_000)
    config = "".join(f"option_{i} = {i * 3}\n" for i in range(3000))
    name = s.tool("read", {"filePath": "/Users/someone/proj/app.cfg"}, config, compacted=True)
    s.files[name] = config.replace("option_0 = 0", "option_0 = 9")  # edited afterwards
    s.finish()
    s.step(input_tokens=18_300, cache_read=2_000)
    shell = "".join(f"{i * 16:08x}: " + "00 " * 16 + "\n" for i in range(6000))
    s.files["tool_1f0a3c2b9000QpLm3sT8uVw2xY"] = shell
    tail = "\n".join(shell.split("\n")[-40:])
    s.raw_tool("bash", "...output truncated...\n\nFull output saved to: "
               f"/Users/someone/.local/share/opencode/tool-output/tool_1f0a3c2b9000QpLm3sT8uVw2xY"
               f"\n\n{tail}")  # fmt: skip
    s.text("test_login times out after 1 s; the retry count is 0.")
    s.finish()
    s.compaction("The user asked why the suite is slow and what fails. test_login times out "
                 "(tests/test_1400.py); app.cfg sets option_0.")  # fmt: skip
    s.user("Fix test_login without touching the timeout.")
    s.message("assistant")
    s.step(input_tokens=6_400, cache_read=2_000)
    s.text("Then the retry count is the thing to change.")
    s.finish()
    path = s.write()

    task = OpenCodeSession(data, directory="/Users/someone/proj", title="Find slow tests",
                           session_id="ses_5a0e4b1c2ffeTaskSub4gent01",
                           start_ms=1_795_511_400_000)  # fmt: skip
    task.user("List the ten slowest tests.")
    task.message("assistant")
    task.step(input_tokens=3_100)
    task.text("tests/test_0006.py is the slowest (6.6 s).")
    task.finish()
    task.write()
    conn = __import__("sqlite3").connect(s.db)
    conn.execute("UPDATE session SET parent_id = ? WHERE id = ?", (s.session_id, task.session_id))
    conn.commit()
    conn.close()

    old = OpenCodeSession(data, directory="/Users/someone/proj", title="Set up the project",
                          session_id="ses_7c3f2a9d1ffeOldStorageTree1",
                          start_ms=1_771_000_000_000)  # fmt: skip
    old.user("Install the dependencies.")
    old.message("assistant")
    old.step(input_tokens=2_200)
    old.text("Done: pip install -e .")
    old.finish()
    write_storage(old)
    return path


def copilot(root: Path) -> Path:
    """A GitHub Copilot CLI session under `copilot/` as `~/.copilot` holds it
    (`session-state/<id>/events.jsonl`): two outputs over the threshold (their files were in
    the OS temp folder, emptied when the session ended), a usage record a call, a
    compaction, a truncation, and the damage a crash leaves: an event cut short with the next
    run into it, and NUL bytes at the end."""
    s = CopilotSession(root / "copilot")
    s.started()
    s.event("system.message", {"content": "You are the GitHub Copilot CLI, a terminal assistant."})
    s.user("The test suite is slow and something fails; find out what.")
    s.call(9_850)
    s.assistant("Running the suite.", [("call_01test", "bash", {"command": "pytest -q"})])
    tests = "".join(f"PASS tests/test_{i:04d}.py::test_case ({i % 7}.{i % 10}s)\n"
                    for i in range(1400)) + "FAIL tests/test_1400.py::test_login\n"  # fmt: skip
    first = "1796412667518-copilot-tool-output-3704-8d7d30e5-9111-4e99-8d0c-4a9da33db938.txt"
    s.spilled("call_01test", tests, first)
    s.call(11_020)
    s.assistant("test_login fails. Its log:", [("call_02log", "view", {"path": "build/test.log"})])
    s.result("call_02log", build_log()[:4000])
    s.call(12_400)
    s.assistant("And the handlers:", [("call_03grep", "grep", {"pattern": "def handler_"})])
    s.spilled("call_03grep", grep_output() * 3,
              "1796412728564-copilot-tool-output-9e11e1ae7c9e4d579d11eb971ebdc35b.txt")  # fmt: skip
    s.compaction(24_137, 10_519, "The user asked why the suite is slow and what fails. "
                 "test_login times out (tests/test_1400.py).")  # fmt: skip
    s.user("Fix test_login without touching the timeout.")
    s.call(10_600)
    s.assistant("Then the retry count is the thing to change.")
    s.truncation(21_300, 10_483)
    s.call(10_700)
    s.assistant("Done: retries=3 in src/login.py.")
    s.shutdown()
    lines = s.text().split(b"\n")
    cut = len(lines) - 5  # an event cut short, the next run into it (a crash mid-write)
    lines[cut] = lines[cut][:64] + lines[cut + 1]
    del lines[cut + 1]
    s.path.parent.mkdir(parents=True, exist_ok=True)
    s.path.write_bytes(b"\n".join(lines) + b"\x00" * 256)
    return s.path


def main() -> None:
    names = sys.argv[1:] or ["claude", "codex", "qwen", "gemini", "opencode", "copilot"]
    makers = {
        "claude": claude,
        "codex": codex,
        "qwen": qwen,
        "gemini": gemini,
        "opencode": opencode,
        "copilot": copilot,
    }
    for name in names:
        shutil.rmtree(HERE / name, ignore_errors=True)
        print(makers[name](HERE))


if __name__ == "__main__":
    main()

"""Sessions of the shapes real Claude Code writes, built from the spec (nobody's session).

`parallel_session`: one response calling three tools, written as three assistant
lines sharing a message id, each result parented on the line holding its own
call, `progress` lines among them (CLAUDE_CODE.md, "Parallel tool calls").

`filling_session`: a session whose context fills its window until Claude Code
compacts it, its `message.usage` on every response (CLAUDE_CODE.md, "Token usage").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _sessions import ClaudeSession, codex_line, numbered, record_claude_usage


def _progress(s: ClaudeSession, kind: str, tool_id: str, n: int) -> None:
    """A `progress` line as 2.1.x writes it (no place in the uuid chain)."""
    s.raw(
        {
            "type": "progress",
            "data": {"type": kind, "hookEvent": "PreToolUse", "hookName": f"hook {n}"},
            "toolUseID": tool_id,
            "parentToolUseID": tool_id,
            "uuid": f"p-{tool_id}-{n}",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "sessionId": "s",
        }
    )


def parallel_session(root: Path) -> Path:
    """A prompt, one response calling three tools (three lines sharing a message id),
    12 hook and 2 Bash progress lines among the results, a turn duration and a title."""
    s = ClaudeSession(root)
    s.user("Look at the three config files.")
    calls = [s.tool_use(f"toolu_P{i}", "Read", {"file_path": f"c{i}.toml"}, msg_id="msg_P")
             for i in range(3)]
    for i, call in enumerate(calls):
        for n in range(4):
            _progress(s, "hook_progress", f"toolu_P{i}", n)
        if i < 2:
            _progress(s, "bash_progress", f"toolu_P{i}", 9)
        result = s.tool_result(f"toolu_P{i}", f"[section {i}]\nkey = {i}\n")
        result["parentUuid"] = call["uuid"]
        result["sourceToolAssistantUUID"] = call["uuid"]
    s.assistant({"type": "text", "text": "All three set key."}, msg_id="msg_Q")
    s.raw({**s._base("system"), "subtype": "turn_duration", "durationMs": 5120})
    s.raw({"type": "summary", "summary": "Friendly Robot Icon Identification", "leafUuid": "x"})
    return s.write()


def microcompacted_session(root: Path, *, record: bool = True) -> Path:
    """Three Reads whose results a microcompaction (2.1.9+) later cleared, their full
    outputs in `tool-results/<tool id>.txt` (one file gone, one of another size); the
    agent reads one back afterwards. Without `record`, the boundary line is left out
    (before 2.1.9 nothing recorded it: only the files remain)."""
    s = ClaudeSession(root)
    s.user("Summarise the three logs.")
    outputs = {f"toolu_M{i}": "".join(f"log {i} row {r:03d}\n" for r in range(40 + i))
               for i in range(3)}
    for tid, text in outputs.items():
        s.tool_use(tid, "Read", {"file_path": f"/var/log/{tid}.log"})
        s.tool_result(tid, text)
    s.tool_results.mkdir(parents=True, exist_ok=True)
    (s.tool_results / "toolu_M0.txt").write_text(outputs["toolu_M0"])
    (s.tool_results / "toolu_M1.txt").write_text(outputs["toolu_M1"] + "one more row\n")
    if record:
        s.raw({**s._base("system"), "subtype": "microcompact_boundary",
               "content": "Context microcompacted", "level": "info",
               "microcompactMetadata": {"trigger": "auto", "preTokens": 71221,
                                        "tokensSaved": 34078,
                                        "compactedToolIds": list(outputs),
                                        "clearedAttachmentUUIDs": []}})
    s.assistant({"type": "text", "text": "Reading the first log again."})
    s.tool_use("toolu_R", "Read", {"file_path": "/x/tool-results/toolu_M0.txt"})
    s.tool_result("toolu_R", outputs["toolu_M0"])
    return s.write()


def usage(line: dict[str, object], tokens: int) -> dict[str, object]:
    """Put a `message.usage` recording a context of `tokens` on an assistant line, split
    over its three parts as Claude Code writes them (`output_tokens` is never read)."""
    message = line["message"]
    assert isinstance(message, dict)
    creation = min(200, max(tokens - 3, 0))
    message["usage"] = {
        "input_tokens": 3,
        "cache_read_input_tokens": tokens - 3 - creation,
        "cache_creation_input_tokens": creation,
        "output_tokens": 41,
    }
    return line


def rewound_session(root: Path) -> tuple[ClaudeSession, dict[str, dict[str, Any]]]:
    """A prompt, its answer; a second prompt answered, then rewound and asked again
    otherwise (`p3`'s parent is the first answer): the session and its lines by name."""
    s = ClaudeSession(root)
    at: dict[str, dict[str, Any]] = {}
    at["p1"] = s.user("fix the build")
    at["a1"] = s.assistant({"type": "text", "text": "Looking."}, msg_id="m1", request="r1")
    usage(at["a1"], 20_000)
    at["p2"] = s.user("now the tests")
    at["x"] = s.assistant({"type": "text", "text": "Abandoned answer."}, msg_id="m2", request="r2")
    usage(at["x"], 20_100)
    at["p3"] = s.user("no: the docs")
    at["p3"]["parentUuid"] = at["a1"]["uuid"]  # the rewind: back to after the first answer
    at["y"] = s.assistant({"type": "text", "text": "The docs, then."}, msg_id="m3", request="r3")
    usage(at["y"], 20_050)
    return s, at


#: `context_session`'s summary: long enough to fill a screen if it were not folded.
CONTEXT_SUMMARY = "This session is being continued from a previous conversation. " + " ".join(
    f"Point {i}: the build failed in step {i} and was looked at." for i in range(1, 40)
)


def context_session(root: Path) -> Path:
    """A session whose every call records its size (issue 27): a result whose cost the usage
    gives, a spilled Grep result, a prompt, an auto compaction and its summary.

    Lines: 1 prompt; 2–3 one response (call 1, 12,000 tokens) calling Bash; 4 progress;
    5 its result; 6 a Grep call (call 2, 12,180); 7 its spilled result; 8 a reply
    (call 3, 13,000); 9 a prompt; 10 a reply (call 4, 13,100); 11 the compaction
    (`preTokens` 13,150); 12 its summary; 13 a reply (call 5, 2,400).
    """
    s = ClaudeSession(root)
    s.user("Build the site and tell me what failed.")
    usage(s.assistant({"type": "text", "text": "Running the build."}, msg_id="m1", request="r1"),
          12_000)  # fmt: skip
    call = s.tool_use("toolu_B", "Bash", {"command": "make"}, msg_id="m1")
    usage(call, 12_000)["requestId"] = "r1"
    s.progress("toolu_B")
    s.tool_result("toolu_B", "make: *** [site] Error 2\n" * 24)
    s.spill("toolu_G", numbered(400))
    usage(s.lines[-2], 12_180)
    usage(s.assistant({"type": "text", "text": "The grep found the failing step."}, msg_id="m3",
                      request="r3"), 13_000)  # fmt: skip
    s.user("Thanks. Now sum it up.")
    usage(s.assistant({"type": "text", "text": "Summed up."}, msg_id="m4", request="r4"), 13_100)
    boundary = s._base("system")
    boundary.update(
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 13_150},
        logicalParentUuid=s.lines[-1]["uuid"],
        parentUuid=None,
    )
    s.raw(boundary)
    s.user(CONTEXT_SUMMARY)["isCompactSummary"] = True
    usage(s.assistant({"type": "text", "text": "Continuing."}, msg_id="m5", request="r5"), 2_400)
    return s.write()


def _codex_token_count(size: int) -> dict[str, Any]:
    usage = {"input_tokens": size, "cached_input_tokens": 0, "output_tokens": 7}
    return {"type": "token_count",
            "info": {"last_token_usage": usage, "model_context_window": 272_000}}  # fmt: skip


def codex_compacted_rollout(path: Path) -> Path:
    """A Codex rollout whose calls record their sizes, with both kinds of compaction:
    1 meta, 2 context; 3 prompt; 4 call 1 (20,000); 6 its output; 7 call 2 (20,450);
    9 `compacted`; 10 call 3 (3,000); 12 prompt; 13 encrypted `compaction`; 14 prompt;
    15 call 4 (1,000)."""
    lines: list[dict[str, Any]] = []

    def add(kind: str, payload: dict[str, Any]) -> None:
        lines.append(codex_line(kind, payload, len(lines)))

    said = [{"type": "output_text", "text": "done"}]
    asked = [{"type": "input_text", "text": "build it"}]
    add("session_meta", {"id": "0199", "cwd": "/p", "cli_version": "0.60.0"})
    add("turn_context", {"cwd": "/p", "model": "gpt-5-codex"})
    add("response_item", {"type": "message", "role": "user", "content": asked})
    add("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                          "arguments": '{"command":["make"]}'})  # fmt: skip
    add("event_msg", _codex_token_count(20_000))
    add("response_item", {"type": "function_call_output", "call_id": "c1",
                          "output": "z" * 1_600})  # fmt: skip
    add("response_item", {"type": "message", "role": "assistant", "content": said})
    add("event_msg", _codex_token_count(20_450))
    add("compacted", {"message": "SUMMARY: built it", "replacement_history": [
        {"type": "message", "role": "user", "content": asked}]})  # fmt: skip
    add("response_item", {"type": "message", "role": "assistant", "content": said})
    add("event_msg", _codex_token_count(3_000))
    add("response_item", {"type": "message", "role": "user", "content": asked})
    add("response_item", {"type": "compaction", "encrypted_content": "gAAAA..."})
    add("response_item", {"type": "message", "role": "user", "content": asked})
    add("response_item", {"type": "message", "role": "assistant", "content": said})
    add("event_msg", _codex_token_count(1_000))
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return path


def filling_session(root: Path, *, before: int = 24, after: int = 8) -> Path:
    """Reads of big files until the context nears its window (every fourth result spilled,
    its preview all the model saw), an auto compaction, then `after` small reads; every
    response records its usage (`record_claude_usage`), so every size is recorded."""
    s = ClaudeSession(root)
    s.user("Read every module and tell me how the parts fit together.")
    for i in range(before):
        tid = f"toolu_{i:02d}READ"
        if i % 4 == 3:
            s.spill(tid, numbered(900), name="Read")
        else:
            s.tool_use(tid, "Read", {"file_path": f"src/module_{i:02d}.py"})
            s.tool_result(tid, numbered(470))
    boundary = s.raw({**s._base("system"), "subtype": "compact_boundary",
                      "content": "Conversation compacted",
                      "compactMetadata": {"trigger": "auto", "preTokens": 0},
                      "logicalParentUuid": s.lines[-1]["uuid"]})  # fmt: skip
    boundary["parentUuid"] = None
    summary = s.user("This session is being continued from a previous conversation. "
                     "Summary: the modules form three layers ...")  # fmt: skip
    summary["isCompactSummary"] = True
    s.user("Now draw the layers.")
    for i in range(after):
        tid = f"toolu_{i:02d}LAYER"
        s.tool_use(tid, "Read", {"file_path": f"docs/layer_{i}.md"})
        s.tool_result(tid, numbered(40 + 20 * i))
    s.assistant({"type": "text", "text": "Three layers: ..."}, msg_id="msg_end")
    record_claude_usage(s.lines)
    return s.write()

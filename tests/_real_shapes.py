"""Sessions of the shapes real Claude Code writes, built from the spec (nobody's session).

`parallel_session`: one response calling three tools, written as three assistant
lines sharing a message id, each result parented on the line holding its own
call, `progress` lines among them (CLAUDE_CODE.md, "Parallel tool calls").

`filling_session`: a session whose context fills its window until Claude Code
compacts it, its `message.usage` on every response (CLAUDE_CODE.md, "Token usage").
"""

from __future__ import annotations

from pathlib import Path

from _sessions import ClaudeSession, numbered, record_claude_usage


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

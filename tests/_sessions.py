"""Synthetic Claude Code sessions and Codex rollouts, built from the spec's exact strings.

Nothing here comes from a real session: the line shapes and marker texts are
the ones `../shared/spec/CLAUDE_CODE.md` and `CODEX.md` give (the marker
texts byte for byte), and the content is made up. Ids and timestamps are
fixed so snapshots are stable.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transcript_view.core.formats.claude_markers import format_file_size, utf16_units

SESSION_ID = "5f0c2a9e-1111-4222-8333-444455556666"
#: Where the session "ran": a path of another machine, as real markers carry.
FOREIGN_ROOT = "/Users/someone/.claude/projects/-Users-someone-proj"


def claude_preview(content: str) -> tuple[str, bool]:
    """Claude Code's `generatePreview` (2000 UTF-16 units, cut back to a newline past 1000)."""
    if utf16_units(content) <= 2000:
        return content, False
    units = 0
    cut = len(content)
    for i, ch in enumerate(content):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > 2000:
            cut = i
            break
    head = content[:cut]
    nl = head.rfind("\n")
    if nl > 1000:
        head = head[:nl]
    return head, True


def persisted_marker(size_text: str, path: str, preview: str, has_more: bool) -> str:
    """The 2.1.2+ marker, exactly as CLAUDE_CODE.md gives it."""
    tail = "\n...\n" if has_more else "\n"
    return (
        "<persisted-output>\n"
        f"Output too large ({size_text}). Full output saved to: {path}\n"
        "\n"
        "Preview (first 2KB):\n"
        f"{preview}{tail}</persisted-output>"
    )


def saved_marker(path: str) -> str:
    """The older (about 2.0.60–2.1.1) form."""
    return f"<persisted-output>Tool result saved to: {path}\n\nUse Read to view</persisted-output>"


def mcp_marker(chars: int, path: str) -> str:
    """The MCP form, with the usage hints that follow it."""
    return (
        f"Error: result ({chars:,} characters) exceeds maximum allowed tokens. "
        f"Output has been saved to {path}\n"
        "Format: JSON. Use offset and limit parameters to read specific portions of the file."
    )


def numbered(rows: int, width: int = 60) -> str:
    """Recognisable output: numbered rows, so a test sees which part the model saw."""
    return "".join(f"row {i:05d}: " + "x" * (width - 12) + "\n" for i in range(rows))


@dataclass
class ClaudeSession:
    """A session being written: the main JSONL, its session directory, its sidecars."""

    root: Path
    """The project folder (`<root>/projects/<encoded-cwd>/`)."""
    name: str = SESSION_ID
    lines: list[dict[str, Any]] = field(default_factory=list)
    _n: int = 0
    parent: ClaudeSession | None = None
    """For a subagent: the session whose tool-results/ it writes to."""

    @property
    def path(self) -> Path:
        """The main transcript."""
        return self.root / f"{self.name}.jsonl"

    @property
    def session_dir(self) -> Path:
        """`<session-uuid>/` beside the transcript."""
        return self.root / self.name

    @property
    def tool_results(self) -> Path:
        """Where the sidecars are (a subagent's are its parent session's)."""
        if self.parent is not None:
            return self.parent.tool_results
        return self.session_dir / "tool-results"

    def _uuid(self) -> str:
        self._n += 1
        return f"00000000-0000-4000-8000-{self._n:012d}"

    def _base(self, kind: str) -> dict[str, Any]:
        parent = self.lines[-1].get("uuid") if self.lines else None
        return {
            "type": kind,
            "uuid": self._uuid(),
            "parentUuid": parent,
            "isSidechain": self.parent is not None,
            "sessionId": SESSION_ID,
            "timestamp": f"2026-01-01T00:{self._n // 60:02d}:{self._n % 60:02d}.000Z",
            "cwd": "/Users/someone/proj",
            "version": "2.1.88",
            "userType": "external",
        }

    def raw(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Append any line as it is."""
        self.lines.append(obj)
        return obj

    def user(self, text: str) -> dict[str, Any]:
        """A prompt."""
        line = self._base("user")
        line["message"] = {"role": "user", "content": text}
        return self.raw(line)

    def assistant(
        self, *blocks: dict[str, Any], msg_id: str = "msg_01", request: str = "req_01"
    ) -> dict[str, Any]:
        """An assistant line (one API response is often several of these sharing an id)."""
        line = self._base("assistant")
        line["requestId"] = request
        line["message"] = {
            "id": msg_id,
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": list(blocks),
            "stop_reason": None,
            "type": "message",
        }
        return self.raw(line)

    def tool_use(
        self, tool_id: str, name: str, tool_input: dict[str, Any], msg_id: str | None = None
    ) -> dict[str, Any]:
        """An assistant line calling one tool (its own API response unless `msg_id` says)."""
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        return self.assistant(block, msg_id=msg_id or f"msg_{tool_id}", request=f"req_{tool_id}")

    def tool_result(
        self, tool_id: str, content: str | list[dict[str, Any]], tool_use_result: object = None
    ) -> dict[str, Any]:
        """The user line that carries what the model saw of a tool's output."""
        line = self._base("user")
        line["message"] = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": content}],
        }
        if tool_use_result is not None:
            line["toolUseResult"] = tool_use_result
        return self.raw(line)

    def progress(self, tool_id: str) -> dict[str, Any]:
        """A `progress` line of a running tool (2.1.x): it has a uuid, and no conversation
        line is parented on it."""
        line = self._base("progress")
        line["data"] = {"type": "hook_progress", "hookEvent": "PostToolUse"}
        line["toolUseID"] = line["parentToolUseID"] = tool_id
        return self.raw(line)

    def parallel(
        self,
        calls: list[tuple[str, str, str | list[dict[str, Any]]]],
        *,
        msg_id: str = "msg_par",
        progress: bool = True,
        order: list[int] | None = None,
        source: bool = True,
    ) -> list[dict[str, Any]]:
        """One response calling several tools at once, as Claude Code writes it.

        Each `(tool_id, name, result content)` is a `tool_use` on its own assistant line
        (sharing `message.id`, chained by `parentUuid`), then each result (in `order`,
        default the calls') on its own user line parented on the line holding its own
        `tool_use` (`sourceToolAssistantUUID` too, unless `source` is False), a
        `progress` line before each when `progress`. Returns the lines written.
        """
        first = len(self.lines)
        holders: dict[str, dict[str, Any]] = {}
        for tid, name, _ in calls:
            block = {"type": "tool_use", "id": tid, "name": name, "input": {"pattern": tid}}
            holders[tid] = self.assistant(block, msg_id=msg_id, request=f"req_{msg_id}")
        for i in order if order is not None else range(len(calls)):
            tid, _, content = calls[i]
            if progress:
                self.progress(tid)
            result = self.tool_result(tid, content)
            result["parentUuid"] = holders[tid]["uuid"]
            if source:
                result["sourceToolAssistantUUID"] = holders[tid]["uuid"]
        return self.lines[first:]

    def api_error(self, attempt: int = 1) -> dict[str, Any]:
        """A failed API call's `system` line (Claude Code retries it)."""
        line = self._base("system")
        line.update(
            subtype="api_error",
            level="error",
            error={"status": 529, "message": "Overloaded"},
            retryInMs=2000 * attempt,
            retryAttempt=attempt,
            maxRetries=10,
        )
        return self.raw(line)

    def spill(
        self,
        tool_id: str,
        full: str,
        *,
        name: str = "Grep",
        sidecar: str | None = None,
        write_file: bool = True,
        path_style: str = "posix",
        inline: bool | str = False,
    ) -> str:
        """A generic tool's spilled result: writes the sidecar and the 2.1.2+ marker.

        `inline` writes the full output into Claude Code's own record too, where its tool
        does (`INLINE_RECORDS`; True: Bash's `stdout`). Returns the marker text the model
        saw.
        """
        sidecar = sidecar or f"{tool_id}.txt"
        self.tool_use(tool_id, name, {"pattern": "x"})
        if write_file:
            self.tool_results.mkdir(parents=True, exist_ok=True)
            (self.tool_results / sidecar).write_bytes(full.encode("utf-8"))
        path = self.foreign_path(sidecar, path_style)
        preview, more = claude_preview(full)
        marker = persisted_marker(format_file_size(utf16_units(full)), path, preview, more)
        tur = INLINE_RECORDS["stdout" if inline is True else inline](full) if inline else None
        self.tool_result(tool_id, marker, tur)
        return marker

    def bash_spill(
        self,
        tool_id: str,
        task: str,
        full: str,
        *,
        size: int | None = None,
        printed: int | None = None,
    ) -> str:
        """Bash's spill: the file is the raw output, sizes in bytes, preview from trimmed stdout.

        `size` is the `persistedOutputSize` to record and `printed` the size the
        marker prints (both default to the file's).
        """
        self.tool_use(tool_id, "Bash", {"command": "make"})
        self.tool_results.mkdir(parents=True, exist_ok=True)
        data = full.encode("utf-8")
        (self.tool_results / f"{task}.txt").write_bytes(data)
        path = self.foreign_path(f"{task}.txt")
        trimmed = full.lstrip("\n").rstrip()
        preview, more = claude_preview(trimmed)
        shown = format_file_size(printed if printed is not None else len(data))
        marker = persisted_marker(shown, path, preview, more)
        tur = {
            "stdout": preview,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "persistedOutputPath": path,
            "persistedOutputSize": size if size is not None else len(data),
        }
        self.tool_result(tool_id, marker, tur)
        return marker

    def foreign_path(self, sidecar: str, style: str = "posix") -> str:
        """The absolute path Claude Code wrote, on the machine that ran it."""
        session = self.parent.name if self.parent is not None else self.name
        if style == "windows":
            root = "C:\\Users\\someone\\.claude\\projects\\C--proj"
            return f"{root}\\{session}\\tool-results\\{sidecar}"
        return f"{FOREIGN_ROOT}/{session}/tool-results/{sidecar}"

    def write(self) -> Path:
        """Write the transcript (one JSON object per line) and return its path."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(_json_line(obj) for obj in self.lines), encoding="utf-8")
        return self.path

    def subagent(self, agent: str) -> ClaudeSession:
        """A subagent transcript of this session (2.1.x layout), sharing its tool-results."""
        sub = ClaudeSession(self.session_dir / "subagents", name=f"agent-{agent}", parent=self)
        sub._n = 1000
        return sub


# -- usage, as Claude Code records it ------------------------------------------------------

#: The tokens of what a Claude Code session sends that its file never holds: the system
#: prompt, tool definitions and CLAUDE.md.
CLAUDE_UNSEEN = 17_840


def made_up_tokens(value: object) -> int:
    """Made-up tokens for a piece of the conversation: its JSON text at 3.5 characters a
    token (Claude's and OpenAI's tokenizers count a little more than the usual 4)."""
    return -(-len(json.dumps(value, ensure_ascii=False)) * 2 // 7)


def record_claude_usage(lines: list[dict[str, object]], unseen: int = CLAUDE_UNSEEN) -> None:
    """Give every response of a Claude Code session its `message.usage`, as Claude Code
    writes it (CLAUDE_CODE.md, "Token usage"): `input_tokens` the few tokens not read
    from or written to the cache, `cache_read_input_tokens` the call before's context,
    `cache_creation_input_tokens` the rest; `output_tokens` the small first-event figure.
    Every line of one response (one `message.id` and `requestId`) repeats it. A `compact_boundary`'s
    `preTokens` is the context of the call before it plus its response, and what follows
    starts again from the summary; a `microcompact_boundary`'s is the same, and its
    `tokensSaved` the cleared results' tokens.
    """
    conversation = 0  # the tokens of what the model is sent besides `unseen`
    previous = 0  # the size of the call before
    last_output = 0
    said: dict[str, int] = {}  # tokens of each tool result, by tool_use id (for clearing)
    usage: dict[str, object] | None = None
    response: object = None
    for line in lines:
        message = line.get("message")
        if line.get("type") == "system" and line.get("subtype") == "compact_boundary":
            meta = line["compactMetadata"]
            assert isinstance(meta, dict)
            meta["preTokens"] = previous + last_output
            conversation = previous = 0
            response = None
            continue
        if line.get("type") == "system" and line.get("subtype") == "microcompact_boundary":
            meta = line["microcompactMetadata"]
            assert isinstance(meta, dict)
            meta["preTokens"] = previous + last_output
            ids = meta["compactedToolIds"]
            assert isinstance(ids, list)
            meta["tokensSaved"] = saved = sum(said.get(i, 0) for i in ids)
            conversation -= saved
            continue
        if not isinstance(message, dict):
            continue
        tokens = made_up_tokens(message.get("content"))
        if line["type"] == "assistant":
            if (message["id"], line.get("requestId")) != response or usage is None:
                response = message["id"], line.get("requestId")
                size = unseen + conversation
                fresh = 3 if previous else 0
                cached = min(previous, size - fresh)
                last_output = 1 + tokens % 23
                usage = {
                    "input_tokens": fresh,
                    "cache_creation_input_tokens": size - cached - fresh,
                    "cache_read_input_tokens": cached,
                    "output_tokens": last_output,
                    "service_tier": "standard",
                }
                previous = size
            message["usage"] = dict(usage)
        else:
            response = None
            for block in message.get("content") or ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    said[str(block["tool_use_id"])] = made_up_tokens(block.get("content"))
        conversation += tokens


#: Claude Code's own record (`toolUseResult`) of a tool call holding its whole output, by
#: where it holds it (CLAUDE_CODE.md, "Where the transcript and the model disagree").
INLINE_RECORDS: dict[str, Any] = {
    "stdout": lambda full: {"stdout": full, "stderr": "", "interrupted": False},  # Bash
    "content": lambda full: {"mode": "content", "numFiles": 3, "content": full},  # Grep
    "blocks": lambda full: {  # a Task's answer, text blocks
        "status": "completed",
        "content": [{"type": "text", "text": full}],
        "totalDurationMs": 5120,
    },
    "result": lambda full: {"url": "https://example.com", "code": 200, "result": full},  # WebFetch
    "record": lambda full: [{"type": "text", "text": full}],  # an MCP tool's, the output itself
}


def _json_line(obj: dict[str, Any]) -> str:
    """One line as Claude Code writes it; a lone surrogate becomes `\\udXXX`, as in JavaScript."""
    text = json.dumps(obj, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj)
    return text + "\n"


# -- Codex -------------------------------------------------------------------------------------


def codex_line(kind: str, payload: dict[str, Any], n: int) -> dict[str, Any]:
    """One rollout line."""
    return {"timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z", "type": kind, "payload": payload}


def write_codex_rollout(path: Path, outputs: list[str], *, json_string: bool = False) -> Path:
    """A rollout: session meta, a turn, and one shell call per output (what the model saw)."""
    lines = [
        codex_line(
            "session_meta",
            {
                "id": "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000",
                "timestamp": "2026-01-01T00:00:00Z",
                "cwd": "/home/someone/proj",
                "originator": "codex_cli_rs",
                "cli_version": "0.50.0",
                "instructions": None,
            },
            0,
        ),
        codex_line(
            "turn_context",
            {"cwd": "/home/someone/proj", "model": "gpt-5-codex", "approval_policy": "on-request"},
            1,
        ),
        codex_line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "build it"}],
            },
            2,
        ),
        codex_line("event_msg", {"type": "user_message", "message": "build it"}, 3),
    ]
    for i, out in enumerate(outputs):
        call = f"call_{i:03d}"
        lines.append(
            codex_line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell",
                    "call_id": call,
                    "arguments": json.dumps({"command": ["bash", "-lc", "make"]}),
                },
                10 + i,
            )
        )
        output: object = out
        if json_string:
            output = json.dumps(
                {"output": out, "metadata": {"exit_code": 0, "duration_seconds": 1.5}}
            )
        lines.append(
            codex_line(
                "response_item",
                {"type": "function_call_output", "call_id": call, "output": output},
                11 + i,
            )
        )
    lines.append(
        codex_line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "done"}],
            },
            59,
        )
    )
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return path


def codex_lines_omitted(rows: int) -> str:
    """The older Codex cut: 126 head lines, 127 tail lines, the notice between."""
    all_rows = [f"line {i}" for i in range(rows)]
    omitted = rows - 253
    head = "\n".join(all_rows[:126])
    tail = "\n".join(all_rows[-127:])
    notice = f"[... omitted {omitted} of {rows} lines ...]"
    return f"Total output lines: {rows}\n\n{head}\n{notice}\n\n{tail}"


def codex_chars_truncated(n: int) -> str:
    """The current Codex cut: half head, half tail, `…N chars truncated…` between."""
    return f"Total output lines: 900\n\nhead part\u2026{n} chars truncated\u2026tail part"


# -- random sessions, for property tests ----------------------------------------------------------

#: Lines no pass should take for a record, or that only the standard parser may judge.
JUNK_LINES = (
    "",
    "   ",
    "not json",
    "[1, 2]",
    '"a string"',
    '{"type": ["x"], "uuid": "u-list"}',
    '{"type": {"a": 1}, "uuid": "u-dict", "payload": {"type": ["y"]}}',
    '{"type": 5}',
    '{"type": "user", "uuid": "u-dup", "type": "assistant"}',
    '{"type": "user", "message": {"role": "user", "content": "lone \\ud800 surrogate"}}',
    '{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t\\udfff", '
    '"content": "x"}]}}',
    '{"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c\\ud800", '
    '"output": "Total output lines: 3\\n\\nx"}}',
    # Keys with lone surrogates, which msgspec cannot match against field names.
    '{"type": "user", "\\ud800": 1, "message": {"\\udc00": 2, "content": [{"\\ud800": 3, '
    '"type": "tool_result", "tool_use_id": "toolu_x", '
    '"content": "... [5 characters truncated] ..."}]}}',
    '{"type": "response_item", "payload": {"\\ud800": 1, "type": "function_call_output", '
    '"output": "Total output lines: 3\\n\\nx"}}',
    '{"type": "user", "n": NaN}',
    '{"type": "user", "n": ' + "9" * 5000 + "}",
    # Nested deep, and too deep for the standard parser (between about 900 and 1,000
    # levels its verdict depends on the caller's stack depth, so neither is there).
    '{"type": "user", "deep": ' + "[" * 700 + "]" * 700 + "}",
    '{"type": "user", "deep": ' + "[" * 1500 + "]" * 1500 + "}",
    '{"type": "user", "bad": "\xff"}',  # written as the invalid UTF-8 byte 0xff
    '{"type": "user"}\r',
    '{"type": "assistant", "message": ["not", "an", "object"]}',
    '{"type": "user", "message": {"content": {"type": "tool_result"}}}',
    '{"type": "user", "message": {"content": [7, null, "x", {"type": "tool_result", '
    '"tool_use_id": 5, "content": [1, {"type": "text", "text": 2}]}]}}',
    '{"type": "user", "toolUseResult": "Error: a string", "message": {"content": []}}',
    "{",
)

_TEXTS = (
    "plain output",
    "caf\u00e9 \u2713 \U0001f600 and \u4e2d\u6587",
    "x" * 2500,
    "line one\nline two\n",
    "\u00e9" * 1000,
)


def _marker_texts(rng: random.Random, s: ClaudeSession, tid: str, *, quoted: bool = True) -> str:
    """A result text with any of Claude Code's marker forms: where Claude Code writes them
    (the whole result; a cut on its own line), or (`quoted`) quoted where it does not, or
    several."""
    path = s.foreign_path(rng.choice([f"{tid}.txt", f"{tid}.json", "a/../b.txt", "x:y.txt"]))
    preview, more = claude_preview(numbered(rng.choice([3, 60])))
    whole = [
        persisted_marker(rng.choice(["1KB", "2.5KB", "17 bytes"]), path, preview, more),
        saved_marker(path),
        mcp_marker(rng.choice([12_000, 99]), path),
        rng.choice(["", " ", "\n"]) + "[Old tool result content cleared]",
    ]
    cut = rng.choice(
        [
            f"head\n\n... [{rng.choice(['12,345', '7'])} characters truncated] ...\n\ntail",
            "a.ts:1:x\nb.js:2:[Omitted long matching line]\nb.js-3-[Omitted long context line]",
        ]
    )
    r = rng.random() if quoted else rng.random() * 0.65
    if r < 0.45:
        text = rng.choice(whole)
        if rng.random() < 0.2:
            text += "\n" + cut  # after the whole result's marker: a cut of its own
    elif r < 0.65:
        text = cut
    else:
        picked = rng.sample([*whole, cut], rng.randint(1, 3))
        if rng.random() < 0.3:
            picked.append("quoted: " + rng.choice(whole))
        text = rng.choice(["", "before\n"]) + "\n".join(picked)
    return text


def random_claude_session(root: Path, seed: int, steps: int) -> Path:
    """A Claude Code session of `steps` random lines of every kind the pass reads; its path.

    Prompts, tool calls and results (answered, unanswered, answered first, ids
    named twice), every marker form, responses split over several lines,
    branches, sidechains, hook lines between turns, compactions, content
    replacements, subagent links (found, missing, not a plain id), and
    `JUNK_LINES`; sometimes a subagent transcript, sometimes a torn last line.
    """
    rng = random.Random(seed)
    s = ClaudeSession(root)
    sub: ClaudeSession | None = None
    if rng.random() < 0.4:
        sub = s.subagent("a1")
        sub.user("the subagent's task")
        sub.spill("toolu_sub1", numbered(80))
        sub.tool_use("toolu_sub2", "Read", {})
    tids: list[str] = ["toolu_sub1"]
    junk: dict[int, list[str]] = {}
    last_msg: tuple[str, str] | None = None
    for i in range(steps):
        r = rng.random()
        uuids = [line["uuid"] for line in s.lines if isinstance(line.get("uuid"), str)]
        if r < 0.08:
            s.user(rng.choice(_TEXTS))
        elif r < 0.2:
            tid = rng.choice(tids) if tids and rng.random() < 0.2 else f"toolu_{seed}_{i}"
            tids.append(tid)
            name = rng.choice(["Bash", "Grep", "Read", "mcp__x__y", ""])
            if rng.random() < 0.3 and last_msg is not None:
                block = {"type": "tool_use", "id": tid, "name": name, "input": {}}
                s.assistant(block, msg_id=last_msg[0], request=last_msg[1])
            else:
                s.tool_use(tid, name, {"command": "make"})
                last_msg = (f"msg_{tid}", f"req_{tid}")
        elif r < 0.32:
            tid = rng.choice(tids) if tids and rng.random() < 0.85 else f"toolu_new_{i}"
            tur: object = rng.choice(
                [
                    None,
                    {"stdout": rng.choice(_TEXTS), "stderr": "", "interrupted": False},
                    {"stdout": "x" * 5000, "stderr": ""},
                    {"persistedOutputPath": s.foreign_path(f"{tid}.txt"), "persistedOutputSize": 9},
                    {"persistedOutputPath": None},
                    {"persistedOutputSize": True, "stdout": 3},
                    "a string",
                    [1, 2],
                ]
            )
            text = _marker_texts(rng, s, tid) if rng.random() < 0.6 else rng.choice(_TEXTS)
            content: object = text
            if rng.random() < 0.3:
                content = [
                    {"type": "text", "text": text},
                    {"type": "image", "source": {}},
                    {"type": "text", "text": rng.choice(_TEXTS)},
                ]
            s.tool_result(tid, content, tur)
            if rng.random() < 0.2:  # a second result of the same line
                line = s.lines[-1]
                line["message"]["content"].append(
                    {"type": "tool_result", "tool_use_id": rng.choice(tids), "content": text}
                )
        elif r < 0.37:
            tid = f"toolu_spill_{seed}_{i}"
            tids.append(tid)
            s.spill(
                tid,
                numbered(rng.choice([5, 200])),
                write_file=rng.random() < 0.7,
                path_style=rng.choice(["posix", "windows"]),
                inline=rng.choice([False, False, False, True, *INLINE_RECORDS]),
            )
        elif r < 0.41:
            tid = f"toolu_bash_{seed}_{i}"
            tids.append(tid)
            s.bash_spill(tid, f"task{i}", "\n\n" + numbered(rng.choice([3, 90])))
        elif r < 0.47 and last_msg is not None:
            s.assistant({"type": "text", "text": "more"}, msg_id=last_msg[0], request=last_msg[1])
        elif r < 0.52 and uuids:
            line = s.user("a retry")
            line["parentUuid"] = rng.choice([*uuids, "nowhere", 7])
        elif r < 0.56:
            s.user("a subagent's turn")["isSidechain"] = rng.choice([True, True, "yes"])
        elif r < 0.62:
            s.raw(
                {
                    "type": rng.choice(["progress", "attachment", "file-history-snapshot"]),
                    "uuid": f"hook-{seed}-{i}",
                    "parentUuid": uuids[-1] if uuids else None,
                }
            )
        elif r < 0.66:
            line = s._base("system")
            line["subtype"] = "compact_boundary"
            line["compactMetadata"] = rng.choice([{"trigger": "auto"}, {"trigger": ""}, 5, {}])
            line["logicalParentUuid"] = rng.choice([*uuids[-3:], "gone", None, 3])
            s.raw(line)
        elif r < 0.69:
            s.user("Summary of the conversation so far")["isCompactSummary"] = True
        elif r < 0.75:
            reps: list[object] = []
            for _ in range(rng.randint(1, 3)):
                tid = rng.choice(tids) if tids and rng.random() < 0.8 else "toolu_nowhere"
                # (A replacement holding no marker is left out: the viewer does not yet
                # know such a result was replaced, and counts its line wrongly.)
                text = _marker_texts(rng, s, tid, quoted=False)
                reps.append({"toolUseId": tid, "replacement": text})
            reps.append(rng.choice([{"toolUseId": 5}, "x", {"replacement": "y"}]))
            s.raw({"type": "content-replacement", "sessionId": SESSION_ID, "replacements": reps})
        elif r < 0.78:
            agent = rng.choice(["a1", "zz9", "../up", ""])
            tid = f"toolu_task_{i}"
            s.tool_use(tid, "Task", {})
            s.tool_result(tid, "the subagent's answer", {"agentId": agent, "status": "completed"})
        elif r < 0.81:
            block = {"type": "tool_use", "id": rng.choice([5, None, "toolu_x"]), "name": 3}
            s.assistant(block, msg_id=rng.choice(["m1", "m1", 1, True]), request="r")
        elif r < 0.85:
            # A parallel batch: results parented on their own calls, in any order.
            n = rng.randint(2, 4)
            calls: list[tuple[str, str, str | list[dict[str, Any]]]] = []
            for k in range(n):
                tid = f"toolu_par_{i}_{k}"
                tids.append(tid)
                calls.append((tid, rng.choice(["Read", "Grep", "Bash"]), rng.choice(_TEXTS)))
            order = list(range(n))
            rng.shuffle(order)
            s.parallel(
                calls,
                msg_id=rng.choice([f"msg_par_{i}", "m1"]),
                progress=rng.random() < 0.6,
                order=order,
                source=rng.random() < 0.7,
            )
            if rng.random() < 0.3:  # a result parented on another call of the response
                s.lines[-1]["parentUuid"] = rng.choice([*uuids[-2:], s.lines[-2].get("uuid")])
        elif r < 0.88 and uuids:
            # A failed API call, then the retry parented on the line before it (or not).
            before = uuids[-1]
            for attempt in range(rng.randint(1, 2)):
                s.api_error(attempt + 1)
            retry = s.assistant({"type": "text", "text": "retried"}, msg_id=f"msg_retry_{i}")
            retry["parentUuid"] = rng.choice([before, before, rng.choice(uuids)])
        else:
            junk.setdefault(len(s.lines), []).append(rng.choice(JUNK_LINES))
    if sub is not None:
        sub.write()
    _write_raw(s, junk, torn=rng.random() < 0.2, crlf=rng.random() < 0.1)
    return s.path


def _write_raw(s: ClaudeSession, junk: dict[int, list[str]], *, torn: bool, crlf: bool) -> None:
    out: list[bytes] = []
    for k in range(len(s.lines) + 1):
        for raw in junk.get(k, ()):
            data = raw.encode("utf-8")
            out.append(data.replace(b"\xc3\xbf", b"\xff"))  # `"\xff"` as the invalid byte
        if k < len(s.lines):
            out.append(_json_line(s.lines[k]).rstrip("\n").encode("utf-8"))
    end = b"\r\n" if crlf else b"\n"
    data = end.join(out) + end
    if torn and len(out[-1]) > 4:
        data = data[: -len(end) - len(out[-1]) // 2]
    s.root.mkdir(parents=True, exist_ok=True)
    s.path.write_bytes(data)


def random_codex_rollout(path: Path, seed: int, steps: int) -> Path:
    """A Codex rollout of `steps` random lines: calls, outputs of every notice and shape
    (answered before their call, call ids reused), events, and `JUNK_LINES`."""
    rng = random.Random(seed)
    calls: list[str] = []
    outputs = [
        codex_lines_omitted(300),
        codex_chars_truncated(1234),
        "Total output lines: 40\n\nonly the prefix",
        "[... output truncated to fit 10240 bytes ...]",
        "head\u202612 tokens truncated\u2026tail",
        "[omitted 3 text items ...]",
        "Warning: truncated output (original token count: 999)\nTotal output lines: 7\n\nx",
        "nothing cut",
        "caf\u00e9 " * 500,
    ]
    lines: list[str] = [
        json.dumps(codex_line("session_meta", {"id": "0199", "cwd": "/home/someone/proj"}, 0))
    ]
    for i in range(steps):
        r = rng.random()
        if r < 0.25:
            call = rng.choice(calls) if calls and rng.random() < 0.15 else f"call_{i}"
            calls.append(call)
            kind = rng.choice(["function_call", "custom_tool_call", "local_shell_call"])
            item: dict[str, Any] = {"type": kind, "call_id": call}
            if rng.random() < 0.8:
                item["name"] = rng.choice(["shell", "apply_patch", 7])
            lines.append(json.dumps(codex_line("response_item", item, i), ensure_ascii=False))
        elif r < 0.6:
            call = rng.choice(calls) if calls and rng.random() < 0.85 else f"call_later_{i}"
            out = rng.choice(outputs)
            shape = rng.random()
            output: object = out
            if shape < 0.15:
                output = json.dumps({"output": out, "metadata": {"exit_code": 0}})
            elif shape < 0.25:
                output = {"output": out}
            elif shape < 0.35:
                output = {"content": [{"type": "input_text", "text": out}, {"text": out}]}
            elif shape < 0.45:
                output = [{"type": "input_text", "text": out}, {"type": "image"}, {"text": 5}]
            kind = rng.choice(sorted(OUTPUT_ITEM_TYPES))
            item = {"type": kind, "call_id": call, "output": output}
            lines.append(json.dumps(codex_line("response_item", item, i), ensure_ascii=False))
        elif r < 0.75:
            payload = {"type": "token_count", "info": {"total": i}}
            lines.append(json.dumps(codex_line("event_msg", payload, i)))
        elif r < 0.85:
            content = [{"type": "output_text", "text": rng.choice(outputs)}]
            payload = {"type": "message", "role": "assistant", "content": content}
            lines.append(json.dumps(codex_line("response_item", payload, i), ensure_ascii=False))
        else:
            lines.append(rng.choice(JUNK_LINES))
    data = ("\n".join(lines) + "\n").encode("utf-8").replace(b"\xc3\xbf", b"\xff")
    if rng.random() < 0.2:
        data = data[: -1 - len(lines[-1]) // 2]
    path.write_bytes(data)
    return path


#: Codex's item types that carry a tool's output (`codex.OUTPUT_TYPES`), for rollouts.
OUTPUT_ITEM_TYPES = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "mcp_tool_call_output",
        "tool_search_output",
    }
)

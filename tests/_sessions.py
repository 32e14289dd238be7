"""Synthetic Claude Code sessions and Codex rollouts, built from the spec's exact strings.

Nothing here comes from a real session: the line shapes and marker texts are
the ones `../shared/spec/CLAUDE_CODE.md` and `CODEX.md` give (the marker
texts byte for byte), and the content is made up. Ids and timestamps are
fixed so snapshots are stable.
"""

from __future__ import annotations

import json
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
            "isSidechain": False,
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

    def spill(
        self,
        tool_id: str,
        full: str,
        *,
        name: str = "Grep",
        sidecar: str | None = None,
        write_file: bool = True,
        path_style: str = "posix",
        inline: bool = False,
    ) -> str:
        """A generic tool's spilled result: writes the sidecar and the 2.1.2+ marker.

        Returns the marker text the model saw.
        """
        sidecar = sidecar or f"{tool_id}.txt"
        self.tool_use(tool_id, name, {"pattern": "x"})
        if write_file:
            self.tool_results.mkdir(parents=True, exist_ok=True)
            (self.tool_results / sidecar).write_bytes(full.encode("utf-8"))
        path = self.foreign_path(sidecar, path_style)
        preview, more = claude_preview(full)
        marker = persisted_marker(format_file_size(utf16_units(full)), path, preview, more)
        tur: object = {"stdout": full, "stderr": "", "interrupted": False} if inline else None
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

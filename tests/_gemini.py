"""Synthetic Gemini CLI sessions, written from Gemini CLI's exact strings (never a real session).

The templates are google-gemini/gemini-cli's at 5411f113 (2026-08-21), written out here
as fixtures (not the code under test): `truncated` is `formatTruncatedToolOutput`
(`packages/core/src/utils/fileUtils.ts` L704–725), `masked` is
`toolOutputMaskingService`'s `formatMaskedSnippet` with its general preview (L203–212,
L360–366), and `GeminiSession` appends lines as `ChatRecordingService` does (a metadata
line; each message written whole again when it changes; `$set` and `$rewindTo`;
`chatRecordingService.ts` L418–949). Outputs, ids and sizes are ours.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def js_len(text: str) -> int:
    """A JavaScript string's `length`: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(text: str, start: int, stop: int | None = None) -> str:
    """`text.slice(start, stop)` in code units (a negative start counts from the end)."""
    units = text.encode("utf-16-le", "surrogatepass")
    n = len(units) // 2
    start = max(n + start, 0) if start < 0 else start
    end = n if stop is None else stop
    return units[2 * start : 2 * end].decode("utf-16-le", "surrogatepass")


def truncated(content: str, output_file: str, max_chars: int) -> str:
    """`formatTruncatedToolOutput` (en-US `toLocaleString()`: `8,000`)."""
    if js_len(content) <= max_chars:
        return content
    head_chars = max_chars * 2 // 10
    tail_chars = max_chars - head_chars
    head = js_slice(content, 0, head_chars)
    tail = js_slice(content, -tail_chars)
    omitted = js_len(content) - head_chars - tail_chars
    return (
        f"Output too large. Showing first {head_chars:,} and last {tail_chars:,} characters. "
        f"For full output see: {output_file}\n{head}\n\n... [{omitted:,} characters omitted] "
        f"...\n\n{tail}"
    )


def masked(content: str, file_path: str) -> str:
    """`formatMaskedSnippet` with a general tool's preview (250 + 250 units, or all)."""
    if js_len(content) > 500:
        preview = f"{js_slice(content, 0, 250)}\n... [TRUNCATED] ...\n{js_slice(content, -250)}"
    else:
        preview = content
    return (
        f"<tool_output_masked>\n{preview}\n\nOutput too large. Full output available at: "
        f"{file_path}\n</tool_output_masked>"
    )


def safe_part(part: str) -> str:
    """`sanitizeFilenamePart`."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", part)


@dataclass
class GeminiSession:
    """A session being written line by line, as Gemini CLI's recorder writes it.

    `project` is the project's temp folder (`~/.gemini/tmp/<slug>`); the session file is
    `project/chats/session-2026-11-20T10-00-<first 8 of the id>.jsonl`, its outputs in
    `project/tool-outputs/session-<id>/`. The machine the markers' paths name (`home`)
    is another one's.
    """

    project: Path
    session_id: str = "3f9a2c1e-7b44-4d0e-9a51-2c8e6f0d1b7a"
    model: str = "gemini-2.5-pro"
    home: str = "/home/alice/.gemini/tmp/proj"
    lines: list[dict[str, Any]] = field(default_factory=list)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    _n: int = 0

    def __post_init__(self) -> None:
        self.lines.append(
            {
                "sessionId": self.session_id,
                "projectHash": "9c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d",
                "startTime": "2026-11-20T10:00:00.000Z",
                "lastUpdated": "2026-11-20T10:00:00.000Z",
                "kind": "main",
            }
        )

    @property
    def path(self) -> Path:
        """The session file."""
        return self.project / "chats" / f"session-2026-11-20T10-00-{self.session_id[:8]}.jsonl"

    @property
    def outputs(self) -> Path:
        """The session's `tool-outputs/session-<id>/`."""
        return self.project / "tool-outputs" / f"session-{safe_part(self.session_id)}"

    def foreign_path(self, name: str) -> str:
        """The absolute path a marker gives for `name`, on the machine that wrote it."""
        return f"{self.home}/tool-outputs/session-{safe_part(self.session_id)}/{name}"

    def _stamp(self) -> str:
        self._n += 1
        return f"2026-11-20T10:{self._n // 60:02d}:{self._n % 60:02d}.000Z"

    def _push(self, message: dict[str, Any]) -> dict[str, Any]:
        """`pushMessage`: the whole message appended, again when it changes."""
        self.messages[message["id"]] = message
        self.lines.append(json.loads(json.dumps(message)))
        self.lines.append({"$set": {"lastUpdated": self._stamp()}})
        return message

    def user(self, text: str) -> dict[str, Any]:
        """`recordMessage` of the user's prompt."""
        message = {"id": f"msg-{self._n:04d}-user", "timestamp": self._stamp(), "type": "user",
                   "content": [{"text": text}]}  # fmt: skip
        return self._push(message)

    def gemini(
        self, text: str, calls: list[tuple[str, str, dict[str, Any]]] = (),  # type: ignore[assignment]
        *, tokens: int | None = None, thought: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """The model's message (`recordMessage`, then `recordToolCalls`: written again with
        its calls, each without a result yet)."""
        message: dict[str, Any] = {
            "id": f"msg-{self._n:04d}-gemini",
            "timestamp": self._stamp(),
            "type": "gemini",
            "content": text,
            "thoughts": [{"subject": "Plan", "description": thought, "timestamp": self._stamp()}]
            if thought
            else [],
            "tokens": None,
            "model": self.model,
        }
        self._push(message)
        if calls:
            message["toolCalls"] = [
                {"id": i, "name": n, "args": a, "status": "scheduled", "timestamp": self._stamp()}
                for i, n, a in calls
            ]
            self._push(message)
        if tokens is not None:  # `recordMessageTokens`: written again with its usage
            message["tokens"] = {"input": tokens, "output": 90, "cached": 0, "thoughts": 0,
                                 "tool": 0, "total": tokens + 90}  # fmt: skip
            self._push(message)
        return message

    def result(self, message: dict[str, Any], call_id: str, output: str) -> None:
        """`recordToolCalls` with the call's result: the message written again, whole."""
        for call in message["toolCalls"]:
            if call["id"] == call_id:
                call["status"] = "success"
                response = {"id": call_id, "name": call["name"], "response": {"output": output}}
                call["result"] = [{"functionResponse": response}]
        self._push(message)

    def spill(
        self, message: dict[str, Any], call_id: str, output: str, *, threshold: int = 4000,
        file: bool = True, stored: str | None = None,
    ) -> str:  # fmt: skip
        """A shell result over the threshold: its file (`saveTruncatedToolOutput`) and the
        truncated text as its result. Returns the file's name."""
        tool = next(c["name"] for c in message["toolCalls"] if c["id"] == call_id)
        safe_tool, safe_id = safe_part(tool).lower(), safe_part(call_id).lower()
        name = f"{safe_id}.txt" if safe_id.startswith(safe_tool) else f"{safe_tool}_{safe_id}.txt"
        if file:
            self.outputs.mkdir(parents=True, exist_ok=True)
            (self.outputs / name).write_text(stored if stored is not None else output)
        self.result(message, call_id, truncated(output, self.foreign_path(name), threshold))
        return name

    def mask(self, message: dict[str, Any], call_id: str, suffix: str = "k2x9q") -> str:
        """The history masking of an older result: its file (the response, as indented JSON)
        and a `$set` of every message with the masked snippet in its place."""
        call = next(c for c in message["toolCalls"] if c["id"] == call_id)
        response = call["result"][0]["functionResponse"]["response"]
        content = json.dumps(response, indent=2, ensure_ascii=False)
        name = f"{safe_part(call['name']).lower()}_{safe_part(call_id).lower()}_{suffix}.txt"
        self.outputs.mkdir(parents=True, exist_ok=True)
        (self.outputs / name).write_text(content)
        call["result"][0]["functionResponse"]["response"] = {
            "output": masked(content, self.foreign_path(name))
        }
        history = json.loads(json.dumps(list(self.messages.values())))
        self.lines.append({"$set": {"messages": history}})
        return name

    def rewind(self, to: str) -> None:
        """`rewindTo`: the messages from `to` on are dropped."""
        ids = list(self.messages)
        for gone in ids[ids.index(to) :]:
            del self.messages[gone]
        self.lines.append({"$rewindTo": to})

    def write(self) -> Path:
        """Write the session file (`JSON.stringify`, one line each)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(
            json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in self.lines
        )
        self.path.write_text(body, encoding="utf-8")
        return self.path

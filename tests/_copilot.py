"""Synthetic GitHub Copilot CLI sessions, from the exact strings of its 1.0.102 release.

Never a real session. The templates are Copilot CLI's, written out here as fixtures
(not the code under test), as a run of the real 1.0.102 binary against a local
fake model showed them (its `events.jsonl` and the requests the model got) and as
its bundled `schemas/session-events.schema.json` declares them:

- the large-output text (`runtime.node`'s `large_output.rs`; the same words as
  1.0.35's readable `app.js` L389 `rLe`): `too_large` below, the size as `Yne`
  writes it (`size_words`), the preview the first 500 characters;
- an event line: `{"type", "data", "id", "timestamp", "parentId"}` in that order,
  compact, each `parentId` the line before's `id` (the first `null`);
- a model call's usage is the persisted `session.usage_record` (`usage.inputTokens`,
  `usage.maxPromptTokens`), `assistant.usage` being ephemeral (never on disk).

The session's texts, ids and times are ours.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

THRESHOLD = 20_480
PREVIEW = 500


def size_words(n: int) -> str:
    """`Yne`: bytes below 1 KiB, else KB or MB of 1,024 to one decimal."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def too_large(output: str, path: str) -> str:
    """What the model got for an output over the threshold (`rLe`)."""
    preview = output[:PREVIEW]
    return (
        f"Output too large to read at once ({size_words(len(output.encode()))}). Saved to: "
        f"{path}\nConsider using tools like grep (for searching), head/tail (for viewing "
        "start/end), view with view_range (for specific sections), or jq (for JSON) to "
        f"examine portions of the output.\n\nPreview (first {len(preview)} chars):\n{preview}"
    )


@dataclass
class CopilotSession:
    """One session under `<home>/session-state/<id>/events.jsonl` (`home`: `~/.copilot`)."""

    home: Path
    session_id: str = "4f6b2d1e-7a3c-4e5f-9b8a-1c2d3e4f5a6b"
    cwd: str = "/Users/someone/proj"
    model: str = "gpt-4.1"
    start: str = "2026-11-22T08:00:00"
    lines: list[dict[str, Any]] = field(default_factory=list)
    _seconds: int = 0
    _counter: int = 0
    _last: str | None = None

    @property
    def path(self) -> Path:
        """The session's `events.jsonl`."""
        return self.home / "session-state" / self.session_id / "events.jsonl"

    def _id(self) -> str:
        self._counter += 1
        return str(uuid.UUID(int=(0x5EED << 112) + self._counter))

    def event(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        """One event line, chained to the one before it."""
        self._seconds += 1
        event_id = self._id()
        line = {
            "type": kind,
            "data": data,
            "id": event_id,
            "timestamp": f"{self.start}.{self._seconds:03d}Z",
            "parentId": self._last,
        }
        self._last = event_id
        self.lines.append(line)
        return line

    def started(self) -> None:
        """`session.start`, as 1.0.102 writes it."""
        self.event("session.start", {
            "sessionId": self.session_id, "version": 1, "producer": "copilot-agent",
            "copilotVersion": "1.0.102", "startTime": f"{self.start}.000Z",
            "selectedModel": self.model, "contextTier": None, "context": {"cwd": self.cwd},
            "alreadyInUse": False, "remoteSteerable": False,
        })  # fmt: skip

    def user(self, text: str) -> None:
        """A prompt (the text the model got is its `transformedContent`)."""
        self.event("user.message", {"content": text, "transformedContent": text})

    def call(self, input_tokens: int, limit: int = 64_000) -> None:
        """A model call's persisted usage (`session.usage_record`)."""
        self.event("assistant.turn_start", {"turnId": f"{self._counter}"})
        self.event("session.usage_record", {"usage": {
            "model": self.model, "inputTokens": input_tokens, "outputTokens": 120,
            "cacheReadTokens": 0, "maxPromptTokens": limit, "maxOutputTokens": 16_384,
            "finishReason": "tool_calls",
        }})  # fmt: skip

    def assistant(
        self, text: str, tools: list[tuple[str, str, dict[str, Any]]] = ()  # type: ignore[assignment]
    ) -> None:
        """The model's message, with its tool requests (then each tool's start)."""
        requests = [{"toolCallId": cid, "name": name, "arguments": args, "type": "function"}
                    for cid, name, args in tools]  # fmt: skip
        data = {"messageId": self._id(), "content": text, "toolRequests": requests,
                "model": self.model}  # fmt: skip
        self.event("assistant.message", data)
        for cid, name, args in tools:
            self.event("tool.execution_start", {"toolCallId": cid, "toolName": name,
                                                "arguments": args})  # fmt: skip

    def result(self, call_id: str, content: str) -> None:
        """A tool's result, as the model got it (`result.content`)."""
        self.event("tool.execution_complete", {"toolCallId": call_id, "success": True,
                                               "model": self.model,
                                               "result": {"content": content}})  # fmt: skip

    def spilled(self, call_id: str, output: str, name: str, tmp: str = "/tmp") -> str:
        """A result over the threshold: the file's path in the OS temp folder, the text."""
        path = f"{tmp}/{name}"
        suffix = "\n\n<shellId: 0 completed with exit code 0>"  # the shell's own, after
        self.result(call_id, too_large(output, path) + suffix)
        return path

    def compaction(self, before: int, after: int, summary: str) -> None:
        """`session.compaction_start` and `_complete`, with their token counts."""
        self.event("session.compaction_start", {"currentTokens": before, "tokenLimit": 64_000,
                                                "trigger": "threshold"})  # fmt: skip
        self.event("session.compaction_complete", {
            "success": True, "preCompactionTokens": before, "postCompactionTokens": after,
            "tokenAccountingBasis": "local_full_context_estimate", "summaryContent": summary,
            "tokenLimit": 64_000, "trigger": "threshold",
        })  # fmt: skip

    def truncation(self, before: int, after: int) -> None:
        """`session.truncation`: older messages dropped to fit."""
        self.event("session.truncation", {
            "tokenLimit": 20_000, "preTruncationTokensInMessages": before,
            "preTruncationMessagesLength": 4, "postTruncationTokensInMessages": after,
            "postTruncationMessagesLength": 2, "tokensRemovedDuringTruncation": before - after,
            "messagesRemovedDuringTruncation": 2, "performedBy": "BasicTruncator",
        })  # fmt: skip

    def shutdown(self) -> None:
        """`session.shutdown`."""
        self.event("session.shutdown", {"shutdownType": "routine", "totalApiDurationMs": 4200,
                                        "sessionStartTime": 0, "codeChanges": {},
                                        "modelMetrics": {}})  # fmt: skip

    def text(self) -> bytes:
        """The file's bytes: one compact JSON line an event."""
        return b"".join(
            json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for line in self.lines
        )

    def write(self, tail: bytes = b"") -> Path:
        """The file (with `tail` after it: damage, as a crash leaves it)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(self.text() + tail)
        return self.path

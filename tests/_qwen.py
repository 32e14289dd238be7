"""Synthetic Qwen Code sessions, written from Qwen Code's exact strings (never a real session).

The templates are the npm release `@qwen-code/qwen-code` 0.24.4's, written out
here as fixtures (not the code under test): `stub` is `buildStub`
(`chunks/chunk-2VS5EEXU.js` L5420–5440, with the later source's two changes
from `OTHER_AGENTS.md`), `fit_text` is the batch budget's `fitText`
(`chunks/chunk-DPEB6S2R.js` L13901–13948), and `QwenSession` writes records
as `ChatRecordingService` does (`createBaseRecord`, `recordAssistantTurn`,
`recordToolResult`, `recordChatCompression`, `rewindRecording`; chunk
L30691–31700): a session file under `<runtime>/projects/<sanitized cwd>/chats/`
and its stubs' files under `<runtime>/tmp/<sha256(cwd)>/tool-results/`.
The outputs, ids and sizes are ours.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transcript_view.core.formats.qwen_markers import preview_of, size_kb, tool_results_dir


def stub(
    path_or_note: str,
    *,
    kb: int,
    digest: str | None,
    preview: str,
    later: bool = False,
) -> str:
    """`buildStub`'s text (0.24.4; `later`: the source after it, a totals line and other
    read-back words; `digest=None`: 0.21, before the digest line). A path (it starts with
    `/`) is the tagged form; anything else is the note of the untagged one."""
    lines = [f"Output too large ({kb} KB). "]
    tagged = path_or_note.startswith("/")
    lines[0] += f"Full output saved to: {path_or_note}" if tagged else path_or_note
    if digest is not None:
        lines.append(f"Full output sha256: {digest}")
    if later:
        lines.append("Total characters: 66000; total lines: 3001.")
    if tagged:
        lines.append("Note: this file may be cleaned up after 24 hours.")
        lines.append(
            "Page in with read_file using the absolute file_path above, offset (zero-based "
            "line) and limit (line count)."
            if later
            else "To read the complete output, use the read_file tool with the absolute file "
            "path above."
        )
    text = "\n".join(lines) + f"\n\nPreview (up to 2000 chars):\n{preview}"
    return f"<persisted-output>\n{text}\n</persisted-output>" if tagged else text


def js_len(text: str) -> int:
    """A JavaScript string's `length`: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(text: str, start: int, stop: int | None = None) -> str:
    """`text.slice(start, stop)` in JavaScript's code units."""
    units = text.encode("utf-16-le", "surrogatepass")
    end = len(units) if stop is None else 2 * stop
    return units[2 * start : end].decode("utf-16-le", "surrogatepass")


def fit_text(text: str, max_chars: int, files: list[str]) -> str:
    """`fitText` as 0.24.4 has it (`chunks/chunk-DPEB6S2R.js` L13901–13948), written out
    line for line (the fixture, not the code under test)."""

    def start_whole(s: str, n: int) -> str:  # sliceStartWithoutBrokenSurrogate
        end = min(n, js_len(s))
        if end > 0 and 0xD800 <= ord(js_slice(s, end - 1, end)) <= 0xDBFF:
            end -= 1
        return js_slice(s, 0, end)

    def end_whole(s: str, n: int) -> str:  # sliceEndWithoutBrokenSurrogate
        start = max(0, js_len(s) - n)
        if start < js_len(s) and 0xDC00 <= ord(js_slice(s, start, start + 1)) <= 0xDFFF:
            start += 1
        return js_slice(s, start)

    if js_len(text) <= max_chars:
        return text
    if len(files) == 1:
        header = f"Tool output truncated. Persisted tool-output artifact: {files[0]}"
    elif files:
        listing = "\n".join(f"- {f}" for f in files)
        header = f"Tool output truncated. Persisted tool-output artifacts:\n{listing}"
    else:
        header = "Tool output truncated."
    budget = max_chars - js_len(header) - 2
    if budget <= 5:
        return f"{header}\n\n{start_whole(text, budget)}"
    content = budget - 5
    head = content // 5
    return f"{header}\n\n{start_whole(text, head)}\n...\n{end_whole(text, content - head)}"


def sanitized(cwd: str) -> str:
    """The project folder's name: the root with every `[^a-zA-Z0-9]` as `-` (`Storage`)."""
    return re.sub(r"[^a-zA-Z0-9]", "-", cwd)


@dataclass
class QwenSession:
    """A session being written, record by record, as Qwen Code's recorder writes it.

    `runtime` is the runtime folder (`~/.qwen`); the session file is
    `runtime/projects/<sanitized cwd>/chats/<session_id>.jsonl`. The machine the
    stubs' paths name (`home`) is another one's: the viewer never opens them.
    """

    runtime: Path
    cwd: str = "/home/alice/proj"
    session_id: str = "7b0e2c1a-5d3f-4e6a-9b8c-0d1e2f3a4b5c"
    model: str = "qwen3-coder-plus"
    window: int | None = 1_000_000
    home: str = "/home/alice/.qwen"
    version: str = "0.24.4"
    records: list[dict[str, Any]] = field(default_factory=list)
    _n: int = 0
    _last: str | None = None

    @property
    def path(self) -> Path:
        """The session file."""
        chats = self.runtime / "projects" / sanitized(self.cwd) / "chats"
        return chats / f"{self.session_id}.jsonl"

    @property
    def results(self) -> Path:
        """This project's `tool-results/` folder (`Storage.getToolResultsDir`)."""
        return tool_results_dir(self.path, self.cwd)

    def foreign_path(self, name: str) -> str:
        """The absolute path a stub gives for `name`, on the machine that wrote it."""
        project = hashlib.sha256(self.cwd.encode()).hexdigest()
        return f"{self.home}/tmp/{project}/tool-results/{name}"

    def _base(self, kind: str, uuid: str | None = None) -> dict[str, Any]:
        self._n += 1
        uuid = uuid or f"00000000-0000-4000-8000-{self._n:012d}"
        record: dict[str, Any] = {
            "uuid": uuid,
            "parentUuid": self._last,
            "sessionId": self.session_id,
            "timestamp": f"2026-11-20T10:{self._n // 60:02d}:{self._n % 60:02d}.000Z",
            "type": kind,
            "cwd": self.cwd,
            "version": self.version,
            "gitBranch": "main",
        }
        self._last = uuid
        return record

    def user(self, text: str) -> dict[str, Any]:
        """A user turn (`recordUserMessage`)."""
        record = self._base("user")
        record["message"] = {"role": "user", "parts": [{"text": text}]}
        self.records.append(record)
        return record

    def assistant(
        self,
        text: str | None = None,
        calls: list[tuple[str, str, dict[str, Any]]] = (),  # type: ignore[assignment]
        *,
        tokens: int | None = None,
        thought: str | None = None,
        uuid: str | None = None,
    ) -> dict[str, Any]:
        """The model's turn (`recordAssistantTurn`): its parts, usage and window."""
        record = self._base("assistant", uuid)
        record["model"] = self.model
        parts: list[dict[str, Any]] = []
        if thought is not None:
            parts.append({"text": thought, "thought": True})
        if text is not None:
            parts.append({"text": text})
        parts += [{"functionCall": {"id": i, "name": n, "args": a}} for i, n, a in calls]
        record["message"] = {"role": "model", "parts": parts}
        if tokens is not None:
            record["usageMetadata"] = {
                "promptTokenCount": tokens,
                "candidatesTokenCount": 120,
                "totalTokenCount": tokens + 120,
                "cachedContentTokenCount": tokens // 2,
                "thoughtsTokenCount": 0,
            }
        if self.window is not None:
            record["contextWindowSize"] = self.window
        self.records.append(record)
        return record

    def tool_result(self, call_id: str, name: str, output: str) -> dict[str, Any]:
        """A tool's result as the model got it (`recordToolResult`)."""
        record = self._base("tool_result")
        record["message"] = {
            "role": "user",
            "parts": [
                {"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}
            ],
        }
        record["toolCallResult"] = {
            "callId": call_id,
            "status": "success",
            "executionStatus": "success",
            "resultDisplay": output[:200],
            "error": None,
            "errorType": None,
        }
        self.records.append(record)
        return record

    def spill(
        self,
        call_id: str,
        name: str,
        output: str,
        *,
        file: bool = True,
        digest: bool = True,
        stored: str | None = None,
    ) -> dict[str, Any]:
        """A result over the threshold: its file in `tool-results/` (unless `file` is False:
        deleted since) and its stub as the result (`digest=False`: 0.21's, with none).
        `stored`: what the file holds instead of `output` (an edit after the fact)."""
        data = output.encode("utf-8")
        fname = f"{call_id}.txt"
        if file:
            self.results.mkdir(parents=True, exist_ok=True)
            (self.results / fname).write_bytes((stored if stored is not None else output).encode())
        text = stub(
            self.foreign_path(fname),
            kb=size_kb(len(data)),
            digest=hashlib.sha256(data).hexdigest() if digest else None,
            preview=preview_of(output),
        )
        return self.tool_result(call_id, name, text)

    def not_persisted(self, call_id: str, name: str, output: str, note: str) -> dict[str, Any]:
        """A result over the threshold whose file could not be written: the untagged stub."""
        data = output.encode("utf-8")
        text = stub(
            note,
            kb=size_kb(len(data)),
            digest=hashlib.sha256(data).hexdigest(),
            preview=preview_of(output),
        )
        return self.tool_result(call_id, name, text)

    def budget_cut(self, call_id: str, name: str, output: str, budget: int) -> dict[str, Any]:
        """A result cut by its batch's budget (`fitText`), its whole in `<call_id>.txt`."""
        fname = f"{call_id}.txt"
        self.results.mkdir(parents=True, exist_ok=True)
        (self.results / fname).write_bytes(output.encode("utf-8"))
        return self.tool_result(call_id, name, fit_text(output, budget, [self.foreign_path(fname)]))

    def compression(self, summary: str, before: int, after: int) -> dict[str, Any]:
        """An automatic compression (`recordChatCompression`): the history starts over."""
        record = self._base("system")
        record["subtype"] = "chat_compression"
        record["systemPayload"] = {
            "info": {
                "originalTokenCount": before,
                "newTokenCount": after,
                "compressionStatus": 1,
                "originalTokenCountIsEstimated": False,
                "newTokenCountIsEstimated": True,
                "triggerReason": "auto",
            },
            "compressedHistory": [
                {"role": "user", "parts": [{"text": summary}]},
                {"role": "model", "parts": [{"text": "Got it. Thanks for the context!"}]},
            ],
            "completedToolCallIds": [],
        }
        self.records.append(record)
        return record

    def system(self, subtype: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Another system record (`recordUiTelemetryEvent` and the like): never sent."""
        record = self._base("system")
        record["subtype"] = subtype
        record["systemPayload"] = payload
        self.records.append(record)
        return record

    def rewind(self, to: str | None) -> dict[str, Any]:
        """A rewind (`rewindRecording`): the chain goes back to `to` (a record's uuid)."""
        self._last = to
        record = self._base("system")
        record["subtype"] = "rewind"
        record["systemPayload"] = {"targetTurnIndex": 0}
        self.records.append(record)
        return record

    def write(self) -> Path:
        """Write the session file (compact JSON, one record a line, as Node writes it)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(
            json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in self.records
        )
        self.path.write_text(body, encoding="utf-8")
        return self.path

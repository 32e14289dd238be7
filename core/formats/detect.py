"""Which format a transcript file is in, decided from its first lines.

The answer must come before anything is parsed in earnest: a Claude Code
session read as a reference transcript is one `malformed-line` error per line,
which is noise, not a finding. So the first lines are sniffed — each parsed
as JSON and matched against each format's signature — and the first line that
matches one decides. A line too long to read whole (Claude Code writes
multi-megabyte lines) is matched by its keys in the bytes read so far.

A file none of them matches is `NotATranscript`, one message naming what was
expected, instead of a finding per line.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from transcript_view.core.compressed import CompressedError, is_zstd, read_head, unreadable
from transcript_view.core.documents import is_chat_document, read_lines
from transcript_view.core.envelopes import ENVELOPE_VERSION, KNOWN_TYPES
from transcript_view.core.opencode_store import KIND as OPENCODE_KIND
from transcript_view.core.opencode_store import (
    StoreError,
    address,
    has_session,
    is_sqlite,
    is_storage_session,
)
from transcript_view.core.transcript import TranscriptError, open_readonly

#: How much of the start of a file is read to decide (lines beyond are not needed).
SNIFF_BYTES = 1 << 20
#: How many non-blank lines are tried before giving up.
SNIFF_LINES = 64


class Format(StrEnum):
    """A transcript format, by the name `--format` takes and `--check --json` prints."""

    REFERENCE = "reference"
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    QWEN = "qwen"
    GEMINI = "gemini"
    OPENCODE = "opencode"
    COPILOT = "copilot"

    @property
    def label(self) -> str:
        """The format as a person names it."""
        return _TITLES[self]

    @property
    def agent(self) -> str:
        """The agent that writes this format ("Claude Code", "Codex", …)."""
        return _AGENTS[self]


_AGENTS = {
    Format.REFERENCE: "LLM::Agent",
    Format.CLAUDE_CODE: "Claude Code",
    Format.CODEX: "Codex",
    Format.QWEN: "Qwen Code",
    Format.GEMINI: "Gemini CLI",
    Format.OPENCODE: "OpenCode",
    Format.COPILOT: "Copilot CLI",
}

_TITLES = {
    Format.REFERENCE: "LLM::Agent transcript",
    Format.CLAUDE_CODE: "Claude Code session",
    Format.CODEX: "Codex rollout",
    Format.QWEN: "Qwen Code session",
    Format.GEMINI: "Gemini CLI session",
    Format.OPENCODE: "OpenCode session",
    Format.COPILOT: "Copilot CLI session",
}

#: Line types Claude Code writes (CLAUDE_CODE.md, "Lines"); more appear with most releases.
CLAUDE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "progress",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "custom-title",
        "ai-title",
        "last-prompt",
        "task-summary",
        "tag",
        "agent-name",
        "agent-color",
        "agent-setting",
        "pr-link",
        "attribution-snapshot",
        "speculation-accept",
        "mode",
        "worktree-state",
        "content-replacement",
    }
)
#: Keys only Claude Code's lines carry (one is enough, with a string `type`).
CLAUDE_KEYS = ("sessionId", "parentUuid", "uuid", "leafUuid", "isSidechain", "messageId")
#: `RolloutItem` tags of a Codex rollout (CODEX.md, "Lines").
CODEX_TYPES = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted", "item_completed"}
)


#: Record types of a Qwen Code session (OTHER_AGENTS.md, "Qwen Code").
QWEN_TYPES = frozenset({"user", "assistant", "tool_result", "system"})


def _is_qwen(obj: Mapping[str, Any]) -> bool:
    """A Qwen Code record: Claude Code's keys, but Gemini's `Content` (`message.parts`) or
    a type or key Claude Code never writes."""
    kind = obj.get("type")
    if type(kind) is not str or kind not in QWEN_TYPES or "uuid" not in obj:
        return False
    if "sessionId" not in obj or "parentUuid" not in obj:
        return False
    message = obj.get("message")
    return (
        kind == "tool_result"
        or "systemPayload" in obj
        or (isinstance(message, Mapping) and "parts" in message and "content" not in message)
    )


#: Message types of a Gemini CLI session (`ConversationRecordExtra`).
GEMINI_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})


def _is_gemini(obj: Mapping[str, Any]) -> bool:
    """A Gemini CLI session line: its metadata (`sessionId` and `projectHash`), a message
    (`id`, `timestamp`, a type of its own, `content`; no Claude Code key), or a patch."""
    if "projectHash" in obj and "sessionId" in obj and "type" not in obj:
        return True
    if "$rewindTo" in obj or "$set" in obj:
        return len(obj) == 1
    kind = obj.get("type")
    return (
        type(kind) is str
        and kind in GEMINI_TYPES
        and isinstance(obj.get("id"), str)
        and "timestamp" in obj
        and "content" in obj
        and not any(k in obj for k in CLAUDE_KEYS)
    )


def _is_reference(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("type")
    return obj.get("v") == ENVELOPE_VERSION and type(kind) is str and kind in KNOWN_TYPES


def _is_claude(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("type")
    if not isinstance(kind, str) or "v" in obj or "payload" in obj:
        return False
    return any(k in obj for k in CLAUDE_KEYS) and (kind in CLAUDE_TYPES or "sessionId" in obj)


def _is_opencode(obj: Mapping[str, Any]) -> bool:
    """A line of the copy an OpenCode session is read through (`core.opencode_store`)."""
    return obj.get(OPENCODE_KIND) in ("session", "message", "part")


def _is_copilot(obj: Mapping[str, Any]) -> bool:
    """A Copilot CLI event: a dotted `type` (`session.start`, `user.message`, …), an object of
    `data`, and the envelope's `id` and `parentId` (null for the first)."""
    kind = obj.get("type")
    return (
        type(kind) is str
        and "." in kind
        and isinstance(obj.get("data"), Mapping)
        and "parentId" in obj
        and isinstance(obj.get("id"), str)
    )


def _is_codex(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("type")
    return (
        type(kind) is str
        and kind in CODEX_TYPES
        and isinstance(obj.get("payload"), Mapping)
        and "timestamp" in obj
    )


#: Each format's test of one parsed line, tried in this order.
SIGNATURES: tuple[tuple[Format, Callable[[Mapping[str, Any]], bool]], ...] = (
    (Format.REFERENCE, _is_reference),
    (Format.CODEX, _is_codex),
    (Format.QWEN, _is_qwen),
    (Format.GEMINI, _is_gemini),
    (Format.OPENCODE, _is_opencode),
    (Format.COPILOT, _is_copilot),
    (Format.CLAUDE_CODE, _is_claude),
)

# For a first line longer than what is read: the keys it starts with.
_PREFIX_SIGNATURES = (
    (Format.REFERENCE, re.compile(rb'"v"\s*:\s*1\s*[,}]')),
    (
        Format.CODEX,
        re.compile(rb'"type"\s*:\s*"(?:' + "|".join(sorted(CODEX_TYPES)).encode() + rb')"'),
    ),
    # Qwen Code's records open with these keys, in this order (`createBaseRecord`).
    (Format.QWEN, re.compile(rb'^\{\s*"uuid"\s*:\s*"[^"]*"\s*,\s*"parentUuid"\s*:')),
    # Gemini CLI's metadata line, and its messages (`id`, `timestamp`, `type`, in that order).
    (Format.GEMINI, re.compile(rb'^\{"sessionId":"[^"]*","projectHash":')),
    (Format.GEMINI, re.compile(rb'^\{"id":"[^"]*","timestamp":"[^"]*","type":"(?:user|gemini)"')),
    # The lines an OpenCode session is read as (`core.opencode_store`).
    (Format.OPENCODE, re.compile(rb'^\{"opencode":"(?:session|message|part)"')),
    # Copilot CLI's events: a dotted type, then its data (1.0.102 writes them in this order).
    (Format.COPILOT, re.compile(rb'^\{"type":"[a-z_]{2,40}\.[a-z_.]{2,60}","data":\{')),
    (Format.CLAUDE_CODE, re.compile(rb'"(?:sessionId|parentUuid|isSidechain)"\s*:')),
)


@dataclass(frozen=True, slots=True)
class Detection:
    """The outcome of sniffing a file."""

    format: Format | None
    """None: nothing in the first lines is any known format."""
    reason: str
    """How it was decided (or, for None, what the file's first line is instead)."""


class NotATranscript(TranscriptError):
    """A readable file that is none of the formats: one clear message, exit 2."""


def expected_message(path: Path, detection: Detection) -> str:
    """The one line a user sees for a file that is not a transcript."""
    return (
        f"{path}: not a transcript ({detection.reason}; expected the JSON lines of an "
        "LLM::Agent transcript or a Claude Code, Codex, Qwen Code, Gemini CLI, OpenCode or "
        "Copilot CLI session)"
    )


#: The keys of an older Gemini CLI chat, `session-*.json`: one JSON document
#: (`ConversationRecord`; OTHER_AGENTS.md, "Gemini CLI"), by the pretty-printed key lines
#: near its top when it is too big to parse within `SNIFF_BYTES`.
GEMINI_KEYS = ("sessionId", "projectHash", "messages")
_GEMINI_KEY_LINES = tuple(
    re.compile(rb'^\s*"' + key.encode() + rb'"\s*:', re.MULTILINE) for key in GEMINI_KEYS
)


def _document(first: bytes, head: bytes, complete: bool) -> str | None:
    """What a file whose first line is not JSON is, if it is one JSON document over several
    lines (pretty-printed) rather than JSON lines; None if it is not.

    Decided within the sniffed bytes: a file read whole is parsed whole; a bigger one
    only starts like a document (its first line opens an object or a list alone).
    """
    if complete:
        try:
            value = json.loads(head)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
        whole = "it is one JSON document, not JSON lines"
        if isinstance(value, dict) and all(k in value for k in GEMINI_KEYS):
            return f"{whole}: an older Gemini CLI chat (session-*.json)"
        return whole
    if first.strip() not in (b"{", b"["):
        return None
    looks = "it starts like one JSON document written over many lines, not JSON lines"
    if all(key.search(head, 0, 65536) for key in _GEMINI_KEY_LINES):
        return f"{looks}: an older Gemini CLI chat (session-*.json)"
    return looks


def _describe(line: bytes, head: bytes, complete: bool) -> str:
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return _document(line, head, complete) or "its first line is not JSON"
    if isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:4])
        return f"its first line is a JSON object with keys {keys or 'none'}"
    return f"its first line is a JSON {type(value).__name__}"


def classify_line(obj: object) -> Format | None:
    """The format one parsed line belongs to, if it is any format's line."""
    if not isinstance(obj, Mapping):
        return None
    for fmt, test in SIGNATURES:
        if test(obj):
            return fmt
    return None


def _head_lines(head: bytes, complete: bool) -> Iterator[bytes]:
    """The lines of `head`, one at a time: the first few decide, not a split of it all.

    Unless `complete`, the last piece may be cut, and is kept only if it is
    all there is.
    """
    start = 0
    while start < len(head):
        end = head.find(b"\n", start)
        if end < 0:
            if complete or start == 0:
                yield head[start:]
            return
        yield head[start:end]
        start = end + 1


def sniff(head: bytes, *, complete: bool) -> Detection:
    """Decide from the first bytes of a file (`complete`: they are the whole file)."""
    first: bytes | None = None
    tried = 0
    for raw in _head_lines(head, complete):
        if not raw.strip():
            continue
        if first is None:
            first = raw
        tried += 1
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            obj = None
        fmt = classify_line(obj)
        if fmt is not None:
            return Detection(fmt, f"line {tried} is a {fmt.value} line")
        if tried >= SNIFF_LINES:
            break
    if first is None:
        # Empty, or blank lines only: nothing contradicts the reference format.
        return Detection(Format.REFERENCE, "the file has no lines yet")
    for fmt, pattern in _PREFIX_SIGNATURES:
        if pattern.search(first[:65536]):
            return Detection(fmt, f"its first line starts like a {fmt.value} line")
    return Detection(None, _describe(first, head, complete))


def detect(path: str | os.PathLike[str]) -> Detection:
    """Sniff the file at `path`; reads at most `SNIFF_BYTES`, writes nothing.

    A zstd-compressed file (Codex's `rollout-*.jsonl.zst`) is sniffed by its
    first `SNIFF_BYTES` decompressed (`core.compressed.read_head`).

    Raises:
        TranscriptError: the path cannot be opened as a regular file, or is a
            compressed file of which not one line can be decompressed.
    """
    p = path if isinstance(path, Path) else Path(path)
    stored = address(p) if not os.path.lexists(p) else None
    if stored is not None:  # `<database>/<session id>`: a session in OpenCode's database
        try:
            found = has_session(*stored)
        except StoreError as exc:
            raise TranscriptError(str(exc)) from None
        if not found:
            raise TranscriptError(f"{p}: the OpenCode database has no session {stored[1]!r}")
        return Detection(Format.OPENCODE, "it is a session in an OpenCode database")
    try:
        fd = open_readonly(p)
    except FileNotFoundError as exc:
        raise TranscriptError(f"{p}: no such file") from exc
    except OSError as exc:
        raise TranscriptError(f"{p}: {exc.strerror or exc}") from exc
    try:
        # Sized to the file: a buffer of SNIFF_BYTES for a small file cost more than
        # the rest of its detection (0.1 ms of a 128 KiB transcript's 1.2 ms check).
        # A size of 0 may be a file that has content all the same (procfs, some FUSE).
        head = os.pread(fd, min(SNIFF_BYTES, os.fstat(fd).st_size) or SNIFF_BYTES, 0)
        size = os.fstat(fd).st_size  # after: a file that grew meanwhile is not complete
        if is_zstd(head):
            head, complete = read_head(fd, SNIFF_BYTES)
            return sniff(head, complete=complete)
        if is_sqlite(head):
            try:
                has_session(p, "")  # says why, if it is no OpenCode database that can be read
            except StoreError as exc:
                raise TranscriptError(str(exc)) from None
            return Detection(None, "it is an OpenCode database: open it to list its sessions")
        if is_storage_session(p, head):
            return Detection(
                Format.OPENCODE, "it is a session of OpenCode's older storage tree"
            )
        if is_chat_document(head):  # an older Gemini CLI chat, read as its lines
            read_lines(fd)  # (one that does not parse is refused now, in one line)
            return Detection(
                Format.GEMINI, "it is an older Gemini CLI chat (session-*.json), one JSON document"
            )
    except CompressedError as exc:
        raise TranscriptError(unreadable(p, str(exc))) from None
    except OSError as exc:
        raise TranscriptError(f"{p}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    return sniff(head, complete=len(head) >= size)

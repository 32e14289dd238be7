"""An older Gemini CLI chat, one JSON document, read as the JSON lines Gemini CLI writes now.

Before 2026-04 Gemini CLI kept a session as `session-*.json`, one pretty-printed
document (`ConversationRecord`: `sessionId`, `projectHash`, `startTime`,
`lastUpdated`, `messages`, …; OTHER_AGENTS.md, "Gemini CLI"), and converts it to
JSON lines when the session is resumed. Everything here reads lines, so such a
document is read the way a compressed rollout is (`core.compressed.Inflated`):
through a private copy, never beside the session, written as the JSON lines
Gemini CLI's converter would give — the record's other keys on the first line
(its metadata line), then one message a line. Line N of what the viewer and
`--check` show is the copy's (line 1 the metadata, line k + 1 the k-th message).

A document is read whole to be converted (it is one JSON value): an older
chat is rewritten whole on every message, so they stay small.
"""

from __future__ import annotations

import json
import os
import re

from transcript_view.core.compressed import CompressedError

#: The keys an older chat has, each on a line of its own near its top (`JSON.stringify`
#: with an indent of 2), by which one is told without parsing it.
KEYS = ("sessionId", "projectHash", "messages")
_KEY_LINES = tuple(re.compile(rb'^\s*"' + key.encode() + rb'"\s*:', re.MULTILINE) for key in KEYS)
#: How much of a document's start is searched for its keys.
KEY_BYTES = 64 << 10


def is_chat_document(head: bytes) -> bool:
    """Whether a file starting with `head` is an older Gemini CLI chat: an object written over
    many lines (its first line `{` alone), its keys near its top."""
    first = head.split(b"\n", 1)[0].strip()
    return first == b"{" and all(k.search(head, 0, KEY_BYTES) for k in _KEY_LINES)


def as_lines(data: bytes) -> bytes:
    """The JSON lines of an older chat: its other keys on the first line, then its messages.

    Raises:
        CompressedError: it does not parse, or is not such a record (no list of messages).
    """
    try:
        record = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise CompressedError(f"the older Gemini CLI chat does not parse as JSON ({exc})") from None
    messages = record.get("messages") if isinstance(record, dict) else None
    if not isinstance(messages, list):
        raise CompressedError("the document has no list of messages: not a Gemini CLI chat")
    meta = {k: v for k, v in record.items() if k != "messages"}
    lines = [meta, *messages]
    return b"".join(
        json.dumps(x, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        + b"\n"
        for x in lines
    )


def read_lines(fd: int) -> tuple[bytes, int]:
    """The JSON lines of the older chat in `fd` (read whole, with `pread`), and its size.

    Raises:
        CompressedError: it does not parse, or is not such a record.
    """
    chunks = []
    size = 0
    while piece := os.pread(fd, 1 << 20, size):
        chunks.append(piece)
        size += len(piece)
    return as_lines(b"".join(chunks)), size


class DocumentDecoder:
    """A `core.compressed.Decoder` of an older chat's document in `fd`: its JSON lines."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.consumed = 0
        self._out: bytes | None = None
        self._at = 0

    def read(self, n: int) -> bytes:
        """Up to `n` bytes of the lines; `b""` at their end (the document is read whole first).

        Raises:
            CompressedError: the document is not an older chat that parses.
        """
        if self._out is None:
            self._out, self.consumed = read_lines(self._fd)
        piece = self._out[self._at : self._at + n]
        self._at += len(piece)
        return piece

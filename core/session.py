"""Writing transcripts the way the reference lays them out, and the settle path.

`Session` creates a transcript with a `session-meta` line and appends one
canonical JSON envelope per line (sorted keys, the reference's escaping, uuid4
ids, microsecond UTC timestamps), flushed line by line so a crash can tear at
most the last line. `Session.settle` is the reference loop's artifact seam:
measure, store the full result first, compute the excerpt once, append the tool
message, then the `tool-settled` line whose digest is over that same excerpt.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from transcript_view.core import graphemes
from transcript_view.core.artifacts import (
    COULD_NOT_BE_STORED,
    NOWHERE_TO_PUT_IT,
    Store,
    artifact_dir_for,
    content_digest,
    elided_chars,
    head_tail_sizes,
    stored_marker,
    to_bytes,
    unstored_marker,
)
from transcript_view.core.canonical import canonical_json, data_digest
from transcript_view.core.envelopes import ENVELOPE_VERSION, TOOL_OUTCOMES

log = logging.getLogger("transcript_view.session")

#: The reference's default `max-observation-size`.
DEFAULT_LIMIT = 16_384
#: How much of an error result's first line the settle's `error` keeps.
ERROR_SUMMARY_CHARS = 200


def utc_timestamp() -> str:
    """`ts` as the reference writes it: UTC, six fractional digits, `Z`."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_id() -> str:
    """A fresh envelope id (uuid4, as the reference's `uuid-v4`)."""
    return str(uuid.uuid4())


def error_summary(content: str) -> str:
    """The first non-blank line of an error result, trimmed, at most 200 graphemes + `…`."""
    line = next((ln.strip() for ln in content.splitlines() if ln.strip()), "")
    if graphemes.count(line) > ERROR_SUMMARY_CHARS:
        return graphemes.head(line, ERROR_SUMMARY_CHARS) + "…"
    return line


@dataclass(frozen=True, slots=True)
class Observed:
    """What the settle path hands on: the content everyone sees, and the artifact key."""

    content: str
    artifact: dict[str, Any] = field(default_factory=dict)
    warning: str | None = None
    """Set when the full result could not be written (the excerpt says so)."""


def observe_result(content: str, limit: int | None, op_id: str, store: Store | None) -> Observed:
    """The artifact seam: excerpt an oversized result once, storing the full bytes first.

    Order matters and follows the reference: the size is measured, the file is
    written and closed, and only then is the marker (which names the file) built
    into the excerpt. A failed write is shielded: the model still gets an excerpt
    that says the result could not be stored. With no store (a run without a
    session) the marker says the result was not stored.

    With a store, whether to excerpt at all is decided from the head and tail
    alone, which only look at windows near the ends: the result has more than
    `limit` graphemes exactly when its first ``head_n`` and last ``tail_n``
    graphemes do not meet. The full count (needed only for the marker) is then
    left to `Store.store`, which overlaps it with hashing and writing the file:
    counted once, and on two cores nearly for free.
    """
    if limit is None or limit <= 0:
        return Observed(content)
    head_n, tail_n = head_tail_sizes(limit)
    warning: str | None = None
    if store is not None:
        head, tail = graphemes.head(content, head_n), graphemes.tail(content, tail_n)
        if len(head) + len(tail) >= len(content):
            return Observed(content)  # they meet: at most `limit` graphemes
        try:
            stored = store.store(op_id, content)
        except OSError as exc:
            warning = (
                "the full tool result could not be written to an artifact file; the model "
                f"was given the excerpt anyway, and the rest of the output is gone ({exc})"
            )
            log.warning("%s [op-id %s]", warning, op_id)
        else:
            elided = elided_chars(stored.chars, limit)
            marker = stored_marker(elided, stored)
            artifact = {**stored.as_dict(), "elided-chars": elided}
            return Observed(head + "\n" + marker + "\n" + tail, artifact)
    chars, head, tail = graphemes.cut(content, head_n, tail_n)
    if chars <= limit:
        return Observed(content)
    elided = elided_chars(chars, limit)
    data = to_bytes(content)
    why = COULD_NOT_BE_STORED if warning is not None else NOWHERE_TO_PUT_IT
    marker = unstored_marker(elided, len(data), content_digest(data), why)
    return Observed(head + "\n" + marker + "\n" + tail, {}, warning)


@dataclass(frozen=True, slots=True)
class Settled:
    """What `Session.settle` did: the excerpt, and the ids of the lines it wrote."""

    content: str
    artifact: dict[str, Any]
    message_id: str
    settle_id: str
    result_digest: str
    warning: str | None = None


class Session:
    """An append-only transcript writer, one flushed line per envelope.

    Use `Session.create` for a new transcript. Thread-safe: one lock guards the
    handle, so concurrent appends never interleave inside a line.
    """

    def __init__(self, path: Path, handle: Any, *, limit: int | None = DEFAULT_LIMIT) -> None:
        self.path = path
        self.limit = limit
        self.store: Store | None = Store(artifact_dir_for(path))
        self._fh = handle
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        meta: Mapping[str, Any] | None = None,
        *,
        limit: int | None = DEFAULT_LIMIT,
    ) -> Session:
        """Create a transcript with its `session-meta` line.

        Refuses a file that already has content: a transcript is append-only, and
        "create" over a real one would lose it or interleave two runs.
        """
        p = Path(path)
        if p.exists() and p.stat().st_size > 0:
            raise FileExistsError(f"{p} already has content; a transcript is append-only")
        p.parent.mkdir(parents=True, exist_ok=True)
        fh = open(p, "ab")  # noqa: SIM115 - the session owns the handle until close()
        session = cls(p, fh, limit=limit)
        session.append("session-meta", dict(meta or {}))
        return session

    def close(self) -> None:
        """Close the handle; later appends raise."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._fh.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the envelope writer -------------------------------------------------------

    def append(self, type: str, payload: Mapping[str, Any], *, id: str | None = None) -> str:
        """Append one envelope and flush it; return its id."""
        envelope_id = id or new_id()
        line = canonical_json(
            {
                "v": ENVELOPE_VERSION,
                "type": type,
                "id": envelope_id,
                "ts": utc_timestamp(),
                "payload": dict(payload),
            }
        )
        data = line.encode("utf-8", "surrogatepass") + b"\n"
        with self._lock:
            if self._closed:
                raise ValueError("the session is closed")
            self._fh.write(data)
            self._fh.flush()
        return envelope_id

    def append_message(
        self,
        role: str,
        content: str,
        *,
        tool_calls: Sequence[Mapping[str, Any]] | None = None,
        tool_call_id: str | None = None,
        sticky: bool = False,
        sysprompt: bool = False,
        depth: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> str:
        """Append a `message` line; extras never overwrite the message's own keys."""
        payload: dict[str, Any] = dict(extra or {})
        payload["role"] = role
        payload["content"] = content
        if tool_calls:
            payload["tool-calls"] = [dict(c) for c in tool_calls]
        if tool_call_id is not None:
            payload["tool-call-id"] = tool_call_id
        if sticky:
            payload["sticky"] = True
        if sysprompt:
            payload["sysprompt"] = True
        if depth is not None:
            payload["depth"] = depth
        return self.append("message", payload)

    def append_tool_dispatched(
        self,
        call_id: str,
        tool: str,
        arguments: str | Mapping[str, Any],
        *,
        idempotency: str | None = "unknown",
        run_id: str | None = None,
        round: int | None = None,
    ) -> str:
        """Append a `tool-dispatched` line; its envelope id is the operation id."""
        args: Any = dict(arguments) if isinstance(arguments, Mapping) else arguments
        payload: dict[str, Any] = {
            "call-id": call_id,
            "tool": tool,
            "arguments": args,
            "arguments-digest": data_digest(args),
        }
        if idempotency is not None:
            payload["idempotency"] = idempotency
        if run_id is not None:
            payload["run-id"] = run_id
        if round is not None:
            payload["round"] = round
        return self.append("tool-dispatched", payload)

    def append_tool_settled(
        self,
        op_id: str,
        outcome: str,
        *,
        reason: str | None = None,
        duration: float | None = None,
        result_digest: str | None = None,
        artifact: Mapping[str, Any] | None = None,
        error: str | None = None,
    ) -> str:
        """Append a `tool-settled` line; the outcome is one of the three the reference knows."""
        if outcome not in TOOL_OUTCOMES:
            raise ValueError(f"outcome must be one of {sorted(TOOL_OUTCOMES)}; got {outcome!r}")
        payload: dict[str, Any] = {"op-id": op_id, "outcome": outcome}
        if reason is not None:
            payload["reason"] = reason
        if result_digest is not None:
            payload["result-digest"] = result_digest
        if error is not None:
            payload["error"] = error
        if artifact:
            payload["artifact"] = dict(artifact)
        if duration is not None:
            payload["duration"] = round(duration * 1_000_000) / 1_000_000
        return self.append("tool-settled", payload)

    def append_compaction(
        self,
        summary: str,
        replaces_through_id: str,
        *,
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        fallback: bool = False,
    ) -> str:
        """Append a `compaction` line; its id is also the summary message's id on replay."""
        payload: dict[str, Any] = {
            "summary": summary,
            "replaces-through-id": replaces_through_id,
            "fallback": fallback,
        }
        if tokens_before is not None:
            payload["tokens-before"] = tokens_before
        if tokens_after is not None:
            payload["tokens-after"] = tokens_after
        return self.append("compaction", payload)

    def append_elision(self, items: Sequence[tuple[str, str]]) -> str:
        """Append an `elision` line stubbing the named messages' content."""
        if not items:
            raise ValueError("an elision that stubs nothing changes nothing")
        return self.append("elision", {"items": [{"id": i, "stub": s} for i, s in items]})

    # -- the settle path -------------------------------------------------------------

    def settle(
        self,
        op_id: str,
        call_id: str,
        content: str,
        *,
        is_error: bool = False,
        duration: float | None = None,
        limit: int | None = None,
    ) -> Settled:
        """Answer a dispatched operation: excerpt once, tool message, then the settle line.

        The excerpt string returned, written to the tool message and digested into
        `result-digest` is one and the same object. A failed artifact write never
        fails the call; it becomes the `could not be stored` marker and a logged
        warning.
        """
        observed = observe_result(
            content, self.limit if limit is None else limit, op_id, self.store
        )
        extra = {"is-error": True} if is_error else None
        message_id = self.append_message(
            "tool", observed.content, tool_call_id=call_id, extra=extra
        )
        digest = data_digest(observed.content)
        settle_id = self.append_tool_settled(
            op_id,
            "failed" if is_error else "completed",
            duration=duration,
            result_digest=digest,
            artifact=observed.artifact or None,
            error=error_summary(observed.content) if is_error else None,
        )
        return Settled(
            observed.content, observed.artifact, message_id, settle_id, digest, observed.warning
        )

"""Typed views of transcript envelopes, one class per reference `type`, plus unknown.

An envelope is kept as the dict it was parsed from; the classes only add typed,
tolerant accessors. Tolerant because a transcript is read, not validated: a
payload of the wrong shape still shows (with defaults), exactly as the
reference's reader turns `content => Nil` into `''` rather than refusing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from transcript_view.core.canonical import canonical_json

#: The envelope version this implementation reads. Any other `v` is refused for
#: that line: the envelope is the one thing that cannot be guessed at.
ENVELOPE_VERSION = 1

KNOWN_TYPES = frozenset(
    {
        "session-meta",
        "message",
        "grants",
        "compaction",
        "elision",
        "tool-dispatched",
        "tool-settled",
        "run-context",
    }
)
TOOL_OUTCOMES = frozenset({"completed", "failed", "outcome-unknown"})


def field_text(value: Any) -> str:
    """A payload field as text: `None` is empty, a string itself, anything else its JSON.

    Public because the analysis pass reads fields from the parsed object
    directly (an accessor call a field is too slow for millions of lines) and
    must read them exactly as these classes do.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return canonical_json(value)


def field_str(value: Any) -> str | None:
    """A payload field that is a string, else None (as the accessors read it)."""
    return value if isinstance(value, str) else None


_text = field_text
_opt_str = field_str


@dataclass(frozen=True, slots=True)
class Envelope:
    """One parsed transcript line: where it is and what it holds."""

    line: int
    """1-based physical line number in the file."""
    offset: int
    """Byte offset of the line's first byte."""
    data: Mapping[str, Any]
    """The whole JSON object of the line."""

    @property
    def id(self) -> str | None:
        """The envelope id (for a `tool-dispatched` line, the operation id)."""
        return _opt_str(self.data.get("id"))

    @property
    def type(self) -> str:
        """The envelope type (a reader only builds envelopes whose type is a string)."""
        return str(self.data.get("type"))

    @property
    def ts(self) -> str | None:
        """The UTC timestamp string, as written."""
        return _opt_str(self.data.get("ts"))

    @property
    def payload(self) -> Mapping[str, Any]:
        """The payload object, or an empty mapping when the line has none."""
        p = self.data.get("payload")
        return p if type(p) is dict or isinstance(p, Mapping) else {}


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call in an assistant turn's `tool-calls` (the model's wire form)."""

    id: str
    name: str
    arguments: str


class SessionMeta(Envelope):
    """The first line: whatever the application passed, unchanged."""

    __slots__ = ()


class Message(Envelope):
    """A conversation message: system, user, assistant or tool."""

    __slots__ = ()

    @property
    def role(self) -> str:
        """The role, `user` when absent (as the reference reads it)."""
        r = self.payload.get("role")
        return r if isinstance(r, str) else "user"

    @property
    def content(self) -> str:
        """The content: for a tool message, exactly what the model saw."""
        return _text(self.payload.get("content"))

    @property
    def tool_call_id(self) -> str | None:
        """The call a tool message answers."""
        return _opt_str(self.payload.get("tool-call-id"))

    @property
    def sticky(self) -> bool:
        """Marked sticky: survives compaction."""
        return bool(self.payload.get("sticky"))

    @property
    def sysprompt(self) -> bool:
        """The system prompt."""
        return bool(self.payload.get("sysprompt"))

    @property
    def depth(self) -> int | None:
        """Injection depth, when the message was injected at one."""
        d = self.payload.get("depth")
        return d if isinstance(d, int) and not isinstance(d, bool) else None

    @property
    def is_sticky(self) -> bool:
        """What compaction keeps: sticky, sysprompt, or with a depth (`Message.is-sticky`)."""
        return self.sticky or self.sysprompt or self.payload.get("depth") is not None

    @property
    def is_error(self) -> bool:
        """A tool result the provider flagged as an error."""
        return bool(self.payload.get("is-error"))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The assistant turn's tool calls, tolerant of odd shapes."""
        calls = self.payload.get("tool-calls")
        if not isinstance(calls, list):
            return ()
        out: list[ToolCall] = []
        for call in calls:
            if type(call) is not dict and not isinstance(call, Mapping):
                continue
            fn = call.get("function")
            fn = fn if type(fn) is dict or isinstance(fn, Mapping) else {}
            out.append(
                ToolCall(
                    id=_text(call.get("id")),
                    name=_text(fn.get("name")),
                    arguments=_text(fn.get("arguments")),
                )
            )
        return tuple(out)


class ToolDispatched(Envelope):
    """A tool operation handed to its provider; its envelope id is the operation id."""

    __slots__ = ()

    @property
    def op_id(self) -> str | None:
        """The operation id (the envelope's own id)."""
        return self.id

    @property
    def call_id(self) -> str:
        """The model's tool-call id this operation answers."""
        return _text(self.payload.get("call-id"))

    @property
    def tool(self) -> str:
        """The tool's name."""
        return _text(self.payload.get("tool"))

    @property
    def arguments(self) -> Any:
        """The canonical argument text (or a decoded object, for some providers)."""
        return self.payload.get("arguments")

    @property
    def arguments_digest(self) -> str | None:
        """sha256 of the canonical JSON of `arguments`."""
        return _opt_str(self.payload.get("arguments-digest"))


class ToolSettled(Envelope):
    """How a tool operation ended, with the digest of what the model saw."""

    __slots__ = ()

    @property
    def op_id(self) -> str | None:
        """The operation this settles."""
        return _opt_str(self.payload.get("op-id"))

    @property
    def outcome(self) -> str:
        """`completed`, `failed` or `outcome-unknown`."""
        return _text(self.payload.get("outcome"))

    @property
    def duration(self) -> float | None:
        """Seconds the operation took."""
        d = self.payload.get("duration")
        return float(d) if isinstance(d, int | float) and not isinstance(d, bool) else None

    @property
    def error(self) -> str | None:
        """The first line of an error result."""
        return _opt_str(self.payload.get("error"))

    @property
    def reason(self) -> str | None:
        """Why an operation ended without a result (deadline, cancelled)."""
        return _opt_str(self.payload.get("reason"))

    @property
    def result_digest(self) -> str | None:
        """sha256 of the canonical JSON of the tool message content (the excerpt)."""
        return _opt_str(self.payload.get("result-digest"))

    @property
    def artifact(self) -> Mapping[str, Any] | None:
        """The `{file, digest, bytes, chars, elided-chars}` key, when the result was stored."""
        a = self.payload.get("artifact")
        return a if isinstance(a, Mapping) else None


class Compaction(Envelope):
    """Earlier turns replaced by a summary (sticky messages kept)."""

    __slots__ = ()

    @property
    def summary(self) -> str:
        """The summary text that replaces the compacted turns."""
        return _text(self.payload.get("summary"))

    @property
    def replaces_through_id(self) -> str | None:
        """The last message id the summary replaces."""
        return _opt_str(self.payload.get("replaces-through-id"))


class Elision(Envelope):
    """Messages whose content is replaced by a stub from this line on."""

    __slots__ = ()

    @property
    def items(self) -> list[tuple[str, str]]:
        """(message id, stub) pairs; malformed items are skipped."""
        items = self.payload.get("items")
        if not isinstance(items, list):
            return []
        out = []
        for item in items:
            if isinstance(item, Mapping) and isinstance(item.get("id"), str):
                out.append((str(item["id"]), _text(item.get("stub"))))
        return out


class Grants(Envelope):
    """The whole permission snapshot; the last one wins."""

    __slots__ = ()


class RunContext(Envelope):
    """The facts and sections a run was given."""

    __slots__ = ()


class Subagent(Envelope):
    """A `subagent-*` record of a child run."""

    __slots__ = ()


class Unknown(Envelope):
    """A type this reader does not know: kept and shown, never dropped."""

    __slots__ = ()


_CLASSES: dict[str, type[Envelope]] = {
    "session-meta": SessionMeta,
    "message": Message,
    "tool-dispatched": ToolDispatched,
    "tool-settled": ToolSettled,
    "compaction": Compaction,
    "elision": Elision,
    "grants": Grants,
    "run-context": RunContext,
}


def make_envelope(line: int, offset: int, data: Mapping[str, Any]) -> Envelope:
    """The typed envelope for a parsed line object (whose `type` is a string)."""
    kind = str(data.get("type"))
    cls = _CLASSES.get(kind)
    if cls is None:
        cls = Subagent if kind.startswith("subagent-") else Unknown
    return cls(line=line, offset=offset, data=data)

"""A reference transcript's line as the pass decodes it: the fields it reads, and no others.

The analysis pass (`core.analysis._map_into`) reads a handful of an
envelope's fields, and the viewer's row count of a line (`Measure`) a few
more; decoding a line into this shape instead of a whole dict skips every
other field (timestamps, a run context's fields) and
makes no dict for the envelope or its payload. It is the reference format's
counterpart of the Claude Code and Codex shapes (`core.formats.claude_lines`,
`core.formats.codex`), decoded by the same rule (`core.decoding.decode_line`:
a short ASCII line as this shape, any other line parsed whole and converted).

Every field takes any JSON value, as `dict.get` does, so the pass reads a field
as it read the dict: `type(x) is ToolCall` where it asked `isinstance(x,
Mapping)`, None where the key was missing or null. A payload that is no JSON
object is `EMPTY_PAYLOAD`'s fields, as an empty mapping's were.
"""

from __future__ import annotations

from typing import Any

import msgspec

_Other = list[Any] | str | int | float | bool | None


class Function(msgspec.Struct, gc=False):
    """A tool call's `function`: what it calls, and with what (JSON text)."""

    name: Any = None
    arguments: Any = None


class ToolCall(msgspec.Struct, gc=False):
    """One of an assistant message's `tool-calls`."""

    id: Any = None
    function: Function | _Other = None
    """`{"name", "arguments"}`: an estimate of the context counts the arguments."""


class Payload(msgspec.Struct, gc=False, rename="kebab"):
    """An envelope's `payload`: every field any envelope type's rules read."""

    # message
    role: Any = None
    content: Any = None
    sticky: Any = None
    sysprompt: Any = None
    depth: Any = None
    tool_calls: list[ToolCall | _Other] | dict[str, Any] | str | int | float | bool | None = None
    tool_call_id: Any = None
    is_error: Any = None
    usage: Any = None
    """The backend's token counts, where it gave them (the context's size: `core.calls`)."""
    injected: Any = None
    # tool-dispatched
    call_id: Any = None
    arguments: Any = None
    arguments_digest: Any = None
    # tool-settled
    op_id: Any = None
    artifact: Any = None
    result_digest: Any = None
    error: Any = None
    reason: Any = None
    # compaction, elision
    replaces_through_id: Any = None
    summary: Any = None
    tokens_before: Any = None
    tokens_after: Any = None
    items: Any = None


class Line(msgspec.Struct, gc=False):
    """One line of a reference transcript, as far as the pass and the row count read it."""

    type: Any = None
    v: Any = None
    id: Any = None
    payload: Payload | _Other = None


#: What a payload that is no JSON object reads as: no field set.
EMPTY_PAYLOAD = Payload()

decode = msgspec.json.Decoder(Line).decode
"""A line's bytes as a `Line` (what `core.decoding.decode_line` takes for short ASCII lines)."""

"""The parts of a message as Google's GenAI `Content` has them, which Gemini CLI and Qwen Code
(its fork) both record: text, thoughts, function calls and function responses.

Declared once, for both readers (`core.formats.gemini`, `core.formats.qwen`): only the
fields their rules read, each taking any JSON value (`core.decoding`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

#: Any JSON value that is not an object (an object is the shape's own).
Other = list[Any] | str | int | float | bool | None


class Response(msgspec.Struct, gc=False):
    """A `functionResponse`'s `response`: `output` is the text the model was given."""

    output: Any = None
    error: Any = None


class FunctionResponse(msgspec.Struct, gc=False):
    """A tool's result, as the model got it."""

    id: Any = None
    name: Any = None
    response: Response | Other = None


class FunctionCall(msgspec.Struct, gc=False):
    """A tool call the model made."""

    id: Any = None
    name: Any = None
    args: Any = None


class Part(msgspec.Struct, gc=False):
    """One part of a message: text, a thought, a call or a result."""

    text: Any = None
    thought: Any = None
    functionCall: FunctionCall | Other = None
    functionResponse: FunctionResponse | Other = None


#: A message's parts: a list of them, one part alone (an object), or a string.
Parts = list[Part | Other] | dict[str, Any] | str | int | float | bool | None


def response_output(response: object) -> str | None:
    """A `functionResponse`'s text as the model got it: `response.output`, else its `error`
    (a tool that failed), from the shape or from a mapping parsed otherwise."""
    if type(response) is Response:
        out = response.output if response.output is not None else response.error
    elif isinstance(response, Mapping):
        out = response.get("output", response.get("error"))
    else:
        return None
    return out if type(out) is str else None

"""How the agents' readers count a value for an estimate of the context: written once.

Where a file records no size for a model call, its size is estimated from the
characters of what the model was sent (`core.calls`). A tool call's arguments
reach the model as JSON, so they count as the characters of their compact JSON
text (as `JSON.stringify` writes it, which Gemini CLI, Qwen Code, OpenCode and
Copilot CLI all use). Claude Code's and Codex's readers keep their own, older
counts, which their figures were measured with.
"""

from __future__ import annotations

import msgspec

_encode = msgspec.json.encode


def json_chars(value: object) -> int:
    """The characters of `value` as compact JSON (0 for none, or one that cannot be written).

    Counted in characters, not bytes; most arguments are ASCII, whose length is
    the bytes' (the decode is skipped: it runs for every tool call of every line).
    """
    if value is None:
        return 0
    try:
        encoded = _encode(value)
    except (TypeError, msgspec.EncodeError):
        return 0
    return len(encoded) if encoded.isascii() else len(encoded.decode("utf-8", "replace"))

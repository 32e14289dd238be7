"""Canonical JSON, byte-identical to the reference's encoder (JSON::Fast, sorted keys).

Two digests in a transcript are over JSON text rather than raw bytes:
`result-digest` (the tool message content) and `arguments-digest`. To verify
them, and to write transcripts a Raku reader accepts byte for byte, strings must
be rendered exactly as the reference renders them:

- `"` and `\\` escaped; LF, CR, TAB as `\\n`, `\\r`, `\\t`;
- every other character below U+0020 as `\\u00xx` with lower-case hex;
- `/`, DEL, C1 controls, U+2028/2029 and every other BMP character raw;
- every character above U+FFFF as a surrogate pair in UPPER-case hex;
- objects with sorted keys, no whitespace.

Python's `json.dumps` differs on three of those (it writes `\\b`/`\\f`, lower-case
surrogates, and escapes nothing it need not when `ensure_ascii=False`), hence
this module.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

# Characters that need an escape: C0 controls, quote, backslash, anything beyond
# the BMP (rendered as a surrogate pair) and lone surrogates (only reachable from
# `surrogateescape`-decoded bytes; rendered as their own `\\uDCxx` escape).
_NEEDS_ESCAPE = re.compile('[\\x00-\\x1f"\\\\\ud800-\udfff\U00010000-\U0010ffff]')
_NAMED = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if code < 0x20:
        return f"\\u{code:04x}"
    if code <= 0xFFFF:  # a lone surrogate
        return f"\\u{code:04X}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}"


def canonical_string(text: str) -> str:
    """The JSON text of one string as the reference renders it, quotes included."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def canonical_json(value: Any) -> str:
    """`value` rendered with sorted keys, no whitespace and the reference's escaping.

    Like the reference's `canonical-json`, anything that is not plain data (not a
    mapping, sequence, string, number, boolean or None) is stringified rather than
    refused: this is a comparison key on a hot path, not a serialiser.
    """
    if isinstance(value, str):
        return canonical_string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)
    if isinstance(value, Mapping):
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{canonical_string(k)}:{canonical_json(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    return canonical_string(str(value))


def data_digest(value: Any) -> str:
    """sha256 (hex) of `canonical_json(value)`: the reference's `data-digest`."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()

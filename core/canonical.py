"""Canonical JSON, byte-identical to the reference encoder (PLACEHOLDER being replaced)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

_ESC = re.compile('[\\x00-\\x1f"\\\\\U00010000-\U0010ffff]')
_NAMED = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    o = ord(ch)
    if o < 0x20:
        return f"\\u{o:04x}"
    o -= 0x10000
    return f"\\u{0xD800 + (o >> 10):04X}\\u{0xDC00 + (o & 0x3FF):04X}"


def canonical_string(text: str) -> str:
    """JSON text of one string, as the reference renders it (quotes included)."""
    return '"' + _ESC.sub(_escape, text) + '"'


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, reference string escaping."""
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
    if isinstance(value, dict):
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(canonical_string(k) + ":" + canonical_json(v) for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    return canonical_string(str(value))


def data_digest(value: Any) -> str:
    """sha256 hex of `canonical_json(value)` as UTF-8."""
    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()

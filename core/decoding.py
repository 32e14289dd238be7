"""How every format decodes a line: into its shape, a msgspec `Struct` of the fields it reads.

A format declares the fields its pass (and the viewer's row count) read, each
accepting any JSON value, and decodes each line once into that shape, which
skips every other field and makes no dict: the reference format's
`core.envelope_shape.Line`, Claude Code's `formats.claude_lines.Line`, Codex's
`formats.codex.Line`. The rule of when that decode may be taken, and what
stands in for it otherwise, is here, once; a pass's loop may write it out
inline where it runs once a line, and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin

import msgspec

from transcript_view.core.transcript import LineProblem, parse_json_line

S = TypeVar("S", bound=msgspec.Struct)

#: A line shorter than this cannot hide what a shape's decode does not check
#: (see `decode_line`); longer ones are parsed whole.
SHORT_LINE = 1800



def decode_line(
    decode: Callable[[bytes], S],
    shape: type[S],
    raw: bytes,
    line: int,
    offset: int,
    *,
    is_last: bool,
) -> S | LineProblem | None:
    """One line as `shape`, or its problem, or None for a blank line (`parse_json_line`'s).

    msgspec decodes a `Struct` by skipping the fields it does not declare, and
    a skipped value is checked less than a decoded one: its strings' UTF-8 is
    not validated, its integers are not held to Python's 4,300-digit limit,
    and its nesting is not seen. A short ASCII line can hide none of those (it
    has no non-ASCII bytes, no room for 4,301 digits or for 900 levels of
    nesting), so its decode is taken whenever it succeeds; every other line is
    parsed whole by `parse_json_line` and converted, which gives the same
    values (a shape accepts any JSON value in every field it declares, so the
    conversion never refuses one). `tests/formats/test_session_passes.py`
    and `tests/core/test_fast_path.py` hold the two to that.
    """
    if len(raw) < SHORT_LINE and raw.isascii():
        try:
            return decode(raw)
        except Exception:  # DecodeError, ValidationError: the standard parser says why
            pass
    return parse_whole(shape, raw, line, offset, is_last=is_last)


def parse_whole(
    shape: type[S], raw: bytes, line: int, offset: int, *, is_last: bool
) -> S | LineProblem | None:
    """`decode_line` of a line its shape's decode does not vouch for: parsed whole, converted."""
    parsed = parse_json_line(raw, line, offset, is_last=is_last)
    if parsed is None or isinstance(parsed, LineProblem):
        return parsed
    return as_shape(parsed, shape)


def as_shape(value: Mapping[str, Any], shape: type[S]) -> S:
    """A JSON object already parsed, as `shape` (which accepts any value in every field)."""
    try:
        return msgspec.convert(value, shape)
    except UnicodeEncodeError:
        # A key with a lone surrogate (the standard parser takes `"\ud800"`), which
        # msgspec cannot match against field names. No field is named so.
        return msgspec.convert(_declared(value, shape), shape)


def _declared(value: object, kind: object) -> object:
    """`value` without the keys its shape does not declare, in every object made into a shape.

    A shape ignores every other key, so leaving them out changes nothing it
    holds; a value of no shape (`Any`) is left as it is.
    """
    if type(value) is dict:
        shape = _shape_in(kind)
        if shape is None:
            return value
        types = _field_types(shape)
        return {k: _declared(v, types[k]) for k, v in value.items() if k in types}
    if type(value) is list:
        for member in _members(kind):
            if get_origin(member) is list:
                (item,) = get_args(member)
                return [_declared(v, item) for v in value]
    return value


def _members(kind: object) -> tuple[object, ...]:
    return get_args(kind) if get_origin(kind) in (Union, UnionType) else (kind,)


def _shape_in(kind: object) -> type[msgspec.Struct] | None:
    for member in _members(kind):
        if isinstance(member, type) and issubclass(member, msgspec.Struct):
            return member
    return None


@cache
def _field_types(shape: type[msgspec.Struct]) -> dict[str, object]:
    return {f.encode_name: f.type for f in msgspec.structs.fields(shape)}

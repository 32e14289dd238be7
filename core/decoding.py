"""How every format decodes a line: into its shape, a msgspec `Struct` of the fields it reads.

A format declares the fields its pass (and the viewer's row count) read, each
accepting any JSON value, and decodes each line once into that shape, which
skips every other field and makes no dict: the reference format's
`core.envelope_shape.Line`, Claude Code's `formats.claude_lines.Line`, Codex's
`formats.codex.Line`. The rule of when that decode may be taken, and what
stands in for it otherwise, is here, once: `decode_line` for one line, and
`decoded_lines`, the loop every format's map reads its lines through.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin

import msgspec

from transcript_view.core.transcript import LineProblem, parse_json_line

S = TypeVar("S", bound=msgspec.Struct)


def field(value: object, name: str) -> object:
    """A field of a decoded value: the pass's typed shape (a `Struct`, checked first, as
    it is what a pass mostly meets) or a mapping decoded otherwise; None for anything else,
    or a field it does not have. What a format's reader asks of a value of either kind."""
    if isinstance(value, msgspec.Struct):
        return getattr(value, name, None)
    return value.get(name) if isinstance(value, Mapping) else None


Measure = Callable[[bytes], int]
"""A caller's own number for each line, taken where a pass maps it: `(the line's bytes,
without its LF) -> int`. The viewer counts the line's rows by building it
(`viewer.measure.BlockRows`), in the worker that maps the line rather than on the
screen's thread after the pass. It is sent to the workers with the pass (so it
pickles, for `spawn`), and keeps nothing of the lines it is given but what one
says of the next: a format read through `formats.batches.fold_mapped` gives it
each batch's lines in file order, after the line before the batch (whose number
is dropped), so a line's number may depend on the line before it (the viewer
folds a run of an agent's records into one row: the first takes one, the
others none)."""

Measured = Callable[[int, "array[int]"], None]
"""Told a batch's measures, in file order: `(first line, one int a line)`."""

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
    and `tests/core/test_fast_path.py` hold the two to that. The rule is
    written once, in `decoded_lines`; this is that loop over one line.
    """
    problems: list[LineProblem] = []
    last = line if is_last else 0
    lines = decoded_lines(((line, offset, (raw,)),), decode, shape, problems, last)
    for _, _, _, obj in lines:
        return obj
    return problems[0] if problems else None


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


Whole = Callable[[bytes, int, int, bool], "S | LineProblem | None"]
"""A format's decode of a line its shape's decode does not vouch for: `(the line's bytes,
its number, its offset, whether it is the file's last line with content) -> its shape,
its problem, or None for a blank line` (what `parse_whole` is for most formats)."""


def decoded_lines(
    chunks: Iterable[tuple[int, int, Sequence[bytes]]],
    decode: Callable[[bytes], S],
    shape: type[S],
    problems: list[LineProblem],
    last_content: int = 0,
    whole: Whole[S] | None = None,
) -> Iterator[tuple[int, int, bytes, S]]:
    """Every line of `chunks` decoded once, as `decode_line` decodes one: `(line, offset,
    bytes, shape)`, in order; a line that is a problem goes to `problems` instead, and a
    blank line is skipped.

    `chunks` are `Transcript.raw_chunks`' runs: `(first line, its offset, [bytes, ...])`.
    The rule written once as the loop every format's map runs, once a line, which is why
    it is a loop and not `decode_line` called a line at a time. `last_content` is the
    file's last line with content (a bad line there is a torn tail; 0: none is).
    `whole` stands in for `parse_whole` where a format reads a line whole its own way.
    """
    short = SHORT_LINE
    add_problem = problems.append
    for first, after, items in chunks:
        for line, raw in enumerate(items, first):
            size = len(raw)
            offset, after = after, after + size + 1
            obj: S | None = None
            if size < short and raw.isascii():
                try:
                    obj = decode(raw)
                except Exception:  # DecodeError, ValidationError: the standard parser says why
                    obj = None
            if obj is None:
                got = (
                    parse_whole(shape, raw, line, offset, is_last=line == last_content)
                    if whole is None
                    else whole(raw, line, offset, line == last_content)
                )
                if got is None:
                    continue
                if isinstance(got, LineProblem):
                    add_problem(got)
                    continue
                obj = got
            yield line, offset, raw, obj

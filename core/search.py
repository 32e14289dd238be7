"""Finding the lines of a transcript that can hold a search query, at the speed of memory.

The viewer's search used to build every block of the document to look at its
rows: about 50 µs a line, a minute and a half for a 300 MB transcript. Most
lines cannot hold the query at all, and that can be told from their bytes:
`candidate_lines` reads the file a few megabytes at a time, lowers each chunk's
ASCII letters (`bytes.lower`) and looks for the query with `bytes.find` and a
compiled `re`, so a rare word in 256 MiB costs about half a second, all of it
in C. Match offsets become line numbers by counting the LFs between them
(`bytes.count`), never by a loop over lines in Python. The viewer then builds
only the candidates' blocks to find the rows that show the query.

It is a *sound prefilter*: every line whose JSON strings (keys and values, as
decoded) contain the query, casefolded, is among the lines it returns; it may
return lines that turn out not to. Why raw bytes are enough, and where they
are not:

- A JSON string holds a printable ASCII character literally unless it is
  escaped: `\\"`, `\\\\` and `\\/` are the short escapes of ASCII characters a
  query can hold, and any character may be written `\\uXXXX` (hex in either
  case). Writers differ: Python escapes every non-ASCII character as
  `\\uXXXX` (astral ones as a surrogate pair), JavaScript and Raku write UTF-8,
  Go escapes `<`, `>` and `&`, PHP escapes `/`.
- Case folding of ASCII is a byte operation (`bytes.lower`), of the rest it is
  not; and 19 non-ASCII characters (Unicode 14) fold to something holding
  ASCII ("ß" to "ss", "K" KELVIN SIGN to "k", "ﬁ" to "fi", "İ" to "i̇"...).
  `str.casefold` folds one character at a time, so each character of a match
  in a folded string comes from one character of the string as written.

So, for a query that casefolds to printable ASCII (`Pattern.literal`), a line
is a candidate when its bytes hold the query case-insensitively, or when it
holds one of the other ways a character of the query can be written (`\\uXXXX`
of either case of it, its short escape, or a non-ASCII character folding to
it) and its decoded strings, checked one by one, hold the query
(`line_holds`). Any other query (non-ASCII, controls) is found through one of
its characters, the *anchor*: lines holding any way of writing any character
that folds to the anchor get the same per-line check. A line that does not
parse as a JSON object is always a candidate when it is looked at (its raw
bytes are what the viewer shows for it).

Why that is sound: take a match of an ASCII needle in a folded string. If
every character it comes from is ASCII and written literally, those bytes
stand side by side in the line and lower to the needle: the raw match finds
it. Otherwise one of them is escaped or non-ASCII, so its escape or its UTF-8
bytes are in the line, and the per-line check decides exactly. For another
needle, the anchor's source character is in the line in one of those forms.

Numbers, `true`/`false`/`null` and the JSON syntax between strings are matched
as written in the file, and only by an ASCII query's raw match. The file is
read as whole lines of about `SEARCH_CHUNK` bytes; a longer line is read in
pieces that overlap by more than any match is long.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from transcript_view.core.transcript import LineProblem, Transcript, parse_json_line

#: Bytes read at a time: whole lines of about this much (a longer line is read in
#: pieces of this size). Large enough that per-chunk Python is noise, small enough
#: that one chunk's C calls (lower, find) hold the GIL for a few milliseconds only.
SEARCH_CHUNK = 4 << 20

#: JSON's two-character escapes, for the characters that have one.
_SHORT_ESCAPES = {
    '"': b'\\"',
    "\\": b"\\\\",
    "/": b"\\/",
    "\b": b"\\b",
    "\f": b"\\f",
    "\n": b"\\n",
    "\r": b"\\r",
    "\t": b"\\t",
}

#: No code point at or above this changes under `str.casefold` (the last cased
#: script, Adlam, ends at U+1E94B); `tests/core/test_search_scan.py` checks the
#: whole range, so a Unicode update that adds one fails there, not in a search.
FOLD_LIMIT = 0x20000


@functools.cache
def _folded_from() -> dict[str, frozenset[str]]:
    """Each character, and the characters whose casefold holds it (when they are not it)."""
    out: dict[str, set[str]] = {}
    for code in range(FOLD_LIMIT):
        c = chr(code)
        folded = c.casefold()
        if folded != c:
            for ch in folded:
                out.setdefault(ch, set()).add(c)
    return {ch: frozenset(cs) for ch, cs in out.items()}


def sources(ch: str) -> frozenset[str]:
    """Every character whose casefold holds `ch` (for `ch` a casefolded character).

    `sources("k")` is k, K and U+212A KELVIN SIGN; `sources("s")` includes "ß",
    "ſ" and the "ﬆ" ligature.
    """
    own = {ch} if ch in ch.casefold() else set()
    return frozenset(own | _folded_from().get(ch, frozenset()))


def _u_escape(c: str) -> str:
    """The hex after `\\u` that writes `c` in JSON, lower case (a surrogate pair for astral)."""
    code = ord(c)
    if code < 0x10000:
        return f"{code:04x}"
    code -= 0x10000
    return f"{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


@dataclass(frozen=True, slots=True)
class Pattern:
    """How to look for one query in a transcript's bytes (`compile_query`)."""

    needle: str
    """The query, casefolded: what a line's decoded strings are checked for."""
    literal: bytes | None
    """The needle's bytes, for a printable-ASCII needle: a line whose lowered bytes hold
    it is a candidate as it stands. None: every candidate goes through `line_holds`."""
    escapes: re.Pattern[bytes] | None
    """`\\uXXXX` escapes (lower-case hex) of the characters that can stand for the
    needle's (or the anchor's) characters."""
    tokens: tuple[bytes, ...]
    """Other ways of writing them: short escapes, raw bytes of non-ASCII characters."""
    overlap: int
    """Bytes a piece of a long line shares with the next, so no match straddles two."""

    def odd_finders(self, low: bytes, ascii_only: bool) -> list[Callable[[int], int]]:
        """`find(pos)` functions for every way of writing a character other than literally.

        `ascii_only`: the chunk is pure ASCII, so raw non-ASCII bytes cannot be in it.
        """
        finders: list[Callable[[int], int]] = []
        if self.escapes is not None:
            finders.append(_regex_finder(self.escapes, low))
        for token in self.tokens:
            if not (ascii_only and not token.isascii()):
                finders.append(_finder(token, low))
        return finders


#: Tokens this short are looked for by `re`: CPython 3.11's `bytes.find` takes about
#: three times as long as `re`'s literal search for a two-byte needle whose first
#: byte is common (a backslash, in JSON), and is faster for longer ones.
_SHORT_TOKEN = 3


@functools.cache
def _token_regex(token: bytes) -> re.Pattern[bytes]:
    return re.compile(re.escape(token))


def _regex_finder(rx: re.Pattern[bytes], low: bytes) -> Callable[[int], int]:
    search = rx.search

    def find(pos: int) -> int:
        m = search(low, pos)
        return m.start() if m is not None else -1

    return find


def _finder(token: bytes, low: bytes) -> Callable[[int], int]:
    """The fastest `find(pos)` for one literal token in `low`."""
    if len(token) <= _SHORT_TOKEN:
        return _regex_finder(_token_regex(token), low)
    return functools.partial(low.find, token)


def compile_query(query: str) -> Pattern | None:
    """The `Pattern` for `query`, or None for an empty one (nothing to find)."""
    needle = query.casefold()
    if not needle:
        return None
    if needle.isascii() and needle.isprintable():
        chars = set(needle)
        literal: bytes | None = needle.encode()
    else:
        literal = None
        non_ascii = [c for c in needle if not c.isascii()]
        chars = {non_ascii[0] if non_ascii else next(c for c in needle if not c.isprintable())}
    hexes: set[str] = set()
    tokens: set[bytes] = set()
    for ch in chars:
        for c in sources(ch):
            hexes.add(_u_escape(c))
            if c in _SHORT_ESCAPES:
                tokens.add(_SHORT_ESCAPES[c])
            if literal is not None and c.isascii():
                continue  # found by the literal match (lowered), or it is the needle's own
            if c == "\n" or 0xD800 <= ord(c) < 0xE000:
                continue  # LF ends the line; a lone surrogate is no UTF-8
            tokens.add(c.encode())
    escapes = None
    if hexes:
        alternatives = b"|".join(
            re.escape(h.encode()) for h in sorted(hexes, key=lambda h: (-len(h), h))
        )
        escapes = re.compile(rb"\\u(?:" + alternatives + rb")")
    longest = max([len(literal or b""), 12, *(len(t) for t in tokens)])
    return Pattern(needle, literal, escapes, tuple(sorted(tokens)), longest - 1)


def line_holds(raw: bytes, needle: str, line: int = 0, offset: int = 0) -> bool:
    """Whether a line's decoded JSON strings (keys and values) hold `needle` (casefolded).

    A line that is not a JSON object counts as holding it (a sound prefilter
    never drops a line it cannot read); a blank line holds nothing.
    """
    parsed = parse_json_line(raw, line, offset)
    if parsed is None:
        return False
    if isinstance(parsed, LineProblem):
        return True
    return _holds(parsed, needle)


def _holds(value: dict[str, Any], needle: str) -> bool:
    """Whether any key or string under `value` holds `needle` once casefolded."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            for key, child in item.items():
                if needle in key.casefold():
                    return True
                kind = type(child)
                if kind is str:
                    if needle in child.casefold():
                        return True
                elif kind is dict or kind is list:
                    stack.append(child)
        else:
            for child in item:
                kind = type(child)
                if kind is str:
                    if needle in child.casefold():
                        return True
                elif kind is dict or kind is list:
                    stack.append(child)
    return False


def _matching_lines(
    low: bytes, find: Callable[[int], int], first: int, out: dict[int, tuple[int, int]]
) -> None:
    """Add to `out` each line of `low` (line `first` at offset 0) holding a match of `find`.

    `out` maps the line number to its (start, end) in `low`. After a match the
    search goes on from the next line, so a line is looked at once however
    often it matches; line numbers come from counting the LFs in between.
    """
    line, counted, size = first, 0, len(low)
    pos = find(0)
    while pos != -1:
        line += low.count(b"\n", counted, pos)
        end = low.find(b"\n", pos)
        if end == -1:
            end = size
        if line not in out:
            out[line] = (low.rfind(b"\n", 0, pos) + 1, end)
        if end >= size:
            return
        counted = end
        pos = find(end + 1)


def chunk_candidates(pattern: Pattern, data: bytes, first: int, offset: int = 0) -> list[int]:
    """The candidate lines among whole lines `data` (LF-separated), line `first` first.

    `offset` is where `data` starts in the file (for the problems of lines that
    do not parse).
    """
    low = data.lower()
    found: dict[int, tuple[int, int]] = {}
    if pattern.literal is not None:
        _matching_lines(low, _finder(pattern.literal, low), first, found)
    odd: dict[int, tuple[int, int]] = {}
    for find in pattern.odd_finders(low, data.isascii()):
        _matching_lines(low, find, first, odd)
    out = set(found)
    for line, (start, end) in odd.items():
        if line not in out and line_holds(data[start:end], pattern.needle, line, offset + start):
            out.add(line)
    return sorted(out)


def _long_line_holds(
    transcript: Transcript,
    pattern: Pattern,
    span: tuple[int, int],
    step: int,
    progress: Callable[[int], None],
    cancelled: Callable[[], bool],
) -> bool:
    """Whether one line longer than a chunk may hold the query, read a piece at a time.

    Pieces overlap by `Pattern.overlap` bytes, so a match across a boundary is
    whole in one of them. Any way of writing a query character makes the line
    a candidate without the per-line check: parsing a line this long is what
    building its block does anyway.
    """
    pos, end = span
    while pos < end:
        if cancelled():
            return False
        want = min(step + pattern.overlap, end - pos)
        piece = transcript.read_at(pos, want)
        if len(piece) < want:
            return True  # the file shrank under us: nothing can be ruled out
        low = piece.lower()
        if pattern.literal is not None and _finder(pattern.literal, low)(0) != -1:
            return True
        if any(find(0) != -1 for find in pattern.odd_finders(low, piece.isascii())):
            return True
        if pos + want >= end:
            return False
        pos += step
        progress(pos)
    return False


def _never() -> bool:
    return False


def candidate_lines(
    transcript: Transcript,
    query: str,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    chunk_bytes: int | None = None,
) -> Iterator[int]:
    """The lines of `transcript` (as indexed now) that can hold `query`, in file order.

    A sound prefilter (see the module docstring): no line whose decoded strings
    hold the query casefolded is left out. `progress(done_bytes, total_bytes)`
    is called after each chunk's lines have been yielded (so a consumer that
    checks each line sees progress that includes its own work); the scan stops
    at the next chunk once `cancelled()` is true. `chunk_bytes` defaults to
    `SEARCH_CHUNK`.
    """
    if chunk_bytes is None:
        chunk_bytes = SEARCH_CHUNK  # read when called: tests make it small
    pattern = compile_query(query)
    runs = transcript.line_ranges(chunk_bytes) if pattern is not None else []
    if pattern is None or not runs:
        return
    stop = cancelled if cancelled is not None else _never
    total = transcript.line_span(runs[-1][1])[1]

    def report(done: int) -> None:
        if progress is not None:
            progress(done, total)

    for first, last, begin, end in _reads(transcript, runs, chunk_bytes):
        if stop():
            return
        if first == last and end - begin > chunk_bytes:
            lines = (
                [first]
                if _long_line_holds(transcript, pattern, (begin, end), chunk_bytes, report, stop)
                else []
            )
        else:
            data = transcript.read_at(begin, end - begin) if end > begin else b""
            if len(data) < end - begin:  # the file shrank under us: nothing can be ruled out
                lines = list(range(first, last + 1))
            else:
                lines = [n for n in chunk_candidates(pattern, data, first, begin) if n <= last]
        yield from lines
        report(end)


def _reads(
    transcript: Transcript, runs: list[tuple[int, int]], size: int
) -> Iterator[tuple[int, int, int, int]]:
    """`(first, last, start, end)` byte spans of whole lines to read, each about `size`.

    A run of `Transcript.line_ranges` ends with the last line that starts within
    `size` bytes, however long it is: a long one is split off to be read in
    pieces, so no read is much longer than `size`.
    """
    for first, last in runs:
        begin, _ = transcript.line_span(first)
        _, end = transcript.line_span(last)
        if first < last and end - begin > size:
            start, _ = transcript.line_span(last)
            yield first, last - 1, begin, start - 1
            yield last, last, start, end
        else:
            yield first, last, begin, end


def scan(
    transcript: Transcript,
    query: str,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    chunk_bytes: int | None = None,
) -> list[int]:
    """`candidate_lines` as a list (the whole file, or what was read before a cancel)."""
    return list(
        candidate_lines(
            transcript, query, progress=progress, cancelled=cancelled, chunk_bytes=chunk_bytes
        )
    )

"""Display rows: the styled text of one screen line, and the pieces rows come in.

A `Row` is what the transcript widget draws; a `Block` is the rows of one
source unit (a transcript line, a replay entry) with any opened artifacts
spliced in; an `InlineArtifact` turns a `FileLines` over an artifact file into
rows on demand, styling the bytes the model never saw apart from the head and
tail it did. Text from files always goes through `core.text.visible` and
into `rich.text.Text` directly, never through markup. Styles come from a
`viewer.palette.Palette` passed in (rows are built in worker threads, which
cannot ask a widget for its theme), never from style strings written here;
the only others are a program's own colours in its output (SGR sequences,
read by `viewer.sanitize.SgrState`; `wrap_sgr`).
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, overload

from rich.cells import cell_len, chop_cells
from rich.style import Style
from rich.text import Text

from transcript_view.core.filelines import FileLines
from transcript_view.core.records import SiteKey, ToolOperation
from transcript_view.core.text import plural, split_sgr, visible, visible_parts
from transcript_view.core.verification import BAD_STATES, FileCheck, MarkerState
from transcript_view.viewer.palette import (
    DEFAULT_PALETTE,
    Palette,
    exposure_glyph,
)
from transcript_view.viewer.sanitize import SgrState

#: Columns taken by the line-number gutter on the left of every row.
GUTTER = 7
#: A text piece longer than this many rows is collapsed until expanded.
COLLAPSE_ROWS = 8
#: Rows kept above and below the "… N more lines" row of a collapsed piece.
KEEP_HEAD, KEEP_TAIL = 4, 2

BADGE_ICONS = {
    MarkerState.VERIFIED: "✓",
    MarkerState.MATCHES: "≈",
    MarkerState.PRESENT: "•",
    MarkerState.EXCERPT_MATCHES: "≈",
    MarkerState.EXPIRED: "○",
    MarkerState.NOT_STORED: "○",
    MarkerState.COULD_NOT_BE_STORED: "○",
    MarkerState.CHECKING: "…",
    **{state: "✗" for state in BAD_STATES},
}


# -- small text helpers ----------------------------------------------------------------


def wrap(text: str, width: int) -> list[str]:
    """Split `text` into display rows of at most `width` cells, made visible.

    LF separates rows (and is the only character not shown as a glyph); every
    other control becomes a visible glyph via `core.text.visible` before the
    text is cut, so a cut can never split an escape sequence.
    """
    width = max(width, 1)
    rows: list[str] = []
    for logical in text.split("\n"):
        rows.extend(_cut(visible(logical), width))
    return rows


def _cut(shown: str, width: int) -> list[str]:
    """One visible logical line cut into rows of at most `width` cells: the wrapping rule.

    The rows joined are `shown` (nothing is dropped at a cut), which is what
    lets `wrap_sgr` carry each character's style onto the row it lands on.
    """
    if len(shown) <= width and (shown.isascii() or cell_len(shown) <= width):
        return [shown]
    if shown.isascii():
        return [shown[i : i + width] for i in range(0, len(shown), width)]
    return chop_cells(shown, width)


def wrap_sgr(text: str, width: int) -> SgrRows:
    """The rows `wrap(strip_sgr(text), width)` makes, each drawn in the styles its SGR set.

    For a program's output (`RowBuilder.text` with `sgr`): the SGR sequences
    (`core.text.split_sgr`) leave the text and become styles
    (`viewer.sanitize.SgrState`), every other escape stays visible glyphs, and
    the rows are cut from exactly the string `wrap` cuts, so a counting
    builder counts them with `wrap_count(strip_sgr(text), ...)`. A style
    carries over LF and over a row's cut, as on a terminal; each text starts
    with none.
    """
    return SgrRows(text, width)


class SgrRows(Sequence[Text]):
    """The rows of `wrap_sgr`: cut at once, each styled when it is asked for.

    How many rows there are is the layout's, so every row is cut; styling is
    what costs (a `Text` a row, a span a colour run), so only the rows drawn
    pay for it: a collapsed output of 100,000 coloured lines styles the seven
    it shows.
    """

    __slots__ = ("_line", "_offsets", "_plain", "_rows", "_styles")

    def __init__(self, text: str, width: int) -> None:
        """Cut `text` without its SGR into rows of `width` cells; note where each style starts."""
        width = max(width, 1)
        plain, switches = split_sgr(text)
        self._plain = plain
        # Where the style changes, in `plain`: one entry an offset (the last sequence there
        # wins), none where it stays the same.
        offsets: list[int] = []
        styles: list[Style | None] = []
        # An output repeats a few sequences: each (state, sequence) is read once, here by
        # the state's number in `states`.
        states = [SgrState()]
        known: dict[SgrState, int] = {states[0]: 0}
        step: dict[tuple[int, str], tuple[int, Style | None]] = {}
        now = 0
        for offset, params in switches:
            went = step.get((now, params))
            if went is None:
                state = states[now].apply(params)
                if state not in known:
                    known[state] = len(states)
                    states.append(state)
                went = step[now, params] = (known[state], state.style())
            now, style = went
            if offsets and offsets[-1] == offset:
                offsets.pop()
                styles.pop()
            if style != (styles[-1] if styles else None):
                offsets.append(offset)
                styles.append(style)
        self._offsets, self._styles = offsets, styles
        # Each row: (where its logical line starts in `plain`, its start and end in that
        # line made visible).
        rows: list[tuple[int, int, int]] = []
        start = 0
        for logical in plain.split("\n"):
            at = 0
            for piece in _cut(visible(logical), width):
                rows.append((start, at, at + len(piece)))
                at += len(piece)
            start += len(logical) + 1
        self._rows = rows
        self._line: tuple[int, list[tuple[str, Style | None]]] = (-1, [])

    def __len__(self) -> int:
        """The rows `wrap` makes of the text without its SGR."""
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Text: ...

    @overload
    def __getitem__(self, index: slice) -> list[Text]: ...

    def __getitem__(self, index: int | slice) -> Text | list[Text]:
        """Row `index`: its visible text, each character in the style the SGR before it set."""
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._rows)))]
        start, lo, hi = self._rows[index]
        row = Text()
        pos = 0
        for run, style in self._runs(start):
            end = pos + len(run)
            if end > lo and pos < hi:
                row.append(run[max(lo - pos, 0) : hi - pos], style)
            if end >= hi:
                break
            pos = end
        return row

    def _runs(self, start: int) -> list[tuple[str, Style | None]]:
        """The logical line at `start` of the plain text, made visible, in runs of one style.

        Made visible as a whole (`visible_parts`: a TAB's stop counts the runs
        before it), and kept for the line's next row.
        """
        if self._line[0] == start:
            return self._line[1]
        plain, offsets, styles = self._plain, self._offsets, self._styles
        end = plain.find("\n", start)
        end = len(plain) if end == -1 else end
        k = bisect_right(offsets, start)
        current = styles[k - 1] if k else None
        parts: list[str] = []
        shown_in: list[Style | None] = []
        pos = start
        while k < len(offsets) and offsets[k] < end:
            parts.append(plain[pos : offsets[k]])
            shown_in.append(current)
            current, pos = styles[k], offsets[k]
            k += 1
        parts.append(plain[pos:end])
        shown_in.append(current)
        runs = list(zip(visible_parts(parts), shown_in, strict=True))
        self._line = (start, runs)
        return runs


def wrap_count(text: str, width: int, cap: int | None = None) -> int:
    """`len(wrap(text, width))`, or `cap` as soon as it reaches `cap`.

    What a counting layout asks of every text piece of every line: how many
    rows, and only whether there are more than a collapsed piece shows.
    Printable ASCII is shown as written, one cell a character (`visible`
    redraws only controls and DEL there, which `str.isprintable` rejects:
    `tests/viewer/test_block_rows.py` holds the two to each other), so its rows
    are arithmetic. Anything else is cut as `wrap` cuts it, a logical line at
    a time, and a long logical line only as far as `cap` rows need (the rows a
    greedy cut makes of a prefix are the first rows of the whole).
    """
    width = max(width, 1)
    limit = sys.maxsize if cap is None else cap
    if text.isascii():
        if text.isprintable():  # one logical line (LF is not printable)
            return min((len(text) - 1) // width + 1 if text else 1, limit)
        n = 0
        for logical in text.split("\n"):
            if not logical.isprintable():
                break
            n += (len(logical) - 1) // width + 1 if logical else 1
            if n >= limit:
                return limit
        else:
            return n
    n = 0
    for logical in text.split("\n"):
        n += _logical_rows(visible(logical), width, limit - n)
        if n >= limit:
            return limit
    return n


def _logical_rows(shown: str, width: int, room: int) -> int:
    """Rows `wrap` makes of one visible logical line; counted up to `room` at least."""
    if len(shown) <= width and (shown.isascii() or cell_len(shown) <= width):
        return 1
    if shown.isascii():
        return (len(shown) - 1) // width + 1
    cut = room * width
    if cut < len(shown):
        rows = len(chop_cells(shown[:cut], width))
        if rows >= room:
            return rows
    return len(chop_cells(shown, width))


def shown_rows(pieces: int, limit: int, expanded: bool = False) -> int:
    """Rows a text piece of `pieces` rows takes: collapsed past `limit` unless expanded.

    A collapsed piece keeps its first `KEEP_HEAD` and last `KEEP_TAIL` rows
    (fewer under a small limit) around one "… N more lines" row; see
    `viewer.blocks.RowBuilder.text`, which draws it.
    """
    if expanded or pieces <= limit:
        return pieces
    head, tail = collapse_split(limit)
    return head + 1 + tail


def collapse_split(limit: int) -> tuple[int, int]:
    """The rows a piece collapsed under `limit` keeps above and below its "more" row."""
    head = min(KEEP_HEAD, max(limit - 1, 1))
    return head, min(KEEP_TAIL, max(limit - head - 1, 0))


def wrap_words(text: str, first: int, rest: int | None = None) -> list[str]:
    """One line of visible text in rows, broken at spaces: `first` cells, then `rest`.

    For findings, whose message is one sentence: a row that ended "the file
    digests t…" hid the rest with no way to read it, so every word is kept, on
    as many rows as it takes (a hanging indent is the caller's, hence a first
    width apart). A word wider than a row is cut where it must be.

    Args:
        text: Already made visible (`core.text.visible`): no LF, no controls.
        first: Cells of the first row.
        rest: Cells of the rows after it (`first` when None).
    """
    limit = max(first, 1)
    later = max(rest if rest is not None else first, 1)
    rows: list[str] = []
    current = ""
    for word in text.split(" "):
        joined = f"{current} {word}" if current else word
        if cell_len(joined) <= limit:
            current = joined
            continue
        if current:
            rows.append(current)
            limit = later
        while cell_len(word) > limit:
            parts = chop_cells(word, limit)
            rows.append(parts[0])
            limit = later
            word = "".join(parts[1:])
        current = word
    rows.append(current)
    return rows


def badge_text(state: MarkerState, palette: Palette = DEFAULT_PALETTE) -> Text:
    """The coloured badge naming a marker's verification state.

    The icon says the same as the colour (✓ ○ … ✗), so a badge still reads on
    a monochrome terminal or a theme where the colours are close.
    """
    return Text(f" {BADGE_ICONS[state]} {state.value} ", style=palette.badge(state))


def describe_op(op: ToolOperation | None) -> str:
    """An operation's state in a few words: outcome, duration, error."""
    if op is None:
        return "no operation"
    words = op.describe_state()
    if op.duration is not None:
        words += f" in {op.duration:.3g}s"
    if op.reason:
        words += f" ({op.reason})"
    if op.is_error:
        words += " · error result"
    return words


# -- rows and blocks ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    """One display row: its styled text (gutter included) and what it is about."""

    text: Text
    kind: str
    """`head`, `body`, `more`, `marker`, `quoted`, `problem`, `finding`, `finding-wrap`
    (a finding's message wrapped past its first row: not a problem of its own for
    `p` to stop at), `art-head`, `art`, `art-end`, `note` (the viewer's own words about
    the line: where its message lived, a compaction's figures; never searched)."""
    line: int
    """The transcript line this row shows (0 when none)."""
    site: SiteKey | None = None
    """For marker and inline-artifact rows: the marker they belong to."""
    cont: bool = False
    """A wrapped continuation of the row above (a long marker's second row)."""
    target: int = 0
    """For a `jump` row: the transcript line enter goes to."""


class _Shown(NamedTuple):
    """Which rows of an inline artifact are shown: one value, replaced whole."""

    known: int
    """Indexed rows taken in."""
    tail: tuple[tuple[int, int], ...]
    """Byte spans of the file's last rows, shown before the index reaches them."""
    gap: tuple[int, int] | None
    """Bytes between the indexed rows and the tail (one "not indexed yet" row)."""


class InlineArtifact:
    """An artifact opened under its marker: header, one row per file row, footer.

    Rows are read from the file when drawn (`FileLines` reads by offset, with a
    sparse index), so a gigabyte artifact costs a few kilobytes of index and
    nothing else. While the file is still being indexed, its last rows
    (`FileLines.tail_rows`) are shown after the rows indexed so far, with one
    row saying how much lies between: `end` shows the end of a 200 MiB
    artifact at once instead of after the whole index.
    """

    def __init__(
        self,
        site_key: SiteKey,
        lines: FileLines,
        check: FileCheck,
        state: MarkerState,
        head_bytes: int,
        tail_bytes: int,
    ) -> None:
        """Wrap an indexed `FileLines`; `head_bytes`/`tail_bytes` are what the model saw."""
        self.site_key = site_key
        self.lines = lines
        self._verdict = (check, state)
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self._shown = _Shown(0, (), None)
        self.known_rows = lines.row_count

    @property
    def check(self) -> FileCheck:
        """What hashing the file found (a placeholder until the verify worker's lands)."""
        return self._verdict[0]

    @property
    def state(self) -> MarkerState:
        """The marker's badge, as the ledger gives it."""
        return self._verdict[1]

    def set_verdict(self, check: FileCheck, state: MarkerState) -> None:
        """A file check landed: one assignment, so a builder never mixes old and new."""
        self._verdict = (check, state)

    #: Rows before the file's own rows: name and badge, sizes and digest, the legend.
    HEADER_ROWS = 3

    @property
    def known_rows(self) -> int:
        """Indexed rows shown: set on the UI thread only, so the layout never moves
        under it while the indexing worker finds more."""
        return self._shown.known

    @known_rows.setter
    def known_rows(self, rows: int) -> None:
        # Computed aside and swapped in as one value: layout and prefetch workers
        # count and build these rows while the UI thread grows them.
        lines = self.lines
        if lines.complete and rows >= lines.row_count:
            self._shown = _Shown(rows, (), None)
            return
        head_stop = lines.row_stop(rows - 1) if rows else 0
        tail = tuple(span for span in lines.tail_rows() if span[0] >= head_stop)
        gap = (head_stop, tail[0][0]) if tail and tail[0][0] > head_stop else None
        self._shown = _Shown(rows, tail, gap)

    @property
    def complete(self) -> bool:
        """Every row of the file is shown (indexing finished and taken in)."""
        return self.lines.complete and self._shown.known >= self.lines.row_count

    @property
    def file_rows(self) -> int:
        """Rows between the header and the footer: indexed, the gap row, the tail."""
        shown = self._shown
        return shown.known + (shown.gap is not None) + len(shown.tail)

    @property
    def count(self) -> int:
        """Rows this artifact adds: three header rows, its rows, a footer."""
        return self.file_rows + self.HEADER_ROWS + 1

    def unseen_span(self) -> tuple[int, int]:
        """Bytes [start, end) of the artifact that the excerpt left out."""
        size = self.lines.size
        return min(self.head_bytes, size), max(size - self.tail_bytes, min(self.head_bytes, size))

    def row(self, i: int, line: int, width: int, palette: Palette = DEFAULT_PALETTE) -> Row:
        """Row `i` of the inline artifact (header rows first, the footer last).

        `palette` is the one the enclosing block was built with, so an artifact
        opened under a marker always matches the rows around it.
        """
        indent = " " * GUTTER
        c, state = self._verdict
        p = palette
        if i == 0:
            head = Text(indent + "┌ artifact ", style=p.strong)
            head.append(visible(c.name), style=p.strong)
            head.append("  ")
            head.append_text(badge_text(state, p))
            head.truncate(width, overflow="ellipsis")
            return Row(head, "art-head", line, self.site_key)
        if i == 1:
            info = Text(indent + "│ ", style=p.strong)
            info.append(
                plural(c.size, "byte")
                + (f" · {plural(c.chars, 'char')}" if c.chars is not None else "")
                + (f" · sha256 {c.digest}" if c.digest else " · sha256 being computed…"),
                style=p.dim,
            )
            info.truncate(width, overflow="ellipsis")
            return Row(info, "art-head", line, self.site_key, cont=True)
        if i == 2:
            lo, hi = self.unseen_span()
            legend = Text(indent + "│ ", style=p.strong)
            legend.append(
                f"{exposure_glyph(True)} the model saw bytes 0–{lo:,} and {hi:,}–{c.size:,}",
                style=p.seen_bar,
            )
            legend.append("   ")
            legend.append(
                f"{exposure_glyph(False)} it never saw bytes {lo:,}–{hi:,}", style=p.unseen_bar
            )
            legend.truncate(width, overflow="ellipsis")
            return Row(legend, "art-head", line, self.site_key, cont=True)
        if i == self.count - 1:
            if self.complete:
                end = Text(indent + "└ end of artifact", style=p.strong)
            else:
                end = Text(indent + "└ … still indexing the artifact", style=p.warning)
            end.append(
                f" · {plural(self.known_rows, 'row')}"
                + ("" if self.complete else " so far")
                + " (enter to close, e for $PAGER)",
                style=p.dim,
            )
            return Row(end, "art-end", line, self.site_key)
        n = i - self.HEADER_ROWS
        shown = self._shown
        if n < shown.known:
            start, stop = self.lines.row_span(n)
            return self._file_row(start, stop, self.lines.row_bytes_of(n), line, width, p)
        n -= shown.known
        if shown.gap is not None:
            if n == 0:
                lo, hi = shown.gap
                gap = Text(indent + exposure_glyph(False) + " ", style=p.notice)
                gap.append(
                    f"… {plural(hi - lo, 'byte')} not indexed yet; the file's last rows follow",
                    style=p.warning,
                )
                gap.truncate(width, overflow="ellipsis")
                return Row(gap, "art", line, self.site_key)
            n -= 1
        start, stop = shown.tail[n]
        return self._file_row(start, stop, self.lines.read(start, stop), line, width, p)

    def _file_row(
        self, start: int, stop: int, raw: bytes, line: int, width: int, palette: Palette
    ) -> Row:
        """One row of the file, bytes [start, stop), styled by whether the model saw them."""
        indent = " " * GUTTER
        lo, hi = self.unseen_span()
        text = Text(indent)
        pieces: list[tuple[bytes, bool]] = []
        cut_points = sorted({p - start for p in (lo, hi) if start < p < stop})
        prev = 0
        for cut in [*cut_points, len(raw)]:
            if cut > prev:
                mid = start + prev
                pieces.append((raw[prev:cut], lo <= mid < hi))
            prev = cut
        if not pieces:
            pieces.append((b"", lo <= start < hi))
        # The bar says "seen" when the model saw any of the row, "unseen" when none.
        seen_row = not all(unseen for _, unseen in pieces)
        text.append(exposure_glyph(seen_row) + " ", style=palette.exposure(seen_row)[0])
        for data, unseen in pieces:
            shown = visible(data.decode("utf-8", errors="replace"))
            text.append(shown, style=palette.exposure(not unseen)[1])
        # Rows are cut by bytes, one cell per byte; a tab (up to 8 cells) or a
        # ⟨hex⟩-shown character can still run past the width. Say so with an
        # ellipsis instead of silently dropping the rest (`e` shows it all).
        text.truncate(width, overflow="ellipsis")
        return Row(text, "art", line, self.site_key)


class Block:
    """The rows of one source unit, with any inline artifacts spliced in after their marker."""

    __slots__ = ("_inserts", "line", "palette", "rows", "width")

    def __init__(
        self,
        line: int,
        rows: list[Row],
        inserts: list[tuple[int, InlineArtifact]],
        width: int,
        palette: Palette = DEFAULT_PALETTE,
    ) -> None:
        """`inserts` are (row index after which to splice, artifact), in row order.

        `palette` is what the rows were styled with; inline artifact rows,
        drawn later on demand, are styled with the same one.
        """
        self.line = line
        self.rows = rows
        self._inserts = inserts
        self.width = width
        self.palette = palette

    @property
    def count(self) -> int:
        """Total rows, inline artifacts included."""
        return len(self.rows) + sum(a.count for _, a in self._inserts)

    def row(self, i: int) -> Row:
        """Row `i` of the block."""
        base = 0  # rows of self.rows consumed before the current insert
        offset = 0  # display rows before self.rows[base]
        for after, art in self._inserts:
            own = after + 1 - base
            if i < offset + own:
                return self.rows[base + i - offset]
            offset += own
            base = after + 1
            if i < offset + art.count:
                return art.row(i - offset, self.line, self.width, self.palette)
            offset += art.count
        return self.rows[base + i - offset]

    def offset_of(self, art: InlineArtifact) -> int | None:
        """The block row where `art`'s rows begin (its header), or None if not spliced in."""
        offset = 0
        base = 0
        for after, inserted in self._inserts:
            offset += after + 1 - base
            base = after + 1
            if inserted is art:
                return offset
            offset += inserted.count
        return None

    def own_rows(self) -> Iterator[tuple[int, Row]]:
        """(display row, row) of the block's own rows, skipping inline artifacts.

        What jumping looks through: a marker, a problem or a search hit is never
        inside an artifact's rows, and an open 200 MiB artifact is millions of
        rows that must not be built to step past it.
        """
        offset = 0
        base = 0
        for after, art in self._inserts:
            for j in range(base, after + 1):
                yield offset + j - base, self.rows[j]
            offset += after + 1 - base + art.count
            base = after + 1
        for j in range(base, len(self.rows)):
            yield offset + j - base, self.rows[j]

    def text_rows(self) -> Iterable[Row]:
        """The block's own rows, inline artifacts left out (what search looks through)."""
        return iter(self.rows)

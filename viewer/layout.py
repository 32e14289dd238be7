"""A document's row layout: each block's row count, and where each block starts.

A transcript can have millions of blocks, and a block's count changes when its
look does (a badge gains a finding row, an artifact opens, a block expands),
while the counts of a big file stream in by tens of thousands. One array of
prefix sums made every change a pass over every block after it (a 2.6 M-block
document's sums are 20 MB). Here the blocks are cut into spans of `SPAN`: each
block keeps its start within its span, and each span its start in the
document. Changing one count refills the rest of its span and the spans'
starts (`SPAN` + blocks / `SPAN` sums, a few thousand for any document);
appending blocks fills only theirs; finding the block of a row is two
bisections.

The layout holds numbers only. What the numbers are (a block's built rows, or
what the analysis measured of its line) is the document's business
(`viewer.document.Document`).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate

#: A block's row count, 4 bytes: the counts of a 1 GiB transcript's two views are
#: 4.2 M integers, and "l" (8 bytes here) had cost 17 MB of the UI's 300 MiB budget.
#: A block of more than 2**31 rows would be a line of 40 GiB at 20 columns; the
#: starts, which add every block's, stay 8 bytes.
COUNT_TYPECODE = "i"
#: Blocks a span: what a changed count refills at most, beside the spans' starts.
SPAN = 4096


def count_array(counts: Sequence[int]) -> array[int]:
    """`counts` as an `array(COUNT_TYPECODE)`: itself when it is one already."""
    if isinstance(counts, array) and counts.typecode == COUNT_TYPECODE:
        return counts
    return array(COUNT_TYPECODE, counts)


class RowLayout:
    """Row counts by block, and each block's first row, in spans (see the module)."""

    __slots__ = ("_local", "_spans", "counts")

    def __init__(self) -> None:
        """No blocks."""
        self.counts: array[int] = array(COUNT_TYPECODE)
        """Each block's row count (read freely; change it only through this class)."""
        self._local: array[int] = array("q")
        """Each block's first row within its span."""
        self._spans: array[int] = array("q", [0])
        """Each span's first row, and the total after the last (one more than spans)."""

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def total(self) -> int:
        """Rows of every block."""
        return self._spans[-1]

    @property
    def nbytes(self) -> int:
        """The bytes its numbers take: 4 a count, 8 a block's start, 8 a span's."""
        arrays = (self.counts, self._local, self._spans)
        return sum(a.itemsize * len(a) for a in arrays)

    def start(self, block: int) -> int:
        """The first row of `block` (the total for one past the last)."""
        if block >= len(self.counts):
            return self._spans[-1]
        return self._spans[block // SPAN] + self._local[block]

    def starts(self) -> list[int]:
        """Every block's first row, then the total (a whole document's: for tests)."""
        return [self.start(i) for i in range(len(self.counts) + 1)]

    def locate(self, row: int) -> tuple[int, int] | None:
        """(block, row within it) of a row, None outside the layout."""
        if row < 0 or row >= self._spans[-1]:
            return None
        span = bisect_right(self._spans, row) - 1
        lo = span * SPAN
        hi = min(lo + SPAN, len(self.counts))
        within = row - self._spans[span]
        block = bisect_right(self._local, within, lo, hi) - 1
        return block, within - self._local[block]

    def extend(self, counts: Sequence[int]) -> None:
        """Append blocks with these counts; sums of earlier spans are not touched.

        Raises:
            OverflowError: the rows would pass what a sum holds (never for a real
                document); the layout stays as it was.
        """
        added = count_array(counts)
        if not added:
            return
        first = len(self.counts)
        self.counts.extend(added)
        try:
            for span in range(first // SPAN, (len(self.counts) - 1) // SPAN + 1):
                self._refill_span(span, max(first, span * SPAN))
            self._refill_spans(first // SPAN)
        except OverflowError:
            self.truncate(first, force=True)
            raise

    def set(self, changes: Mapping[int, int]) -> bool:
        """Change the counts of laid-out blocks at once; whether any changed.

        Each changed span is refilled from its first change; the spans' starts
        once, from the first changed span.
        """
        counts = self.counts
        changed = {i: n for i, n in changes.items() if i < len(counts) and counts[i] != n}
        if not changed:
            return False
        values = count_array(list(changed.values()))  # a count that does not fit: before any
        for i, n in zip(changed, values, strict=True):
            counts[i] = n
        firsts: dict[int, int] = {}
        for i in changed:
            span = i // SPAN
            firsts[span] = min(firsts.get(span, i), i)
        for span in sorted(firsts):
            self._refill_span(span, firsts[span])
        self._refill_spans(min(firsts))
        return True

    def truncate(self, blocks: int, *, force: bool = False) -> None:
        """Drop blocks from `blocks` on (`force`: refill the spans' starts even if none go)."""
        if blocks >= len(self.counts) and not force:
            return
        del self.counts[blocks:]
        del self._local[blocks:]
        del self._spans[1:]
        self._refill_spans(0)

    def _refill_span(self, span: int, first: int) -> None:
        """Blocks `first…` of `span` get their starts within it again."""
        lo = span * SPAN
        hi = min(lo + SPAN, len(self.counts))
        base = 0 if first == lo else self._local[first - 1] + self.counts[first - 1]
        sums = array("q", accumulate(self.counts[first : hi - 1], initial=base))
        if len(self._local) < hi:
            self._local.extend(array("q", bytes(8 * (hi - len(self._local)))))
        self._local[first:hi] = sums

    def _refill_spans(self, span: int) -> None:
        """Each span's start from `span + 1` on, from its blocks' sums."""
        counts, local = self.counts, self._local
        totals = [
            local[last] + counts[last]
            for last in (
                min((s + 1) * SPAN, len(counts)) - 1 for s in range(span, -(-len(counts) // SPAN))
            )
        ]
        sums = array("q", accumulate(totals, initial=self._spans[span]))
        del self._spans[span + 1 :]
        self._spans.extend(sums[1:])

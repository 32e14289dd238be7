"""The row layout: a transcript (or the replay) as rows, without building them all.

A transcript can have a million lines, so a `Document` keeps one integer per
block (its row count) plus a prefix-sum array: row N is found by bisection,
and only the blocks on screen are built (an LRU keeps the recent ones). Counts
come from `layout_counts`, run by a thread worker that posts them in chunks.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING

from textual.cache import LRUCache

from transcript_view.core import native
from transcript_view.viewer.blocks import BlockSource
from transcript_view.viewer.rows import Block, Row

# -- the row layout ------------------------------------------------------------------------------

#: A block's row count, 4 bytes: the counts of a 1 GiB transcript's two views are
#: 4.2 M integers, and "l" (8 bytes here) had cost 17 MB of the UI's 300 MiB budget.
#: A block of more than 2**31 rows would be a line of 40 GiB at 20 columns; the
#: prefix sums (`starts`), which add every block's, stay 8 bytes.
COUNT_TYPECODE = "i"

if TYPE_CHECKING:
    from transcript_view.viewer import _layout  # the optional native sums (viewer/_layout.c)
else:  # None where it was not built, or under TRANSCRIPT_VIEW_PURE (core/native.py)
    _layout = native.load("transcript_view.viewer._layout")


def count_array(counts: Sequence[int]) -> array[int]:
    """`counts` as an `array(COUNT_TYPECODE)`: itself when it is one already."""
    if isinstance(counts, array) and counts.typecode == COUNT_TYPECODE:
        return counts
    return array(COUNT_TYPECODE, counts)


def refill(starts: array[int], counts: array[int], first: int) -> None:
    """Make `starts` the prefix sums of `counts` again from block `first` on.

    `starts[first]` stands (so `first` is a block the sums already reach);
    every sum after it is recomputed, and `starts` is grown to one more than
    `counts` (blocks were appended). On the UI thread
    for every chunk a layout worker posts and every count that changes, so it
    runs in C where that was built (`viewer/_layout.c`: a 65,536-block chunk
    took 13 ms in Python here): the same sums either way, which the tests hold.
    """
    if _layout is None:
        starts[first:] = array("q", accumulate(counts[first:], initial=starts[first]))
        return
    grow = len(counts) + 1 - len(starts)
    if grow > 0:
        starts.frombytes(bytes(grow * starts.itemsize))
    elif grow < 0:
        del starts[len(counts) + 1 :]
    _layout.prefix_sums(starts, counts, first)


class Document:
    """Row layout over a `BlockSource`: counts per block, a prefix sum, an LRU of blocks."""

    def __init__(self, source: BlockSource, cache_size: int = 256) -> None:
        """Start empty; `extend` adds counts as a layout worker produces them."""
        self.source = source
        self.counts: array[int] = array(COUNT_TYPECODE)
        self.starts: array[int] = array("q", [0])
        self._cache: LRUCache[int, Block] = LRUCache(cache_size)
        self.generation = 0
        """Bumped by every full relayout; chunks of older passes are dropped."""
        self.version = 0
        """Bumped by every change of any row count (a view's rendered strips go stale)."""
        self.epoch = 0
        """Bumped whenever cached blocks are dropped: blocks a prefetch worker built
        from older state are refused when they arrive."""
        self.width = 0
        """The width the current layout was made at (another view may have resized)."""
        self.dirty: set[int] = set()
        """Blocks whose look changed before they were laid out: a count for them that a
        worker took earlier may be stale, so they are rebuilt when their chunk lands."""
        self.laying_out = False
        """A layout worker for this document is running (UI-thread bookkeeping)."""

    @property
    def view(self) -> str:
        """Which view this document lays out."""
        return self.source.view

    @property
    def blocks(self) -> int:
        """Blocks laid out so far."""
        return len(self.counts)

    @property
    def total_rows(self) -> int:
        """Rows of every block laid out so far."""
        return self.starts[-1]

    def reset(self) -> None:
        """Forget the layout (a new width or a new analysis)."""
        self.counts = array(COUNT_TYPECODE)
        self.starts = array("q", [0])
        self._cache.clear()
        self.dirty.clear()
        self.version += 1
        self.epoch += 1

    def extend(self, start: int, counts: Sequence[int]) -> bool:
        """Append counts for blocks `start…`; False when they do not follow on.

        `version` stays: no row there was moves, so strips drawn of them stand
        (a view repaints what was past the old end itself: `TranscriptView.apply_chunk`).
        Workers post an `array(COUNT_TYPECODE)` (`count_array`), which is
        taken in as one copy; any other sequence is converted here first.
        """
        if start != len(self.counts):
            return False
        self.counts.extend(count_array(counts))
        try:
            refill(self.starts, self.counts, start)
        except OverflowError:  # more rows than a sum holds: the document stays as it was
            del self.counts[start:]
            del self.starts[start + 1 :]
            raise
        return True

    def take_dirty(self) -> list[int]:
        """The dirty blocks that are laid out now, no longer dirty: the caller recounts them."""
        laid_out = sorted(i for i in self.dirty if i < len(self.counts))
        self.dirty.difference_update(laid_out)
        return laid_out

    def truncate(self, blocks: int) -> None:
        """Drop blocks from `blocks` on (a partially written last line is laid out again)."""
        if blocks < len(self.counts):
            self.version += 1
            self.epoch += 1
            del self.counts[blocks:]
            del self.starts[blocks + 1 :]
            self._cache.clear()

    def locate(self, row: int) -> tuple[int, int] | None:
        """(block, row within it) for a document row, None past the end."""
        if row < 0 or row >= self.total_rows:
            return None
        b = bisect_right(self.starts, row) - 1
        return b, row - self.starts[b]

    def block_start(self, index: int) -> int:
        """The first row of block `index`."""
        return self.starts[min(index, len(self.counts))]

    def block(self, index: int) -> Block:
        """Block `index`, built now if it is not cached.

        A block built after its row count was taken (its badge gained a finding
        row while a layout chunk was in flight) corrects the count here, so the
        layout can never disagree with the rows it shows.
        """
        blk = self._cache.get(index)
        if blk is None:
            blk = self.source.build(index)
            self._cache[index] = blk
            if index < len(self.counts) and blk.count != self.counts[index]:
                self._set_count(index, blk.count)
        return blk

    def missing(self, first: int, last: int) -> list[int]:
        """Blocks in [first, last] that are laid out but not cached (what to prefetch)."""
        last = min(last, len(self.counts) - 1)
        return [i for i in range(first, last + 1) if i not in self._cache]

    def accept(self, epoch: int, blocks: dict[int, Block]) -> bool:
        """Cache blocks a worker built, unless the state they were built from is gone."""
        if epoch != self.epoch:
            return False
        for index, blk in blocks.items():
            if index < len(self.counts) and index not in self._cache:
                self._cache[index] = blk
                if blk.count != self.counts[index]:
                    self._set_count(index, blk.count)
        return True

    def is_cached(self, index: int) -> bool:
        """Whether block `index` is built and cached (its count is then its own)."""
        return index in self._cache

    def set_counts(self, counts: Mapping[int, int]) -> bool:
        """Take new counts of laid-out, uncached blocks at once; True if any changed.

        One prefix-sum pass from the first change, however many: a million-line
        document takes a thousand badge changes in one pass, not a thousand.
        A cached block keeps its own count (it was built after these were taken).
        """
        changed = {
            i: n
            for i, n in counts.items()
            if i < len(self.counts) and i not in self._cache and self.counts[i] != n
        }
        if not changed:
            return False
        for i, n in changed.items():
            self.counts[i] = n
        refill(self.starts, self.counts, min(changed))
        self.version += 1
        return True

    def _set_count(self, index: int, count: int) -> None:
        self.version += 1
        self.counts[index] = count
        refill(self.starts, self.counts, index)

    def row(self, row: int) -> Row | None:
        """The row at a document row index."""
        where = self.locate(row)
        if where is None:
            return None
        b, off = where
        blk = self.block(b)
        if off >= blk.count:
            return None
        return blk.row(off)

    def invalidate(self, indexes: Iterable[int] | None = None) -> None:
        """Drop cached blocks so they are rebuilt (badges changed, say)."""
        self.epoch += 1
        if indexes is None:
            self._cache.clear()
            return
        for i in indexes:
            self._cache.discard(i)

    def rebuild(self, index: int) -> int:
        """Rebuild one block now (expanded, artifact opened) and return its count change."""
        if index >= len(self.counts):
            self.dirty.add(index)
            return 0
        before = self.counts[index]
        self.epoch += 1
        self._cache.discard(index)
        return self.block(index).count - before


def layout_counts(
    source: BlockSource, start: int, stop: int, cancelled: Callable[[], bool]
) -> list[int]:
    """Row counts of blocks [start, stop), counted off the UI thread (no rows are styled)."""
    out: list[int] = []
    for i in range(start, stop):
        if cancelled():
            break
        out.append(source.build(i, count_only=True).count)
    return out

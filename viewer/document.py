"""A transcript (or the replay) as rows, without building them all.

A transcript can have a million lines, so a `Document` keeps one integer per
block (its row count) in a `viewer.layout.RowLayout`, which also says where
each block starts: only the blocks on screen are built (an LRU keeps the
recent ones). Counts come from `layout_counts`, run by a thread worker that
posts them in chunks, or from what the analysis measured of each line.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence

from textual.cache import LRUCache

from transcript_view.viewer.blocks import BlockSource
from transcript_view.viewer.layout import RowLayout
from transcript_view.viewer.rows import Block, Row


class Document:
    """Row layout over a `BlockSource`: counts per block, a prefix sum, an LRU of blocks."""

    def __init__(self, source: BlockSource, cache_size: int = 256) -> None:
        """Start empty; `extend` adds counts as a layout worker produces them."""
        self.source = source
        self.layout = RowLayout()
        """Each block's row count and first row."""
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
    def counts(self) -> array[int]:
        """Each laid-out block's row count (read only: change them through this class)."""
        return self.layout.counts

    @property
    def blocks(self) -> int:
        """Blocks laid out so far."""
        return len(self.layout)

    @property
    def total_rows(self) -> int:
        """Rows of every block laid out so far."""
        return self.layout.total

    def estimated_rest(self) -> int:
        """Rows the blocks not laid out yet are expected to take: 0 once every one is.

        As a pager does, from how far the laid-out blocks reach (the file view:
        in bytes, so lines not even indexed yet count) and the rows they took:
        the rest at the same rate. What the view shows past its rows while it
        lays a big transcript out (the scrollbar is then the whole file's);
        each chunk laid out replaces part of the estimate with real rows, below
        every row already shown, so nothing on screen moves.
        """
        if not self.blocks:
            return 0  # no rate yet (the first chunk comes at once)
        reached, whole = self.source.extent(self.blocks)
        if reached <= 0 or whole <= reached:
            return 0
        return self.total_rows * (whole - reached) // reached

    def reset(self) -> None:
        """Forget the layout (a new width or a new analysis)."""
        self.layout = RowLayout()
        self._cache.clear()
        self.dirty.clear()
        self.version += 1
        self.epoch += 1

    def extend(self, start: int, counts: Sequence[int]) -> bool:
        """Append counts for blocks `start…`; False when they do not follow on.

        `version` stays: no row there was moves, so strips drawn of them stand
        (a view repaints what was past the old end itself: `TranscriptView.apply_chunk`).
        Workers post an `array(COUNT_TYPECODE)` (`layout.count_array`), which
        is taken in as one copy; any other sequence is converted first. Only
        the new blocks' sums are made (`RowLayout.extend`).
        """
        if start != len(self.layout):
            return False
        self.layout.extend(counts)  # on an overflow it stays as it was, and raises
        return True

    def take_dirty(self) -> list[int]:
        """The dirty blocks that are laid out now, no longer dirty: the caller recounts them."""
        laid_out = sorted(i for i in self.dirty if i < len(self.counts))
        self.dirty.difference_update(laid_out)
        return laid_out

    def truncate(self, blocks: int) -> None:
        """Drop blocks from `blocks` on (a partially written last line is laid out again)."""
        if blocks < len(self.layout):
            self.version += 1
            self.epoch += 1
            self.layout.truncate(blocks)
            self._cache.clear()

    def locate(self, row: int) -> tuple[int, int] | None:
        """(block, row within it) for a document row, None past the end."""
        return self.layout.locate(row)

    def block_start(self, index: int) -> int:
        """The first row of block `index` (the total rows past the last block)."""
        return self.layout.start(index)

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
            if index < len(self.layout) and blk.count != self.counts[index]:
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

        The layout refills each changed span once and the spans' starts once
        (`RowLayout.set`), however many change: a million-line document takes
        a thousand badge changes without a pass over every block after them.
        A cached block keeps its own count (it was built after these were taken).
        """
        changed = {i: n for i, n in counts.items() if i not in self._cache}
        if not self.layout.set(changed):
            return False
        self.version += 1
        return True

    def _set_count(self, index: int, count: int) -> None:
        if self.layout.set({index: count}):
            self.version += 1

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

"""The file view's row counts the analysis took as it read, and who waits for them.

A big transcript's analysis counts each line's rows where it maps the line
(`viewer.measure.BlockRows`); the counts arrive on the UI thread batch by
batch (`RowsMeasured`), and the file view's layout worker, past the first
screen, takes them instead of building every line a second time, or waits
for them while the pass is still reading. `MeasuredRows` is that exchange:
what arrived, at which width, whether more is coming, and the event a
waiting worker sleeps on. It holds no widget: `TranscriptView` draws and
lays out, and asks it.

Threads: `expect`, `take`, `stop` and `adopt_width` run on the UI thread;
`waits` and `counts` are read by the layout worker. An `array` only grows
(`take` extends it; `expect` swaps in a new one), so a worker reading a
slice sees counts that were true at that width.
"""

from __future__ import annotations

import threading
from array import array


class MeasuredRows:
    """Row counts of the file view's lines, block by block from the first, at one width."""

    def __init__(self) -> None:
        self.rows = array("i")
        """Counts of lines 1…, at `width`; -1 (`measure.UNKNOWN`): the view builds that line."""
        self.width = 0
        self.coming = False
        """An analysis that measures rows is reading: past what it has measured, the
        file view waits for it instead of parsing every line a second time."""
        self.arrived = threading.Event()
        """Set when counts arrive or stop coming: a layout worker waiting for them wakes."""

    def expect(self, width: int, *, keep: bool = False) -> int:
        """An analysis is coming that counts rows at `width` (0: at the first width set).

        `keep`: counts already taken at this width stay (the pass starts after
        indexing, which expected them already). Returns the width to count at.
        """
        if not (keep and self.coming and self.width == width):
            self.rows, self.width = array("i"), width
        self.coming = True
        return width

    def adopt_width(self, width: int) -> None:
        """The view has its first width: counts expected before it are at this one."""
        if self.coming and not self.width:
            self.width = width

    def take(self, first: int, rows: array[int], width: int) -> bool:
        """Counts of lines `first…`; False if they are another pass's or another width's."""
        if width != self.width or first != len(self.rows) + 1:
            return False
        self.rows.extend(rows)
        self.arrived.set()
        return True

    def stop(self) -> bool:
        """The analysis ended (or failed): nothing more is coming. True if something was."""
        if not self.coming:
            return False
        self.coming = False
        self.arrived.set()
        return True

    def waits(self, block: int, width: int) -> bool:
        """Whether counts of `block` at `width` are coming and not here yet."""
        return self.coming and block >= len(self.rows) and self.width == width

    def counts(self, start: int, stop: int, width: int) -> list[int] | None:
        """The counts of blocks `start…stop` taken so far at `width` (None: none there)."""
        rows = self.rows  # once: `expect` may swap in a new array meanwhile (the UI thread)
        if start >= len(rows) or self.width != width:
            return None
        return rows[start:stop].tolist()

    def sleep(self, block: int, width: int, seconds: float) -> None:
        """A layout worker waits up to `seconds` for the counts of `block` (or their end).

        Cleared before it looks again, so counts that land between the caller's
        `waits` and this call wake it at once instead of being slept through.
        """
        self.arrived.clear()
        if self.waits(block, width):
            self.arrived.wait(seconds)

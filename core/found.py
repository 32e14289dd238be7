"""What a pass has found so far, told while it reads: every format's passes use it.

A viewer lets `n` and `p` step through the markers and bad lines of the part
of a big file read so far, long before the pass ends. Each pass folds its
batches in file order; after each, `FoundSoFar.tell` passes on what the
analysis's own lists gained.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

Found = Callable[[list[int], list[int]], None]
"""Told what a batch of lines found, before the pass ends: the lines of its markers
and of its line problems, in file order (a viewer steps through them meanwhile)."""


class _OnLine(Protocol):
    @property
    def line(self) -> int: ...


class FoundSoFar:
    """Tells a pass's `Found` callback what each batch added, once.

    Sites and problems are read from the analysis's own lists after each
    batch is folded: whatever they gained since the last call is told.
    """

    __slots__ = ("_found", "_problems", "_sites")

    def __init__(self, found: Found | None) -> None:
        """Tell `found` (None: nobody asked, and `tell` does nothing)."""
        self._found = found
        self._sites = self._problems = 0

    def tell(self, sites: Sequence[_OnLine], problems: Sequence[_OnLine]) -> None:
        """After a batch: the lines of the `sites` and `problems` not told yet."""
        if self._found is None or (len(sites), len(problems)) == (self._sites, self._problems):
            return
        self._found(
            [s.line for s in sites[self._sites :]], [p.line for p in problems[self._problems :]]
        )
        self._sites, self._problems = len(sites), len(problems)

"""Compact tables for one pass over a huge transcript: a few bytes per line, not objects.

A gigabyte transcript has millions of envelopes. Keeping a Python object (or
even a Python string) per envelope id, tool operation or replayed message costs
hundreds of bytes each and turns a 1 GiB file into gigabytes of memory. These
tables keep machine integers in `array`s instead — line numbers and 64-bit
string keys (`core.keys`) — and anything textual is read back from the transcript, by line,
only when somebody looks at it.
"""

from __future__ import annotations

from array import array


class IdTable:
    """An open-addressing hash table from 64-bit keys to line numbers.

    12 bytes a slot (an `int64` key and an `int32` value), at most 70% full: a
    few tens of megabytes for millions of ids, where a `dict[str, int]` would
    need hundreds. Give `expected` when the count is known (a transcript's line
    count): a table that never grows never holds two copies of itself.
    """

    def __init__(self, expected: int = 2048) -> None:
        size = 1
        while size * 7 < expected * 10:
            size <<= 1
        self._keys = array("q", bytes(8 * size))
        self._values = array("i", bytes(4 * size))
        self._mask = size - 1
        self._used = 0

    def __len__(self) -> int:
        return self._used

    def _slot(self, key: int) -> int:
        """The slot holding `key`, or the empty slot where it would go (linear probing)."""
        keys, mask = self._keys, self._mask
        i = key & mask
        while True:
            k = keys[i]
            if k == key or k == 0:
                return i
            i = (i + 1) & mask

    def _fill(self, i: int, key: int, value: int) -> None:
        """Put a new key in empty slot `i`, growing when the table passes 70% full."""
        self._keys[i] = key
        self._values[i] = value
        self._used += 1
        if self._used * 10 > self._mask * 7:
            self._grow()

    def get(self, key: int) -> int:
        """The value stored under `key`, or -1."""
        i = self._slot(key)
        return self._values[i] if self._keys[i] == key else -1

    def setdefault(self, key: int, value: int) -> int:
        """Store `value` under `key` unless present; return the earlier value or -1."""
        i = self._slot(key)
        if self._keys[i] == key:
            return self._values[i]
        self._fill(i, key, value)
        return -1

    def replace(self, key: int, value: int) -> None:
        """Store `value` under `key`, replacing any earlier value."""
        i = self._slot(key)
        if self._keys[i] == key:
            self._values[i] = value
        else:
            self._fill(i, key, value)

    def _grow(self) -> None:
        old_keys, old_values = self._keys, self._values
        size = (self._mask + 1) * 2
        self._keys = array("q", bytes(8 * size))
        self._values = array("i", bytes(4 * size))
        self._mask = size - 1
        self._used = 0
        for k, v in zip(old_keys, old_values, strict=True):
            if k != 0:
                self.setdefault(k, v)


class LineColumns:
    """Parallel columns of line numbers (`int32`, -1 for none), one row per record."""

    def __init__(self, *names: str) -> None:
        self._cols = {name: array("i") for name in names}
        self._order = tuple(self._cols.values())

    def __len__(self) -> int:
        return len(next(iter(self._cols.values())))

    def append(self, **values: int) -> int:
        """Add a row; unnamed columns get -1. Returns the row index."""
        for name, col in self._cols.items():
            col.append(values.get(name, -1))
        return len(self) - 1

    def append_row(self, *values: int) -> int:
        """Add a row given every column's value in column order; returns the row index.

        The analysis pass adds a row per tool call; keyword arguments cost a dict each.
        """
        cols = self._order
        for col, value in zip(cols, values, strict=True):
            col.append(value)
        return len(cols[0]) - 1

    def get(self, name: str, row: int) -> int:
        """One cell."""
        return self._cols[name][row]

    def set(self, name: str, row: int, value: int) -> None:
        """Overwrite one cell."""
        self._cols[name][row] = value

    def column(self, name: str) -> array[int]:
        """A whole column (do not mutate)."""
        return self._cols[name]

    def sorted_by(self, name: str) -> tuple[array[int], array[int]]:
        """(values, rows): the column's non-negative values ascending, with their rows."""
        col = self._cols[name]
        rows = sorted((r for r in range(len(col)) if col[r] >= 0), key=col.__getitem__)
        return array("i", (col[r] for r in rows)), array("i", rows)


class IdOverlay:
    """An `IdTable` as a copy sees it: the original's keys plus the copy's own additions.

    An `Analyser` finishes a copy of its pass after every update while it keeps
    feeding the original. The id tables are the biggest part of that state
    (48 MB for 2.6 M lines); an overlay keeps the copy's few additions apart
    instead of copying them. The original must not change while the overlay is
    in use (the copy is finished before the original is fed again).
    """

    def __init__(self, base: IdTable | IdOverlay) -> None:
        self._base = base
        self._added: dict[int, int] = {}

    def get(self, key: int) -> int:
        """The value under `key` here or in the original, or -1."""
        value = self._added.get(key)
        return self._base.get(key) if value is None else value

    def setdefault(self, key: int, value: int) -> int:
        """Store `value` under `key` here unless present anywhere; return the earlier or -1."""
        earlier = self.get(key)
        if earlier < 0:
            self._added[key] = value
        return earlier

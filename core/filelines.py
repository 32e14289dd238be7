"""A text file as numbered rows, indexed sparsely by byte offset and read on demand.

Artifacts are the tool results too big for the conversation: hundreds of MiB,
sometimes one single line (minified JSON, a base64 blob). The viewer must page
through them without reading them whole, and its memory must not grow with
the file: an index entry per row would make a 200 MiB artifact of short lines
cost ~80 MB. So the index is sparse: a *checkpoint* (row number, offset) is
kept at the first row boundary at least `CHECKPOINT_BYTES` (64 KiB) after the
previous one, which is 16 bytes per 64 KiB of file whatever its rows are like.
Row N is found by bisecting the checkpoints and scanning the one window that
holds it (at most 64 KiB and one row); a small LRU keeps the row boundaries of
recently scanned windows, so drawing a screen of rows scans once.

A *row* is a physical line without its LF, except that a line longer than
`row_bytes` is cut into rows of at most `row_bytes` bytes, each cut on a UTF-8
character boundary. That is what makes a 50 MB line pageable, and it keeps any
one row cheap to decode and draw. A CR before the LF stays in the row: callers
show it (as "␍" through `core.text.visible`), since an artifact is exactly the
bytes a tool returned. Cuts depend only on the bytes from the start of their
line, so scanning a window from any checkpoint gives exactly the rows the full
scan found.

The index is built incrementally (`index(max_bytes=...)`) so a worker thread
can scan while the UI thread reads rows that are already known; a lock makes
the two safe together, and `close` waits for an in-flight chunk so the file
descriptor is never reused under a reading thread. Chunks whose lines are all
shorter than `row_bytes` (the common case) are counted with `bytes.count` and
`bytes.find`, in C, rather than a Python step per line.
"""

from __future__ import annotations

import contextlib
import os
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path

from transcript_view.core.transcript import open_readonly

#: Bytes read and scanned per step of `index`.
CHUNK_BYTES = 8 << 20

#: Smallest allowed `row_bytes`: a row must hold any one UTF-8 character.
MIN_ROW_BYTES = 4

#: Least distance in bytes between two checkpoints of the sparse index.
CHECKPOINT_BYTES = 64 << 10

#: Windows (rows between two checkpoints) whose boundaries are kept after a scan.
WINDOW_CACHE = 8

#: Bytes at the end of the file that `tail_rows` lays out before the index gets there.
TAIL_BYTES = 64 << 10


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


class FileLines:
    """Rows of a (possibly huge) text file, indexed by byte offsets, read on demand.

    Row boundaries are encoded as `offset << 1 | ends_with_lf`: boundary k is
    where row k starts (and row k-1 ends), and its low bit says whether row
    k-1 was ended by an LF (which then sits just before the boundary and is
    not part of the row). Only checkpoints are stored: `_mark_rows[k]` is a
    row number and `_mark_bounds[k]` that row's starting boundary; the first
    checkpoint is always row 0 at offset 0. `_last_bound` is the end of the
    last known row.

    Only rows whose end is known are counted: while the index is incomplete
    the row being scanned is not visible yet.

    Raises:
        core.transcript.TranscriptError: the path is not a regular file (a
            fifo, a device, a directory). Opening never blocks.
        OSError: the path cannot be opened.
        ValueError: `row_bytes` is smaller than `MIN_ROW_BYTES`.
    """

    def __init__(
        self,
        path: Path,
        *,
        row_bytes: int = 2048,
        span: tuple[int, int] | None = None,
        data: bytes | None = None,
    ) -> None:
        """Open `path` read-only; nothing is read until `index` or `row`.

        `span` restricts the rows to the bytes `[start, end)` of the file, which
        then behave as a file of their own (offsets count from `start`): that is
        how one huge transcript line is paged through without copying it.
        `data`: the rows are of these bytes instead, and nothing is opened (a text
        that is no file of its own: a field of a transcript line, decoded); `path`
        then only says where they came from.
        """
        if row_bytes < MIN_ROW_BYTES:
            raise ValueError(f"row_bytes must be at least {MIN_ROW_BYTES}, not {row_bytes}")
        self.path = Path(path)
        self.row_bytes = row_bytes
        self._data = data
        self._fd: int | None = open_readonly(self.path) if data is None else None
        file_size = os.fstat(self._fd).st_size if self._fd is not None else len(data or b"")
        if span is None:
            self._base, self._size = 0, file_size
        else:
            start = min(max(span[0], 0), file_size)
            self._base, self._size = start, max(min(span[1], file_size) - start, 0)
        self._mark_rows = array("q", [0])
        self._mark_bounds = array("q", [0])
        self._next_mark = CHECKPOINT_BYTES  # offset from which the next checkpoint is taken
        self._rows = 0  # rows whose end is known
        self._last_bound = 0  # encoded boundary where row `_rows` starts
        self._scanned = 0  # bytes of the file the index covers
        self._row_start = 0  # start of the row being scanned (end not known yet)
        self._complete = self._size == 0
        # (checkpoint, end row) -> (row boundaries, the window's bytes, their offset)
        self._windows: OrderedDict[tuple[int, int], tuple[array[int], bytes, int]] = OrderedDict()
        self._tail: list[tuple[int, int]] | None = None
        self._tail_data = b""
        self._tail_from = 0
        # Guards _fd, the checkpoints, the counters and the window cache; held briefly.
        self._lock = threading.Lock()
        # Serialises index() calls and lets close() wait for a running chunk.
        self._index_lock = threading.Lock()
        self._closed = False

    # -- state ---------------------------------------------------------------

    @property
    def row_count(self) -> int:
        """Rows known so far (all rows once `complete`)."""
        return self._rows

    @property
    def complete(self) -> bool:
        """True once the whole file has been indexed."""
        return self._complete

    @property
    def size(self) -> int:
        """The file's size in bytes when it was opened (or where a shrunk file ended)."""
        return self._size

    @property
    def indexed_bytes(self) -> int:
        """How many bytes from the start the index has scanned."""
        return self._scanned

    @property
    def closed(self) -> bool:
        """True after `close`."""
        return self._closed

    @property
    def checkpoints(self) -> int:
        """Checkpoints of the sparse index (its memory is 16 bytes each)."""
        return len(self._mark_rows)

    @property
    def _shut(self) -> bool:
        """Nothing is left to read (closed); read with `_lock` held."""
        return self._fd is None and self._data is None

    def _pread(self, n: int, offset: int) -> bytes:
        """`n` bytes at `offset` of the file, or of the bytes given; not `_shut`."""
        if self._data is not None:
            return self._data[offset : offset + n]
        assert self._fd is not None
        return os.pread(self._fd, n, offset)

    # -- indexing ------------------------------------------------------------

    def index(
        self,
        progress: Callable[[int, int], None] | None = None,
        *,
        max_bytes: int | None = None,
    ) -> bool:
        """Scan more of the file; return True when the whole file is indexed.

        Safe to call from a worker thread while other threads call `row`.
        Call it repeatedly with `max_bytes` to index in slices (and check for
        cancellation in between).

        Args:
            progress: Called as `progress(bytes_done, bytes_total)` after each chunk.
            max_bytes: Scan at most this many more bytes (None: to the end).

        Returns:
            Whether the index is complete.
        """
        with self._index_lock:
            if self._complete or self._closed:
                return self._complete
            budget = self._size - self._scanned if max_bytes is None else max(0, max_bytes)
            while budget > 0 and not self._complete:
                want = min(CHUNK_BYTES, budget, self._size - self._scanned)
                with self._lock:
                    if self._closed or self._shut:
                        return False
                    base = self._scanned
                    chunk = self._pread(want, self._base + base)
                if not chunk:
                    # The file shrank since it was opened: index what there is.
                    self._size = base
                    self._finish()
                    break
                self._scan(chunk, base)
                budget -= len(chunk)
                if self._scanned >= self._size:
                    self._finish()
                if progress is not None:
                    progress(self._scanned, self._size)
            return self._complete

    def _short_lines_only(self, chunk: bytes, base: int) -> bool:
        """Whether no row of `chunk` (with the row it continues) needs cutting.

        A line longer than `row_bytes` (n) between two LFs of the chunk holds a
        whole window of (n + 1) // 2 bytes of a fixed grid, so probing the grid
        with `find` (in C, a few thousand calls per chunk and no copies) rules
        long lines out; a window without an LF sends the chunk to the exact scan.
        """
        n = self.row_bytes
        find = chunk.find
        first = find(b"\n")
        if first == -1:
            return base + len(chunk) - self._row_start <= n
        if base + first - self._row_start > n:
            return False
        last = chunk.rfind(b"\n")
        if len(chunk) - last - 1 > n:
            return False
        w = max((n + 1) // 2, 1)
        return all(find(b"\n", p, p + w) != -1 for p in range(first + 1, last + 2 - w, w))

    def _scan(self, chunk: bytes, base: int) -> None:
        """Count the rows of `chunk` (which starts at offset `base`) and place checkpoints."""
        rows = self._rows
        last = self._last_bound
        next_mark = self._next_mark
        mark_rows: list[int] = []
        mark_bounds: list[int] = []
        if self._short_lines_only(chunk, base):
            # Every LF ends a row and nothing is cut: count in C, find checkpoints in C.
            counted = 0  # LFs in chunk[:counted_to]
            counted_to = 0
            while True:
                nl = chunk.find(b"\n", max(next_mark - base - 1, counted_to))
                if nl == -1:
                    break
                counted += chunk.count(b"\n", counted_to, nl + 1)
                counted_to = nl + 1
                boundary = base + nl + 1
                mark_rows.append(rows + counted)
                mark_bounds.append(boundary << 1 | 1)
                next_mark = boundary + CHECKPOINT_BYTES
            total = chunk.count(b"\n")
            if total:
                rows += total
                last = (base + chunk.rfind(b"\n") + 1) << 1 | 1
        else:
            for bound in self._boundaries(chunk, base, self._row_start):
                rows += 1
                last = bound
                if bound >> 1 >= next_mark:
                    mark_rows.append(rows)
                    mark_bounds.append(bound)
                    next_mark = (bound >> 1) + CHECKPOINT_BYTES
        with self._lock:
            self._mark_rows.extend(mark_rows)
            self._mark_bounds.extend(mark_bounds)
            self._next_mark = next_mark
            self._rows = rows
            self._last_bound = last
            self._row_start = last >> 1
            self._scanned = base + len(chunk)

    def _boundaries(self, chunk: bytes, base: int, start: int) -> Iterator[int]:
        """The encoded row boundaries found in `chunk` for rows starting at `start`.

        `chunk` starts at offset `base` (`start <= base`: the row being scanned
        may have begun in an earlier chunk). A line longer than `row_bytes` is
        cut; a cut only looks at bytes after the start of its row.
        """
        row_bytes = self.row_bytes
        end_of_chunk = base + len(chunk)
        pos = 0
        find = chunk.find
        while True:
            nl = find(b"\n", pos)
            limit = end_of_chunk if nl == -1 else base + nl
            # Cut the row into pieces while more than row_bytes remain before `limit`.
            while limit - start > row_bytes:
                start = self._cut(start, chunk, base)
                yield start << 1
            if nl == -1:
                return
            start = base + nl + 1
            yield start << 1 | 1
            pos = nl + 1

    def _cut(self, start: int, chunk: bytes, base: int) -> int:
        """Where a row beginning at `start` is cut: row_bytes on, backed off to a char start."""
        cut = start + self.row_bytes
        for back in range(4):
            at = cut - back
            if at <= start:
                break
            if not _is_continuation(self._byte_at(at, chunk, base)):
                return at
        # Not UTF-8 here (or a degenerate row size): cut at the byte limit.
        return cut

    def _byte_at(self, offset: int, chunk: bytes, base: int) -> int:
        i = offset - base
        if 0 <= i < len(chunk):
            return chunk[i]
        if self._shut:
            return 0
        data = self._pread(1, self._base + offset)
        return data[0] if data else 0

    def _finish(self) -> None:
        with self._lock:
            if self._row_start < self._size:
                # A last line without an LF.
                self._rows += 1
                self._last_bound = self._size << 1
                self._row_start = self._size
            self._complete = True

    # -- the sparse lookup ---------------------------------------------------------

    def _window(self, k: int) -> tuple[array[int], bytes, int]:
        """Boundaries of the rows from checkpoint `k` to the next (or the last known row).

        Called with `_lock` held. Entry j of the array is the start of row
        `_mark_rows[k] + j`; the last entry is the end of the window's last row.
        The window's bytes (and their file offset) come along: rows drawn from a
        cached window need no read, so drawing a screen does not give up the
        GIL to an index worker once per row.
        """
        if k + 1 < len(self._mark_rows):
            end_row, end_bound = self._mark_rows[k + 1], self._mark_bounds[k + 1]
        else:
            end_row, end_bound = self._rows, self._last_bound
        key = (k, end_row)
        cached = self._windows.get(key)
        if cached is not None:
            self._windows.move_to_end(key)
            return cached
        first_row, first_bound = self._mark_rows[k], self._mark_bounds[k]
        start, end = first_bound >> 1, end_bound >> 1
        if self._shut:
            raise ValueError("FileLines is closed")
        # Read a row past the window's end: whether a row is cut depends on there
        # being more than row_bytes before its LF, which may lie beyond the window.
        stop = min(end + self.row_bytes + 1, self._size)
        chunk = self._pread(stop - start, self._base + start) if stop > start else b""
        bounds = array("q", [first_bound])
        wanted = end_row - first_row
        if wanted:
            for bound in self._boundaries(chunk, start, start):
                bounds.append(bound)
                if len(bounds) > wanted:
                    break
        if len(bounds) <= wanted:
            # The file's last row, without an LF: it ends where the file does.
            bounds.append(end_bound)
        bounds[-1] = end_bound
        window = (bounds, chunk, start)
        self._windows[key] = window
        if len(self._windows) > WINDOW_CACHE:
            self._windows.popitem(last=False)
        return window

    def _checkpoint_of_row(self, i: int) -> int:
        return bisect_right(self._mark_rows, i) - 1

    def _bounds_of(self, i: int) -> tuple[int, int]:
        """Encoded (start, end) boundaries of row `i`; `_lock` must be held."""
        if not 0 <= i < self._rows:
            raise IndexError(f"row {i} out of range (0..{self._rows - 1} known)")
        k = self._checkpoint_of_row(i)
        bounds = self._window(k)[0]
        j = i - self._mark_rows[k]
        return bounds[j], bounds[j + 1]

    # -- reading -------------------------------------------------------------

    def row_span(self, i: int) -> tuple[int, int]:
        """Byte offsets `[start, end)` of row `i` in the file, its LF excluded.

        Raises:
            IndexError: row `i` is not (yet) known.
        """
        with self._lock:
            if self._shut and 0 <= i < self._rows:
                raise ValueError("FileLines is closed")
            start, nxt = self._bounds_of(i)
        return start >> 1, (nxt >> 1) - (nxt & 1)

    def row_bytes_of(self, i: int) -> bytes:
        """The raw bytes of row `i` (no LF), from its window (read once per window)."""
        with self._lock:
            if not 0 <= i < self._rows:
                raise IndexError(f"row {i} out of range (0..{self._rows - 1} known)")
            if self._shut:
                raise ValueError("FileLines is closed")
            k = self._checkpoint_of_row(i)
            bounds, data, offset = self._window(k)
            j = i - self._mark_rows[k]
            first, nxt = bounds[j], bounds[j + 1]
            start, end = (first >> 1) - offset, (nxt >> 1) - (nxt & 1) - offset
            return data[start:end]

    def row_stop(self, i: int) -> int:
        """Where row `i + 1` starts: the end of row `i` plus its LF, if it had one."""
        with self._lock:
            _, nxt = self._bounds_of(i)
        return nxt >> 1

    def read(self, start: int, end: int) -> bytes:
        """The bytes `[start, end)` (offsets as `row_span` gives them)."""
        with self._lock:
            if self._shut:
                raise ValueError("FileLines is closed")
            tail = self._tail_from
            if tail <= start and end <= tail + len(self._tail_data):
                return self._tail_data[start - tail : end - tail]
            return self._pread(end - start, self._base + start) if end > start else b""

    def tail_rows(self) -> list[tuple[int, int]]:
        """Spans of the file's last rows, found without indexing up to them.

        The last `TAIL_BYTES` are read and laid out from the first line start in
        them, which gives exactly the rows the full index will find there (cuts
        depend only on the bytes from their line's start). So the end of a huge
        artifact can be shown at once, before the index reaches it. Empty when
        no line starts in that stretch (one huge last line): the end then waits
        for the index. Computed once (call it from a worker first).
        """
        if self._tail is not None:
            return self._tail
        size = self._size
        start = max(size - TAIL_BYTES, 0)
        data = self.read(start, size)
        if start > 0:
            nl = data.find(b"\n")
            if nl == -1 or start + nl + 1 >= size:
                self._tail = []
                return self._tail
            data, start = data[nl + 1 :], start + nl + 1
        spans: list[tuple[int, int]] = []
        row = start
        for bound in self._boundaries(data, start, start):
            spans.append((row, (bound >> 1) - (bound & 1)))
            row = bound >> 1
        if row < size:
            spans.append((row, size))
        with self._lock:
            self._tail_data, self._tail_from = data, start
        self._tail = spans
        return spans

    def row(self, i: int) -> str:
        """Row `i` decoded as UTF-8 (invalid bytes become U+FFFD), without its LF.

        The text is raw: pass it through `core.text.visible` before
        showing it. Raises IndexError for an unknown row.
        """
        return self.row_bytes_of(i).decode("utf-8", errors="replace")

    def row_of_offset(self, offset: int) -> int:
        """The row holding byte `offset` (an LF belongs to the row it ends).

        Offsets before the file clamp to row 0 and offsets past the indexed
        rows clamp to the last known row; with no rows known, 0.
        """
        with self._lock:
            rows = self._rows
            if rows <= 0 or self._shut:
                return 0
            # Boundaries are (offset << 1 | flag); comparing against offset << 1 | 1
            # finds the last checkpoint, then row, starting at or before `offset`.
            key = (max(offset, 0) << 1) | 1
            k = max(bisect_right(self._mark_bounds, key) - 1, 0)
            while k > 0 and self._mark_rows[k] >= rows:
                k -= 1
            bounds = self._window(k)[0]
            j = bisect_right(bounds, key, 0, len(bounds) - 1) - 1
            i = self._mark_rows[k] + max(j, 0)
        return max(0, min(i, rows - 1))

    # -- lifetime ------------------------------------------------------------

    def close(self) -> None:
        """Close the file; waits for an `index` chunk in flight. Idempotent."""
        self._closed = True
        with self._index_lock, self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._data = None
            self._windows.clear()
            self._tail_data = b""

    def __enter__(self) -> FileLines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

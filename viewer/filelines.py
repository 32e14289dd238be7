"""A text file as numbered rows, indexed by byte offset and read on demand.

Artifacts are the tool results too big for the conversation: hundreds of MiB,
sometimes one single line (minified JSON, a base64 blob). The viewer must page
through them without reading them whole, so this module keeps only an index of
where each row starts (8 bytes per row) and reads a row's bytes with `os.pread`
when it is drawn.

A *row* is a physical line without its LF, except that a line longer than
`row_bytes` is cut into rows of at most `row_bytes` bytes, each cut on a UTF-8
character boundary. That is what makes a 50 MB line pageable, and it keeps any
one row cheap to decode and draw. A CR before the LF stays in the row: callers
show it (as "␍" through `viewer.sanitize`), since an artifact is exactly the
bytes a tool returned.

The index is built incrementally (`index(max_bytes=...)`) so a worker thread
can scan while the UI thread reads rows that are already known; a lock makes
the two safe together, and `close` waits for an in-flight chunk so the file
descriptor is never reused under a reading thread.
"""

from __future__ import annotations

import contextlib
import os
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable
from pathlib import Path

from core.transcript import open_readonly

#: Bytes read and scanned per step of `index`.
CHUNK_BYTES = 8 << 20

#: Smallest allowed `row_bytes`: a row must hold any one UTF-8 character.
MIN_ROW_BYTES = 4


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


class FileLines:
    """Rows of a (possibly huge) text file, indexed by byte offsets, read on demand.

    The index is an `array('q')` of row boundaries, each stored as
    `offset << 1 | ends_with_lf`: boundary k is where row k starts (and row
    k-1 ends), and its low bit says whether row k-1 was ended by an LF (which
    then sits just before the boundary and is not part of the row). The first
    entry is always 0, so `row_count == len(bounds) - 1`.

    Only rows whose end is known are counted: while the index is incomplete
    the row being scanned is not visible yet.

    Raises:
        core.transcript.TranscriptError: the path is not a regular file (a
            fifo, a device, a directory). Opening never blocks.
        OSError: the path cannot be opened.
        ValueError: `row_bytes` is smaller than `MIN_ROW_BYTES`.
    """

    def __init__(self, path: Path, *, row_bytes: int = 2048) -> None:
        """Open `path` read-only; nothing is read until `index` or `row`."""
        if row_bytes < MIN_ROW_BYTES:
            raise ValueError(f"row_bytes must be at least {MIN_ROW_BYTES}, not {row_bytes}")
        self.path = Path(path)
        self.row_bytes = row_bytes
        self._fd: int | None = open_readonly(self.path)
        self._size = os.fstat(self._fd).st_size
        self._bounds = array("q", [0])
        self._scanned = 0  # bytes of the file the index covers
        self._row_start = 0  # start of the row being scanned (end not known yet)
        self._complete = self._size == 0
        # Guards _fd, _bounds, _scanned, _complete; held only briefly.
        self._lock = threading.Lock()
        # Serialises index() calls and lets close() wait for a running chunk.
        self._index_lock = threading.Lock()
        self._closed = False

    # -- state ---------------------------------------------------------------

    @property
    def row_count(self) -> int:
        """Rows known so far (all rows once `complete`)."""
        return len(self._bounds) - 1

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
                    if self._closed or self._fd is None:
                        return False
                    base = self._scanned
                    chunk = os.pread(self._fd, want, base)
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

    def _scan(self, chunk: bytes, base: int) -> None:
        """Add the row boundaries found in `chunk` (which starts at file offset `base`)."""
        found: list[int] = []
        row_bytes = self.row_bytes
        start = self._row_start
        end_of_chunk = base + len(chunk)
        pos = 0
        find = chunk.find
        while True:
            nl = find(b"\n", pos)
            limit = end_of_chunk if nl == -1 else base + nl
            # Cut the row into pieces while more than row_bytes remain before `limit`.
            while limit - start > row_bytes:
                start = self._cut(start, chunk, base)
                found.append(start << 1)
            if nl == -1:
                break
            start = base + nl + 1
            found.append(start << 1 | 1)
            pos = nl + 1
        with self._lock:
            self._bounds.extend(found)
            self._scanned = end_of_chunk
            self._row_start = start

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
        with self._lock:
            if self._fd is None:
                return 0
            data = os.pread(self._fd, 1, offset)
        return data[0] if data else 0

    def _finish(self) -> None:
        with self._lock:
            if self._row_start < self._size:
                # A last line without an LF.
                self._bounds.append(self._size << 1)
                self._row_start = self._size
            self._complete = True

    # -- reading -------------------------------------------------------------

    def _check_row(self, i: int) -> None:
        if not 0 <= i < len(self._bounds) - 1:
            raise IndexError(f"row {i} out of range (0..{len(self._bounds) - 2} known)")

    def row_span(self, i: int) -> tuple[int, int]:
        """Byte offsets `[start, end)` of row `i` in the file, its LF excluded.

        Raises:
            IndexError: row `i` is not (yet) known.
        """
        with self._lock:
            self._check_row(i)
            start = self._bounds[i] >> 1
            nxt = self._bounds[i + 1]
        return start, (nxt >> 1) - (nxt & 1)

    def row_bytes_of(self, i: int) -> bytes:
        """The raw bytes of row `i` (no LF), read with one `pread`."""
        with self._lock:
            self._check_row(i)
            if self._fd is None:
                raise ValueError("FileLines is closed")
            start = self._bounds[i] >> 1
            nxt = self._bounds[i + 1]
            end = (nxt >> 1) - (nxt & 1)
            return os.pread(self._fd, end - start, start) if end > start else b""

    def row(self, i: int) -> str:
        """Row `i` decoded as UTF-8 (invalid bytes become U+FFFD), without its LF.

        The text is raw: pass it through `viewer.sanitize.visible` before
        showing it. Raises IndexError for an unknown row.
        """
        return self.row_bytes_of(i).decode("utf-8", errors="replace")

    def row_of_offset(self, offset: int) -> int:
        """The row holding byte `offset` (an LF belongs to the row it ends).

        Offsets before the file clamp to row 0 and offsets past the indexed
        rows clamp to the last known row; with no rows known, 0.
        """
        with self._lock:
            rows = len(self._bounds) - 1
            if rows <= 0:
                return 0
            # Boundaries are (offset << 1 | flag); comparing against offset << 1 | 1
            # finds the last row starting at or before `offset`.
            i = bisect_right(self._bounds, (max(offset, 0) << 1) | 1, 0, rows) - 1
        return max(0, min(i, rows - 1))

    # -- lifetime ------------------------------------------------------------

    def close(self) -> None:
        """Close the file; waits for an `index` chunk in flight. Idempotent."""
        self._closed = True
        with self._index_lock, self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> FileLines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

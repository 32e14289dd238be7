"""Reading a transcript: a byte-offset line index, and lines parsed on demand.

A transcript can be a gigabyte. Nothing here loads it whole: the index is a
compact array of line-start offsets built by scanning the file in large chunks
(in the background, with progress, when a UI asks), and each line is read with
`os.pread` and parsed only when somebody wants it. The file is opened read-only
and nothing is ever written: this is the reference's `peek`, not its `load`.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transcript_view.core.artifacts import artifact_dir_for
from transcript_view.core.envelopes import ENVELOPE_VERSION, Envelope, make_envelope

#: How much of the file one index step reads. Large reads are what make a
#: gigabyte scan fast; 8 MiB keeps the peak small.
SCAN_CHUNK = 8 << 20


class TranscriptError(Exception):
    """A path that cannot be read as a transcript at all (not a line of it)."""


@dataclass(frozen=True, slots=True)
class LineProblem:
    """A line that is not a usable envelope, with why."""

    line: int
    offset: int
    kind: str
    """`malformed-line`, `torn-tail` (only the last line is bad) or `unknown-version`."""
    message: str
    raw: bytes
    """A prefix of the line's bytes (at most 200), for showing what is there."""


Parsed = Envelope | LineProblem


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_line_bytes(raw: bytes, line: int, offset: int, *, is_last: bool = False) -> Parsed | None:
    """Parse one line's bytes into an envelope, a problem, or None for a blank line.

    Strict UTF-8, strict JSON (no NaN/Infinity), an object with a string `type`
    and `v` equal to 1. Anything else is a `LineProblem` naming the line; the last
    line of a file being bad is a torn tail (what a crash mid-append leaves).
    """
    body = raw[:-1] if raw.endswith(b"\r") else raw
    if not body.strip():
        return None
    bad_kind = "torn-tail" if is_last else "malformed-line"
    prefix = raw[:200]
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return LineProblem(line, offset, bad_kind, f"invalid UTF-8 at byte {exc.start}", prefix)
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return LineProblem(line, offset, bad_kind, "JSON nested too deeply", prefix)
    except ValueError as exc:
        msg = getattr(exc, "msg", None) or str(exc)
        pos = getattr(exc, "pos", None)
        where = f" at character {pos}" if isinstance(pos, int) else ""
        return LineProblem(line, offset, bad_kind, f"not JSON: {msg}{where}", prefix)
    if not isinstance(data, dict):
        return LineProblem(
            line, offset, bad_kind, f"not an envelope: a JSON {_json_kind(data)}", prefix
        )
    if not isinstance(data.get("type"), str):
        return LineProblem(line, offset, bad_kind, "not an envelope: no string `type`", prefix)
    v = data.get("v")
    if not (isinstance(v, int) and not isinstance(v, bool) and v == ENVELOPE_VERSION):
        return LineProblem(
            line,
            offset,
            "unknown-version",
            f"envelope version {json.dumps(v)[:40] if 'v' in data else 'missing'}; "
            f"this reader reads version {ENVELOPE_VERSION}",
            prefix,
        )
    return make_envelope(line, offset, data)


def _is_malformed(parsed: Parsed | None) -> bool:
    return isinstance(parsed, LineProblem) and parsed.kind == "malformed-line"


def as_last(parsed: Parsed) -> Parsed:
    """`parsed` as the file's last line: a malformed one becomes a torn tail."""
    if isinstance(parsed, LineProblem) and parsed.kind == "malformed-line":
        return LineProblem(parsed.line, parsed.offset, "torn-tail", parsed.message, parsed.raw)
    return parsed


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def open_readonly(path: Path) -> int:
    """Open a path for reading without ever blocking or following it into a device.

    `O_NONBLOCK` means a fifo cannot hang the open; the `fstat` after opening (not
    a `stat` before it, which would race) refuses anything but a regular file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TranscriptError(f"{path}: {describe_mode(st.st_mode)}, not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def describe_mode(mode: int) -> str:
    """A few words for what kind of file a mode says a path is."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a fifo"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


class Transcript:
    """A transcript file, indexed by line offsets and parsed on demand.

    Thread-safe for readers: lines are read with `os.pread`, so a UI worker can
    extend the index while the screen reads lines already indexed.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Open `path` read-only; the index is empty until `build_index` runs.

        Raises:
            TranscriptError: the path is missing, unreadable, or not a regular file.
        """
        self.path = Path(path)
        self.artifact_dir = artifact_dir_for(self.path)
        if self.path.is_symlink() and not os.path.lexists(self.artifact_dir):
            # A transcript linked in from elsewhere keeps its artifacts beside the
            # real file, which is where its writer put them.
            self.artifact_dir = artifact_dir_for(self.path.resolve())
        try:
            self._fd = open_readonly(self.path)
        except FileNotFoundError:
            raise TranscriptError(f"{self.path}: no such file") from None
        except PermissionError:
            raise TranscriptError(f"{self.path}: permission denied") from None
        except IsADirectoryError:
            raise TranscriptError(f"{self.path}: a directory, not a regular file") from None
        except OSError as exc:
            raise TranscriptError(f"{self.path}: {exc.strerror or exc}") from None
        self._lock = threading.Lock()
        self._starts = array("q")
        self._scanned = 0
        self._size_at_scan = 0
        self._closed = False
        self.resets = 0
        """How often `refresh` found the file shorter than indexed and started over:
        anything built from earlier lines (an incremental analysis) is stale then."""

    # -- lifecycle ---------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Transcript:
        """Open and fully index a transcript (the simple, blocking way)."""
        t = cls(path)
        t.build_index()
        return t

    def close(self) -> None:
        """Release the file descriptor."""
        if not self._closed:
            self._closed = True
            os.close(self._fd)

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the index ---------------------------------------------------------

    def file_size(self) -> int:
        """The file's current size in bytes."""
        if self._closed:
            return os.stat(self.path).st_size
        return os.fstat(self._fd).st_size

    def _pread(self, length: int, offset: int) -> bytes:
        """`os.pread`, reopening the file read-only for the call once it is closed.

        An analysis reads operations back by line long after `verify` closed the
        transcript; the line index survives the close, the descriptor does not.
        """
        if not self._closed:
            return os.pread(self._fd, length, offset)
        fd = open_readonly(self.path)
        try:
            return os.pread(fd, length, offset)
        finally:
            os.close(fd)

    @property
    def indexed_bytes(self) -> int:
        """How far the index has scanned."""
        return self._scanned

    @property
    def index_complete(self) -> bool:
        """Whether the index covers the file as it was when last scanned."""
        return self._scanned >= self._size_at_scan

    def build_index(
        self,
        progress: Callable[[int, int], None] | None = None,
        *,
        max_bytes: int | None = None,
    ) -> bool:
        """Scan forward from where the index stopped; return True when it reached the end.

        `progress(scanned, total)` is called after each chunk. `max_bytes` bounds
        one call's work, so a UI can index the first screen first.
        """
        total = self.file_size()
        self._size_at_scan = total
        budget = max_bytes if max_bytes is not None else total
        pos = self._scanned
        stop = min(total, pos + budget)
        while pos < stop:
            chunk = self._pread(min(SCAN_CHUNK, stop - pos), pos)
            if not chunk:
                total = pos
                break
            new: array[int] = array("q")
            if pos == 0 and not self._starts:
                new.append(0)
            find = chunk.find
            i = find(b"\n")
            while i != -1:
                if pos + i + 1 < total:
                    new.append(pos + i + 1)
                i = find(b"\n", i + 1)
            pos += len(chunk)
            with self._lock:
                self._starts.extend(new)
                self._scanned = pos
            if progress is not None:
                progress(pos, total)
        if total == 0:
            self._size_at_scan = 0
        return self._scanned >= total

    def refresh(self) -> int:
        """Index what was appended since the last scan; return how many lines are new.

        For following a transcript that is still being written: the file only
        grows, so the old index stays valid and only the new bytes are scanned.
        A line that was unterminated at the last scan keeps its number.
        """
        before = self.line_count
        size = self.file_size()
        if size < self._scanned:
            # Truncated or replaced: the index no longer describes the file.
            with self._lock:
                self._starts = array("q")
                self._scanned = 0
                self.resets += 1
        if size > 0 and self._scanned > 0 and self._scanned < size:
            last = self._pread(1, self._scanned - 1)
            if last == b"\n" and (not self._starts or self._starts[-1] != self._scanned):
                with self._lock:
                    self._starts.append(self._scanned)
        self.build_index()
        return self.line_count - before

    @property
    def line_count(self) -> int:
        """Lines indexed so far (an unterminated last line counts)."""
        return len(self._starts)

    def line_span(self, line: int) -> tuple[int, int]:
        """(start, end) byte offsets of a 1-based line, without its LF."""
        with self._lock:
            start = self._starts[line - 1]
            if line < len(self._starts):
                end = self._starts[line] - 1
            else:
                end = self._scanned
                if end > start and self._pread(1, end - 1) == b"\n":
                    end -= 1
        return start, end

    def line_length(self, line: int) -> int:
        """Byte length of a line without its LF."""
        start, end = self.line_span(line)
        return end - start

    def raw_line(self, line: int, limit: int | None = None) -> bytes:
        """The bytes of a 1-based line without its LF (at most `limit` bytes)."""
        start, end = self.line_span(line)
        length = end - start if limit is None else min(end - start, limit)
        return self._pread(length, start) if length > 0 else b""

    def read_at(self, offset: int, length: int) -> bytes:
        """Bytes at an offset (for paging through a huge line)."""
        return self._pread(length, offset)

    def is_last_line(self, line: int) -> bool:
        """Whether `line` is the last line of the file as indexed."""
        return line == self.line_count

    def line_terminated(self, line: int) -> bool:
        """Whether the line ends with an LF (a still-being-written last line may not)."""
        if line < self.line_count:
            return True
        _, end = self.line_span(line)
        return self._scanned > end

    # -- parsing -------------------------------------------------------------

    def parse(self, line: int) -> Parsed | None:
        """The envelope on a 1-based line, a problem, or None when it is blank.

        Whether the line is the last one with content (which makes a bad line a
        torn tail) takes reading the lines after it, so it is only asked about
        a line that did not parse.
        """
        start, _ = self.line_span(line)
        parsed = parse_line_bytes(self.raw_line(line), line, start)
        if parsed is not None and _is_malformed(parsed) and self._is_last_content_line(line):
            parsed = as_last(parsed)
        return parsed

    def _is_last_content_line(self, line: int) -> bool:
        if line == self.line_count:
            return True
        for later in range(line + 1, self.line_count + 1):
            if self.line_length(later) > 0 and self.raw_line(later, 4096).strip():
                return False
            if later - line > 64:
                return False
        return True

    def parsed_lines(self, start: int = 1, stop: int | None = None) -> Iterator[Parsed]:
        """Non-blank lines `start` to `stop` (default: the last indexed), parsed, in order.

        Unlike iterating the transcript, the last one is not marked torn: a
        caller that reads a growing file in steps decides which line is last.
        """
        last = self.line_count if stop is None else min(stop, self.line_count)
        for line in range(max(start, 1), last + 1):
            begin, end = self.line_span(line)
            raw = self._pread(end - begin, begin) if end > begin else b""
            parsed = parse_line_bytes(raw, line, begin)
            if parsed is not None:
                yield parsed

    def __iter__(self) -> Iterator[Parsed]:
        """Every non-blank line parsed, in file order (index it first).

        A last line that does not parse is a `torn-tail` problem: a writer that
        crashed mid-line leaves exactly that.
        """
        pending: Parsed | None = None
        for parsed in self.parsed_lines():
            if pending is not None:
                yield pending
            pending = parsed
        if pending is not None:
            yield as_last(pending)

"""Reading a transcript: a byte-offset line index, and lines parsed on demand.

A transcript can be a gigabyte. Nothing here loads it whole: the index is a
compact array of line-start offsets built by scanning the file in large chunks
(in the background, with progress, when a UI asks), and each line is read with
`os.pread` and parsed only when somebody wants it. A pass over many lines
(`Transcript.raw_lines`) reads them a few megabytes at a time instead of one
`pread` each. The file is opened read-only and nothing is ever written: this is
the reference's `peek`, not its `load`.

Lines are parsed by msgspec's JSON decoder, which is several times faster than
the standard library's. The standard parser stays the definition of what a line
*is*: wherever msgspec refuses a line, or could have accepted one the standard
parser refuses, the line is parsed again by `json` and its answer is the one
given (see `parse_json_line`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import re
import stat
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from transcript_view.core import native, parallel
from transcript_view.core.artifacts import artifact_dir_for
from transcript_view.core.compressed import (
    CompressedError,
    Decoder,
    Inflated,
    is_zstd,
    plain_path,
    read_head,
    unreadable,
)
from transcript_view.core.documents import KEY_BYTES, DocumentDecoder, is_chat_document
from transcript_view.core.envelopes import ENVELOPE_VERSION, Envelope, make_envelope
from transcript_view.core.findings import Finding
from transcript_view.core.opencode_store import (
    DatabaseExport,
    StorageExport,
    address,
    is_storage_session,
)
from transcript_view.core.text import human_size, plural

if TYPE_CHECKING:
    from transcript_view.core import _lines  # the optional native scanner (core/_lines.c)
else:  # None where it was not built, or under TRANSCRIPT_VIEW_PURE (core/native.py)
    _lines = native.load("transcript_view.core._lines")

#: How much of the file one index step reads. Large reads are what make a
#: gigabyte scan fast; 8 MiB keeps the peak small.
SCAN_CHUNK = 8 << 20
#: How much one read of `raw_lines` takes (whole lines; a longer line is read alone).
READ_CHUNK = 4 << 20


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


_decode = msgspec.json.Decoder().decode

#: A line this long could nest containers deeper than `_DEEP` (each level takes
#: at least an opening and a closing byte); shorter lines are never walked.
_DEEP_BYTES = 1800
#: Deeper than this, the standard parser decides. It refuses JSON nested about
#: 990 levels deep (the recursion limit, less its own stack: see `_loads`),
#: msgspec a few levels deeper; below 900 both accept whatever the other accepts.
_DEEP = 900


def _deeper_than(value: object, limit: int) -> bool:
    """Whether a decoded value nests lists and objects more than `limit` levels deep."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if type(item) is dict else item
        for child in children:  # type: ignore[attr-defined]
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, depth + 1))
    return False


def fast_object(raw: bytes) -> dict[str, Any] | None:
    """The JSON object on a line, by msgspec; None whenever the standard parser must decide.

    None for anything msgspec refuses (bad JSON or UTF-8, NaN, lone surrogate
    escapes, numbers out of range, blank lines, deep nesting), for a JSON value
    that is not an object, and for a line nested deeper than `_DEEP`. What it
    accepts, the standard parser accepts with the same result: the same strict
    UTF-8, the same strictness about control characters, the same integers
    (Python's 4,300-digit limit included), correctly rounded floats, the last
    of duplicate keys. `tests/core/test_fast_path.py` holds it to that.
    """
    try:
        data = _decode(raw)
    except Exception:  # DecodeError, ValidationError, UnicodeDecodeError, RecursionError
        return None
    if type(data) is not dict:
        return None
    if len(raw) >= _DEEP_BYTES and _deeper_than(data, _DEEP):
        return None
    return data


def parse_json_line(
    raw: bytes, line: int, offset: int, *, is_last: bool = False
) -> dict[str, Any] | LineProblem | None:
    """Parse one line's bytes into a JSON object, a problem, or None for a blank line.

    Strict UTF-8, strict JSON (no NaN/Infinity), an object. This is what every
    format's line is; the reference's envelope rules come on top of it
    (`parse_line_bytes`). The last line of a file being bad is a torn tail
    (what a crash mid-append leaves). msgspec parses (`fast_object`); any line
    it does not vouch for gets the standard parser's answer
    (`parse_json_line_plain`).
    """
    data = fast_object(raw)
    if data is not None:
        return data
    return parse_json_line_plain(raw, line, offset, is_last=is_last)


def _loads(text: str) -> Any:
    """`json.loads` of a line, with an answer that does not depend on who asks.

    The parser's nesting limit is the recursion limit less the caller's own
    stack, so a line nested some 900 levels deep parsed at one depth of calls
    and refused at another: a pass in a worker process (a short stack) and
    the same pass in a test or a Textual worker (a longer one) disagreed about
    it. A line the parser refuses for its depth is parsed again on a thread of
    its own, whose stack is always the same, and that answer is the line's.

    Raises:
        RecursionError: the line is nested too deeply even there.
        ValueError: the line is not JSON (or holds NaN or Infinity).
    """
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        pass
    outcome: list[tuple[bool, Any]] = []

    def parse() -> None:
        try:
            outcome.append((True, json.loads(text, parse_constant=_reject_constant)))
        except Exception as exc:  # the caller raises it, as if it had parsed the line itself
            outcome.append((False, exc))

    thread = threading.Thread(target=parse, name="transcript-view-deep-line", daemon=True)
    thread.start()
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def parse_json_line_plain(
    raw: bytes, line: int, offset: int, *, is_last: bool = False
) -> dict[str, Any] | LineProblem | None:
    """`parse_json_line` by the standard library's parser alone: the definition of a line."""
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
        data = _loads(text)
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
    return data


def parse_line_bytes(raw: bytes, line: int, offset: int, *, is_last: bool = False) -> Parsed | None:
    """Parse one line's bytes into an envelope, a problem, or None for a blank line.

    A JSON object (`parse_json_line`) with a string `type` and `v` equal to 1.
    Anything else is a `LineProblem` naming the line.
    """
    data = fast_object(raw)
    if data is not None:
        kind, v = data.get("type"), data.get("v")
        if type(kind) is str and type(v) is int and v == ENVELOPE_VERSION:
            return make_envelope(line, offset, data)
    return parse_line_bytes_plain(raw, line, offset, is_last=is_last)


def parse_line_bytes_plain(
    raw: bytes, line: int, offset: int, *, is_last: bool = False
) -> Parsed | None:
    """`parse_line_bytes` by the standard library's parser alone (see `parse_json_line_plain`)."""
    data = parse_json_line_plain(raw, line, offset, is_last=is_last)
    if data is None or isinstance(data, LineProblem):
        return data
    bad_kind = "torn-tail" if is_last else "malformed-line"
    prefix = raw[:200]
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


def _scan_range(transcript: Transcript, piece: tuple[int, int]) -> tuple[bytes, int]:
    """A share of `build_index`: the line starts after each LF in a byte range.

    Returns the starts as `array("q")` bytes, and how far the range was read
    (short of its end if the file shrank).
    """
    pos, end = piece
    out: array[int] = array("q")
    while pos < end:
        chunk = transcript._pread(min(SCAN_CHUNK, end - pos), pos)
        if not chunk:
            break
        line_starts_into(out, chunk, pos)
        pos += len(chunk)
    return out.tobytes(), pos


def line_starts_into(out: array[int], chunk: bytes, pos: int) -> None:
    """Append to `out` the offset after each LF of `chunk`, which starts at file offset `pos`.

    The native scanner (`core/_lines.c`: memchr, the GIL released) where it
    was built; otherwise one `find` a line, the same offsets.
    """
    if _lines is not None:
        out.frombytes(_lines.line_starts(chunk, pos))
        return
    find, add, after = chunk.find, out.append, pos + 1
    i = find(b"\n")
    while i != -1:
        add(after + i)
        i = find(b"\n", i + 1)


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


def first_json_string(path: Path, pattern: re.Pattern[bytes], head_bytes: int) -> str | None:
    """The JSON string `pattern`'s group 1 finds first in a file's first `head_bytes` (a
    compressed file's, decompressed), decoded; None when there is none or it cannot be read.

    What an agent's session says of itself near its start (Qwen Code's `cwd`, Gemini
    CLI's `sessionId`), read without reading the rest.
    """
    try:
        fd = open_readonly(path)
    except (OSError, TranscriptError):
        return None
    try:
        head = os.pread(fd, head_bytes, 0)
        if is_zstd(head):
            head = read_head(fd, head_bytes)[0]
    except (OSError, CompressedError):
        return None
    finally:
        os.close(fd)
    m = pattern.search(head)
    if m is None:
        return None
    try:
        value = json.loads(m[1])
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None


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


def _reopen(
    path: str,
    artifact_dir: str,
    starts: bytes,
    state: tuple[int, int, int],
    copy: tuple[str, str | None] | None = None,
    exported: bool = False,
) -> Transcript:
    """A pickled `Transcript` in another process: the same path reopened, the index kept.

    `copy`: a compressed transcript's decompressed copy (its path, and why the
    rest could not be read), which the copy reads and leaves to its owner;
    `exported`: the copy is of an OpenCode session's rows.
    """
    t = Transcript(path, _copy=copy)
    t._exported = exported
    t.artifact_dir = Path(artifact_dir)
    t._starts.frombytes(starts)
    t._scanned, t._size_at_scan, t.resets = state
    return t


class Transcript:
    """A transcript file, indexed by line offsets and parsed on demand.

    Thread-safe for readers: lines are read with `os.pread`, so a UI worker can
    extend the index while the screen reads lines already indexed.

    A zstd-compressed file (Codex's `rollout-*.jsonl.zst`, told by its first
    bytes) is read through a private decompressed copy (`core.compressed`),
    made as the index grows and removed by `close`; `path` stays the file's.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, _copy: tuple[str, str | None] | None = None
    ) -> None:
        """Open `path` read-only; the index is empty until `build_index` runs.

        Raises:
            TranscriptError: the path is missing, unreadable, or not a regular file
                (`build_index` raises it too for a compressed file of which not one
                line can be decompressed).
        """
        self.path = path if isinstance(path, Path) else Path(path)
        self._inflated: Inflated | None = None
        self._exported = False
        """Whether the copy is of an OpenCode session's rows (not a decompressed file)."""
        self._copy = _copy
        """The decompressed copy read instead of `path`, and why its rest is lost."""
        self.artifact_dir = artifact_dir_for(plain_path(self.path))
        if self.path.is_symlink() and not os.path.lexists(self.artifact_dir):
            # A transcript linked in from elsewhere keeps its artifacts beside the
            # real file, which is where its writer put them.
            self.artifact_dir = artifact_dir_for(plain_path(self.path.resolve()))
        stored = address(self.path) if _copy is None and not os.path.lexists(self.path) else None
        source = Path(_copy[0]) if _copy is not None else stored[0] if stored else self.path
        try:
            self._fd = open_readonly(source)
        except FileNotFoundError:
            raise TranscriptError(f"{self.path}: no such file") from None
        except PermissionError:
            raise TranscriptError(f"{self.path}: permission denied") from None
        except IsADirectoryError:
            raise TranscriptError(f"{self.path}: a directory, not a regular file") from None
        except OSError as exc:
            raise TranscriptError(f"{self.path}: {exc.strerror or exc}") from None
        if stored is not None:  # a session in OpenCode's database (`core.opencode_store`)
            self._exported = True
            self._inflate(DatabaseExport(*stored))
        elif _copy is None:
            self._inflate_if_compressed()
        self._lock = threading.Lock()
        self._starts = array("q")
        self._scanned = 0
        self._size_at_scan = 0
        self._closed = False
        self.resets = 0
        """How often `refresh` found the file shorter than indexed and started over:
        anything built from earlier lines (an incremental analysis) is stale then."""
        self.last_line_grew = False
        """Whether the last `refresh` found more bytes for a last line it had indexed
        without its LF: a line a writer lands in two writes is counted when its first
        part arrives, so its completion adds no line, yet it must be parsed again."""

    def _inflate_if_compressed(self) -> None:
        """Read a zstd-compressed file through a private decompressed copy (`core.compressed`),
        and an older Gemini CLI chat (one JSON document) through a copy of its JSON lines
        (`core.documents`).

        The file's own descriptor is kept (the copy is made from it as the
        index asks); `_fd` becomes the copy's, read-only.
        """
        try:
            head = os.pread(self._fd, 4, 0)
            if is_zstd(head):
                self._inflate(None)
            elif head[:1] == b"{" and head[1:2] in (b"\n", b"\r"):
                start = os.pread(self._fd, KEY_BYTES, 0)
                if is_chat_document(start):
                    self._inflate(DocumentDecoder(self._fd))
                elif is_storage_session(self.path, start):
                    self._exported = True
                    self._inflate(StorageExport(self.path))
        except OSError as exc:
            os.close(self._fd)
            raise TranscriptError(
                f"{self.path}: cannot decompress it into a private temporary copy "
                f"({exc.strerror or exc})"
            ) from None

    def _inflate(self, stream: Decoder | None) -> None:
        """Read the file through a private copy of the lines `stream` makes (None: its zstd
        stream's).

        Raises:
            TranscriptError: the copy cannot be made.
        """
        try:
            self._inflated = Inflated(self.path, self._fd, stream=stream)
        except OSError as exc:
            os.close(self._fd)
            raise TranscriptError(
                f"{self.path}: cannot read it into a private temporary copy "
                f"({exc.strerror or exc})"
            ) from None
        self._source_fd = self._fd
        self._fd = self._inflated.fd
        self._copy = (str(self._inflated.path), None)

    # -- lifecycle ---------------------------------------------------------

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the path and the line index: a worker process reopens the file itself.

        What a worker not started by fork is sent (`core.parallel`): a descriptor or a
        lock cannot cross a process boundary, and the index need not be scanned
        again. The worker's copy opens the same path read-only (a compressed
        transcript's decompressed copy, which stays its owner's to remove).
        """
        with self._lock:
            starts = self._starts.tobytes()
            state = (self._scanned, self._size_at_scan, self.resets)
        copy = (self._copy[0], self.decompression_problem) if self._copy is not None else None
        args = (str(self.path), str(self.artifact_dir), starts, state, copy, self._exported)
        return (_reopen, args)

    @property
    def exported(self) -> bool:
        """Whether this is an OpenCode session read through a copy made of its rows (so
        `compressed` too: read through a private copy)."""
        return self._exported

    @property
    def compressed(self) -> bool:
        """Whether the file is zstd-compressed (read through a decompressed copy)."""
        return self._copy is not None

    @property
    def copy_path(self) -> Path | None:
        """Where a compressed transcript's decompressed copy is (None for a plain file)."""
        return Path(self._copy[0]) if self._copy is not None else None

    @property
    def decompressing(self) -> bool:
        """Whether a compressed transcript still has more to decompress."""
        return self._inflated is not None and not self._inflated.finished

    @property
    def decompression_problem(self) -> str | None:
        """Why the rest of a compressed transcript could not be read (None: all was read)."""
        if self._inflated is not None:
            return self._inflated.problem
        return self._copy[1] if self._copy is not None else None

    def source_findings(self) -> list[Finding]:
        """What is wrong with the file itself rather than a line: a compressed file that
        could not be read to its end (`unreadable-compressed`, on the last line read)."""
        problem = self.decompression_problem
        lines = self.line_count
        if problem is None or not lines:  # not one line: `build_index` refused it
            return []
        verb = "read" if self._exported else "decompressed"
        read = f"{plural(lines, 'line')} ({human_size(self._size_at_scan)}) {verb} before it"
        return [
            Finding(
                "unreadable-compressed",
                lines,
                None,
                f"{problem}; {read}, the rest of the file cannot be read",
            )
        ]

    def loading(self) -> tuple[int, int]:
        """How far opening has got, as (done, total): compressed bytes read while a
        compressed file is decompressed, then bytes indexed."""
        inflated = self._inflated
        if inflated is not None and not inflated.finished:
            return inflated.consumed, inflated.source_size
        return self._scanned, self.file_size()

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Transcript:
        """Open and fully index a transcript (the simple, blocking way)."""
        t = cls(path)
        t.build_index()
        return t

    def close(self) -> None:
        """Release the file descriptor (and remove a compressed file's decompressed copy)."""
        if not self._closed:
            self._closed = True
            if self._inflated is not None:
                self._inflated.remove()  # closes `_fd`, the copy's
                os.close(self._source_fd)
            else:
                os.close(self._fd)

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the index ---------------------------------------------------------

    def file_size(self) -> int:
        """The file's current size in bytes (a compressed file's: what is decompressed
        so far, up to its last complete line until all of it is)."""
        if self._inflated is not None:
            return self._inflated.exposed
        if self._closed:
            return os.stat(self.copy_path or self.path).st_size
        return os.fstat(self._fd).st_size

    def _pread(self, length: int, offset: int) -> bytes:
        """`os.pread`, reopening the file read-only for the call once it is closed.

        An analysis reads operations back by line long after `verify` closed the
        transcript; the line index survives the close, the descriptor does not.
        """
        if not self._closed:
            return os.pread(self._fd, length, offset)
        if self._inflated is not None:
            raise TranscriptError(f"{self.path}: closed, and its decompressed copy removed")
        fd = open_readonly(self.copy_path or self.path)
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
        """Whether the index covers the file as it was when last scanned (a compressed
        file: all of it decompressed)."""
        return self._scanned >= self._size_at_scan and not self.decompressing

    def build_index(
        self,
        progress: Callable[[int, int], None] | None = None,
        *,
        max_bytes: int | None = None,
    ) -> bool:
        """Scan forward from where the index stopped; return True when it reached the end.

        `progress(scanned, total)` is called after each chunk. `max_bytes` bounds
        one call's work, so a UI can index the first screen first.

        A compressed file is decompressed first as far as the call indexes
        (`progress` then counts compressed bytes read: `loading`), so the
        index of its start is there before the rest is decompressed.
        """
        inflated = self._inflated
        if inflated is not None and not inflated.finished:
            if self._closed:
                return True  # closed while it was being read: nothing more will come
            inflated.fill(None if max_bytes is None else self._scanned + max_bytes, progress)
        if inflated is not None and inflated.problem is not None and not inflated.exposed:
            verb = "read" if self._exported else "decompressed"
            raise TranscriptError(unreadable(self.path, inflated.problem, verb))
        total = self.file_size()
        self._size_at_scan = total
        budget = max_bytes if max_bytes is not None else total
        pos = self._scanned
        stop = min(total, pos + budget)
        if max_bytes is None and _lines is not None and parallel.threads_for(stop - pos) > 1:
            return self._build_index_pieces(pos, total, progress, threads=True)
        if max_bytes is None and _lines is None and parallel.workers_for(stop - pos) > 1:
            return self._build_index_pieces(pos, total, progress, threads=False)
        while pos < stop:
            chunk = self._pread(min(SCAN_CHUNK, stop - pos), pos)
            if not chunk:
                total = pos
                break
            new: array[int] = array("q")
            if pos == 0 and not self._starts:
                new.append(0)
            line_starts_into(new, chunk, pos)
            if new and new[-1] >= total:
                new.pop()  # the LF that ends the file starts no line
            pos += len(chunk)
            with self._lock:
                self._starts.extend(new)
                self._scanned = pos
            if progress is not None:
                progress(pos, total)
        if total == 0:
            self._size_at_scan = 0
        return self._scanned >= total and not self.decompressing

    def _build_index_pieces(
        self,
        pos: int,
        total: int,
        progress: Callable[[int, int], None] | None,
        *,
        threads: bool,
    ) -> bool:
        """`build_index` of the bytes from `pos` to `total`, scanned in pieces at once.

        Pieces scanned at once, in order, give the same offsets (a piece needs
        no line boundary: a line start is wherever an LF was). A piece that
        comes back short (the file shrank) ends the scan there, as a short read
        does.

        With the native scanner, in threads: its `pread` and `memchr` release
        the GIL, and a gigabyte took ~0.35 s in one thread, before any other
        work of a `--check` could start. Without it, in forked processes:
        finding a gigabyte's LFs one `find` at a time is a Python loop, a few
        tenths of a second per 256 MiB.
        """
        if threads:
            workers = parallel.threads_for(total - pos)
            step = SCAN_CHUNK  # a piece a read: the progress moves as smoothly as before
        else:
            workers = parallel.workers_for(total - pos)
            step = max(SCAN_CHUNK, -(-(total - pos) // (4 * workers)))
        pieces = [(start, min(start + step, total)) for start in range(pos, total, step)]
        results: Iterator[tuple[bytes, int]]
        done = contextlib.ExitStack()
        if threads:
            pool = done.enter_context(
                concurrent.futures.ThreadPoolExecutor(
                    workers, thread_name_prefix="transcript-view-index"
                )
            )
            results = pool.map(partial(_scan_range, self), pieces)
        else:
            scans = parallel.ordered(_scan_range, self, pieces, workers)
            done.callback(scans.close)  # a short read ends the scan: the rest is cancelled
            results = scans
        with done:
            for (start, end), (found, reached) in zip(pieces, results, strict=True):
                new: array[int] = array("q")
                if start == 0 and not self._starts:
                    new.append(0)
                new.frombytes(found)
                short = reached < end
                if short:
                    total = reached
                if new and new[-1] >= total:
                    new.pop()  # the LF that ends the file starts no line
                with self._lock:
                    self._starts.extend(new)
                    self._scanned = reached
                if progress is not None:
                    progress(reached, total)
                if short:
                    break
        if total == 0:
            self._size_at_scan = 0
        return self._scanned >= total and not self.decompressing

    def refresh(self) -> int:
        """Index what was appended since the last scan; return how many lines are new.

        For following a transcript that is still being written: the file only
        grows, so the old index stays valid and only the new bytes are scanned.
        A line that was unterminated at the last scan keeps its number; if it
        grew, `last_line_grew` says so (it is not a new line, but not the same).
        """
        before = self.line_count
        scanned, resets = self._scanned, self.resets
        open_last = before > 0 and not self.line_terminated(before)
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
        self.last_line_grew = open_last and self.resets == resets and self._scanned > scanned
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

    def raw_lines(
        self, start: int = 1, stop: int | None = None
    ) -> Iterator[tuple[int, int, bytes]]:
        """`(line, offset, bytes)` of lines `start` to `stop` (default: the last indexed).

        The bytes are without the LF, blank lines included; read as `raw_chunks`
        reads them.
        """
        for line, offset, parts in self.raw_chunks(start, stop):
            for n, raw in enumerate(parts, start=line):
                yield n, offset, raw
                offset += len(raw) + 1

    def raw_chunks(
        self, start: int = 1, stop: int | None = None
    ) -> Iterator[tuple[int, int, list[bytes]]]:
        """Lines `start` to `stop` as `(first line, its offset, [each line's bytes])` runs.

        Whole lines are read `READ_CHUNK` bytes at a time (a longer line alone)
        and split at their LFs: one `pread` a few megabytes, not one a line,
        which is most of what reading a million short lines costs. Each line's
        bytes are without the LF; a line's offset is the one before it plus
        its length and one.
        """
        last = self.line_count if stop is None else min(stop, self.line_count)
        line = max(start, 1)
        while line <= last:
            upto = self._read_end(line, last)
            begin, _ = self.line_span(line)
            _, end = self.line_span(upto)
            parts = (self._pread(end - begin, begin) if end > begin else b"").split(b"\n")
            if len(parts) == upto - line + 1:
                yield line, begin, parts
            else:  # the file is not what was indexed (rewritten in place): line by line
                for n in range(line, upto + 1):
                    b, e = self.line_span(n)
                    yield n, b, [self._pread(e - b, b) if e > b else b""]
            line = upto + 1

    def _read_end(self, line: int, last: int, size: int | None = None) -> int:
        """The last line of one read from `line`: whole lines within `size` bytes, at least one.

        `size` defaults to `READ_CHUNK` as it is when called (tests make it small).
        """
        size = READ_CHUNK if size is None else size
        with self._lock:
            starts = self._starts
            begin = starts[line - 1]
            i = bisect_right(starts, begin + size, line)
            if i >= len(starts) and self._scanned - begin <= size:
                return last
        return min(last, max(line, i - 1))

    def line_ranges(self, size: int | None = None) -> list[tuple[int, int]]:
        """The indexed lines as `(first, last)` runs of about `size` bytes each, in order.

        How a pass shares a file between processes: each run is whole lines
        (`raw_lines(first, last)` reads it in one go).
        """
        out = []
        line, last = 1, self.line_count
        while line <= last:
            upto = self._read_end(line, last, size)
            out.append((line, upto))
            line = upto + 1
        return out

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
        for line, begin, raw in self.raw_lines(start, stop):
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

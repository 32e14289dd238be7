"""Compressed transcripts: Codex's `rollout-*.jsonl.zst`, read through a private copy.

Since Codex 0.137 a rollout idle for a week is compressed in place to
`rollout-*.jsonl.zst` (zstd, level 3, written as a stream so the frame does not
record its size: `codex-rs/rollout/src/compression.rs`), and the plain file is
preferred while both exist. Everything that reads a transcript reads lines at
byte offsets (`core.transcript`), which a zstd stream cannot give, so a
compressed file is decompressed, as a stream and a step at a time, into a
private temporary file, and that copy is what gets indexed and read:

- the copy lives in a directory of its own made by `tempfile.mkdtemp` (mode
  0700, under `$TMPDIR`), never beside the session, and is removed when the
  transcript is closed, or when the program exits with it still open; one left
  by a process that was killed (SIGKILL leaves no time to clean up) is removed
  the next time a compressed transcript is opened (`sweep`);
- decompression never holds more than a step (`STEP_BYTES`) and one input
  slice's worth of output in memory, and the line index grows with the copy
  (`Inflated.fill`), so the first screen of a gigabyte rollout is shown after
  its first megabyte is decompressed, not after all of it;
- a file that ends inside a frame, or whose data is corrupt, keeps the lines
  decompressed before the fault (up to the last complete line) and says why the
  rest cannot be read (`Inflated.problem`: one `unreadable-compressed` finding);
- a file that decompresses to more than `MAX_RATIO` times its size (and more
  than `MIN_LIMIT`) is a zstd bomb, not a transcript: decompression stops there,
  with the same finding.

The binding is the standard library's `compression.zstd` where the Python has
it (3.14+), else `zstandard`; both are behind `decoder` and read the same.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

#: The first four bytes of a zstd frame.
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: The name Codex gives a compressed rollout: the plain name and this.
SUFFIX = ".zst"
#: Decompressed bytes written to the copy per step (what is held in memory at most).
STEP_BYTES = 4 << 20
#: Compressed bytes read from the file at a time.
INPUT_BYTES = 1 << 20
#: Compressed bytes given to `zstandard`'s decompressor per call. Its `decompress`
#: returns everything a piece of input makes, and zstd makes at most 128 KiB from a
#: 4-byte block, so a piece of 1 KiB never makes more than 32 MiB at once, even from a bomb.
SLICE_BYTES = 1 << 10
#: Decompressed bytes asked of the standard library's decompressor per call: a block.
BLOCK_BYTES = 128 << 10
#: A compressed transcript decompresses to at most this many times its size ...
MAX_RATIO = 1000
#: ... or this many bytes, whichever is more. Past it, it is taken for a zstd bomb.
MIN_LIMIT = 64 << 20


#: A copy's directory: this and the pid of the process that made it, then `-` and mkdtemp's letters.
PREFIX = "transcript-view-"


class CompressedError(Exception):
    """Why the rest of a compressed file cannot be read (the words a finding shows)."""


def is_zstd(head: bytes) -> bool:
    """Whether bytes start a zstd stream: a frame, or a skippable frame before one."""
    if head[:4] == ZSTD_MAGIC:
        return True
    return len(head) >= 4 and head[0] & 0xF0 == 0x50 and head[1:4] == b"\x2a\x4d\x18"


def plain_path(path: Path) -> Path:
    """The plain file a compressed one stands for: `x.jsonl.zst` -> `x.jsonl`."""
    return path.with_name(path.name[: -len(SUFFIX)]) if path.name.endswith(SUFFIX) else path


def output_limit(compressed_size: int) -> int:
    """How many bytes a compressed file of this size may decompress to (`MAX_RATIO`)."""
    return max(MIN_LIMIT, MAX_RATIO * compressed_size)


def stdlib_zstd() -> ModuleType | None:
    """The standard library's `compression.zstd` (Python 3.14+), or None."""
    try:
        from compression import zstd  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    return zstd  # type: ignore[no-any-return, unused-ignore]


def binding() -> str:
    """Which zstd binding reads compressed transcripts here."""
    return "compression.zstd" if stdlib_zstd() is not None else "zstandard"


class Decoder(Protocol):
    """A zstd stream read from a file descriptor, at most `n` decompressed bytes at a time."""

    @property
    def consumed(self) -> int:
        """Compressed bytes read from the file so far."""
        ...

    def read(self, n: int) -> bytes:
        """Up to `n` decompressed bytes; `b""` at the clean end of the stream.

        What the stream gave before a fault is returned first; the call after
        raises.

        Raises:
            CompressedError: the stream is cut short or corrupt.
        """
        ...


def decoder(fd: int, module: ModuleType | None = None) -> Decoder:
    """A decoder of the zstd stream in `fd` (read with `pread` from offset 0).

    `module` is a zstd module with the standard library's interface
    (`compression.zstd`, or a backport of it); by default that module where
    the Python has it, else `zstandard`.
    """
    module = module if module is not None else stdlib_zstd()
    if module is not None:
        return _StdlibDecoder(fd, module)
    return _ZstandardDecoder(fd)


_CUT_SHORT = "cut short: the file ends inside a zstd frame"


class _Input:
    """The compressed bytes of `fd`, read `INPUT_BYTES` at a time with `pread`."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.consumed = 0

    def next(self) -> bytes:
        data = os.pread(self.fd, INPUT_BYTES, self.consumed)
        self.consumed += len(data)
        return data


class _ZstandardDecoder:
    """`zstandard`'s decompressor, fed `SLICE_BYTES` at a time (its output is unbounded)."""

    def __init__(self, fd: int) -> None:
        import zstandard

        self._zstd = zstandard
        self._input = _Input(fd)
        self._data = b""
        self._at = 0
        self._frame = zstandard.ZstdDecompressor().decompressobj()
        self._in_frame = False
        self._out = bytearray()
        self._fault: CompressedError | None = None

    @property
    def consumed(self) -> int:
        return self._input.consumed

    def read(self, n: int) -> bytes:
        try:
            self._decode(n)
        except CompressedError as exc:
            self._fault = exc
        if self._fault is not None and not self._out:
            raise self._fault
        out = bytes(self._out[:n])
        del self._out[:n]
        return out

    def _decode(self, n: int) -> None:
        while len(self._out) < n and self._fault is None:
            if self._at >= len(self._data):
                self._data, self._at = self._input.next(), 0
                if not self._data:
                    if self._in_frame:
                        raise CompressedError(_CUT_SHORT)
                    break
            piece = self._data[self._at : self._at + SLICE_BYTES]
            try:
                self._out += self._frame.decompress(piece)
            except self._zstd.ZstdError as exc:
                raise CompressedError(f"corrupt zstd data ({exc})") from None
            self._in_frame = True
            if self._frame.eof:  # a frame ended inside the piece: the next starts after it
                self._at += len(piece) - len(self._frame.unused_data)
                self._frame = self._zstd.ZstdDecompressor().decompressobj()
                self._in_frame = False
            else:
                self._at += len(piece)


class _StdlibDecoder:
    """`compression.zstd`'s decompressor, asked for at most what is wanted each call."""

    def __init__(self, fd: int, module: ModuleType) -> None:
        self._zstd = module
        self._input = _Input(fd)
        self._frame: Any = module.ZstdDecompressor()
        self._pending = b""
        self._in_frame = False
        self._fault: CompressedError | None = None

    @property
    def consumed(self) -> int:
        return self._input.consumed

    def read(self, n: int) -> bytes:
        if self._fault is not None:
            raise self._fault
        out = bytearray()
        try:
            self._decode(out, n)
        except CompressedError as exc:
            if not out:
                raise
            self._fault = exc
        return bytes(out)

    def _decode(self, out: bytearray, n: int) -> None:
        while len(out) < n:
            if self._frame.eof:  # the next frame starts in what the last one left
                self._pending = self._frame.unused_data + self._pending
                self._frame = self._zstd.ZstdDecompressor()
                self._in_frame = False
            data = b""
            if self._frame.needs_input:
                data, self._pending = self._pending or self._input.next(), b""
                if not data:
                    if self._in_frame:
                        raise CompressedError(_CUT_SHORT)
                    break
                self._in_frame = True
            try:
                # A block at a time (zstd's largest is 128 KiB): a fault loses the
                # output of the call that meets it, so what came before it is kept.
                out += self._frame.decompress(data, max_length=min(n - len(out), BLOCK_BYTES))
            except self._zstd.ZstdError as exc:
                raise CompressedError(f"corrupt zstd data ({exc})") from None


def read_head(fd: int, n: int, module: ModuleType | None = None) -> tuple[bytes, bool]:
    """The first `n` decompressed bytes of the zstd stream in `fd`, and whether that is all.

    For sniffing a format and a listing's first prompt: at most `n` bytes are
    made. A stream cut short or corrupt within them gives what came before
    the fault, up to its last complete line, as all there is.

    Raises:
        CompressedError: not one complete line comes before the fault.
    """
    stream = decoder(fd, module)
    out = bytearray()
    try:
        while len(out) < n:
            piece = stream.read(n - len(out))
            if not piece:
                return bytes(out), True
            out += piece
        return bytes(out), not stream.read(1)
    except CompressedError:
        readable = bytes(out[: out.rfind(b"\n") + 1])
        if not readable:
            raise
        return readable, True


def unreadable(path: Path, problem: str, verb: str = "decompressed") -> str:
    """The one line for a compressed file (or a session read as lines: `verb` "read") of
    which not one line can be read."""
    return f"{path}: cannot be {verb} ({problem}); not one line of it could be read"


def sweep(directory: str | None = None) -> None:
    """Remove the copies of processes that are gone without removing them (killed, crashed).

    A copy's directory names the process that made it (`PREFIX`); one of this
    user's whose process no longer exists is removed. A process alive under
    the same pid (pids are reused) keeps it until it is gone too.
    """
    directory = directory if directory is not None else tempfile.gettempdir()
    try:
        with os.scandir(directory) as it:
            entries = [e for e in it if e.name.startswith(PREFIX)]
    except OSError:
        return
    for e in entries:
        pid_text = e.name[len(PREFIX) :].partition("-")[0]
        if not pid_text.isdigit() or int(pid_text) in (0, os.getpid()):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
                continue
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            shutil.rmtree(e.path, ignore_errors=True)
        except OSError:  # alive but not ours to signal, or gone from under us
            continue


def _remove(directory: str, fds: list[int], owner: int) -> None:
    """Close the copy's descriptors and remove its directory (in the process that made it)."""
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()
    if os.getpid() == owner:
        shutil.rmtree(directory, ignore_errors=True)


class Inflated:
    """A compressed file's decompressed copy, in a private temporary directory.

    Filled a step at a time (`fill`), by whoever indexes the transcript; read
    through `fd` (read-only) at offsets below `exposed`, which only grows
    until `finished`. `remove` deletes the copy; so does the end of the
    program, in the process that made it (never in a worker forked from it).

    Raises:
        OSError: the temporary directory or file cannot be made.
    """

    def __init__(
        self,
        source: Path,
        source_fd: int,
        module: ModuleType | None = None,
        *,
        stream: Decoder | None = None,
    ) -> None:
        """`stream`: what makes the copy's bytes, when not the file's zstd stream (an older
        Gemini CLI chat's lines: `core.documents`)."""
        self.source = source
        self.source_size = os.fstat(source_fd).st_size
        self.limit = output_limit(self.source_size)
        self._decoder = stream if stream is not None else decoder(source_fd, module)
        sweep()
        self._directory = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")  # mode 0700
        self.path = Path(self._directory) / (plain_path(source).name or "transcript")
        self._fds: list[int] = []
        self._finalizer = weakref.finalize(
            self, _remove, self._directory, self._fds, os.getpid()
        )
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            self._wfd = os.open(self.path, flags, 0o600)
            self._fds.append(self._wfd)
            self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            self._fds.append(self.fd)
        except BaseException:
            self._finalizer()
            raise
        self._lock = threading.Lock()
        self.written = 0
        """Bytes decompressed into the copy."""
        self.exposed = 0
        """Bytes of the copy that may be read: up to its last LF until `finished`, then all."""
        self.finished = False
        """Nothing more will come: the stream ended, or `problem` says why it stopped."""
        self.problem: str | None = None
        """Why the rest of the file could not be read (None: it was read whole)."""
        self.removed = False

    @property
    def consumed(self) -> int:
        """Compressed bytes read so far (of `source_size`)."""
        return self._decoder.consumed

    def fill(
        self, upto: int | None = None, progress: Callable[[int, int], None] | None = None
    ) -> None:
        """Decompress until `exposed` reaches `upto` (None: the end), or nothing more comes.

        `progress(consumed, source_size)`, in compressed bytes, after each step.
        A fault in the stream, the bomb limit or a failed write (a full disk)
        ends it: what was exposed stays, `problem` says why, and `finished`
        is set. Returns at once once the copy is removed.
        """
        with self._lock:
            while not self.finished and not self.removed and (upto is None or self.exposed < upto):
                try:
                    data = self._decoder.read(STEP_BYTES)
                except CompressedError as exc:
                    self._stop(str(exc))
                    break
                except OSError as exc:
                    self._stop(f"cannot read the compressed file ({exc.strerror or exc})")
                    break
                if not data:
                    self.exposed = self.written
                    self.finished = True
                    break
                if self.written + len(data) > self.limit:
                    self._stop(
                        f"decompresses to more than {MAX_RATIO:,} times its size "
                        f"(a zstd bomb?): stopped at {self.limit:,} bytes"
                    )
                    break
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(self._wfd, view) :]
                except OSError as exc:
                    self._stop(
                        f"cannot write its decompressed copy in {self._directory} "
                        f"({exc.strerror or exc})"
                    )
                    break
                self.written += len(data)
                last = data.rfind(b"\n")
                if last >= 0:
                    self.exposed = self.written - len(data) + last + 1
                if progress is not None:
                    progress(self.consumed, self.source_size)

    def _stop(self, problem: str) -> None:
        """The rest cannot be read: keep the complete lines decompressed so far."""
        self.problem = problem
        self.finished = True
        with contextlib.suppress(OSError):
            os.ftruncate(self._wfd, self.exposed)
        self.written = self.exposed

    def remove(self) -> None:
        """Close the copy and delete it (after any `fill` step in progress)."""
        with self._lock:
            self.removed = True
            self._finalizer()

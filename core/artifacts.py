"""The artifact machinery of `LLM::Agent::Artifacts`, in Python.

One oversized tool result becomes two things: an *excerpt* (3/4 head, 1/4 tail,
counted in graphemes, one marker line between) that the model sees, and the full
bytes in `<stem>.artifacts/<op-id>.txt` beside the transcript. The functions here
produce exactly the strings the Raku reference produces, so a transcript written
by either implementation verifies under the other.

Where this module is deliberately *better* than the reference it says so: the
store writes crash-safely (temp file, fsync, rename, fsync the directory) and
never overwrites an artifact with different bytes.

A big store hashes and writes in worker threads while the calling thread counts
graphemes: `hashlib` and `os.write` release the GIL on big buffers, and
counting is the one part that cannot (see `Store.store`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar, cast

from transcript_view.core import graphemes

#: Prefix of the temporary file a store writes before renaming it into place.
#: A reader tells an interrupted write (``partial-write``) from an artifact by it:
#: no artifact name can start with a dot, since op ids are sanitised to
#: ``[A-Za-z0-9_.-]`` and a leading ``.`` in an op id would be unusual but the
#: suffix below makes the distinction certain.
TEMP_PREFIX = ".tmp-"
#: Suffix of the temporary file (an artifact always ends in ``.txt``).
TEMP_SUFFIX = ".partial"

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")

#: From this many bytes on, `Store.store` hashes and writes in worker threads;
#: from half as many when it also counts non-ASCII text meanwhile. Starting two
#: threads and handing the GIL back and forth costs about 0.5 ms, which hashing
#: and writing side by side win back from about 3 MB on; with a count to hide
#: them behind, from about 1.5 MB on (measured on tmpfs, 2 cores).
PARALLEL_STORE_BYTES = 4 << 20


def is_temp_name(name: str) -> bool:
    """True for a leftover temp file of an interrupted `Store.store`."""
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


def artifact_dir_for(transcript: str | os.PathLike[str]) -> Path:
    """The directory a transcript's artifacts live in: `<stem>.artifacts/` beside it.

    The stem drops only the *last* extension (`a.run.jsonl` -> `a.run.artifacts`),
    and a name with no extension keeps its whole name (`run` -> `run.artifacts`),
    which is what stops a transcript without a suffix being handed its own path as
    the directory to write into. A leading dot is not an extension (`.jsonl` ->
    `.jsonl.artifacts`), matching the reference's `IO::Path.extension`.
    """
    path = transcript if isinstance(transcript, Path) else Path(transcript)
    name = path.name
    dot = name.rfind(".")
    stem = name[:dot] if dot > 0 else name
    return path.with_name(stem + ".artifacts")


def sanitise(op_id: str) -> str:
    """An op id made safe as a file name: anything outside `[A-Za-z0-9_.-]` becomes `_`.

    Op ids are uuids, so this normally has nothing to do; a name built from
    something a provider influenced is worth spelling out as safe all the same.
    """
    safe = _UNSAFE.sub("_", op_id)
    return safe or "artifact"


def artifact_name(op_id: str) -> str:
    """The basename an operation's artifact gets."""
    return sanitise(op_id) + ".txt"


def commify(n: int) -> str:
    """Thousands separators, exactly as the reference's `flip.comb(3).join(',').flip`.

    Numbers in markers are read by people; `247,786` parses at a glance. The
    reference's trick is reproduced literally so that even a negative number
    (never written in practice) renders identically (`-123` -> `-,123`).
    """
    flipped = str(n)[::-1]
    return ",".join(flipped[i : i + 3] for i in range(0, len(flipped), 3))[::-1]


def to_bytes(content: str) -> bytes:
    """UTF-8 bytes of a result; lone surrogates from `surrogateescape` become their bytes.

    A tool result decoded with `errors="surrogateescape"` carries the original
    undecodable bytes as U+DC80..U+DCFF. Storing those bytes (rather than crashing
    or substituting U+FFFD) keeps the artifact byte-identical to what the tool
    produced. Any other lone surrogate cannot be represented and is encoded with
    `surrogatepass`, so nothing is ever refused.
    """
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError:
        pass
    out = bytearray()
    for ch in content:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append(o - 0xDC00)
        else:
            out += ch.encode("utf-8", "surrogatepass")
    return bytes(out)


def content_digest(content: str | bytes) -> str:
    """sha256 (lower-case hex) of the content's UTF-8 bytes: what `sha256sum` prints.

    Not `canonical.data_digest`, which digests a JSON rendering: this one has to
    agree with a person checking the file by hand.
    """
    data = content if isinstance(content, bytes) else to_bytes(content)
    return _sha256_hex(data)


def _sha256_hex(data: bytes) -> str:
    """sha256 of `data` as lower-case hex (a function, so a worker thread can run it)."""
    return hashlib.sha256(data).hexdigest()


_T = TypeVar("_T")


class _Job(Generic[_T]):
    """`fn()` running in a thread of its own; `result()` waits, then returns or re-raises.

    A plain thread per job rather than an executor: a store has exactly two
    jobs, and when no thread can be started (the interpreter is shutting down,
    say a settle from an atexit hook) the job simply runs inline here instead.
    The thread is not a daemon: an exiting interpreter waits for a write that
    has begun rather than leaving its temp file behind.
    """

    def __init__(self, fn: Callable[[], _T], name: str) -> None:
        self._fn = fn
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = threading.Thread(target=self._run, name=name)
        try:
            self._thread.start()
        except RuntimeError:
            self._thread = None
            self._run()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as exc:  # handed to whoever asks for the result
            self._error = exc

    def wait(self) -> None:
        """Block until the job has finished (however it finished)."""
        if self._thread is not None:
            self._thread.join()

    def result(self) -> _T:
        """The job's return value, once finished; its exception is raised here instead."""
        self.wait()
        if self._error is not None:
            raise self._error
        return cast(_T, self._value)


def elided_chars(chars: int, limit: int) -> int:
    """How many graphemes an excerpt of `limit` leaves out of `chars` (0 when none)."""
    if limit > 0 and chars > limit:
        return chars - limit
    return 0


def head_tail_sizes(limit: int) -> tuple[int, int]:
    """(head, tail) grapheme counts for a limit: head is ceil(3/4 limit), tail the rest."""
    head = -((-limit * 3) // 4)
    return head, limit - head


def stored_marker(elided: int, stored: Stored) -> str:
    """The marker line for a result whose full bytes were stored, naming the file by basename."""
    return (
        f"[... elided {commify(elided)} chars ({commify(stored.bytes)} bytes total); "
        f"full result: {stored.file} sha256 {stored.digest} ...]"
    )


def unstored_marker(elided: int, bytes: int, digest: str, why: str = "not stored") -> str:
    """The marker line for a result that could not be stored; it says so and why.

    The reference writes `why` as `was not stored (this run has nowhere to put it)`
    for a run without a session and `could not be stored` for a failed write.
    """
    return (
        f"[... elided {commify(elided)} chars ({commify(bytes)} bytes total); "
        f"full result {why}, sha256 {digest} ...]"
    )


NOWHERE_TO_PUT_IT = "was not stored (this run has nowhere to put it)"
COULD_NOT_BE_STORED = "could not be stored"


def excerpt(content: str, limit: int, marker: str) -> str:
    """`content` cut to `limit` graphemes: 3/4 head, the marker on its own line, 1/4 tail.

    Returned unchanged unless `limit > 0` and the content has *more than* `limit`
    graphemes: a result exactly the size of the budget is left alone. Counting
    graphemes means no cut lands inside a character, between a base and its
    accent, or between the CR and LF of a Windows line ending.
    """
    if limit <= 0:
        return content
    head_n, tail_n = head_tail_sizes(limit)
    total, head, tail = graphemes.cut(content, head_n, tail_n)
    if total <= limit:
        return content
    return head + "\n" + marker + "\n" + tail


@dataclass(frozen=True, slots=True)
class Stored:
    """What `Store.store` returns and an `artifact` key records (minus `elided-chars`)."""

    file: str
    digest: str
    bytes: int
    chars: int

    def as_dict(self) -> dict[str, object]:
        """The `{file, digest, bytes, chars}` mapping the reference's store returns."""
        return {"file": self.file, "digest": self.digest, "bytes": self.bytes, "chars": self.chars}


class ArtifactConflict(FileExistsError):
    """An artifact with this name exists and holds different bytes; it is never overwritten."""


class Store:
    """One directory, one file per operation, no retention, crash-safe writes.

    The directory is made on the first write, not at construction, so a run whose
    results all fit leaves no directory behind. Nothing here ever deletes anything.
    """

    def __init__(self, dir: str | os.PathLike[str]) -> None:
        self.dir = Path(dir)

    def __repr__(self) -> str:
        return f"Store({str(self.dir)!r})"

    def path_for(self, op_id: str) -> Path:
        """The path an operation's artifact has (or would have)."""
        return self.dir / artifact_name(op_id)

    def store(self, op_id: str, content: str, *, chars: int | None = None) -> Stored:
        """Write `content` as this operation's artifact; return its metadata.

        The write is crash-safe, unlike the reference's plain `spurt`: the bytes go
        to a uniquely named temp file in the same directory (so a reader can tell
        a leftover from an artifact), which is flushed and fsynced, then renamed
        into place with a no-replace link, and the directory is fsynced. A crash
        at any point leaves either no artifact or the whole one. An existing file
        with identical bytes is accepted (a retried settle); one with different
        bytes raises `ArtifactConflict` and is left untouched.

        The content is encoded once; the same bytes are hashed and written. For
        big content (`PARALLEL_STORE_BYTES`) the hash and the write each run in
        a worker thread while this thread counts graphemes (when `chars` is not
        given): both release the GIL, so on two cores a 10 MB store costs about
        the encode plus the count, instead of encode + hash + write + count.
        The native count (`graphemes.NATIVE`) releases the GIL as well, so it
        starts first, in a thread of its own, and overlaps the encode too.

        Args:
            op_id: the operation id; sanitised into the file name.
            content: the full result.
            chars: its grapheme count, when the caller has already paid for it.
                Without it the store counts, overlapped with its own I/O, which
                is why the settle path leaves it to the store.

        Raises:
            OSError: any I/O failure; the caller (a settle) turns it into the
                `could not be stored` marker rather than a failed tool call.
        """
        counting = chars is None and not content.isascii()  # isascii() is O(1) on a str
        # The native count releases the GIL, so it can overlap the encode too:
        # start it first. (Every str of this many code points has at least as
        # many bytes, so it always lands in the parallel branch below. If the
        # encode or the mkdir fails, the job just finishes unread.)
        early: _Job[int] | None = None
        if counting and graphemes.NATIVE and len(content) >= PARALLEL_STORE_BYTES // 2:
            early = _Job(lambda: graphemes.count(content), "artifact-count")
        data = to_bytes(content)
        name = artifact_name(op_id)
        final = self.dir / name
        self.dir.mkdir(parents=True, exist_ok=True)
        if len(data) < (PARALLEL_STORE_BYTES // 2 if counting else PARALLEL_STORE_BYTES):
            self._write(final, data)
            digest = _sha256_hex(data)
            total = graphemes.count(content) if chars is None else chars
        else:
            hashing = _Job(lambda: _sha256_hex(data), "artifact-hash")
            writing = _Job(lambda: self._write(final, data), "artifact-write")
            try:
                if early is not None:
                    total = early.result()
                else:
                    total = graphemes.count(content) if chars is None else chars
            finally:
                hashing.wait()  # never return (or raise) with a write still going
                writing.wait()
            writing.result()  # re-raises the write's OSError or ArtifactConflict
            digest = hashing.result()
        return Stored(file=name, digest=digest, bytes=len(data), chars=total)

    def _write(self, final: Path, data: bytes) -> None:
        """Put `data` at `final` crash-safely: temp file, fsync, no-replace link, fsync dir.

        Returns quietly when `final` already holds exactly `data`.

        Raises:
            ArtifactConflict: `final` exists with different bytes (left untouched).
            OSError: any other I/O failure (the temp file is removed).
        """
        if self._same_file_exists(final, data):
            return
        name = final.name
        tmp = self.dir / f"{TEMP_PREFIX}{name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            # A hard link never replaces an existing name: two writers racing on one
            # op id cannot interleave or clobber each other's bytes.
            os.link(tmp, final)
        except FileExistsError:
            self._unlink_quietly(tmp)
            self._accept_existing(final, data)
            return
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                self._unlink_quietly(tmp)
                raise
            # A filesystem without hard links: fall back to a rename that refuses
            # to replace an existing file as well as a portable rename can.
            if final.exists():
                self._unlink_quietly(tmp)
                self._accept_existing(final, data)
                return
            os.rename(tmp, final)
        else:
            self._unlink_quietly(tmp)
        self._fsync_dir()

    @classmethod
    def _accept_existing(cls, final: Path, data: bytes) -> None:
        """An artifact already has this name: fine if it holds `data`, else a conflict."""
        if not cls._same_file_exists(final, data):
            raise ArtifactConflict(
                errno.EEXIST, "an artifact with different content already exists", str(final)
            )

    @staticmethod
    def _same_file_exists(path: Path, data: bytes) -> bool:
        try:
            with open(path, "rb") as fh:
                if os.fstat(fh.fileno()).st_size != len(data):
                    return False
                return fh.read() == data
        except FileNotFoundError:
            return False

    @staticmethod
    def _unlink_quietly(path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    def _fsync_dir(self) -> None:
        try:
            fd = os.open(self.dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

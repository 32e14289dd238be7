"""Reading artifact files: does every named file exist, and what are its bytes?

The verdicts (a marker's badge, its findings) are the ledger's
(`core.ledger`); this module only looks at files, and defines the badge
vocabulary both use. Artifact files are hashed in large streamed chunks,
never read whole; a name is resolved only inside the artifact directory (a
symlink that leaves it is reported, never followed); fifos and devices are
never opened; nothing is written. The per-file work is exposed (`check_file`)
so a viewer can run it in a background worker and paint each marker's state
as it lands.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from transcript_view.core import graphemes, parallel
from transcript_view.core.artifacts import is_temp_name
from transcript_view.core.transcript import describe_mode

#: Read size for hashing. Large reads are most of what keeps a check close to
#: `sha256sum` on big artifacts.
HASH_CHUNK = 4 << 20
#: Bytes of a file's start and end a check keeps for comparing excerpts with
#: (`FileCheck.head` / `tail`), unless asked for other.
EDGE_BYTES = 256 << 10


class FileState(StrEnum):
    """What was found at an artifact's name."""

    OK = "ok"
    MISSING = "missing"
    UNREADABLE = "unreadable"


class MarkerState(StrEnum):
    """A marker's badge: what the viewer shows and what `--check` counts as verified."""

    VERIFIED = "verified"
    MATCHES = "preview matches"
    """A sidecar whose preview and size match (formats that record no digest)."""
    PRESENT = "present"
    """A sidecar that is there, in a form that records nothing else to check."""
    EXCERPT_MATCHES = "excerpt matches"
    """A file whose start and end are the head and tail the model saw (no digest to prove
    the rest)."""
    EXPIRED = "expired"
    """A file that is gone, as the agent says it may be (Qwen Code deletes its files after
    24 hours): the rest is lost, as allowed, not by a fault."""
    MISSING = "missing"
    DIGEST_MISMATCH = "digest mismatch"
    SIZE_MISMATCH = "size mismatch"
    EXCERPT_MISMATCH = "excerpt mismatch"
    UNSAFE_NAME = "unsafe name"
    UNREADABLE = "unreadable"
    NOT_STORED = "not stored"
    COULD_NOT_BE_STORED = "could not be stored"
    CHECKING = "checking"

    @property
    def is_bad(self) -> bool:
        """The badge says something is wrong (a problem `p` visits), not merely unstored."""
        return self in BAD_STATES


#: Badges that say the artifact is not what the marker promises (or cannot be read).
BAD_STATES: frozenset[MarkerState] = frozenset(
    {
        MarkerState.MISSING,
        MarkerState.DIGEST_MISMATCH,
        MarkerState.SIZE_MISMATCH,
        MarkerState.EXCERPT_MISMATCH,
        MarkerState.UNSAFE_NAME,
        MarkerState.UNREADABLE,
    }
)


@dataclass(frozen=True, slots=True)
class FileCheck:
    """What reading one artifact file found (independent of any marker)."""

    name: str
    state: FileState
    detail: str = ""
    size: int = 0
    digest: str = ""
    chars: int | None = None
    utf16: int | None = None
    """The file's length in UTF-16 code units, when asked for (Claude Code's sizes)."""
    newlines: int = 0
    """The file's LFs (OpenCode counts an output's lines as its LFs + 1)."""
    head: bytes = b""
    tail: bytes = b""
    """The first and last bytes of the file (enough to compare excerpt heads/tails)."""
    path: Path | None = None
    edge_digests: Mapping[tuple[str, int], str] = field(default_factory=dict)
    """sha256 of the file's first (`("head", n)`) or last (`("tail", n)`) n bytes: what a
    ledger keeps instead of `head` and `tail` once they were compared (`core.ledger`)."""
    looks_like_json: bool | None = None
    """Whether a `.json` sidecar looks like JSON, judged before a ledger cut its `head` to
    what the previews compare (`core.formats.rules.kept_start`); None: judge from `head`."""

    def edge_digest(self, end: str, n: int) -> str | None:
        """sha256 (hex) of the file's first (`end="head"`) or last `n` bytes, if this check says.

        None when the check has neither those bytes nor their digest: a file
        shorter than `n`, or a check kept with other ends.
        """
        known = self.edge_digests.get((end, n))
        if known is not None:
            return known
        edge = self.head if end == "head" else self.tail
        if n > len(edge):
            return None
        return hashlib.sha256(edge[:n] if end == "head" else edge[len(edge) - n :]).hexdigest()


def kept_ends(check: FileCheck, needs: Iterable[tuple[str, int]]) -> FileCheck:
    """`check` with its ends replaced by the digests of the ends `needs` names.

    What a ledger keeps of a reference-format file (`VerificationLedger._kept`),
    and what the viewer's checks are cut to where they are made, so that
    thousands of them are not held, or sent from the pass server, with their
    bytes (5,000 files of 64 KiB: 80 MB of ends, the UI's peak over budget).
    Kept again, a kept check is itself.
    """
    if check.state is not FileState.OK:
        return check
    digests = {need: check.edge_digest(*need) for need in needs}
    known = {need: digest for need, digest in digests.items() if digest is not None}
    if not check.head and not check.tail and known == check.edge_digests:
        return check  # kept already (carried from another ledger)
    return replace(check, head=b"", tail=b"", edge_digests=known)


def resolve_inside(directory: Path, name: str) -> tuple[Path | None, str]:
    """The path to open for `name` inside `directory`, or None with the reason.

    A symlink is followed only when its target stays inside the directory.
    """
    path = directory / name
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, "missing"
    except NotADirectoryError:
        return None, "missing"
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return None, "unreadable: a symlink whose target does not exist"
        try:
            base = directory.resolve(strict=True)
        except OSError:
            return None, "missing"
        if target.parent != base and base not in target.parents:
            return (
                None,
                "unreadable: a symlink leading outside the artifact directory (not followed)",
            )
        path = target
        try:
            st = os.stat(path)
        except OSError as exc:
            return None, f"unreadable: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return None, f"unreadable: {describe_mode(st.st_mode)}, not a regular file"
    return path, ""


def check_file(
    directory: Path,
    name: str,
    *,
    edge_bytes: int = EDGE_BYTES,
    tail_bytes: int | None = None,
    count_chars: bool = True,
    count_utf16: bool = False,
) -> FileCheck:
    """Hash one artifact in streamed chunks, keeping its first `edge_bytes` and last `tail_bytes`.

    `tail_bytes` defaults to `edge_bytes`. A caller that knows what its markers
    compare asks for only that (`VerificationLedger.edge_bytes`): a worker
    process sends its checks back pickled, ends and all.

    Counting graphemes is streamed too: text is decoded incrementally and cut at
    line feeds, which are always grapheme boundaries, so no cluster spans two
    pieces. Invalid UTF-8 is counted as the reference would never write it:
    one grapheme per undecodable byte.
    """
    if not directory.is_dir():
        why = (
            "the artifact directory is missing"
            if not directory.exists()
            else ("the artifact directory path is not a directory")
        )
        return FileCheck(name, FileState.MISSING, why)
    path, why = resolve_inside(directory, name)
    if path is None:
        if why == "missing":
            return FileCheck(name, FileState.MISSING, "no such file in the artifact directory")
        return FileCheck(name, FileState.UNREADABLE, why.removeprefix("unreadable: "))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        return FileCheck(name, FileState.UNREADABLE, exc.strerror or str(exc))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return FileCheck(name, FileState.UNREADABLE, f"{describe_mode(st.st_mode)}")
        sha = hashlib.sha256()
        size = 0
        head = bytearray()
        tail = b""
        keep = edge_bytes if tail_bytes is None else tail_bytes
        counter = _CharCounter() if count_chars else None
        units = newlines = 0
        while True:
            chunk = os.read(fd, HASH_CHUNK)
            if not chunk:
                break
            sha.update(chunk)
            size += len(chunk)
            newlines += chunk.count(b"\n")
            if len(head) < edge_bytes:
                head += chunk[: edge_bytes - len(head)]
            if keep:
                tail = (tail + chunk)[-keep:] if len(chunk) < keep else chunk[-keep:]
            if counter is not None:
                counter.feed(chunk)
            if count_utf16:
                units += utf16_units_of(chunk)
        return FileCheck(
            name,
            FileState.OK,
            size=size,
            digest=sha.hexdigest(),
            chars=counter.finish() if counter is not None else None,
            utf16=units if count_utf16 else None,
            newlines=newlines,
            head=bytes(head),
            tail=tail,
            path=path,
        )
    except OSError as exc:
        return FileCheck(name, FileState.UNREADABLE, exc.strerror or str(exc))
    finally:
        os.close(fd)


_CONTINUATION = bytes(range(0x80, 0xC0))
_FOUR_BYTE_LEADS = bytes(range(0xF0, 0x100))


def utf16_units_of(chunk: bytes) -> int:
    """UTF-16 code units of UTF-8 bytes, counted without decoding them.

    Every byte that is not a continuation byte starts a character (one unit),
    and a four-byte lead starts one outside the BMP (a second unit). Chunks may
    be cut anywhere: only lead bytes are counted, so the sum over chunks is the
    file's count. Two C-speed `translate` passes, so a size check stays near
    the speed of hashing.
    """
    starts = len(chunk.translate(None, _CONTINUATION))
    astral = len(chunk) - len(chunk.translate(None, _FOUR_BYTE_LEADS))
    return starts + astral


#: Below this many bytes of artifacts, starting worker processes costs more than it saves.
PARALLEL_CHECK_BYTES = 32 << 20
#: Files this small on average are sent to the worker processes eight at a time.
SMALL_FILE_BYTES = 1 << 20


Edges = Callable[[str], tuple[int, int]]
"""The head and tail bytes to keep of a file, by its name (`VerificationLedger.edge_bytes`)."""
Counts = Callable[[str], tuple[bool, bool]]
"""Whether to count a file's graphemes and its UTF-16 units, by its name."""


def _all_edges(name: str) -> tuple[int, int]:
    return EDGE_BYTES, EDGE_BYTES


def _check_one(
    args: tuple[Path, str, bool, bool, tuple[int, int], Sequence[tuple[str, int]] | None],
) -> FileCheck:
    directory, name, count_chars, count_utf16, (head, tail), needs = args
    check = check_file(
        directory,
        name,
        edge_bytes=head,
        tail_bytes=tail,
        count_chars=count_chars,
        count_utf16=count_utf16,
    )
    return check if needs is None else kept_ends(check, needs)


def _check_in_worker(
    shared: None,
    args: tuple[Path, str, bool, bool, tuple[int, int], Sequence[tuple[str, int]] | None],
) -> FileCheck:
    """`_check_one` as a worker's job (`parallel.ordered`: nothing shared but the job)."""
    return _check_one(args)


def iter_checks(
    directory: Path,
    names: Sequence[str],
    *,
    count_chars: bool = True,
    count_utf16: bool = False,
    workers: int = 1,
    progress: Callable[[str, int, int], None] | None = None,
    edges: Edges = _all_edges,
    counts: Counts | None = None,
    keep: Mapping[str, Sequence[tuple[str, int]]] | None = None,
) -> Iterator[FileCheck]:
    """`check_file` of each name, in order, in `workers` processes when the bytes make it pay.

    Hashing releases the GIL but counting graphemes cannot, and for mixed-script
    artifacts the count costs several times the hash; separate processes are the
    only way a check uses both cores. Small jobs stay in-process. Callers that run
    threads of their own (a UI) keep `workers=1`. Each check keeps the ends
    `edges` says, and is yielded as it is made, so a caller that keeps less of it
    (a ledger) never holds thousands of files' ends at once. `counts`, where
    given, says per name what to count instead of `count_chars` and `count_utf16`;
    `keep`, per name, the ends whose digests each check is cut to where it is made
    (`kept_ends`), so a worker process sends back digests, not bytes.
    """

    def uniform(name: str) -> tuple[bool, bool]:
        return count_chars, count_utf16

    wants = counts or uniform

    def ends(name: str) -> Sequence[tuple[str, int]] | None:
        return keep[name] if keep is not None else None

    total = 0
    if workers > 1 and len(names) > 1:
        for name in names:
            with contextlib.suppress(OSError):
                total += os.stat(directory / name, follow_symlinks=False).st_size
    if total >= PARALLEL_CHECK_BYTES:
        jobs = [(directory, name, *wants(name), edges(name), ends(name)) for name in names]
        small = total < len(names) * SMALL_FILE_BYTES  # sent in batches: fewer round trips
        checks = parallel.ordered(_check_in_worker, None, jobs, workers, chunk=8 if small else 1)
        try:
            for i, fc in enumerate(checks):
                yield fc
                if progress is not None:
                    progress("artifacts", i + 1, len(names))
        finally:
            # A caller that stops early (a cancelled job) waits for the files being
            # checked, not for the thousands queued behind them.
            checks.close()
        return
    for i, name in enumerate(names):
        yield _check_one((directory, name, *wants(name), edges(name), ends(name)))
        if progress is not None:
            progress("artifacts", i + 1, len(names))


class _CharCounter:
    """Incremental grapheme count over bytes, cut only at line feeds."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self._carry = ""
        self.count = 0

    def feed(self, chunk: bytes) -> None:
        text = self._carry + self._decoder.decode(chunk)
        cut = text.rfind("\n")
        if cut == -1:
            self._carry = text
            return
        self.count += graphemes.count(text[: cut + 1])
        self._carry = text[cut + 1 :]

    def finish(self) -> int:
        text = self._carry + self._decoder.decode(b"", final=True)
        self._carry = ""
        self.count += graphemes.count(text)
        return self.count


@dataclass(frozen=True, slots=True)
class OrphanFile:
    """A file in the artifact directory that no line names."""

    name: str
    size: int
    mtime: float
    partial_write: bool
    """A leftover temp file of an interrupted crash-safe write."""
    kind: str = "file"
    reason: str = ""
    """Why no line names it, in words ("dispatched at line 5, never settled"):
    set by `core.ledger.explain_orphans`, which can read the transcript's
    operations; empty for a file only listed, never explained."""


def list_orphans(directory: Path, named: Iterable[str]) -> list[OrphanFile]:
    """Entries of the artifact directory that no marker or artifact key names.

    `lstat` only: nothing is opened or followed. Empty when there is no directory.
    """
    names = set(named)
    out: list[OrphanFile] = []
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return out
    for entry in entries:
        if entry.name in names:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        kind = "file" if stat.S_ISREG(st.st_mode) else describe_mode(st.st_mode)
        out.append(OrphanFile(entry.name, st.st_size, st.st_mtime, is_temp_name(entry.name), kind))
    return out

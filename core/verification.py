"""Verification: does every marker's artifact exist, and is it what the marker says?

Artifact files are hashed in large streamed chunks, never read whole; a name is
resolved only inside the artifact directory (a symlink that leaves it is
reported, never followed); fifos and devices are never opened; nothing is
written. The per-file work is exposed (`check_file`) so a viewer can run it in a
background worker and paint each marker's state as it lands.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from transcript_view.core import graphemes
from transcript_view.core.analysis import Analysis, MarkerSite, analyse
from transcript_view.core.artifacts import is_temp_name
from transcript_view.core.findings import Finding, Severity
from transcript_view.core.markers import MarkerKind, is_safe_basename
from transcript_view.core.transcript import Transcript, describe_mode

#: Read size for hashing. Large reads are most of what keeps a check close to
#: `sha256sum` on big artifacts.
HASH_CHUNK = 4 << 20


class FileState(StrEnum):
    """What was found at an artifact's name."""

    OK = "ok"
    MISSING = "missing"
    UNREADABLE = "unreadable"


class MarkerState(StrEnum):
    """A marker's badge: what the viewer shows and what `--check` counts as verified."""

    VERIFIED = "verified"
    MISSING = "missing"
    DIGEST_MISMATCH = "digest mismatch"
    SIZE_MISMATCH = "size mismatch"
    EXCERPT_MISMATCH = "excerpt mismatch"
    UNSAFE_NAME = "unsafe name"
    UNREADABLE = "unreadable"
    NOT_STORED = "not stored"
    COULD_NOT_BE_STORED = "could not be stored"
    CHECKING = "checking"


@dataclass(frozen=True, slots=True)
class FileCheck:
    """What reading one artifact file found (independent of any marker)."""

    name: str
    state: FileState
    detail: str = ""
    size: int = 0
    digest: str = ""
    chars: int | None = None
    head: bytes = b""
    tail: bytes = b""
    """The first and last bytes of the file (enough to compare excerpt heads/tails)."""
    path: Path | None = None


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
    edge_bytes: int = 256 << 10,
    count_chars: bool = True,
) -> FileCheck:
    """Hash one artifact in streamed chunks, keeping its first and last `edge_bytes`.

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
        counter = _CharCounter() if count_chars else None
        while True:
            chunk = os.read(fd, HASH_CHUNK)
            if not chunk:
                break
            sha.update(chunk)
            size += len(chunk)
            if len(head) < edge_bytes:
                head += chunk[: edge_bytes - len(head)]
            tail = (tail + chunk)[-edge_bytes:] if len(chunk) < edge_bytes else chunk[-edge_bytes:]
            if counter is not None:
                counter.feed(chunk)
        return FileCheck(
            name,
            FileState.OK,
            size=size,
            digest=sha.hexdigest(),
            chars=counter.finish() if counter is not None else None,
            head=bytes(head),
            tail=tail,
            path=path,
        )
    except OSError as exc:
        return FileCheck(name, FileState.UNREADABLE, exc.strerror or str(exc))
    finally:
        os.close(fd)


#: Below this many bytes of artifacts, starting worker processes costs more than it saves.
PARALLEL_CHECK_BYTES = 32 << 20


def _check_one(args: tuple[Path, str, bool]) -> FileCheck:
    directory, name, count_chars = args
    return check_file(directory, name, count_chars=count_chars)


def check_files(
    directory: Path,
    names: Sequence[str],
    *,
    count_chars: bool = True,
    workers: int = 1,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, FileCheck]:
    """`check_file` for each name, in `workers` processes when the bytes make it pay.

    Hashing releases the GIL but counting graphemes cannot, and for mixed-script
    artifacts the count costs several times the hash; separate processes are the
    only way a check uses both cores. Small jobs stay in-process. Callers that run
    threads of their own (a UI) keep `workers=1`.
    """
    out: dict[str, FileCheck] = {}
    total = 0
    if workers > 1 and len(names) > 1:
        for name in names:
            with contextlib.suppress(OSError):
                total += os.stat(directory / name, follow_symlinks=False).st_size
    if total >= PARALLEL_CHECK_BYTES:
        import concurrent.futures
        import multiprocessing

        context = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            jobs = [(directory, name, count_chars) for name in names]
            for i, fc in enumerate(pool.map(_check_one, jobs)):
                out[fc.name] = fc
                if progress is not None:
                    progress("artifacts", i + 1, len(names))
        return out
    for i, name in enumerate(names):
        out[name] = check_file(directory, name, count_chars=count_chars)
        if progress is not None:
            progress("artifacts", i + 1, len(names))
    return out


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


def site_state(site: MarkerSite, fc: FileCheck | None) -> tuple[MarkerState, list[Finding]]:
    """A marker's badge and the findings it carries, given its file's check (or None)."""
    m = site.marker
    kind = m.kind
    if kind is MarkerKind.COULD_NOT_BE_STORED:
        return MarkerState.COULD_NOT_BE_STORED, []
    if kind is not MarkerKind.STORED:
        return MarkerState.NOT_STORED, []
    if not m.safe_name:
        return MarkerState.UNSAFE_NAME, []
    name = m.file or ""
    if fc is None:
        return MarkerState.CHECKING, []
    line = site.line
    if fc.state is FileState.MISSING:
        return MarkerState.MISSING, [Finding("missing-artifact", line, name, fc.detail)]
    if fc.state is FileState.UNREADABLE:
        return MarkerState.UNREADABLE, [Finding("unreadable-artifact", line, name, fc.detail)]
    if fc.size != m.bytes:
        return MarkerState.SIZE_MISMATCH, [
            Finding(
                "size-mismatch",
                line,
                name,
                f"the marker says {m.bytes:,} bytes; the file has {fc.size:,}",
            )
        ]
    if fc.digest != m.digest:
        return MarkerState.DIGEST_MISMATCH, [
            Finding(
                "digest-mismatch",
                line,
                name,
                f"the marker says sha256 {m.digest}; the file digests to {fc.digest}",
            )
        ]
    findings: list[Finding] = []
    shape = site.shape
    if shape is not None:
        bad = []
        if (
            shape.head_bytes > len(fc.head)
            or hashlib.sha256(fc.head[: shape.head_bytes]).hexdigest() != shape.head_sha256
        ):
            bad.append("the head the model saw is not the start of the file")
        tail = fc.tail[len(fc.tail) - shape.tail_bytes :] if shape.tail_bytes else b""
        if shape.tail_bytes > len(fc.tail) or hashlib.sha256(tail).hexdigest() != shape.tail_sha256:
            bad.append("the tail the model saw is not the end of the file")
        if bad:
            return MarkerState.EXCERPT_MISMATCH, [
                Finding("excerpt-mismatch", line, name, "; ".join(bad))
            ]
    art = site.op.artifact if site.op is not None else None
    recorded = art.get("chars") if art is not None else None
    if fc.chars is not None and isinstance(recorded, int) and recorded != fc.chars:
        findings.append(
            Finding(
                "chars-differ",
                line,
                name,
                f"recorded {recorded:,} chars, {fc.chars:,} under current Unicode "
                "(bytes and digest match: a writer on another Unicode version)",
            )
        )
    return MarkerState.VERIFIED, findings


@dataclass(slots=True)
class Report:
    """The outcome of verifying one transcript."""

    transcript: Path
    artifact_dir: Path
    lines: int
    envelopes: int
    markers: int
    verified: int
    findings: list[Finding]
    analysis: Analysis | None = None
    states: dict[int, MarkerState] = field(default_factory=dict)
    """Badge per excerpt site, keyed by its index in `analysis.excerpt_sites`."""
    orphans: list[OrphanFile] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        """How many findings have this severity."""
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def errors(self) -> int:
        """Number of error findings."""
        return self.count(Severity.ERROR)

    @property
    def warnings(self) -> int:
        """Number of warning findings."""
        return self.count(Severity.WARNING)

    def as_dict(self) -> dict[str, object]:
        """The `--check --json` object for this transcript."""
        return {
            "transcript": str(self.transcript),
            "artifact_dir": str(self.artifact_dir),
            "lines": self.lines,
            "envelopes": self.envelopes,
            "markers": self.markers,
            "verified": self.verified,
            "findings": [f.as_dict() for f in self.findings],
        }


def orphan_findings(orphans: list[OrphanFile]) -> list[Finding]:
    """`orphan-artifact` / `partial-write` warnings for unnamed files."""
    out = []
    for o in orphans:
        if o.partial_write:
            out.append(
                Finding(
                    "partial-write",
                    None,
                    o.name,
                    f"leftover temp file of an interrupted artifact write ({o.size:,} bytes)",
                )
            )
        else:
            what = "" if o.kind == "file" else f" ({o.kind})"
            out.append(
                Finding(
                    "orphan-artifact",
                    None,
                    o.name,
                    f"no line names this file{what} ({o.size:,} bytes)",
                )
            )
    return out


def verify_transcript(
    transcript: Transcript,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    count_chars: bool = True,
    workers: int = 1,
) -> Report:
    """Verify an opened transcript: analysis, every named artifact, orphans.

    `progress(phase, done, total)` reports `index`, `lines` and `artifacts` phases.
    `workers` > 1 checks artifacts in that many processes (see `check_files`).
    """
    if not transcript.index_complete or transcript.line_count == 0:
        transcript.build_index(
            (lambda d, t: progress("index", d, t)) if progress is not None else None
        )
    analysis = analyse(
        transcript, (lambda d, t: progress("lines", d, t)) if progress is not None else None
    )
    findings = list(analysis.findings)
    directory = transcript.artifact_dir
    sites = analysis.excerpt_sites
    wanted = sorted({s.marker.file for s in sites if s.marker.file and s.marker.safe_name})
    checks = check_files(
        directory, wanted, count_chars=count_chars, workers=workers, progress=progress
    )
    states: dict[int, MarkerState] = {}
    verified = 0
    for index, site in enumerate(sites):
        fc = checks.get(site.marker.file or "")
        state, more = site_state(site, fc)
        states[index] = state
        findings.extend(more)
        if state is MarkerState.VERIFIED:
            verified += 1
    # Artifact keys whose marker is missing still name a file that should exist.
    rows_with_sites = {s.op_index for s in sites}
    for row, art in analysis.operations.with_artifacts().items():
        key_file = art.get("file")
        if row in rows_with_sites or not isinstance(key_file, str) or key_file in checks:
            continue
        if is_safe_basename(key_file):
            fc = check_file(directory, key_file, count_chars=False)
            checks[key_file] = fc
            if fc.state is FileState.MISSING:
                line = analysis.operations.line("settle", row)
                findings.append(Finding("missing-artifact", line, key_file, fc.detail))
    orphans = list_orphans(directory, analysis.named_files())
    findings.extend(orphan_findings(orphans))
    findings.sort(key=lambda f: (f.line is None, f.line or 0))
    return Report(
        transcript=transcript.path,
        artifact_dir=directory,
        lines=analysis.lines,
        envelopes=analysis.envelopes,
        markers=len(sites),
        verified=verified,
        findings=findings,
        analysis=analysis,
        states=states,
        orphans=orphans,
    )


def verify(
    path: str | os.PathLike[str],
    *,
    progress: Callable[[str, int, int], None] | None = None,
    count_chars: bool = True,
    workers: int = 1,
) -> Report:
    """Verify the transcript at `path` and its artifacts; never writes anything.

    Raises:
        TranscriptError: the path is not a readable regular file.
    """
    with Transcript(path) as t:
        return verify_transcript(t, progress=progress, count_chars=count_chars, workers=workers)

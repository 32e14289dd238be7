"""One transcript's check, as one Dask task runs it: the same verification as `--check`.

A transcript on this machine's disk is checked where it is. One in another
store is brought, with its sidecar folder, into a private temporary folder
(the store's keys laid out as they are, so every format's rule of where its
sidecars are (`core.formats.readers.artifact_dir_of`) finds them as it would
beside the transcript), checked there by the core, and its results given back
with the store's URLs in place of the folder's paths; the folder is removed.
Nothing is written to the store. A sidecar is fetched from the transcript's own
sidecar folder only, as its format names it, never from a path in the file. The
transcripts of one session (a Claude Code session and its subagents, one task:
`fleet.run.groups`) share their private folder (`Mirror`), so what they all read
(the session folder) is fetched once.

Whatever goes wrong with one transcript (an object that cannot be read, a key
that could not be laid out safely, a file that is no transcript) is that
transcript's result, never the run's failure.
"""

from __future__ import annotations

import json
import operator
import os
import posixpath
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from fsspec.core import url_to_fs
from fsspec.implementations.http import HTTPFileSystem
from fsspec.implementations.local import LocalFileSystem
from fsspec.spec import AbstractFileSystem

from transcript_view.core.check import report_text
from transcript_view.core.compressed import PREFIX, sweep
from transcript_view.core.formats.claude_lines import session_dir
from transcript_view.core.formats.detect import Format, NotATranscript
from transcript_view.core.formats.readers import artifact_dir_of
from transcript_view.core.ledger import is_problem
from transcript_view.core.report import Report, detect_or_raise, verify
from transcript_view.core.transcript import TranscriptError
from transcript_view.fleet.listing import as_url, redact, units, words


@dataclass(frozen=True, slots=True)
class Checked:
    """One transcript's result, made on a worker and sent back (it pickles)."""

    url: str
    record: dict[str, Any] | None = None
    """`--check --json`'s object for it, with its URL (None: it could not be checked)."""
    text: str = ""
    """`--check`'s lines for it."""
    errors: int = 0
    warnings: int = 0
    error: str | None = None
    """Why it could not be checked (`--check`'s one line for such a PATH)."""
    not_a_transcript: bool = False
    """It is no format's file (a walk passes over such a file without a word)."""
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    """Its model calls, a row each (`fleet.dataset.CALL_COLUMNS`)."""
    size: int | None = None
    """Its bytes (None: not a file of its own, as an OpenCode session is a database's rows)."""

    problems: int = 0
    """Its findings that are problems (`core.ledger.is_problem`: the summary line's)."""


class Mirror:
    """A private folder of a store's objects, laid out by their keys, each fetched once:
    what the transcripts of one session (`listing.session_of`) share, so a session
    with its subagents is brought once, not once a transcript. Made at first use;
    removed, with all it holds, on leaving the `with`."""

    def __init__(self) -> None:
        self._folder: Path | None = None
        self.fetched: set[str] = set()
        """The store's paths (files, and folders fetched whole) brought already."""

    @property
    def folder(self) -> Path:
        if self._folder is None:
            sweep()  # folders of workers killed mid-task
            made = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-fleet-")
            self._folder = Path(made).resolve()
        return self._folder

    def __enter__(self) -> Mirror:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
            self.fetched.clear()


def check_urls(
    urls: list[tuple[str, str]], storage_options: Mapping[str, Any] | None, fmt: Format | None
) -> list[Checked]:
    """One task's transcripts, checked in turn: each `(where, as given)` (`check_url`); the
    transcripts of one session share a `Mirror`."""
    out: list[Checked] = []
    for unit in units(urls, key=operator.itemgetter(0)):
        with Mirror() as mirror:
            for where, name in unit:
                out.append(check_url(where, storage_options, fmt, name=name, mirror=mirror))
    return out


def check_url(
    url: str,
    storage_options: Mapping[str, Any] | None = None,
    fmt: Format | None = None,
    *,
    name: str | None = None,
    mirror: Mirror | None = None,
) -> Checked:
    """Check the transcript at `url` (see the module); never raises for the transcript's sake.

    What it gives back names the transcript by its URL without any user and password
    written into it (`listing.redact`); a local file opened at its absolute path `url`
    is named as it was given (`name`: relative, as `--check` prints it). A `mirror`
    that holds objects of the same store is used, and added to, rather than a
    folder of its own.
    """
    try:
        checked = _check_url(url, storage_options, fmt, mirror)
    except Exception as exc:  # never the task's (nor its group's) failure: this one's line
        checked = Checked(url, error=f"{url}: the check failed ({type(exc).__name__}: "
                          f"{words(exc)})")  # fmt: skip
    if name is not None and name != url:
        checked = _renamed(checked, url, name)
        url = name
    shown = redact(url)
    if shown == url:
        return checked
    record = json.loads(redact(json.dumps(checked.record))) if checked.record else None
    return replace(
        checked,
        url=shown,
        record=record,
        text=redact(checked.text),
        error=redact(checked.error) if checked.error is not None else None,
        calls=[(shown, *row[1:]) for row in checked.calls],
    )


def _renamed(checked: Checked, where: str, name: str) -> Checked:
    """A local check's result with the transcript (and its sidecar folder) as `name` says
    them rather than as `where`, the absolute path the worker opened."""
    record = dict(checked.record) if checked.record is not None else None
    text = checked.text.replace(where, name)
    if record is not None:
        record["transcript"] = name
        folder = record.get("artifact_dir")
        base = where[: len(where) - len(name)] if where.endswith(name) else None
        if isinstance(folder, str) and base and folder.startswith(base):
            record["artifact_dir"] = folder[len(base) :]
            text = text.replace(folder, record["artifact_dir"])
    error = checked.error.replace(where, name) if checked.error is not None else None
    calls = [(name, *row[1:]) for row in checked.calls]
    return replace(checked, url=name, record=record, text=text, error=error, calls=calls)


def _check_url(
    url: str, storage_options: Mapping[str, Any] | None, fmt: Format | None, mirror: Mirror | None
) -> Checked:
    try:
        fs, path = url_to_fs(url, **dict(storage_options or {}))
    except (ValueError, ImportError, OSError) as exc:
        return Checked(url, error=f"{url}: cannot be read ({words(exc)})")
    if isinstance(fs, LocalFileSystem):
        return _checked(url, Path(url if "://" not in url else path), fmt, None)
    if mirror is not None:
        return _remote(url, fs, path, mirror, fmt)
    with Mirror() as own:
        return _remote(url, fs, path, own, fmt)


def _remote(
    url: str, fs: AbstractFileSystem, path: str, mirror: Mirror, fmt: Format | None
) -> Checked:
    folder = mirror.folder
    key = _key(fs, path)
    if key is None:
        return Checked(
            url, error=f"{url}: its key has a '..', '.' or empty part, so it cannot be laid "
            "out beside its sidecars safely; not checked"
        )  # fmt: skip
    base = url[: len(url) - len(str(key))] if url.endswith(str(key)) else None
    if base is None:
        return Checked(url, error=f"{url}: not a URL this check can lay out; not checked")
    local = folder.joinpath(*key.parts)
    remote = _remote_path(fs, url)
    if remote not in mirror.fetched:
        try:
            local.parent.mkdir(parents=True, exist_ok=True)
            fs.get_file(path, str(local))
        except Exception as exc:  # the store's own errors (botocore's, aiohttp's) included
            return Checked(url, error=f"{url}: cannot be read ({words(exc)})")
        mirror.fetched.add(remote)
    try:
        kind = fmt if fmt is not None else detect_or_raise(local)
    except NotATranscript as exc:
        return Checked(url, error=_back(str(exc), folder, base), not_a_transcript=True)
    except TranscriptError as exc:
        return Checked(url, error=_back(str(exc), folder, base))
    root = folder / key.parts[0]  # the bucket (or host): what the store's keys lay out
    for beside in _read_beside(local, kind):
        if root not in beside.parents:
            return Checked(
                url, error=f"{url}: its format's sidecar folder for it would be outside "
                f"{base}{key.parts[0]}/ (a key too near the top); not checked"
            )  # fmt: skip
        problem = _fetch(fs, mirror, base, beside)
        if problem is not None:
            return Checked(url, error=f"{url}: what its check reads beside it cannot be read "
                           f"({problem})")  # fmt: skip
    return _checked(url, local, kind, (folder, base))


def _read_beside(local: Path, kind: Format) -> list[Path]:
    """What the check of a transcript reads beside it, by its format's rules: its sidecar
    folder (`artifact_dir_of`); for a Claude Code session, its other transcripts too (the
    session folder, subagents and all, and its main file), whose lines say which of the
    session's sidecars are not orphans."""
    out: list[Path] = []
    if kind is Format.CLAUDE_CODE:
        session = session_dir(local)
        out += [session, session.parent / f"{session.name}.jsonl"]
    else:
        sidecars = artifact_dir_of(local, kind)
        if sidecars is not None:
            out.append(sidecars)
    return out


def _fetch(fs: AbstractFileSystem, mirror: Mirror, base: str, local: Path) -> str | None:
    """Bring the store's copy of `local` (a folder, or one file; inside the mirror's folder)
    into place, unless the mirror has it; None when done, or when the store has none
    (the check says what is missing), else what went wrong."""
    folder = mirror.folder
    try:
        rel = PurePosixPath(local.relative_to(folder).as_posix())
    except ValueError:
        return None  # outside what the store's keys lay out: nothing there to fetch
    remote = _remote_path(fs, base + str(rel))
    if remote in mirror.fetched:
        return None
    try:
        if fs.isdir(remote):
            names = sorted(fs.find(remote))
        elif fs.isfile(remote):
            names = [remote]
        else:
            return None
    except FileNotFoundError:
        return None
    except Exception as exc:
        return words(exc)
    for name in names:
        inner = _key(fs, name)
        if inner is None:
            continue  # a key that cannot be laid out safely is never fetched
        target = folder.joinpath(*inner.parts)
        done = _remote_path(fs, name) in mirror.fetched
        if done or not (target == local or local in target.parents):
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fs.get_file(name, str(target))
        except Exception as exc:
            return f"{as_url(base, name)}: {words(exc)}"
        mirror.fetched.add(_remote_path(fs, name))
    mirror.fetched.add(remote)
    return None


def _checked(
    url: str, local: Path, fmt: Format | None, mirror: tuple[Path, str] | None
) -> Checked:
    """The core's check of a local file, told back with the URL (and the store's URLs in
    place of the private folder's paths, for a `mirror`: (folder, its URL))."""
    from transcript_view.fleet.dataset import call_rows

    def back(text: str) -> str:
        if mirror is None:
            return text
        return _back(text, *mirror)

    try:
        report = verify(local, format=fmt)
    except NotATranscript as exc:
        return Checked(url, error=back(str(exc)), not_a_transcript=True)
    except TranscriptError as exc:
        return Checked(url, error=back(str(exc)))
    record = _record(report, url, back)
    text = back(report_text(report))
    if mirror is None and str(local) != url:
        text = text.replace(str(local), url)
    try:
        size: int | None = local.stat().st_size
    except OSError:
        size = None
    return Checked(
        url, record, text, report.errors, report.warnings, calls=call_rows(report, url),
        size=size, problems=sum(1 for f in report.findings if is_problem(f)),
    )  # fmt: skip


def _record(report: Report, url: str, back: Any) -> dict[str, Any]:
    """`--check --json`'s object, with the transcript's URL."""
    record: dict[str, Any] = json.loads(back(json.dumps(report.as_dict(), ensure_ascii=False)))
    record["transcript"] = url
    return record


def _key(fs: AbstractFileSystem, path: str) -> PurePosixPath | None:
    """A store path as a relative key to lay out under a private folder (None: it has a
    `..`, `.` or empty part, which could reach outside it, so it is never laid out)."""
    if isinstance(fs, HTTPFileSystem):
        parts = urlsplit(path)
        raw = posixpath.join(parts.netloc, parts.path.lstrip("/"))
    else:
        raw = fs._strip_protocol(path).lstrip("/")
    pieces = raw.split("/")
    if not raw or any(p in ("", ".", "..") for p in pieces):
        return None
    return PurePosixPath(*pieces)


def _remote_path(fs: AbstractFileSystem, url: str) -> str:
    """A URL (or a store's path) as its store's path: what `Mirror.fetched` holds."""
    return str(fs._strip_protocol(url))


def _back(text: str, folder: Path, base: str) -> str:
    """`text` with the private folder's paths as the store's URLs."""
    return text.replace(str(folder) + "/", base)

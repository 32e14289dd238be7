"""Which transcripts a fleet check's URLs name: listed where the store can list, streamed.

A URL is a transcript, a folder of them (walked: sidecar folders are not), or a glob.
The store's own listing (fsspec `walk`) is read a folder at a time and each
transcript handed on as it is found, so a million keys never sit in memory; the
order is the local check's (`core.check.transcripts_in`): a folder's files by
name, then its folders by name. A local path is listed by the core itself, so a
fleet check of a local tree checks what `--check DIR` checks, in its order.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsspec.core import url_to_fs
from fsspec.implementations.local import LocalFileSystem
from fsspec.spec import AbstractFileSystem

from transcript_view.core.check import is_sidecar_dir, is_transcript_name, transcripts_in

#: Characters that make a URL a glob (fsspec's).
GLOB_CHARS = frozenset("*?[")
#: A URL's user and password (`scheme://user:secret@host/…`), which are never shown.
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@")


def redact(text: str) -> str:
    """`text` with any URL's user and password left out: credentials come from the
    store's configuration, and one written into a URL is never printed or kept."""
    return _USERINFO.sub(r"\1", text)


@dataclass(frozen=True, slots=True)
class Target:
    """One thing to check: a transcript's URL, or a URL that named none (and why)."""

    url: str
    error: str | None = None
    """Why `url` could not be listed (None: it is a transcript to check)."""
    size: int | None = None
    """Its bytes, as the listing gave them (None: not listed with one)."""


def targets(
    urls: Iterable[str], storage_options: Mapping[str, Any] | None = None
) -> Iterator[Target]:
    """Every transcript `urls` name, in order: each URL's, as its store lists them.

    A URL that names nothing (or cannot be listed) is one `Target` with its
    `error`, at its place, as `--check` keeps a PATH it could not check.
    """
    options = dict(storage_options or {})
    for url in urls:
        try:
            fs, path = url_to_fs(url, **options)
        except (ValueError, ImportError, OSError) as exc:
            yield Target(url, redact(f"{url}: cannot be read ({_words(exc)})"))
            continue
        try:
            for target in _listed(url, fs, path):
                error = target.error
                yield target if error is None else Target(target.url, redact(error))
        except OSError as exc:
            yield Target(url, redact(f"{url}: cannot be listed ({_words(exc)})"))


def _listed(url: str, fs: AbstractFileSystem, path: str) -> Iterator[Target]:
    local = isinstance(fs, LocalFileSystem)
    if any(c in GLOB_CHARS for c in path):
        matches = sorted(fs.glob(path))
        if not matches:
            yield Target(url, f"{url}: nothing matches")
        for match in matches:
            if fs.isdir(match):
                yield from _walked(url, fs, match, local)
            else:
                yield Target(_named(url, fs, match, local), size=_size(fs, match))
        return
    if fs.isdir(path):
        yield from _walked(url, fs, path, local)
    elif fs.exists(path):
        yield Target(url, size=_size(fs, path))
    else:
        yield Target(url, f"{url}: no such file or directory")


def _walked(url: str, fs: AbstractFileSystem, path: str, local: bool) -> Iterator[Target]:
    """The transcripts under a folder: the core's own walk for a local one."""
    if local:
        found = transcripts_in(Path(path))
        for p in found:
            yield Target(_named(url, fs, str(p), local), size=_size(fs, str(p)))
        if not found:
            yield Target(url, f"{url}: no .jsonl files in this directory tree")
        return
    count = 0
    for root, dirs, files in fs.walk(path, on_error="raise", detail=True):
        kept = {d: dirs[d] for d in sorted(dirs) if not is_sidecar_dir(d)}
        dirs.clear()  # (with details, the folders are a dict: walked in its order)
        dirs.update(kept)
        names = set(files)
        chats = posixpath.basename(root.rstrip("/")) == "chats"
        for name in sorted(files):
            if is_transcript_name(name, names, chats):
                count += 1
                size = files[name].get("size")
                yield Target(
                    fs.unstrip_protocol(posixpath.join(root, name)),
                    size=size if isinstance(size, int) else None,
                )
    if count == 0:
        yield Target(url, f"{url}: no .jsonl files in this directory tree")


def _size(fs: AbstractFileSystem, path: str) -> int | None:
    """A listed file's bytes (None: the store would not say)."""
    try:
        size = fs.size(path)
    except (OSError, ValueError):
        return None
    return size if isinstance(size, int) else None


def _named(url: str, fs: AbstractFileSystem, path: str, local: bool) -> str:
    """A listed path as the URL it is checked and reported by: a local path given without
    a scheme stays a path (as `--check` prints it), anything else keeps its protocol."""
    if local and "://" not in url:
        return path
    named: str = fs.unstrip_protocol(path)
    return named


def _words(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0] if text else type(exc).__name__

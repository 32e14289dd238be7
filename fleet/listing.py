"""Which transcripts a fleet check's URLs name: listed where the store can list, streamed.

A URL is a transcript, a folder of them (walked: sidecar folders are not), or a glob.
The store's own listing (fsspec `walk`) is read a folder at a time and each
transcript handed on as it is found, so a million keys never sit in memory; the
order is the local check's (`core.check.transcripts_in`): a folder's files by
name, then its folders by name. A local path is listed by the core itself, so a
fleet check of a local tree checks what `--check DIR` checks, in its order.
"""

from __future__ import annotations

import glob
import os
import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from fsspec.core import url_to_fs
from fsspec.implementations.http import HTTPFileSystem
from fsspec.implementations.local import LocalFileSystem
from fsspec.spec import AbstractFileSystem

from transcript_view.core.check import (
    empty_tree,
    session_folder_name,
    transcripts_in,
)
from transcript_view.core.opencode_store import StoreError, is_database_file, list_database
from transcript_view.fleet.walk import PAGE, Entry, Lister, in_order, matching

T = TypeVar("T")

#: Characters that make a URL a glob (fsspec's).
GLOB_CHARS = frozenset("*?[")
#: A URL's user and password (`scheme://user:secret@host/…`), which are never shown.
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@")
#: An HTTP URL's query (a presigned URL's signature, a SAS token), never shown either.
_QUERY = re.compile(r"(https?://[^\s?#\"]*)\?[^\s#\"]*")


def redact(text: str) -> str:
    """`text` with any URL's user and password, and an HTTP URL's query, left out:
    credentials come from the store's configuration, and one written into a URL (a
    presigned URL's signature) is never printed or kept."""
    return _QUERY.sub(r"\1?…", _USERINFO.sub(r"\1", text))


@dataclass(frozen=True, slots=True)
class Target:
    """One thing to check: a transcript's URL, or a URL that named none (and why)."""

    url: str
    error: str | None = None
    """Why `url` could not be listed (None: it is a transcript to check)."""
    size: int | None = None
    """Its bytes, as the listing gave them (None: not listed with one)."""
    where: str | None = None
    """A plain path's absolute path, what a worker opens (its working folder may be any);
    `url` is the path as given, what the results say (as `--check` prints it)."""


def targets(
    urls: Iterable[str], storage_options: Mapping[str, Any] | None = None
) -> Iterator[Target]:
    """Every transcript `urls` name, in order: each URL's, as its store lists them.

    A URL that names nothing (or cannot be listed) is one `Target` with its
    `error`, at its place, as `--check` keeps a PATH it could not check. A plain
    path is expanded as `--check` expands it (`_local`), so it prints the same.
    """
    # A store's listings are not cached: a walk of a million keys must not keep them all.
    options = {"use_listings_cache": False, **dict(storage_options or {})}
    for url in urls:
        if "://" not in url:
            yield from _local(url)
            continue
        try:
            fs, path = url_to_fs(url, **options)
        except Exception as exc:  # a protocol with no library, a bad URL, …
            yield Target(url, redact(f"{url}: cannot be read ({words(exc)})"))
            continue
        if isinstance(fs, LocalFileSystem):  # a `file://` URL: the path's, named by URL
            for target in _local(path):
                ok = target.error is None
                yield replace(target, url=fs.unstrip_protocol(target.url)) if ok else target
            continue
        try:
            for target in _listed(url, fs, path):
                error = target.error
                yield target if error is None else Target(target.url, redact(error))
        except Exception as exc:  # the store's own errors (aiohttp's, botocore's, …) too
            yield Target(url, redact(f"{url}: cannot be listed ({words(exc)})"))


def session_of(url: str) -> str | None:
    """What the URLs of a transcript's session folder (`core.check.session_folder_name`: a
    Claude Code session's subagents) start with; None for a name that has none. A walk
    lists them right after it, so a session is one run of the listing: one task."""
    name = posixpath.basename(url)
    folder = session_folder_name(name)
    return None if folder is None else f"{url[: -len(name)]}{folder}/"


def units(items: Iterable[T], key: Callable[[T], str | None]) -> Iterator[list[T]]:
    """`items` (by their URL, `key`) cut into runs of one session each (`session_of`): a
    transcript with what of its session folder follows it; anything else alone, as is an
    item whose `key` is None (a URL that named no transcript: never a session's head nor
    one of its own)."""
    unit: list[T] = []
    session: str | None = None
    for item in items:
        url = key(item)
        if unit and session is not None and url is not None and url.startswith(session):
            unit.append(item)
            continue
        if unit:
            yield unit
        unit, session = [item], session_of(url) if url is not None else None
    if unit:
        yield unit


def _local(url: str) -> Iterator[Target]:
    """A plain path, expanded as `core.check.run_check` expands a PATH: a folder's
    transcripts (`transcripts_in`), an OpenCode database's sessions, a glob's matches,
    else the path itself (whose check says what it is)."""
    # A glob's matches in a store's order, a folder's name with its `/` (as `_globbed`).
    paths = (
        sorted(glob.glob(url), key=lambda p: p + "/" if os.path.isdir(p) else p)
        if any(c in GLOB_CHARS for c in url)
        else [url]
    )
    if not paths:
        yield Target(url, f"{url}: nothing matches")
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found = transcripts_in(path)
            if not found:
                yield Target(name, empty_tree(str(path)))
            for p in found:
                yield Target(str(p), size=_file_size(p), where=os.path.abspath(p))
        elif is_database_file(path):
            try:
                rows = sorted(list_database(path), key=lambda r: r.id)
            except StoreError as exc:
                yield Target(name, str(exc))
                continue
            if not rows:
                yield Target(name, f"{path}: an OpenCode database with no sessions")
            for row in rows:
                yield Target(str(row.path), where=os.path.abspath(row.path))
        else:
            yield Target(name, size=_file_size(path), where=os.path.abspath(path))


def _file_size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _listed(url: str, fs: AbstractFileSystem, path: str) -> Iterator[Target]:
    store = store_of(fs)
    # In an HTTP URL a `?` starts the query, not a glob.
    wild = "*[" if isinstance(fs, HTTPFileSystem) else GLOB_CHARS
    if any(c in wild for c in path):
        count = 0
        for match in _globbed(fs, store, path, wild):
            count += 1
            if match.is_dir:
                yield from _walked(url, fs, store, match.key)
            else:
                yield Target(as_url(url, match.key), size=match.size)
        if not count:
            yield Target(url, f"{url}: nothing matches")
        return
    if store.is_folder(path):
        yield from _walked(url, fs, store, path)
    elif fs.exists(path):
        yield Target(url, size=_size(fs, path))
    else:
        yield Target(url, f"{url}: no such file or directory")


def _globbed(
    fs: AbstractFileSystem, store: Store, path: str, wild: Collection[str]
) -> Iterator[Entry]:
    """A glob's matches, in key order (a folder's key ends with `/`): each level matched as
    the store's listing streams (`walk.matching`), so a pattern over a million keys never
    holds them; a pattern with `**`, or one in the bucket's (or host's) name, by fsspec's
    glob, which lists what it looks in whole."""
    levels = path.rstrip("/").split("/")
    first = next(i for i, level in enumerate(levels) if any(c in wild for c in level))
    top = 3 if isinstance(fs, HTTPFileSystem) else 1  # `http:`, ``, the host; the bucket
    if "**" in path or first < top:
        for match in sorted(fs.glob(path)):
            yield Entry(_folder(fs, match)) if store.is_folder(match) else Entry(
                match, _size(fs, match)
            )
        return

    def lookup(key: str) -> Entry | None:
        if store.is_folder(key):
            return Entry(key + "/")
        return Entry(key, _size(fs, key)) if fs.isfile(key) else None

    folder = "/".join(levels[:first]) + "/"
    yield from matching(store.entries, folder, levels[first:], lookup, wild)


def as_url(given: str, path: str) -> str:
    """A store's path as a URL in the scheme of the URL it was found under, `given`: the
    user's `az://` stays `az://` (adlfs would say `abfs://`), `s3a://` stays `s3a://`; an
    HTTP store's paths are URLs already."""
    if "://" in path:
        return path
    return f"{given.split('://', 1)[0]}://{path.lstrip('/')}"


def _walked(url: str, fs: AbstractFileSystem, store: Store, path: str) -> Iterator[Target]:
    """The transcripts under a store's folder, in `--check DIR`'s order (`fleet.walk`); a
    URL that names none is one `Target` that says so."""
    count = 0
    for entry in in_order(store.entries, _folder(fs, path)):
        count += 1
        yield Target(as_url(url, entry.key), size=entry.size)
    if count == 0:
        yield Target(url, empty_tree(url))


def _folder(fs: AbstractFileSystem, path: str) -> str:
    """A folder's key as `fleet.walk` has it: the store's path, ending with `/`."""
    return str(fs._strip_protocol(path)).rstrip("/") + "/"


@dataclass(frozen=True, slots=True)
class Store:
    """How a store's folders are listed for `fleet.walk` (`store_of`)."""

    entries: Lister
    is_folder: Callable[[str], bool]
    """Whether a path is a folder (has keys under it), without listing it whole."""


def store_of(fs: AbstractFileSystem, page: int = PAGE) -> Store:
    """S3's folders are listed a page of `page` keys at a time (`list_objects_v2`), so a
    folder of a million keys streams; any other store's by its file system's `ls`, a
    folder at a time (fsspec's way for every store: gcsfs and adlfs gather a folder's
    pages before they answer)."""
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    if "s3" in protocols and callable(getattr(fs, "call_s3", None)):  # s3fs's
        return Store(
            lambda folder: _s3_pages(fs, folder, page),
            lambda path: next(_s3_pages(fs, _folder(fs, path), 1), None) is not None,
        )
    return Store(lambda folder: _listed_whole(fs, folder), fs.isdir)


def _s3_pages(fs: Any, folder: str, page: int) -> Iterator[Entry]:
    """A folder of an S3 bucket (`bucket/prefix/`), `page` keys a request, sorted. The
    bucket itself is `bucket/`; a key that is the folder itself (a "directory" object)
    is one of its entries, as a store lists it, and passed over by `in_order`."""
    bucket, _, prefix = folder.partition("/")
    ask: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "Delimiter": "/", "MaxKeys": page}
    while True:
        got = fs.call_s3("list_objects_v2", **ask)
        entries = [Entry(f"{bucket}/{p['Prefix']}") for p in got.get("CommonPrefixes") or ()]
        entries += [Entry(f"{bucket}/{c['Key']}", c.get("Size")) for c in got.get("Contents") or ()]
        entries.sort(key=_by_key)
        yield from entries
        token = got.get("NextContinuationToken")
        if not got.get("IsTruncated") or not token:
            return
        ask["ContinuationToken"] = token


def _listed_whole(fs: AbstractFileSystem, folder: str) -> Iterator[Entry]:
    """A folder as the store's `ls` gives it (whole), sorted as a store's listing is."""
    entries = []
    for info in fs.ls(folder.rstrip("/"), detail=True):
        name = str(info["name"]).rstrip("/")
        size = info.get("size")
        if info.get("type") == "directory":
            entries.append(Entry(name + "/"))
        else:
            entries.append(Entry(name, size if isinstance(size, int) else None))
    entries.sort(key=_by_key)
    return iter(entries)


def _by_key(entry: Entry) -> str:
    return entry.key


def _size(fs: AbstractFileSystem, path: str) -> int | None:
    """A listed file's bytes (None: the store would not say)."""
    try:
        size = fs.size(path)
    except (OSError, ValueError):
        return None
    return size if isinstance(size, int) else None


def words(exc: BaseException) -> str:
    """An exception's first line (its type's name when it has none): what a line says."""
    return (str(exc).strip() or type(exc).__name__).splitlines()[0]

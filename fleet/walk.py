"""A store's folder walked in `--check DIR`'s order, read as its listing streams.

`core.check.transcripts_in` is the rule: a folder's transcripts by name, each
followed by its session folder (`core.check.session_folder`), then its other
folders by name, sidecar folders never. A store lists a folder's keys sorted
(S3 by their UTF-8 bytes, which is Python's order of `str`), a page at a time:
`in_order` turns such a stream into that order without holding it, so a folder
of a million keys is never in memory, only the page being read and, while a
decision waits on a key not yet read, the few keys between (those that share
the name it waits on). A folder's keys are read twice when it has both
transcripts and folders: once for its files, once for its folders; a page of
names costs less to read again than to keep a million of.

What a decision needs of the folder, as `transcripts_in` has it whole:

- a `.jsonl.zst` counts but beside its `.jsonl`: that name sorts before it, and
  every key between starts with it (`_Before`);
- an older Gemini CLI chat `chats/session-*.json` counts but beside its
  `.jsonl`: that key sorts after it, a few keys on (`_Ahead.has`);
- a `.jsonl`'s session folder `X/` sorts after `X.jsonl`, every key between
  starting `X.` (`_Ahead.has`), and is passed over when reached (`_Pending`).
"""

from __future__ import annotations

import bisect
import posixpath
from collections import deque
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from transcript_view.core.check import is_sidecar_dir, is_transcript_name, session_folder_name

#: Keys a page of a store's listing holds (S3's most).
PAGE = 1000
#: What makes a level of a path a glob's pattern (fsspec's).
GLOB = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Entry:
    """One key of a folder's listing: a file, or a folder (its key ends with `/`)."""

    key: str
    size: int | None = None

    @property
    def is_dir(self) -> bool:
        return self.key.endswith("/")

    @property
    def name(self) -> str:
        """The last part of its key (a folder's without its one `/`; a store's key may have
        an empty part, `a//`, whose name is "")."""
        return posixpath.basename(self.key[:-1] if self.is_dir else self.key)


Lister = Callable[[str], Iterator[Entry]]
"""A folder's entries (its key, ending with `/`, or "" for the top), sorted by key."""


def in_order(lister: Lister, folder: str) -> Iterator[Entry]:
    """The transcripts under `folder` (a key ending with `/`, or ""), in `transcripts_in`'s
    order, each listing read as it streams (see the module)."""
    chats = posixpath.basename(folder[:-1]) == "chats"
    more = False  # a folder to walk after the files
    ahead = _Ahead(lister(folder))
    before = _Before()
    walked = _Pending()
    for entry in ahead:
        walked.passed(entry.key)
        if entry.is_dir:
            if entry.key != folder and not is_sidecar_dir(entry.name) and not walked.has(entry):
                more = True
            continue
        before.add(entry.key)
        if not _counts(entry, ahead, before, chats):
            continue
        yield entry
        session = _session_folder(entry)
        if session is not None and ahead.has(session):
            walked.add(session)
            yield from in_order(lister, session)
    if not more:
        return
    walked = _Pending()
    for entry in lister(folder):
        walked.passed(entry.key)
        if not entry.is_dir:
            session = _session_folder(entry)
            if session is not None:
                walked.add(session)
        elif entry.key != folder and not is_sidecar_dir(entry.name) and not walked.has(entry):
            yield from in_order(lister, entry.key)


def matching(
    lister: Lister,
    folder: str,
    parts: Sequence[str],
    lookup: Callable[[str], Entry | None],
    wild: Collection[str] = GLOB,
) -> Iterator[Entry]:
    """What the glob `parts` (a level each: `*`, `?` and `[…]` within a level, as fsspec's
    glob has them) matches under `folder`, files and folders, in key order: a level with
    a wildcard read as its listing streams, a literal level stepped into, a literal last
    level looked up (`lookup`: the entry of a key named in full; None when there is no
    such file or folder). `**` is not a level's pattern here (fsspec's glob has it);
    `wild` is what makes a level a pattern (an HTTP URL's `?` starts its query)."""
    part, rest = parts[0], parts[1:]
    if not any(c in wild for c in part):
        if rest:
            yield from matching(lister, f"{folder}{part}/", rest, lookup, wild)
        else:
            found = lookup(folder + part)
            if found is not None:
                yield found
        return
    for entry in lister(folder):
        if entry.key == folder or not fnmatchcase(entry.name, part):
            continue
        if not rest:
            yield entry
        elif entry.is_dir:
            yield from matching(lister, entry.key, rest, lookup, wild)


def _counts(entry: Entry, ahead: _Ahead, before: _Before, chats: bool) -> bool:
    """`is_transcript_name`, with the folder's names it asks about looked up around it."""
    name = entry.name
    names: set[str] = set()
    if name.endswith(".jsonl.zst") and before.has(entry.key[: -len(".zst")]):
        names.add(name[: -len(".zst")])
    if chats and name.endswith(".json") and ahead.has(entry.key + "l"):
        names.add(name + "l")
    return is_transcript_name(name, names, chats)


def _session_folder(entry: Entry) -> str | None:
    """The key of the folder that would be `entry`'s session folder (`session_folder_name`),
    or None."""
    folder = session_folder_name(entry.name)
    return None if folder is None else f"{entry.key[: -len(entry.name)]}{folder}/"


class _Ahead:
    """A sorted stream of entries that can be asked whether a key further on is in it,
    keeping what it reads to answer until it is taken."""

    def __init__(self, entries: Iterator[Entry]) -> None:
        self._entries = entries
        self._read: deque[Entry] = deque()
        self._done = False

    def __iter__(self) -> Iterator[Entry]:
        return self

    def __next__(self) -> Entry:
        if self._read:
            return self._read.popleft()
        return next(self._entries)

    def has(self, key: str) -> bool:
        """Whether `key` is still to come (every key read up to it is kept)."""
        while not self._done and (not self._read or self._read[-1].key < key):
            entry = next(self._entries, None)
            if entry is None:
                self._done = True
            else:
                self._read.append(entry)
        return any(e.key == key for e in self._read)


class _Before:
    """The files already read whose key is a prefix of the one read last (in a sorted
    stream, no later key can start with one that is not)."""

    def __init__(self) -> None:
        self._chain: list[str] = []

    def add(self, key: str) -> None:
        while self._chain and not key.startswith(self._chain[-1]):
            self._chain.pop()
        self._chain.append(key)

    def has(self, key: str) -> bool:
        return key in self._chain


class _Pending:
    """Session folders walked, or to be passed over, not yet reached in the stream."""

    def __init__(self) -> None:
        self._keys: list[str] = []

    def add(self, key: str) -> None:
        bisect.insort(self._keys, key)

    def passed(self, key: str) -> None:
        """Forget the keys before `key`: they were passed over, and none comes again."""
        del self._keys[: bisect.bisect_left(self._keys, key)]

    def has(self, entry: Entry) -> bool:
        return entry.key in self._keys

"""`fleet.walk`: a store's sorted listing walked in `--check DIR`'s order, as it streams."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from _tricky import write_tricky
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_view.core.check import transcripts_in

pytest.importorskip("transcript_view.fleet", reason="the fleet extra is not installed")

from fsspec.implementations.local import LocalFileSystem
from fsspec.spec import AbstractFileSystem

from transcript_view.fleet.listing import store_of
from transcript_view.fleet.walk import Entry, in_order


def test_a_sorted_listing_walks_in_the_local_order(tmp_path: Path) -> None:
    root = write_tricky(tmp_path / "t")
    expected = transcripts_in(root)
    store = store_of(LocalFileSystem())
    got = [Path(e.key) for e in in_order(store.entries, str(root) + "/")]
    assert got == expected
    names = [p.relative_to(root).as_posix() for p in got]
    # A session's subagents right after it; `proj-a/` before `proj/` (as `-` sorts before `/`).
    assert names[names.index("a.jsonl") + 1 : names.index("a.jsonl") + 4] == [
        "a/subagents/agent-1.jsonl",
        "a/subagents/agent-2.jsonl",
        "a/subagents/workflows/w/agent-3.jsonl",
    ]
    assert names.index("proj-a/x.jsonl") < names.index("proj.b/y.jsonl") < names.index(
        "proj/x.jsonl"
    )
    assert "r.jsonl.zst" not in names and "s.jsonl.zst" in names
    assert "chats/session-1.json" not in names and "chats/session-2.json" in names
    assert not any(n.startswith(("t.artifacts/", "tool-results/")) for n in names)


def test_the_listing_is_read_only_as_far_as_a_decision_needs() -> None:
    """A folder's listing is consumed as the walk goes: after the first transcript, only
    the keys up to the one its decision needed have been read."""
    read: list[str] = []

    def entries(folder: str) -> Iterator[Entry]:
        keys = [f"{folder}{i:04d}.jsonl" for i in range(1000)]
        for key in keys:
            read.append(key)
            yield Entry(key, 1)

    walk = in_order(entries, "b/")
    assert next(walk).key == "b/0000.jsonl"
    assert read == ["b/0000.jsonl"]
    # Whether `b/0000/` (its session folder) is there is known at the next key.
    assert next(walk).key == "b/0001.jsonl"
    assert read == ["b/0000.jsonl", "b/0001.jsonl"]
    assert sum(1 for _ in walk) == 998
    assert len(read) == 1000  # each key read once: no folder, so no second reading


def test_a_key_with_an_empty_part_is_no_chats_folder_and_no_session() -> None:
    """A store may hold `a//b` (no disk can): the folder `p//` is named "", so it is
    no `chats/` and no session folder of a file named `.jsonl`."""
    keys = ["b/chats//session-1.json", "b/p/.jsonl", "b/p//a.jsonl", "b/p/z.jsonl"]

    def entries(folder: str) -> Iterator[Entry]:
        """A store's listing with `/` as its delimiter: a key, or the folder it is in."""
        under = sorted({folder + k[len(folder):].partition("/")[0]
                        + ("/" if "/" in k[len(folder):] else "")
                        for k in keys if k.startswith(folder)})  # fmt: skip
        return iter([Entry(k) for k in under])

    assert [e.key for e in in_order(entries, "b/")] == [
        "b/p/.jsonl", "b/p/z.jsonl", "b/p//a.jsonl",
    ]  # fmt: skip


#: Names whose order tests every rule: a `-`, `.`, space or `!` sorts before `/`; a name
#: may be another's prefix; sidecar folders; Gemini's older chats; compressed rollouts.
_NAMES = ("X", "X-", "X.", "X ", "X!", "X.jsonl", "X.jsonl.zst", "X.jsonl-", "X.json",
          "Y.jsonl", "chats", "session-1.json", "session-1.jsonl", "x.artifacts",
          "tool-results", "tool-output", "tool-results.jsonl", "subagents")  # fmt: skip


class _Bucket:
    """S3's `list_objects_v2` over a set of keys, for the walk to page through: keys
    sorted, a folder once as its common prefix, `MaxKeys` a page, continuation tokens;
    what `listing.store_of` asks of s3fs (`call_s3`). The walk's agreement with a
    real S3 server is `tests/fleet/test_fleet.py`'s; this one can be asked anything."""

    protocol = ("s3", "s3a")

    def __init__(self, keys: list[str]) -> None:
        self.keys = sorted(keys)

    def call_s3(self, method: str, **ask: Any) -> dict[str, Any]:
        assert method == "list_objects_v2"
        prefix = ask["Prefix"]
        under: dict[str, bool] = {}
        for key in self.keys:
            if key.startswith(prefix):
                rest = key[len(prefix):]
                cut = rest.find("/")
                under[prefix + rest[: cut + 1] if cut >= 0 else key] = cut >= 0
        names = sorted(under)
        start = int(ask.get("ContinuationToken", 0))
        page = names[start : start + ask["MaxKeys"]]
        more = start + len(page) < len(names)
        return {
            "CommonPrefixes": [{"Prefix": n} for n in page if under[n]],
            "Contents": [{"Key": n, "Size": 1} for n in page if not under[n]],
            "IsTruncated": more,
            **({"NextContinuationToken": str(start + len(page))} if more else {}),
        }


_paths = st.lists(
    st.lists(st.sampled_from(_NAMES), min_size=1, max_size=4).map("/".join),
    min_size=1, max_size=24, unique=True,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(paths=_paths, page=st.integers(1, 5))
def test_any_tree_walks_the_same_from_a_paged_listing(paths: list[str], page: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        keys = []
        for rel in paths:
            path = root / rel
            if any(p.is_file() for p in path.parents) or path.is_dir():
                continue  # a name is a file or a folder, never both
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("{}\n")
            keys.append(rel)  # a key, within its bucket
        expected = [f"bkt/{p.relative_to(root).as_posix()}" for p in transcripts_in(root)]
    walk = in_order(store_of(cast(AbstractFileSystem, _Bucket(keys)), page).entries, "bkt/")
    assert [e.key for e in walk] == expected

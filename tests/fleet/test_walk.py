"""`fleet.walk`: a store's sorted listing walked in `--check DIR`'s order, as it streams."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _tricky import write_tricky

from transcript_view.core.check import transcripts_in

pytest.importorskip("transcript_view.fleet", reason="the fleet extra is not installed")

from fsspec.implementations.local import LocalFileSystem

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

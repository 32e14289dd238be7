"""The sparse index of core.filelines: random access agrees with a naive full index.

`FileLines` keeps a checkpoint every `CHECKPOINT_BYTES` and rescans a window to
find a row. These tests shrink the checkpoint distance and the read chunk so a
small generated file has hundreds of windows and chunk seams, then compare
every lookup with an index built the obvious way from the whole file's bytes.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from _filelines import generated, naive_row_of_offset, naive_spans

import transcript_view.core.filelines as filelines
from transcript_view.core.filelines import FileLines


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpoints every 256 bytes and 1,000-byte reads: many windows and seams."""
    monkeypatch.setattr(filelines, "CHECKPOINT_BYTES", 256)
    monkeypatch.setattr(filelines, "CHUNK_BYTES", 1000)
    monkeypatch.setattr(filelines, "WINDOW_CACHE", 3)


def check_against_naive(fl: FileLines, data: bytes, rng: random.Random) -> None:
    spans = naive_spans(data, fl.row_bytes)
    assert fl.row_count == len(spans)
    order = list(range(len(spans)))
    rng.shuffle(order)
    for i in order:
        a, b = spans[i]
        assert fl.row_span(i) == (a, b), i
        assert fl.row_bytes_of(i) == data[a:b], i
    for _ in range(300):
        offset = rng.randint(-3, len(data) + 3)
        assert fl.row_of_offset(offset) == naive_row_of_offset(spans, offset), offset
    assert len(fl._windows) <= filelines.WINDOW_CACHE


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize("row_bytes", [4, 7, 64, 2048])
@pytest.mark.parametrize("seed", range(4))
def test_random_access_matches_a_naive_index(tmp_path: Path, seed: int, row_bytes: int) -> None:
    rng = random.Random(seed * 1000 + row_bytes)
    data = generated(rng, 60_000)
    path = tmp_path / "g.txt"
    path.write_bytes(data)
    with FileLines(path, row_bytes=row_bytes) as fl:
        assert fl.index()
        check_against_naive(fl, data, rng)
        assert fl.checkpoints <= len(data) // filelines.CHECKPOINT_BYTES + 1


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize("seed", range(3))
def test_the_exact_scan_and_the_fast_path_agree(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    data = b"".join(b"line %d %s\n" % (i, b"y" * rng.randint(0, 30)) for i in range(5000))
    path = tmp_path / "short.txt"
    path.write_bytes(data)
    with FileLines(path, row_bytes=64) as fast:
        fast.index()
        check_against_naive(fast, data, rng)
    monkeypatch.setattr(FileLines, "_short_lines_only", lambda self, chunk, base: False)
    with FileLines(path, row_bytes=64) as slow:
        slow.index()
        check_against_naive(slow, data, rng)
        assert slow.checkpoints > 100


@pytest.mark.usefixtures("small_windows")
def test_rows_read_between_index_steps(tmp_path: Path) -> None:
    """The last window grows while indexing; rows read before must stay right."""
    rng = random.Random(7)
    data = generated(rng, 30_000)
    path = tmp_path / "steps.txt"
    path.write_bytes(data)
    spans = naive_spans(data, 50)
    with FileLines(path, row_bytes=50) as fl:
        while not fl.index(max_bytes=rng.randint(1, 900)):
            n = fl.row_count
            assert n <= len(spans)
            for i in {0, n // 2, n - 1} if n else set():
                assert fl.row_span(i) == spans[i]
            if n:
                assert fl.row_of_offset(len(data)) == n - 1
        check_against_naive(fl, data, rng)


@pytest.mark.parametrize(
    "data",
    [b"", b"\n", b"\n\n\n", b"abc", b"a\r\nb\r\n", b"x" * 10_000, ("é" * 5000).encode() + b"\n"],
)
@pytest.mark.usefixtures("small_windows")
def test_edge_files(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "e.txt"
    path.write_bytes(data)
    with FileLines(path, row_bytes=16) as fl:
        assert fl.index()
        check_against_naive(fl, data, random.Random(1))


def test_memory_is_bounded_by_size_not_rows(tmp_path: Path) -> None:
    """4 MiB of empty lines is 4 Mi rows but only ~64 checkpoints (16 bytes each)."""
    path = tmp_path / "empty-lines.txt"
    path.write_bytes(b"\n" * (4 << 20))
    with FileLines(path) as fl:
        assert fl.index()
        assert fl.row_count == 4 << 20
        assert fl.checkpoints <= (4 << 20) // filelines.CHECKPOINT_BYTES + 1
        assert fl.row_span(3_000_000) == (3_000_000, 3_000_000)
        assert fl.row_of_offset(2_500_000) == 2_500_000
        assert all(len(w[0]) <= filelines.CHECKPOINT_BYTES + 2 for w in fl._windows.values())


def test_span_restricts_rows_to_a_byte_range(tmp_path: Path) -> None:
    data = b"before\n" + b"0123456789" * 10 + b"\nafter\n"
    path = tmp_path / "s.txt"
    path.write_bytes(data)
    with FileLines(path, row_bytes=30, span=(7, 107)) as fl:
        assert fl.index() and fl.size == 100
        assert [fl.row(i) for i in range(fl.row_count)] == [
            "0123456789" * 3,
            "0123456789" * 3,
            "0123456789" * 3,
            "0123456789",
        ]
        assert fl.row_span(3) == (90, 100)
        assert fl.row_of_offset(95) == 3

"""core.filelines: a file as rows, indexed by offset, split on UTF-8 boundaries, read-only."""

from __future__ import annotations

import os
import threading
from itertools import pairwise
from pathlib import Path

import pytest

from transcript_view.core.filelines import FileLines
from transcript_view.core.transcript import TranscriptError


def lines_of(path: Path, **kw: int) -> FileLines:
    fl = FileLines(path, **kw)
    assert fl.index() is True
    return fl


def all_rows(fl: FileLines) -> list[str]:
    return [fl.row(i) for i in range(fl.row_count)]


def write(tmp_path: Path, data: bytes, name: str = "f.txt") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize(
    ("data", "rows"),
    [
        (b"", []),
        (b"a", ["a"]),
        (b"a\n", ["a"]),
        (b"a\nb", ["a", "b"]),
        (b"a\nb\n", ["a", "b"]),
        (b"\n", [""]),
        (b"\n\n", ["", ""]),
        (b"a\n\nb\n", ["a", "", "b"]),
    ],
)
def test_small_files(tmp_path: Path, data: bytes, rows: list[str]) -> None:
    with lines_of(write(tmp_path, data)) as fl:
        assert fl.complete
        assert fl.size == len(data)
        assert fl.row_count == len(rows)
        assert all_rows(fl) == rows


def test_empty_file_is_complete_at_once(tmp_path: Path) -> None:
    with FileLines(write(tmp_path, b"")) as fl:
        assert fl.complete and fl.row_count == 0
        assert fl.row_of_offset(0) == 0
        with pytest.raises(IndexError):
            fl.row(0)


def test_crlf_keeps_cr_in_the_row(tmp_path: Path) -> None:
    with lines_of(write(tmp_path, b"one\r\ntwo\r\n")) as fl:
        assert all_rows(fl) == ["one\r", "two\r"]
        assert fl.row_span(0) == (0, 4)
        assert fl.row_span(1) == (5, 9)


def test_row_spans_exclude_the_lf(tmp_path: Path) -> None:
    data = b"alpha\nbe\n\ngamma"
    with lines_of(write(tmp_path, data)) as fl:
        spans = [fl.row_span(i) for i in range(fl.row_count)]
        assert spans == [(0, 5), (6, 8), (9, 9), (10, 15)]
        assert [data[a:b].decode() for a, b in spans] == all_rows(fl)


def test_row_of_offset(tmp_path: Path) -> None:
    data = b"alpha\nbe\n\ngamma"
    with lines_of(write(tmp_path, data)) as fl:
        expected = [0] * 6 + [1] * 3 + [2] + [3] * 5
        assert [fl.row_of_offset(o) for o in range(len(data))] == expected
        assert fl.row_of_offset(-5) == 0
        assert fl.row_of_offset(10_000) == 3


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    with lines_of(write(tmp_path, b"ok \xff\xfe end\n\xc3(\n")) as fl:
        assert fl.row(0) == "ok \ufffd\ufffd end"
        assert fl.row(1) == "\ufffd("
        assert fl.row_bytes_of(0) == b"ok \xff\xfe end"


def test_long_line_is_split_on_char_boundaries(tmp_path: Path) -> None:
    # 1 MB line of mixed 1-, 2-, 3- and 4-byte characters, so seams land inside them.
    unit = "a€é😀" * 3 + "b"  # 1+3+2+4 bytes, x3, +1 = 31 bytes
    line = unit * (1_000_000 // len(unit.encode()))
    data = line.encode() + b"\nshort\n"
    with lines_of(write(tmp_path, data), row_bytes=2048) as fl:
        rows = all_rows(fl)
        assert rows[-1] == "short"
        assert "".join(rows[:-1]) == line
        assert "\ufffd" not in "".join(rows)
        spans = [fl.row_span(i) for i in range(fl.row_count)]
        for (a, b), (c, _) in pairwise(spans[:-1]):
            assert b == c, "split rows are contiguous"
            assert 0 < b - a <= 2048
            assert data[b] & 0xC0 != 0x80, "a row never starts inside a character"
        assert fl.row_count == len(rows)
        assert fl.row_of_offset(len(line.encode()) + 3) == fl.row_count - 1


def test_split_rows_exact_multiple(tmp_path: Path) -> None:
    with lines_of(write(tmp_path, b"abcdefgh\nabcd\nabcde"), row_bytes=4) as fl:
        assert all_rows(fl) == ["abcd", "efgh", "abcd", "abcd", "e"]


def test_split_without_utf8_falls_back_to_byte_limit(tmp_path: Path) -> None:
    # Only continuation bytes: no character boundary to back off to.
    with lines_of(write(tmp_path, b"\x80" * 10), row_bytes=4) as fl:
        assert [fl.row_span(i) for i in range(fl.row_count)] == [(0, 4), (4, 8), (8, 10)]


def test_row_bytes_too_small(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="row_bytes"):
        FileLines(write(tmp_path, b"x"), row_bytes=3)


def test_incremental_index_with_max_bytes(tmp_path: Path) -> None:
    data = b"".join(b"line %05d\n" % i for i in range(1000))  # 11 bytes a line
    seen: list[tuple[int, int]] = []
    with FileLines(write(tmp_path, data)) as fl:
        assert fl.index(max_bytes=100) is False
        assert fl.row_count == 9  # 100 bytes hold 9 whole lines
        assert not fl.complete
        assert fl.row(8) == "line 00008"
        steps = 0
        while not fl.index(lambda d, t: seen.append((d, t)), max_bytes=1000):
            steps += 1
        assert fl.complete and fl.row_count == 1000
        assert fl.row(999) == "line 00999"
        assert seen[-1] == (len(data), len(data))
        assert [d for d, _ in seen] == sorted(d for d, _ in seen)
        assert steps >= 9


def test_incremental_index_across_a_long_line(tmp_path: Path) -> None:
    # Slices that end inside a long, multi-byte line must give the same rows.
    data = ("€" * 5000 + "\n" + "x" * 7).encode()
    with FileLines(write(tmp_path, data), row_bytes=100) as whole:
        whole.index()
        expected = [whole.row_span(i) for i in range(whole.row_count)]
    with FileLines(write(tmp_path, data, "g.txt"), row_bytes=100) as fl:
        while not fl.index(max_bytes=37):
            pass
        assert [fl.row_span(i) for i in range(fl.row_count)] == expected


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    result: list[BaseException] = []

    def attempt() -> None:
        try:
            FileLines(fifo)
        except BaseException as exc:
            result.append(exc)

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "opening a fifo blocked"
    assert result and isinstance(result[0], TranscriptError)
    assert "fifo" in str(result[0])


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises((TranscriptError, IsADirectoryError)):
        FileLines(tmp_path)


def test_never_writes(tmp_path: Path) -> None:
    p = write(tmp_path, b"a\nb\n")
    os.chmod(p, 0o444)
    before = (p.read_bytes(), p.stat().st_mtime_ns)
    with lines_of(p) as fl:
        assert all_rows(fl) == ["a", "b"]
    assert (p.read_bytes(), p.stat().st_mtime_ns) == before


def test_close_is_idempotent_and_stops_reads(tmp_path: Path) -> None:
    fl = lines_of(write(tmp_path, b"a\n"))
    fl.close()
    fl.close()
    assert fl.closed
    with pytest.raises(ValueError):
        fl.row(0)
    assert fl.index() is True  # already complete; no I/O


def test_rows_read_while_indexing_in_a_thread(tmp_path: Path) -> None:
    data = b"".join(b"%07d\n" % i for i in range(300_000))  # 2.4 MB
    with FileLines(write(tmp_path, data)) as fl:
        t = threading.Thread(target=lambda: fl.index(), daemon=True)
        t.start()
        checked = 0
        while t.is_alive() or checked < fl.row_count:
            n = fl.row_count
            for i in range(checked, n, 997):
                assert fl.row(i) == f"{i:07d}"
            checked = n
            if not t.is_alive():
                break
        t.join()
        assert fl.row_count == 300_000


def test_twenty_megabytes(tmp_path: Path) -> None:
    p = tmp_path / "big.txt"
    line_len = 100
    n = 20 * (1 << 20) // line_len
    with open(p, "wb") as fh:
        block = b"".join(b"%09d " % i + b"y" * (line_len - 11) + b"\n" for i in range(1000))
        for k in range(n // 1000):
            fh.write(block.replace(b"y", bytes([97 + k % 26])))
    size = p.stat().st_size
    with FileLines(p) as fl:
        steps: list[int] = []
        assert fl.index(lambda d, t: steps.append(d))
        assert fl.size == size
        assert fl.row_count == n // 1000 * 1000
        assert len(steps) >= 2  # more than one 8 MiB chunk
        last = fl.row_count - 1
        assert fl.row(last).startswith("000000999 ")
        assert fl.row_span(last) == (size - line_len, size - 1)
        assert fl.row_of_offset(size // 2) == (size // 2) // line_len


@pytest.mark.parametrize("row_bytes", [4, 7, 64, 2048])
def test_bytes_given_are_rows_as_the_same_file_would_be(tmp_path: Path, row_bytes: int) -> None:
    """A text held in memory (a transcript line's field, decoded) is shown as a file is:
    the same rows, spans, tail and offsets; nothing is opened, and closing ends reads."""
    data = ("line é 日本\n" * 40 + "x" * 300 + "\n\nend").encode() * 200  # past a checkpoint
    nowhere = tmp_path / "no-such-file"
    with lines_of(write(tmp_path, data), row_bytes=row_bytes) as f:
        with FileLines(nowhere, row_bytes=row_bytes, data=data) as m:
            assert m.path == nowhere and m.size == len(data)
            assert m.index(max_bytes=5000) is False  # indexed in steps, as a file is
            assert m.index() is True
            assert m.row_count == f.row_count
            assert all_rows(m) == all_rows(f)
            assert [m.row_span(i) for i in range(m.row_count)] == [
                f.row_span(i) for i in range(f.row_count)
            ]
            assert m.tail_rows() == f.tail_rows()
            assert m.row_of_offset(len(data) // 2) == f.row_of_offset(len(data) // 2)
        assert m.closed
        with pytest.raises(ValueError):
            m.row(0)
    assert not nowhere.exists()

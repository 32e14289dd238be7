"""The row layout's prefix sums, in C (`viewer/_layout.c`) and in Python (`document.refill`).

Every chunk of counts a layout worker posts, and every laid-out block whose
count changes, refills a `Document`'s sums on the UI thread. In Python a
65,536-block chunk held it 13 ms (twice that with the machine busy), which a
key pressed meanwhile waited for; the native sums are the same numbers.
"""

from __future__ import annotations

from array import array
from itertools import accumulate
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcript_view.viewer import document
from transcript_view.viewer.document import COUNT_TYPECODE, Document, count_array, refill

native = pytest.mark.skipif(document._layout is None, reason="viewer/_layout.c was not built")

counts_lists = st.lists(st.integers(min_value=0, max_value=2**31 - 1), max_size=300)


def plain_sums(counts: list[int], base: int = 0) -> list[int]:
    return list(accumulate(counts, initial=base))


@pytest.fixture(params=["native", "python"])
def either(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the native sums and again with the Python ones."""
    if request.param == "native":
        if document._layout is None:
            pytest.skip("viewer/_layout.c was not built")
    else:
        monkeypatch.setattr(document, "_layout", None)
    return str(request.param)


@native
@given(old=counts_lists, new=counts_lists, base=st.integers(0, 2**40), data=st.data())
def test_native_and_python_sums_agree(old: list[int], new: list[int], base: int, data: Any) -> None:
    """Appended blocks, and a change from any block on: the same sums both ways."""
    counts = array(COUNT_TYPECODE, old)
    fast = array("q", plain_sums(old, base))
    slow = array("q", fast)
    counts.extend(array(COUNT_TYPECODE, new))
    first = data.draw(st.integers(0, len(old)))  # a block the old sums reach
    refill(fast, counts, first)
    saved, document._layout = document._layout, None
    try:
        refill(slow, counts, first)
    finally:
        document._layout = saved
    assert fast == slow == array("q", plain_sums(list(counts), base))


def test_a_document_takes_lists_and_arrays_alike(either: str) -> None:
    doc = Document(None)  # type: ignore[arg-type]  # the sums need no source
    assert doc.extend(0, [2, 0, 3])
    assert doc.extend(3, array(COUNT_TYPECODE, [1, 4]))
    assert not doc.extend(9, [1])  # a chunk that does not follow on is refused
    assert list(doc.starts) == [0, 2, 2, 5, 6, 10]
    assert doc.total_rows == 10 and doc.locate(5) == (3, 0)
    doc._set_count(1, 7)
    assert list(doc.starts) == [0, 2, 9, 12, 13, 17]
    assert doc.set_counts({0: 1, 4: 1})
    assert list(doc.starts) == [0, 1, 8, 11, 12, 13]
    doc.truncate(2)
    assert doc.extend(2, [5])
    assert list(doc.starts) == [0, 1, 8, 13]


def test_count_array_keeps_an_array_of_its_type() -> None:
    mine = array(COUNT_TYPECODE, [1, 2])
    assert count_array(mine) is mine
    assert count_array([1, 2]) == mine
    assert count_array(array("q", [1, 2])) == mine


@native
def test_the_native_sums_refuse_what_they_cannot_fill() -> None:
    assert document._layout is not None
    sums = document._layout.prefix_sums
    counts = array(COUNT_TYPECODE, [1, 2, 3])
    starts = array("q", [0, 0, 0, 0])
    with pytest.raises(TypeError, match="array\\('q'\\)"):
        sums(array("l", [0, 0, 0, 0]), counts, 0)  # 8 bytes here too, but not "q"
    with pytest.raises(TypeError, match="array\\('i'\\)"):
        sums(starts, array("q", [1, 2, 3]), 0)
    with pytest.raises(BufferError):
        sums(bytes(32), counts, 0)  # not writable
    with pytest.raises(ValueError, match="one more"):
        sums(array("q", [0, 0, 0]), counts, 0)
    with pytest.raises(IndexError):
        sums(starts, counts, 4)
    with pytest.raises(IndexError):
        sums(starts, counts, -1)
    with pytest.raises(TypeError):
        sums(starts, counts)  # type: ignore[call-arg]
    sums(starts, counts, 3)  # nothing after the last block: nothing to do
    assert list(starts) == [0, 0, 0, 0]
    sums(starts, counts, 0)
    assert list(starts) == [0, 1, 3, 6]


@native
def test_a_sum_that_overflows_changes_nothing() -> None:
    assert document._layout is not None
    counts = array(COUNT_TYPECODE, [1, 2**31 - 1, 5])
    starts = array("q", [0, 2**63 - 2**31, 0, 0])
    before = array("q", starts)
    with pytest.raises(OverflowError):
        document._layout.prefix_sums(starts, counts, 1)
    assert starts == before


def test_a_chunk_is_taken_in_as_the_worker_sent_it(either: str) -> None:
    """Workers post arrays of the document's own type: `extend` copies them once."""
    doc = Document(None)  # type: ignore[arg-type]
    chunk = array(COUNT_TYPECODE, [3] * 70_000)
    assert doc.extend(0, chunk) and doc.extend(70_000, chunk)
    assert doc.total_rows == 420_000 and doc.starts[70_000] == 210_000
    assert len(doc.starts) == len(doc.counts) + 1 == 140_001


def test_a_chunk_whose_sums_overflow_leaves_the_document_as_it_was(either: str) -> None:
    """Found in review: the counts were taken in before the sums failed."""
    doc = Document(None)  # type: ignore[arg-type]
    assert doc.extend(0, array(COUNT_TYPECODE, [4, 5]))
    doc.starts[-1] = 2**63 - 10  # as if the blocks before held nearly every row a sum can
    counts, starts = array(COUNT_TYPECODE, doc.counts), array("q", doc.starts)
    with pytest.raises(OverflowError):
        doc.extend(2, array(COUNT_TYPECODE, [3, 2**31 - 1]))
    assert doc.counts == counts and doc.starts == starts

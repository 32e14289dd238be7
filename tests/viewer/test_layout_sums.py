"""The row layout's prefix sums (`document.refill`).

Every chunk of counts a layout worker posts, and every laid-out block whose
count changes, refills a `Document`'s sums on the UI thread.
"""

from __future__ import annotations

from array import array
from itertools import accumulate
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcript_view.viewer.document import COUNT_TYPECODE, Document, count_array, refill

counts_lists = st.lists(st.integers(min_value=0, max_value=2**31 - 1), max_size=300)


def plain_sums(counts: list[int], base: int = 0) -> list[int]:
    return list(accumulate(counts, initial=base))


@given(old=counts_lists, new=counts_lists, base=st.integers(0, 2**40), data=st.data())
def test_refilled_sums_are_the_prefix_sums(
    old: list[int], new: list[int], base: int, data: Any
) -> None:
    """Appended blocks, and a change from any block on: the sums of every count."""
    counts = array(COUNT_TYPECODE, old)
    starts = array("q", plain_sums(old, base))
    counts.extend(array(COUNT_TYPECODE, new))
    first = data.draw(st.integers(0, len(old)))  # a block the old sums reach
    refill(starts, counts, first)
    assert starts == array("q", plain_sums(list(counts), base))


def test_a_document_takes_lists_and_arrays_alike() -> None:
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


def test_a_chunk_is_taken_in_as_the_worker_sent_it() -> None:
    """Workers post arrays of the document's own type: `extend` copies them once."""
    doc = Document(None)  # type: ignore[arg-type]
    chunk = array(COUNT_TYPECODE, [3] * 70_000)
    assert doc.extend(0, chunk) and doc.extend(70_000, chunk)
    assert doc.total_rows == 420_000 and doc.starts[70_000] == 210_000
    assert len(doc.starts) == len(doc.counts) + 1 == 140_001


def test_a_chunk_whose_sums_overflow_leaves_the_document_as_it_was() -> None:
    """Found in review: the counts were taken in before the sums failed."""
    doc = Document(None)  # type: ignore[arg-type]
    assert doc.extend(0, array(COUNT_TYPECODE, [4, 5]))
    doc.starts[-1] = 2**63 - 10  # as if the blocks before held nearly every row a sum can
    counts, starts = array(COUNT_TYPECODE, doc.counts), array("q", doc.starts)
    with pytest.raises(OverflowError):
        doc.extend(2, array(COUNT_TYPECODE, [3, 2**31 - 1]))
    assert doc.counts == counts and doc.starts == starts

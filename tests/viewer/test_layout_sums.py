"""The row layout (`viewer.layout.RowLayout`): counts, starts in spans, and the document on it.

Every chunk of counts a layout worker posts, and every laid-out block whose
count changes, changes the layout on the UI thread. The layout keeps each
block's start within its span and each span's start, so a change refills one
span and the spans' starts, not every block after it; these tests hold it to
the plain prefix sums (`plain_starts`) under any mix of appends, changes and
cuts, with spans small enough that every case crosses several.
"""

from __future__ import annotations

from array import array
from itertools import accumulate
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_view.viewer import layout as layout_module
from transcript_view.viewer.document import Document
from transcript_view.viewer.layout import COUNT_TYPECODE, RowLayout, count_array

_count = st.integers(min_value=0, max_value=9)
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("extend"), st.lists(_count, max_size=14)),
        st.tuples(st.just("set"), st.dictionaries(st.integers(0, 60), _count, max_size=4)),
        st.tuples(st.just("truncate"), st.integers(0, 60)),
    ),
    max_size=12,
)


def plain_starts(counts: list[int]) -> list[int]:
    """Every block's first row, then the total, as one pass of sums (the definition)."""
    return list(accumulate(counts, initial=0))


def _check(got: RowLayout, plain: list[int]) -> None:
    starts = plain_starts(plain)
    assert list(got.counts) == plain and got.starts() == starts and got.total == starts[-1]
    for row in range(-1, starts[-1] + 1):
        want = next(
            ((b, row - starts[b]) for b in range(len(plain)) if starts[b] <= row < starts[b + 1]),
            None,
        )
        assert got.locate(row) == want, row


@settings(max_examples=300, deadline=None)
@given(ops=_ops, span=st.sampled_from([1, 2, 3, 5, 4096]))
def test_the_layout_is_the_plain_sums_after_any_changes(ops: list[Any], span: int) -> None:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(layout_module, "SPAN", span)
        got, plain = RowLayout(), []
        for op, arg in ops:
            if op == "extend":
                got.extend(arg)
                plain += arg
            elif op == "set":
                assert got.set(arg) == any(i < len(plain) and plain[i] != n for i, n in arg.items())
                for i, n in arg.items():
                    if i < len(plain):
                        plain[i] = n
            else:
                got.truncate(arg)
                del plain[arg:]
            _check(got, plain)


def test_a_change_refills_its_span_not_every_block_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the layout is for: a count that changes early in a big document touches one
    span's starts (and the spans'), not the million blocks after it."""
    written: list[int] = []
    real = RowLayout._refill_span

    def spy(self: RowLayout, span: int, first: int) -> None:
        written.append(min((span + 1) * layout_module.SPAN, len(self.counts)) - first)
        real(self, span, first)

    got = RowLayout()
    got.extend([1] * 1_000_000)
    monkeypatch.setattr(RowLayout, "_refill_span", spy)
    assert got.set({10: 5})
    assert sum(written) < layout_module.SPAN
    assert got.total == 1_000_004 and got.start(11) == 15 and got.locate(14) == (10, 4)
    written.clear()
    got.extend([2] * 100)  # appending fills the new blocks' span only
    assert sum(written) <= 100 + layout_module.SPAN


def test_a_document_takes_lists_and_arrays_alike() -> None:
    doc = Document(None)  # type: ignore[arg-type]  # the sums need no source
    assert doc.extend(0, [2, 0, 3])
    assert doc.extend(3, array(COUNT_TYPECODE, [1, 4]))
    assert not doc.extend(9, [1])  # a chunk that does not follow on is refused
    assert doc.layout.starts() == [0, 2, 2, 5, 6, 10]
    assert doc.total_rows == 10 and doc.locate(5) == (3, 0)
    doc._set_count(1, 7)
    assert doc.layout.starts() == [0, 2, 9, 12, 13, 17]
    assert doc.set_counts({0: 1, 4: 1})
    assert doc.layout.starts() == [0, 1, 8, 11, 12, 13]
    doc.truncate(2)
    assert doc.extend(2, [5])
    assert doc.layout.starts() == [0, 1, 8, 13]


def test_count_array_keeps_an_array_of_its_type() -> None:
    mine = array(COUNT_TYPECODE, [1, 2])
    assert count_array(mine) is mine
    assert count_array([1, 2]) == mine
    assert count_array(array("q", [1, 2])) == mine


def test_a_chunk_is_taken_in_as_the_worker_sent_it() -> None:
    """Workers post arrays of the layout's own type: `extend` copies them once."""
    doc = Document(None)  # type: ignore[arg-type]
    chunk = array(COUNT_TYPECODE, [3] * 70_000)
    assert doc.extend(0, chunk) and doc.extend(70_000, chunk)
    assert doc.total_rows == 420_000 and doc.block_start(70_000) == 210_000
    assert doc.blocks == 140_000 and doc.block_start(140_000) == 420_000


def test_a_chunk_whose_sums_overflow_leaves_the_document_as_it_was() -> None:
    """Found in review: the counts were taken in before the sums failed."""
    doc = Document(None)  # type: ignore[arg-type]
    assert doc.extend(0, array(COUNT_TYPECODE, [4, 5]))
    doc.layout._spans[-1] = 2**63 - 10  # as if the blocks before held nearly every row
    doc.layout._local[1] = 2**63 - 20
    counts, starts = array(COUNT_TYPECODE, doc.counts), doc.layout.starts()
    with pytest.raises(OverflowError):
        doc.extend(2, array(COUNT_TYPECODE, [3, 2**31 - 1]))
    assert doc.counts == counts and doc.layout.starts()[:2] == starts[:2]


def test_a_change_that_does_not_fit_leaves_the_layout_as_it_was() -> None:
    """Found in review: the counts before the bad one were changed, the starts were not."""
    got = RowLayout()
    got.extend([1, 2, 3])
    with pytest.raises(OverflowError):
        got.set({0: 7, 1: 2**31})
    assert list(got.counts) == [1, 2, 3] and got.starts() == [0, 1, 3, 6]

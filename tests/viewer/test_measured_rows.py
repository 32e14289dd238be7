"""`MeasuredRows`: the exchange of the analysis's row counts with the layout worker.

Headless: the counts arrive on one thread (the UI's) and a worker waits on
another; these hold what it takes, what it refuses, and that a waiting
worker wakes when counts land or stop coming (waited on the event, never a
sleep).
"""

from __future__ import annotations

import threading
from array import array

from transcript_view.viewer.measured_rows import MeasuredRows


def test_counts_are_taken_in_order_at_their_width() -> None:
    m = MeasuredRows()
    assert m.expect(80) == 80 and m.coming
    assert m.take(1, array("i", [2, 3]), 80)
    assert not m.take(5, array("i", [1]), 80), "a gap: another pass's counts"
    assert not m.take(3, array("i", [1]), 90), "another width's"
    assert m.take(3, array("i", [4]), 80)
    assert m.counts(1, 3, 80) == [3, 4]
    assert m.counts(0, 9, 90) is None and m.counts(3, 9, 80) is None


def test_a_block_past_the_counts_waits_until_they_stop_coming() -> None:
    m = MeasuredRows()
    m.expect(80)
    m.take(1, array("i", [1] * 10), 80)
    assert not m.waits(5, 80) and m.waits(10, 80) and not m.waits(10, 81)
    assert m.stop() and not m.coming and not m.waits(10, 80)
    assert not m.stop(), "nothing was coming any more"


def test_expecting_again_keeps_the_counts_only_when_asked_at_the_same_width() -> None:
    m = MeasuredRows()
    m.expect(80)
    m.take(1, array("i", [1, 1]), 80)
    m.expect(80, keep=True)
    assert len(m.rows) == 2
    m.expect(80)
    assert len(m.rows) == 0


def test_counts_expected_before_a_width_are_at_the_first_one() -> None:
    m = MeasuredRows()
    assert m.expect(0) == 0
    m.adopt_width(120)
    assert m.width == 120 and m.take(1, array("i", [3]), 120)
    m.adopt_width(60)
    assert m.width == 120, "only the first width"


def test_a_waiting_worker_wakes_when_counts_land() -> None:
    m = MeasuredRows()
    m.expect(80)
    asleep, woke = threading.Event(), threading.Event()

    def worker() -> None:
        asleep.set()
        m.sleep(0, 80, 60.0)  # a minute: the test would time out, not pass, if never woken
        woke.set()

    thread = threading.Thread(target=worker)
    thread.start()
    assert asleep.wait(10)
    # Whether they land before the worker sleeps (it looks again after clearing the
    # event) or while it sleeps (the event wakes it), it returns.
    m.take(1, array("i", [1]), 80)
    assert woke.wait(10)
    thread.join(10)
    assert not thread.is_alive()


def test_a_worker_that_need_not_wait_does_not() -> None:
    m = MeasuredRows()
    m.sleep(0, 80, 60.0)  # nothing coming: returns at once
    m.expect(80)
    m.take(1, array("i", [1]), 80)
    m.sleep(0, 80, 60.0)  # block 0 is here

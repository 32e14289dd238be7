"""Where a pass's work runs: forked workers, and a pass server for a threaded program.

The viewer runs threads, and forking a threaded process can deadlock the
child, so until issue 11 its analysis ran in one process beside the UI (16 s
of a 64 MiB file's 26 s until idle). `core.parallel` forks workers only from a
single-threaded process, and a threaded program gets a `PassServer` forked
before its threads start. These tests hold that rule, and that what a server
sends back is what the work gives in-process, pointing at the caller's
transcript.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import time
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _analysis_dump import dump
from _random_transcripts import random_transcript

from transcript_view.core import parallel
from transcript_view.core.analysis import Analysis, analyse
from transcript_view.core.transcript import Transcript

BIG = parallel.PARALLEL_BYTES
CORES = min(parallel.os.cpu_count() or 1, parallel.MAX_WORKERS)


@pytest.fixture
def other_thread() -> Iterator[None]:
    """A second thread running, as a UI's are."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@pytest.fixture
def server() -> Iterator[parallel.PassServer]:
    started = parallel.PassServer.start()
    if started is None:
        pytest.skip("no fork here, one core, or threads already running")
    try:
        yield started
    finally:
        started.close()


def analysis_in_server(t: Transcript, *, emit: parallel.Emit) -> Analysis:
    """A job: the analysis, with its progress as events."""
    return analyse(t, lambda done, total: emit("progress", (done, total)))


def where_am_i(t: Transcript, *, emit: parallel.Emit) -> tuple[int, int]:
    """A job: how many threads the server runs and how many workers it would fork."""
    return threading.active_count(), parallel.workers_for(BIG)


@pytest.mark.skipif(CORES < 2, reason="one core: everything stays in-process")
def test_workers_are_forked_only_from_a_single_threaded_process() -> None:
    assert parallel.workers_for(BIG) == CORES
    assert parallel.workers_for(BIG - 1) == 1  # small work stays in-process


@pytest.mark.usefixtures("other_thread")
def test_a_threaded_program_stays_in_process() -> None:
    assert parallel.workers_for(BIG) == 1
    assert parallel.PassServer.start() is None  # too late to fork one safely


def test_a_transcript_pickles_as_its_path_and_index(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(3, 50))
    with Transcript.open(path) as t:
        copy = pickle.loads(pickle.dumps(t))
        try:
            assert copy.path == t.path and copy.artifact_dir == t.artifact_dir
            assert copy.line_count == t.line_count and copy.index_complete
            lines = range(1, t.line_count + 1)
            assert [copy.raw_line(n) for n in lines] == [t.raw_line(n) for n in lines]
        finally:
            copy.close()


def test_the_server_is_single_threaded_and_forks_workers(
    server: parallel.PassServer, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"x\n")
    with Transcript.open(path) as t:
        assert server.run(where_am_i, t) == (1, CORES)


@pytest.mark.parametrize("seed", [2, 11])
def test_an_analysis_from_the_server_is_the_one_made_here(
    server: parallel.PassServer, tmp_path: Path, seed: int
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(random_transcript(seed * 5 + i, 60) for i in range(5)))
    seen: list[tuple[str, Any]] = []
    with Transcript.open(path) as t:
        got = server.run(analysis_in_server, t, on_event=lambda k, v: seen.append((k, v)) or True)
        assert got.transcript is t
        assert dump(got) == dump(analyse(t))
        assert seen[-1] == ("progress", (t.line_count, t.line_count))


def test_a_server_that_is_gone_is_an_os_error(tmp_path: Path) -> None:
    started = parallel.PassServer.start()
    if started is None:
        pytest.skip("no fork here")
    started.close()
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"x\n")
    with Transcript.open(path) as t, pytest.raises(OSError):
        started.run(where_am_i, t)


def still_its_own(t: Transcript, analysis: Analysis, *, emit: parallel.Emit) -> bool:
    """A job: whether `analysis` is the server's own (reads its transcript), not a copy."""
    return analysis.transcript is t


def _requests(server: parallel.PassServer, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What the caller sends the server from now on, request by request."""
    sent: list[Any] = []
    send = server._conn.send
    monkeypatch.setattr(server._conn, "send", lambda obj: sent.append(obj) or send(obj))
    return sent


def test_what_the_server_has_is_not_sent_again(
    server: parallel.PassServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gigabyte's index (20 MB) and analysis (30 MB) are not sent back where they are."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(8, 60))
    sent = _requests(server, monkeypatch)
    with Transcript.open(path) as t:
        got = server.run(analysis_in_server, t)
        assert server.run(still_its_own, t, got) is True
        assert isinstance(sent[0][1], Transcript)
        assert sent[1][1] is parallel._HELD and sent[1][2] == (parallel._PREVIOUS,)
        # Another transcript (or this one grown) is sent whole, and nothing is "previous".
        other = tmp_path / "u.jsonl"
        other.write_bytes(random_transcript(9, 60))
        with Transcript.open(other) as u:
            assert server.run(still_its_own, u, got) is False
            assert isinstance(sent[2][1], Transcript) and sent[2][2][0] is not parallel._PREVIOUS


def lines_of(t: Transcript, analysis: Analysis, *, emit: parallel.Emit) -> int:
    """A job that returns a plain count (as a row count or a file check does)."""
    return analysis.lines


def test_a_count_between_leaves_the_analysis_named(
    server: parallel.PassServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job whose result is an int (the artifact checks after an analysis) does not make
    the server drop the analysis a later job names: it was sent whole again (30 MB)."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(8, 60))
    sent = _requests(server, monkeypatch)
    with Transcript.open(path) as t:
        got = server.run(analysis_in_server, t)
        assert server.run(lines_of, t, got) == got.lines
        assert server.run(still_its_own, t, got) is True
        assert [request[2] for request in sent[1:]] == [(parallel._PREVIOUS,)] * 2


def test_a_ctrl_c_at_the_program_leaves_the_server_working(
    server: parallel.PassServer, tmp_path: Path
) -> None:
    """The terminal sends ctrl+c to the whole process group (in a pager, say)."""
    import os
    import signal

    path = tmp_path / "t.jsonl"
    path.write_bytes(b"x\n")
    with Transcript.open(path) as t:
        assert server.run(where_am_i, t) == (1, CORES)  # running, its handler set
        assert server.pid is not None
        os.kill(server.pid, signal.SIGINT)
        assert server.run(where_am_i, t) == (1, CORES)


class Unloadable:
    """Pickles fine, fails to load: what a result that cannot be rebuilt here does."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_refuse, ())


def _refuse() -> None:
    raise ValueError("not here")


def many_numbers(t: Transcript, n: int, *, emit: parallel.Emit) -> list[int]:
    """A job whose result's pickle is many pieces long."""
    return list(range(n))


def unloadable(t: Transcript, *, emit: parallel.Emit) -> list[Any]:
    """A job whose result pickles in the server and fails to load in the caller."""
    return [list(range(5000)), Unloadable(), list(range(5000))]


def test_a_result_arrives_in_pieces_and_is_loaded_as_they_come(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller never holds a result's whole pickle beside what it becomes (the peak of
    the viewer's memory when a gigabyte's 70 MB analysis landed), and the pieces stay in
    step with the jobs, a result that fails to load included."""
    monkeypatch.setattr(parallel, "RESULT_CHUNK", 512)  # before the fork: the server's too
    started = parallel.PassServer.start()
    if started is None:
        pytest.skip("no fork here, one core, or threads already running")
    received: list[int] = []
    recv_bytes = started._conn.recv_bytes
    monkeypatch.setattr(started._conn, "recv_bytes", lambda: received.append(0) or recv_bytes())
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(8, 20))
    try:
        with Transcript.open(path) as t:
            assert started.run(many_numbers, t, 20_000) == list(range(20_000))
            assert len(received) > 50
            with pytest.raises(ValueError, match="not here"):
                started.run(unloadable, t)
            assert started.run(many_numbers, t, 3) == [0, 1, 2]
    finally:
        started.close()


def ticks(t: Transcript, n: int, *, emit: parallel.Emit) -> int:
    """A job that emits `n` events, a few milliseconds apart (a long artifact check)."""
    for i in range(n):
        time.sleep(0.005)
        emit("tick", i)
    return n


def test_a_long_job_can_give_way_to_a_caller_that_waits(
    server: parallel.PassServer, tmp_path: Path
) -> None:
    """`wanted` says a caller waits for the server; a job that stops for it ends at its
    next event, and the waiting job runs."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(8, 20))
    with Transcript.open(path) as t:
        started, seen = threading.Event(), []

        def on_event(kind: str, value: Any) -> bool:
            started.set()
            seen.append(value)
            return not server.wanted

        long_one: list[Any] = []
        thread = threading.Thread(  # 2,000 events: 10 s, if it never gave way
            target=lambda: long_one.append(server.run(ticks, t, 2_000, on_event=on_event))
        )
        thread.start()
        assert started.wait(10)
        assert not server.wanted
        assert server.run(ticks, t, 3) == 3  # waits for the long job to give way
        thread.join(timeout=30)
        given_way = len(seen)
    assert long_one == [None] and 0 < given_way < 2_000
    assert not server.wanted and not server.busy


def niceness_of_workers(t: Transcript, *, emit: parallel.Emit) -> tuple[int, int]:
    """A job: the server's own niceness and that of a worker it forks."""
    with parallel.pool(1) as workers:
        forked = workers.submit(os.nice, 0).result()
    return os.nice(0), forked


@pytest.mark.skipif(not hasattr(os, "nice"), reason="no niceness here")
def test_the_server_and_its_workers_yield_the_cpu_to_the_program(
    server: parallel.PassServer, tmp_path: Path
) -> None:
    """The UI thread gets the cores first: Textual's first layout waited for them."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"x\n")
    mine = os.nice(0)
    with Transcript.open(path) as t:
        own, forked = server.run(niceness_of_workers, t)
    # Capped at 19, the niceness a process can have at most.
    assert own == forked == min(mine + parallel.SERVER_NICENESS, 19)
    assert os.nice(0) == mine  # this process is as it was


# -- the one runner ------------------------------------------------------------------------------


def _square_or_fail(shared: int, job: int) -> int:
    """A job: `job` squared plus `shared`; job 5 raises."""
    if job == 5:
        raise ValueError(f"job {job} failed")
    return job * job + shared


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("chunk", [1, 3, 4])
def test_ordered_yields_in_order_and_raises_at_the_failing_jobs_place(
    workers: int, chunk: int
) -> None:
    """Found in review: with chunks, the results before a failing job in its chunk
    were lost, and how many came out depended on the worker count."""
    got: list[int] = []
    with pytest.raises(ValueError, match="job 5 failed"):
        for value in parallel.ordered(_square_or_fail, 1, range(20), workers, chunk=chunk):
            got.append(value)
    assert got == [j * j + 1 for j in range(5)]
    assert list(parallel.ordered(_square_or_fail, 0, range(5), workers, chunk=chunk)) == [
        0, 1, 4, 9, 16,
    ]  # fmt: skip


def test_ordered_refuses_work_that_cannot_be_sent_before_any_worker_starts() -> None:
    """Found in review: a lambda made the pool's feeder fail and its shutdown wait forever
    (CPython gh-116685). Run in a child with a time limit, so a hang fails the test."""
    code = (
        "from transcript_view.core import parallel\n"
        "try:\n"
        "    list(parallel.ordered(lambda s, j: j, None, range(10), 2))\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() in ("PicklingError", "AttributeError", "TypeError")


def test_closing_ordered_stops_sending_jobs() -> None:
    """A consumer that stops early: no job past those already sent is run."""
    seen = parallel.ordered(_square_or_fail, 0, range(1000), 2)
    assert [next(seen), next(seen)] == [0, 1]
    seen.close()
    assert list(seen) == []


def big_arrays(t: Transcript, *, emit: parallel.Emit) -> dict[str, Any]:
    """A job whose result holds big arrays (one twice), a small one, and other values."""
    column = array("q", range(100_000))
    return {
        "column": column,
        "again": column,
        "flags": array("b", [1, 2, 3] * 30_000),
        "small": array("q", [7, 8]),
        "words": ["a", "b"],
    }


def test_a_results_big_arrays_travel_apart_from_its_pickle(tmp_path: Path) -> None:
    """A big array travels before the pickle and is made as it arrives: in a pickle it
    came back through bytes the unpickler keeps to the end of the load, every column of a
    gigabyte's analysis in memory twice at once (the viewer's peak)."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(8, 20))
    with Transcript.open(path) as t:
        result = big_arrays(t, emit=lambda kind, value: None)
        data, arrays = parallel._dumps_result(result, t)
        assert [a.typecode for a in arrays] == ["q", "b"]  # each once; the small one inline
        assert len(data) < 1_000  # no column in the pickle
        started = parallel.PassServer.start()
        if started is None:
            pytest.skip("no fork here, one core, or threads already running")
        try:
            got = started.run(big_arrays, t)
        finally:
            started.close()
    assert got == result
    assert got["again"] is got["column"] and type(got["flags"]) is array

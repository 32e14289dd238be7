"""Where a transcript's work runs in other processes: one runner for `--check` and the viewer.

Parsing JSON and folding lines hold the GIL, so a second core only helps from
a second process. Every process pool of the project is one runner, `ordered`:
it maps jobs to results in worker processes, hands the results back in the
jobs' order, keeps at most a few jobs a worker in flight (a fold slower than
the map never holds more than a few batches), and stops when its caller stops
reading (closing the iterator cancels what has not started). A job is a plain
module-level function, `work(shared, job)`: `shared` is what every job of a
run reads (a transcript, a measure, the run's `IdKeys`), given to each
worker once when it starts, and the results are the same whatever the start
method (`START_METHOD`: fork where the system has it; a test runs the
pipeline under fork, forkserver and spawn).

Forking a process that runs other threads can deadlock the child on a lock
one of them held, so only a single-threaded process forks workers. A program
that runs threads (the viewer: Textual's driver and its workers) starts a
`PassServer` first, before any thread: a child forked while nothing else
runs, which stays single-threaded, runs the workers of each pass it is
asked for, and sends the result back, pickled, its big arrays apart (each made
as it arrives, never held twice).

Everything else stays in-process: a small job (starting workers costs more
than it saves), a machine with one core, a worker itself (`--check DIR`
checks whole transcripts in processes already), and a threaded program
without a server.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import enum
import gc
import io
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import weakref
from array import array
from collections import deque
from collections.abc import Callable, Generator, Iterable, Sequence
from itertools import islice
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from transcript_view.core.transcript import Transcript

#: Below this many bytes, work stays in its process: starting workers costs more than it saves.
PARALLEL_BYTES = 32 << 20
#: At most this many worker processes, however many cores.
MAX_WORKERS = 8
#: How worker processes start: fork where the system has it (the fastest start, and the
#: transcript's pages are shared), else the system's default. Results do not depend on it.
START_METHOD = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
#: Jobs a worker has queued at most (`ordered`): enough that none waits between two.
IN_FLIGHT = 2

_serving = False
"""True in a `PassServer`'s process: a child, yet the top of its own workers."""


def workers_for(nbytes: int) -> int:
    """How many processes to share `nbytes` of a transcript's work between (1: stay here)."""
    return 1 if nbytes < PARALLEL_BYTES else worker_count()


def worker_count() -> int:
    """How many processes this process may share work between, whatever its size (1: none).

    One a core, where starting workers is safe: not in a worker (a pass
    server's own excepted), nor, when workers are forked, once this process
    runs threads.
    """
    cores = os.cpu_count() or 1
    if cores < 2:
        return 1
    if multiprocessing.parent_process() is not None and not _serving:
        return 1
    forked = (START_METHOD or multiprocessing.get_start_method()) == "fork"
    if forked and threading.active_count() > 1:
        return 1
    return min(cores, MAX_WORKERS)


def threads_for(nbytes: int) -> int:
    """How many threads to share `nbytes` of GIL-free work between (1: stay on this one).

    For native loops that release the GIL (the line index's `pread` and
    `memchr`): threads need no fork, so a threaded program may use them too.
    """
    if nbytes < PARALLEL_BYTES:  # before the count of cores: a small file asks it a thousand times
        return 1
    cores = os.cpu_count() or 1
    return 1 if cores < 2 else min(cores, MAX_WORKERS)


def pool(
    workers: int,
    initializer: Callable[..., object] | None = None,
    initargs: tuple[Any, ...] = (),
) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of `workers` processes (`START_METHOD`), `initializer(*initargs)` run in each.

    Under fork the arguments are inherited, not pickled; under the other start
    methods they are pickled once a worker.
    """
    return concurrent.futures.ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context(START_METHOD),
        initializer=initializer,
        initargs=initargs,
    )


S = TypeVar("S")
J = TypeVar("J")
R = TypeVar("R")

_shared: Any = None
"""A worker's `shared` (`ordered`): set once, when the worker starts."""


def _adopt(shared: Any, collect: bool) -> None:
    """A worker's start: keep what every job reads.

    Its cyclic garbage collector is off unless `collect`: a map makes
    millions of small objects and no cycles, and every collection walks all
    the live ones; reference counting frees everything it drops.
    """
    global _shared
    _shared = shared
    if not collect:
        gc.disable()


def _run(work: Callable[[Any, Any], Any], jobs: list[Any]) -> list[tuple[bool, Any]]:
    """A worker's share: each job's `(True, result)`, or `(False, what it raised)` and no
    more (so a chunk's results before a failing job still reach the caller, in order)."""
    out: list[tuple[bool, Any]] = []
    for job in jobs:
        try:
            out.append((True, work(_shared, job)))
        except Exception as exc:
            out.append((False, exc))
            break
    return out


def ordered(
    work: Callable[[S, J], R],
    shared: S,
    jobs: Iterable[J],
    workers: int,
    *,
    chunk: int = 1,
    collect: bool = False,
) -> Generator[R, None, None]:
    """`work(shared, job)` of each job, yielded in the jobs' order.

    Here, one job at a time, with `workers` <= 1; else in a pool of `workers`
    processes, each given `shared` once when it starts, with at most
    `IN_FLIGHT` sends a worker queued, so a consumer slower than the workers
    never holds more than a few results. Jobs go `chunk` at a time (one send
    and one reply for many small jobs). `work` must be a module-level function
    (it is sent by name; one that does not pickle is refused here, before any
    worker starts), and a job and its result must pickle. A worker's cyclic
    garbage collector is off unless `collect` (for jobs that make cycles: a
    whole transcript's check).

    Closing the iterator (a consumer that stops reading, a cancel) cancels
    every send that has not started and waits only for those already taken.
    An exception a job raises is raised here, at its place in the order,
    after the results of the jobs before it, whatever `chunk` and `workers` are.
    """
    if workers <= 1:
        for job in jobs:
            yield work(shared, job)
        return
    pickle.dumps(work)  # a lambda or a closure: its TypeError now, not a hung pool later
    todo = iter(jobs)

    def nxt() -> list[J]:
        return list(islice(todo, chunk))

    executor = pool(workers, _adopt, (shared, collect))
    clean = False
    try:
        flight: deque[concurrent.futures.Future[list[tuple[bool, Any]]]] = deque()
        for _ in range(IN_FLIGHT * workers):
            group = nxt()
            if not group:
                break
            flight.append(executor.submit(_run, work, group))
        while flight:
            results = flight.popleft().result()
            group = nxt()
            if group:
                flight.append(executor.submit(_run, work, group))
            for ok, value in results:
                if not ok:
                    raise value
                yield value
        clean = True
    except GeneratorExit:  # closed by its consumer: the pool is whole, wait for what runs
        clean = True
        raise
    finally:
        # After an error the pool may be broken (a job that did not pickle leaves its
        # feeder thread gone, and a waiting shutdown never returns: CPython gh-116685).
        executor.shutdown(wait=clean, cancel_futures=True)


# -- a server for a threaded program ---------------------------------------------------------------

Emit = Callable[[str, Any], None]
"""How a job run by the server reports as it goes: `emit(kind, value)`, sent to the
caller at once (`value` pickled, the job's transcript by name). Raises `Cancelled`
once the caller has asked the job to stop."""
Job = Callable[..., Any]
"""A job the server runs: `job(transcript, *args, emit=emit)`, a module-level
function (sent by name) whose result is pickled back."""
OnEvent = Callable[[str, Any], bool]
"""The caller's side of `Emit`: called on the caller's thread; False asks the job to stop."""

_TRANSCRIPT = "transcript"
_ARRAY = "array"


class Cancelled(Exception):
    """The caller asked the job to stop (raised by `emit` inside the job)."""


#: An array at least this big in a result travels apart from the pickle (`_Pickler`).
APART_BYTES = 1 << 16


class _Pickler(pickle.Pickler):
    """Pickles a result with the job's transcript left out, by name, and (`apart`) its
    big arrays too, by number, for `_send_result` to send before the pickle.

    The program that asked has the transcript open already (and shares it
    with its screen); a result must come back pointing at that one, not at a
    second copy with its own descriptor and a second 20 MB line index.

    An array in a pickle comes back through a `bytes` object that the unpickler
    remembers until the whole result is loaded: every column of a gigabyte's
    analysis (its calls, replay and operations) was in memory twice at the end of
    the load, the viewer's peak. Sent apart, each is made as it arrives and its
    bytes freed at once.
    """

    def __init__(self, file: io.BytesIO, transcript: Transcript, *, apart: bool = False) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._transcript = transcript
        self._apart = apart
        self.arrays: list[array[Any]] = []
        self._numbers: dict[int, int] = {}

    def persistent_id(self, obj: Any) -> object:
        if obj is self._transcript:
            return _TRANSCRIPT
        if self._apart and type(obj) is array and len(obj) * obj.itemsize >= APART_BYTES:
            number = self._numbers.get(id(obj))
            if number is None:
                number = self._numbers[id(obj)] = len(self.arrays)
                self.arrays.append(obj)
            return (_ARRAY, number)
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(
        self,
        file: io.BufferedIOBase,
        transcript: Transcript,
        arrays: Sequence[array[Any]] = (),
    ) -> None:
        super().__init__(file)
        self._transcript = transcript
        self._arrays = arrays

    def persistent_load(self, pid: Any) -> Any:
        if pid == _TRANSCRIPT:
            return self._transcript
        if type(pid) is tuple and len(pid) == 2 and pid[0] == _ARRAY:
            return self._arrays[pid[1]]
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")


def _dumps(value: Any, transcript: Transcript) -> bytes:
    out = io.BytesIO()
    _Pickler(out, transcript).dump(value)
    return out.getvalue()


def _dumps_result(value: Any, transcript: Transcript) -> tuple[bytes, list[array[Any]]]:
    """A result's pickle, and the big arrays it names (sent apart, `_send_result`)."""
    out = io.BytesIO()
    pickler = _Pickler(out, transcript, apart=True)
    pickler.dump(value)
    return out.getvalue(), pickler.arrays


def _loads(data: bytes, transcript: Transcript) -> Any:
    return _Unpickler(io.BytesIO(data), transcript).load()


#: Bytes of a result's pickle per message: the caller loads a result as it arrives,
#: never holding its whole pickle (a gigabyte's analysis is 70 MB) beside what it
#: becomes; that was the peak of the viewer's memory.
RESULT_CHUNK = 1 << 20


def _send_result(conn: Connection, data: bytes, arrays: Sequence[array[Any]] = ()) -> None:
    """A result's big arrays, each its type code then its bytes, and an empty piece; then
    its pickle as `RESULT_CHUNK` pieces, and an empty one."""
    for column in arrays:
        conn.send_bytes(column.typecode.encode("ascii"))
        conn.send_bytes(memoryview(column))
    conn.send_bytes(b"")
    view = memoryview(data)
    for start in range(0, len(view), RESULT_CHUNK):
        conn.send_bytes(view[start : start + RESULT_CHUNK])
    conn.send_bytes(b"")


class _Pieces(io.RawIOBase):
    """The pieces `_send_result` sends, read as one stream (until the empty piece)."""

    def __init__(self, conn: Connection) -> None:
        super().__init__()
        self._conn = conn
        self._piece = memoryview(b"")
        self.ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._piece and not self.ended:
            data = self._conn.recv_bytes()
            self._piece = memoryview(data)
            self.ended = not data
        n = min(len(buffer), len(self._piece))
        buffer[:n] = self._piece[:n]
        self._piece = self._piece[n:]
        return n


def _load_result(conn: Connection, transcript: Transcript) -> Any:
    """Load a result from its pieces as they arrive, then read past what is left
    (always: a load that fails must not leave pieces for the next job to read)."""
    arrays: list[array[Any]] = []
    while True:  # each array made as it comes, its bytes freed at once
        code = conn.recv_bytes()
        if not code:
            break
        column = array(code.decode("ascii"))
        column.frombytes(conn.recv_bytes())
        arrays.append(column)
    pieces = _Pieces(conn)
    try:
        return _Unpickler(io.BufferedReader(pieces, 1 << 16), transcript, arrays).load()
    finally:
        while not pieces.ended:
            pieces.readinto(bytearray(RESULT_CHUNK))


class PassFailed(Exception):
    """The server's job raised: its type and message, as text (the traceback stays there)."""


class _Kept(enum.Enum):
    """What a request names instead of sending it again (pickled by name)."""

    TRANSCRIPT = "the transcript the server was sent last, its index unchanged"
    PREVIOUS = "the last result the server sent back that can be named again"


_HELD, _PREVIOUS = _Kept.TRANSCRIPT, _Kept.PREVIOUS


class _Held:
    """What the server keeps between jobs: the last transcript and the last result
    that can be named again (an analysis, not the count of a job after it).

    A gigabyte's line index is 20 MB and its analysis 30 MB pickled; a view
    laid out after its analysis would send both back to where they came from.
    """

    transcript: Transcript | None = None
    previous: Any = None


#: The pass server's niceness over the program's: how much of a busy machine it yields.
SERVER_NICENESS = 10


def _yield_cpu() -> None:
    """Give the program's UI thread the cores first, whenever it wants them.

    The server and its workers (forked from it, so as nice) are the viewer's
    background work, and with every core busy with them the UI thread got a
    share of one: Textual's first full layout of the screen, a repaint of
    the view, took two or three times as long, and a key pressed meanwhile
    waited as long. Nice 10 against the UI's 0 gives it about ten times their
    weight in the kernel's scheduler; while it is idle they still have every
    core (a machine where niceness cannot be raised runs them as before).
    """
    with contextlib.suppress(AttributeError, OSError):  # no os.nice (Windows), or refused
        os.nice(SERVER_NICENESS)


def _serve(conn: Connection) -> None:
    """The server's loop: one job at a time until the program closes the connection."""
    global _serving
    _serving = True
    # A ctrl+c typed at the program (in a pager it suspended for, say) reaches the
    # whole process group: the program decides what it means, the server goes on.
    # And the program's terminal is not the server's to write on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (for the process's life)
    _yield_cpu()
    held = _Held()
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request != "cancel":  # a cancel for a job that ended before it arrived
            _serve_one(conn, held, *request)


def _serve_one(
    conn: Connection, held: _Held, job: Job, sent: Transcript | _Kept, args: tuple[Any, ...]
) -> None:
    """Run one job, sending its events as they come and then its result (or why not)."""
    if isinstance(sent, _Kept):
        transcript = held.transcript
        assert sent is _HELD and transcript is not None
    else:
        if held.transcript is not None:
            held.transcript.close()
        held.transcript, held.previous, transcript = sent, None, sent
    args = tuple(held.previous if a is _PREVIOUS else a for a in args)

    def emit(kind: str, value: Any) -> None:
        conn.send(("event", kind, _dumps(value, transcript)))
        while conn.poll():
            if conn.recv() == "cancel":
                raise Cancelled

    try:
        result = job(transcript, *args, emit=emit)
        data, arrays = _dumps_result(result, transcript)
        conn.send(("done", None))
        _send_result(conn, data, arrays)
        if _weak(result) is not None:  # as the caller keeps it (`PassServer.run`)
            held.previous = result
    except Cancelled:
        conn.send(("cancelled", None))
    except Exception as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))


class PassServer:
    """A process forked before the program's threads, that runs passes with the cores.

    Start it first thing (`start`): it is a fork of the program as it is
    then, so it must be started while no other thread runs. It runs one job
    at a time; a caller on another thread waits for it (`run`).
    """

    def __init__(self, conn: Connection, process: multiprocessing.process.BaseProcess) -> None:
        self._conn = conn
        self._process = process
        self._lock = threading.Lock()
        self._sent: tuple[weakref.ref[Transcript], int, int] | None = None
        """The transcript the server holds: (it, its lines, its resets) when sent."""
        self._previous: weakref.ref[Any] | None = None
        """The result the server sent back last (it keeps its own copy)."""
        self._waiting = 0
        self._waiting_lock = threading.Lock()

    @classmethod
    def start(cls) -> PassServer | None:
        """Fork the server now; None where that is not safe or not possible.

        Not safe once another thread runs (the fork could inherit a held lock),
        nor useful with one core.
        """
        if (os.cpu_count() or 1) < 2 or "fork" not in multiprocessing.get_all_start_methods():
            return None
        if threading.active_count() > 1:
            return None
        context = multiprocessing.get_context("fork")
        ours, theirs = context.Pipe()
        # Not a daemon: a daemon may not fork workers. It ends when its
        # connection closes: at exit (below), or when this process dies.
        process = context.Process(target=_serve, args=(theirs,), name="passes")
        process.start()
        theirs.close()
        server = cls(ours, process)
        atexit.register(server.close)
        return server

    @property
    def pid(self) -> int | None:
        """The server's process id (what a benchmark reads its memory by)."""
        return self._process.pid

    @property
    def busy(self) -> bool:
        """Whether a job is running (a caller that could work itself need not wait)."""
        return self._lock.locked()

    @property
    def wanted(self) -> bool:
        """Whether another caller waits for the job running now to end.

        A long job whose work could go on elsewhere (the viewer's artifact
        checks) reads this in its `on_event` and stops, so a pass that waits
        (a followed file's reset) waits for the job's next event (the files
        being hashed, then a batch at most), not the whole job.
        """
        return self._waiting > 0

    def run(
        self, job: Job, transcript: Transcript, *args: Any, on_event: OnEvent | None = None
    ) -> Any:
        """`job(transcript, *args, emit=...)` in the server; its result, here.

        The transcript is sent as its path and line index (the server reopens
        it read-only); values come back with that transcript replaced by this
        one. `on_event` gets each emitted event on the caller's thread, and
        stops the job by returning False (then None is returned).

        Raises:
            PassFailed: the job raised in the server.
            OSError: the server is gone.
        """
        with self._waiting_lock:
            self._waiting += 1
        waiting = True
        try:
            with self._lock:
                with self._waiting_lock:
                    self._waiting -= 1
                waiting = False
                return self._exchange(job, transcript, args, on_event)
        finally:
            if waiting:  # interrupted before the lock was ours
                with self._waiting_lock:
                    self._waiting -= 1

    def _exchange(
        self, job: Job, transcript: Transcript, args: tuple[Any, ...], on_event: OnEvent | None
    ) -> Any:
        """`run`'s conversation with the server, the lock held."""
        try:
            self._conn.send((job, self._transcript_to_send(transcript), self._args(args)))
            while True:
                kind, *rest = self._conn.recv()
                if kind == "event":
                    name, data = rest
                    if on_event is not None and not on_event(name, _loads(data, transcript)):
                        self._conn.send("cancel")
                    continue
                if kind == "failed":
                    raise PassFailed(rest[0])
                if kind == "cancelled":
                    return None
                result = _load_result(self._conn, transcript)
                # A value that cannot be named again (an int, a list: a count
                # or a check's result) leaves the one before it to be named.
                kept = _weak(result)
                if kept is not None:
                    self._previous = kept
                return result
        except EOFError:
            raise OSError("the pass server stopped") from None

    def _transcript_to_send(self, transcript: Transcript) -> Transcript | _Kept:
        """`_HELD` if the server has this transcript, index and all; else the transcript."""
        sent = self._sent
        state = (transcript.line_count, transcript.resets)
        if sent is not None and sent[0]() is transcript and sent[1:] == state:
            return _HELD
        self._sent = (weakref.ref(transcript), *state)
        self._previous = None
        return transcript

    def _args(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        previous = self._previous() if self._previous is not None else None
        if previous is None:
            return args
        return tuple(_PREVIOUS if a is previous else a for a in args)

    def close(self) -> None:
        """Stop the server (it ends when its connection closes); idempotent."""
        if self._conn.closed:
            return
        self._conn.close()
        self._process.join(timeout=1)
        if self._process.is_alive():
            self._process.terminate()


def _weak(value: Any) -> weakref.ref[Any] | None:
    try:
        return weakref.ref(value)
    except TypeError:  # no weak references to it (a list, an int): never sent back
        return None


_server: PassServer | None = None


def start_server() -> PassServer | None:
    """Start this program's pass server (once; see `PassServer.start`)."""
    global _server
    if _server is None:
        _server = PassServer.start()
    return _server


def server() -> PassServer | None:
    """This program's pass server, if `start_server` started one."""
    return _server

"""The viewer's work that runs in the pass server (`core.parallel.PassServer`), not beside the UI.

Parsing and laying out a big transcript hold the GIL for seconds; in the
UI's process that starves the event loop and every other worker (hashing 8
small artifacts took 8 s behind a layout thread). The server is a fork of
the viewer made before Textual started, so it has the viewer's modules and
forks workers of its own on every core. These are the jobs it is sent: plain
module-level functions (sent by name) that report through `emit` and return
what the screen needs. Their results are what the in-process paths compute:
the same reader (`analyse_as`) and the same builders (`FileSource`,
`ModelSource`, counting only).
"""

from __future__ import annotations

import contextlib
import os
import time
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from transcript_view.core import parallel
from transcript_view.core.analysis import Analysis, analyse
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.formats.readers import analyse_as
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import (
    EDGE_BYTES,
    SMALL_FILE_BYTES,
    FileCheck,
    iter_checks,
)
from transcript_view.viewer.blocks import BlockSource, FileSource, ModelSource
from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion
from transcript_view.viewer.document import layout_counts
from transcript_view.viewer.measure import BlockRows

#: Blocks one worker counts per task (a few tens of milliseconds of work).
COUNT_STEP = 2048
#: Seconds between two batches of file checks while files are being hashed.
CHECK_POST_SECONDS = 0.1


def analysis_job(
    transcript: Transcript, fmt: Format, width: int = 0, *, emit: parallel.Emit
) -> Analysis | SessionAnalysis:
    """The format's pass; `progress` and `found` events on the way.

    With a `width`, the pass also counts each line's rows in the file view
    at that width where it maps the line (`viewer.measure.BlockRows`, the
    builder's count): `rows` events of `(first line, counts)`, in file order,
    so the screen need not parse every line a second time to lay it out.
    """

    def progress(done: int, total: int) -> None:
        emit("progress", (done, total))

    def found(markers: list[int], problems: list[int]) -> None:
        emit("found", (markers, problems))

    def measured(first: int, rows: array[int]) -> None:
        emit("rows", (first, rows))

    measure = BlockRows(width, fmt) if width > 0 else None
    analysis: Analysis | SessionAnalysis
    if fmt is Format.REFERENCE:
        reference = analyse(transcript, progress, found=found, measure=measure, measured=measured)
        reference.operations.index_lines()  # here, not on the screen's first draw
        reference.replay.index_entries()  # nor on its first badge change
        analysis = reference
    else:
        analysis = analyse_as(
            transcript, fmt, progress, found=found, measure=measure, measured=measured
        )
    analysis.calls.narrow()  # kept by the screen for as long as it is open
    return analysis


def _never() -> bool:
    return False


def _count(source: BlockSource, run: tuple[int, int]) -> list[int]:
    """A worker's job: the row counts of blocks [first, stop) of the view `source` lays out."""
    return layout_counts(source, run[0], run[1], _never)


def count_job(
    transcript: Transcript,
    view: str,
    fmt: Format,
    width: int,
    analysis: Analysis | SessionAnalysis | None,
    checks: Mapping[str, FileCheck],
    start: int,
    *,
    emit: parallel.Emit,
) -> int:
    """Count the rows of blocks `start…` of a view at `width`: `counts` events, in order.

    The context is the screen's when it asked: `analysis` adopted with the
    file `checks` recorded so far, nothing expanded, no artifact open (the
    view counts in-process when it has either). A block whose look changes
    later (a badge, a finding) is rebuilt by the screen, as it is after an
    in-process layout. Returns where counting
    stopped (the blocks the source had).
    """
    state = AnalysisState()
    if analysis is not None:
        state.adopt(analysis, checks)
    ctx = BlockContext(state, {}, Expansion(), width=width, format=fmt)
    source: BlockSource
    if view == "model":
        source = ModelSource(transcript, ctx)
    else:
        file_source = FileSource(transcript, ctx)
        file_source.index_complete = True
        source = file_source
    stop = source.available()
    runs = [(i, min(i + COUNT_STEP, stop)) for i in range(start, stop, COUNT_STEP)]
    workers = parallel.workers_for(transcript.indexed_bytes) if len(runs) > 1 else 1
    counted = parallel.ordered(_count, source, runs, workers)
    try:
        for run, counts in zip(runs, counted, strict=True):
            emit("counts", (run[0], counts))  # raises Cancelled when asked to stop
    finally:
        counted.close()  # a cancel stops the workers' queued runs too
    return stop


@dataclass(frozen=True, slots=True)
class FileJob:
    """The artifact files to check and what to keep of each: all the hashing needs.

    No analysis: this is what is sent to the pass server (`verify_job`), a few
    hundred kilobytes for thousands of files.
    """

    directory: Path
    names: Sequence[str]
    uncounted: frozenset[str] = frozenset()
    """Files only a settle names: the ledger needs to know they exist, not their count."""
    utf16: frozenset[str] = frozenset()
    """Files whose UTF-16 length a Claude Code size names."""
    edges: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """The head and tail bytes to read of each file (`VerificationLedger.edge_bytes`)."""
    needs: Mapping[str, tuple[tuple[str, int], ...]] | None = None
    """The ends whose digests each check is cut to once made (`ledger.kept_ends`), as
    the ledger would keep it; None (another format's sidecars): checks come whole."""

    def counts(self, name: str) -> tuple[bool, bool]:
        """Whether to count the file's graphemes, and its UTF-16 units."""
        return name not in self.uncounted, name in self.utf16

    def edges_of(self, name: str) -> tuple[int, int]:
        """The head and tail bytes to keep of the file."""
        return self.edges.get(name, (EDGE_BYTES, EDGE_BYTES))

    def batches(self, start: int = 0, workers: int = 1) -> Iterator[tuple[list[FileCheck], int]]:
        """The checks of `names[start:]`, in order, as (checks, files done) by time.

        A batch at most every `CHECK_POST_SECONDS` (the first at once, the last
        when all are done), so the badges turn as files are hashed without a
        message a file.
        """
        names = self.names[start:]
        checks = iter_checks(
            self.directory,
            names,
            workers=workers,
            edges=self.edges_of,
            counts=self.counts,
            keep=self.needs,
        )
        batch: list[FileCheck] = []
        posted = float("-inf")
        for done, check in enumerate(checks, start + 1):
            batch.append(check)
            now = time.monotonic()
            if done == len(self.names) or now - posted >= CHECK_POST_SECONDS:
                yield batch, done
                batch, posted = [], now


def verify_job(transcript: Transcript, job: FileJob, start: int, *, emit: parallel.Emit) -> int:
    """Check `job`'s files from `start` on: `checks` events of (checks, done).

    In the viewer's process the checks shared one core with the UI, a layout
    and the badges they turn, and a thread that waits for the GIL after every
    read took three times as long (5,000 files of 64 KiB: 1.6 s against 0.5 s
    on its own). Files of a megabyte and more on average are shared between
    the server's workers; smaller ones are checked in the server itself, as
    sending each check's ends back from a worker cost more than it saved
    (those 5,000 files: 0.75-0.98 s in two workers, 0.56-0.85 s in one).
    Returns how many files were checked in all.
    """
    names = job.names[start:]
    total = 0
    for name in names:
        with contextlib.suppress(OSError):
            total += os.stat(job.directory / name, follow_symlinks=False).st_size
    big = bool(names) and total >= len(names) * SMALL_FILE_BYTES
    done = start
    for batch, done in job.batches(start, parallel.worker_count() if big else 1):
        emit("checks", (batch, done))
    return done

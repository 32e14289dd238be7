"""A session transcript's lines mapped in batches, in worker processes, for a fold in file order.

The Claude Code and Codex passes are a map and a fold, as the reference pass
is (`core.analysis`): a format's map reads a run of lines and keeps what the
lines say by themselves (their markers, their problems, what they name) in a
batch of plain data, and its fold takes the batches in file order and joins
what needs earlier lines. Mapping needs nothing but the lines, so a big file's
runs are mapped in worker processes at once (`core.parallel.ordered`; how many,
`core.parallel` decides). Each map decodes a line once, into its format's shape
(`core.decoding`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from enum import Enum
from functools import partial
from typing import Any, Protocol, TypeVar

from transcript_view.core import parallel
from transcript_view.core.decoding import Measure, Measured
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.found import Found, FoundSoFar
from transcript_view.core.keys import IdKeys
from transcript_view.core.transcript import Transcript

B = TypeVar("B")

Mapper = Callable[[Transcript, int, int, int, IdKeys], Any]
"""A format's map: `(transcript, first line, last line, last content line, keys) -> batch`
(`keys`: the pass's, for the ids a batch indexes; see `LineIndex`). A module-level
function (or a `partial` of one): it is sent to worker processes by name."""


class Later(Enum):
    """A value a map cannot know, left for the fold (which has every earlier line)."""

    LATER = "resolved by the fold"


LATER = Later.LATER


def last_content_line(transcript: Transcript) -> int:
    """The last line that is not blank: a bad line there is a torn tail, not a malformed one.

    As `read_lines` decides it (a line whose first 4 KiB are white space is blank).
    """
    last = transcript.line_count
    while last > 0 and not transcript.raw_line(last, 4096).strip():
        last -= 1
    return last


Shared = tuple[Transcript, Mapper, int, IdKeys]
"""What every batch of a pass reads (`parallel.ordered`'s `shared`): the transcript, the
map, the last content line and the pass's keys."""


def _run(shared: Shared, run: tuple[int, int]) -> Any:
    transcript, mapper, last_content, keys = shared
    return mapper(transcript, run[0], run[1], last_content, keys)


def mapped(
    transcript: Transcript,
    mapper: Callable[[Transcript, int, int, int, IdKeys], B],
    keys: IdKeys,
    workers: int | None = None,
) -> Iterator[B]:
    """Every run of lines mapped by `mapper`, in file order: here, or in `workers` processes.

    Runs are `Transcript.line_ranges` (a few MiB each). `workers` defaults to
    `core.parallel.workers_for` the file's size; `parallel.ordered` keeps only
    a few runs a worker in flight, so a fold slower than the map never holds
    more than a few batches.
    """
    last_content = last_content_line(transcript)
    runs = transcript.line_ranges()
    n = parallel.workers_for(transcript.indexed_bytes) if workers is None else workers
    if len(runs) < 2:
        n = 1
    yield from parallel.ordered(_run, (transcript, mapper, last_content, keys), runs, n)


class _Batch(Protocol):
    @property
    def last(self) -> int: ...


Folded = TypeVar("Folded", bound=_Batch)


def fold_mapped(
    transcript: Transcript,
    mapper: Callable[[Transcript, int, int, int, IdKeys], Folded],
    keys: IdKeys,
    absorb: Callable[[Folded], None],
    analysis: SessionAnalysis,
    progress: Callable[[int, int], None] | None,
    workers: int | None,
    found: Found | None,
    measure: Measure | None = None,
    measured: Measured | None = None,
) -> None:
    """A format pass's reading: each batch `mapped`, in file order, into `absorb`.

    After each batch, `found` is told the markers and bad lines it added to
    `analysis` and `progress` how far the pass got (both may be None). With
    `measure`, each line is also measured where its batch is mapped, and
    `measured` told each batch's measures before the batch is absorbed.
    """
    total = transcript.line_count
    told = FoundSoFar(found)
    pairs: Iterator[tuple[Folded, int, array[int] | None]]
    if measure is None:
        pairs = ((batch, 0, None) for batch in mapped(transcript, mapper, keys, workers))
    else:
        pairs = mapped(transcript, partial(_map_measured, mapper, measure), keys, workers)
    for batch, first, measures in pairs:
        if measures is not None and measured is not None:
            measured(first, measures)
        absorb(batch)
        told.tell(analysis.sites, analysis.problems)
        if progress is not None:
            progress(batch.last, total)


def _map_measured(
    mapper: Callable[[Transcript, int, int, int, IdKeys], Folded],
    measure: Measure,
    transcript: Transcript,
    first: int,
    last: int,
    last_content: int,
    keys: IdKeys,
) -> tuple[Folded, int, array[int]]:
    """`mapper`'s batch of lines `first` to `last`, and `measure` of each of those lines.

    The lines are read a second time for the measure, in the same process and
    a few megabytes at a time (the page cache has them): a mapper need not know
    about it, and reading is a small part of either.
    """
    batch = mapper(transcript, first, last, last_content, keys)
    measures = array("i")
    if first > 1:
        measure(transcript.raw_line(first - 1))  # what it says of the next: see `Measure`
    for _, _, items in transcript.raw_chunks(first, last):
        measures.extend(map(measure, items))
    return batch, first, measures


class LineIndex:
    """The lines that hold each string, by the string's key: arrays, not a dict of strings.

    A pass needs to find a few strings again at its end (a branch's parent
    uuid, a replaced result's tool_use id), among a million lines' worth; a dict
    of them all would be a hundred megabytes per gigabyte. Each batch adds two
    arrays (the keys, and the line of each), and `lines_of` finds a set of keys
    in all of them at once, at C speed. A key can be two strings' (almost
    never: `core.keys`), so a caller checks the line it finds by reading it.

    The keys are the pass's `IdKeys`, which every process mapping its lines
    is given: a batch mapped in a worker has the same.
    """

    __slots__ = ("_runs",)

    def __init__(self) -> None:
        """An empty index."""
        self._runs: list[tuple[array[int], array[int]]] = []

    def add(self, keys: array[int], lines: array[int]) -> None:
        """Add a batch's keys and, in the same order, the line holding each."""
        if keys:
            self._runs.append((keys, lines))

    def lines_of(self, keys: set[int]) -> dict[int, list[int]]:
        """Every line with each of `keys` (those that have any), in ascending order."""
        found: dict[int, list[int]] = {}
        if not keys:
            return found
        for run_keys, run_lines in self._runs:
            for key in keys.intersection(run_keys):
                at = run_keys.index(key)
                while True:
                    found.setdefault(key, []).append(run_lines[at])
                    try:
                        at = run_keys.index(key, at + 1)
                    except ValueError:
                        break
        for lines in found.values():
            lines.sort()
        return found

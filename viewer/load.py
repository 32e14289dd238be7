"""How far loading a transcript has got: one explicit state instead of a handful of flags.

Loading runs index → analysis → hashing in workers, and follow mode starts
more analyses and polls while they run. Which step is on, whether an analysis
pass (or a poll) is in flight, and whether another pass was asked for
meanwhile, are each one enum value held by `LoadState`; its transitions are
the only code that changes them, and the header's phase text is read off it.
Headless: a test drives it without an App.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Phase(Enum):
    """The step of loading in progress (what the header shows beside its bar)."""

    DECOMPRESSING = "decompressing"
    """A compressed transcript is decompressed into its private copy, and indexed as it goes."""
    EXPORTING = "reading its rows"
    """An OpenCode session's rows are read into its private copy, and indexed as they come."""
    INDEXING = "indexing"
    READING = "reading"
    CHECKING = "checking artifacts"
    READY = "ready"
    FAILED = "failed"
    """The transcript could not be opened, or the analysis raised: the file view only."""

    @property
    def label(self) -> str:
        """The header's phase text: empty once nothing is in progress."""
        return "" if self in (Phase.READY, Phase.FAILED) else self.value


class Run(Enum):
    """One kind of worker that must not run twice at once (an analysis pass, a poll)."""

    IDLE = "idle"
    RUNNING = "running"
    STALE = "running, and another run was asked for"


@dataclass
class LoadState:
    """The load's phase and its analysis pass and follow poll.

    An analysis pass must never overlap another (the follow analyser is not
    thread-safe), and a poll never another (two appends' counts would mix):
    a request while one runs is remembered (`STALE`) or ignored, not started.
    """

    phase: Phase = Phase.INDEXING
    analysis: Run = Run.IDLE
    poll: Run = Run.IDLE

    def index_grew(self, decompressing: bool, exported: bool = False) -> None:
        """The index took a step: still decompressing a compressed transcript (or reading an
        OpenCode session's rows: `exported`), or indexing."""
        if self.phase in (Phase.DECOMPRESSING, Phase.EXPORTING, Phase.INDEXING):
            copying = Phase.EXPORTING if exported else Phase.DECOMPRESSING
            self.phase = copying if decompressing else Phase.INDEXING

    def failed_to_open(self) -> None:
        """The transcript cannot be read at all."""
        self.phase = Phase.FAILED

    def want_analysis(self, first: bool) -> bool:
        """An analysis pass is wanted; True if one is to start now.

        `first`: no analysis has landed yet, so the header shows it reading.
        """
        if self.analysis is not Run.IDLE:
            self.analysis = Run.STALE
            return False
        self.analysis = Run.RUNNING
        if first:
            self.phase = Phase.READING
        return True

    def analysis_landed(self) -> bool:
        """A pass delivered its analysis (hashing starts); True if another is to start now."""
        again = self.analysis is Run.STALE
        self.analysis = Run.RUNNING if again else Run.IDLE
        self.phase = Phase.CHECKING
        return again

    def analysis_failed(self) -> None:
        """A pass (or a follow poll) raised: nothing more is in progress."""
        self.analysis = Run.IDLE
        self.poll = Run.IDLE
        self.phase = Phase.FAILED

    def checked(self) -> None:
        """Every wanted artifact is hashed and the directory listed."""
        if self.phase is Phase.CHECKING:
            self.phase = Phase.READY

    def want_poll(self) -> bool:
        """The follow timer fired; True if a poll is to start (none is in flight)."""
        if self.poll is not Run.IDLE:
            return False
        self.poll = Run.RUNNING
        return True

    def polled(self) -> None:
        """A poll delivered what was appended."""
        self.poll = Run.IDLE


@dataclass
class FoundSoFar:
    """Lines the first analysis has reported before it is done (`LinesFound`).

    A person who sees a marker on the first screen presses `n` at once; on a
    big file the analysis takes seconds, so `n` and `p` step through what the
    batches read so far have found instead of saying nothing is known.
    """

    markers: set[int] = field(default_factory=set)
    problems: set[int] = field(default_factory=set)

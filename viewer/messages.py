"""Messages that background workers post back to the transcript screen.

Workers run file I/O in threads and must never touch a widget; everything they
learn travels to the UI thread as one of these small messages, posted to the
widget that owns the data (the screen for the index, analysis, hashing,
artifacts and follow mode; the `TranscriptView` for layout, prefetch and
search), whose handlers are the only code that changes what is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from transcript_view.core.analysis import Analysis
from transcript_view.core.filelines import FileLines
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.records import SiteKey
from transcript_view.core.verification import FileCheck, OrphanFile
from transcript_view.viewer.rows import Block


@dataclass
class IndexProgress(Message):
    """The line index grew: how far it got and whether it reached the end."""

    lines: int
    done_bytes: int
    total_bytes: int
    complete: bool


@dataclass
class LayoutChunk(Message):
    """Row counts for a run of blocks, laid out in a worker.

    `generation` ties the chunk to one layout pass: a resize or view switch
    starts a new pass, and chunks of an older one are dropped.
    """

    view: str
    generation: int
    start: int
    counts: list[int]
    done: bool = False


@dataclass
class Progress(Message):
    """A background phase moved on (`lines`: the analysis pass)."""

    phase: str
    done: int
    total: int


@dataclass
class BlocksBuilt(Message):
    """Blocks around the viewport, built ahead of scrolling by a prefetch worker."""

    view: str
    epoch: int
    blocks: dict[int, Block]


@dataclass
class AnalysisReady(Message):
    """The one-pass analysis (operations, markers, replay) is done."""

    analysis: Analysis | SessionAnalysis


@dataclass
class AnalysisFailed(Message):
    """The analysis pass raised; shown to the user, the file view stays usable."""

    error: str


@dataclass
class ArtifactChecked(Message):
    """One artifact file was hashed (or found missing or unreadable)."""

    name: str
    check: FileCheck
    done: int
    total: int


@dataclass
class OrphansFound(Message):
    """The artifact directory was listed: files no line names."""

    orphans: list[OrphanFile]


@dataclass
class ArtifactOpened(Message):
    """An artifact's first rows are indexed: it can be shown inline under its marker.

    Indexing goes on in the same worker; `ArtifactGrew` follows as rows are found.
    """

    site_key: SiteKey
    lines: FileLines
    check: FileCheck


@dataclass
class ArtifactGrew(Message):
    """An open artifact's index reached further: `rows` rows are known now."""

    site_key: SiteKey
    lines: FileLines
    rows: int


@dataclass
class ArtifactOpenFailed(Message):
    """An artifact could not be opened inline (missing, unreadable, unsafe)."""

    site_key: SiteKey
    reason: str


@dataclass
class Appended(Message):
    """Follow mode: the transcript grew by `new_lines` lines."""

    new_lines: int


@dataclass
class SearchDone(Message):
    """Every block whose text contains the query, in document order."""

    view: str
    query: str
    blocks: list[int]

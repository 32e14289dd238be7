"""Messages that background workers post back to the transcript screen.

Workers run file I/O in threads and must never touch a widget; everything they
learn travels to the UI thread as one of these small messages, posted to the
widget that owns the data (the screen for the index, analysis, hashing,
artifacts and follow mode; the `TranscriptView` for layout, prefetch and
search), whose handlers are the only code that changes what is shown.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from textual.message import Message

from transcript_view.core.analysis import Analysis
from transcript_view.core.filelines import FileLines
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.records import SiteKey
from transcript_view.core.verification import FileCheck, OrphanFile
from transcript_view.viewer.fills import Fills
from transcript_view.viewer.rows import Block


@dataclass
class IndexProgress(Message):
    """The line index grew: how far it got and whether it reached the end.

    While a compressed transcript is decompressed (`decompressing`), the bytes
    done and in all are the compressed file's, and `size_bytes` how much of it
    is decompressed so far.
    """

    lines: int
    done_bytes: int
    total_bytes: int
    complete: bool
    decompressing: bool = False
    size_bytes: int = 0


@dataclass
class LayoutChunk(Message):
    """Row counts for a run of blocks, laid out in a worker.

    `generation` ties the chunk to one layout pass: a resize or view switch
    starts a new pass, and chunks of an older one are dropped. Workers send
    `counts` as an `array(COUNT_TYPECODE)`, which the document takes in as
    one copy (`Document.extend`).
    """

    view: str
    generation: int
    start: int
    counts: Sequence[int]
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
class LinesFound(Message):
    """What the analysis has found so far, before it is done: `n` and `p` step through it.

    The lines of the markers and of the line problems of the batches read
    since the last such message (a line may come twice if the pass restarts).
    """

    markers: list[int]
    problems: list[int]


@dataclass
class RowsMeasured(Message):
    """The file view's row counts of a batch of lines, from the analysis pass.

    `rows[i]` is line `first + i`'s count at `width` in the plain look
    (`viewer.measure.BlockRows`; -1: the view builds that line to count it).
    Batches come in file order, each line once.
    """

    first: int
    rows: array[int]
    width: int


@dataclass
class FillsMade(Message):
    """The context chart's fills of an analysis's calls, made for the context screen."""

    analysis: Analysis | SessionAnalysis
    fills: Fills


@dataclass
class AnalysisFailed(Message):
    """The analysis pass raised; shown to the user, the file view stays usable."""

    error: str


@dataclass
class ArtifactsChecked(Message):
    """Artifact files hashed since the last such message (or found missing or unreadable).

    Batched by time: thousands of small artifacts hash in a second, and a
    message each (a ledger update, a header repaint, a block rebuilt) kept the
    UI busy for longer than the hashing took.
    """

    checks: list[FileCheck]
    done: int
    total: int
    analysis: Analysis | SessionAnalysis | None = None
    """The analysis whose ledger asked for them: a batch that lands after a newer one
    was adopted is dropped (cut to the old ledger's ends, it could say less than the
    new one compares; the new ledger's job checks those files again)."""


@dataclass
class Recounted(Message):
    """Row counts of blocks whose look changed, counted off the UI thread.

    `request` is the view's recount request the counts answer (a block asked
    for again later takes only the later answer).
    """

    view: str
    generation: int
    request: int
    counts: dict[int, int]


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
    token: int = 0
    """Which search of the view this is (`TranscriptView.search` counts them): a newer
    one, or the same query searched again, supersedes it."""


@dataclass
class SearchProgress(Message):
    """A search is `done` bytes into the `total` it reads; `blocks` are the hits found
    since the last such message (in document order). A few a second at most."""

    view: str
    query: str
    token: int
    done: int
    total: int
    blocks: list[int]

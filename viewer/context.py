"""What block builders read, split by who writes it.

Layout, prefetch and search workers build blocks in threads while the UI
thread takes new analyses, file checks and key presses, so nothing a builder
reads may be half-written or written by two owners:

- `AnalysisIndex`: read-only lookups built once per analysis (sites by line,
  site by key, operation lookups) and swapped in whole.
- `AnalysisState`: the analysis on show, its index and its
  `core.ledger.VerificationLedger`; written only by the transcript screen's
  message handlers, which feed the ledger and never decide a verdict (badges,
  and the findings each line shows, are the ledger's).
- `Expansion`: which blocks are expanded, keyed by `BlockKey`, and which view
  shows each open artifact; written only by the `TranscriptView` (enter, a
  search hit in a collapsed block).
- the open inline artifacts: written only by `viewer.inline.InlineArtifacts`.
- `BlockContext`: the read-only face of all of them that `viewer.blocks` is
  built against, plus the text width (written only by the view on resize).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, NamedTuple, TypeVar

from transcript_view.core.analysis import Analysis, quoted_flags
from transcript_view.core.findings import Finding
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.ledger import Site, VerificationLedger, site_state
from transcript_view.core.lifetime import Lifetimes
from transcript_view.core.markers import Marker, parse_markers
from transcript_view.core.records import MarkerSite, SiteKey, ToolOperation
from transcript_view.core.verification import FileCheck, MarkerState, OrphanFile
from transcript_view.viewer.palette import DEFAULT_PALETTE, Palette
from transcript_view.viewer.rows import GUTTER, InlineArtifact, badge_text

K = TypeVar("K")


class OpLookup(Generic[K]):
    """A read-only, dict-like view that finds the operation for a line on demand.

    The analysis keeps operations as columns of line numbers (a million-line
    transcript must not become a million objects); this asks it per block drawn
    instead of indexing every operation up front.
    """

    def __init__(self, find: Callable[[K], ToolOperation | None]) -> None:
        self._find = find

    def get(self, key: K) -> ToolOperation | None:
        """The operation for `key`, or None."""
        return self._find(key)


def _none(_key: object) -> None:
    return None


@dataclass(frozen=True, slots=True)
class AnalysisIndex:
    """One analysis indexed by line, so building one block never scans the transcript.

    Frozen and built aside (`build`), then swapped in whole: a layout worker
    that read the old one keeps reading a consistent old one.
    """

    analysis: Analysis | SessionAnalysis | None = None
    sites_by_line: Mapping[int, list[Site]] = field(default_factory=dict)
    site_by_key: Mapping[SiteKey, Site] = field(default_factory=dict)
    op_by_message: OpLookup[int] = field(default_factory=lambda: OpLookup(_none))
    op_by_call: OpLookup[tuple[int, str]] = field(default_factory=lambda: OpLookup(_none))
    op_by_dispatch: OpLookup[int] = field(default_factory=lambda: OpLookup(_none))
    op_by_settle: OpLookup[int] = field(default_factory=lambda: OpLookup(_none))
    lifetimes: Lifetimes | None = None
    """Which calls had each line in context, and what it cost (`core.lifetime`)."""

    @classmethod
    def build(cls, analysis: Analysis | SessionAnalysis) -> AnalysisIndex:
        """Index `analysis`: its sites by line and key, its operations, its line findings."""
        sites_by_line: dict[int, list[Site]] = {}
        site_by_key: dict[SiteKey, Site] = {}
        for site in analysis.sites:
            sites_by_line.setdefault(site.line, []).append(site)
            site_by_key[site.key] = site
        lifetimes = Lifetimes.of(analysis, sites_by_line)
        if isinstance(analysis, SessionAnalysis):
            return cls(  # no operations to look up
                analysis, sites_by_line, site_by_key, lifetimes=lifetimes
            )
        ops = analysis.operations
        return cls(
            analysis,
            sites_by_line,
            site_by_key,
            OpLookup(lambda line: ops.at("message", line)),
            OpLookup(lambda key: ops.at_call(*key)),
            OpLookup(lambda line: ops.at("dispatch", line)),
            OpLookup(lambda line: ops.at("settle", line)),
            lifetimes,
        )

    def lines_with_markers(self) -> set[int]:
        """Lines that carry marker rows: blocks an analysis can resize (with finding lines).

        For another format's analysis, lines it tags too (a branch, a continued
        response, a subagent: rows only the whole file can say), and results a
        content replacement replaced (their markers are not what the model saw). For
        every format, compactions (their figures are the analysis's calls').
        """
        lines = set(self.sites_by_line)
        if self.analysis is not None:
            lines.update(c.line for c in self.analysis.calls.compactions)
        if isinstance(self.analysis, SessionAnalysis):
            lines.update(self.analysis.noted_lines())
            lines.update(self.analysis.replaced)  # drawn as the transcript holds them
        return lines

    def markers_of(self, line: int, role: str, content: str) -> list[tuple[Marker, bool]]:
        """(marker, quoted) for each marker in a message's content.

        Before the analysis lands, a tool result's first marker standing on its
        own line is taken as the excerpt's own (the analysis's provisional rule);
        afterwards the analysis decides.
        """
        if self.analysis is not None:
            return [
                (s.marker, s.quoted)
                for s in self.sites_by_line.get(line, [])
                if isinstance(s, MarkerSite)
            ]
        markers = parse_markers(content)
        return list(zip(markers, quoted_flags(role, content, markers), strict=True))


class AnalysisState:
    """The analysis on show, its index and its verification ledger.

    The transcript screen's handlers are the only writers: `adopt` swaps a new
    analysis in (index and ledger replaced whole, file checks carried over),
    `record` and `record_orphans` feed the ledger what the hashing worker
    found. Every verdict is the ledger's; this only keeps it.
    """

    def __init__(self) -> None:
        self.index = AnalysisIndex()
        self.ledger: VerificationLedger | None = None

    @property
    def analysis(self) -> Analysis | SessionAnalysis | None:
        """The latest analysis, or None before the first one lands."""
        return self.index.analysis

    def adopt(
        self, analysis: Analysis | SessionAnalysis, checks: Mapping[str, FileCheck] | None = None
    ) -> set[int]:
        """Take a new analysis; returns the lines whose blocks may change height.

        The file checks recorded so far carry over (or `checks`, for a copy of
        another state made elsewhere: the pass server's layout).
        """
        old_index, old_ledger = self.index, self.ledger
        self.index = AnalysisIndex.build(analysis)
        carried = old_ledger.checks if old_ledger is not None else checks
        self.ledger = VerificationLedger(analysis, carried)
        changed = self.ledger.finding_lines()
        if old_ledger is not None:
            changed |= old_ledger.finding_lines()
        # A compaction's rows say its figures, which only the analysis knows (a few lines).
        changed |= {c.line for c in analysis.calls.compactions}
        if old_index.analysis is not None:
            changed |= {c.line for c in old_index.analysis.calls.compactions}
        marker_lines = old_index.lines_with_markers() | self.index.lines_with_markers()
        if isinstance(analysis, SessionAnalysis) or isinstance(old_index.analysis, SessionAnalysis):
            return changed | marker_lines  # tags and previews: rows only the whole file can say
        # Thousands of markers still "checking" as they were when counted: their
        # rows stay, and recounting them held the GIL for a second at 1 GiB
        # while the artifact check waited for it.
        return changed | {
            line for line in marker_lines if self._rows_may_change(line, old_index, old_ledger)
        }

    def _rows_may_change(
        self, line: int, old_index: AnalysisIndex, old_ledger: VerificationLedger | None
    ) -> bool:
        """Whether a line's marker rows may differ from what the old state gave them.

        Before the first analysis the builders took each marker's quoted flag
        from the provisional rule (`AnalysisIndex.markers_of`), which the
        analysis keeps, except in a tool result with several markers: the end
        of the pass may choose another one as the excerpt's own.
        """
        sites = self.index.sites_by_line.get(line, [])
        if old_index.analysis is None:
            if sum(1 for s in sites if isinstance(s, MarkerSite) and s.role == "tool") > 1:
                return True
            before = _marker_look(sites, None)
        else:
            before = _marker_look(old_index.sites_by_line.get(line, []), old_ledger)
        return before is None or before != _marker_look(sites, self.ledger)

    def record(self, check: FileCheck) -> Recorded:
        """One file hashed: the lines whose rows it changed (the ledger says which).

        Most checks turn a badge from "checking" to "verified" and add no finding:
        the marker's rows stay as they were (`same_rows`), so the view redraws
        those lines without counting them again (5,000 such recounts had been
        half of a 1 GiB open's artifact check).
        """
        ledger = self.ledger
        if ledger is None:
            return Recorded([], [])
        sites = ledger.sites_of(check.name)
        before = [ledger.verdict(s.key) for s in sites]
        changed = ledger.record(check)
        recount = {
            s.line
            for s, old in zip(sites, before, strict=True)
            if not same_rows(old, ledger.verdict(s.key))
        }
        site_lines = {s.line for s in sites}
        recount.update(line for line in changed if line not in site_lines)  # a settle's findings
        return Recorded(
            [line for line in changed if line in recount],
            [line for line in changed if line not in recount],
        )

    def line_findings(self, line: int) -> list[Finding]:
        """The errors and warnings a line shows on its own rows (the ledger's)."""
        return self.ledger.line_findings(line) if self.ledger is not None else []

    def record_orphans(self, orphans: list[OrphanFile]) -> None:
        """The artifact directory was listed."""
        if self.ledger is not None:
            self.ledger.record_orphans(orphans, explained=True)  # by the worker

    def state(self, key: SiteKey, marker: Marker) -> MarkerState:
        """A marker's badge: the ledger's, or (before any analysis) the one its form gives."""
        return _badge_state(self.ledger, key, marker)

    def site_state(self, key: SiteKey) -> MarkerState:
        """A marker's badge by its key alone (another format's: no form to fall back on)."""
        return self.ledger.state(key) if self.ledger is not None else MarkerState.CHECKING

    def findings_of(self, key: SiteKey) -> list[Finding]:
        """What verifying the marker found (nothing before the analysis)."""
        return self.ledger.findings_of(key) if self.ledger is not None else []

    def is_bad(self, key: SiteKey) -> bool:
        """Whether the marker's badge says something is wrong."""
        return self.ledger is not None and self.ledger.is_bad(key)

    def check_of(self, name: str) -> FileCheck | None:
        """The recorded check of one artifact file, if any."""
        return self.ledger.check_of(name) if self.ledger is not None else None


def _badge_state(ledger: VerificationLedger | None, key: SiteKey, marker: Marker) -> MarkerState:
    if ledger is not None:
        return ledger.state(key)
    provisional = MarkerSite(key.line, None, "tool", marker, False)
    return site_state(provisional, None)[0]


def _marker_look(
    sites: list[Site], ledger: VerificationLedger | None
) -> tuple[tuple[object, ...], ...] | None:
    """What a line's marker rows read of an analysis and its ledger (None: not known).

    `RowBuilder.marker` draws a quoted marker from its text alone, and an
    excerpt's own from its text and its verdict's rows (`_verdict_rows`, what
    `same_rows` compares too).
    """
    look: list[tuple[object, ...]] = []
    for site in sites:
        if not isinstance(site, MarkerSite):
            return None
        if site.quoted:
            look.append((site.marker, True))
            continue
        state = _badge_state(ledger, site.key, site.marker)
        findings = ledger.findings_of(site.key) if ledger is not None else []
        look.append((site.marker, False, *_verdict_rows(state, findings)))
    return tuple(look)


class Recorded(NamedTuple):
    """The lines a file check changed: `rows` may take other rows, `look` only looks other."""

    rows: list[int]
    look: list[int]


def same_rows(
    old: tuple[MarkerState, list[Finding]], new: tuple[MarkerState, list[Finding]]
) -> bool:
    """Whether a marker's rows stay when its verdict goes from `old` to `new`.

    The builders draw a marker's badge (`badge_text`) on its first row and each
    of its findings as rows below it (`RowBuilder.marker`, `spill_rows`); the
    rest of the block does not read the verdict. So the rows stay when the badge
    keeps its width and the findings are the same.
    """
    return _verdict_rows(*old) == _verdict_rows(*new)


def _verdict_rows(state: MarkerState, findings: list[Finding]) -> tuple[object, ...]:
    """What of a marker's verdict its rows read: its badge's width and its findings."""
    return (badge_text(state).cell_len, *findings)


class BlockKey(NamedTuple):
    """A block's identity within its view: what `Expansion` remembers."""

    view: str
    block: int
    """The block's index in its document (the model view's preamble is block 0).
    Not `index`: that is `tuple.index`."""


class Expansion:
    """Which blocks are shown whole instead of collapsed, and where open artifacts show.

    Written only by the `TranscriptView` (enter on a block, a search hit in a
    collapsed one, enter on a marker); builders read it through
    `BlockContext.is_expanded` and `BlockContext.artifact`.

    An artifact opened inline is spliced in under its marker only in the view
    it was opened in: opened in the file view, it stays collapsed in the model
    view, whose whole point is what the model is sent (the excerpt, never the
    file). Enter on the marker there shows it in that view too.
    """

    def __init__(self) -> None:
        self._keys: set[BlockKey] = set()
        self._artifacts: set[tuple[str, SiteKey]] = set()
        """(view, marker) of every artifact shown inline in that view."""
        self._unfolded: frozenset[int] = frozenset()
        """Record lines shown on their own rows although records are folded (`viewer.folds`);
        replaced whole, so a worker thread reads one set or the other."""

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def block_keys(self) -> set[BlockKey]:
        """A copy of the expanded blocks' keys (copied whole: safe from a worker thread)."""
        return set(self._keys)

    def artifact_keys(self) -> set[tuple[str, SiteKey]]:
        """A copy of the (view, marker) pairs whose artifact is shown inline."""
        return set(self._artifacts)

    def shapes(self, view: str) -> bool:
        """Whether any block of `view` is expanded, unfolded or shows an artifact (not the
        default look)."""
        if view == "file" and self._unfolded:
            return True
        return any(k.view == view for k in self._keys) or any(v == view for v, _ in self._artifacts)

    def unfolded_lines(self) -> frozenset[int]:
        """The record lines shown on their own rows although records are folded."""
        return self._unfolded

    def is_unfolded(self, line: int) -> bool:
        """Whether record `line` is shown on its own rows although records are folded."""
        return line in self._unfolded

    def unfold(self, lines: range) -> None:
        """Show these record lines on their own rows (enter on their fold row)."""
        self._unfolded = self._unfolded.union(lines)

    def refold(self, lines: range) -> None:
        """Fold these record lines again."""
        self._unfolded = self._unfolded.difference(lines)

    def toggle(self, key: BlockKey) -> bool:
        """Expand a collapsed block or collapse an expanded one; True if now expanded."""
        if key in self._keys:
            self._keys.discard(key)
            return False
        self._keys.add(key)
        return True

    def collapse_view(self, view: str) -> None:
        """Collapse every block of `view` (its blocks now show other entries: another call)."""
        self._keys = {k for k in self._keys if k.view != view}

    def expand(self, key: BlockKey) -> None:
        """Show a block whole."""
        self._keys.add(key)

    def show_artifact(self, view: str, key: SiteKey) -> None:
        """Splice the artifact of marker `key` into `view` (once it is open)."""
        self._artifacts.add((view, key))

    def hide_artifact(self, view: str, key: SiteKey) -> None:
        """Show marker `key` collapsed in `view` again (its artifact may stay open elsewhere)."""
        self._artifacts.discard((view, key))

    def forget_artifact(self, key: SiteKey) -> None:
        """Marker `key`'s artifact is closed: no view shows it."""
        self._artifacts = {(v, k) for v, k in self._artifacts if k != key}

    def shows_artifact(self, view: str, key: SiteKey) -> bool:
        """Whether `view` splices in the artifact of marker `key` (when it is open)."""
        return (view, key) in self._artifacts

    def artifact_views(self, key: SiteKey) -> set[str]:
        """The views that show marker `key`'s artifact."""
        return {v for v, k in self._artifacts if k == key}


class BlockContext:
    """Everything a block builder reads, each part from its one owner.

    Created by the `TranscriptView`, which is the only writer of `width` and
    `palette` (each swapped whole); the analysis state, the open artifacts and
    the expansion are read-only here.
    """

    def __init__(
        self,
        state: AnalysisState,
        artifacts: Mapping[SiteKey, InlineArtifact],
        expansion: Expansion,
        width: int = 100,
        format: Format = Format.REFERENCE,
    ) -> None:
        self._state = state
        self.format = format
        """The transcript's format: which builder its lines need (fixed for a view's life)."""
        self._artifacts = artifacts
        self._expansion = expansion
        self.width = width
        self.fold_records = True
        self.subagent_file = False
        """Whether the transcript is a subagent's own file (its header says so, once)."""
        """Whether the agent's own records are folded ("what the model saw") or each shown
        ("everything"): the view's to switch, as it does the width."""
        self.palette: Palette = DEFAULT_PALETTE
        """The styles rows are drawn with, resolved from the view's component classes."""

    @property
    def content_width(self) -> int:
        """Cells available right of the gutter and the two-column indent."""
        return max(self.width - GUTTER - 2, 10)

    @property
    def index(self) -> AnalysisIndex:
        """The current analysis's lookups (read once per block: it is swapped whole)."""
        return self._state.index

    @property
    def analysis(self) -> Analysis | SessionAnalysis | None:
        """The analysis on show, None before the first one lands."""
        return self._state.index.analysis

    @property
    def lifetimes(self) -> Lifetimes | None:
        """Which calls had each line in context (None before the analysis lands)."""
        return self._state.index.lifetimes

    def shows_lifetime(self, key: BlockKey) -> bool:
        """Whether a block says where its message lived: when the reader expanded it (the
        words need the analysis, and a row on every message would recount them all when it
        lands)."""
        return key.view == "file" and key in self._expansion

    @property
    def sites_by_line(self) -> Mapping[int, list[Site]]:
        """Marker sites of each line."""
        return self._state.index.sites_by_line

    def line_findings(self, line: int) -> list[Finding]:
        """The errors and warnings a line shows on its own rows (not under a marker)."""
        return self._state.line_findings(line)

    @property
    def op_by_message(self) -> OpLookup[int]:
        """The operation a tool message belongs to."""
        return self._state.index.op_by_message

    @property
    def op_by_call(self) -> OpLookup[tuple[int, str]]:
        """The operation of a tool call, by (line, call id)."""
        return self._state.index.op_by_call

    @property
    def op_by_dispatch(self) -> OpLookup[int]:
        """The operation a dispatch line starts."""
        return self._state.index.op_by_dispatch

    @property
    def op_by_settle(self) -> OpLookup[int]:
        """The operation a settle line ends."""
        return self._state.index.op_by_settle

    def markers_of(self, line: int, role: str, content: str) -> list[tuple[Marker, bool]]:
        """(marker, quoted) for each marker in a message's content."""
        return self._state.index.markers_of(line, role, content)

    def marker_state(self, key: SiteKey, marker: Marker) -> MarkerState:
        """The badge for a marker (the ledger's)."""
        return self._state.state(key, marker)

    def site_state(self, key: SiteKey) -> MarkerState:
        """The badge of another format's marker (the ledger's; "checking" until then)."""
        return self._state.site_state(key)

    def findings_of(self, key: SiteKey) -> list[Finding]:
        """What verifying a marker found."""
        return self._state.findings_of(key)

    def is_bad(self, key: SiteKey) -> bool:
        """Whether a marker's badge says something is wrong."""
        return self._state.is_bad(key)

    def artifact(self, key: SiteKey, view: str) -> InlineArtifact | None:
        """The artifact open under a marker, if `view` shows it (see `Expansion`)."""
        if not self._expansion.shows_artifact(view, key):
            return None
        return self._artifacts.get(key)

    def is_open(self, key: SiteKey) -> bool:
        """Whether marker `key`'s artifact is open inline (in either view)."""
        return key in self._artifacts

    def finding_lines(self) -> set[int]:
        """Lines that show findings on their own rows (the ledger's, as now)."""
        ledger = self._state.ledger
        return ledger.finding_lines() if ledger is not None else set()

    def file_checks(self) -> dict[str, FileCheck]:
        """A copy of the file checks recorded so far (for a layout made elsewhere)."""
        ledger = self._state.ledger
        return dict(ledger.checks) if ledger is not None else {}

    def reshaped_lines(self, views: Callable[[str, int], int | None]) -> set[int]:
        """Transcript lines whose block in some view is expanded or shows an artifact.

        `views(view, block)` gives a view's block's line (None: not a line).
        """
        out = {site.line for _, site in self._expansion.artifact_keys()}
        unfolded = self._expansion.unfolded_lines()
        if unfolded:
            out |= unfolded
            out |= {line + 1 for line in unfolded}  # its rows follow whether it is folded
        for key in self._expansion.block_keys():
            line = views(key.view, key.block)
            if line is not None:
                out.add(line)
        return out

    def default_look(self, view: str) -> bool:
        """Whether every block of `view` looks as it does when first opened (records
        folded, none unfolded or expanded, no artifact spliced in): what the pass
        server can lay out."""
        return self.fold_records and not self._expansion.shapes(view)

    def folds(self, line: int) -> bool:
        """Whether `line` is folded if it is a record: records are, and it is not unfolded."""
        return self.fold_records and not self._expansion.is_unfolded(line)

    def is_expanded(self, key: BlockKey) -> bool:
        """Whether a block is shown whole."""
        return key in self._expansion

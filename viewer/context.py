"""The state that decides how blocks look, shared by the screen, the view and workers.

The screen owns it and is its only writer (from message handlers on the UI
thread); layout and search workers only read it to build rows. It indexes the
analysis by line so that building one block never scans the whole transcript.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from transcript_view.core.analysis import Analysis, MarkerSite, ToolOperation
from transcript_view.core.findings import Finding, Severity
from transcript_view.core.markers import Marker, MarkerKind, parse_markers
from transcript_view.core.verification import FileCheck, MarkerState
from transcript_view.viewer.rows import GUTTER, InlineArtifact, SiteKey

# -- what every block builder needs to know ------------------------------------------------

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


@dataclass
class ViewContext:
    """Shared, UI-owned state that decides how blocks look.

    Workers only read it (to count rows); the UI thread is the only writer.
    """

    width: int = 100
    analysis: Analysis | None = None
    states: dict[SiteKey, MarkerState] = field(default_factory=dict)
    checks: dict[str, FileCheck] = field(default_factory=dict)
    open_artifacts: dict[SiteKey, InlineArtifact] = field(default_factory=dict)
    expanded: set[tuple[str, int]] = field(default_factory=set)
    sites_by_line: dict[int, list[MarkerSite]] = field(default_factory=dict)
    site_by_key: dict[SiteKey, MarkerSite] = field(default_factory=dict)
    op_by_message: OpLookup[int] = field(default_factory=lambda: OpLookup(_none))
    op_by_call: OpLookup[tuple[int, str]] = field(default_factory=lambda: OpLookup(_none))
    op_by_dispatch: OpLookup[int] = field(default_factory=lambda: OpLookup(_none))
    op_by_settle: OpLookup[int] = field(default_factory=lambda: OpLookup(_none))
    findings_by_line: dict[int, list[Finding]] = field(default_factory=dict)
    site_findings: dict[SiteKey, list[Finding]] = field(default_factory=dict)
    """What verifying each marker found (missing file, digest mismatch...)."""

    @property
    def content_width(self) -> int:
        """Cells available right of the gutter and the two-column indent."""
        return max(self.width - GUTTER - 2, 10)

    def set_analysis(self, analysis: Analysis) -> set[int]:
        """Index the analysis by line so block builders find their data in O(1).

        The new indexes are built aside and swapped in whole, so a layout worker
        reading them never sees a half-filled dict.

        Returns:
            The lines whose rows may change height (markers and findings): the
            only blocks whose row count the analysis can change.
        """
        sites_by_line: dict[int, list[MarkerSite]] = {}
        site_by_key: dict[SiteKey, MarkerSite] = {}
        for site in analysis.sites:
            sites_by_line.setdefault(site.line, []).append(site)
            site_by_key[(site.line, site.marker.start)] = site
        ops = analysis.operations
        op_by_message: OpLookup[int] = OpLookup(lambda line: ops.at("message", line))
        op_by_call: OpLookup[tuple[int, str]] = OpLookup(lambda key: ops.at_call(*key))
        op_by_dispatch: OpLookup[int] = OpLookup(lambda line: ops.at("dispatch", line))
        op_by_settle: OpLookup[int] = OpLookup(lambda line: ops.at("settle", line))
        findings_by_line: dict[int, list[Finding]] = {}
        for f in analysis.findings:
            if f.line is not None and f.severity is not Severity.NOTE:
                findings_by_line.setdefault(f.line, []).append(f)
        changed = set(sites_by_line) | set(findings_by_line)
        changed |= set(self.sites_by_line) | set(self.findings_by_line)
        self.sites_by_line, self.site_by_key = sites_by_line, site_by_key
        self.op_by_message, self.op_by_call = op_by_message, op_by_call
        self.op_by_dispatch, self.op_by_settle = op_by_dispatch, op_by_settle
        self.findings_by_line = findings_by_line
        self.analysis = analysis
        return changed

    def marker_state(self, key: SiteKey, marker: Marker) -> MarkerState:
        """The badge for a marker: from verification when known, else from its form."""
        state = self.states.get(key)
        if state is not None:
            return state
        if marker.kind is MarkerKind.COULD_NOT_BE_STORED:
            return MarkerState.COULD_NOT_BE_STORED
        if marker.file is None:
            return MarkerState.NOT_STORED
        if not marker.safe_name:
            return MarkerState.UNSAFE_NAME
        return MarkerState.CHECKING

    def markers_of(self, line: int, role: str, content: str) -> list[tuple[Marker, bool]]:
        """(marker, quoted) for each marker in a message's content.

        Before the analysis lands, a tool result's first marker standing on its
        own line is taken as the excerpt's own (the analysis's provisional rule);
        afterwards the analysis decides.
        """
        if self.analysis is not None:
            return [(s.marker, s.quoted) for s in self.sites_by_line.get(line, [])]
        found = parse_markers(content)
        out: list[tuple[Marker, bool]] = []
        own_taken = role != "tool"
        for m in found:
            quoted = True
            if not own_taken and m.on_own_line(content):
                quoted, own_taken = False, True
            out.append((m, quoted))
        return out

"""The life cycle of artifacts opened inline under their marker.

Open, index, rewrap, grow, fail, close: each is a message from an artifact
worker or a request from a key, and each must agree with the others (a close
while an index is in flight drops what lands later; a resize re-indexes at the
new width but keeps the old rows on screen meanwhile; a failed re-index keeps
the old rows). `InlineArtifacts` holds that whole story in one headless class
that a test can drive without an App: it decides, and tells its caller what to
do (start a worker, say why not, rebuild a line); the screen starts workers
and the `TranscriptView` moves rows and the cursor.

It is the only writer of the open artifacts; block builders read them through
its `Mapping` face (`get`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from rich.text import Text

from transcript_view.core.filelines import FileLines
from transcript_view.core.formats.model import SpillForm, SpillSite
from transcript_view.core.ledger import Site
from transcript_view.core.markers import MarkerKind
from transcript_view.core.records import SiteKey
from transcript_view.core.text import plural, visible
from transcript_view.core.verification import FileCheck, MarkerState
from transcript_view.viewer.palette import DEFAULT_PALETTE, Palette, exposure_glyph
from transcript_view.viewer.rows import GUTTER, InlineArtifact, Row
from transcript_view.viewer.session_blocks import preview_bytes

Severity = Literal["information", "warning", "error"]


@dataclass(frozen=True, slots=True)
class Index:
    """Start an artifact worker: index `name` for marker `key` in rows of `row_bytes`."""

    key: SiteKey
    name: str
    row_bytes: int
    record: bool = False
    """`name` is a field of Claude Code's own record on the marker's line (`toolUseResult.
    stdout`), which holds the full output its missing sidecar would have: that is opened."""


@dataclass(frozen=True, slots=True)
class Refused:
    """Nothing opens (or re-opens); `reason` is for the person at the keyboard."""

    reason: str
    severity: Severity = "information"
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Closed:
    """The artifact under `key` was closed: its line is to be rebuilt."""

    key: SiteKey


@dataclass(frozen=True, slots=True)
class Shown:
    """An artifact's rows changed under `key` (opened, or swapped for a rewrapped copy)."""

    key: SiteKey
    reindex: Index | None = None
    """The width changed while it was being indexed: index it again at this one."""


Toggle = Index | Refused | Closed | None
"""What a toggle asks of the caller; None: already being opened, nothing to do."""


def row_bytes_for(width: int) -> int:
    """Bytes per artifact row at a text width: one cell each, so a row fits."""
    return max(width - GUTTER - 2, 16)


def boundary_row(art: InlineArtifact) -> int | None:
    """The row of `art` (header rows counted) holding the first byte the model never saw.

    The head the model saw is already on screen in the excerpt, so enter on a
    marker lands here: at the seen/unseen boundary, `ExcerptShape.head_bytes`
    into the file. When the head ends on a line's LF, that row shows only seen
    text and the boundary is the next one. None while the index has not reached
    the boundary yet (`ArtifactGrew` brings it); a file the model saw all of
    lands on its first row.
    """
    lines = art.lines
    known = art.known_rows
    lo, hi = art.unseen_span()
    if lo >= hi:
        return art.HEADER_ROWS
    if known <= 0 or (not art.complete and lines.row_stop(known - 1) <= lo):
        return None
    row = lines.row_of_offset(lo)
    if lines.row_span(row)[1] <= lo and row + 1 < known:
        row += 1  # the boundary is the LF that ends this row: the next row is unseen
    return art.HEADER_ROWS + row


def opened_name(site: Site) -> str | None:
    """The file an opened marker shows (a reference artifact or a sidecar), if safe."""
    if isinstance(site, SpillSite):
        return site.file if site.safe_name and site.form.stored else None
    return site.marker.file if site.marker.safe_name else None


def seen_bytes(site: Site, check: FileCheck) -> tuple[int, int]:
    """How many bytes of the file's head and tail the model saw (the seen/unseen bars).

    A reference excerpt saw a head and a tail; a Claude Code preview a head only.
    """
    if isinstance(site, SpillSite):
        return preview_bytes(site, check.head), 0
    shape = site.shape
    return (shape.head_bytes, shape.tail_bytes) if shape is not None else (0, 0)


class ClearedOutput(InlineArtifact):
    """The sidecar of a result a microcompaction cleared: its full output, which the model
    saw whole (on the result's line) until the boundary and not after it. Every byte is
    drawn as seen; the legend says until when (not "it never saw", which it did)."""

    def __init__(
        self,
        site_key: SiteKey,
        lines: FileLines,
        check: FileCheck,
        state: MarkerState,
        site: SpillSite,
    ) -> None:
        """Wrap the sidecar's rows; `site` is the cleared result's marker on the boundary."""
        super().__init__(site_key, lines, check, state, lines.size, 0)
        self.site = site

    def unseen_span(self) -> tuple[int, int]:
        """None of it was left out (the file may grow while it is indexed)."""
        size = self.lines.size
        return size, size

    def row(self, i: int, line: int, width: int, palette: Palette = DEFAULT_PALETTE) -> Row:
        """The legend says the model saw it until the boundary; the rest is an artifact's."""
        if i != 2:
            return super().row(i, line, width, palette)
        result = self.site.cleared_result
        where = f" (line {result:,})" if result is not None else ""
        legend = Text(" " * GUTTER + "│ ", style=palette.strong)
        legend.append(
            f"{exposure_glyph(True)} the model saw it whole{where} until the microcompaction "
            f"on line {self.site.line:,}; not after it",
            style=palette.seen_bar,
        )
        legend.truncate(width, overflow="ellipsis")
        return Row(legend, "art-head", line, self.site_key, cont=True)


class RecordCopy(InlineArtifact):
    """Claude Code's own record of the full output, opened where a missing sidecar would be.

    Its rows are a field of the marker's line (`rules.record_copy`), read again and
    decoded. It is neither the sidecar nor what the model saw (the model saw the marker's
    preview), so its header says so, and it claims no byte was seen: nothing of this copy
    was sent.
    """

    def __init__(
        self, site_key: SiteKey, lines: FileLines, check: FileCheck, state: MarkerState
    ) -> None:
        """Wrap the record's text as rows (`check.name` is its field)."""
        super().__init__(site_key, lines, check, state, 0, 0)

    def row(self, i: int, line: int, width: int, palette: Palette = DEFAULT_PALETTE) -> Row:
        """The header and footer say what this is; the text's rows are an artifact's."""
        indent = " " * GUTTER
        p = palette
        c = self.check
        if i == 0:
            head = Text(indent + "┌ Claude Code's own record ", style=p.strong)
            head.append(visible(c.name), style=p.strong)
            head.append("  not the sidecar (missing), not what the model saw", style=p.dim)
        elif i == 1:
            head = Text(indent + "│ ", style=p.strong)
            chars = plural(c.chars, "char") + " · " if c.chars is not None else ""
            head.append(
                f"{chars}{plural(c.size, 'byte')}, on line {line:,} of the transcript: "
                "never sent to the model",
                style=p.dim,
            )
        elif i == 2:
            head = Text(indent + "│ ", style=p.strong)
            head.append("the model saw only the marker's preview, not this copy", style=p.dim)
        elif i == self.count - 1:
            head = Text(indent + "└ end of Claude Code's record", style=p.strong)
            head.append(f" · {plural(self.known_rows, 'row')} (enter to close)", style=p.dim)
            return Row(head, "art-end", line, self.site_key)
        else:
            return super().row(i, line, width, palette)
        head.truncate(width, overflow="ellipsis")
        return Row(head, "art-head", line, self.site_key, cont=i > 0)


class InlineArtifacts(Mapping[SiteKey, InlineArtifact]):
    """The artifacts open inline, and those being indexed to open or to rewrap.

    A `Mapping` from marker to its open `InlineArtifact` (what block builders
    read); the methods are the life cycle, each called on the UI thread.
    """

    def __init__(self) -> None:
        self._open: dict[SiteKey, InlineArtifact] = {}
        self._indexing: set[SiteKey] = set()
        """Markers with an artifact worker in flight; what lands for any other is dropped."""
        self._records: dict[SiteKey, str] = {}
        """Markers whose missing sidecar's output is opened from Claude Code's own record
        instead: the record's field (`Index.record`)."""

    # -- Mapping ---------------------------------------------------------------------------------

    def __getitem__(self, key: SiteKey) -> InlineArtifact:
        return self._open[key]

    def __iter__(self) -> Iterator[SiteKey]:
        return iter(self._open)

    def __len__(self) -> int:
        return len(self._open)

    def indexing(self, key: SiteKey) -> bool:
        """Whether an artifact worker for `key` is in flight."""
        return key in self._indexing

    # -- requests ----------------------------------------------------------------------------------

    def toggle(
        self, key: SiteKey, site: Site | None, width: int, copy: str | None = None
    ) -> Toggle:
        """Enter on a marker: close its open artifact, or say how (or why not) to open it.

        `copy`: the marker's sidecar is missing and this field of Claude Code's own record
        holds the full output (`rules.record_copy`, the ledger's state): it opens instead.
        """
        if key in self._open:
            self.close(key)
            return Closed(key)
        if site is None:
            return Refused("Still reading the transcript; try again in a moment.")
        if isinstance(site, SpillSite):
            return self._toggle_spill(key, site, width, copy)
        marker = site.marker
        if site.quoted:
            return Refused("A quoted marker (text about a marker): nothing to open.")
        if marker.kind is not MarkerKind.STORED:
            return Refused(
                f"The full result {marker.why}; there is no artifact to open.", "warning"
            )
        if not marker.safe_name or marker.file is None:
            return Refused("The marker names an unsafe path; it is never opened.", "error")
        if key in self._indexing:
            return None
        return self._index(key, marker.file, width)

    def _toggle_spill(
        self, key: SiteKey, site: SpillSite, width: int, copy: str | None
    ) -> Toggle:
        if not site.form.stored:
            what = site.cut or "part of the output"
            return Refused(f"Nothing to open: {what} cut, and not stored anywhere.", "warning")
        if not site.safe_name or site.file is None:
            return Refused("The marker names an unsafe path; it is never opened.", "error")
        if key in self._indexing:
            return None
        if copy is not None:
            self._records[key] = copy
            return self._index(key, copy, width, record=True)
        self._records.pop(key, None)
        return self._index(key, site.file, width)

    def _index(self, key: SiteKey, name: str, width: int, *, record: bool = False) -> Index:
        self._indexing.add(key)
        return Index(key, name, row_bytes_for(width), record)

    def _reopen(self, key: SiteKey, site: Site, width: int) -> Index | None:
        """Index what is open under `key` again (at another width), if it can be named."""
        field = self._records.get(key)
        if field is not None:
            return self._index(key, field, width, record=True)
        name = opened_name(site)
        return self._index(key, name, width) if name is not None else None

    def rewrap(self, width: int, sites: Mapping[SiteKey, Site]) -> list[Index]:
        """The text width changed: re-index every open artifact cut to another width.

        The old rows stay on screen until the new index's first rows arrive, so a
        resize never blanks an artifact being read. One already being indexed is
        looked at again when it lands (`opened`).
        """
        want = row_bytes_for(width)
        out = []
        for key, art in self._open.items():
            site = sites.get(key)
            if art.lines.row_bytes != want and key not in self._indexing and site is not None:
                job = self._reopen(key, site, width)
                if job is not None:
                    out.append(job)
        return out

    def close(self, key: SiteKey) -> bool:
        """Close the artifact under `key`; an index in flight for it is dropped when it lands.

        Returns whether an artifact was open.
        """
        self._indexing.discard(key)
        self._records.pop(key, None)
        art = self._open.pop(key, None)
        if art is None:
            return False
        art.lines.close()
        return True

    def close_all(self) -> None:
        """Release every descriptor (the screen is going away)."""
        for key in list(self._open):
            self.close(key)
        self._indexing.clear()

    # -- worker messages ---------------------------------------------------------------------------

    def opened(
        self,
        key: SiteKey,
        lines: FileLines,
        check: FileCheck,
        site: Site | None,
        state: MarkerState,
        width: int,
    ) -> Shown | None:
        """An index's first rows landed: splice them in, or swap them for the old width's.

        `check` and `state` are the ledger's when it has hashed the file (the
        worker's placeholder check otherwise). Takes ownership of `lines`:
        closed here when nothing shows it. None: nothing on screen changed.
        """
        if key not in self._indexing or site is None:
            lines.close()  # closed again (or gone) while it was being opened
            return None
        self._indexing.discard(key)
        old = self._open.get(key)
        changed = False
        if old is not None and old.lines.row_bytes == lines.row_bytes:
            lines.close()  # nothing new
        else:
            if old is not None:
                old.lines.close()  # reopened at a new width: the new rows replace the old
            if key in self._records:
                self._open[key] = RecordCopy(key, lines, check, state)
            elif isinstance(site, SpillSite) and site.form is SpillForm.MICROCOMPACTED:
                self._open[key] = ClearedOutput(key, lines, check, state, site)
            else:
                head, tail = seen_bytes(site, check)
                self._open[key] = InlineArtifact(key, lines, check, state, head, tail)
            changed = True
        reindex = None
        if self._open[key].lines.row_bytes != row_bytes_for(width):
            # The window was resized while this was being indexed: index it again.
            reindex = self._reopen(key, site, width)
        if not changed and reindex is None:
            return None
        return Shown(key, reindex)

    def growing(self, key: SiteKey, lines: FileLines) -> InlineArtifact | None:
        """The open artifact an `ArtifactGrew` is about, unless it was closed or replaced."""
        art = self._open.get(key)
        return art if art is not None and art.lines is lines else None

    @staticmethod
    def grow(art: InlineArtifact, rows: int) -> None:
        """Show `rows` indexed rows of `art` (never fewer than before)."""
        art.known_rows = max(art.known_rows, rows)

    def failed(self, key: SiteKey, reason: str) -> Refused | None:
        """An index failed: why, unless the artifact was closed meanwhile."""
        if key not in self._indexing:
            if key in self._open:
                # It failed after its first rows were shown: they stay.
                return Refused(reason, "warning", "Stopped reading the artifact")
            return None
        self._indexing.discard(key)
        if key in self._open:
            # Re-indexing at a new width failed; the rows of the old width stay.
            return Refused(reason, "warning", "Cannot re-read the artifact")
        return Refused(reason, "error", "Cannot open the artifact")

    def checked(self, check: FileCheck, state: Callable[[SiteKey], MarkerState]) -> None:
        """A file was hashed: open artifacts of it show its digest and (ledger's) badge."""
        for key, art in self._open.items():
            if art.check.name == check.name:
                art.set_verdict(check, state(key))

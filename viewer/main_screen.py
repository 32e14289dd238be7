"""The transcript screen: header, transcript view, search box, footer, and its workers.

This is where the background work is coordinated. Four kinds of thread worker
feed the screen, each posting `viewer.messages` back and never touching a
widget: the line index (so the first screen appears before a huge file is
scanned), the analysis pass, artifact hashing (badges turn from "checking" to
their state one file at a time), and follow-mode refreshes. The handlers here
are the only code that changes the shared `ViewContext`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input
from textual.worker import get_current_worker

from transcript_view.core.analysis import Analyser, Analysis, analyse
from transcript_view.core.findings import Finding, Severity
from transcript_view.core.markers import MarkerKind
from transcript_view.core.transcript import Transcript, TranscriptError
from transcript_view.core.verification import (
    FileCheck,
    FileState,
    MarkerState,
    OrphanFile,
    check_file,
    list_orphans,
    orphan_findings,
    resolve_inside,
    site_state,
)
from transcript_view.viewer.blocks import FileSource, ModelSource
from transcript_view.viewer.context import ViewContext
from transcript_view.viewer.document import Document
from transcript_view.viewer.filelines import FileLines
from transcript_view.viewer.header import TranscriptHeader
from transcript_view.viewer.messages import (
    AnalysisFailed,
    AnalysisReady,
    Appended,
    ArtifactChecked,
    ArtifactGrew,
    ArtifactOpened,
    ArtifactOpenFailed,
    IndexProgress,
    LayoutChunk,
    OrphansFound,
    Progress,
    SearchDone,
)
from transcript_view.viewer.pacing import give_way
from transcript_view.viewer.rows import BAD_STATES, GUTTER, Block, InlineArtifact, Row, SiteKey
from transcript_view.viewer.transcript_view import TranscriptView

#: Bytes indexed before the first screen is laid out; the rest follows in the background.
FIRST_INDEX_BYTES = 1 << 20
#: Bytes indexed per later step (between progress messages).
INDEX_STEP_BYTES = 32 << 20
#: Bytes of an artifact indexed between two looks at whether a key is waiting.
ARTIFACT_STEP_BYTES = 256 << 10
#: Seconds between follow-mode polls.
FOLLOW_INTERVAL = 1.0

#: (key, what it does) for the help screen; the one place the help text lives.
HELP_KEYS: list[tuple[str, str]] = [
    ("n / N", "next / previous marker (while a search is active: next / previous hit)"),
    ("p / P", "next / previous problem (bad line, finding, marker that did not verify)"),
    ("enter / click", "on a marker: open or close its artifact inline; on a line too long to "
     "lay out: page through it; elsewhere: expand or collapse a long message"),
    ("o", "orphaned artifacts (files no line names)"),
    ("m", "switch between the file view and the model view (what the model is sent next)"),
    ("/", "search the transcript; enter runs it, escape clears it; then n / N step through hits"),
    ("e", "open the artifact under the cursor in $PAGER (default: less)"),
    ("c", "copy the artifact's path (or, for an unstored result, the marker text)"),
    ("f", "follow a transcript that is still being written (toggle)"),
    ("↑ ↓ pgup pgdn home end", "move the cursor; the mouse wheel scrolls"),
    ("ctrl+p", "command palette"),
    ("?", "this help"),
    ("q", "quit"),
]


class TranscriptScreen(Screen[None]):
    """One transcript: what the model saw, where the rest went, and whether it checks out."""

    DEFAULT_CSS = """
    TranscriptScreen {
        layout: vertical;
    }
    TranscriptScreen #search {
        dock: bottom;
        display: none;
        height: 3;
    }
    TranscriptScreen #search.active {
        display: block;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_marker", "Marker", key_display="n"),
        Binding("N", "previous_marker", "Prev", key_display="N"),
        Binding("p", "next_problem", "Problem", key_display="p"),
        Binding("P", "previous_problem", "Prev", key_display="P"),
        Binding("enter", "activate", "Open"),
        Binding("o", "orphans", "Orphans"),
        Binding("m", "toggle_view", "Model"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("e", "pager", "Pager"),
        Binding("c", "copy", "Copy"),
        Binding("f", "follow", "Follow"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
        Binding("escape", "clear_search", "Clear search", show=False),
    ]

    def __init__(self, path: Path) -> None:
        """Show the transcript at `path` (opened read-only on mount)."""
        super().__init__()
        self.path = Path(path)
        self.transcript: Transcript | None = None
        self.ctx = ViewContext()
        self.analysis: Analysis | None = None
        self.file_doc: Document | None = None
        self.model_doc: Document | None = None
        self.orphans: list[OrphanFile] | None = None
        self.orphan_problems: list[Finding] = []
        self.following = False
        self._follow_timer: Timer | None = None
        self._analyser: Analyser | None = None
        self._analysing = False
        self._reanalyse = False
        self._opening: set[SiteKey] = set()
        self._polling = False
        self.error: str | None = None

    # -- composition -----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Header, the transcript, a search box that appears on `/`, the footer."""
        try:
            self.transcript = Transcript(self.path)
        except TranscriptError as exc:
            self.error = str(exc)
        header = TranscriptHeader()
        header.name_shown = self.path.name
        self._header = header
        yield header
        if self.transcript is not None:
            self.file_doc = Document(FileSource(self.transcript, self.ctx))
        else:
            self.file_doc = Document(_EmptySource())
        self._view = TranscriptView(self.ctx, self.file_doc, id="transcript")
        yield self._view
        yield Input(placeholder="search the transcript (enter to search, escape to close)",
                    id="search")
        yield Footer(compact=True)

    @property
    def header(self) -> TranscriptHeader:
        """The header widget (kept from compose: messages may land after unmount)."""
        return self._header

    @property
    def view(self) -> TranscriptView:
        """The transcript widget."""
        return self._view

    def on_mount(self) -> None:
        """Start indexing at once; everything else follows from its messages."""
        self.view.focus()
        if self.transcript is None:
            self.header.phase = ""
            self._say(self.error or "cannot open", title="Cannot open", severity="error")
            return
        self.header.phase = "indexing"
        self._index(self.transcript)

    def on_unmount(self) -> None:
        """Release file descriptors (the transcript and any open artifacts)."""
        for art in self.ctx.open_artifacts.values():
            art.lines.close()
        if self.transcript is not None:
            self.transcript.close()

    # -- workers -----------------------------------------------------------------------------

    @work(thread=True, group="index")
    def _index(self, transcript: Transcript) -> None:
        """Build the line index: the first megabyte at once, then the rest in steps."""
        step = FIRST_INDEX_BYTES
        while True:
            done = transcript.build_index(max_bytes=step)
            self.post_message(
                IndexProgress(
                    transcript.line_count,
                    transcript.indexed_bytes,
                    transcript.file_size(),
                    done,
                )
            )
            if done:
                return
            step = INDEX_STEP_BYTES
            give_way()

    @work(thread=True, group="analysis")
    def _analyse(self, transcript: Transcript) -> None:
        """The one streaming pass: operations, markers, replay, line problems."""
        def progress(done: int, total: int) -> None:
            self.post_message(Progress("reading", done, total))
            give_way()

        analyser = self._analyser
        try:
            # Following, only the appended lines are read (after one full pass);
            # otherwise one pass, whose working state is freed when it ends.
            if analyser is not None:
                analysis = analyser.update(progress)
            else:
                analysis = analyse(transcript, progress)
        except Exception as exc:  # the file view must survive a bug in a pass
            self.post_message(AnalysisFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(AnalysisReady(analysis))

    @work(thread=True, group="verify")
    def _verify(self, directory: Path, names: list[str], named: set[str]) -> None:
        """Hash each named artifact (streamed), then list the directory's orphans."""
        for i, name in enumerate(names):
            self.post_message(ArtifactChecked(name, check_file(directory, name), i + 1, len(names)))
        self.post_message(OrphansFound(list_orphans(directory, named)))

    @work(thread=True, group="artifact")
    def _open_artifact(
        self, key: SiteKey, directory: Path, name: str, check: FileCheck | None, row_bytes: int
    ) -> None:
        """Index an artifact as rows, showing the first rows while the rest is indexed.

        The hash is not computed here: the verification worker delivers it (and
        the badge) as it does for every artifact, so a huge file is read once.
        """
        worker = get_current_worker()
        path, why = resolve_inside(directory, name)
        if path is None:
            self.post_message(ArtifactOpenFailed(key, f"{name}: {why}"))
            return
        try:
            lines = FileLines(path, row_bytes=row_bytes)
            done = lines.index(max_bytes=FIRST_INDEX_BYTES)
            if not done:
                lines.tail_rows()  # the end shows at once, before the index gets there
        except (OSError, TranscriptError, ValueError) as exc:
            self.post_message(ArtifactOpenFailed(key, f"{name}: {exc}"))
            return
        if check is None:
            check = FileCheck(name, FileState.OK, "being hashed", size=lines.size, path=path)
        self.post_message(ArtifactOpened(key, lines, check))
        posted = lines.indexed_bytes
        while not done and not worker.is_cancelled and not lines.closed:
            # Small steps, so a key pressed meanwhile waits for at most one of them.
            give_way()
            done = lines.index(max_bytes=min(INDEX_STEP_BYTES, ARTIFACT_STEP_BYTES))
            if done or lines.indexed_bytes - posted >= INDEX_STEP_BYTES:
                posted = lines.indexed_bytes
                self.post_message(ArtifactGrew(key, lines, lines.row_count))

    @work(thread=True, group="follow")
    def _poll(self, transcript: Transcript) -> None:
        """Follow mode: index what was appended since the last look."""
        try:
            new = transcript.refresh()
        except OSError as exc:
            self.post_message(AnalysisFailed(f"follow: {exc}"))
            return
        self.post_message(Appended(new))

    # -- worker messages -------------------------------------------------------------------------

    def on_index_progress(self, msg: IndexProgress) -> None:
        """Show progress, lay out what is indexed, and analyse once the index is whole."""
        header = self.header
        header.lines = msg.lines
        if not msg.complete:
            header.phase, header.done, header.total = "indexing", msg.done_bytes, msg.total_bytes
        assert self.file_doc is not None
        source = self.file_doc.source
        if isinstance(source, FileSource):
            source.index_complete = msg.complete
        self.view.kick_layout(self.file_doc)
        if msg.complete:
            self._start_analysis()

    def _start_analysis(self) -> None:
        if self.transcript is None:
            return
        if self._analysing:
            self._reanalyse = True
            return
        self._analysing = True
        if self.analysis is None:
            self.header.phase, self.header.done, self.header.total = "reading", 0, 0
        self._analyse(self.transcript)

    def on_progress(self, msg: Progress) -> None:
        """A phase moved on: the header's progress indicator follows."""
        if self.analysis is None:
            self.header.phase, self.header.done, self.header.total = msg.phase, msg.done, msg.total

    def on_layout_chunk(self, msg: LayoutChunk) -> None:
        """Row counts from a layout worker."""
        doc = self.file_doc if msg.view == "file" else self.model_doc
        if doc is not None:
            self.view.apply_chunk(doc, msg)
        if msg.view == "file" and msg.done and self.model_doc is not None:
            self.view.kick_layout(self.model_doc)  # its turn has come (see on_analysis_ready)

    def on_analysis_failed(self, msg: AnalysisFailed) -> None:
        """Say so; the file view keeps working without operation states."""
        self._analysing = False
        self._polling = False
        self.header.phase = ""
        if self._analyser is not None and self.transcript is not None:
            self._analyser = Analyser(self.transcript)  # it may be half-fed: start over
        self._say(msg.error, title="Analysis failed", severity="error")

    def on_analysis_ready(self, msg: AnalysisReady) -> None:
        """Operations, markers and replay are known: badges, model view, verification."""
        self._analysing = False
        analysis = msg.analysis
        self.analysis = analysis
        changed = self.ctx.set_analysis(analysis)
        header = self.header
        header.envelopes = analysis.envelopes
        header.lines = analysis.lines
        header.markers = len(analysis.excerpt_sites)
        # Badges that need no file are known now; stored markers are checked below.
        states: dict[SiteKey, MarkerState] = {}
        site_findings: dict[SiteKey, list[Finding]] = {}
        for site in analysis.excerpt_sites:
            key = (site.line, site.marker.start)
            name = site.marker.file
            check = self.ctx.checks.get(name) if name is not None else None
            state, findings = site_state(site, check)
            states[key] = state
            site_findings[key] = findings
        self.ctx.states = states
        self.ctx.site_findings = site_findings
        # The model view is rebuilt from the new replay.
        assert self.transcript is not None and self.file_doc is not None
        new_model = Document(ModelSource(self.transcript, self.ctx))
        showing_model = self.model_doc is not None and self.view.doc is self.model_doc
        self.model_doc = new_model
        if showing_model:
            self.view.show_document(new_model, self._cursor_line())
        # Only blocks with markers or findings can change height: rebuild those and
        # repaint the rest, instead of laying a huge transcript out a second time.
        self.view.refresh_blocks(self.file_doc, sorted(changed))
        # The model view is laid out after the file view, not beside it: on a huge
        # transcript the two would share one core (the GIL) and both finish late.
        # Showing it (`m`) starts its layout at once.
        if showing_model or not self.file_doc.laying_out:
            self.view.kick_layout(new_model)
        self._update_counts()
        wanted = sorted(
            {
                s.marker.file
                for s in analysis.excerpt_sites
                if s.marker.file is not None and s.marker.safe_name
            }
            - set(self.ctx.checks)
        )
        if self.transcript is not None:
            header.phase, header.done, header.total = "checking artifacts", 0, len(wanted)
            self._verify(self.transcript.artifact_dir, wanted, analysis.named_files())
        if self._reanalyse:
            self._reanalyse = False
            self._start_analysis()

    def on_artifact_checked(self, msg: ArtifactChecked) -> None:
        """One file hashed: its markers' badges change; counts update live."""
        self.ctx.checks[msg.name] = msg.check
        self.header.done, self.header.total = msg.done, msg.total
        if self.analysis is None:
            return
        changed_lines: set[int] = set()
        for site in self.analysis.excerpt_sites:
            if site.marker.file != msg.name:
                continue
            key = (site.line, site.marker.start)
            state, findings = site_state(site, msg.check)
            self.ctx.states[key] = state
            self.ctx.site_findings[key] = findings
            changed_lines.add(site.line)
            art = self.ctx.open_artifacts.get(key)
            if art is not None:
                art.state, art.check = state, msg.check
        for changed in sorted(changed_lines):
            self._rebuild_line(changed)
        self._update_counts()

    def on_orphans_found(self, msg: OrphansFound) -> None:
        """The artifact directory is listed: orphans count as problems too."""
        self.orphans = msg.orphans
        self.orphan_problems = orphan_findings(msg.orphans)
        self.header.phase = ""
        self._update_counts()

    def on_artifact_opened(self, msg: ArtifactOpened) -> None:
        """Splice the artifact's rows in under its marker (or swap in a rewrapped copy)."""
        key = msg.site_key
        site = self.ctx.site_by_key.get(key)
        if key not in self._opening or site is None:
            msg.lines.close()  # closed again (or gone) while it was being opened
            return
        self._opening.discard(key)
        old = self.ctx.open_artifacts.get(key)
        if old is not None and old.lines.row_bytes == msg.lines.row_bytes:
            msg.lines.close()  # nothing new
        else:
            if old is not None:
                old.lines.close()  # reopened at a new width: the new rows replace the old
            shape = site.shape
            state = self.ctx.states.get(key, MarkerState.CHECKING)
            check = self.ctx.checks.get(msg.check.name, msg.check)
            self.ctx.open_artifacts[key] = InlineArtifact(
                key,
                msg.lines,
                check,
                state,
                shape.head_bytes if shape is not None else 0,
                shape.tail_bytes if shape is not None else 0,
            )
            self._rebuild_line(site.line)
        if self.ctx.open_artifacts[key].lines.row_bytes != self._artifact_row_bytes():
            # The window was resized while this was being indexed: index it again.
            self._index_artifact(key)

    def on_artifact_grew(self, msg: ArtifactGrew) -> None:
        """More of an open artifact is indexed: its rows grow under the marker."""
        art = self.ctx.open_artifacts.get(msg.site_key)
        if art is None or art.lines is not msg.lines:
            return
        # Rows appear after the indexed ones (in place of the "not indexed yet" row):
        # a cursor below that point keeps showing the same row, not what slid under it.
        view = self.view
        doc = view.doc
        grows_at = self._artifact_row(doc, art)
        if grows_at is not None:
            grows_at += art.HEADER_ROWS + art.known_rows
        before = doc.total_rows
        art.known_rows = max(art.known_rows, msg.rows)
        self._rebuild_line(msg.site_key[0])
        delta = doc.total_rows - before
        if grows_at is not None and delta and view.cursor >= grows_at:
            top = view.scroll_y
            view.set_cursor(view.cursor + delta, scroll=False)
            view.scroll_to(y=top + delta, animate=False, immediate=True)

    def _artifact_row(self, doc: Document, art: InlineArtifact) -> int | None:
        """The document row of an open artifact's first header row, if it is laid out."""
        index = doc.source.index_of_line(art.site_key[0])
        if index is None or index >= doc.blocks:
            return None
        offset = doc.block(index).offset_of(art)
        return None if offset is None else doc.block_start(index) + offset

    def on_artifact_open_failed(self, msg: ArtifactOpenFailed) -> None:
        """Say why nothing opened (nothing, if it was closed meanwhile)."""
        key = msg.site_key
        if key not in self._opening:
            return
        self._opening.discard(key)
        if key in self.ctx.open_artifacts:
            # Re-indexing at a new width failed; the rows of the old width stay.
            self._say(msg.reason, title="Cannot re-read the artifact", severity="warning")
            return
        self._say(msg.reason, title="Cannot open the artifact", severity="error")

    def on_appended(self, msg: Appended) -> None:
        """Follow mode: lay out the new lines and analyse again."""
        self._polling = False
        if self.transcript is None or self.file_doc is None:
            return
        view = self.view
        doc = self.file_doc
        at_end = doc.total_rows == 0 or view.cursor >= doc.total_rows - 1
        self.header.lines = self.transcript.line_count
        # The line that was last may have been incomplete when it was laid out.
        keep = min(doc.blocks, max(self.transcript.line_count - msg.new_lines - 1, 0))
        if doc.blocks > keep and not doc.laying_out:
            doc.truncate(keep)
        if view.doc is doc and at_end:
            view.stick_to_end = True
        view.kick_layout(doc)
        if msg.new_lines:
            self._start_analysis()

    def on_search_done(self, msg: SearchDone) -> None:
        """Hits are known: show how many and go to the first one after the cursor."""
        view = self.view
        if msg.query != view.search_query or msg.view != view.doc.view:
            return
        view.hits = msg.blocks
        n = len(msg.blocks)
        self.header.search_status = f"/{msg.query}: {n:,} block{'s' if n != 1 else ''} (n/N)"
        if n:
            self._step_hit(forward=True, include_current=True)

    # -- helpers ---------------------------------------------------------------------------------

    def _say(self, message: str, **kwargs: Any) -> None:
        """A toast that never parses markup: messages quote file names from transcripts."""
        self.notify(message, markup=False, **kwargs)

    def _update_counts(self) -> None:
        header = self.header
        if self.analysis is None:
            return
        states = self.ctx.states.values()
        header.verified = sum(1 for s in states if s is MarkerState.VERIFIED)
        header.problems = len(self.problems())

    def problems(self) -> list[Finding]:
        """Every error and warning known so far (analysis, markers, orphans)."""
        out = [f for f in self.analysis.findings] if self.analysis is not None else []
        for findings in self.ctx.site_findings.values():
            out.extend(findings)
        out.extend(self.orphan_problems)
        return [f for f in out if f.severity is not Severity.NOTE]

    def problem_lines(self) -> list[int]:
        """Transcript lines with something wrong, sorted."""
        lines = {f.line for f in self.problems() if f.line is not None}
        if self.analysis is not None:
            lines.update(p.line for p in self.analysis.problems)
        lines.update(key[0] for key, s in self.ctx.states.items() if s in BAD_STATES)
        return sorted(lines)

    def _cursor_line(self) -> int | None:
        row = self.view.current_row
        return row.line if row is not None else None

    def _blocks_of_lines(self, lines: list[int]) -> list[int]:
        source = self.view.doc.source
        out = {source.index_of_line(line) for line in lines}
        return sorted(i for i in out if i is not None)

    def _rebuild_line(self, line: int) -> None:
        for doc in (self.file_doc, self.model_doc):
            if doc is None:
                continue
            index = doc.source.index_of_line(line)
            if index is not None:
                self.view.rebuild_blocks([index], doc)

    def _focused_site(self) -> SiteKey | None:
        key = self.view.current_site()
        if key is None:
            self._say("Move the cursor to a marker first (n / N).", severity="warning")
        return key

    # -- actions -----------------------------------------------------------------------------------

    def action_activate(self) -> None:
        """Enter: open/close the artifact of a marker, or expand/collapse a long block."""
        self.view.action_activate()

    @on(TranscriptView.ArtifactRequested)
    def _toggle_artifact(self, msg: TranscriptView.ArtifactRequested) -> None:
        key = msg.site
        open_art = self.ctx.open_artifacts.pop(key, None)
        if open_art is not None:
            self._opening.discard(key)  # a rewrap in flight is dropped when it lands
            open_art.lines.close()
            self._rebuild_line(key[0])
            doc = self.view.doc
            index = doc.source.index_of_line(key[0])
            if index is not None and index < doc.blocks:
                block = doc.block(index)
                for i, row in block.own_rows():
                    if row.site == key:
                        self.view.set_cursor(doc.block_start(index) + i)
                        break
            return
        site = self.ctx.site_by_key.get(key)
        if site is None:
            self._say("Still reading the transcript; try again in a moment.")
            return
        marker = site.marker
        if site.quoted:
            self._say("A quoted marker (text about a marker): nothing to open.")
            return
        if marker.kind is not MarkerKind.STORED:
            self._say(
                f"The full result {marker.why}; there is no artifact to open.", severity="warning"
            )
            return
        if not marker.safe_name or marker.file is None:
            self._say("The marker names an unsafe path; it is never opened.", severity="error")
            return
        if key in self._opening:
            return
        self._index_artifact(key)

    def _artifact_row_bytes(self) -> int:
        """Bytes per artifact row: one cell each for text, so a row fits the width."""
        return max(self.ctx.width - GUTTER - 2, 16)

    @on(TranscriptView.Rewrapped)
    def _rewrap_artifacts(self, msg: TranscriptView.Rewrapped) -> None:
        """Open artifacts are cut into rows of the old width: index them again at the new.

        The old rows stay on screen until the new index's first rows arrive, so a
        resize never blanks an artifact being read.
        """
        row_bytes = self._artifact_row_bytes()
        for key, art in list(self.ctx.open_artifacts.items()):
            # One already being indexed is checked again when it lands.
            if art.lines.row_bytes != row_bytes and key not in self._opening:
                self._index_artifact(key)

    def _index_artifact(self, key: SiteKey) -> None:
        """Index a marker's artifact at the current width, to open it or to rewrap it.

        An artifact already open keeps its old rows on screen meanwhile.
        """
        site = self.ctx.site_by_key.get(key)
        if self.transcript is None or site is None or site.marker.file is None:
            return
        self._opening.add(key)
        self._open_artifact(
            key, self.transcript.artifact_dir, site.marker.file,
            self.ctx.checks.get(site.marker.file), self._artifact_row_bytes(),
        )

    @on(TranscriptView.LineRequested)
    def _page_line(self, msg: TranscriptView.LineRequested) -> None:
        """A line too long to lay out inline: page through its bytes in a `FileView`.

        The pager reads the transcript itself, restricted to the line's byte range
        and cut into rows as wide as the view, so nothing is parsed or copied.
        """
        from transcript_view.viewer.fileview import ArtifactScreen, human_size

        if self.transcript is None:
            return
        start, end = self.transcript.line_span(msg.line)
        title = f"{self.path.name} · line {msg.line:,} · {human_size(end - start)}"
        self.app.push_screen(
            ArtifactScreen(
                self.transcript.path,
                title,
                row_bytes=max(self.ctx.width - 2, 16),
                span=(start, end),
            )
        )

    def action_next_marker(self) -> None:
        """Next marker, or next search hit while a search is active."""
        if self.view.search_query:
            self._step_hit(forward=True)
        else:
            self._step_marker(forward=True)

    def action_previous_marker(self) -> None:
        """Previous marker, or previous search hit while a search is active."""
        if self.view.search_query:
            self._step_hit(forward=False)
        else:
            self._step_marker(forward=False)

    def _step_marker(self, forward: bool) -> None:
        if self.analysis is None:
            self._say("Still reading the transcript; markers are not known yet.")
            return
        lines = sorted({s.line for s in self.analysis.sites})
        blocks = self._blocks_of_lines(lines)
        seen: set[SiteKey] = set()

        def first_row_of_marker(row: Row) -> bool:
            if row.kind not in ("marker", "quoted") or row.site is None or row.site in seen:
                return False
            seen.add(row.site)
            return True

        if not self.view.jump(blocks, forward, first_row_of_marker):
            self._say("No more markers " + ("below." if forward else "above."))

    def _step_hit(self, forward: bool, include_current: bool = False) -> None:
        view = self.view
        needle = view.search_query.casefold()
        if not view.hits:
            self._say("No hits.")
            return
        if include_current:
            view.set_cursor(view.cursor - 1, scroll=False)

        def has_hit(row: Row) -> bool:
            return needle in row.text.plain.casefold()

        if not view.jump(view.hits, forward, has_hit, expand_if_hidden=True):
            self._say("No more hits " + ("below." if forward else "above."))

    def action_next_problem(self) -> None:
        """Next bad line, finding, or marker that did not verify."""
        self._step_problem(forward=True)

    def action_previous_problem(self) -> None:
        """Previous problem."""
        self._step_problem(forward=False)

    def _step_problem(self, forward: bool) -> None:
        blocks = self._blocks_of_lines(self.problem_lines())
        if not self.view.jump(blocks, forward, self.view.is_problem_row):
            what = "problems" if blocks else "problems found (so far)"
            self._say(f"No more {what} " + ("below." if forward else "above."))

    def action_orphans(self) -> None:
        """The orphans screen: files in the artifact directory that no line names."""
        from transcript_view.viewer.screens.orphans import OrphansScreen

        if self.transcript is None:
            return
        if self.orphans is None:
            self._say("Still checking the artifact directory.")
            return
        self.app.push_screen(OrphansScreen(self.transcript.artifact_dir, self.orphans))

    def action_toggle_view(self) -> None:
        """Switch between the file as written and the conversation the model is sent next."""
        view = self.view
        if view.doc is self.model_doc and self.file_doc is not None:
            line = self._cursor_line()
            view.show_document(self.file_doc, line)
            self.header.view_name = "file view"
        elif self.model_doc is not None:
            line = self._cursor_line()
            view.show_document(self.model_doc, line)
            self.header.view_name = "model view: what the model is sent next"
        else:
            self._say("The model view is ready once the transcript has been read.")
            return
        if view.search_query:
            view.search(view.search_query)

    def action_search(self) -> None:
        """Show the search box."""
        box = self.query_one("#search", Input)
        box.add_class("active")
        box.focus()

    @on(Input.Submitted, "#search")
    def _run_search(self, event: Input.Submitted) -> None:
        query = event.value.strip()
        box = event.input
        box.remove_class("active")
        self.view.focus()
        if not query:
            self.action_clear_search()
            return
        self.header.search_status = f"/{query}: searching…"
        self.view.search(query)

    def action_clear_search(self) -> None:
        """Escape: close the search box, else end the search, else back to the listing."""
        box = self.query_one("#search", Input)
        if box.has_class("active"):
            box.remove_class("active")
            self.view.focus()
            return
        if self.view.search_query:
            self.view.search("")
            self.header.search_status = ""
            return
        from transcript_view.viewer.screens.listing import ListingScreen

        stack = self.app.screen_stack
        if len(stack) >= 2 and isinstance(stack[-2], ListingScreen):
            self.dismiss()

    def _artifact_path(self, key: SiteKey) -> Path | None:
        site = self.ctx.site_by_key.get(key)
        if site is None or self.transcript is None:
            return None
        m = site.marker
        if m.kind is not MarkerKind.STORED or not m.safe_name or m.file is None:
            return None
        return self.transcript.artifact_dir / m.file

    def action_pager(self) -> None:
        """Open the focused artifact in `$PAGER` (the app is suspended meanwhile)."""
        key = self._focused_site()
        if key is None:
            return
        path = self._artifact_path(key)
        if path is None:
            self._say("This marker has no artifact to open.", severity="warning")
            return
        resolved, why = resolve_inside(path.parent, path.name)
        if resolved is None:
            self._say(f"{path.name}: {why}", severity="error")
            return
        pager = shlex.split(os.environ.get("PAGER") or "less") or ["less"]
        try:
            with self.app.suspend():
                subprocess.call([*pager, str(resolved)])
        except SuspendNotSupported:
            self._say("This terminal cannot hand over to a pager.", severity="error")
        except OSError as exc:
            self._say(f"{pager[0]}: {exc.strerror or exc}", severity="error")

    def action_copy(self) -> None:
        """Copy the focused artifact's path, or the marker text when nothing was stored."""
        key = self._focused_site()
        if key is None:
            return
        path = self._artifact_path(key)
        if path is not None:
            self.app.copy_to_clipboard(str(path))
            self._say(f"Copied the path of {path.name}")
            return
        site = self.ctx.site_by_key.get(key)
        if site is not None:
            self.app.copy_to_clipboard(site.marker.text)
            self._say("Copied the marker text")

    def action_follow(self) -> None:
        """Toggle following a transcript that is still being written."""
        self.following = not self.following
        self.header.following = self.following
        # An incremental analysis keeps its pass's id tables alive (about 50 MB for
        # a gigabyte transcript): only while following, where it saves a full pass
        # per append.
        self._analyser = (
            Analyser(self.transcript) if self.following and self.transcript is not None else None
        )
        if self.file_doc is not None and isinstance(self.file_doc.source, FileSource):
            self.file_doc.source.following = self.following
        if self.following:
            self._follow_timer = self.set_interval(FOLLOW_INTERVAL, self.action_poll)
            self._say("Following: new lines appear as they are written.")
        else:
            if self._follow_timer is not None:
                self._follow_timer.stop()
                self._follow_timer = None
            self._say("Stopped following.")

    def action_poll(self) -> None:
        """Look for appended lines now (the follow timer calls this)."""
        if self.transcript is not None and not self._polling:
            self._polling = True  # one look at a time; the timer may fire while one runs
            self._poll(self.transcript)

    def action_help(self) -> None:
        """The help screen: every key and every badge."""
        from transcript_view.viewer.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(HELP_KEYS))

    def action_quit(self) -> None:
        """Quit the app."""
        self.app.exit()


class _EmptySource:
    """The source of a transcript that could not be opened: no blocks."""

    view = "file"

    def available(self) -> int:
        return 0

    def build(self, index: int, expand: bool = False, *, count_only: bool = False) -> Block:
        raise IndexError(index)

    def line_of(self, index: int) -> int:
        return 0

    def index_of_line(self, line: int) -> int | None:
        return None

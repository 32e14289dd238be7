"""The transcript screen: header, transcript view, search box, footer, and its workers.

The screen starts the workers that read files (the line index, the analysis
pass, artifact hashing, inline artifacts, follow-mode polls) and handles their
messages by handing each to the one object that owns what it is about:

- `viewer.load.LoadState`: how far loading has got (the header's phase);
- `viewer.context.AnalysisState`: the analysis on show and its
  `core.ledger.VerificationLedger`, which alone decides badges, findings and
  problems (the handlers here only feed it and read it);
- `viewer.inline.InlineArtifacts`: artifacts opened under their marker;
- the `TranscriptView`: its documents, layout, cursor and search.

Worker bodies are the plain functions of `viewer.workers`; the `@work`
methods here only run them in a thread with this screen's `post_message`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import BindingType
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input
from textual.worker import get_current_worker

from transcript_view.core.analyser import Analyser
from transcript_view.core.analysis import Analysis
from transcript_view.core.markers import MarkerKind
from transcript_view.core.records import SiteKey
from transcript_view.core.text import human_size
from transcript_view.core.transcript import Transcript, TranscriptError
from transcript_view.core.verification import FileCheck, MarkerState, OrphanFile, resolve_inside
from transcript_view.viewer import workers
from transcript_view.viewer.context import AnalysisState
from transcript_view.viewer.fileview import ArtifactScreen
from transcript_view.viewer.header import TranscriptHeader
from transcript_view.viewer.inline import Closed, Index, InlineArtifacts, Refused
from transcript_view.viewer.keys import Owner, bindings, help_rows
from transcript_view.viewer.load import LoadState, Phase
from transcript_view.viewer.messages import (
    AnalysisFailed,
    AnalysisReady,
    Appended,
    ArtifactChecked,
    ArtifactGrew,
    ArtifactOpened,
    ArtifactOpenFailed,
    IndexProgress,
    OrphansFound,
    Progress,
)
from transcript_view.viewer.rows import Row
from transcript_view.viewer.screens.help import HelpScreen
from transcript_view.viewer.screens.listing import ListingScreen
from transcript_view.viewer.screens.orphans import OrphansScreen
from transcript_view.viewer.transcript_view import TranscriptView

#: Seconds between follow-mode polls.
FOLLOW_INTERVAL = 1.0

#: (keys, what they do) for the help screen, generated from the key table (`viewer.keys`).
HELP_KEYS: list[tuple[str, str]] = help_rows()


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

    #: Generated from the key table (`viewer.keys`), which also writes the help and palette.
    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.SCREEN)

    def __init__(self, path: Path) -> None:
        """Show the transcript at `path` (opened read-only on compose)."""
        super().__init__()
        self.path = Path(path)
        self.transcript: Transcript | None = None
        self.error: str | None = None
        self.load = LoadState()
        self.state = AnalysisState()
        """The analysis and its verification ledger; written only by the handlers here."""
        self.artifacts = InlineArtifacts()
        self.following = False
        self._follow_timer: Timer | None = None
        self._analyser: Analyser | None = None

    # -- composition ---------------------------------------------------------------------------

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
        self._view = TranscriptView(self.transcript, self.state, self.artifacts, id="transcript")
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

    @property
    def analysis(self) -> Analysis | None:
        """The analysis on show (None until the first pass lands)."""
        return self.state.analysis

    @property
    def orphans(self) -> list[OrphanFile] | None:
        """Files in the artifact directory that no line names (None until listed)."""
        ledger = self.state.ledger
        return ledger.orphans if ledger is not None else None

    def on_mount(self) -> None:
        """Start indexing at once; everything else follows from its messages."""
        self.view.focus()
        if self.transcript is None:
            self.load.failed_to_open()
            self._show_phase()
            self._say(self.error or "cannot open", title="Cannot open", severity="error")
            return
        self._show_phase()
        self._index(self.transcript)

    def on_unmount(self) -> None:
        """Release file descriptors (the transcript and any open artifacts)."""
        self.artifacts.close_all()
        if self.transcript is not None:
            self.transcript.close()

    # -- workers: each runs a `viewer.workers` function in a thread ----------------------------

    @work(thread=True, group="index")
    def _index(self, transcript: Transcript) -> None:
        """The line index: the first megabyte at once, then the rest in steps."""
        worker = get_current_worker()
        workers.index_transcript(transcript, self.post_message, lambda: worker.is_cancelled)

    @work(thread=True, group="analysis")
    def _analyse(self, transcript: Transcript, analyser: Analyser | None) -> None:
        """The one streaming pass: operations, markers, replay, line problems."""
        workers.run_analysis(transcript, analyser, self.post_message)

    # Exclusive: a re-analysis (follow mode) hashes what its ledger wants and
    # lists orphans against its own named files; an older run must not land after.
    @work(thread=True, group="verify", exclusive=True)
    def _verify(
        self, directory: Path, names: list[str], named: set[str], uncounted: frozenset[str]
    ) -> None:
        """Hash each wanted artifact (streamed), then list the directory's orphans."""
        worker = get_current_worker()
        workers.verify_files(
            directory, names, named, self.post_message, lambda: worker.is_cancelled, uncounted
        )

    @work(thread=True, group="artifact")
    def _open_artifact(
        self, key: SiteKey, directory: Path, name: str, check: FileCheck | None, row_bytes: int
    ) -> None:
        """Index an artifact as rows, showing the first rows while the rest is indexed."""
        worker = get_current_worker()
        workers.open_artifact(
            key, directory, name, check, row_bytes, self.post_message,
            lambda: worker.is_cancelled,
        )

    @work(thread=True, group="follow")
    def _poll(self, transcript: Transcript) -> None:
        """Follow mode: index what was appended since the last look."""
        workers.poll_transcript(transcript, self.post_message)

    # -- loading: index, analysis, verification ------------------------------------------------

    def _show_phase(self, done: int = 0, total: int = 0) -> None:
        header = self.header
        header.phase, header.done, header.total = self.load.phase.label, done, total

    def on_index_progress(self, msg: IndexProgress) -> None:
        """Show progress, lay out what is indexed, and analyse once the index is whole."""
        self.header.lines = msg.lines
        if not msg.complete:
            self._show_phase(msg.done_bytes, msg.total_bytes)
        self.view.index_grew(msg.complete)
        if msg.complete:
            self._start_analysis()

    def _start_analysis(self) -> None:
        if self.transcript is None:
            return
        first = self.analysis is None
        if self.load.want_analysis(first):
            if first:
                self._show_phase()
            self._analyse(self.transcript, self._analyser)

    def on_progress(self, msg: Progress) -> None:
        """The first pass moved on: the header's progress indicator follows."""
        if self.analysis is None and self.load.phase is Phase.READING:
            self._show_phase(msg.done, msg.total)

    def on_analysis_failed(self, msg: AnalysisFailed) -> None:
        """Say so; the file view keeps working without operation states."""
        self.load.analysis_failed()
        self._show_phase()
        if self._analyser is not None and self.transcript is not None:
            self._analyser = Analyser(self.transcript)  # it may be half-fed: start over
        self._say(msg.error, title="Analysis failed", severity="error")

    def on_analysis_ready(self, msg: AnalysisReady) -> None:
        """A new analysis: a new index and ledger, badges, the model view, hashing."""
        again = self.load.analysis_landed()
        analysis = msg.analysis
        changed = self.state.adopt(analysis)
        header = self.header
        header.envelopes = analysis.envelopes
        header.lines = analysis.lines
        self.view.analysis_changed(changed)
        self._update_counts()
        ledger = self.state.ledger
        if self.transcript is not None and ledger is not None:
            wanted = ledger.wanted()
            self._show_phase(0, len(wanted))
            uncounted = frozenset(n for n in wanted if not ledger.counts_chars(n))
            self._verify(self.transcript.artifact_dir, wanted, analysis.named_files(), uncounted)
        if again and self.transcript is not None:
            self._analyse(self.transcript, self._analyser)

    def on_artifact_checked(self, msg: ArtifactChecked) -> None:
        """One file hashed: the ledger takes it; the markers it changed are repainted."""
        self.header.done, self.header.total = msg.done, msg.total
        changed = self.state.record(msg.check)
        ledger = self.state.ledger
        if ledger is not None:
            self.artifacts.checked(msg.check, ledger.state)
        for line in changed:
            self.view.rebuild_line(line)
        self._update_counts()

    def on_orphans_found(self, msg: OrphansFound) -> None:
        """The artifact directory is listed: orphans count as problems too."""
        self.state.record_orphans(msg.orphans)
        self.load.checked()
        self._show_phase()
        self._update_counts()

    def _update_counts(self) -> None:
        """The header's counts: the ledger's, as they are now."""
        ledger = self.state.ledger
        if ledger is None:
            return
        header = self.header
        header.markers = ledger.markers
        header.verified = ledger.verified
        header.problems = len(ledger.problems())

    # -- inline artifacts ----------------------------------------------------------------------

    @on(TranscriptView.ArtifactRequested)
    def _toggle_artifact(self, msg: TranscriptView.ArtifactRequested) -> None:
        key = msg.site
        outcome = self.artifacts.toggle(key, self.state.index.site_by_key.get(key),
                                        self.view.text_width)
        if isinstance(outcome, Closed):
            self.view.rebuild_line(key.line)
            self.view.cursor_to_site(key)
        elif isinstance(outcome, Refused):
            self._refuse(outcome)
        elif isinstance(outcome, Index):
            self._start_index(outcome)

    def _start_index(self, job: Index) -> None:
        if self.transcript is None:
            return
        self._open_artifact(
            job.key, self.transcript.artifact_dir, job.name,
            self.state.check_of(job.name), job.row_bytes,
        )

    @on(TranscriptView.Rewrapped)
    def _rewrap_artifacts(self, msg: TranscriptView.Rewrapped) -> None:
        """Open artifacts are cut into rows of the old width: index them again at the new."""
        for job in self.artifacts.rewrap(msg.width, self.state.index.site_by_key):
            self._start_index(job)

    def on_artifact_opened(self, msg: ArtifactOpened) -> None:
        """Splice the artifact's rows in under its marker (or swap in a rewrapped copy)."""
        key = msg.site_key
        ledger = self.state.ledger
        shown = self.artifacts.opened(
            key,
            msg.lines,
            self.state.check_of(msg.check.name) or msg.check,
            self.state.index.site_by_key.get(key),
            ledger.state(key) if ledger is not None else MarkerState.CHECKING,
            self.view.text_width,
        )
        if shown is None:
            return
        self.view.rebuild_line(key.line)
        if shown.reindex is not None:
            self._start_index(shown.reindex)

    def on_artifact_grew(self, msg: ArtifactGrew) -> None:
        """More of an open artifact is indexed: its rows grow under the marker."""
        art = self.artifacts.growing(msg.site_key, msg.lines)
        if art is not None:
            self.view.grow_artifact(art, lambda: self.artifacts.grow(art, msg.rows))

    def on_artifact_open_failed(self, msg: ArtifactOpenFailed) -> None:
        """Say why nothing opened (nothing, if it was closed meanwhile)."""
        refusal = self.artifacts.failed(msg.site_key, msg.reason)
        if refusal is not None:
            self._refuse(refusal)

    # -- follow mode ---------------------------------------------------------------------------

    def on_appended(self, msg: Appended) -> None:
        """Follow mode: lay out the new lines and analyse again."""
        self.load.polled()
        if self.transcript is None:
            return
        self.header.lines = self.transcript.line_count
        self.view.appended(msg.new_lines)
        if msg.new_lines:
            self._start_analysis()

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
        self.view.set_following(self.following)
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
        if self.transcript is not None and self.load.want_poll():
            self._poll(self.transcript)

    # -- search --------------------------------------------------------------------------------

    def on_transcript_view_search_finished(self, msg: TranscriptView.SearchFinished) -> None:
        """The view's search is done: say how many blocks matched."""
        n = msg.count
        self.header.search_status = f"/{msg.query}: {n:,} block{'s' if n != 1 else ''} (n/N)"

    def action_search(self) -> None:
        """Show the search box."""
        box = self.query_one("#search", Input)
        box.add_class("active")
        box.focus()

    @on(Input.Submitted, "#search")
    def _run_search(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.remove_class("active")
        self.view.focus()
        if not text:
            self.action_clear_search()
            return
        self.header.search_status = f"/{text}: searching…"
        self.view.search(text)

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
        stack = self.app.screen_stack
        if len(stack) >= 2 and isinstance(stack[-2], ListingScreen):
            self.dismiss()

    # -- helpers -------------------------------------------------------------------------------

    def _say(self, message: str, **kwargs: Any) -> None:
        """A toast that never parses markup: messages quote file names from transcripts."""
        self.notify(message, markup=False, **kwargs)

    def _refuse(self, refusal: Refused) -> None:
        if refusal.title is not None:
            self._say(refusal.reason, title=refusal.title, severity=refusal.severity)
        else:
            self._say(refusal.reason, severity=refusal.severity)

    def _blocks_of_lines(self, lines: list[int]) -> list[int]:
        source = self.view.doc.source
        out = {source.index_of_line(line) for line in lines}
        return sorted(i for i in out if i is not None)

    def _focused_site(self) -> SiteKey | None:
        key = self.view.current_site()
        if key is None:
            self._say("Move the cursor to a marker first (n / N).", severity="warning")
        return key

    def _artifact_path(self, key: SiteKey) -> Path | None:
        site = self.state.index.site_by_key.get(key)
        if site is None or self.transcript is None:
            return None
        m = site.marker
        if m.kind is not MarkerKind.STORED or not m.safe_name or m.file is None:
            return None
        return self.transcript.artifact_dir / m.file

    # -- actions -------------------------------------------------------------------------------

    def action_activate(self) -> None:
        """Enter: open/close the artifact of a marker, or expand/collapse a long block."""
        self.view.action_activate()

    @on(TranscriptView.LineRequested)
    def _page_line(self, msg: TranscriptView.LineRequested) -> None:
        """A line too long to lay out inline: page through its bytes in a `FileView`.

        The pager reads the transcript itself, restricted to the line's byte range
        and cut into rows as wide as the view, so nothing is parsed or copied.
        """
        if self.transcript is None:
            return
        start, end = self.transcript.line_span(msg.line)
        title = f"{self.path.name} · line {msg.line:,} · {human_size(end - start)}"
        self.app.push_screen(
            ArtifactScreen(
                self.transcript.path,
                title,
                row_bytes=max(self.view.text_width - 2, 16),
                span=(start, end),
            )
        )

    def action_next_marker(self) -> None:
        """Next marker, or next search hit while a search is active."""
        self._step(forward=True)

    def action_previous_marker(self) -> None:
        """Previous marker, or previous search hit while a search is active."""
        self._step(forward=False)

    def _step(self, forward: bool) -> None:
        view = self.view
        if view.search_query:
            if not view.hits:
                self._say("No hits.")
            elif not view.step_hit(forward):
                self._say("No more hits " + ("below." if forward else "above."))
            return
        analysis = self.analysis
        if analysis is None:
            self._say("Still reading the transcript; markers are not known yet.")
            return
        blocks = self._blocks_of_lines(sorted({s.line for s in analysis.sites}))
        seen: set[SiteKey] = set()

        def first_row_of_marker(row: Row) -> bool:
            if row.kind not in ("marker", "quoted") or row.site is None or row.site in seen:
                return False
            seen.add(row.site)
            return True

        if not view.jump(blocks, forward, first_row_of_marker):
            self._say("No more markers " + ("below." if forward else "above."))

    def action_next_problem(self) -> None:
        """Next bad line, finding, or marker that did not verify."""
        self._step_problem(forward=True)

    def action_previous_problem(self) -> None:
        """Previous problem."""
        self._step_problem(forward=False)

    def _step_problem(self, forward: bool) -> None:
        ledger = self.state.ledger
        lines = ledger.problem_lines() if ledger is not None else []
        blocks = self._blocks_of_lines(lines)
        if not self.view.jump(blocks, forward, self.view.is_problem_row):
            what = "problems" if blocks else "problems found (so far)"
            self._say(f"No more {what} " + ("below." if forward else "above."))

    def action_orphans(self) -> None:
        """The orphans screen: files in the artifact directory that no line names."""
        if self.transcript is None:
            return
        orphans = self.orphans
        if orphans is None:
            self._say("Still checking the artifact directory.")
            return
        self.app.push_screen(OrphansScreen(self.transcript.artifact_dir, orphans))

    def action_toggle_view(self) -> None:
        """Switch between the file as written and the conversation the model is sent next."""
        if not self.view.toggle_document():
            self._say("The model view is ready once the transcript has been read.")
            return
        self.header.view_name = (
            "model view: what the model is sent next" if self.view.showing_model else "file view"
        )

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
        site = self.state.index.site_by_key.get(key)
        if site is not None:
            self.app.copy_to_clipboard(site.marker.text)
            self._say("Copied the marker text")

    def action_help(self) -> None:
        """The help screen: every key and every badge."""
        self.app.push_screen(HelpScreen(HELP_KEYS))

    def action_quit(self) -> None:
        """Quit the app."""
        self.app.exit()

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

from pathlib import Path
from typing import Any, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input
from textual.worker import get_current_worker

from transcript_view.core.analyser import Analyser
from transcript_view.core.analysis import Analysis
from transcript_view.core.call_context import call_at_line
from transcript_view.core.formats.claude_code import session_dir, subagent_of
from transcript_view.core.formats.detect import Format, detect
from transcript_view.core.formats.model import SessionAnalysis, SpillSite
from transcript_view.core.formats.readers import artifact_dir_of
from transcript_view.core.formats.rules import record_copy
from transcript_view.core.markers import MarkerKind
from transcript_view.core.records import MarkerSite, SiteKey
from transcript_view.core.text import (
    COPY_TOAST_SECONDS,
    copied,
    human_size,
    plural,
    short_id,
    visible,
)
from transcript_view.core.transcript import Transcript, TranscriptError
from transcript_view.core.verification import FileCheck, MarkerState, OrphanFile
from transcript_view.viewer import pager, workers
from transcript_view.viewer.context import AnalysisState
from transcript_view.viewer.context_screen import ContextScreen
from transcript_view.viewer.fileview import ArtifactScreen
from transcript_view.viewer.footer import KeyFooter
from transcript_view.viewer.header import NEW_LINES_META, TranscriptHeader, words_for
from transcript_view.viewer.inline import Closed, Index, InlineArtifacts, Refused, opened_name
from transcript_view.viewer.keys import Owner, bindings, help_rows
from transcript_view.viewer.load import FoundSoFar, LoadState, Phase
from transcript_view.viewer.messages import (
    AnalysisFailed,
    AnalysisReady,
    Appended,
    ArtifactGrew,
    ArtifactOpened,
    ArtifactOpenFailed,
    ArtifactsChecked,
    FillsMade,
    IndexProgress,
    LinesFound,
    OrphansFound,
    Progress,
    RowsMeasured,
)
from transcript_view.viewer.rows import Row
from transcript_view.viewer.screens.help import HelpScreen
from transcript_view.viewer.screens.listing import ListingScreen
from transcript_view.viewer.screens.orphans import OrphansScreen
from transcript_view.viewer.screens.sessions import SessionsScreen
from transcript_view.viewer.session_blocks import spill_words
from transcript_view.viewer.transcript_view import TranscriptView

#: Seconds between follow-mode polls.
FOLLOW_INTERVAL = 1.0

#: Seconds a first pass that counts rows waits for the view's first width at most.
PASS_HOLD_SECONDS = 1.0

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

    def __init__(self, path: Path, format: Format | None = None) -> None:
        """Show the transcript at `path` (opened read-only on compose).

        `format` forces how it is read; by default its first lines tell (`detect`).
        """
        super().__init__()
        self.path = Path(path)
        self._forced = format
        self.format = Format.REFERENCE
        """The transcript's format, known once it is opened (compose)."""
        self.transcript: Transcript | None = None
        self.error: str | None = None
        self.load = LoadState()
        self.state = AnalysisState()
        """The analysis and its verification ledger; written only by the handlers here."""
        self.artifacts = InlineArtifacts()
        self.following = False
        self._follow_timer: Timer | None = None
        self._pass_hold: Timer | None = None
        """A first pass waiting for the view's first width (`_start_pass`)."""
        self._analyser: Analyser | None = None
        self._found = FoundSoFar()
        """Markers and line problems the first analysis found so far (`LinesFound`)."""

    # -- composition ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Header, the transcript, a search box that appears on `/`, the footer."""
        try:
            self.transcript = Transcript(self.path)
            self.format = self._forced or detect(self.path).format or Format.REFERENCE
        except TranscriptError as exc:
            self.error = str(exc)
            if self.transcript is not None:  # opened, but cannot be read (a damaged .zst)
                self.transcript.close()
                self.transcript = None
        if self.transcript is not None and self.format not in (Format.REFERENCE, Format.CODEX):
            # Markers name sidecars in the session's (Qwen Code: the project's) tool-results/,
            # not `<stem>.artifacts/`.
            self.transcript.artifact_dir = artifact_dir_of(self.path, self.format) or (
                self.transcript.artifact_dir
            )
        header = TranscriptHeader()
        header.name_shown = self.path.name
        subagent = subagent_of(self.path) if self.format is Format.CLAUDE_CODE else None
        if subagent is not None:
            of = f" of session {short_id(subagent, 13)}" if subagent else ""
            header.about = f"a subagent's transcript{of}: every line is its sidechain"
        header.words = words_for(self.format)
        self._header = header
        yield header
        self._view = TranscriptView(
            self.transcript, self.state, self.artifacts, format=self.format, id="transcript"
        )
        self._view.ctx.subagent_file = subagent is not None
        yield self._view
        yield Input(
            placeholder="search the transcript (enter to search, escape to close)", id="search"
        )
        yield KeyFooter(compact=True)

    @property
    def header(self) -> TranscriptHeader:
        """The header widget (kept from compose: messages may land after unmount)."""
        return self._header

    @property
    def view(self) -> TranscriptView:
        """The transcript widget."""
        return self._view

    @property
    def analysis(self) -> Analysis | SessionAnalysis | None:
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
        if self.transcript.compressed:
            self.load.index_grew(decompressing=True, exported=self.transcript.exported)
        self._show_phase()
        self._index(self.transcript)

    def on_unmount(self) -> None:
        """Release file descriptors (the transcript and any open artifacts)."""
        self.artifacts.close_all()
        if self.transcript is not None:
            self.transcript.close()

    # -- workers: each runs a `viewer.workers` function in a thread ----------------------------

    @work(thread=True, group="index", description="index the lines")
    def _index(self, transcript: Transcript) -> None:
        """The line index: the first megabyte at once, then the rest in steps."""
        worker = get_current_worker()
        workers.index_transcript(transcript, self.post_message, lambda: worker.is_cancelled)

    @work(thread=True, group="analysis", description="analyse the transcript")
    def _analyse(self, transcript: Transcript, analyser: Analyser | None, width: int) -> None:
        """The one streaming pass: operations, markers, replay, line problems.

        With a `width`, it also counts the file view's rows (`RowsMeasured`).
        """
        worker = get_current_worker()
        workers.run_analysis(
            transcript,
            analyser,
            self.post_message,
            self.format,
            lambda: worker.is_cancelled,
            width,
        )

    def _start_pass(self, transcript: Transcript, *, held: bool = False) -> None:
        """Start the analysis; the view waits for its row counts if it brings them.

        A pass that would count rows waits for the view's first width (`Sized`):
        the index of a small file can be whole before the screen's first layout,
        and a pass started without a width left every block to be built here
        a second time. `held`: it waited already (at most `PASS_HOLD_SECONDS`,
        for a view that never gets a width).
        """
        width = 0
        if workers.measures_rows(transcript, self._analyser):
            width = self.view.expect_rows()
            if not width and not held:
                self._pass_hold = self.set_timer(PASS_HOLD_SECONDS, self._release_pass)
                return
        if not width:
            self.view.rows_done()  # expected while indexing, but not coming after all
        self._analyse(transcript, self._analyser, width)

    @on(TranscriptView.Sized)
    def _release_pass(self) -> None:
        """The view has a width (or waited long enough): start the pass it held."""
        hold, self._pass_hold = self._pass_hold, None
        if hold is None or self.transcript is None:
            return
        hold.stop()
        self._start_pass(self.transcript, held=True)

    # Exclusive: a re-analysis (follow mode) hashes what its ledger wants and
    # lists orphans against its own named files; an older run must not land after.
    @work(thread=True, group="verify", exclusive=True, description="check the files")
    def _verify(self, job: workers.VerifyJob) -> None:
        """Hash each wanted artifact (streamed), then list the directory's orphans."""
        worker = get_current_worker()
        workers.verify_files(job, self.post_message, lambda: worker.is_cancelled)

    @work(thread=True, group="artifact", description="open an artifact")
    def _open_artifact(
        self, key: SiteKey, directory: Path, name: str, check: FileCheck | None, row_bytes: int
    ) -> None:
        """Index an artifact as rows, showing the first rows while the rest is indexed."""
        worker = get_current_worker()
        workers.open_artifact(
            key,
            directory,
            name,
            check,
            row_bytes,
            self.post_message,
            lambda: worker.is_cancelled,
        )

    @work(thread=True, group="artifact", description="open a record")
    def _open_record(
        self, key: SiteKey, transcript: Transcript, field: str, row_bytes: int
    ) -> None:
        """Open the record of Claude Code that holds a missing sidecar's output, as rows."""
        worker = get_current_worker()
        workers.open_record(
            key, transcript, field, row_bytes, self.post_message, lambda: worker.is_cancelled
        )

    @work(thread=True, group="follow", description="follow the file")
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
        exported = self.transcript is not None and self.transcript.exported
        self.load.index_grew(msg.decompressing, exported)
        if not msg.complete:
            self._show_phase(msg.done_bytes, msg.total_bytes)
        size = max(msg.total_bytes, msg.size_bytes)  # a compressed file's: at least this
        if self.analysis is None and workers.measures_rows(size, None):
            # The analysis will count the rows: lay out only the first screen while
            # indexing (counting more here starved the index of the GIL).
            self.view.expect_rows(keep=True)
        self.view.index_grew(msg.complete)
        if msg.complete:
            problem = self.transcript.decompression_problem if self.transcript else None
            if problem is not None:
                exported = self.transcript is not None and self.transcript.exported
                verb = "read" if exported else "decompressed"
                what = "session" if exported else "compressed file"
                self._say(
                    f"{problem}. Shown: the {plural(msg.lines, 'line')} {verb} before it.",
                    title=f"Cannot read all of this {what}",
                    severity="error",
                )
            self._start_analysis()

    def _start_analysis(self) -> None:
        if self.transcript is None:
            return
        first = self.analysis is None
        if self.load.want_analysis(first):
            if first:
                self._show_phase()
            self._start_pass(self.transcript)

    def on_progress(self, msg: Progress) -> None:
        """The first pass moved on: the header's progress indicator follows."""
        if self.analysis is None and self.load.phase is Phase.READING:
            self._show_phase(msg.done, msg.total)

    def on_rows_measured(self, msg: RowsMeasured) -> None:
        """Row counts the analysis took as it read: the file view lays them out."""
        self.view.rows_measured(msg.first, msg.rows, msg.width)

    def on_lines_found(self, msg: LinesFound) -> None:
        """More of the file is read: its markers and bad lines can be stepped to already."""
        self._found.markers.update(msg.markers)
        self._found.problems.update(msg.problems)

    def on_analysis_failed(self, msg: AnalysisFailed) -> None:
        """Say so; the file view keeps working without operation states."""
        self.view.rows_done()
        self.load.analysis_failed()
        self._show_phase()
        if self._analyser is not None and self.transcript is not None:
            self._analyser = Analyser(self.transcript)  # it may be half-fed: start over
        self._say(msg.error, title="Analysis failed", severity="error")

    def on_analysis_ready(self, msg: AnalysisReady) -> None:
        """A new analysis: a new index and ledger, badges, the model view, hashing."""
        again = self.load.analysis_landed()
        self.view.rows_done()  # every count the pass took came before it
        analysis = msg.analysis
        changed = self.state.adopt(analysis)
        header = self.header
        header.envelopes = analysis.envelopes
        header.lines = analysis.lines
        self.view.analysis_changed(changed)
        self._update_counts()
        ledger = self.state.ledger
        if self.transcript is not None and ledger is not None:
            job = workers.VerifyJob.of(ledger)
            self._show_phase(0, len(job.names))
            self._verify(job)
        if again and self.transcript is not None:
            self._start_pass(self.transcript)

    def on_artifacts_checked(self, msg: ArtifactsChecked) -> None:
        """Files hashed: the ledger takes them; the markers they changed are redrawn."""
        if msg.analysis is not None and msg.analysis is not self.state.analysis:
            return  # asked for by a ledger since replaced (see `ArtifactsChecked.analysis`)
        self.header.done, self.header.total = msg.done, msg.total
        rows: set[int] = set()
        look: set[int] = set()
        ledger = self.state.ledger
        for check in msg.checks:
            recorded = self.state.record(check)
            rows.update(recorded.rows)
            look.update(recorded.look)
            if ledger is not None:
                self.artifacts.checked(check, ledger.state)
        opened = {key.line for key in self.artifacts}  # an open artifact shows what was checked
        rows |= look & opened
        self.view.lines_changed(sorted(rows), same_rows=sorted(look - rows))
        self._update_counts()

    def on_orphans_found(self, msg: OrphansFound) -> None:
        """The artifact directory is listed: orphans are counted (apart from problems)."""
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
        header.verified = ledger.agreeing
        header.problems = ledger.problem_count
        # Apart from the problems: `p` visits lines, and no line names an orphan.
        header.orphans = len(ledger.orphan_warnings()) if ledger.orphans is not None else None

    # -- inline artifacts ----------------------------------------------------------------------

    @on(TranscriptView.ArtifactRequested)
    def _toggle_artifact(self, msg: TranscriptView.ArtifactRequested) -> None:
        key = msg.site
        site = self.state.index.site_by_key.get(key)
        ledger = self.state.ledger
        copy = (
            record_copy(site, ledger.state(key))
            if isinstance(site, SpillSite) and ledger is not None
            else None
        )
        outcome = self.artifacts.toggle(key, site, self.view.text_width, copy)
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
        if job.record:
            self._open_record(job.key, self.transcript, job.name, job.row_bytes)
            return
        self._open_artifact(
            job.key,
            self.transcript.artifact_dir,
            job.name,
            self.state.check_of(job.name),
            job.row_bytes,
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
        """Follow mode: lay out what changed and analyse again.

        A poll can fall between two writes of one line: the line is counted when
        its first part arrives, so its completion adds none (`new_lines` is 0)
        and only `Transcript.last_line_grew` says it must be read again.
        """
        self.load.polled()
        transcript = self.transcript
        if transcript is None:
            return
        self.header.lines = transcript.line_count
        if not (msg.new_lines or transcript.last_line_grew):
            return
        self.view.appended(msg.new_lines)
        self._count_new_lines(msg.new_lines)
        self._start_analysis()

    def action_follow(self) -> None:
        """Toggle following a transcript that is still being written.

        Following reads the file as live (`Analyser(live=True)`, analysed at
        once): a last line still being written is no torn tail yet, and the
        last turn's unsettled calls are running. Stopping reads it once more as
        `--check` does (only the last line is read again), so the two agree.
        """
        if not self.following and self.transcript is not None and self.transcript.compressed:
            self._say(
                "An OpenCode session is read from its database as it was when it was opened: "
                "there is nothing to follow (open it again for its newer rows)."
                if self.transcript.exported
                else "A compressed rollout is not being written (Codex compresses one a week "
                "after its last line): there is nothing to follow."
            )
            return
        self.following = not self.following
        self.header.following = self.following
        transcript, was = self.transcript, self._analyser
        # An incremental analysis keeps its pass's id tables alive (about 50 MB for
        # a gigabyte transcript): only while following, where it saves a full pass
        # per append.
        self._analyser = (
            Analyser(transcript, live=True) if self.following and transcript is not None else None
        )
        self.view.set_following(self.following)
        if self.following:
            self._follow_timer = self.set_interval(FOLLOW_INTERVAL, self.action_poll)
            self._say("Following: new lines appear as they are written.")
            if self.analysis is not None:
                self._start_analysis()
            return
        if self._follow_timer is not None:
            self._follow_timer.stop()
            self._follow_timer = None
        self.header.new_lines = 0
        self._say("Stopped following.")
        analysis = self.analysis
        if transcript is None or was is None or not isinstance(analysis, Analysis):
            return
        if not analysis.live:
            return
        count = transcript.line_count
        if count and not transcript.line_terminated(count):
            self.view.appended(0)  # the line held back while it was being written
        was.live = False
        if self.load.want_analysis(first=False):
            self._analyse(transcript, was, 0)
        # else a pass is running: the one that follows it is a full, not live, pass.

    def action_poll(self) -> None:
        """Look for appended lines now (the follow timer calls this)."""
        if self.transcript is not None and self.load.want_poll():
            self._poll(self.transcript)

    def _count_new_lines(self, added: int) -> None:
        """Lines appended below while the view does not follow the end: "+N new lines ↓".

        The count goes once the cursor reaches the last row (G, end, or a click
        on the count itself: `_jump_to_new_lines`).
        """
        view = self.view
        if added <= 0 or view.stick_to_end or not self.following:
            return
        self.header.new_lines += added
        self.watch(view, "cursor", self._saw_new_lines, init=False)

    def _saw_new_lines(self) -> None:
        """The cursor moved: on the last row, the new lines have been seen."""
        view = self.view
        if self.header.new_lines and view.cursor >= view.doc.total_rows - 1:
            self.header.new_lines = 0

    @on(events.Click, "TranscriptHeader")
    def _jump_to_new_lines(self, event: events.Click) -> None:
        """A click on the header's "+N new lines ↓": to the end, where they are."""
        if self.header.new_lines and event.style.meta.get(NEW_LINES_META):
            self.header.new_lines = 0
            self.view.action_bottom()

    # -- search --------------------------------------------------------------------------------

    def on_transcript_view_search_advanced(self, msg: TranscriptView.SearchAdvanced) -> None:
        """The view's search moved on: how far through the file, and the hits so far."""
        percent = msg.done * 100 // msg.total if msg.total else 0
        found = f"{msg.hits:,} hit{'s' if msg.hits != 1 else ''} so far"
        self.header.search_status = f"/{msg.query}: searching {percent}% ({found})"

    def on_transcript_view_search_finished(self, msg: TranscriptView.SearchFinished) -> None:
        """The view's search is done: say how many blocks matched."""
        n = msg.count
        self.header.search_status = f"/{msg.query}: {n:,} block{'s' if n != 1 else ''} (n/N)"
        if msg.wrapped:
            self._say("No hit below the cursor: search wrapped to the first hit.")

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

    @on(TranscriptView.LinkRequested)
    def _open_link(self, msg: TranscriptView.LinkRequested) -> None:
        """Enter on a subagent's row: its transcript, on top (escape comes back)."""
        analysis = self.analysis
        path = analysis.links.get(msg.line) if isinstance(analysis, SessionAnalysis) else None
        if path is not None:
            self.app.push_screen(TranscriptScreen(path, self.format))

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
        if len(stack) >= 2 and isinstance(
            stack[-2], ListingScreen | SessionsScreen | TranscriptScreen
        ):
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
        if isinstance(site, MarkerSite) and site.marker.kind is not MarkerKind.STORED:
            return None
        name = opened_name(site)
        return self.transcript.artifact_dir / name if name is not None else None

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
                self._say("No hits so far; still searching." if view.search_running else "No hits.")
            else:
                step = view.step_hit(forward)
                if step == "wrapped":
                    self._say(f"Search wrapped to the {'first' if forward else 'last'} hit.")
                elif step == "none":
                    self._say("No hit to go to (a hit may span two rows).")
            return
        analysis = self.analysis
        if analysis is None and not self._found.markers:
            self._say("Still reading the transcript; no marker found yet.")
            return
        lines = self._found.markers if analysis is None else {s.line for s in analysis.sites}
        blocks = self._blocks_of_lines(sorted(lines))
        seen: set[SiteKey] = set()

        def first_row_of_marker(row: Row) -> bool:
            if row.kind not in ("marker", "quoted") or row.site is None or row.site in seen:
                return False
            seen.add(row.site)
            return True

        if not view.jump(blocks, forward, first_row_of_marker):
            said = "No more markers " + ("below." if forward else "above.")
            if analysis is None:
                said = f"No more markers {'below' if forward else 'above'} in the part read so far."
            self._say(said)

    def action_next_problem(self) -> None:
        """Next bad line, finding, or marker that did not verify."""
        self._step_problem(forward=True)

    def action_previous_problem(self) -> None:
        """Previous problem."""
        self._step_problem(forward=False)

    def _step_problem(self, forward: bool) -> None:
        ledger = self.state.ledger
        lines = ledger.problem_lines() if ledger is not None else sorted(self._found.problems)
        blocks = self._blocks_of_lines(lines)
        if self.view.jump(blocks, forward, self.view.is_problem_row):
            return
        if ledger is None and blocks:
            said = f"No more problems {'below' if forward else 'above'} in the part read so far."
        elif ledger is None:
            said = "No problems found so far: the transcript is still being read."
        elif blocks:
            said = "No more problems " + ("below." if forward else "above.")
        elif ledger.complete:
            said = "No problems found."
        else:
            # Hashing or the directory listing is still under way: more may come.
            said = "No problems found so far: artifacts are still being checked."
        orphans = len(ledger.orphan_warnings()) if ledger is not None else 0
        if orphans:
            them = "it" if orphans == 1 else "them"
            said += f" Besides: {plural(orphans, 'orphan')} (o lists {them})."
        self._say(said)

    def action_orphans(self) -> None:
        """The orphans screen: files in the artifact directory that no line names."""
        if self.transcript is None:
            return
        orphans = self.orphans
        if orphans is None:
            self._say("Still checking the artifact directory.")
            return
        self.app.push_screen(
            OrphansScreen(self.transcript.artifact_dir, orphans, empty=self._no_orphans_words())
        )

    def _no_orphans_words(self) -> str:
        """What the orphans screen says when it lists none: why there are none here."""
        analysis = self.analysis
        folder = self.transcript.artifact_dir.name + "/" if self.transcript is not None else ""
        if isinstance(analysis, SessionAnalysis) and analysis.artifact_dir is None:
            return (f"A {self.format.label} keeps no files beside it "
                    "(what it cut is gone): nothing can be orphaned.")
        if isinstance(analysis, SessionAnalysis) and not analysis.owns_orphans:
            main = session_dir(self.path).name + ".jsonl"
            return (f"This is a subagent's transcript: the orphans of the session's {folder} "
                    f"are listed with its main transcript, {main}.")
        if self.transcript is not None and not self.transcript.artifact_dir.is_dir():
            return f"No {folder} folder here: nothing was stored, or it was not copied along."
        return f"No orphaned artifacts: a line names every file in {folder}"

    def action_context_window(self) -> None:
        """The context screen: how full the model's context was at every call."""
        analysis = self.analysis
        if analysis is None or self.transcript is None:
            self._say("The context window is ready once the transcript has been read.")
            return
        self._make_fills(analysis)

    @work(thread=True, group="fills", exclusive=True, description="chart the calls")
    def _make_fills(self, analysis: Analysis | SessionAnalysis) -> None:
        """The context screen's fills, off the UI thread (`FillsMade` opens the screen)."""
        workers.make_fills(analysis, self.post_message)

    def on_fills_made(self, msg: FillsMade) -> None:
        """Open the context screen on the fills, if they are of the analysis on show."""
        if msg.analysis is not self.analysis or self.transcript is None:
            return  # a re-analysis (follow mode) came in between: `w` again draws it
        if self.app.screen is not self:
            return  # `w` twice, or another screen opened while they were made
        screen = ContextScreen(self.transcript, msg.analysis, fills=msg.fills)
        self.app.push_screen(screen, self._open_call)

    def _open_call(self, index: int | None) -> None:
        """Enter on the context screen: the model view at the chosen call."""
        analysis = self.analysis
        if index is None or analysis is None or not 0 <= index < len(analysis.calls):
            return
        self.show_call_context(index)

    def action_toggle_view(self) -> None:
        """Switch between the file as written and the conversation the model is sent next."""
        if not self.view.toggle_document():
            self._say("The model view is ready once the transcript has been read.")
            return
        self._name_view()

    def _name_view(self) -> None:
        """The header's name of what is on show."""
        if self.view.showing_model:
            self.header.view_name = self.view.model_header
        elif self.view.ctx.fold_records:
            self.header.view_name = "file view"
        else:
            self.header.view_name = "file view: every record"

    def action_call_context(self) -> None:
        """The model view at the cursor's call: the one whose response the line is part of,
        else the next call after the line (`core.call_context.call_at_line`)."""
        analysis = self.analysis
        if analysis is None:
            self._say("The context of a call is ready once the transcript has been read.")
            return
        line = self.view.cursor_line
        if line:
            index = call_at_line(analysis, line)
        elif self.view.showing_model:
            index = self.view.model_call  # the preamble: the call on show
        else:
            index = 0 if len(analysis.calls) else None
        self.show_call_context(index)

    def action_previous_call(self) -> None:
        """The model view at the call before the one on show (the next call: the last)."""
        self._step_call(-1)

    def action_next_call(self) -> None:
        """The model view at the call after the one on show (after the last: the next)."""
        self._step_call(1)

    def _step_call(self, step: int) -> None:
        analysis = self.analysis
        if analysis is None or not self.view.showing_model:
            self._say("[ and ] step from call to call in the model view (M opens it at a call).")
            return
        count = len(analysis.calls)
        at = self.view.model_call
        if step < 0:
            index: int | None = count - 1 if at is None else at - 1
            if index is None or index < 0:
                self._say("This is the first call." if count else "The file records no call.")
                return
        elif at is None:
            self._say("This is the next call: what the model is sent after the last line.")
            return
        else:
            index = at + 1 if at + 1 < count else None
        self.show_call_context(index)

    def show_call_context(self, index: int | None) -> None:
        """Show what the model was sent for call `index` (0-based; None: the next call)."""
        if not self.view.show_call_context(index):
            self._say("The context of a call is ready once the transcript has been read.")
            return
        self._name_view()

    def action_toggle_records(self) -> None:
        """Fold the agent's own records (what the model saw first) or show every one."""
        if self.format is Format.REFERENCE:
            self._say("Every line of an LLM::Agent transcript is part of the conversation: "
                      "there are no records of the agent's own to fold.")
            return
        fold = not self.view.ctx.fold_records
        self.view.set_fold_records(fold)
        self._name_view()
        self._say(
            "The agent's own records are folded: what the model saw comes first "
            "(enter on a folded row shows its records)."
            if fold
            else "Every record is shown, each on its own rows."
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
        if self._is_missing(key):
            site = self.state.index.site_by_key.get(key)
            copy = record_copy(site, MarkerState.MISSING) if isinstance(site, SpillSite) else None
            held = (
                f"; Claude Code's own record ({copy}) holds the full output: enter opens it here"
                if copy
                else ""
            )
            self._say(f"{path.name} is missing{held}.", severity="warning")
            return
        pager.page(self.app, path, self._say)  # the orphans screen's `e` shares this path

    def _is_missing(self, key: SiteKey) -> bool:
        """Whether the ledger found the marker's artifact missing."""
        ledger = self.state.ledger
        return ledger is not None and ledger.state(key) is MarkerState.MISSING

    def action_copy(self) -> None:
        """Copy the focused artifact's path, or the marker text when nothing was stored."""
        key = self._focused_site()
        if key is None:
            return
        path = self._artifact_path(key)
        if path is not None:
            gone = " (missing)" if self._is_missing(key) else ""
            self._copy(str(path), f"the path of {path.name}{gone}")
            return
        site = self.state.index.site_by_key.get(key)
        if isinstance(site, MarkerSite):
            self._copy(site.marker.text, "the marker text")
        elif site is not None:
            self._copy(site.text or spill_words(site.form, site, None), "the marker text")

    def _copy(self, text: str, what: str) -> None:
        """Copy `text`, and show it: the terminal may drop the copy without a word.

        Copying is an OSC 52 escape to the terminal, which tmux (by default) and
        others drop silently, so "Copied" alone could be untrue; the toast holds
        the text itself (sanitised, its middle cut if long) to select by hand.
        """
        self.app.copy_to_clipboard(text)
        self._say(copied(text), title=visible(f"Copied {what}"), timeout=COPY_TOAST_SECONDS)

    def action_help(self) -> None:
        """The help screen: every key and every badge."""
        self.app.push_screen(HelpScreen(HELP_KEYS))

    def action_quit(self) -> None:
        """Quit the app."""
        self.app.exit()

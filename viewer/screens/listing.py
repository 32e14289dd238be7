"""The directory listing: every transcript in a directory, each verified in the background.

`transcript-view DIR` starts here. Each `*.jsonl` file (not recursive, every
one, `*.events.jsonl` included) gets a row at once; a thread worker per
transcript runs `core.verification.verify` and fills in its counts as it finishes,
so a directory of big transcripts is usable before everything is hashed. At
most `VERIFY_AT_ONCE` verifications run together, to leave the UI a core.

Artifact directories (`*.artifacts`) whose transcript is gone are listed too:
their files are all orphans, and enter opens them in the orphans screen.

Subfolders come first: enter on one pushes a listing of it over this one, whose
first row, `../`, goes back (as escape does). A listing only ever goes down
from the directory the person opened, never above it: the root listing has no
`../`, and folders that are symlinks (which could lead anywhere) or hidden
(`.git`, `.venv`) are not listed. Like everything else here, it only reads.

Choosing a transcript posts `ListingScreen.Chosen(path)`; the app decides what
to do with it (normally open the transcript's main screen). The listing does
not open transcripts itself.

Cell colours are the screen's component classes over theme variables; a
theme switch restyles every filled row (`_restyle`).
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from transcript_view.core.artifacts import artifact_dir_for
from transcript_view.core.formats import NotATranscript
from transcript_view.core.ledger import explain_orphans
from transcript_view.core.report import verify
from transcript_view.core.text import human_size, plural
from transcript_view.core.verification import list_orphans
from transcript_view.viewer import sanitize
from transcript_view.viewer.footer import KeyFooter
from transcript_view.viewer.keys import SCREEN_NAMES, Owner, bindings, screen_rows
from transcript_view.viewer.palette import component_style
from transcript_view.viewer.screens.help import HelpScreen
from transcript_view.viewer.screens.orphans import OrphansScreen, RowTable

#: Cells of the status column (a verification error is cut with an ellipsis).
STATUS_WIDTH = 30

#: Verifications running at the same time (the machine may have two cores).
VERIFY_AT_ONCE = 2

TRANSCRIPT_SUFFIX = ".jsonl"
ARTIFACTS_SUFFIX = ".artifacts"

_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("name", "Name", False),
    ("size", "Size", True),
    ("envelopes", "Envelopes", True),
    ("markers", "Verified", True),
    ("errors", "Errors", True),
    ("warnings", "Warnings", True),
    ("status", "Status", False),
)


@dataclass(frozen=True)
class Entry:
    """One row of the listing."""

    name: str
    path: Path
    is_transcript: bool
    size: int = 0
    """Bytes for a transcript; number of entries for an artifact directory; number of
    transcripts directly inside for a folder."""
    is_folder: bool = False
    """A subfolder (enter lists it), or `UP`, the way back to the listing below."""


#: The name of the row that goes back up to the parent folder's listing.
UP = ".."


def scan_directory(directory: Path) -> list[Entry]:
    """Subfolders, transcripts (`*.jsonl`), then artifact directories without a transcript.

    Each group is sorted by name. An artifact directory belongs to any entry whose
    `artifact_dir_for` names it (`run.jsonl` and `run` both own `run.artifacts`),
    so only directories no sibling claims are listed; every other directory is a
    subfolder, unless it is hidden or a symlink (a listing never leads outside the
    directory it was opened on). `lstat` only; nothing is opened.
    """
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return []
    claimed = {
        artifact_dir_for(directory / e.name).name
        for e in entries
        if not e.name.endswith(ARTIFACTS_SUFFIX)
    }
    folders: list[Entry] = []
    transcripts: list[Entry] = []
    dirs: list[Entry] = []
    for e in entries:
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if e.name.endswith(TRANSCRIPT_SUFFIX):
            transcripts.append(Entry(e.name, Path(e.path), True, st.st_size))
        elif not stat.S_ISDIR(st.st_mode) or e.name in claimed:
            continue
        elif e.name.endswith(ARTIFACTS_SUFFIX):
            dirs.append(Entry(e.name, Path(e.path), False, _count_entries(Path(e.path))))
        elif not e.name.startswith("."):
            count = _count_transcripts(Path(e.path))
            folders.append(Entry(e.name, Path(e.path), False, count, is_folder=True))
    return folders + transcripts + dirs


def _count_transcripts(path: Path, limit: int = 100_000) -> int:
    """How many `*.jsonl` names a folder holds directly (names only: nothing is opened)."""
    n = 0
    try:
        with os.scandir(path) as it:
            for e in it:
                if e.name.endswith(TRANSCRIPT_SUFFIX):
                    n += 1
                    if n >= limit:
                        break
    except OSError:
        return 0
    return n


def _count_entries(path: Path, limit: int = 100_000) -> int:
    n = 0
    try:
        with os.scandir(path) as it:
            for _ in it:
                n += 1
                if n >= limit:
                    break
    except OSError:
        return 0
    return n


class ListingScreen(Screen[None]):
    """The transcripts in one directory with their verification counts.

    Args:
        directory: The directory to list (not recursive).
        root: The directory the person opened, when `directory` is a folder
            under it (the title names the path from there, and a `../` row
            leads back); None for the root listing itself.
        slots: The verification slots to share (a sub-listing shares its
            root's, so nested listings still verify `VERIFY_AT_ONCE` at most).

    Enter on a transcript posts `ListingScreen.Chosen(path)`, which bubbles to
    the app; enter on an orphaned artifact directory opens an `OrphansScreen`;
    enter on a folder pushes its own listing, and on `../` goes back to it.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "listing--error",
        "listing--failed",
        "listing--warning",
        "listing--ok",
        "listing--pending",
        "listing--gone",
        "listing--folder",
    }

    DEFAULT_CSS = """
    ListingScreen {
        layout: vertical;
        & > .listing--error { color: $text-error; text-style: bold; }
        & > .listing--failed { color: $text-error; }
        & > .listing--warning { color: $text-warning; }
        & > .listing--ok { color: $text-success; }
        & > .listing--pending { color: $text-muted; text-style: italic; }
        & > .listing--gone { text-style: bold; }
        & > .listing--folder { color: $text-muted; }
        #listing-title {
            height: 1;
            background: $panel;
            text-style: bold;
            padding: 0 1;
        }
        #listing-table { height: 1fr; }
        #listing-empty { height: 1fr; content-align: center middle; color: $text-muted; }
        #listing-status { height: 1; color: $text-muted; padding: 0 1; background: $panel; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.LISTING)

    @dataclass
    class Chosen(Message):
        """The person chose a transcript; the app should open `path`."""

        path: Path

    @dataclass
    class Verified(Message):
        """A worker finished one transcript (posted from its thread).

        Attributes:
            key: The row (the transcript's file name).
            counts: envelopes, markers, verified, errors, warnings; None on failure.
            error: Why verification failed, when it did.
        """

        key: str
        counts: tuple[int, int, int, int, int] | None
        error: str = ""
        not_transcript: bool = False
        """The file is no transcript of any format: its row is dimmed, not an error."""

    def __init__(
        self,
        directory: Path,
        *,
        root: Path | None = None,
        slots: threading.BoundedSemaphore | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.directory = Path(directory)
        self.root = Path(root) if root is not None else None
        """The directory the person opened, above this one (None: this is it)."""
        self.entries: list[Entry] = []
        self._slots = slots or threading.BoundedSemaphore(VERIFY_AT_ONCE)
        self._pending = 0
        self.results: dict[str, ListingScreen.Verified] = {}
        """Each finished verification by file name (for callers and tests)."""

    def compose(self) -> ComposeResult:
        """Title, table (or an empty note), status line, footer."""
        title = Text("Transcripts in ", end="")
        title.append_text(sanitize.text(self.shown_path))
        yield Static(title, id="listing-title", markup=False)
        yield RowTable(id="listing-table", cursor_type="row", zebra_stripes=True)
        yield Static(Text(""), id="listing-status", markup=False)
        yield KeyFooter()

    @property
    def shown_path(self) -> str:
        """The title's folder: its name, or under the opened directory, the path from it."""
        return self._shown(self.directory)

    def _shown(self, directory: Path) -> str:
        """`directory` as the person knows it: from the opened directory's name down."""
        if self.root is None or directory == self.root:
            return directory.name + "/"
        return f"{self.root.name}/{directory.relative_to(self.root).as_posix()}/"

    def on_mount(self) -> None:
        """List the directory and start one verification worker per transcript."""
        self.entries = scan_directory(self.directory)
        if self.root is not None:
            self.entries.insert(0, Entry(UP, self.directory.parent, False, is_folder=True))
        table = self.query_one("#listing-table", DataTable)
        for key, label, right in _COLUMNS:
            # The status column has a fixed width: DataTable (8.2) sometimes keeps
            # drawing an auto-width column at its old width after `update_cell`.
            width = STATUS_WIDTH if key == "status" else None
            table.add_column(
                Text(label, justify="right" if right else "left"), key=key, width=width
            )
        if not self.entries:
            table.display = False
            self.mount(
                Static(
                    Text("No transcripts (*.jsonl) here"), id="listing-empty", markup=False
                ),
                after=table,
            )
        for entry in self.entries:
            table.add_row(*self._initial_cells(entry), key=entry.name)
        table.focus()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._restyle())
        for entry in self.entries:
            if entry.is_transcript:
                self._pending += 1
                self._verify(entry.name, entry.path)
        self._update_status()

    def _initial_cells(self, entry: Entry) -> list[Text]:
        name = sanitize.text(entry.name + ("" if entry.is_transcript else "/"), no_wrap=True)
        if entry.is_folder:
            size = "" if entry.name == UP else plural(entry.size, "transcript")
            status = f"back to {self._shown(entry.path)}" if entry.name == UP else "folder"
            return [
                name,
                Text(size, justify="right"),
                *(Text("") for _ in range(4)),
                sanitize.text(
                    status, style=self._style("folder"), no_wrap=True, overflow="ellipsis"
                ),
            ]
        if entry.is_transcript:
            return [
                name,
                Text(human_size(entry.size), justify="right"),
                *(Text("") for _ in range(4)),
                Text("checking…", style=self._style("pending")),
            ]
        return [
            name,
            Text(plural(entry.size, "file"), justify="right"),
            *(Text("") for _ in range(4)),
            Text("transcript gone", style=self._style("gone")),
        ]

    def _style(self, part: str) -> Style:
        return component_style(self, f"listing--{part}")

    def _restyle(self) -> None:
        """A new theme: draw every styled cell again in the new colours."""
        table = self.query_one("#listing-table", DataTable)
        for entry in self.entries:
            result = self.results.get(entry.name)
            if result is not None:
                self._fill(result)
            else:
                table.update_cell(entry.name, "status", self._initial_cells(entry)[-1])

    @work(
        thread=True, group="listing-verify", exit_on_error=False, description="check a transcript"
    )
    def _verify(self, key: str, path: Path) -> None:
        """Verify one transcript in a thread; only posts a message back."""
        worker = get_current_worker()
        with self._slots:
            if worker.is_cancelled:
                return
            try:
                report = verify(path)
            except NotATranscript:
                message = self.Verified(key, None, "not a transcript", not_transcript=True)
            except Exception as exc:  # any failure belongs in the row, not a crash
                # The row already names the file: drop the directory from the message.
                why = (str(exc) or type(exc).__name__).replace(str(path), path.name)
                why = why.removeprefix(f"{path.name}: ")
                message = self.Verified(key, None, why)
            else:
                message = self.Verified(
                    key,
                    (
                        report.envelopes,
                        report.markers,
                        report.verified,
                        report.errors,
                        report.warnings,
                    ),
                )
        if not worker.is_cancelled:
            self.post_message(message)

    def on_listing_screen_verified(self, message: ListingScreen.Verified) -> None:
        """Fill one row with its counts (or its error)."""
        self.results[message.key] = message
        self._pending = max(0, self._pending - 1)
        self._fill(message)
        self._update_status()

    def _fill(self, message: ListingScreen.Verified) -> None:
        """Write one verification's counts (or its error) into its row."""
        table = self.query_one("#listing-table", DataTable)
        if message.not_transcript:
            # Not a failure: a file of something else. Dimmed, so transcripts stand out.
            dim = self._style("folder")
            entry = next((e for e in self.entries if e.name == message.key), None)
            if entry is not None:
                table.update_cell(message.key, "name", sanitize.text(entry.name, style=dim,
                                                                     no_wrap=True))
            table.update_cell(message.key, "status", Text("not a transcript", style=dim))
        elif message.counts is None:
            table.update_cell(
                message.key,
                "status",
                sanitize.text(
                    message.error,
                    style=self._style("failed"),
                    no_wrap=True,
                    overflow="ellipsis",
                ),
            )
        else:
            envelopes, markers, verified, errors, warnings = message.counts
            table.update_cell(
                message.key,
                "markers",
                Text(f"{verified:,}/{markers:,}", justify="right"),
                update_width=True,
            )
            for column, value in (
                ("envelopes", envelopes),
                ("errors", errors),
                ("warnings", warnings),
            ):
                style: Style | str = ""
                if column == "errors" and value:
                    style = self._style("error")
                elif column == "warnings" and value:
                    style = self._style("warning")
                table.update_cell(
                    message.key,
                    column,
                    Text(f"{value:,}", style=style, justify="right"),
                    update_width=True,
                )
            if errors:
                status = Text(plural(errors, "error"), style=self._style("error"))
            elif warnings:
                status = Text(plural(warnings, "warning"), style=self._style("warning"))
            else:
                status = Text("ok", style=self._style("ok"))
            table.update_cell(message.key, "status", status)

    def _update_status(self) -> None:
        others = sum(1 for r in self.results.values() if r.not_transcript)
        transcripts = sum(1 for e in self.entries if e.is_transcript) - others
        folders = sum(1 for e in self.entries if e.is_folder and e.name != UP)
        lost = sum(1 for e in self.entries if not e.is_transcript and not e.is_folder)
        parts = [plural(transcripts, "transcript")]
        if others:
            parts.append(f"{plural(others, 'other .jsonl file')} (not a transcript)")
        if folders:
            parts.append(plural(folders, "folder"))
        if lost:
            dirs = plural(lost, "artifact directory", "artifact directories")
            parts.append(f"{dirs} without one")
        parts.append(f"checking {self._pending:,}…" if self._pending else "all checked")
        self.query_one("#listing-status", Static).update(Text(" · ".join(parts)))

    # -- choosing ------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter (or a click) on a row chooses it."""
        event.stop()
        if event.row_key.value is not None:
            self.choose(event.row_key.value)

    def action_choose(self) -> None:
        """Choose the highlighted row (when the table does not have focus)."""
        table = self.query_one("#listing-table", DataTable)
        if 0 <= table.cursor_row < len(self.entries):
            self.choose(self.entries[table.cursor_row].name)

    def choose(self, name: str) -> None:
        """Post `Chosen` for a transcript; list a folder; open a lost artifact dir's orphans."""
        entry = next((e for e in self.entries if e.name == name), None)
        if entry is None:
            return
        if entry.name == UP:
            self.dismiss()
        elif entry.is_folder:
            root = self.root if self.root is not None else self.directory
            self.app.push_screen(ListingScreen(entry.path, root=root, slots=self._slots))
        elif entry.is_transcript:
            self.post_message(self.Chosen(entry.path))
        else:
            # Its transcript is gone: that is every file's reason.
            orphans = explain_orphans(list_orphans(entry.path, ()), None)
            self.app.push_screen(OrphansScreen(entry.path, orphans))

    def action_help(self) -> None:
        """This screen's keys (the transcript's are not what works here)."""
        rows = [(keys, text) for screen, keys, text in screen_rows()
                if screen == SCREEN_NAMES[Owner.LISTING]]
        self.app.push_screen(HelpScreen(rows, screens=[]))

    def action_close(self) -> None:
        """Back to the screen below; quit when the listing is the app's first screen.

        An app that starts with the listing pushes it over Textual's blank
        default screen (id `_default`); going "back" there would show nothing.
        """
        below = self.app.screen_stack[:-1]
        if not below or (len(below) == 1 and below[0].id == "_default"):
            self.app.exit()
        else:
            self.dismiss()

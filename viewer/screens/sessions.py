"""An agent's sessions, newest first (Claude Code's projects folder, Codex's sessions tree,
Qwen Code's and Gemini CLI's projects), or every agent's at once (`--sessions`).

`transcript-view ~/.claude/projects` (or `--claude`, `--codex`, a project
folder, a day of rollouts) starts here instead of the plain directory
listing; `--sessions` lists every agent's found at its default root, with
a column for the agent: one row per main session file with when it started, its project,
its size and its first prompt (`core.formats.sessions`), and its marker and
problem counts once a background worker has verified it (`core.report.verify`,
the same as `--check`; at most `VERIFY_AT_ONCE` at a time). Enter opens the
session (`ListingScreen.Chosen`, which the app handles). Nothing is written.
"""

from __future__ import annotations

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

from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.sessions import (
    AllSessions,
    SessionFile,
    all_sessions,
    list_sessions,
)
from transcript_view.core.ledger import is_problem
from transcript_view.core.report import verify
from transcript_view.core.text import human_size, plural
from transcript_view.viewer import sanitize
from transcript_view.viewer.footer import KeyFooter
from transcript_view.viewer.keys import SCREEN_NAMES, Owner, bindings, screen_rows
from transcript_view.viewer.palette import component_style
from transcript_view.viewer.screens.help import HelpScreen
from transcript_view.viewer.screens.listing import VERIFY_AT_ONCE, ListingScreen
from transcript_view.viewer.screens.orphans import RowTable

#: Cells of the first-prompt and project columns (the rest of the row must fit 120).
PROMPT_WIDTH = 32
PROJECT_WIDTH = 22
#: The same, with the agent column too (every agent's sessions).
AGENT_WIDTH, ALL_PROMPT_WIDTH, ALL_PROJECT_WIDTH = 11, 22, 14

#: The columns, those of a fixed width first: what the check found stays on an 80-column
#: screen, and the texts (project, first prompt) take what is left, or scroll.
_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("agent", "Agent", False),
    ("started", "Started", False),
    ("size", "Size", True),
    ("markers", "Markers", True),
    ("problems", "Problems", True),
    ("status", "Status", False),
    ("project", "Project", False),
    ("prompt", "First prompt", False),
)


def _when(session: SessionFile) -> str:
    """The start as `2026-01-01 09:00` (the first timestamp; else the file's time)."""
    if session.started:
        return session.started.replace("T", " ")[:16]
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(session.mtime))


def _size(session: SessionFile) -> str:
    """The file's size; a compressed rollout's says it is the compressed size."""
    shown = human_size(session.size)
    return f"{shown} zst" if session.path.name.endswith(".zst") else shown


def shown_folder(directory: Path) -> str:
    """A folder as a person names it: `~/…` under the home directory, else its name."""
    try:
        return "~/" + directory.resolve().relative_to(Path.home().resolve()).as_posix() + "/"
    except ValueError:
        return directory.name + "/"


class SessionsScreen(Screen[None]):
    """The sessions of one agent's tree (or of every agent: `fmt` None), each verified in
    the background."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "sessions--error",
        "sessions--warning",
        "sessions--ok",
        "sessions--pending",
        "sessions--failed",
    }

    DEFAULT_CSS = """
    SessionsScreen {
        layout: vertical;
        & > .sessions--error { color: $text-error; text-style: bold; }
        & > .sessions--failed { color: $text-error; }
        & > .sessions--warning { color: $text-warning; }
        & > .sessions--ok { color: $text-success; }
        & > .sessions--pending { color: $text-muted; text-style: italic; }
        #sessions-title { height: auto; background: $panel; text-style: bold; padding: 0 1; }
        #sessions-table { height: 1fr; }
        #sessions-empty { height: 1fr; content-align: center middle; color: $text-muted; }
        #sessions-status { height: 1; color: $text-muted; padding: 0 1; background: $panel; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.SESSIONS)

    @dataclass
    class Verified(Message):
        """A worker finished one session (posted from its thread).

        Attributes:
            key: The row (the session's path).
            counts: markers, matched or verified, problems, errors, warnings; None on failure.
            error: Why verification failed, when it did.
        """

        key: str
        counts: tuple[int, int, int, int, int] | None
        error: str = ""

    def __init__(self, directory: Path | None, fmt: Format | None) -> None:
        """`directory` and `fmt`: one agent's tree; both None: every agent's default root."""
        super().__init__()
        self.directory = Path(directory) if directory is not None else None
        self.format = fmt
        self.found: AllSessions | None = all_sessions() if fmt is None else None
        """Every agent's, when this lists them all (what was found, and where not)."""
        self.sessions: list[SessionFile] = []
        self._formats: dict[str, Format] = {}
        self._slots = threading.BoundedSemaphore(VERIFY_AT_ONCE)
        self._pending = 0
        self.results: dict[str, SessionsScreen.Verified] = {}
        """Each finished verification by session path (for callers and tests)."""

    def compose(self) -> ComposeResult:
        """Title, table (or an empty note), status line, footer."""
        if self.found is not None:
            agents = ", ".join(fmt.agent for fmt, _ in self.found.roots)
            title = Text("Every agent's sessions on this machine", end="")
            title.append(f" ({agents or 'none found'})")
        else:
            assert self.format is not None and self.directory is not None
            title = Text(f"{self.format.label}s in ", end="")
            title.append_text(sanitize.text(shown_folder(self.directory)))
        yield Static(title, id="sessions-title", markup=False)
        yield RowTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
        yield Static(Text(""), id="sessions-status", markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        """List the sessions and start one verification worker per session."""
        every = self.found is not None
        if self.found is not None:
            self.sessions = self.found.sessions
        else:
            assert self.format is not None and self.directory is not None
            self.sessions = list_sessions(self.directory, self.format)
        table = self.query_one("#sessions-table", DataTable)
        widths = (
            {"agent": AGENT_WIDTH, "prompt": ALL_PROMPT_WIDTH, "project": ALL_PROJECT_WIDTH}
            if every
            else {"prompt": PROMPT_WIDTH, "project": PROJECT_WIDTH}
        )
        for key, label, right in _COLUMNS:
            if key == "agent" and not every:
                continue
            table.add_column(
                Text(label, justify="right" if right else "left"), key=key, width=widths.get(key)
            )
        if not self.sessions:
            table.display = False
            self.mount(
                Static(Text(self._empty_words()), id="sessions-empty", markup=False), after=table
            )
        pending = self._style("pending")
        for s in self.sessions:
            agent = [Text(s.format.agent, no_wrap=True)] if every else []
            table.add_row(
                *agent,
                sanitize.text(_when(s), no_wrap=True),
                Text(_size(s), justify="right"),
                Text(""),
                Text(""),
                Text("checking…", style=pending),
                sanitize.text(s.project, no_wrap=True, overflow="ellipsis"),
                sanitize.text(
                    (s.first_prompt or "").replace("\n", " "), no_wrap=True, overflow="ellipsis"
                ),
                key=str(s.path),
            )
        table.focus()
        for s in self.sessions:
            self._pending += 1
            self._verify(str(s.path), s.path, s.format)
        self._update_status()

    def _empty_words(self) -> str:
        """Why the table is empty: nothing in this tree, or no agent's root on this machine."""
        if self.found is None:
            assert self.format is not None
            return f"No {self.format.label}s here"
        looked = [root for _, root in self.found.roots] + [r for _, r in self.found.absent]
        return "No agent's sessions on this machine (looked in " + ", ".join(
            shown_folder(r) for r in looked
        ) + ")"

    def _style(self, part: str) -> Style:
        return component_style(self, f"sessions--{part}")

    @work(
        thread=True, group="sessions-verify", exit_on_error=False, description="check a session"
    )
    def _verify(self, key: str, path: Path, fmt: Format) -> None:
        """Verify one session in a thread (as `--check` does); only posts a message back."""
        worker = get_current_worker()
        with self._slots:
            if worker.is_cancelled:
                return
            try:
                report = verify(path, format=fmt)
            except Exception as exc:  # any failure belongs in the row, not a crash
                message = self.Verified(key, None, str(exc) or type(exc).__name__)
            else:
                checked = report.agreeing
                problems = sum(1 for f in report.findings if is_problem(f))
                counts = (report.markers, checked, problems, report.errors, report.warnings)
                message = self.Verified(key, counts)
        if not worker.is_cancelled:
            self.post_message(message)

    def on_sessions_screen_verified(self, message: SessionsScreen.Verified) -> None:
        """Fill one row with its counts (or its error)."""
        self.results[message.key] = message
        self._pending = max(0, self._pending - 1)
        table = self.query_one("#sessions-table", DataTable)
        if message.counts is None:
            status = sanitize.text(
                message.error, style=self._style("failed"), no_wrap=True, overflow="ellipsis"
            )
            table.update_cell(message.key, "status", status)
        else:
            markers, checked, problems, errors, warnings = message.counts
            # Nothing stored to check (Copilot CLI's outputs went to a temp folder).
            codex = self._format_of(message.key) in (Format.CODEX, Format.COPILOT)
            shown = f"{markers:,}" if codex else f"{checked:,}/{markers:,}"
            table.update_cell(message.key, "markers", Text(shown, justify="right"))
            style = self._style("error") if errors else self._style("warning") if problems else ""
            table.update_cell(
                message.key, "problems", Text(f"{problems:,}", style=style, justify="right")
            )
            if errors:
                status = Text(plural(errors, "error"), style=self._style("error"))
            elif warnings:
                status = Text(plural(warnings, "warning"), style=self._style("warning"))
            else:
                status = Text("ok", style=self._style("ok"))
            table.update_cell(message.key, "status", status)
        self._update_status()

    def _format_of(self, key: str) -> Format | None:
        if len(self._formats) != len(self.sessions):
            self._formats = {str(s.path): s.format for s in self.sessions}
        return self._formats.get(key, self.format)

    def _update_status(self) -> None:
        parts = [plural(len(self.sessions), "session")]
        parts.append(f"checking {self._pending:,}…" if self._pending else "all checked")
        if self.found is not None:
            parts.extend(self.found.unreadable)
        self.query_one("#sessions-status", Static).update(Text(" · ".join(parts)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter (or a click) on a row opens its session."""
        event.stop()
        if event.row_key.value is not None:
            self.post_message(ListingScreen.Chosen(Path(event.row_key.value)))

    def action_choose(self) -> None:
        """Open the highlighted session (when the table does not have focus)."""
        table = self.query_one("#sessions-table", DataTable)
        if 0 <= table.cursor_row < len(self.sessions):
            self.post_message(ListingScreen.Chosen(self.sessions[table.cursor_row].path))

    def action_help(self) -> None:
        """This screen's keys (the transcript's are not what works here)."""
        rows = [
            (keys, text)
            for screen, keys, text in screen_rows()
            if screen == SCREEN_NAMES[Owner.SESSIONS]
        ]
        self.app.push_screen(HelpScreen(rows, screens=[]))

    def action_close(self) -> None:
        """Back to the screen below; quit when this is the app's first screen."""
        below = self.app.screen_stack[:-1]
        if not below or (len(below) == 1 and below[0].id == "_default"):
            self.app.exit()
        else:
            self.dismiss()

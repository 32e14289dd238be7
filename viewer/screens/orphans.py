"""The orphans screen: files in an artifact directory that no transcript line names.

An orphan is what a crash between writing an artifact and writing its settle
line leaves behind; a `.tmp-*.partial` file is an interrupted crash-safe store.
Either may be the only copy of a tool result, so the screen shows enough to
judge each one (size, time, first lines) and opens it read-only. Nothing can be
deleted or changed from here.

File names are hostile (a tool can choose them), so every name goes to the
widgets as `rich.text.Text` built by `viewer.sanitize.text`, never as markup.
The absolute directory path is not shown, only the directory's own name: it
says which transcript the files belong to without making screenshots depend on
where the directory happens to be. Styles are the screen's component classes
over theme variables, and a theme switch redraws the styled cells.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from transcript_view.core.ledger import UNEXPLAINED
from transcript_view.core.text import COPY_TOAST_SECONDS, copied, human_size, plural, visible
from transcript_view.core.transcript import TranscriptError, open_readonly
from transcript_view.core.verification import OrphanFile, resolve_inside
from transcript_view.viewer import pager, sanitize
from transcript_view.viewer.fileview import ArtifactScreen
from transcript_view.viewer.footer import KeyFooter
from transcript_view.viewer.keys import SCREEN_NAMES, Owner, bindings, screen_rows
from transcript_view.viewer.palette import component_style
from transcript_view.viewer.screens.help import HelpScreen

#: How much of each orphan the preview reads, at most.
PREVIEW_BYTES = 4096
#: Lines of the highlighted orphan shown in the preview pane.
PREVIEW_LINES = 6

PARTIAL_NOTE = "partial write — an interrupted store"


def iso_utc(mtime: float) -> str:
    """A modification time as ISO 8601 UTC to the second: `2026-08-09T13:10:08Z`."""
    return datetime.fromtimestamp(mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_preview(directory: Path, name: str, limit: int = PREVIEW_BYTES) -> list[str]:
    """The first lines of `directory/name`, sanitised, from at most `limit` bytes.

    Never blocks or leaves the directory: the name is resolved with
    `resolve_inside` (a symlink out of it is refused) and opened with
    `open_readonly` (a fifo or device is refused without blocking). A problem
    becomes a one-line description instead of an exception.
    """
    path, why = resolve_inside(directory, name)
    if path is None:
        return [f"(not previewed: {why})"]
    try:
        fd = open_readonly(path)
    except (TranscriptError, OSError) as exc:
        return [visible(f"(not previewed: {getattr(exc, 'strerror', None) or exc})")]
    try:
        data = os.pread(fd, limit, 0)
    except OSError as exc:
        return [f"(not previewed: {exc.strerror or exc})"]
    finally:
        os.close(fd)
    if not data:
        return ["(empty file)"]
    text = data.decode("utf-8", errors="replace")
    if len(data) == limit and "\n" in text:
        # The last line was cut by the read limit; show only whole lines.
        text = text[: text.rfind("\n")]
    return [visible(line) for line in text.split("\n")]


class RowTable(DataTable[Text]):
    """A row-cursor DataTable where home/end go to the first/last row (not column)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.ORPHAN_TABLE)


class OrphansScreen(Screen[None]):
    """Every orphan of one artifact directory, with a preview; enter opens one.

    Args:
        artifact_dir: The artifact directory the orphans are in.
        orphans: What `core.verification.list_orphans` found there (any order).
        time_format: Turns an mtime into text; ISO 8601 UTC by default.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "orphans--partial",
        "orphans--orphan",
        "orphans--special",
        "orphans--pending",
        "orphans--why",
    }

    DEFAULT_CSS = """
    OrphansScreen {
        layout: vertical;
        & > .orphans--partial { color: $text-warning; text-style: bold; }
        & > .orphans--orphan { color: $text-muted; }
        & > .orphans--special { text-style: italic; }
        & > .orphans--pending { color: $text-muted; }
        & > .orphans--why { color: $text-warning; }
        #orphans-title {
            height: 1;
            background: $panel;
            text-style: bold;
            padding: 0 1;
        }
        #orphans-about { height: auto; color: $text-muted; padding: 0 1; }
        #orphans-empty { height: 1fr; content-align: center middle; color: $text-muted; }
        #orphans-table { height: 1fr; }
        #orphans-preview {
            height: auto;
            max-height: 10;
            border-top: solid $primary 50%;
            border-title-color: $text-muted;
            padding: 0 1;
            color: $foreground 80%;
        }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.ORPHANS)

    @dataclass
    class PreviewsRead(Message):
        """Posted by the preview worker: first lines per orphan name."""

        previews: dict[str, list[str]]

    def __init__(
        self,
        artifact_dir: Path,
        orphans: list[OrphanFile],
        *,
        time_format: Callable[[float], str] | None = None,
        empty: str = "No orphaned artifacts",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.artifact_dir = Path(artifact_dir)
        self.orphans = sorted(orphans, key=lambda o: o.name)
        self._time_format = time_format or iso_utc
        self._previews: dict[str, list[str]] = {}
        self._empty = empty
        """What the screen says when there is no orphan (the transcript's screen knows why)."""

    # -- layout --------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Title, a sentence on what orphans are, the table and the preview."""
        partial = sum(1 for o in self.orphans if o.partial_write)
        title = Text("Orphaned artifacts in ", end="")
        title.append_text(sanitize.text(self.artifact_dir.name + "/"))
        if self.orphans:
            title.append(
                f" — {plural(len(self.orphans), 'file')}"
                + (f", {partial:,} partial" if partial else "")
            )
        yield Static(title, id="orphans-title", markup=False)
        if not self.orphans:
            yield Static(sanitize.text(self._empty), id="orphans-empty", markup=False)
            yield KeyFooter()
            return
        about = Text(
            "No transcript line names these files; why, for the one under the cursor, is "
            "above its first lines. One may hold the only copy of a result. Read-only: "
            "nothing can be deleted from here."
        )
        if partial:
            about.append("\npartial", style=self._style("partial"))
            about.append(f": {PARTIAL_NOTE} (a leftover temp file).")
        yield Static(about, id="orphans-about", markup=False)
        yield RowTable(id="orphans-table", cursor_type="row", zebra_stripes=True)
        preview = Static(Text(""), id="orphans-preview", markup=False)
        yield preview
        yield KeyFooter()

    def on_mount(self) -> None:
        """Fill the table and start reading previews in a worker."""
        if not self.orphans:
            return
        table = self.query_one("#orphans-table", DataTable)
        table.add_column(Text("Kind"), key="kind")
        table.add_column(Text("File"), key="file")
        table.add_column(Text("Size", justify="right"), key="size")
        table.add_column(Text("Bytes", justify="right"), key="bytes")
        table.add_column(Text("Modified (UTC)"), key="mtime")
        for o in self.orphans:
            table.add_row(*self._cells(o), key=o.name)
        table.focus()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._restyle())
        self._show_preview(self.orphans[0].name)
        self._read_previews()

    def _style(self, part: str) -> Style:
        return component_style(self, f"orphans--{part}")

    def _kind(self, o: OrphanFile) -> Text:
        if o.partial_write:
            return Text("partial", style=self._style("partial"))
        if o.kind != "file":
            kind = o.kind.removeprefix("a ").removeprefix("an ")
            return sanitize.text(kind, style=self._style("special"))
        return Text("orphan", style=self._style("orphan"))

    def _restyle(self) -> None:
        """A new theme: draw the styled cells and the preview again in its colours."""
        table = self.query_one("#orphans-table", DataTable)
        for o in self.orphans:
            table.update_cell(o.name, "kind", self._kind(o))
        row = table.cursor_row
        if 0 <= row < len(self.orphans):
            self._show_preview(self.orphans[row].name)

    def _cells(self, o: OrphanFile) -> list[Text]:
        return [
            self._kind(o),
            sanitize.text(o.name, no_wrap=True),
            Text(human_size(o.size), justify="right"),
            Text(f"{o.size:,}", justify="right"),
            Text(self._time_format(o.mtime)),
        ]

    # -- previews ------------------------------------------------------------

    @work(
        thread=True,
        exclusive=True,
        group="orphan-previews",
        exit_on_error=False,
        description="read the orphans' first bytes",
    )
    def _read_previews(self) -> None:
        """Read each orphan's first bytes off the UI thread (a slow disk must not freeze it)."""
        worker = get_current_worker()
        previews: dict[str, list[str]] = {}
        for o in self.orphans:
            if worker.is_cancelled:
                return
            if o.kind != "file":
                previews[o.name] = [visible(f"({o.kind}: not read)")]
                continue
            previews[o.name] = read_preview(self.artifact_dir, o.name)
        self.post_message(self.PreviewsRead(previews))

    def on_orphans_screen_previews_read(self, message: OrphansScreen.PreviewsRead) -> None:
        """Fill the first-line column and the preview pane."""
        self._previews = message.previews
        table = self.query_one("#orphans-table", DataTable)
        row = table.cursor_row
        if 0 <= row < len(self.orphans):
            self._show_preview(self.orphans[row].name)

    def _show_preview(self, name: str) -> None:
        pane = self.query_one("#orphans-preview", Static)
        orphan = self._orphan(name)
        note = f" ({PARTIAL_NOTE})" if orphan is not None and orphan.partial_write else ""
        # A Text, not a str: a str border title is parsed as markup.
        pane.border_title = sanitize.text(f"First lines of {name}{note}")
        # Why this file is here: each its own (`core.ledger.explain_orphans`).
        why = orphan.reason if orphan is not None and orphan.reason else UNEXPLAINED
        body = Text(no_wrap=True, overflow="ellipsis")
        body.append_text(sanitize.text(f"why: {why}", style=self._style("why")))
        body.append("\n")
        lines = self._previews.get(name)
        if lines is None:
            body.append("reading…", style=self._style("pending"))
        else:
            body.append("\n".join(lines[:PREVIEW_LINES]))
        pane.update(body)

    def _orphan(self, name: str) -> OrphanFile | None:
        return next((o for o in self.orphans if o.name == name), None)

    def _highlighted(self) -> OrphanFile | None:
        """The orphan under the table's cursor (None when there are none)."""
        if not self.orphans:
            return None
        row = self.query_one("#orphans-table", DataTable).cursor_row
        return self.orphans[row] if 0 <= row < len(self.orphans) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Follow the cursor with the preview pane."""
        if event.row_key.value is not None:
            self._show_preview(event.row_key.value)

    # -- opening -------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter (or a click) on a row opens that file."""
        event.stop()
        if event.row_key.value is not None:
            self.open_orphan(event.row_key.value)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide "open", "copy" and "pager" when there is no orphan to act on."""
        return bool(self.orphans) or action not in ("open", "copy", "pager")

    def action_open(self) -> None:
        """Open the highlighted orphan (when the table does not have focus)."""
        table = self.query_one("#orphans-table", DataTable) if self.orphans else None
        if table is not None and 0 <= table.cursor_row < len(self.orphans):
            self.open_orphan(self.orphans[table.cursor_row].name)

    def open_orphan(self, name: str) -> None:
        """Push an `ArtifactScreen` for `name`, or say why it cannot be opened."""
        orphan = next((o for o in self.orphans if o.name == name), None)
        if orphan is not None and orphan.kind != "file":
            self.notify(visible(f"{name}: {orphan.kind}, not opened"), markup=False)
            return
        path, why = resolve_inside(self.artifact_dir, name)
        if path is None:
            self.notify(visible(f"{name}: {why}"), severity="error", markup=False)
            return
        self.app.push_screen(ArtifactScreen(path, f"{self.artifact_dir.name}/{name}"))

    def action_copy(self) -> None:
        """Copy the highlighted orphan's path, and show it (the terminal may drop the copy)."""
        orphan = self._highlighted()
        if orphan is None:
            return
        path = str(self.artifact_dir / orphan.name)
        self.app.copy_to_clipboard(path)
        self.notify(copied(path), title=visible(f"Copied the path of {orphan.name}"),
                    markup=False, timeout=COPY_TOAST_SECONDS)  # fmt: skip

    def action_pager(self) -> None:
        """Open the highlighted orphan in `$PAGER`: the transcript's `e`, by the same code."""
        orphan = self._highlighted()
        if orphan is not None:
            pager.page(self.app, self.artifact_dir / orphan.name, self._say)

    def _say(self, message: str, **kwargs: Any) -> None:
        """A toast for a hostile name: made visible, never parsed as markup."""
        self.notify(visible(message), markup=False, **kwargs)

    def action_help(self) -> None:
        """This screen's keys (the transcript's are not what works here)."""
        rows = [(keys, text) for screen, keys, text in screen_rows()
                if screen == SCREEN_NAMES[Owner.ORPHANS]]  # fmt: skip
        self.app.push_screen(HelpScreen(rows, screens=[]))

    def action_close(self) -> None:
        """Back to the screen below (or quit if this is the only one)."""
        if len(self.app.screen_stack) > 1:
            self.dismiss()
        else:
            self.app.exit()

"""A Line-API viewer over `FileLines`, and a screen that shows one artifact file.

An artifact can be hundreds of MiB (possibly one line), so `FileView` never
builds one big renderable: Textual asks it for one screen line at a time
(`render_line`), it reads just that row from disk, sanitises it, and keeps a
bounded LRU of rendered rows. Indexing runs in a thread worker that only posts
messages back, so the first screen paints while the rest is still scanned.

Byte ranges can be marked (`regions`) so the caller can show which part of a
full result the model saw (head and tail of the excerpt) and which it never
saw (the middle). Each marked row gets a gutter glyph too, so the difference
is visible without colour; the glyphs are `viewer.palette.EXPOSURE_GLYPHS`,
the same bars the inline artifact rows draw.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static
from textual.worker import get_current_worker

from transcript_view.core.filelines import FileLines
from transcript_view.core.text import human_size, plural, visible
from transcript_view.core.transcript import TranscriptError
from transcript_view.viewer import sanitize
from transcript_view.viewer.footer import KeyFooter
from transcript_view.viewer.keys import Owner, bindings
from transcript_view.viewer.pacing import give_way
from transcript_view.viewer.palette import (
    EXPOSURE_GLYPHS,
    EXPOSURE_LABELS,
    SEEN_KEY,
    UNSEEN_KEY,
    component_style,
)

#: Component class for bytes the model saw (the excerpt's head and tail).
SEEN = "fileview--seen"
#: Component class for bytes the model never saw (the elided middle).
UNSEEN = "fileview--unseen"

#: Gutter glyph per known region class (the shared seen/unseen bars); any other
#: marked region gets `_OTHER_GLYPH`.
GUTTER_GLYPHS: dict[str, str] = {
    SEEN: EXPOSURE_GLYPHS[SEEN_KEY],
    UNSEEN: EXPOSURE_GLYPHS[UNSEEN_KEY],
}
_OTHER_GLYPH = "▎"

#: Bytes indexed before the first paint, then per step: small first so the
#: first screen appears at once, large later so a big file indexes quickly.
FIRST_STEP_BYTES = 256 << 10
STEP_BYTES = 16 << 20

Region = tuple[int, int, str]


class FileView(ScrollView, can_focus=True):
    """Shows a (possibly huge) text file row by row, indexing it in the background.

    Args:
        source: A `FileLines` (the caller keeps ownership and closes it) or a
            path, which the view opens and closes on unmount. Opening a path
            raises `core.transcript.TranscriptError` for a fifo/device/directory
            and `OSError` when it cannot be read.
        regions: Optional `(start, end, name)` byte ranges. A row is marked by
            the region its start offset falls in (gutter glyph and style); a
            region boundary inside a row also splits the row's colouring.
            `name` is one of `COMPONENT_CLASSES` (`SEEN`, `UNSEEN`) or a Rich
            style string such as `"italic red"`.
        row_bytes: Longest row, in bytes, when the view opens `source` itself.
        span: When the view opens `source` itself: show only the bytes
            `[start, end)` of the file (one huge transcript line, say).
    """

    ALLOW_MAXIMIZE = True

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "fileview--gutter",
        SEEN,
        UNSEEN,
        "fileview--gutter-seen",
        "fileview--gutter-unseen",
        "fileview--note",
    }

    DEFAULT_CSS = """
    FileView {
        background: $surface;
        color: $foreground;
        overflow-x: auto;
        overflow-y: scroll;
        &:focus { background-tint: $foreground 3%; }
        & > .fileview--gutter { color: $foreground 40%; }
        & > .fileview--seen { }
        & > .fileview--unseen { background: $warning 12%; }
        /* The same colours as the bars of an artifact opened inline. */
        & > .fileview--gutter-seen { color: $text-success; }
        & > .fileview--gutter-unseen { color: $text-warning; text-style: bold; }
        & > .fileview--note { color: $text-muted; text-style: italic; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.FILE_VIEW)

    @dataclass
    class Indexed(Message):
        """Posted (from the worker thread) after each indexing step.

        Attributes:
            rows: Rows known so far.
            done: True once the whole file is indexed.
            bytes_done: Bytes scanned so far.
            bytes_total: The file's size.
            file_view: The view that posted it (for `@on(..., "#id")` selectors).
        """

        rows: int
        done: bool
        bytes_done: int
        bytes_total: int
        file_view: FileView | None = field(default=None, compare=False, repr=False)

        @property
        def control(self) -> FileView | None:
            """The FileView that is indexing."""
            return self.file_view

    @dataclass
    class IndexFailed(Message):
        """Posted when reading the file fails part-way (rows known so far stay)."""

        error: str
        file_view: FileView | None = field(default=None, compare=False, repr=False)

        @property
        def control(self) -> FileView | None:
            """The FileView that was indexing."""
            return self.file_view

    def __init__(
        self,
        source: FileLines | Path,
        *,
        regions: list[Region] | None = None,
        row_bytes: int = 2048,
        span: tuple[int, int] | None = None,
        cache_rows: int = 1024,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        if isinstance(source, FileLines):
            self._lines = source
            self._owns_lines = False
        else:
            self._lines = FileLines(Path(source), row_bytes=row_bytes, span=span)
            self._owns_lines = True
        self._regions: list[Region] = sorted(regions or [], key=lambda r: (r[0], r[1]))
        self._region_starts = [r[0] for r in self._regions]
        self._gutter_width = 2 if self._regions else 0
        self._cache: LRUCache[int, tuple[Strip, Strip, Style]] = LRUCache(cache_rows)
        self._max_width = 0
        self._width_update_pending = False
        self._follow_end = False
        self._error: str | None = None

    # -- public state --------------------------------------------------------

    @property
    def lines(self) -> FileLines:
        """The rows being shown."""
        return self._lines

    @property
    def following_end(self) -> bool:
        """True while `end` was pressed before indexing finished."""
        return self._follow_end

    @property
    def status(self) -> str:
        """One line for a status bar: rows, size, and indexing progress."""
        lines = self._lines
        rows = plural(lines.row_count, "row")
        size = f"{human_size(lines.size)} ({lines.size:,} bytes)"
        if self._error is not None:
            return f"{rows} · {size} · read error: {self._error}"
        if lines.complete:
            return f"{rows} · {size}"
        pct = 100 * lines.indexed_bytes // max(lines.size, 1)
        tail = " — going to the end when indexing finishes" if self._follow_end else ""
        return f"{rows} so far · {size} · indexing {pct}%{tail}"

    # -- lifecycle -----------------------------------------------------------

    def on_mount(self) -> None:
        """Start indexing as soon as the view is in the DOM."""
        super().on_mount()  # type: ignore[no-untyped-call]
        self.virtual_size = Size(self._gutter_width, self._lines.row_count)
        if not self._lines.complete:
            self._index_worker()

    def on_unmount(self) -> None:
        """Close the file if the view opened it (waits for an in-flight chunk)."""
        self.workers.cancel_node(self)
        if self._owns_lines:
            self._lines.close()

    @work(
        thread=True,
        exclusive=True,
        group="fileview-index",
        exit_on_error=False,
        description="index the file as rows",
    )
    def _index_worker(self) -> None:
        """Index in steps, posting `Indexed` after each; stop when cancelled."""
        worker = get_current_worker()
        lines = self._lines
        step = FIRST_STEP_BYTES
        while not worker.is_cancelled and not lines.closed:
            try:
                done = lines.index(max_bytes=step)
            except OSError as exc:
                self.post_message(self.IndexFailed(exc.strerror or str(exc), self))
                return
            self.post_message(
                self.Indexed(lines.row_count, done, lines.indexed_bytes, lines.size, self)
            )
            if done or lines.closed:
                return
            step = STEP_BYTES
            give_way()

    def _on_file_view_indexed(self, message: FileView.Indexed) -> None:
        if message.file_view is not self:
            return
        self._set_virtual_size()
        self.refresh()
        if self._follow_end:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
            if message.done:
                self._follow_end = False

    def _on_file_view_index_failed(self, message: FileView.IndexFailed) -> None:
        if message.file_view is not self:
            return
        self._error = message.error
        self._follow_end = False
        self.refresh()

    def _set_virtual_size(self) -> None:
        self.virtual_size = Size(self._gutter_width + self._max_width, self._lines.row_count)

    def notify_style_update(self) -> None:
        """Styles changed (theme, focus): rendered rows are stale."""
        super().notify_style_update()
        self._cache.clear()

    # -- actions -------------------------------------------------------------

    def action_scroll_end(self) -> None:
        """Go to the last row; before indexing finishes, follow it until it does."""
        if not self._lines.complete and self._error is None:
            self._follow_end = True
        self.scroll_end(animate=False, immediate=True, x_axis=False)

    def action_scroll_home(self) -> None:
        """Go to the first row (and stop following the end)."""
        self._follow_end = False
        self.scroll_home(animate=False, immediate=True, x_axis=False)

    def action_scroll_up(self) -> None:
        """One row up (stops following the end)."""
        self._follow_end = False
        super().action_scroll_up()

    def action_page_up(self) -> None:
        """One page up (stops following the end)."""
        self._follow_end = False
        super().action_page_up()

    def action_half_page(self, direction: int) -> None:
        """Half a screen down (ctrl+d) or up (ctrl+u), as in less and vim.

        Going up stops following the end, as every other upward key does.
        """
        if direction < 0:
            self._follow_end = False
        step = max(self.scrollable_content_region.height // 2, 1)
        self.scroll_to(y=self.scroll_y + direction * step, animate=False, immediate=True)

    def scroll_to_offset(self, offset: int) -> None:
        """Bring the row holding byte `offset` to the top (once it is indexed)."""
        self._follow_end = False
        self.scroll_to(y=self._lines.row_of_offset(offset), animate=False, immediate=True)

    # -- rendering -----------------------------------------------------------

    def _region_of(self, offset: int) -> str | None:
        """The name of the last-starting region that holds `offset`, or None."""
        upto = bisect_right(self._region_starts, offset)
        for start, end, name in reversed(self._regions[:upto]):
            if start <= offset < end:
                return name
        return None

    def _style_for(self, name: str | None, base: Style) -> Style:
        if name is None:
            return base
        if name in self.COMPONENT_CLASSES:
            # Not partial: the full style blends translucent colours over the background.
            return self.get_component_rich_style(name)
        try:
            return base + Style.parse(name)
        except Exception:  # a bad style name must not break drawing
            return base

    def _gutter(self, name: str | None, base: Style) -> Strip:
        if not self._gutter_width:
            return Strip([], 0)
        if name is None:
            return Strip.blank(self._gutter_width, base)
        glyph = GUTTER_GLYPHS.get(name, _OTHER_GLYPH)
        if name == SEEN:
            style = self.get_component_rich_style("fileview--gutter-seen")
        elif name == UNSEEN:
            style = self.get_component_rich_style("fileview--gutter-unseen")
        else:
            style = self._style_for(name, base)
        return Strip([Segment(glyph, style), Segment(" ", base)], self._gutter_width)

    def _pieces(self, start: int, end: int) -> list[tuple[int, int]]:
        """Split `[start, end)` at region boundaries that fall strictly inside it."""
        cuts = sorted({b for r in self._regions for b in (r[0], r[1]) if start < b < end})
        return list(pairwise([start, *cuts, end]))

    def _render_row(self, row: int, base: Style) -> tuple[Strip, Strip, Style]:
        cached = self._cache.get(row)
        if cached is not None:
            return cached
        lines = self._lines
        try:
            start, end = lines.row_span(row)
            data = lines.row_bytes_of(row)
        except (OSError, ValueError, IndexError) as exc:
            note = visible(f"(cannot read this row: {exc})")
            style = self.get_component_rich_style("fileview--note")
            return Strip.blank(self._gutter_width, base), Strip([Segment(note, style)]), base
        segments: list[Segment] = []
        width = 0
        style = base
        for a, b in self._pieces(start, end):
            style = self._style_for(self._region_of(a), base)
            shown = visible(data[a - start : b - start].decode("utf-8", "replace"))
            if shown:
                segments.append(Segment(shown, style))
                width += cell_len(shown)
        content = Strip(segments, width)
        gutter = self._gutter(self._region_of(start), base)
        # The rest of the screen line takes the style of the row's last piece, so a
        # marked region reads as a band across the view, not ragged text.
        self._cache[row] = (gutter, content, style)
        if width > self._max_width:
            self._max_width = width
            if not self._width_update_pending:
                self._width_update_pending = True
                self.call_after_refresh(self._apply_width)
        return gutter, content, style

    def _apply_width(self) -> None:
        self._width_update_pending = False
        # A wider row can bring in the horizontal scrollbar, which takes a line from
        # the viewport: if the view was at the end, keep the last row in sight.
        at_end = self.scroll_y > 0 and self.scroll_y >= self.max_scroll_y
        self._set_virtual_size()
        if at_end or self._follow_end:
            self.scroll_end(animate=False, x_axis=False)

    def _note(self, message: str, width: int, base: Style) -> Strip:
        style = self.get_component_rich_style("fileview--note")
        return Strip([Segment(message, style)]).crop_extend(0, width, base)

    def render_line(self, y: int) -> Strip:
        """Draw screen line `y`: the gutter (fixed) and the row scrolled by `scroll_x`."""
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.size.width
        base = self.rich_style
        lines = self._lines
        if row >= lines.row_count:
            if row == lines.row_count:
                if self._error is not None:
                    return self._note(visible(f"read error: {self._error}"), width, base)
                if not lines.complete:
                    return self._note(f"… {self.status}", width, base)
                if row == 0:
                    return self._note("(empty file)", width, base)
            return Strip.blank(width, base)
        gutter, content, pad = self._render_row(row, base)
        text_width = max(0, width - self._gutter_width)
        shown = content.crop_extend(scroll_x, scroll_x + text_width, pad)
        return Strip.join([gutter, shown]) if self._gutter_width else shown


class ArtifactScreen(Screen[None]):
    """One artifact file, full screen, in a `FileView`; escape or q goes back.

    Args:
        path: The file to show. A fifo, device or unreadable path shows an
            error instead (never blocks).
        title: Shown in the header as plain text (never markup).
        regions: Passed to `FileView` (e.g. seen head/tail and unseen middle).
        row_bytes: Longest row in bytes (a long line is cut into rows this long).
        span: Show only the bytes `[start, end)` of the file: one line of a
            transcript too long to lay out inline.
    """

    DEFAULT_CSS = """
    ArtifactScreen {
        layout: vertical;
        #artifact-title {
            height: 1;
            background: $panel;
            color: $foreground;
            text-style: bold;
            padding: 0 1;
        }
        #artifact-view { height: 1fr; }
        #artifact-error { height: 1fr; padding: 1 2; color: $error; }
        #artifact-status {
            height: 1;
            background: $panel;
            color: $text-muted;
            padding: 0 1;
        }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.ARTIFACT)

    def __init__(
        self,
        path: Path,
        title: str,
        *,
        regions: list[Region] | None = None,
        row_bytes: int = 2048,
        span: tuple[int, int] | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.path = Path(path)
        self.artifact_title = title
        self._regions = regions
        self._view: FileView | None = None
        self._open_error: str | None = None
        try:
            self._view = FileView(
                self.path, regions=regions, row_bytes=row_bytes, span=span, id="artifact-view"
            )
        except TranscriptError as exc:  # a fifo, device or directory: never opened
            self._open_error = str(exc)
        except OSError as exc:
            self._open_error = f"{exc.strerror or exc}"

    def compose(self) -> ComposeResult:
        """Title, the file (or why it cannot be shown), status, footer."""
        yield Static(
            sanitize.text(self.artifact_title, no_wrap=True, overflow="ellipsis"),
            id="artifact-title",
            markup=False,
        )
        if self._view is not None:
            yield self._view
        else:
            yield Static(
                sanitize.text(f"Cannot show this file: {self._open_error}"),
                id="artifact-error",
                markup=False,
            )
        yield Static(Text(""), id="artifact-status", markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        """Focus the view so the scrolling keys work at once."""
        if self._view is not None:
            self._view.focus()
        self._update_status()
        # The legend is styled from the view's component classes: a new theme
        # restyles it (the view's own rows follow through `notify_style_update`).
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._update_status())

    def _update_status(self) -> None:
        status = self.query_one("#artifact-status", Static)
        if self._view is None:
            status.update(Text(""))
            return
        line = Text(self._view.status)
        if self._regions:
            # The legend is drawn in the gutter's own styles, so it matches the bars.
            view = self._view
            line.append("   ")
            line.append(
                f"{GUTTER_GLYPHS[SEEN]} {EXPOSURE_LABELS[SEEN_KEY]}  ",
                style=component_style(view, "fileview--gutter-seen"),
            )
            line.append(
                f"{GUTTER_GLYPHS[UNSEEN]} {EXPOSURE_LABELS[UNSEEN_KEY]}",
                style=component_style(view, "fileview--gutter-unseen"),
            )
        status.update(line)

    def on_file_view_indexed(self, message: FileView.Indexed) -> None:
        """Keep the status line in step with the indexer."""
        self._update_status()

    def on_file_view_index_failed(self, message: FileView.IndexFailed) -> None:
        """Show a read error in the status line."""
        self._update_status()

    def action_close(self) -> None:
        """Back to the screen below."""
        self.dismiss()


"""The one widget that shows a transcript: a Line API `ScrollView` over a `Document`.

A widget per message would make a million-line transcript a million widgets;
here the widget only ever renders the rows that are on screen (`render_line`),
asks the document for them, and keeps a small LRU of rendered strips. Row
counts come from a layout worker that runs in a thread and posts them back in
chunks, so the first screen shows as soon as the first lines are laid out.

The widget owns its documents (the file view's, and the model view's that each
analysis replaces), handles its own workers' messages (`LayoutChunk`,
`BlocksBuilt`, `SearchDone`) and posts summaries up (`SearchFinished`), as
Textual's `Log` and toolong's `LogLines` do. It is the only writer of the text
width and of which blocks are expanded; the screen tells it what changed
(`analysis_changed`, `rebuild_line`, `grow_artifact`) and never moves its
cursor or scroll position itself.
"""

from __future__ import annotations

import math
import time
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import ClassVar, Literal

from rich.style import Style
from rich.text import Text
from textual import events, on, work
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.worker import get_current_worker

from transcript_view.core.analysis import Analysis
from transcript_view.core.envelopes import Elision
from transcript_view.core.formats.detect import Format
from transcript_view.core.records import SiteKey
from transcript_view.core.search import candidate_lines
from transcript_view.core.transcript import Transcript
from transcript_view.viewer.blocks import EmptySource, FileSource, ModelSource
from transcript_view.viewer.context import AnalysisState, BlockContext, BlockKey, Expansion
from transcript_view.viewer.document import Document
from transcript_view.viewer.inline import boundary_row
from transcript_view.viewer.keys import Owner, bindings
from transcript_view.viewer.layouter import Layouter
from transcript_view.viewer.messages import (
    BlocksBuilt,
    LayoutChunk,
    Recounted,
    SearchDone,
    SearchProgress,
)
from transcript_view.viewer.pacing import give_way
from transcript_view.viewer.palette import (
    PALETTE_CLASSES,
    Palette,
    component_class,
    component_style,
)
from transcript_view.viewer.rows import GUTTER, InlineArtifact, Row

#: Seconds between two growths of the virtual size while rows stream in below the screen.
SIZE_SECONDS = 0.5

HitStep = Literal["moved", "wrapped", "none"]
"""What stepping to the next search hit did: moved on, wrapped round the end, or found none."""


@dataclass
class Anchor:
    """Where the cursor was, by source block, so a relayout can put it back."""

    block: int
    offset: int
    above: int
    """Rows between the top of the screen and the cursor."""
    arrived: bool = False
    """The cursor is where the view was arrived at (`toggle_document`): put back by a
    layout, it has not been moved."""


class TranscriptView(ScrollView, can_focus=True):
    """Rows of a transcript, a cursor row, search highlights and inline artifacts."""

    DEFAULT_CSS = """
    TranscriptView {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: scroll;
        scrollbar-gutter: stable;
        background: $surface;
    }
    TranscriptView:focus {
        background-tint: transparent;
    }
    /* The rows' palette (`viewer.palette`): theme variables, so a theme switch restyles. */
    TranscriptView {
        & > .transcript-view--role-system { color: $text-secondary; text-style: bold; }
        & > .transcript-view--role-user { color: $text-primary; text-style: bold; }
        & > .transcript-view--role-assistant { color: $text-success; text-style: bold; }
        & > .transcript-view--role-tool { color: $text-warning; text-style: bold; }
        & > .transcript-view--role-other { text-style: bold; }
        & > .transcript-view--badge-verified {
            color: $text; background: $success-darken-2; text-style: bold;
        }
        & > .transcript-view--badge-not-stored {
            color: $text; background: $warning; text-style: bold;
        }
        & > .transcript-view--badge-could-not-be-stored {
            color: $text; background: $warning-darken-2; text-style: bold;
        }
        & > .transcript-view--badge-checking {
            color: $text; background: $foreground 30%; text-style: bold;
        }
        & > .transcript-view--badge-bad { color: $text; background: $error; text-style: bold; }
        & > .transcript-view--badge-big-line {
            color: $text; background: $warning; text-style: bold;
        }
        & > .transcript-view--marker {
            color: $text-warning; background: $warning-muted; text-style: bold;
        }
        & > .transcript-view--quoted { color: $text-muted; text-style: italic; }
        & > .transcript-view--quoted-label { color: $foreground 70%; text-style: italic; }
        & > .transcript-view--seen { }
        & > .transcript-view--unseen { color: $text-muted; background: $warning 12%; }
        & > .transcript-view--seen-bar { color: $text-success; }
        & > .transcript-view--unseen-bar { color: $text-warning; }
        & > .transcript-view--dim { color: $text-muted; }
        & > .transcript-view--strong { text-style: bold; }
        & > .transcript-view--heading { text-style: bold reverse; }
        & > .transcript-view--tag { color: $text; background: $secondary; text-style: bold; }
        & > .transcript-view--tag-error { color: $text; background: $error; }
        & > .transcript-view--envelope { color: $text-secondary; text-style: bold; }
        & > .transcript-view--tool-name { color: $text-warning; text-style: bold; }
        & > .transcript-view--error { color: $text-error; text-style: bold; }
        & > .transcript-view--bad { color: $text-error; }
        & > .transcript-view--ok { color: $text-success; }
        & > .transcript-view--warning { color: $text-warning; text-style: bold; }
        & > .transcript-view--notice { color: $text-warning; }
        /* The view's own: the cursor row (over the row's colours) and search hits. */
        & > .transcript-view--cursor { background: $primary 30%; }
        & > .transcript-view--hit { color: black; background: $warning; }
    }
    """

    #: One per `viewer.palette.Palette` field: rows are styled from these via the palette.
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *PALETTE_CLASSES,
        "transcript-view--cursor",
        "transcript-view--hit",
    }

    #: Generated from the key table (`viewer.keys`), which also writes the help.
    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.VIEW)

    cursor: reactive[int] = reactive(0, always_update=True, init=False)
    search_query: reactive[str] = reactive("", init=False)
    """The active search (empty: none). Not `query`: that is `DOMNode.query()`."""

    @dataclass
    class ArtifactRequested(Message):
        """Open or close the artifact of the marker at `site`."""

        site: SiteKey

    @dataclass
    class Rewrapped(Message):
        """The text width changed: everything cut to the old width must follow."""

        width: int

    @dataclass
    class Sized(Message):
        """The view has its first text width: work that counts rows at it can start."""

        width: int

    @dataclass
    class SearchFinished(Message):
        """A search is done: `count` blocks contain `query` (the cursor is on the first
        after it; `wrapped`: there was none after it, so on the first of all)."""

        query: str
        count: int
        wrapped: bool = False

    @dataclass
    class LinkRequested(Message):
        """Enter on a row that names another transcript (a Claude Code subagent's)."""

        line: int

    @dataclass
    class LineRequested(Message):
        """Page through transcript `line`: too long to lay out here, so the screen opens
        it in a pager instead of expanding it."""

        line: int

    def __init__(
        self,
        transcript: Transcript | None,
        state: AnalysisState,
        artifacts: Mapping[SiteKey, InlineArtifact],
        *,
        format: Format = Format.REFERENCE,
        id: str | None = None,
    ) -> None:
        """Show `transcript` (None: one that could not be opened, so no rows).

        `state` (the analysis and its ledger) and `artifacts` (the open inline
        artifacts) are read here, never written: the screen owns them.
        """
        super().__init__(id=id)
        self.transcript = transcript
        self.expansion = Expansion()
        # Width 0 until the first resize: nothing is cut to a width the view does not have.
        self.ctx = BlockContext(state, artifacts, self.expansion, width=0, format=format)
        self.file_doc = Document(
            FileSource(transcript, self.ctx) if transcript is not None else EmptySource()
        )
        self.layouter = Layouter(transcript, self.ctx, self.file_doc, self.post_message)
        """Where each block's row count comes from; the layout worker's body."""
        self.model_doc: Document | None = None
        """The model view's document: one per analysis (None before the first)."""
        self.model_call: int | None = None
        """The call the model view shows the context of (None: the next call)."""
        self.doc = self.file_doc
        self._strips: LRUCache[int, Strip] = LRUCache(512)
        self._strips_version = -1
        self._prefetch_token = 0
        self._search_token = 0
        self._anchor: Anchor | None = None
        self._places: dict[str, tuple[Document, Anchor]] = {}
        """Where the cursor was in each view when it was left (`toggle_document`)."""
        self._arrived_at = 0
        """The cursor's row when the view on show was switched to."""
        self.search_running = False
        """A search is reading the file (its hits so far are in `hits`)."""
        self._recount_request = 0
        self._recount_asked: dict[tuple[str, int], int] = {}
        """(view, block) -> the latest recount request that asked for its count."""
        self._sized_at = -math.inf
        """When the virtual size was last set (`_grow_size` spaces the growing ones);
        never, at first (`time.monotonic` may be small: it counts from the boot)."""
        self._size_timer: Timer | None = None
        self._landing: tuple[str, SiteKey] | None = None
        """(view, marker) whose artifact was just asked for: when its rows arrive the
        cursor lands on the first byte the model never saw (`_land`)."""
        self.stick_to_end = False
        """Follow mode at the bottom: new rows move the cursor to the end."""
        self.hits: list[int] = []
        """Blocks of the current document containing the search query."""
        self._cursor_style = Style(bgcolor="#2b3d5c")
        """The cursor row's background (from a component class once mounted)."""
        self._hit_style = Style(color="black", bgcolor="yellow")
        """A search hit's colours (likewise)."""

    # -- styles ---------------------------------------------------------------------

    @on(events.Mount)
    def _palette_on_mount(self) -> None:
        """Take the theme's palette now and whenever the app's theme changes."""
        self.restyle()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.restyle())

    def restyle(self) -> None:
        """Build the palette from the component classes; if it changed, rebuild every row.

        Rows are styled in worker threads, which cannot read component styles,
        so the palette is resolved here on the UI thread and swapped whole into
        the context the builders read; cached blocks of both documents and the
        rendered strips hold the old colours, so they are dropped.
        """
        palette = Palette.from_styles(lambda name: component_style(self, component_class(name)))
        cursor = Style(bgcolor=component_style(self, "transcript-view--cursor").bgcolor)
        hit = component_style(self, "transcript-view--hit")
        if (palette, cursor, hit) == (self.ctx.palette, self._cursor_style, self._hit_style):
            return
        self.ctx.palette, self._cursor_style, self._hit_style = palette, cursor, hit
        for doc in (self.file_doc, self.model_doc):
            if doc is not None:
                doc.invalidate()
        self._strips.clear()
        self.refresh()

    # -- layout --------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        """A new width re-wraps every block: relayout, keeping the cursor's block."""
        width = self.scrollable_content_region.width
        if width > 0 and width != self.ctx.width:
            first = self.ctx.width <= 0
            self.ctx.width = width
            if first:
                self.layouter.measured.adopt_width(width)  # rows expected before a width
            self.relayout(self.doc)
            self.post_message(self.Sized(width) if first else self.Rewrapped(width))
        elif not self.doc.laying_out and self.doc.blocks == 0:
            self.kick_layout(self.doc)

    def kick_layout(self, doc: Document) -> None:
        """Lay out blocks the source has and the document does not, unless already doing so."""
        if doc.laying_out or self.ctx.width <= 0 or self.size.width == 0:
            return
        if doc.source.available() <= doc.blocks or self.layouter.waits(doc, doc.blocks):
            return
        doc.laying_out = True
        if doc.blocks == 0:
            doc.width = self.ctx.width
        self._layout(doc, doc.generation, doc.blocks)

    def relayout(self, doc: Document, keep_position: bool = True) -> None:
        """Lay a document out again from the start (new width, new analysis)."""
        if keep_position and doc is self.doc and self.doc.total_rows:
            self._anchor = self._make_anchor()
            if self._anchor is not None and self.cursor == self._arrived_at:
                self._anchor.arrived = True
        doc.generation += 1
        doc.reset()
        self._strips.clear()
        if doc is self.doc:
            self._update_size()
        doc.laying_out = False
        self.kick_layout(doc)

    def _make_anchor(self) -> Anchor | None:
        where = self.doc.locate(min(self.cursor, self.doc.total_rows - 1))
        if where is None:
            return None
        return Anchor(where[0], where[1], self.cursor - int(self.scroll_y))

    @work(thread=True, group="layout", description="lay out the rows")
    def _layout(self, doc: Document, generation: int, start: int) -> None:
        """Count rows of blocks from `start` while the source has more (`Layouter.run`)."""
        worker = get_current_worker()
        self.layouter.run(doc, generation, start, lambda: worker.is_cancelled)

    # -- row counts the analysis took -----------------------------------------------

    def expect_rows(self, *, keep: bool = False) -> int:
        """An analysis is coming that counts the file view's rows as it reads.

        Returns the width it is to count at (0: none, there is no width yet).
        Past the first screen, the file view then waits for those counts
        (`rows_measured`) instead of parsing every line a second time beside
        the pass (on a big file, that was most of the background work).
        `keep`: while indexing, before the pass starts; counts already
        measured at this width stay. Before the view has a width (0), the
        expectation is at the first it gets (`on_resize`).
        """
        return self.layouter.measured.expect(self.ctx.width, keep=keep)

    def rows_measured(self, first: int, rows: array[int], width: int) -> None:
        """Counts of lines `first…` from the analysis (`RowsMeasured`): lay them out."""
        if self.layouter.measured.take(first, rows, width):
            self.kick_layout(self.file_doc)

    def rows_done(self) -> None:
        """The analysis ended (or failed): nothing more is measured; lay out the rest."""
        if self.layouter.measured.stop():
            self.kick_layout(self.file_doc)

    def on_layout_chunk(self, msg: LayoutChunk) -> None:
        """Row counts from a layout worker, for the document they were counted for."""
        msg.stop()
        doc = self.file_doc if msg.view == "file" else self.model_doc
        if doc is not None:
            self.apply_chunk(doc, msg)
        if msg.view == "file" and msg.done and self.model_doc is not None:
            self.kick_layout(self.model_doc)  # its turn has come (see `analysis_changed`)

    def apply_chunk(self, doc: Document, chunk: LayoutChunk) -> None:
        """Take a layout worker's counts into `doc` (called on the UI thread)."""
        if chunk.generation != doc.generation:
            return
        end = doc.total_rows
        if chunk.counts and doc.extend(chunk.start, chunk.counts):
            self._recount_indexes(doc, doc.take_dirty())
        if chunk.done:
            doc.laying_out = False
            self.kick_layout(doc)
        if doc is not self.doc:
            return
        anchor = self._anchor
        anchored = anchor is not None and (anchor.block < doc.blocks or chunk.done)
        if not anchored and not self.stick_to_end and end >= int(self.scroll_y) + self.size.height:
            # Appended below the screen: its rows are as drawn, and only the
            # scrollbar changes. A big file streams in hundreds of chunks; a new
            # virtual size re-lays the screen out (~25 ms here), so it grows at
            # most every SIZE_SECONDS while the rows come (at once when done).
            self._grow_size(final=chunk.done)
            self.prefetch()
            return
        self._update_size()
        if anchor is not None and anchored:
            self._anchor = None
            block = min(anchor.block, max(doc.blocks - 1, 0))
            start = doc.block_start(block)
            count = doc.counts[block] if block < doc.blocks else 1
            row = start + min(anchor.offset, max(count - 1, 0))
            self.set_cursor(row, scroll=False)
            self.scroll_to(y=max(row - anchor.above, 0), animate=False, immediate=True)
            if anchor.arrived:
                self._arrived_at = self.cursor
        elif self.stick_to_end and doc.total_rows:
            self.set_cursor(doc.total_rows - 1, scroll=False)
            self._scroll_to_last_row()
        self._strips.clear()  # rows past the old end were drawn blank
        self.prefetch()
        self.refresh()

    # -- prefetch -------------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolling: repaint (as ScrollView does) and build the blocks ahead in a worker."""
        super().watch_scroll_y(old_value, new_value)
        self.prefetch()

    def prefetch(self) -> None:
        """Build blocks a screen above and two below the viewport off the UI thread.

        Rendering still builds a missing block itself (so a row is never blank),
        but in ordinary scrolling the blocks are already cached by then, and the
        file reads and JSON parsing happened in a thread.
        """
        doc = self.doc
        total = doc.total_rows
        if not total:
            return
        height = max(self.scrollable_content_region.height, 1)
        top = int(self.scroll_y)
        first = doc.locate(max(top - height, 0))
        last = doc.locate(min(top + 3 * height, total - 1))
        if first is None or last is None:
            return
        missing = doc.missing(first[0], last[0])
        if missing:
            self._prefetch_token += 1
            self._prefetch(doc, doc.epoch, missing, self._prefetch_token)

    @work(thread=True, group="prefetch", description="build the blocks ahead")
    def _prefetch(self, doc: Document, epoch: int, indexes: list[int], token: int) -> None:
        """Build blocks in a thread and post them (never touching the cache here).

        A newer request supersedes this one through `token` rather than through
        worker cancellation, so that waiting on the app's workers never fails.
        """
        worker = get_current_worker()
        built = {}
        for index in indexes:
            if worker.is_cancelled or epoch != doc.epoch or token != self._prefetch_token:
                return
            built[index] = doc.source.build(index)
        self.post_message(BlocksBuilt(doc.view, epoch, built))

    def on_blocks_built(self, msg: BlocksBuilt) -> None:
        """Take prefetched blocks into the cache (dropped if the state moved on)."""
        msg.stop()
        if msg.view == self.doc.view and self.doc.accept(msg.epoch, msg.blocks):
            self._strips.clear()
            self.refresh()

    def _resync(self) -> None:
        self._strips.clear()
        self._update_size()
        self.refresh()

    def _update_size(self) -> None:
        """The virtual size: the rows laid out, and an estimate of the rest while laying out.

        The scrollbar is the whole transcript's from the first chunk, as a
        pager's is (`Document.estimated_rest`); the rows past those laid out
        show where the layout has got to until theirs arrive.
        """
        self._sized_at = time.monotonic()
        self.virtual_size = Size(self.ctx.width, self.doc.total_rows + self.doc.estimated_rest())

    def _scroll_to_last_row(self) -> None:
        """Scroll so the last row laid out is at the bottom (not the estimate's end)."""
        self.scroll_to(
            y=max(self.doc.total_rows - self.scrollable_content_region.height, 0),
            animate=False,
            immediate=True,
        )

    def _grow_size(self, final: bool) -> None:
        """`_update_size`, at most every `SIZE_SECONDS` unless `final` (see `apply_chunk`)."""
        if final or time.monotonic() - self._sized_at >= SIZE_SECONDS:
            self._update_size()
        elif self._size_timer is None:
            self._size_timer = self.set_timer(SIZE_SECONDS, self._grow_late)

    def _grow_late(self) -> None:
        self._size_timer = None
        self._update_size()

    def show_document(self, doc: Document, line: int | None = None) -> None:
        """Switch to another document (file view / model view), near transcript `line`."""
        source = doc.source
        if isinstance(source, ModelSource) and not source.making and not source.ready():
            source.making = True
            self._make_context(doc)
        self.doc = doc
        if doc.blocks and doc.width != self.ctx.width:
            # Laid out at another width while it was not on show: lay it out again.
            self.relayout(doc, keep_position=False)
        self._strips.clear()
        self._update_size()
        target = 0
        if line is not None:
            index = doc.source.index_of_line(line)
            if index is None:
                # The nearest earlier block that the other view has.
                for i in range(doc.blocks - 1, -1, -1):
                    if doc.source.line_of(i) <= line:
                        index = i
                        break
            if index is not None and index < doc.blocks:
                target = doc.block_start(index)
            elif index is not None and doc.laying_out:
                # Laid out again (a new width): its layout goes there when it gets there.
                self._anchor = Anchor(index, 0, 0, arrived=True)
        self.set_cursor(target, scroll=False)
        self.scroll_to(y=target, animate=False, immediate=True)
        self._arrived_at = self.cursor
        self.kick_layout(doc)
        self.refresh()

    def rebuild_blocks(self, indexes: list[int], doc: Document | None = None) -> None:
        """Rebuild blocks whose rows changed (expanded, artifact opened, badge changed)."""
        doc = doc or self.doc
        for i in indexes:
            doc.rebuild(i)  # a block not laid out yet is marked dirty instead
        if doc is self.doc:
            self._strips.clear()
            self._update_size()
            self.refresh()

    def refresh_blocks(self, doc: Document, lines: list[int]) -> None:
        """New analysis: repaint every block, recount those that may change height.

        The cursor stays on the same row of the same block.
        """
        anchor = self._make_anchor() if doc is self.doc and doc.total_rows else None
        doc.invalidate()
        self._recount_lines(doc, lines)
        if doc is not self.doc:
            return
        self._strips.clear()
        self._update_size()
        if anchor is not None and anchor.block < doc.blocks:
            count = doc.counts[anchor.block]
            row = doc.block_start(anchor.block) + min(anchor.offset, max(count - 1, 0))
            self.set_cursor(row, scroll=False)
            self.scroll_to(y=max(row - anchor.above, 0), animate=False, immediate=True)
        self.refresh()

    # -- what the screen tells the view -------------------------------------------------------

    @property
    def text_width(self) -> int:
        """The width rows are cut to (what an inline artifact's rows must fit)."""
        return self.ctx.width

    @property
    def showing_model(self) -> bool:
        """Whether the model view is on show."""
        return self.model_doc is not None and self.doc is self.model_doc

    def index_grew(self, complete: bool) -> None:
        """The transcript's line index reached further: lay out the new lines."""
        source = self.file_doc.source
        if isinstance(source, FileSource):
            source.index_complete = complete
        self.kick_layout(self.file_doc)

    def set_following(self, following: bool) -> None:
        """Follow mode: a last line still being written is not laid out until it ends."""
        source = self.file_doc.source
        if isinstance(source, FileSource):
            source.following = following

    def appended(self, new_lines: int) -> None:
        """Follow mode: `new_lines` were appended; lay them out, staying at the end if there."""
        if self.transcript is None:
            return
        doc = self.file_doc
        at_end = doc.total_rows == 0 or self.cursor >= doc.total_rows - 1
        # The line that was last may have been incomplete when it was laid out.
        keep = min(doc.blocks, max(self.transcript.line_count - new_lines - 1, 0))
        if doc.blocks > keep and not doc.laying_out:
            doc.truncate(keep)
        if self.doc is doc and at_end:
            self.stick_to_end = True
        self.kick_layout(doc)

    @staticmethod
    def _fold_start(source: FileSource, line: int) -> int | None:
        """The first line of the folded run `line` would join (None: the line before it is
        no folded record)."""
        if line < 2 or not source.folded(line - 1):
            return None
        first = line - 1
        while first > 1 and source.folded(first - 1):
            first -= 1
        return first

    def analysis_changed(self, lines: set[int]) -> None:
        """A new analysis was swapped in: a new model view, and the blocks it may resize.

        Only blocks with markers or findings (`lines`) can change height: those
        are rebuilt and the rest repainted, instead of laying a huge transcript
        out a second time.
        """
        if self.transcript is None:
            return
        showing_model = self.showing_model
        line = self._cursor_line()
        # An expanded block says where its message lived, which the analysis decides.
        lines = lines | {k.block + 1 for k in self.expansion.block_keys() if k.view == "file"}
        self.model_doc = self._model_document(self.model_call)
        if showing_model:
            self.show_document(self.model_doc, line)
        self.refresh_blocks(self.file_doc, sorted(lines))
        # The model view is laid out after the file view, not beside it: on a huge
        # transcript the two would share one core (the GIL) and both finish late.
        # Showing it (`m`) starts its layout at once.
        if showing_model or not self.file_doc.laying_out:
            self.kick_layout(self.model_doc)

    def toggle_document(self) -> bool:
        """Switch between the file view and the model view; False if there is no model view.

        The reader keeps the place: back in a view without having moved in the
        other, the cursor and the scroll are where they were (`n` goes on from
        there); having moved, the view shows the line the cursor is on.
        """
        if self.showing_model:
            target = self.file_doc
        elif self.model_doc is not None:
            if self.model_call is not None and self.transcript is not None:
                # `m` is the next call's context; `M` showed another call's.
                self.model_call = None
                self.expansion.collapse_view("model")
                self.model_doc = self._model_document(None)
            target = self.model_doc
        else:
            return False
        leaving = self.doc
        moved = self.cursor != self._arrived_at
        line = self._cursor_line()
        anchor = self._make_anchor() if leaving.total_rows else None
        if anchor is not None:
            self._places[leaving.view] = (leaving, anchor)
        saved = self._places.get(target.view)
        if saved is not None and saved[0] is target and (not moved or not line):
            self.show_document(target)
            self._restore(saved[1])
        else:
            self.show_document(target, line)
        if self.search_query:
            self.search(self.search_query)
        return True

    def show_call_context(self, index: int | None) -> bool:
        """Show the model view at call `index` (0-based in the analysis's calls; None: the
        next call), from its first row; False if there is no analysis yet.

        What `M` does at the cursor's call, and what the context screen asks for when
        a call is chosen there.
        """
        analysis = self.ctx.analysis
        if analysis is None or self.transcript is None:
            return False
        if index is not None and not 0 <= index < len(analysis.calls):
            index = None
        leaving = self.doc
        if leaving.total_rows:
            anchor = self._make_anchor()
            if anchor is not None:
                self._places[leaving.view] = (leaving, anchor)
        if index != self.model_call:
            self.expansion.collapse_view("model")  # block i is another entry now
        self.model_call = index
        self.model_doc = self._model_document(index)
        self.show_document(self.model_doc)
        if self.search_query:
            self.search(self.search_query)
        return True

    def _model_document(self, call: int | None) -> Document:
        """A model view at `call` (None: the next call). Its context, when it needs one, is
        made in a worker (`_make_context`) once it is shown, never before: a session that
        never compacted is its whole file, which nobody may ask to see."""
        assert self.transcript is not None
        doc = Document(ModelSource(self.transcript, self.ctx, call, wait=True))
        if self.model_doc is not None:
            # Layout chunks and recounts find their document by view and generation,
            # prefetched blocks by view and epoch: the document this one replaces may
            # still have workers posting (another call's counts, another call's blocks).
            doc.generation = self.model_doc.generation + 1
            doc.epoch = self.model_doc.epoch + 1
        return doc

    @work(
        thread=True,
        group="model-context",
        exclusive=True,
        description="make the context of a call",
    )
    def _make_context(self, doc: Document) -> None:
        """Make a model view's call context (reads the lines of one call), then lay it out."""
        source = doc.source
        assert isinstance(source, ModelSource)
        source.context()
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._context_made, doc)

    def _context_made(self, doc: Document) -> None:
        """A model view's context is made: lay it out, if it is still the model view."""
        if doc is not self.model_doc:
            return
        if doc is self.doc:
            self._update_size()
            self.refresh()
        self.kick_layout(doc)

    @property
    def model_header(self) -> str:
        """What the header calls the model view on show (`ModelSource.header_words`)."""
        source = self.model_doc.source if self.model_doc is not None else None
        if isinstance(source, ModelSource):
            return source.header_words()
        return "model view: what the model is sent next"

    def _restore(self, anchor: Anchor) -> None:
        """Put the cursor and the scroll back where `anchor` says.

        A document being laid out again (its width changed while it was not on
        show) is not there yet: its layout puts the cursor back when it gets there.
        """
        doc = self.doc
        if anchor.block >= doc.blocks:
            if doc.laying_out:
                self._anchor = replace(anchor, arrived=True)
            return
        last = max(doc.counts[anchor.block] - 1, 0)
        row = doc.block_start(anchor.block) + min(anchor.offset, last)
        self.set_cursor(row, scroll=False)
        self.scroll_to(y=max(row - anchor.above, 0), animate=False, immediate=True)
        self._arrived_at = self.cursor

    def lines_changed(self, lines: list[int], same_rows: list[int] | None = None) -> None:
        """Transcript `lines` look different (badges, findings): redraw them in both views.

        Blocks on screen (cached) are rebuilt at once; the others are counted
        again in a worker (`Recounted`), so thousands of badges turning at the
        end of a check cost the UI thread a set of line numbers, not a build
        each. Until a count lands, a block built on the way (scrolled to)
        corrects its own count. Lines `same_rows` keep their rows (a badge of
        the same width, no finding added): they are redrawn, never recounted.
        """
        for doc in (self.file_doc, self.model_doc):
            if doc is not None:
                self._recount_lines(doc, lines)
                if same_rows:
                    self._restyle_lines(doc, same_rows)
        if self._strips:
            self._strips.clear()
        self._update_size()
        self.refresh()
        self._land()

    def _restyle_lines(self, doc: Document, lines: list[int]) -> None:
        """Blocks of `lines` look other with the same rows: cached ones rebuilt, the rest dropped
        from the cache, so a build begun from the old look is refused (their counts hold)."""
        indexes = [i for i in map(doc.source.index_of_line, lines) if i is not None]
        cached = [i for i in indexes if i >= doc.blocks or doc.is_cached(i)]
        for index in cached:
            doc.rebuild(index)
        if len(cached) < len(indexes):
            doc.invalidate(i for i in indexes if i < doc.blocks and not doc.is_cached(i))

    def _recount_lines(self, doc: Document, lines: list[int]) -> None:
        indexes = [doc.source.index_of_line(line) for line in lines]
        self._recount_indexes(doc, [i for i in indexes if i is not None])

    def _recount_indexes(self, doc: Document, indexes: list[int]) -> None:
        """Blocks `indexes` changed: cached ones rebuilt now, the rest counted in a worker."""
        later: list[int] = []
        for index in indexes:
            if index >= doc.blocks or doc.is_cached(index):
                doc.rebuild(index)  # built now, or marked dirty for when it is laid out
            else:
                later.append(index)
        if later:
            doc.invalidate(later)  # once: a prefetch built from the old look is refused
            self._recount_request += 1
            for index in later:
                self._recount_asked[(doc.view, index)] = self._recount_request
            self._recount(doc, doc.generation, self._recount_request, later)

    @work(thread=True, group="recount", description="count rows again")
    def _recount(self, doc: Document, generation: int, request: int, indexes: list[int]) -> None:
        """Count the rows of blocks whose look changed (a thread worker)."""
        worker = get_current_worker()
        counts: dict[int, int] = {}
        for n, index in enumerate(indexes):
            if worker.is_cancelled or generation != doc.generation:
                return
            if index < doc.source.available():
                counts[index] = doc.source.build(index, count_only=True).count
            if n % 64 == 63:
                give_way()
        self.post_message(Recounted(doc.view, generation, request, counts))

    def on_recounted(self, msg: Recounted) -> None:
        """Counts of changed blocks: taken where no later request asked for them again."""
        msg.stop()
        doc = self.file_doc if msg.view == "file" else self.model_doc
        if doc is None or msg.generation != doc.generation:
            return
        asked = self._recount_asked
        latest = {}
        for index, count in msg.counts.items():
            if asked.get((msg.view, index)) == msg.request:
                del asked[(msg.view, index)]
                latest[index] = count
        if doc.set_counts(latest) and doc is self.doc:
            self._strips.clear()
            self._update_size()
            self.refresh()

    def rebuild_line(self, line: int) -> None:
        """Transcript `line` looks different (badge, open artifact): rebuild it in both views.

        An artifact asked for by enter whose rows have now arrived is landed on.
        """
        self._rebuild_line(line)
        self._land()

    def _rebuild_line(self, line: int) -> None:
        for doc in (self.file_doc, self.model_doc):
            if doc is None:
                continue
            index = doc.source.index_of_line(line)
            if index is not None:
                self.rebuild_blocks([index], doc)

    def cursor_to_site(self, key: SiteKey) -> None:
        """Put the cursor on a marker's first row (after its artifact closed under it)."""
        doc = self.doc
        index = doc.source.index_of_line(key.line)
        if index is None or index >= doc.blocks:
            return
        for i, row in doc.block(index).own_rows():
            if row.site == key:
                self.set_cursor(doc.block_start(index) + i)
                return

    def grow_artifact(self, art: InlineArtifact, grow: Callable[[], None]) -> None:
        """An open artifact shows more rows (`grow`): keep the cursor on the row it was on.

        Rows appear after the indexed ones (in place of the "not indexed yet"
        row): a cursor below that point keeps showing the same row, not what
        slid under it.
        """
        doc = self.doc
        grows_at = self._artifact_row(art)
        if grows_at is not None:
            grows_at += art.HEADER_ROWS + art.known_rows
        before = doc.total_rows
        grow()
        self._rebuild_line(art.site_key.line)
        delta = doc.total_rows - before
        if grows_at is not None and delta and self.cursor >= grows_at:
            top = self.scroll_y
            self.set_cursor(self.cursor + delta, scroll=False)
            self.scroll_to(y=top + delta, animate=False, immediate=True)
        self._land()  # the boundary may be among the rows just indexed

    def _land(self) -> None:
        """Put the seen/unseen boundary of the artifact just opened at the top of the view.

        The head the model saw is already on screen in the excerpt above the
        marker, so what a person opens an artifact for is the rest: the cursor
        goes to the row holding the first byte the model never saw
        (`inline.boundary_row`), scrolled to the top, with the seen head right
        above it (one `k` away). Waits while the index has not reached it.
        """
        landing = self._landing
        if landing is None or landing[0] != self.doc.view:
            return
        art = self.ctx.artifact(landing[1], self.doc.view)
        if art is None:
            return
        at = self._artifact_row(art)
        row = boundary_row(art)
        if at is None or row is None:
            return
        self._landing = None
        target = at + row
        self.stick_to_end = False
        self.set_cursor(target, scroll=False)
        self.scroll_to(y=self.cursor, animate=False, immediate=True)

    def _artifact_row(self, art: InlineArtifact) -> int | None:
        """The document row of an open artifact's first header row, if it is laid out."""
        doc = self.doc
        index = doc.source.index_of_line(art.site_key.line)
        if index is None or index >= doc.blocks:
            return None
        offset = doc.block(index).offset_of(art)
        return None if offset is None else doc.block_start(index) + offset

    @property
    def cursor_line(self) -> int | None:
        """The transcript line of the row under the cursor (0: none, as a preamble's)."""
        return self._cursor_line()

    def _cursor_line(self) -> int | None:
        row = self.current_row
        return row.line if row is not None else None

    # -- rendering ---------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        """Render the row at screen line `y` (Line API)."""
        _, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self._strips_version != self.doc.version:
            self._strips.clear()
            if self._strips_version != -1:
                # Row counts moved under us (a block corrected its count while
                # being built): resize and paint again once this frame is done.
                self.call_later(self._resync)
            self._strips_version = self.doc.version
        if index == self.cursor:
            return self._render_row(index, width, base, cursor=True)
        strip = self._strips.get(index)
        if strip is None:
            strip = self._render_row(index, width, base, cursor=False)
            self._strips[index] = strip
        return strip

    def _render_row(self, index: int, width: int, base: Style, cursor: bool) -> Strip:
        row = self.doc.row(index)
        if row is None:
            if index == self.doc.total_rows and self.doc.estimated_rest():
                return self._laying_out_row(width, base)
            return Strip.blank(width, base)
        text = row.text
        query = self.search_query
        searched = self.search_text(row) if query else ""
        if searched:
            # Only what search looks at is marked: never the gutter's line number.
            skip = len(text.plain) - len(searched)
            plain = text.plain.casefold()
            needle = query.casefold()
            at = plain.find(needle, skip)
            if at != -1:
                text = text.copy()
                while at != -1:
                    text.stylize(self._hit_style, at, at + len(needle))
                    at = plain.find(needle, at + len(needle))
        segments = list(text.render(self.app.console))
        strip = Strip(segments).crop_extend(0, width, None)
        return strip.apply_style(base + self._cursor_style if cursor else base)

    def _laying_out_row(self, width: int, base: Style) -> Strip:
        """The row just past those laid out, while the rest is an estimate: how far it got."""
        reached, whole = self.doc.source.extent(self.doc.blocks)
        share = f" ({reached * 100 // whole}%)" if whole else ""
        text = Text(" " * GUTTER + f"… laying out{share}: the rows below are an estimate")
        text.stylize(self.ctx.palette.dim)
        strip = Strip(list(text.render(self.app.console))).crop_extend(0, width, None)
        return strip.apply_style(base)

    # -- cursor --------------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        """Repaint the rows the cursor left and entered."""
        self._strips.discard(old)
        self._strips.discard(new)
        self.refresh()

    def watch_search_query(self) -> None:
        """New highlights: every strip is stale."""
        self._strips.clear()
        self.refresh()

    def set_cursor(self, row: int, scroll: bool = True) -> None:
        """Move the cursor (clamped) and, unless told not to, keep it on screen."""
        total = self.doc.total_rows
        row = max(0, min(row, total - 1)) if total else 0
        self.cursor = row
        if scroll:
            self.scroll_cursor_visible()

    def scroll_cursor_visible(self, center: bool = False) -> None:
        """Scroll so the cursor row is on screen."""
        height = self.scrollable_content_region.height or 1
        top = int(self.scroll_y)
        if center:
            self.scroll_to(y=max(self.cursor - height // 3, 0), animate=False, immediate=True)
        elif self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def _moved_by_hand(self) -> None:
        """A key or click moved the cursor: stop sticking to the end, and do not land."""
        self.stick_to_end = False
        self._landing = None

    def action_cursor(self, delta: int) -> None:
        """Move the cursor by rows."""
        self._moved_by_hand()
        self.set_cursor(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        """Move the cursor and the view by a screen (pgdn / space / ctrl+f, pgup / b / ctrl+b)."""
        self._scroll_by(direction * max(self.scrollable_content_region.height - 1, 1))

    def action_half_page(self, direction: int) -> None:
        """Move the cursor and the view by half a screen (ctrl+d / ctrl+u, as in less and vim)."""
        self._scroll_by(direction * max(self.scrollable_content_region.height // 2, 1))

    def _scroll_by(self, rows: int) -> None:
        self._moved_by_hand()
        self.scroll_to(y=self.scroll_y + rows, animate=False, immediate=True)
        self.set_cursor(self.cursor + rows)

    def action_top(self) -> None:
        """To the first row."""
        self._moved_by_hand()
        self.set_cursor(0)

    def action_bottom(self) -> None:
        """To the last row laid out."""
        self._landing = None
        self.set_cursor(self.doc.total_rows - 1)
        self._scroll_to_last_row()

    @property
    def current_row(self) -> Row | None:
        """The row under the cursor."""
        return self.doc.row(self.cursor)

    def current_site(self) -> SiteKey | None:
        """The marker the cursor is on, or the first marker of the cursor's block."""
        row = self.current_row
        if row is None:
            return None
        if row.site is not None:
            return row.site
        where = self.doc.locate(self.cursor)
        if where is None:
            return None
        block = self.doc.block(where[0])
        for r in block.text_rows():
            if r.site is not None and r.kind == "marker":
                return r.site
        return None

    # -- activation and mouse -------------------------------------------------------------

    def action_activate(self) -> None:
        """Enter: open/close the artifact on a marker, or expand/collapse the block."""
        row = self.current_row
        if row is None:
            return
        if row.site is not None and row.kind in ("marker", "art-head", "art", "art-end"):
            self.toggle_artifact(row.site)
            return
        if row.kind == "link":
            self.post_message(self.LinkRequested(row.line))
            return
        if row.kind == "jump":
            self.go_to_line(row.target)
            return
        if row.kind in ("fold", "unfold"):
            self.set_folded(row.line, unfold=row.kind == "fold")
            return
        where = self.doc.locate(self.cursor)
        if where is not None and row.line > 0:
            block = self.doc.block(where[0])
            if any(r.kind == "bigline" for r in block.text_rows()):
                self.post_message(self.LineRequested(row.line))
                return
        self.toggle_expanded()

    def toggle_artifact(self, key: SiteKey) -> None:
        """Show marker `key`'s artifact in this view, landing on what the model never saw,
        or hide it again.

        Each view shows only the artifacts opened in it (`Expansion`): one
        opened in the file view stays collapsed in the model view. Opening asks
        the screen (`ArtifactRequested`) unless the other view has it open
        already; hiding it in the last view that shows it asks the screen to
        close it.
        """
        view = self.doc.view
        expansion = self.expansion
        self._landing = None
        if expansion.shows_artifact(view, key) and self.ctx.is_open(key):
            expansion.hide_artifact(view, key)
            if expansion.artifact_views(key):  # the other view still shows it: keep it open
                self._rebuild_line(key.line)
                self.cursor_to_site(key)
            else:
                self.post_message(self.ArtifactRequested(key))  # the screen closes it
            return
        self._landing = (view, key)
        if self.ctx.is_open(key):
            expansion.show_artifact(view, key)
            self.rebuild_line(key.line)
            return
        expansion.forget_artifact(key)  # left from an open that was refused or failed
        expansion.show_artifact(view, key)
        self.post_message(self.ArtifactRequested(key))

    def go_to_line(self, line: int) -> None:
        """Put the cursor on transcript `line`'s first row (a folded record: its run's)."""
        index = self.doc.source.index_of_line(line)
        if index is None or index >= self.doc.blocks:
            return
        self._landing = None
        self._moved_by_hand()
        self.set_cursor(self.doc.block_start(index), scroll=False)
        self.scroll_cursor_visible(center=True)

    def set_folded(self, line: int, *, unfold: bool, only: bool = False) -> None:
        """Unfold the run of records folded from `line`, or fold again the unfolded run
        `line` is in (`viewer.folds`); `only`: unfold `line` alone (a search hit in it).

        The cursor stays on the run's first row.
        """
        source = self.file_doc.source
        if not isinstance(source, FileSource):
            return
        if unfold:
            count = 1 if only else max(len(source.fold_run(line)[0]), 1)
            lines = range(line, line + count)
            self.expansion.unfold(lines)
        else:
            unfolded = self.expansion.unfolded_lines()
            first = last = line
            while first - 1 in unfolded:
                first -= 1
            while last + 1 in unfolded:
                last += 1
            lines = range(first, last + 1)
            self.expansion.refold(lines)
        self._recount_lines(self.file_doc, [*lines, lines.stop])
        above = self._fold_start(source, lines.start)
        if above is not None:  # the run's fold row above counts fewer records now
            self._restyle_lines(self.file_doc, [above])
        self._strips.clear()
        self._update_size()
        if self.doc is self.file_doc and not only:
            index = source.index_of_line(lines.start)
            if index is not None and index < self.doc.blocks:
                self.set_cursor(self.doc.block_start(index))
        self.refresh()

    def set_fold_records(self, fold: bool) -> None:
        """Fold the agent's own records ("what the model saw") or show each ("everything").

        Every record's rows change: the file view is laid out again, keeping
        the cursor's block, as a new width does.
        """
        if fold == self.ctx.fold_records:
            return
        self.ctx.fold_records = fold
        self.relayout(self.file_doc)

    def toggle_expanded(self) -> None:
        """Expand a collapsed block under the cursor, or collapse it again."""
        where = self.doc.locate(self.cursor)
        if where is None:
            return
        index = where[0]
        self.expansion.toggle(BlockKey(self.doc.view, index))
        self.rebuild_blocks([index])
        start = self.doc.block_start(index)
        self.set_cursor(min(self.cursor, start + self.doc.counts[index] - 1))
        if self.cursor < int(self.scroll_y):
            self.scroll_to(y=start, animate=False, immediate=True)

    #: Row kinds a click acts on, as enter does (elsewhere a click only moves the cursor).
    CLICK_ACTS: ClassVar[frozenset[str]] = frozenset(
        {"marker", "more", "art-head", "bigline", "fold", "jump"}
    )

    def on_click(self, event: events.Click) -> None:
        """A click moves the cursor; a click on a marker, a "more" row or a folded run of
        records acts on it."""
        row_index = int(self.scroll_y) + event.y
        if row_index >= self.doc.total_rows:
            return
        self.focus()
        self._moved_by_hand()
        self.set_cursor(row_index, scroll=False)
        row = self.current_row
        if row is not None and row.kind in self.CLICK_ACTS:
            self.action_activate()

    # -- jumping ---------------------------------------------------------------------------

    def jump(
        self,
        blocks: list[int],
        forward: bool,
        match: Callable[[Row], bool],
        expand_if_hidden: bool = False,
        *,
        start: tuple[int, int] | None = None,
    ) -> bool:
        """Move to the next/previous row matching `match` in one of the sorted `blocks`.

        Only the target blocks are built, so stepping through a million-line
        transcript costs a bisection and one block, not a scan. `start` is the
        (block, row) to look after (before, going back) instead of the cursor's.
        """
        doc = self.doc
        if start is None:
            here = doc.locate(self.cursor)
            start = here if here is not None else (-1, -1)
        cur_block, cur_off = start
        order = blocks if forward else list(reversed(blocks))
        for b in order:
            if b >= doc.blocks:
                continue
            if (forward and b < cur_block) or (not forward and b > cur_block):
                continue
            rows = self._matching_rows(b, match, expand_if_hidden)
            if b == cur_block:
                rows = [r for r in rows if (r > cur_off if forward else r < cur_off)]
            if not rows:
                continue
            target = doc.block_start(b) + (rows[0] if forward else rows[-1])
            self._moved_by_hand()
            self.set_cursor(target, scroll=False)
            self.scroll_cursor_visible(center=True)
            return True
        return False

    def _matching_rows(self, b: int, match: Callable[[Row], bool], expand: bool) -> list[int]:
        block = self.doc.block(b)
        found = [i for i, row in block.own_rows() if match(row)]
        key = BlockKey(self.doc.view, b)
        source = self.doc.source
        if not found and expand and isinstance(source, FileSource):
            line = source.line_of(b)
            folded = source.folded(line) or any(r.kind == "fold" for r in block.text_rows())
            if folded:  # a hit in a folded record or summary: shown on its own rows
                self.set_folded(line, unfold=True, only=True)
                block = self.doc.block(b)
                found = [i for i, row in block.own_rows() if match(row)]
        if not found and expand and key not in self.expansion:
            self.expansion.expand(key)
            self.rebuild_blocks([b])
            block = self.doc.block(b)
            found = [i for i, row in block.own_rows() if match(row)]
        return found

    def is_problem_row(self, row: Row) -> bool:
        """Rows that show something wrong: bad lines, findings, markers in a bad state."""
        if row.kind == "problem" or (row.kind == "finding" and row.site is None):
            return True
        return (
            row.kind == "marker"
            and not row.cont
            and row.site is not None
            and self.ctx.is_bad(row.site)
        )

    # -- search ------------------------------------------------------------------------------
    #
    # A search finds the transcript's text, never the viewer's own words. A block is a hit
    # when its transcript line can hold the query (`core.search.candidate_lines`, a scan
    # of the file's bytes: the line's JSON strings, decoded and casefolded, hold it
    # casefolded) and one of the block's own rows, inline artifacts left out, shows it
    # (`search_text`: the row without its line-number gutter, casefolded; rows that are
    # only the viewer's words, "… N more lines", findings, the big-line label, never).
    # A badge or a heading's label on such a line is matched with the row it is on; on
    # any other line it is never found (searching "42" no longer stops at line 42's
    # number, "verified" no longer at every badge). Only the candidates' blocks are
    # built, so a rare word costs the scan: about half a second per 256 MiB.

    #: Row kinds that hold only the viewer's words (or an inline artifact's rows).
    SEARCH_SKIPS: ClassVar[frozenset[str]] = frozenset(
        {"more", "finding", "finding-wrap", "bigline", "art-head", "art", "art-end", "note"}
    )
    #: Seconds between a search's progress messages.
    SEARCH_POST_SECONDS: ClassVar[float] = 0.2

    _search_landed = False
    """Whether the running search has put the cursor on a hit yet (or `n` / `N` did)."""

    @dataclass
    class SearchAdvanced(Message):
        """A search is under way: `done` of `total` bytes read, `hits` blocks found so far."""

        query: str
        done: int
        total: int
        hits: int

    @classmethod
    def search_text(cls, row: Row) -> str:
        """What search looks at in a row: its text without the gutter ("" for the viewer's
        own rows). Case is the caller's to fold."""
        if row.kind in cls.SEARCH_SKIPS:
            return ""
        plain = row.text.plain
        if row.line > 0:
            number = f"{row.line:>{GUTTER - 1}} "
            if plain.startswith(number):
                return plain[len(number) :]
        return plain[GUTTER:] if plain.startswith(" " * GUTTER) else plain

    def search(self, query: str) -> None:
        """Find every block of the current document that shows `query`, in a worker.

        Hits arrive while it runs (`SearchProgress`): `n` / `N` step through
        those found so far, and in the file view, where hits come in document
        order, the cursor goes to the first one below it as soon as it is found.
        """
        self._landing = None
        self.search_query = query
        self.hits = []
        self._search_token += 1
        self._search_landed = False
        self.search_running = bool(query)
        if query:
            self._search(self.doc, query, self._search_token)

    @work(thread=True, group="search", description="search")
    def _search(self, doc: Document, query: str, token: int) -> None:
        """Scan the transcript for lines that can hold `query`; build only their blocks.

        A newer search (or a view switch, which searches again) supersedes this
        one through `token`; the scan stops at its next chunk.
        """
        worker = get_current_worker()
        transcript = self.transcript

        def superseded() -> bool:
            return worker.is_cancelled or token != self._search_token

        needle = query.casefold()
        source = doc.source
        limit = source.available()
        hits: list[int] = []
        fresh: list[int] = []
        count = transcript.line_count if transcript is not None else 0
        reach = [0, transcript.line_span(count)[1] if transcript is not None and count else 0]
        posted = time.monotonic()

        def progress(done: int, total: int) -> None:
            nonlocal posted
            reach[0], reach[1] = max(reach[0], done), total
            give_way()
            now = time.monotonic()
            if now - posted >= self.SEARCH_POST_SECONDS and not superseded():
                posted = now
                blocks = sorted(set(fresh))
                fresh.clear()
                self.post_message(
                    SearchProgress(doc.view, query, token, reach[0], reach[1], blocks)
                )

        lines = (
            candidate_lines(transcript, query, progress=progress, cancelled=superseded)
            if transcript is not None
            else iter(())
        )
        for n, line in enumerate(lines, start=1):
            for index in self._search_blocks_of_line(doc, line):
                if index >= limit:
                    continue
                rows = source.build(index, expand=True).text_rows()
                if any(needle in self.search_text(row).casefold() for row in rows):
                    hits.append(index)
                    fresh.append(index)
            if n % 64 == 0 and transcript is not None:
                progress(transcript.line_span(line)[1], reach[1])
                if superseded():
                    return
        if superseded():
            return
        self.post_message(SearchDone(doc.view, query, sorted(set(hits)), token))

    def _search_blocks_of_line(self, doc: Document, line: int) -> list[int]:
        """The blocks of `doc` that show text from transcript `line` (worker-safe).

        One in the file view. In the model view, the replay entry from the line,
        or, for an elision line (never an entry itself), the entries its stubs
        replaced: a stubbed entry shows the elision's text, not its own line's.
        """
        index = doc.source.index_of_line(line)
        if index is not None:
            return [index]
        analysis = self.ctx.analysis
        if doc.view != "model" or not isinstance(analysis, Analysis) or self.transcript is None:
            return []
        parsed = self.transcript.parse(line)
        if not isinstance(parsed, Elision):
            return []
        entries = {analysis.replay.find(target) for target, _stub in parsed.items}
        return sorted(entry + 1 for entry in entries if entry >= 0)

    def on_search_progress(self, msg: SearchProgress) -> None:
        """Hits found so far: keep them (so `n` reaches them) and say how far it got."""
        msg.stop()
        if msg.token != self._search_token or msg.view != self.doc.view:
            return  # a newer search, or another view, superseded it
        if msg.blocks:
            self._add_hits(msg.blocks)
            if not self._search_landed and self.doc.view == "file":
                # File-view hits arrive in document order: the first below the cursor
                # is the one a finished search would go to.
                self._land_on_hit(msg.blocks)
        self.post_message(self.SearchAdvanced(msg.query, msg.done, msg.total, len(self.hits)))

    def _add_hits(self, blocks: list[int]) -> None:
        """Merge sorted `blocks` into the sorted hits (the model view's come out of order)."""
        hits = self.hits
        if not hits or blocks[0] > hits[-1]:
            hits.extend(blocks)
        else:
            self.hits = sorted(set(hits).union(blocks))

    def _land_on_hit(self, blocks: list[int]) -> None:
        """Put the cursor on the first row showing the query in `blocks` below it, if any."""
        here = self.doc.locate(self.cursor)
        start = (here[0], here[1] - 1) if here is not None else None
        if self.jump(blocks, True, self._row_has_hit, expand_if_hidden=True, start=start):
            self._search_landed = True

    def _row_has_hit(self, row: Row) -> bool:
        return self.search_query.casefold() in self.search_text(row).casefold()

    def on_search_done(self, msg: SearchDone) -> None:
        """Hits are known: go to the first one after the cursor (unless the search already
        went to one, or `n` did) and say how many."""
        msg.stop()
        if msg.token != self._search_token or msg.view != self.doc.view:
            return  # a newer search, or another view, superseded it
        self.hits = msg.blocks
        self.search_running = False
        step: HitStep = "moved"
        if not self._search_landed:
            step = self.step_hit(forward=True, include_current=True) if self.hits else "none"
        self.post_message(self.SearchFinished(msg.query, len(msg.blocks), step == "wrapped"))

    def step_hit(self, forward: bool, include_current: bool = False) -> HitStep:
        """Move to the next/previous row showing the search query, wrapping round.

        Past the last hit `n` goes to the first (and `N` before the first to
        the last), as vim does: "wrapped" says so, so the screen can tell the
        person instead of leaving them at "no more hits". `include_current`:
        a hit on the cursor's own row counts (a new search). Rows are matched
        as the search matched them (`search_text`: no gutter, no labels).
        """
        start = None
        if include_current:
            here = self.doc.locate(self.cursor)
            start = (here[0], here[1] - 1) if here is not None else None
        has_hit = self._row_has_hit
        step: HitStep = "none"
        if self.jump(self.hits, forward, has_hit, expand_if_hidden=True, start=start):
            step = "moved"
        else:
            far_end = (-1, -1) if forward else (self.doc.blocks, 0)
            if self.jump(self.hits, forward, has_hit, expand_if_hidden=True, start=far_end):
                step = "wrapped"
        if step != "none":
            self._search_landed = True
        return step

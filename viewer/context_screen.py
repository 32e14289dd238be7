"""The context screen (`w`): how full the model's context was at every call, and what filled it.

"Why did it forget X?" starts with a picture: the fill of every call's window
over the session, where it was compacted, where outputs were spilled or cut.
The chart is Textual's own `Sparkline`, one column per bucket of calls (its
arithmetic, `chart_columns`, is repeated here once so that the ruler under it
puts each mark in the column that shows its call); a session of 10,000 calls is
one widget and one row of marks, never a widget a call.

What a call's figures are, and whether they are recorded or estimated, is the
core's (`core.calls`): this screen only draws them and says which is which. A
size the file does not record is an estimate, and says so wherever it is shown.

The items under the selected call come from one function, `items_of_call`,
read in a worker: the call's context as the core lists it for the model view
(`core.call_context.context_of_call`). The fills are made before the screen is
(`viewer.fills`, in the transcript screen's worker).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult, RenderResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Sparkline, Static
from textual.worker import get_current_worker

from transcript_view.core.analysis import Analysis
from transcript_view.core.call_context import ContextEntry, context_of_call
from transcript_view.core.calls import ESTIMATE_RULE, ModelCall, estimate_tokens
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.text import plural, visible
from transcript_view.core.transcript import Transcript
from transcript_view.viewer import sanitize
from transcript_view.viewer.fills import Fills, chart_columns, first_columns
from transcript_view.viewer.footer import KeyFooter
from transcript_view.viewer.keys import SCREEN_NAMES, Owner, bindings, screen_rows
from transcript_view.viewer.palette import component_style
from transcript_view.viewer.screens.help import HelpScreen

#: Rows the chart is tall: 8 levels a row, so 47 steps from empty to a full window.
CHART_ROWS = 6
#: Columns of the scale left of the chart ("100 %").
GUTTER = 6
#: The items listed under the selected call, biggest first.
ITEMS_SHOWN = 8

COMPACTION_MARK = "◆"
TICK_MARK = "╵"
CURSOR_MARK = "▲"

# -- the items of a call ---------------------------------------------------------------------


def items_of_call(
    transcript: Transcript, analysis: Analysis | SessionAnalysis, index: int
) -> Sequence[ContextEntry]:
    """The items of call `index` (0-based) the screen lists (it sorts them): the call's
    whole context as the model got it, the core's one answer (`core.call_context`), the
    same entries the model view at that call shows."""
    return context_of_call(transcript, analysis, index).entries


#: What the list of items is, as its title says it.
ITEMS_ARE = "in its context, as the model got them"

# -- the widgets -----------------------------------------------------------------------------


class FillChart(Sparkline):
    """The fill of every call, a bucket a column (a click selects the bucket)."""

    @dataclass
    class Clicked(Message):
        """A click on column `column` of the chart or its ruler."""

        column: int

    def on_click(self, event: events.Click) -> None:
        """Say which column was clicked."""
        offset = event.get_content_offset(self)
        if offset is not None:
            self.post_message(self.Clicked(offset.x))


class Ruler(Widget):
    """The row under the chart: compactions, spills and cuts, and the selected call.

    Each mark is in the first column that shows its call, by `chart_columns`, the
    sparkline's own arithmetic.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "ruler--compaction",
        "ruler--tick",
        "ruler--cursor",
        "ruler--rule",
    }

    DEFAULT_CSS = """
    Ruler {
        height: 1;
        & > .ruler--compaction { color: $text-warning; text-style: bold; }
        & > .ruler--tick { color: $text-accent; }
        & > .ruler--cursor { background: $accent; color: $text; text-style: bold; }
        & > .ruler--rule { color: $foreground 30%; }
    }
    """

    def __init__(
        self,
        count: int,
        compactions: set[int],
        ticks: set[int],
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.count = count
        self.compactions = compactions
        """The calls a compaction comes just before."""
        self.ticks = ticks
        """The calls sent a spilled or cut result for the first time."""
        self.selected = 0
        self._columns: tuple[int, list[range], dict[int, int]] | None = None

    def columns(self) -> list[range]:
        """The calls each column shows, for this width (`chart_columns`, remembered)."""
        return self._layout()[1]

    def column_of(self, call: int) -> int:
        """The first column that shows `call`."""
        return self._layout()[2].get(call, 0)

    def _layout(self) -> tuple[int, list[range], dict[int, int]]:
        width = self.size.width
        if self._columns is None or self._columns[0] != width:
            columns = chart_columns(self.count, width)
            self._columns = (width, columns, first_columns(columns))
        return self._columns

    def render(self) -> RenderResult:
        """One cell a column: a compaction's mark, a tick, or the rule; the cursor over it."""
        _, columns, first = self._layout()
        cells = ["─"] * len(columns)
        styles: list[Style | None] = [None] * len(columns)
        tick, compaction = self._style("tick"), self._style("compaction")
        for call in self.ticks:
            column = first.get(call)
            if column is not None:
                cells[column], styles[column] = TICK_MARK, tick
        for call in self.compactions:
            column = first.get(call)
            if column is not None:
                cells[column], styles[column] = COMPACTION_MARK, compaction
        cursor = self._style("cursor")
        for column, values in enumerate(columns):
            if self.selected in values:
                if cells[column] == "─":
                    cells[column] = CURSOR_MARK
                styles[column] = (styles[column] or Style()) + cursor
        rule = self._style("rule")
        text = Text(no_wrap=True)
        for cell, style in zip(cells, styles, strict=True):
            text.append(cell, style or rule)
        return text

    def _style(self, part: str) -> Style:
        return component_style(self, f"ruler--{part}")

    def on_click(self, event: events.Click) -> None:
        """A click on the ruler selects the column above it, as a click on the chart does."""
        offset = event.get_content_offset(self)
        if offset is not None:
            self.post_message(FillChart.Clicked(offset.x))


# -- the screen ------------------------------------------------------------------------------


class ContextScreen(Screen[int | None]):
    """The fill of every model call's window; the selected call's figures and biggest items.

    Dismissed with the index of the call to open (enter) or None (escape).

    Args:
        transcript: The transcript (the items are read from it).
        analysis: Its analysis; `analysis.calls` are the calls drawn.
        window: The window for calls whose file records none (None: the table's).
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "context--label",
        "context--estimate",
        "context--compaction",
        "context--muted",
    }

    DEFAULT_CSS = """
    ContextScreen {
        layout: vertical;
        & > .context--label { text-style: bold; }
        & > .context--estimate { color: $text-warning; }
        & > .context--compaction { color: $text-warning; text-style: bold; }
        & > .context--muted { color: $text-muted; }
        #context-title { height: 1; background: $panel; text-style: bold; padding: 0 1; }
        #context-about { height: auto; color: $text-muted; padding: 0 1; }
        #context-empty { height: 1fr; content-align: center middle; color: $text-muted;
                         padding: 0 2; }
        .context-row { height: auto; padding: 0 1; }
        #context-scale { width: 6; height: 6; color: $text-muted; }
        #context-rule-gutter { width: 6; height: 1; color: $text-muted; }
        #context-chart { width: 1fr; height: 6; }
        #context-chart > .sparkline--min-color { color: $success; }
        #context-chart > .sparkline--max-color { color: $error; }
        #context-ruler { width: 1fr; }
        #context-details { height: auto; padding: 0 1; margin-top: 1; }
        #context-items {
            height: 1fr;
            text-wrap: nowrap;
            text-overflow: ellipsis;
            padding: 0 1;
            border-top: solid $primary 50%;
            border-title-color: $text-muted;
        }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.CONTEXT)

    selected: reactive[int] = reactive(0, init=False)
    """The selected call (0-based)."""

    @dataclass
    class ItemsRead(Message):
        """Posted by the items worker: the items of call `index`, biggest first."""

        index: int
        items: list[ContextEntry]

    def __init__(
        self,
        transcript: Transcript,
        analysis: Analysis | SessionAnalysis,
        *,
        window: int | None = None,
        fills: Fills | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.transcript = transcript
        self.analysis = analysis
        self.calls = analysis.calls
        self.window = window
        self.fills = fills if fills is not None else Fills.of(self.calls, window)
        """Each call's fill (made in the transcript screen's worker, `viewer.fills`)."""
        self.items: list[ContextEntry] | None = None
        """The selected call's items (None while they are read)."""
        count = len(self.calls)
        lines = self.calls.lines
        self._compacted = {bisect_left(lines, c.line) for c in self.calls.compactions}
        self._compacted.discard(count)
        ticks = {bisect_left(lines, site.line) for site in analysis.excerpt_sites}
        ticks.discard(count)
        self._ticks = ticks

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Title, a legend, the chart and its ruler, the selected call, its items."""
        yield Static(self._title(), id="context-title", markup=False)
        if not self.calls:
            yield Static(self._no_calls(), id="context-empty", markup=False)
            yield KeyFooter()
            return
        yield Static(self._about(), id="context-about", markup=False)
        with Horizontal(classes="context-row"):
            yield Static(self._scale(), id="context-scale", markup=False)
            yield FillChart(self.fills.data(), summary_function=self.fills.summary(),
                            id="context-chart")  # fmt: skip
        with Horizontal(classes="context-row"):
            yield Static("calls", id="context-rule-gutter", markup=False)
            yield Ruler(len(self.calls), self._compacted, self._ticks, id="context-ruler")
        yield Static(id="context-details", markup=False)
        items = Static(id="context-items", markup=False)
        items.border_title = "Biggest items"
        yield items
        yield KeyFooter()

    def on_mount(self) -> None:
        """Select the call that came closest to its window, and read its items."""
        if not self.calls:
            return
        values = self.fills.values
        self.selected = max(range(len(values)), key=values.__getitem__)
        self._show_selected()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._restyle())

    def _title(self) -> Text:
        calls = self.calls
        title = Text(f"Context window — {plural(len(calls), 'model call')}")
        if calls.compactions:
            title.append(f", {plural(len(calls.compactions), 'compaction')}")
        if calls:
            estimated = self.fills.estimated
            if estimated == len(calls):
                title.append(" — all sizes estimated")
            elif estimated:
                title.append(f" — {plural(estimated, 'size')} estimated")
            else:
                title.append(" — all sizes recorded")
        return title

    def _no_calls(self) -> str:
        return (
            "No model calls in this transcript: no response of the model is recorded "
            "yet, so there is no context to show."
        )

    def _about(self) -> Text:
        if self.fills.relative:
            what = "each call's size against the largest (no window is known)"
        else:
            what = "each call's context against its window"
        return Text(
            f"{what}; {COMPACTION_MARK} compaction, {TICK_MARK} spilled or cut output, "
            f"{CURSOR_MARK} selected (←/→, click); enter opens the call"
        )

    def _scale(self) -> Text:
        """The scale left of the chart: its top, half, and zero."""
        fills = self.fills
        if fills.relative:
            top = _short(fills.largest)
            half = _short(fills.largest // 2)
        else:
            top = f"{fills.top * 100:.0f}%"
            half = f"{fills.top * 50:.0f}%"
        rows = [""] * CHART_ROWS
        rows[0], rows[CHART_ROWS // 2], rows[-1] = top, half, "0"
        return Text("\n".join(r.rjust(GUTTER - 1) for r in rows), no_wrap=True)

    # -- the selection -------------------------------------------------------------------------

    @property
    def ruler(self) -> Ruler:
        """The ruler under the chart (its columns are the chart's)."""
        return self.query_one("#context-ruler", Ruler)

    def _bucketed(self) -> bool:
        """Whether a column holds more than one call (left/right then go a column)."""
        return len(self.calls) > self.ruler.size.width > 0

    def action_step(self, by: int) -> None:
        """Left / right: the call before / after, or the column before / after."""
        count = len(self.calls)
        if not count:
            return
        if self._bucketed():
            ruler = self.ruler
            columns = ruler.columns()
            column = min(max(ruler.column_of(self.selected) + by, 0), len(columns) - 1)
            self.selected = self.fills.biggest_in(columns[column])
        else:
            self.selected = min(max(self.selected + by, 0), count - 1)

    def action_first(self) -> None:
        """Home: the first call."""
        if self.calls:
            self.selected = 0

    def action_last(self) -> None:
        """End: the last call."""
        if self.calls:
            self.selected = len(self.calls) - 1

    @on(FillChart.Clicked)
    def _clicked(self, message: FillChart.Clicked) -> None:
        """A click selects the call its column shows (the fullest of its bucket)."""
        columns = self.ruler.columns()
        if 0 <= message.column < len(columns):
            self.selected = self.fills.biggest_in(columns[message.column])

    def watch_selected(self) -> None:
        """Show the selected call, and read its items."""
        self._show_selected()

    def _show_selected(self) -> None:
        if not self.calls:
            return
        ruler = self.ruler
        ruler.selected = self.selected
        ruler.refresh()
        call = self.calls.call(self.selected, self.window)
        self.query_one("#context-details", Static).update(self._details(call))
        self.items = None
        self._show_items()
        self._read_items(self.selected)

    def _restyle(self) -> None:
        """A new theme: draw the styled text again in its colours (the items are kept)."""
        if self.calls:
            call = self.calls.call(self.selected, self.window)
            self.query_one("#context-details", Static).update(self._details(call))
            self._show_items()
            self.ruler.refresh()

    def _details(self, call: ModelCall) -> Text:
        """The selected call's figures, each with where it comes from."""
        label, estimate = self._style("label"), self._style("estimate")
        text = Text()
        text.append(f"Call {call.number:,} of {len(self.calls):,}", label)
        text.append(f" · line {call.line:,}")
        if call.model:
            text.append(" · ")
            text.append_text(sanitize.text(call.model))
        text.append("\ncontext: ")
        if call.recorded:
            text.append(f"{call.tokens:,} tokens", label)
            text.append(f", recorded ({call.field})")
        else:
            text.append(f"~{call.tokens:,} tokens, estimate", estimate)
            text.append(f" ({ESTIMATE_RULE} of what the file holds)")
        text.append("\nwindow: ")
        if call.window is None:
            text.append("not known (the file records none, and the model is not in the table)")
        else:
            source = call.window_source.value if call.window_source is not None else ""
            text.append(f"{call.window:,} tokens, {source}")
            if call.window_basis:
                text.append(f" ({call.window_basis})")
        if call.fill is not None:
            text.append(" · fill ")
            fill = f"{call.fill * 100:.1f} %"
            text.append(fill if call.recorded else f"~{fill} (estimate)",
                        label if call.recorded else estimate)  # fmt: skip
        for compaction in call.compactions:
            text.append("\n")
            text.append(f"{COMPACTION_MARK} compaction", self._style("compaction"))
            text.append(f" on line {compaction.line:,} just before it ({compaction.kind}")
            if compaction.trigger:
                text.append(f", {visible(compaction.trigger)}")
            text.append(")")
            if compaction.tokens_before is not None:
                text.append(f": {compaction.tokens_before:,} tokens before")
                if compaction.before_field:
                    text.append(f" ({compaction.before_field})")
            if compaction.tokens_after is not None:
                text.append(f", {compaction.tokens_after:,} after")
            elif compaction.resets:
                after = f"{call.tokens:,}" if call.recorded else f"~{call.tokens:,} (estimate)"
                text.append(f", {after} after (this call)")
            if compaction.tokens_saved is not None:
                text.append(f", {compaction.tokens_saved:,} saved")
        return text

    def _style(self, part: str) -> Style:
        return component_style(self, f"context--{part}")

    # -- the items -----------------------------------------------------------------------------

    @work(
        thread=True,
        exclusive=True,
        group="context-items",
        exit_on_error=False,
        description="read the biggest items of a call",
    )
    def _read_items(self, index: int) -> None:
        """The selected call's items, off the UI thread (a call may follow a million lines)."""
        items = list(items_of_call(self.transcript, self.analysis, index))
        items.sort(key=lambda item: item.chars, reverse=True)
        if not get_current_worker().is_cancelled:
            self.post_message(self.ItemsRead(index, items[:ITEMS_SHOWN]))

    def on_context_screen_items_read(self, message: ContextScreen.ItemsRead) -> None:
        """Show the items, if they are still the selected call's."""
        if message.index == self.selected:
            self.items = message.items
            self._show_items()

    def _show_items(self) -> None:
        pane = self.query_one("#context-items", Static)
        number = self.selected + 1
        pane.border_title = Text(f"Biggest items of call {number:,}: {ITEMS_ARE}")
        muted, estimate = self._style("muted"), self._style("estimate")
        if self.items is None:
            pane.update(Text("reading…", muted))
            return
        if not self.items:
            pane.update(Text("none", muted))
            return
        body = Text(no_wrap=True, overflow="ellipsis")
        for n, item in enumerate(self.items):
            if n:
                body.append("\n")
            body.append(f"line {item.line:>7,}  ")
            body.append(f"~{estimate_tokens(item.chars):>8,} tokens", estimate)
            body.append(f" (estimate, {item.chars:,} chars)  ", muted)
            what = f"{item.role} · {item.what}" if item.role else item.what
            body.append_text(sanitize.text(what))
        pane.update(body)

    # -- leaving -------------------------------------------------------------------------------

    def action_open(self) -> None:
        """Enter: back to the transcript, at the selected call."""
        if self.calls:
            self.dismiss(self.selected)

    def action_help(self) -> None:
        """This screen's keys."""
        rows = [(keys, text) for screen, keys, text in screen_rows()
                if screen == SCREEN_NAMES[Owner.CONTEXT]]  # fmt: skip
        self.app.push_screen(HelpScreen(rows, screens=[]))

    def action_close(self) -> None:
        """Back to the transcript, where it was."""
        self.dismiss(None)


def _short(tokens: int) -> str:
    """A token count in a few characters: 950, 21k, 1.2M."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    if tokens >= 1_000:
        return f"{tokens // 1_000}k"
    return str(tokens)

"""The context screen (`w`): the fill of every call, a selection that moves, enter goes to it.

The chart is Textual's `Sparkline`; the ruler under it places its marks by
`chart_columns`, which must be the sparkline's own bucketing, column for column.
Sessions are synthetic (`tests/_real_shapes.filling_session`: usage on every
response, an auto compaction near the top of the window, spilled reads).
"""

from __future__ import annotations

import io
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, settle_except, sync
from _real_shapes import filling_session
from _screen_apps import ScreenApp
from _sessions import ClaudeSession
from rich.console import Console
from textual.renderables.sparkline import Sparkline as SparklineRenderable

from transcript_view.core.call_context import context_of_call
from transcript_view.core.calls import ModelCalls
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.formats.readers import analyse_as
from transcript_view.core.transcript import Transcript
from transcript_view.viewer import workers
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.context_screen import (
    COMPACTION_MARK,
    TICK_MARK,
    ContextScreen,
    FillChart,
    Ruler,
    items_of_call,
)
from transcript_view.viewer.fills import Fills, chart_columns
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.messages import FillsMade

# -- the arithmetic ------------------------------------------------------------------------------


def _sparkline_columns(count: int, width: int) -> list[list[int]]:
    """What Textual's sparkline puts in each column: the bucket its summary function is
    given, column by column (the data are the indices, so a bucket names its values)."""
    seen: list[list[int]] = []

    def record(bucket: Any) -> float:
        seen.append(list(bucket))
        return float(max(bucket))

    renderable = SparklineRenderable(list(range(count)), width=width, summary_function=record)
    Console(file=io.StringIO(), width=width + 10).print(renderable)
    return seen


@pytest.mark.parametrize("width", [1, 2, 7, 40, 73, 78, 113, 200])
@pytest.mark.parametrize("count", [2, 3, 5, 17, 33, 78, 79, 150, 1_000, 10_007])
def test_the_rulers_columns_are_the_sparklines_own(count: int, width: int) -> None:
    """`chart_columns` is the sparkline's bucketing, column for column, whether the calls
    are fewer than the columns (a call spans several) or more (a column holds several)."""
    want = _sparkline_columns(count, width)
    assert [list(r) for r in chart_columns(count, width)] == want


def test_one_call_is_drawn_at_its_height_not_as_a_full_bar() -> None:
    """The sparkline draws a lone value as a full bar whatever it is; the chart gives it the
    call twice, so one call at 10 % of its window is drawn low."""
    fills = Fills([0.1], 0, False, 1.0, 20_000)
    assert fills.data() == [0.1, 0.1]
    text = io.StringIO()
    chart = SparklineRenderable(fills.data(), width=4, height=1, summary_function=fills.summary())
    Console(file=text, width=10, color_system=None).print(chart)
    assert text.getvalue().strip() == "▁▁▁▁"
    assert chart_columns(1, 3) == [range(0, 1)] * 3


def test_the_scale_is_the_window_not_the_sessions_own_range() -> None:
    """Fills of 9 % and 11 % are drawn low, both; the sparkline alone would stretch them to
    the bottom and the top of the chart."""
    fills = Fills([0.09, 0.11], 0, False, 1.0, 22_000)
    out = io.StringIO()
    chart = SparklineRenderable(fills.data(), width=2, height=2, summary_function=fills.summary())
    Console(file=out, width=10, color_system=None).print(chart)
    top, bottom = out.getvalue().splitlines()
    assert top.strip() == "" and bottom == "▂▂"


# -- the screen ----------------------------------------------------------------------------------


async def _open(pilot: Any) -> ContextScreen:
    await settle(pilot)
    await pilot.press("w")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ContextScreen)
    return screen


@sync
async def test_w_opens_the_chart_at_the_fullest_call_with_its_marks(tmp_path: Path) -> None:
    app = TranscriptApp(filling_session(tmp_path / "projects" / "p"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot)
        calls = screen.calls
        assert len(calls) == 33
        assert screen.selected == 23  # the call before the compaction: 84.8 % of its window
        chart = screen.query_one("#context-chart", FillChart)
        ruler = screen.query_one("#context-ruler", Ruler)
        assert chart.size.width == ruler.size.width  # the same columns
        assert chart.region.x == ruler.region.x
        row = str(ruler.render())
        columns = chart_columns(len(calls), ruler.size.width)
        assert row.count(COMPACTION_MARK) == 1
        assert row.index(COMPACTION_MARK) == next(c for c, r in enumerate(columns) if 24 in r)
        # The six spilled reads, each a tick on the call it was first sent to; the last was
        # first sent after the compaction, whose mark the column shows.
        assert ruler.ticks == {4, 8, 12, 16, 20, 24}
        assert row.count(TICK_MARK) == 5
        details = str(screen.query_one("#context-details").render())
        assert "Call 24 of 33" in details and "169,658 tokens" in details
        assert "recorded (message.usage" in details and "fill 84.8 %" in details
        # Its whole context, biggest first: the unspilled reads of 470 lines tie (the first
        # of equals leads); a spilled read's preview is smaller.
        assert screen.items is not None and screen.items[0].line == 3
        assert screen.items[0].chars == max(item.chars for item in screen.items)
        items = str(screen.query_one("#context-items").render())
        assert "estimate" in items


@sync
async def test_keys_move_the_selection_and_show_the_compaction_before_a_call(
    tmp_path: Path,
) -> None:
    app = TranscriptApp(filling_session(tmp_path / "projects" / "p"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot)
        await pilot.press("right")
        assert screen.selected == 24
        await settle(pilot)
        details = str(screen.query_one("#context-details").render())
        assert "compaction on line 50 just before it (compact_boundary, auto)" in details
        assert "169,661 tokens before (compactMetadata.preTokens)" in details
        assert "17,878 after (this call)" in details
        await pilot.press("left", "left")
        assert screen.selected == 22
        await pilot.press("home")
        assert screen.selected == 0
        await pilot.press("left")
        assert screen.selected == 0
        await pilot.press("end")
        assert screen.selected == 32
        await pilot.press("right")
        assert screen.selected == 32
        await settle(pilot)
        assert screen.items is not None and screen.items[0].line == 68  # the last read


@sync
async def test_a_click_on_the_chart_selects_the_call_under_it(tmp_path: Path) -> None:
    app = TranscriptApp(filling_session(tmp_path / "projects" / "p"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot)
        ruler = screen.query_one("#context-ruler", Ruler)
        columns = ruler.columns()
        column = next(c for c, r in enumerate(columns) if 5 in r)
        await pilot.click("#context-chart", offset=(column, 3))
        await pilot.pause()
        assert screen.selected == 5
        column = next(c for c, r in enumerate(columns) if 30 in r)
        await pilot.click("#context-ruler", offset=(column, 0))
        await pilot.pause()
        assert screen.selected == 30


@sync
async def test_enter_opens_the_model_view_at_the_chosen_call(tmp_path: Path) -> None:
    app = TranscriptApp(filling_session(tmp_path / "projects" / "p"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot)
        await pilot.press("end", "left")
        await pilot.press("enter")
        await settle(pilot)
        main = app.screen
        assert isinstance(main, TranscriptScreen)
        assert main.view.showing_model and main.view.model_call == 31
        line = screen.calls.lines[31]
        assert main.header.view_name == (
            f"model view: what the model was sent for call 32 (line {line})"
        )
        await pilot.press("w")
        await settle(pilot)
        assert isinstance(app.screen, ContextScreen)
        await pilot.press("escape")  # back, nowhere new
        await settle(pilot)
        assert app.screen is main and main.view.model_call == 31

@sync
async def test_an_estimated_size_says_so_wherever_it_is_shown(tmp_path: Path) -> None:
    """A session whose file records no usage: every size is an estimate, and the title,
    the call's size and its fill say so."""
    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("What is in src/?")
    s.tool_use("toolu_1", "Bash", {"command": "ls src"})
    s.tool_result("toolu_1", "main.rs\nlib.rs\n" * 50)
    s.assistant({"type": "text", "text": "Two files."}, msg_id="msg_2", request="req_2")
    app = TranscriptApp(s.write())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot)
        assert str(screen.query_one("#context-title").render()).endswith("all sizes estimated")
        details = str(screen.query_one("#context-details").render())
        call = screen.calls.call(screen.selected)
        assert not call.recorded
        assert f"~{call.tokens:,} tokens, estimate" in details
        assert "(estimate)" in details.split("fill", 1)[1]
        for line in details.splitlines():
            if "~" in line:
                assert "estimate" in line, line


@sync
async def test_no_calls_is_said(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("Hello?")
    app = TranscriptApp(s.write())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(pilot)
        said = str(screen.query_one("#context-empty").render())
        assert "No model calls in this transcript" in said
        assert not screen.query(FillChart)
        await pilot.press("enter", "right", "end")  # nothing to move or open
        assert app.screen is screen


@sync
async def test_before_the_analysis_w_says_when_it_is_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TranscriptScreen, "_start_analysis", lambda self: None)
    app = TranscriptApp(filling_session(tmp_path / "projects" / "p"))
    toasts: list[str] = []
    app.notify = lambda message, *a, **k: toasts.append(message)  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, TranscriptScreen)
        assert toasts == ["The context window is ready once the transcript has been read."]


def _many_calls(path: Path, count: int) -> tuple[Transcript, SessionAnalysis]:
    """A file of `2 * count` lines of input, a call on every second, and its calls."""
    line = '{"type":"user","message":{"content":"x"}}\n'
    path.write_text(line * (2 * count))
    transcript = Transcript(path)
    transcript.build_index()
    calls = ModelCalls()
    for i in range(count):
        calls.lines.append(2 * i + 2)
        calls.tokens.append(1_000 + i * 7 % 50_000)
        for column in (calls.fields, calls.windows):
            column.append(1 if column is calls.fields else 200_000)
        for column in (calls.chars, calls.added, calls.big_chars):
            column.append(0)
        calls.models.append(-1)
        calls.big_lines.append(-1)
    analysis = SessionAnalysis(Format.CLAUDE_CODE, transcript, None, calls=calls)
    return transcript, analysis


@sync
async def test_ten_thousand_calls_are_one_chart_not_a_widget_each(tmp_path: Path) -> None:
    transcript, analysis = _many_calls(tmp_path / "many.jsonl", 10_000)
    app = ScreenApp(lambda: ContextScreen(transcript, analysis))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        assert len(list(screen.walk_children())) < 20
        chart = screen.query_one("#context-chart", FillChart)
        assert chart.data is not None and len(chart.data) == 10_000
        assert "10,000 model calls" in str(screen.query_one("#context-title").render())
        ruler = screen.query_one("#context-ruler", Ruler)
        width = ruler.size.width
        assert width < 10_000
        # left/right go a column at a time, to the fullest call of the column
        await pilot.press("home", "right")
        column = chart_columns(10_000, width)[1]
        assert screen.selected == max(column, key=screen.fills.values.__getitem__)
    transcript.close()


def test_the_items_of_a_call_are_its_whole_context_as_the_core_says(tmp_path: Path) -> None:
    """The list under the chart is the core's context of the call (the model view's
    entries): after the compaction, its summary first and nothing from before it."""
    path = filling_session(tmp_path / "projects" / "p")
    with Transcript(path) as transcript:
        transcript.build_index()
        analysis = analyse_as(transcript, Format.CLAUDE_CODE)
        last = len(analysis.calls) - 1
        items = items_of_call(transcript, analysis, last)
        assert tuple(items) == context_of_call(transcript, analysis, last).entries
        boundary = analysis.calls.compactions[0].line
        assert items[0].summary and all(item.line > boundary for item in items)


def test_an_estimate_is_counted_in_the_title(tmp_path: Path) -> None:
    transcript, analysis = _many_calls(tmp_path / "some.jsonl", 4)
    analysis.calls.tokens[1] = -1
    fills = Fills.of(analysis.calls)
    assert fills.estimated == 1
    assert ContextScreen(transcript, analysis)._title().plain.endswith("1 size estimated")
    transcript.close()


def test_each_call_is_drawn_against_its_own_window(tmp_path: Path) -> None:
    """A recorded window, an assumed one (the model's), and none (an unknown model: drawn
    against the largest window of the others); no window at all: against the largest call."""
    transcript, analysis = _many_calls(tmp_path / "mixed.jsonl", 3)
    calls = analysis.calls
    calls.model_names[:] = ["claude-opus-4-6", "no-such-model"]
    calls.windows[0], calls.models[0] = 100_000, 1
    calls.windows[1], calls.models[1] = -1, 0
    calls.windows[2], calls.models[2] = -1, 1
    calls.tokens[0], calls.tokens[1], calls.tokens[2] = 50_000, 250_000, 500_000
    fills = Fills.of(calls)
    assert fills.values == [0.5, 0.25, 0.5] and not fills.relative and fills.top == 1.0
    for i in range(3):
        calls.windows[i], calls.models[i] = -1, 1
    fills = Fills.of(calls)
    assert fills.relative and fills.values == [0.1, 0.5, 1.0] and fills.largest == 500_000
    transcript.close()


@sync
async def test_the_fills_are_made_in_a_worker_and_open_the_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`w` makes the fills off the UI thread (hundreds of thousands of calls take a fifth
    of a second); the screen opens on the fills the worker made, while the transcript
    screen stays usable until then (the worker is held at a gate here)."""
    gate = threading.Event()
    made: list[tuple[bool, Fills]] = []
    make = workers.make_fills

    def held(analysis: Any, post: Any) -> None:
        gate.wait(10)
        made.append((threading.current_thread() is threading.main_thread(), Fills.of(
            analysis.calls)))
        make(analysis, post)

    monkeypatch.setattr(workers, "make_fills", held)
    app = TranscriptApp(filling_session(tmp_path / "projects" / "p"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        main = app.screen
        await pilot.press("w")
        await settle_except(pilot, "fills")
        assert app.screen is main  # nothing drawn yet, and the keys still work
        await pilot.press("down")
        gate.set()
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        ((on_main, fills),) = made
        assert not on_main
        assert screen.fills.values == fills.values


@sync
async def test_fills_of_an_analysis_no_longer_on_show_open_nothing(tmp_path: Path) -> None:
    app = TranscriptApp(filling_session(tmp_path / "projects" / "p"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        main = app.screen
        assert isinstance(main, TranscriptScreen) and main.analysis is not None
        stale = replace(main.analysis)  # another analysis of the same file (follow mode)
        main.post_message(FillsMade(stale, Fills.of(stale.calls)))
        await settle(pilot)
        assert app.screen is main

"""The keys a less / vim user types, the help that lists them all, a footer that keeps `?` and `q`.

Every key here comes from the one key table (`viewer.keys`); these tests press
them through Textual's pilot and look at where the cursor or the view went.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync
from _runs import line
from _screen import SIZE
from _screen_apps import SCREEN_SIZE, ScreenApp
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.fileview import ArtifactScreen, FileView
from transcript_view.viewer.keys import KEYS, OTHER_KEYS, bindings
from transcript_view.viewer.keys import Owner as KeyOwner
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.screens.help import HelpScreen


def long_transcript(path: Path, messages: int = 200) -> Path:
    """A transcript of many short messages: far more rows than a screen."""
    lines = [line(1, "session-meta", {})]
    lines += [
        line(n, "message", {"content": f"message {n}", "role": "user"})
        for n in range(2, messages + 2)
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def transcript_screen(pilot: Pilot[Any]) -> TranscriptScreen:
    screen = pilot.app.screen
    assert isinstance(screen, TranscriptScreen)
    return screen


# -- the transcript ------------------------------------------------------------------------


@pytest.mark.parametrize(("down", "up"), [("ctrl+f", "b"), ("space", "ctrl+b")])
@sync
async def test_less_page_keys_move_a_screen(tmp_path: Path, down: str, up: str) -> None:
    app = TranscriptApp(long_transcript(tmp_path / "long.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = transcript_screen(pilot).view
        await pilot.press("pagedown")
        by_pagedown = (view.cursor, int(view.scroll_y))
        await pilot.press("home")
        view.scroll_home(animate=False, immediate=True)
        await pilot.press(down)
        assert (view.cursor, int(view.scroll_y)) == by_pagedown
        assert view.cursor == view.scrollable_content_region.height - 1
        await pilot.press(up)
        assert (view.cursor, int(view.scroll_y)) == (0, 0)


@sync
async def test_ctrl_d_and_ctrl_u_move_half_a_screen(tmp_path: Path) -> None:
    app = TranscriptApp(long_transcript(tmp_path / "long.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = transcript_screen(pilot).view
        half = view.scrollable_content_region.height // 2
        await pilot.press("ctrl+d")
        assert (view.cursor, int(view.scroll_y)) == (half, half)
        await pilot.press("ctrl+d")
        assert view.cursor == 2 * half
        await pilot.press("ctrl+u", "ctrl+u")
        assert (view.cursor, int(view.scroll_y)) == (0, 0)


# -- a file on its own screen --------------------------------------------------------------


def _numbered_file(tmp_path: Path) -> Path:
    p = tmp_path / "result.txt"
    p.write_bytes(b"".join(b"row %04d of the result\n" % i for i in range(500)))
    return p


@sync
async def test_the_file_screen_pages_like_less(tmp_path: Path) -> None:
    path = _numbered_file(tmp_path)
    app = ScreenApp(lambda: ArtifactScreen(path, "result.txt"))
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(FileView)
        assert view.has_focus

        async def y_after(*keys: str) -> int:
            await pilot.press(*keys)
            await pilot.wait_for_scheduled_animations()
            await pilot.pause()
            return round(view.scroll_y)

        page = await y_after("pagedown")
        assert page > 0
        assert await y_after("g") == 0
        assert await y_after("ctrl+f") == page
        assert await y_after("b") == 0
        assert await y_after("space", "ctrl+b") == 0
        half = view.scrollable_content_region.height // 2
        assert await y_after("ctrl+d") == half
        assert await y_after("ctrl+u") == 0
        assert await y_after("j", "j") == 2
        assert await y_after("k") == 1
        assert await y_after("G") == round(view.max_scroll_y) > page
        assert await y_after("g") == 0


# -- help ------------------------------------------------------------------------------------


def _text(renderable: Any) -> str:
    console = Console(file=io.StringIO(), width=160, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


@sync
async def test_help_lists_every_key_of_the_key_table() -> None:
    """The transcript's keys and those of every screen it opens (left / right, say)."""
    app = ScreenApp(lambda: HelpScreen())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = "\n".join(_text(s.content) for s in app.screen.query(Static))
    words = set(text.split())
    for k in (*KEYS, *OTHER_KEYS):
        for spelled in k.spelled:
            assert set(spelled.split()) <= words, f"{spelled!r} ({k.owner.value}) not in help"
    for screen in ("orphans", "directory listing", "a file"):
        assert screen in text


# -- the footer ------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 60, 40])
@sync
async def test_the_footer_keeps_help_and_quit_visible_at_narrow_widths(
    run_factory: Any, width: int
) -> None:
    run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        keys = {k.key: k for k in app.screen.query(FooterKey)}
        for key in ("question_mark", "q"):
            region = keys[key].region
            assert region.width > 0 and region.right <= width, (key, region)


def test_pinned_keys_are_bound_first() -> None:
    """The footer draws keys in binding order: `?` and `q` must come before the rest."""
    screen_keys = [b.key for b in bindings(KeyOwner.SCREEN)]  # type: ignore[union-attr]
    assert screen_keys[:2] == ["question_mark", "q"]


# -- search wraps --------------------------------------------------------------------------


@sync
async def test_n_past_the_last_hit_wraps_to_the_first_and_says_so(run_factory: Any) -> None:
    run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = transcript_screen(pilot)
        view = screen.view
        toasts: list[str] = []
        app.notify = lambda message, *a, **k: toasts.append(message)  # type: ignore[method-assign]
        await pilot.press("slash", *"039", "enter")
        await settle(pilot)
        assert len(view.hits) == 2  # the tool result's tail and the final answer
        first = view.cursor
        await pilot.press("n")
        last = view.cursor
        assert last > first and toasts == []
        await pilot.press("n")
        assert view.cursor == first
        assert toasts == ["Search wrapped to the first hit."]
        await pilot.press("N")
        assert view.cursor == last
        assert toasts[-1] == "Search wrapped to the last hit."
        assert not any("No more hits" in t for t in toasts)


@sync
async def test_a_search_with_hits_only_above_the_cursor_wraps_to_the_first(
    run_factory: Any,
) -> None:
    run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = transcript_screen(pilot)
        view = screen.view
        toasts: list[str] = []
        app.notify = lambda message, *a, **k: toasts.append(message)  # type: ignore[method-assign]
        await pilot.press("G")
        await pilot.press("slash", *"Read big.log", "enter")
        await settle(pilot)
        assert len(view.hits) == 1
        row = view.current_row
        assert row is not None and "Read big.log" in row.text.plain
        assert any("wrapped to the first hit" in t for t in toasts), toasts

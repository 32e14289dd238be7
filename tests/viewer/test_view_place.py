"""Switching views and back keeps the reader's place: the cursor, the scroll, `n`'s marker."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pilot import settle, sync
from _screen import SIZE
from _support import CLAUDE_EXAMPLE, CODEX_EXAMPLE, EXAMPLES

from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen


@pytest.mark.parametrize("path", [CLAUDE_EXAMPLE, CODEX_EXAMPLE, EXAMPLES / "demo.jsonl"])
@sync
async def test_m_then_m_comes_back_to_the_same_row_and_n_goes_on(path: Path) -> None:
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        await pilot.press("n")
        await settle(pilot)
        here, scrolled = view.cursor, view.scroll_y
        assert here > 0 and view.current_row is not None
        first = view.current_site()
        for _ in range(2):
            await pilot.press("m")
            await settle(pilot)
        assert not view.showing_model
        assert (view.cursor, view.scroll_y) == (here, scrolled)
        await pilot.press("n")
        await settle(pilot)
        second = view.current_site()
        assert first is not None and second is not None and second > first


@sync
async def test_moving_in_the_other_view_shows_that_place_back_in_the_file_view() -> None:
    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        await pilot.press("m")
        await settle(pilot)
        assert view.showing_model
        await pilot.press("G")
        await settle(pilot)
        line = view.current_row.line if view.current_row is not None else 0
        await pilot.press("m")
        await settle(pilot)
        assert view.current_row is not None and view.current_row.line == line > 1


@pytest.mark.parametrize("path", [CLAUDE_EXAMPLE, EXAMPLES / "demo.jsonl"])
@sync
async def test_m_then_m_keeps_the_place_after_a_resize_in_the_other_view(path: Path) -> None:
    """The file view is laid out again at the new width when it is shown again: the
    cursor goes back to its marker once that layout reaches it (found in review)."""
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        for _ in range(2):
            await pilot.press("n")
            await settle(pilot)
        first = view.current_site()
        assert first is not None and view.cursor > 0
        await pilot.press("m")
        await settle(pilot)
        await pilot.resize_terminal(SIZE[0] - 20, SIZE[1])
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert not view.showing_model
        assert view.current_site() == first


@sync
async def test_having_moved_and_resized_in_the_other_view_shows_that_place_back() -> None:
    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        await pilot.press("m")
        await settle(pilot)
        await pilot.press("G")
        await settle(pilot)
        line = view.current_row.line if view.current_row is not None else 0
        await pilot.resize_terminal(SIZE[0] - 20, SIZE[1])
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert view.current_row is not None and view.current_row.line == line > 1

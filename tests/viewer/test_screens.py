"""The reusable screens and FileView on their own, driven through Textual's pilot.

Their snapshots are in tests/snapshots/test_snapshots.py; the bare app and
the data both use are in tests/_screen_apps.py. Pilot tests use `asyncio.run`
(no async plugin needed).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from _screen_apps import (
    ORPHAN_NAME,
    SCREEN_SIZE,
    ScreenApp,
    orphans_app,
    run,
    settle,
)
from textual.pilot import Pilot
from textual.widgets import DataTable

from transcript_view.viewer.fileview import ArtifactScreen, FileView
from transcript_view.viewer.screens import HelpScreen, ListingScreen, OrphansScreen

SIZE = SCREEN_SIZE


# -- behaviour -------------------------------------------------------------------


def test_escape_and_q_close_screens(artifact_dir: Path) -> None:
    app = ScreenApp(lambda: HelpScreen())

    async def scenario(pilot: Pilot[Any]) -> None:
        for key in ("escape", "question_mark", "q"):
            app.push_screen(HelpScreen())
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            depth = len(app.screen_stack)
            await pilot.press(key)
            await pilot.pause()
            assert len(app.screen_stack) == depth - 1

    run(app, scenario)


def test_enter_opens_orphan_and_escape_returns(artifact_dir: Path) -> None:
    app = orphans_app(artifact_dir)

    async def scenario(pilot: Pilot[Any]) -> None:
        assert isinstance(app.screen, OrphansScreen)
        await pilot.press("down", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArtifactScreen)
        assert screen.path.name == ORPHAN_NAME
        view = screen.query_one(FileView)
        assert view.lines.complete
        assert view.lines.row(0) == "first line of a result nobody recorded"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, OrphansScreen)
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, OrphansScreen)

    run(app, scenario)


def test_orphans_previews_are_sanitised(artifact_dir: Path) -> None:
    app = orphans_app(artifact_dir)

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = app.screen
        assert isinstance(screen, OrphansScreen)
        await pilot.press("down")
        await pilot.pause()
        preview = str(screen.query_one("#orphans-preview").render())
        assert "first line of a result nobody recorded" in preview
        assert "␛]52;c;ZXZpbA==␇" in preview
        assert "\x1b" not in preview
        table = screen.query_one(DataTable)
        names = [str(table.get_cell_at((r, 1))) for r in range(table.row_count)]
        assert names[2] == "[bold red]evil[reset]⟨202E⟩txt.exe␛[2J.txt"
        await pilot.press("down")
        await pilot.pause()
        pane = screen.query_one("#orphans-preview")
        title = pane._border_title
        assert title is not None
        assert title.plain == "First lines of [bold red]evil[reset]⟨202E⟩txt.exe␛[2J.txt"
        assert "␛[2Jcleared?" in str(pane.render())

    run(app, scenario)


def test_end_jumps_to_last_row(artifact_dir: Path) -> None:
    path = artifact_dir / ORPHAN_NAME
    app = ScreenApp(lambda: ArtifactScreen(path, "x"))

    async def scenario(pilot: Pilot[Any]) -> None:
        view = app.screen.query_one(FileView)
        assert view.has_focus
        assert view.scroll_y == 0
        await pilot.press("end")
        await settle(pilot)
        assert view.scroll_y == view.max_scroll_y > 0
        last = view.lines.row_count - 1
        assert view.lines.row(last) == "the last line"
        await pilot.press("home")
        await pilot.pause()
        assert view.scroll_y == 0

    run(app, scenario)


def test_end_while_indexing_follows_to_the_end(tmp_path: Path) -> None:
    p = tmp_path / "big.txt"
    with open(p, "wb") as fh:
        for k in range(40):
            fh.write(b"".join(b"%08d\n" % (k * 50_000 + i) for i in range(50_000)))
    app = ScreenApp(lambda: ArtifactScreen(p, "big"))

    async def scenario(pilot: Pilot[Any]) -> None:
        view = app.screen.query_one(FileView)
        view._follow_end = False  # whatever happened so far, ask again
        await pilot.press("end")
        await settle(pilot)
        await pilot.pause()
        assert view.lines.complete
        assert view.lines.row_count == 2_000_000
        assert not view.following_end
        assert view.scroll_y == view.max_scroll_y
        assert view.lines.row(view.lines.row_count - 1) == "01999999"

    run(app, scenario)


def test_artifact_screen_refuses_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    app = ScreenApp(lambda: ArtifactScreen(fifo, "pipe.txt"))

    async def scenario(pilot: Pilot[Any]) -> None:
        assert not app.screen.query(FileView)
        assert "fifo" in str(app.screen.query_one("#artifact-error").render())

    run(app, scenario)


def test_listing_posts_chosen(transcripts_dir: Path) -> None:
    app = ScreenApp(lambda: ListingScreen(transcripts_dir))

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = app.screen
        assert isinstance(screen, ListingScreen)
        names = [e.name for e in screen.entries]
        assert names == [
            "aging.jsonl",
            "basic.jsonl",
            "broken.jsonl",
            "compaction.jsonl",
            "pipe.jsonl",
            "writefail.jsonl",
            "gone.artifacts",
        ]
        assert set(screen.results) == {n for n in names if n.endswith(".jsonl")}
        assert screen.results["basic.jsonl"].counts is not None
        assert screen.results["pipe.jsonl"].counts is None
        assert "fifo" in screen.results["pipe.jsonl"].error
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.chosen == [transcripts_dir / "basic.jsonl"]
        assert isinstance(app.screen, ListingScreen), "the listing does not open it itself"

    run(app, scenario)


def test_listing_opens_orphans_of_a_lost_artifact_directory(transcripts_dir: Path) -> None:
    app = ScreenApp(lambda: ListingScreen(transcripts_dir))

    async def scenario(pilot: Pilot[Any]) -> None:
        await pilot.press("end", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, OrphansScreen)
        assert [o.name for o in screen.orphans] == ["lost.txt"]
        assert app.chosen == []

    run(app, scenario)


def test_q_on_a_first_listing_quits(transcripts_dir: Path) -> None:
    app = ScreenApp(lambda: ListingScreen(transcripts_dir))

    async def scenario(pilot: Pilot[Any]) -> None:
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0 or not app.is_running

    run(app, scenario)


def test_help_lists_every_badge() -> None:
    from transcript_view.core.verification import MarkerState
    from transcript_view.viewer.screens.help import BADGE_MEANINGS

    assert set(BADGE_MEANINGS) == set(MarkerState)

"""The reusable screens and FileView: snapshots of what a person sees, and Pilot behaviour.

Snapshots are deterministic: fixed terminal size, fixed file mtimes (os.utime),
fixed directory names (only basenames are ever shown), and every worker is
waited for before the screenshot. Pilot tests use `asyncio.run` (no async
plugin needed).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from _pilot import wait_until_quiet
from _support import REFERENCE
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable

from transcript_view.core.verification import list_orphans
from transcript_view.viewer.fileview import SEEN, UNSEEN, ArtifactScreen, FileView
from transcript_view.viewer.screens import HelpScreen, ListingScreen, OrphansScreen

SIZE = (100, 30)
T0 = 1_786_000_000  # 2026-08-06T07:06:40Z

ORPHAN_NAME = "66613832-6465-4236-b962-383635383133.txt"
PARTIAL_NAME = ".tmp-66613832.txt.4242.abcd.partial"
HOSTILE_NAME = "[bold red]evil[reset]\u202etxt.exe\x1b[2J.txt"


class ScreenApp(App[None]):
    """A bare app that pushes one screen: the screens must stand on their own."""

    TITLE = "screens"

    def __init__(self, make: Callable[[], Screen[Any]]) -> None:
        super().__init__()
        self._make = make
        self.chosen: list[Path] = []

    def on_mount(self) -> None:
        self.push_screen(self._make())

    def on_listing_screen_chosen(self, message: ListingScreen.Chosen) -> None:
        self.chosen.append(message.path)


async def settle(pilot: Pilot[Any]) -> None:
    """Wait for every worker and the messages they posted."""
    await wait_until_quiet(pilot)


def run(app: App[Any], scenario: Callable[[Pilot[Any]], Awaitable[None]]) -> None:
    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await scenario(pilot)

    asyncio.run(main())


# -- fixtures --------------------------------------------------------------------


def orphan_body() -> bytes:
    lines = [
        "first line of a result nobody recorded",
        "\x1b]52;c;ZXZpbA==\x07 clipboard write, shown not obeyed",
        "[bold red]markup[/] stays text, and so does \x1b[31mANSI\x1b[0m",
        *(f"row {i:03d} " + "·" * (i % 50) for i in range(3, 120)),
        "a long line " + "0123456789" * 30,
        "the last line",
    ]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def artifact_dir(tmp_path: Path) -> Path:
    d = tmp_path / "run.artifacts"
    d.mkdir()
    (d / ORPHAN_NAME).write_bytes(orphan_body())
    (d / PARTIAL_NAME).write_bytes(b'{"partial": "the store was interrupted here')
    (d / HOSTILE_NAME).write_bytes(b"\x1b[2Jcleared?\n")
    for i, name in enumerate(sorted(os.listdir(d))):
        os.utime(d / name, (T0 + i * 3600, T0 + i * 3600))
    return d


def _copy(src: Path, dst: Path) -> None:
    """Copy without permission bits (the fixtures are read-only; tmp must be removable)."""
    if src.is_dir():
        dst.mkdir()
        for f in sorted(src.iterdir()):
            shutil.copyfile(f, dst / f.name)
    else:
        shutil.copyfile(src, dst)


@pytest.fixture
def transcripts_dir(tmp_path: Path) -> Path:
    d = tmp_path / "transcripts"
    d.mkdir()
    for stem in ("basic", "aging", "writefail", "compaction"):
        _copy(REFERENCE / f"{stem}.jsonl", d / f"{stem}.jsonl")
        if (REFERENCE / f"{stem}.artifacts").exists():
            _copy(REFERENCE / f"{stem}.artifacts", d / f"{stem}.artifacts")
    (d / "broken.jsonl").write_bytes(b'{"not": "an envelope"}\nnot json at all\n')
    os.mkfifo(d / "pipe.jsonl")
    (d / "gone.artifacts").mkdir()
    (d / "gone.artifacts" / "lost.txt").write_bytes(b"the transcript of this was deleted\n")
    (d / "notes.txt").write_bytes(b"not a transcript\n")
    return d


def orphans_app(artifact_dir: Path) -> ScreenApp:
    return ScreenApp(lambda: OrphansScreen(artifact_dir, list_orphans(artifact_dir, [])))


HELP_KEYS = [
    ("j / down", "next row"),
    ("k / up", "previous row"),
    ("enter", "open or close the artifact under a marker"),
    ("o", "orphaned artifacts"),
    ("?", "this help"),
    ("q", "quit"),
]


# -- snapshots -------------------------------------------------------------------


def test_snapshot_orphans(snap_compare: Any, artifact_dir: Path) -> None:
    assert snap_compare(orphans_app(artifact_dir), terminal_size=SIZE, run_before=settle)


def test_snapshot_orphans_empty(snap_compare: Any, tmp_path: Path) -> None:
    d = tmp_path / "empty.artifacts"
    d.mkdir()
    app = ScreenApp(lambda: OrphansScreen(d, []))
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


async def _open_orphan(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("down", "enter")  # row 1: the regular orphan (".tmp-" sorts first)
    await settle(pilot)


def test_snapshot_orphan_opened(snap_compare: Any, artifact_dir: Path) -> None:
    assert snap_compare(orphans_app(artifact_dir), terminal_size=SIZE, run_before=_open_orphan)


def test_snapshot_orphan_opened_end(snap_compare: Any, artifact_dir: Path) -> None:
    async def open_and_end(pilot: Pilot[Any]) -> None:
        await _open_orphan(pilot)
        await pilot.press("end")
        await settle(pilot)

    assert snap_compare(orphans_app(artifact_dir), terminal_size=SIZE, run_before=open_and_end)


def test_snapshot_artifact_regions(snap_compare: Any, tmp_path: Path) -> None:
    body = b"".join(b"line %02d of the full result\n" % i for i in range(40))
    p = tmp_path / "result.txt"
    p.write_bytes(body)
    head, tail = 8 * 28 + 10, 5 * 28
    end = len(body)
    regions = [(0, head, SEEN), (head, end - tail, UNSEEN), (end - tail, end, SEEN)]
    app = ScreenApp(lambda: ArtifactScreen(p, "result.txt", regions=regions))
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


def test_snapshot_help(snap_compare: Any) -> None:
    app = ScreenApp(lambda: HelpScreen(HELP_KEYS))
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


def test_snapshot_listing(snap_compare: Any, transcripts_dir: Path) -> None:
    app = ScreenApp(lambda: ListingScreen(transcripts_dir))
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


# -- behaviour -------------------------------------------------------------------


def test_escape_and_q_close_screens(artifact_dir: Path) -> None:
    app = ScreenApp(lambda: HelpScreen(HELP_KEYS))

    async def scenario(pilot: Pilot[Any]) -> None:
        for key in ("escape", "question_mark", "q"):
            app.push_screen(HelpScreen(HELP_KEYS))
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

"""The directory listing shows subfolders, and a way back up that stays inside.

`transcript-view runs/` used to list only the `*.jsonl` files directly in
`runs/`: transcripts one folder down were invisible. Now each subfolder is a
row; enter lists it on top, whose `../` row (or escape) goes back. The listing
never goes above the directory that was opened, never follows a symlinked
folder out of it, skips hidden ones, and writes nothing anywhere.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync
from _screen_apps import SCREEN_SIZE, ScreenApp, run
from _support import REFERENCE
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.screens.listing import UP, ListingScreen, scan_directory


def _transcript(path: Path) -> Path:
    """A reference transcript with its artifacts, under `path`'s name."""
    shutil.copyfile(REFERENCE / "basic.jsonl", path)
    artifacts = path.with_suffix(".artifacts")
    artifacts.mkdir()
    for f in sorted((REFERENCE / "basic.artifacts").iterdir()):
        shutil.copyfile(f, artifacts / f.name)
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """runs/ with a transcript, sub/ (a transcript, deeper/), a hidden and a symlinked folder."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "elsewhere.jsonl").write_bytes(b"")
    root = tmp_path / "runs"
    root.mkdir()
    _transcript(root / "top.jsonl")
    sub = root / "sub"
    sub.mkdir()
    _transcript(sub / "inner.jsonl")
    (sub / "deeper").mkdir()
    (sub / "deeper" / "deep.jsonl").write_bytes(b"")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.jsonl").write_bytes(b"")
    (root / "out").symlink_to(outside, target_is_directory=True)
    return root


def _names(screen: Any) -> list[str]:
    assert isinstance(screen, ListingScreen)
    return [e.name for e in screen.entries]


def _title(screen: Any) -> str:
    return str(screen.query_one("#listing-title", Static).render())


def _row(screen: Any, key: str) -> list[str]:
    table = screen.query_one("#listing-table", DataTable)
    return [str(cell) for cell in table.get_row(key)]


def _state(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under `root` (symlinks not followed) with its size and mtime."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, name))
            out[os.path.relpath(os.path.join(dirpath, name), root)] = (st.st_size, st.st_mtime_ns)
    return out


def test_scan_lists_folders_first_and_skips_hidden_symlinked_and_claimed_ones(
    tree: Path,
) -> None:
    entries = scan_directory(tree)
    assert [e.name for e in entries] == ["sub", "top.jsonl"]
    sub = entries[0]
    assert sub.is_folder and not sub.is_transcript
    assert sub.size == 1, "one transcript directly inside (deeper/'s are not counted)"


def test_enter_lists_a_subfolder_and_up_and_escape_go_back(tree: Path) -> None:
    app = ScreenApp(lambda: ListingScreen(tree))

    async def scenario(pilot: Pilot[Any]) -> None:
        root = app.screen
        assert _names(root) == ["sub", "top.jsonl"]
        assert _title(root) == "Transcripts in runs/"
        assert _row(root, "sub")[0] == "sub/"
        assert "1 transcript" in _row(root, "sub")
        status = str(root.query_one("#listing-status", Static).render())
        assert "1 transcript · 1 folder" in status

        await pilot.press("enter")  # the cursor starts on sub/
        await settle(pilot)
        sub = app.screen
        assert sub is not root and isinstance(sub, ListingScreen)
        assert sub.directory == tree / "sub"
        assert _names(sub) == [UP, "deeper", "inner.jsonl"]
        assert _title(sub) == "Transcripts in runs/sub/"
        assert sub.results["inner.jsonl"].counts is not None, "verified like any transcript"

        await pilot.press("down", "enter")  # deeper/
        await settle(pilot)
        deeper = app.screen
        assert isinstance(deeper, ListingScreen)
        assert _title(deeper) == "Transcripts in runs/sub/deeper/"
        assert _names(deeper) == [UP, "deep.jsonl"]
        up = _row(deeper, UP)
        assert up[0] == "../" and up[-1] == "back to runs/sub/"

        await pilot.press("home", "enter")  # ../
        await pilot.pause()
        assert app.screen is sub
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is root
        assert UP not in _names(root), "never above the directory that was opened"
        assert app.chosen == []

    run(app, scenario)


def test_a_transcript_in_a_subfolder_is_chosen_with_its_path(tree: Path) -> None:
    app = ScreenApp(lambda: ListingScreen(tree))

    async def scenario(pilot: Pilot[Any]) -> None:
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("end", "enter")
        await pilot.pause()
        assert app.chosen == [tree / "sub" / "inner.jsonl"]

    run(app, scenario)


def test_nested_listings_share_the_verification_slots(tree: Path) -> None:
    app = ScreenApp(lambda: ListingScreen(tree))

    async def scenario(pilot: Pilot[Any]) -> None:
        root = app.screen
        await pilot.press("enter")
        await settle(pilot)
        sub = app.screen
        assert isinstance(sub, ListingScreen) and sub is not root
        assert sub._slots is root._slots  # type: ignore[attr-defined]

    run(app, scenario)


@sync
async def test_the_app_opens_a_subfolders_transcript_and_comes_back(tree: Path) -> None:
    before = _state(tree)
    app = TranscriptApp(tree)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # sub/
        await settle(pilot)
        sub = app.screen
        assert isinstance(sub, ListingScreen)
        await pilot.press("end", "enter")  # inner.jsonl
        await settle(pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert app.screen.path == tree / "sub" / "inner.jsonl"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is sub, "escape goes back to the folder it was opened from"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ListingScreen) and app.screen.directory == tree
    assert _state(tree) == before, "browsing folders wrote nothing"

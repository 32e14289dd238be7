"""The reusable screens on their own: a bare app to host one, and the data they show.

Shared by the screens' Pilot tests (tests/viewer/test_screens.py) and their
snapshots (tests/snapshots/test_snapshots.py). Everything is deterministic:
fixed file mtimes (os.utime), fixed names (only basenames are ever shown).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _pilot import wait_until_quiet
from _support import REFERENCE
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen

from transcript_view.core.verification import list_orphans
from transcript_view.viewer.screens import ListingScreen, OrphansScreen

SCREEN_SIZE = (100, 30)
"""Screens stand alone in a smaller terminal than the transcript screen."""
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
        async with app.run_test(size=SCREEN_SIZE) as pilot:
            await settle(pilot)
            await scenario(pilot)

    asyncio.run(main())


# -- data --------------------------------------------------------------------


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


def make_artifact_dir(tmp_path: Path) -> Path:
    """An artifact directory of orphans: a regular one, a partial write, a hostile name."""
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


def make_transcripts_dir(tmp_path: Path) -> Path:
    """A directory to list: reference transcripts, a broken one, a fifo, a lost artifact dir."""
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

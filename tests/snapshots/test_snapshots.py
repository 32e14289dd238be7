"""Snapshots of the transcript screen: what a person sees, pinned as SVG.

Every snapshot waits for all workers (index, analysis, hashing) before the
picture is taken, shows no clock and no absolute path, and is taken at a fixed
120x40, so it is the same on every machine. Update with
`pytest tests/test_snapshots.py --snapshot-update`, then look at the SVGs.
"""

from __future__ import annotations

from typing import Any

import pytest
from _pilot import settle
from _runs import BADGE_CASES
from _support import EXAMPLES, REFERENCE
from textual.pilot import Pilot

from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen

SIZE = (120, 40)


def screen_of(pilot: Pilot[Any]) -> TranscriptScreen:
    screen = pilot.app.screen
    assert isinstance(screen, TranscriptScreen)
    return screen


async def settled(pilot: Pilot[Any]) -> None:
    await settle(pilot)


def test_snapshot_demo_opened(snap_compare: Any) -> None:
    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    assert snap_compare(app, terminal_size=SIZE, run_before=settled)


@pytest.mark.parametrize("state", BADGE_CASES)
def test_snapshot_badge(snap_compare: Any, run_factory: Any, state: str) -> None:
    run = run_factory(state)

    async def at_marker(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("n")

    assert snap_compare(TranscriptApp(run.path), terminal_size=SIZE, run_before=at_marker)


def test_snapshot_badge_checking(
    snap_compare: Any, run_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = run_factory("verified")
    monkeypatch.setattr(TranscriptScreen, "_verify", lambda self, *a: None)
    assert snap_compare(TranscriptApp(run.path), terminal_size=SIZE, run_before=settled)


async def _open_demo_artifact(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("n", "enter")
    await settle(pilot)


def test_snapshot_artifact_inline_top(snap_compare: Any) -> None:
    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    assert snap_compare(app, terminal_size=SIZE, run_before=_open_demo_artifact)


def test_snapshot_artifact_inline_end(snap_compare: Any) -> None:
    async def to_artifact_end(pilot: Pilot[Any]) -> None:
        await _open_demo_artifact(pilot)
        view = screen_of(pilot).view
        doc = view.doc
        kinds = [(r.kind if (r := doc.row(i)) is not None else "") for i in range(doc.total_rows)]
        end = kinds.index("art-end")
        view.set_cursor(end, scroll=False)
        view.scroll_cursor_visible(center=True)
        await pilot.pause()

    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    assert snap_compare(app, terminal_size=SIZE, run_before=to_artifact_end)


def test_snapshot_artifact_inline_seen_and_unseen(snap_compare: Any, run_factory: Any) -> None:
    """A small artifact whole on screen: the head and tail the model saw, the middle it did not."""
    run = run_factory("verified")

    async def open_it(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("n", "enter")
        await settle(pilot)

    assert snap_compare(TranscriptApp(run.path), terminal_size=SIZE, run_before=open_it)


@pytest.mark.parametrize("stem", ["compaction", "aging"])
def test_snapshot_model_view(snap_compare: Any, stem: str) -> None:
    path = REFERENCE / f"{stem}.jsonl"

    async def model_view(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)

    assert snap_compare(TranscriptApp(path), terminal_size=SIZE, run_before=model_view)


def test_snapshot_search(snap_compare: Any) -> None:
    async def search(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("slash", *"offset", "enter")
        await settle(pilot)
        await pilot.press("n")

    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    assert snap_compare(app, terminal_size=SIZE, run_before=search)


def test_snapshot_broken_example(snap_compare: Any) -> None:
    async def first_problem(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("p")

    app = TranscriptApp(EXAMPLES / "broken.jsonl")
    assert snap_compare(app, terminal_size=SIZE, run_before=first_problem)

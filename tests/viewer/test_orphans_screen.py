"""The orphans screen (`o`): each file its own reason, and `c`, `e`, `?` on the one selected.

The screen used to give every file the same sentence; the reason now comes from
core (`core.ledger.explain_orphans`, read off the transcript's operations), the
same words `--check` prints. `e` runs the transcript screen's pager code
(`viewer.pager.page`), so a missing pager is a toast here too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync
from _runs import line
from _screen import SIZE

from transcript_view.core.ledger import NO_DISPATCH
from transcript_view.core.text import COPY_HINT
from transcript_view.viewer import pager
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.screens.help import HelpScreen
from transcript_view.viewer.screens.orphans import OrphansScreen

#: Orphan name -> the reason the screen must show for it (sorted as the table is).
REASONS = {
    "op-one.txt": "dispatched at line 2; its settle on line 4 does not name it",
    "op-two.txt": "dispatched at line 5, never settled",
    "zzz.txt": NO_DISPATCH,
}


def _dispatch(n: int, op_id: str, call: str) -> str:
    return line(n, "tool-dispatched", {"arguments": "{}", "call-id": call, "tool": "sh"}, op_id)


def write_run(directory: Path) -> Path:
    """A settled operation and an unsettled one, each with an orphan, and a stranger."""
    lines = [
        line(1, "session-meta", {}),
        _dispatch(2, "op-one", "c1"),
        line(3, "message", {"content": "ok", "role": "tool", "tool-call-id": "c1"}),
        line(4, "tool-settled", {"op-id": "op-one", "outcome": "completed"}),
        _dispatch(5, "op-two", "c2"),
    ]
    path = directory / "run.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    art = directory / "run.artifacts"
    art.mkdir()
    for name in REASONS:
        (art / name).write_text(f"the result in {name}\n")
    return path


async def _open_orphans(pilot: Any) -> OrphansScreen:
    await settle(pilot)
    await pilot.press("o")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, OrphansScreen)
    return screen


def _why(screen: OrphansScreen) -> str:
    """The reason line of the preview pane."""
    pane = screen.query_one("#orphans-preview")
    text = pane.render()
    return str(getattr(text, "plain", text)).splitlines()[0]


@sync
async def test_each_orphan_shows_its_own_reason(tmp_path: Path) -> None:
    app = TranscriptApp(write_run(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_orphans(pilot)
        assert [o.name for o in screen.orphans] == list(REASONS)
        shown = []
        for i, name in enumerate(REASONS):
            if i:
                await pilot.press("down")
                await pilot.pause()
            shown.append(_why(screen))
            assert shown[-1] == f"why: {REASONS[name]}"
        assert len(set(shown)) == len(shown)


@sync
async def test_the_screen_and_check_give_the_same_reason(tmp_path: Path) -> None:
    path = write_run(tmp_path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        below = app.screen
        assert isinstance(below, TranscriptScreen)
        ledger = below.state.ledger
        assert ledger is not None
        messages = {f.file: f.message for f in ledger.orphan_warnings()}
        for name, reason in REASONS.items():
            assert reason in messages[name]


@sync
async def test_c_copies_the_selected_orphans_path_and_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clipboard: list[str] = []
    monkeypatch.setattr(TranscriptApp, "copy_to_clipboard", lambda self, t: clipboard.append(t))
    app = TranscriptApp(write_run(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await _open_orphans(pilot)
        toasts: list[tuple[str, dict[str, Any]]] = []
        app.notify = lambda message, **k: toasts.append((message, k))  # type: ignore[method-assign]
        await pilot.press("down", "c")
        path = str(tmp_path / "run.artifacts" / "op-two.txt")
        assert clipboard == [path]
        ((message, kwargs),) = toasts
        assert message.splitlines() == [path, COPY_HINT]
        assert kwargs["title"] == "Copied the path of op-two.txt"


@pytest.fixture
def handed_over(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """A terminal the app can suspend, and a pager that records what it was asked to show."""
    calls: list[list[str]] = []

    @contextlib.contextmanager
    def suspend(self: TranscriptApp) -> Iterator[None]:
        yield

    monkeypatch.setattr(TranscriptApp, "suspend", suspend)
    monkeypatch.setattr(pager, "wait_for_enter", lambda: True)
    monkeypatch.setattr(pager.subprocess, "call", lambda argv: calls.append(argv) or 0)
    return calls


@sync
async def test_e_opens_the_selected_orphan_in_the_pager(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, handed_over: list[list[str]]
) -> None:
    monkeypatch.setenv("PAGER", "mypager -R")
    monkeypatch.setattr(pager.shutil, "which", lambda n: f"/usr/bin/{n}")
    app = TranscriptApp(write_run(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_orphans(pilot)
        await pilot.press("down", "down", "e")
        await pilot.pause()
        target = (tmp_path / "run.artifacts" / "zzz.txt").resolve()
        assert handed_over == [["mypager", "-R", str(target)]]
        assert app.screen is screen  # back on the orphans screen


@sync
async def test_e_with_a_missing_pager_says_so_and_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, handed_over: list[list[str]]
) -> None:
    monkeypatch.setenv("PAGER", "nonexistent-pager")
    monkeypatch.setattr(pager.shutil, "which", lambda n: None)
    app = TranscriptApp(write_run(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_orphans(pilot)
        toasts: list[str] = []
        app.notify = lambda message, **k: toasts.append(message)  # type: ignore[method-assign]
        await pilot.press("e")
        await pilot.pause()
        assert handed_over == []
        assert any("nonexistent-pager" in t and "not found" in t for t in toasts), toasts
        assert app.screen is screen and app.is_running


@sync
async def test_e_goes_through_the_transcript_screens_pager_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One code path for `e` everywhere: the orphans screen calls `viewer.pager.page`."""
    paged: list[Path] = []
    monkeypatch.setattr(pager, "page", lambda app, path, say: paged.append(path))
    app = TranscriptApp(write_run(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await _open_orphans(pilot)
        await pilot.press("e")
        assert paged == [tmp_path / "run.artifacts" / "op-one.txt"]


@sync
async def test_question_mark_lists_this_screens_keys(tmp_path: Path) -> None:
    app = TranscriptApp(write_run(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await _open_orphans(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        keys = [k for k, _ in help_screen.key_rows]
        assert {"e", "c", "?", "enter"} <= set(keys), keys
        assert "n / N" not in keys  # the transcript's keys do nothing here
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, OrphansScreen)

"""What the UI thread is spared while a big transcript opens (issue 11).

The key footer is rebuilt only when the keys it shows change (`KeyFooter`),
and what the app is made of is kept out of the garbage collector's full
collections while it runs (`TranscriptApp.on_load`). Both had held a key
pressed while the background work ran: 20-60 ms a footer rebuild, 30-50 ms
a full collection.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import ClassVar

import pytest
from _pilot import settle, sync
from _screen import SIZE
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets._footer import FooterKey

from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.footer import KeyFooter
from transcript_view.viewer.main_screen import TranscriptScreen


@sync
async def test_the_footer_is_rebuilt_only_when_its_keys_change(reference_dir: Path) -> None:
    app = TranscriptApp(reference_dir / "basic.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        footer = screen.query_one(KeyFooter)
        keys = list(footer.children)
        assert keys, "the footer shows the screen's keys"
        # Told the bindings were updated when none changed (as when focus or
        # the app's focus comes back): the same key widgets stay.
        screen.refresh_bindings()
        await settle(pilot)
        assert list(footer.children) == keys
        # A change of what it shows (the search field's keys): rebuilt.
        await pilot.press("slash")
        await settle(pilot)
        assert screen.focused is not None and screen.focused.id == "search"
        shown = list(footer.children)
        assert shown and shown != keys
        await pilot.press("escape")
        await settle(pilot)
        assert footer.shown() != () and list(footer.children) != shown


class _Switch(App[None]):
    """A screen with one key that is disabled (shown greyed) until `on` is set."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("x", "go", "Go")]
    on = False

    def compose(self) -> ComposeResult:
        yield KeyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if action == "go" and not self.on else True

    def action_go(self) -> None:
        pass


@sync
async def test_a_key_that_becomes_enabled_is_shown_enabled() -> None:
    """Whether a key is enabled is part of what the footer compares."""
    app = _Switch()
    async with app.run_test() as pilot:
        await settle(pilot)
        footer = app.screen.query_one(KeyFooter)
        (key,) = [k for k in footer.query(FooterKey) if k.action == "go"]
        assert key.has_class("-disabled")
        app.on = True
        app.screen.refresh_bindings()
        await settle(pilot)
        (key,) = [k for k in footer.query(FooterKey) if k.action == "go"]
        assert not key.has_class("-disabled")


@sync
async def test_the_app_freezes_what_it_is_made_of_while_it_runs(
    reference_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gc.unfreeze()  # whatever an earlier test left
    loaded: list[int] = []
    on_load = TranscriptApp.on_load

    def counted_load(self: TranscriptApp) -> None:
        on_load(self)
        loaded.append(gc.get_freeze_count())

    monkeypatch.setattr(TranscriptApp, "on_load", counted_load)
    app = TranscriptApp(reference_dir / "basic.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # The imports (on load), then the first screen's widgets too.
        assert 0 < loaded[0] < gc.get_freeze_count()
    # Ended, it hands them back: a process that runs many apps (these tests)
    # collects their garbage as before.
    assert gc.get_freeze_count() == 0


@sync
async def test_a_program_that_froze_objects_of_its_own_keeps_them_frozen(
    reference_dir: Path,
) -> None:
    gc.unfreeze()
    gc.freeze()  # the embedding program's
    try:
        app = TranscriptApp(reference_dir / "basic.jsonl")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()

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

from _pilot import settle, sync
from _screen import SIZE

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


@sync
async def test_the_app_freezes_what_it_is_made_of_while_it_runs(reference_dir: Path) -> None:
    gc.unfreeze()  # whatever an earlier test left
    app = TranscriptApp(reference_dir / "basic.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert gc.get_freeze_count() > 0  # the imports, the first screen
    # Ended, it hands them back: a process that runs many apps (these tests)
    # collects their garbage as before.
    assert gc.get_freeze_count() == 0

"""The Textual app: a transcript screen for a file, a listing screen for a directory.

`run_app` is what `transcript_view.cli` calls once it has checked the path; the app
itself only decides which screen comes first and wires the listing's choice to
a transcript screen. All transcript work lives in `viewer.main_screen`.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import ClassVar

from textual import events
from textual.app import App
from textual.binding import BindingType
from textual.message import Message

from transcript_view.core import parallel
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.sessions import tree_format
from transcript_view.core.opencode_store import is_database_file
from transcript_view.viewer.commands import TranscriptCommands
from transcript_view.viewer.keys import Owner, bindings
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.pacing import note_input
from transcript_view.viewer.screens.listing import ListingScreen
from transcript_view.viewer.screens.sessions import SessionsScreen

#: Seconds a thread may hold the GIL while another waits (Python's default is 0.005).
SWITCH_INTERVAL = 0.001


class TranscriptApp(App[int]):
    """transcript-view: what did the model really see, and where is the rest?"""

    TITLE = "transcript-view"
    COMMANDS = App.COMMANDS | {TranscriptCommands}
    # The compact footer gives every key a one-cell right margin, the palette key
    # docked at the right edge too: at 80 columns the keys that run under it
    # showed through that last cell ("^p palette h"). Its help and quit keys come
    # first (`keys.Key.pinned`), so they are never the ones that run under it.
    CSS = """
    Footer.-compact FooterKey.-command-palette { margin-right: 0; }
    """
    #: Generated from the key table (`viewer.keys`): ctrl+c quits on every screen.
    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.APP)

    def __init__(
        self, path: Path | None, format: Format | None = None, *, every_agent: bool = False
    ) -> None:
        """Open `path`: a transcript file, or a directory to choose one from; or, with
        `every_agent` (and no path), every agent's sessions on this machine (`--sessions`).

        `format` forces how a transcript is read (`--format`); by default its
        first lines tell.
        """
        super().__init__()
        self.path = Path(path) if path is not None else Path()
        self.every_agent = every_agent
        self.format = format
        self._thaw_on_exit = False
        """Whether ending the app unfreezes the collector's objects (`on_load`)."""

    def on_load(self) -> None:
        """Take what the imports made out of the garbage collector's sight.

        A full collection walks every object the collector tracks, and the UI
        thread waits for it: tens of thousands of modules', classes' and
        stylesheets' objects that live as long as the app made each one take
        30-50 ms here while the background work ran, which a key pressed
        meanwhile waited for. Frozen (`gc.freeze`), they are never walked
        again; what is made later is collected as before. Frozen again once
        the first screen is up (its widgets live as long), and thawed when the
        app ends, so a process that runs more than one app (the tests) gets its
        garbage collected as before. A program that froze objects of its own
        before (one embedding the app) keeps them frozen: the app then leaves
        the freezing as it found it, frozen.
        """
        self._thaw_on_exit = gc.get_freeze_count() == 0
        gc.freeze()

    def on_unmount(self) -> None:
        """Hand the frozen objects back to the collector (see `on_load`)."""
        if self._thaw_on_exit:
            gc.unfreeze()

    def on_mount(self) -> None:
        """The first screen: the listing for a directory, else the transcript."""
        # Workers index, parse and hash in threads; the UI thread must not wait the
        # default 5 ms for the GIL each time it wakes up, or every key press while a
        # worker runs costs several of those. 1 ms keeps keys snappy at little cost.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        if self.every_agent:
            self.push_screen(SessionsScreen(None, None))
        elif is_database_file(self.path):  # OpenCode's database: its sessions
            self.push_screen(SessionsScreen(self.path, Format.OPENCODE))
        elif self.path.is_dir():
            agent = tree_format(self.path)
            if agent is not None:
                self.push_screen(SessionsScreen(self.path, agent))
            else:
                self.push_screen(ListingScreen(self.path))
        else:
            self.push_screen(TranscriptScreen(self.path, self.format))
        self.call_after_refresh(gc.freeze)  # the first screen's widgets too (`on_load`)

    def post_message(self, message: Message) -> bool:
        """Note every key and mouse event as it arrives: background workers give way.

        Noted here, when the driver (or a test) posts the event, not when the app
        gets round to it: while a worker holds the GIL that can be milliseconds later.
        """
        if isinstance(message, events.InputEvent):
            note_input()
        return super().post_message(message)

    def on_listing_screen_chosen(self, message: ListingScreen.Chosen) -> None:
        """A transcript was chosen in the listing: open it on top (escape goes back)."""
        self.push_screen(TranscriptScreen(message.path, self.format))


def run_app(path: Path | None, format: Format | None = None, *, every_agent: bool = False) -> int:
    """Run the viewer on a transcript or a directory (or every agent's sessions); the
    process exit status."""
    # Forked now, while no other thread runs: the analysis of a big transcript
    # runs there, on every core, instead of beside the UI on one.
    parallel.start_server()
    app = TranscriptApp(path, format, every_agent=every_agent)
    result = app.run()
    return result if isinstance(result, int) else 0

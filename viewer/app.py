"""The Textual app: a transcript screen for a file, a listing screen for a directory.

`run_app` is what `viewer.cli` calls once it has checked the path; the app
itself only decides which screen comes first and wires the listing's choice to
a transcript screen. All transcript work lives in `viewer.main_screen`.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from viewer.commands import TranscriptCommands
from viewer.main_screen import TranscriptScreen


class TranscriptApp(App[int]):
    """transcript-view: what did the model really see, and where is the rest?"""

    TITLE = "transcript-view"
    COMMANDS = App.COMMANDS | {TranscriptCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(self, path: Path) -> None:
        """Open `path`: a transcript file, or a directory to choose one from."""
        super().__init__()
        self.path = Path(path)

    def on_mount(self) -> None:
        """The first screen: the listing for a directory, else the transcript."""
        if self.path.is_dir():
            from viewer.screens.listing import ListingScreen

            self.push_screen(ListingScreen(self.path))
        else:
            self.push_screen(TranscriptScreen(self.path))

    def on_listing_screen_chosen(self, message: object) -> None:
        """A transcript was chosen in the listing: open it on top (escape goes back)."""
        path = getattr(message, "path", None)
        if isinstance(path, Path):
            self.push_screen(TranscriptScreen(path))


def run_app(path: Path) -> int:
    """Run the viewer on a transcript or a directory; the process exit status."""
    app = TranscriptApp(path)
    result = app.run()
    return result if isinstance(result, int) else 0

"""Screens the main transcript screen pushes: orphans, directory listing, help.

Each is a `textual.screen.Screen` with its own DEFAULT_CSS and BINDINGS
(escape or q goes back) and shows file names only as sanitised `Text`.
"""

from transcript_view.viewer.fileview import ArtifactScreen
from transcript_view.viewer.screens.help import HelpScreen
from transcript_view.viewer.screens.listing import ListingScreen
from transcript_view.viewer.screens.orphans import OrphansScreen

__all__ = ["ArtifactScreen", "HelpScreen", "ListingScreen", "OrphansScreen"]

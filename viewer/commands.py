"""The command palette's transcript commands (ctrl+p).

Every key of the transcript screen is also a named command, so a person who
does not remember `N` or `o` can type "previous marker" or "orphans". The
commands call the screen's own actions; nothing here duplicates behaviour.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

#: (title, help, action name on the transcript screen)
COMMANDS: list[tuple[str, str, str]] = [
    ("Next marker", "Go to the next excerpt marker (n)", "next_marker"),
    ("Previous marker", "Go to the previous excerpt marker (N)", "previous_marker"),
    ("Next problem", "Go to the next bad line, finding or unverified marker (p)", "next_problem"),
    ("Previous problem", "Go to the previous problem (P)", "previous_problem"),
    ("Open / close artifact", "Open the marker's artifact inline, or close it (enter)", "activate"),
    ("Orphans", "Files in the artifact directory that no line names (o)", "orphans"),
    ("Switch view", "File view / model view: what the model is sent next (m)", "toggle_view"),
    ("Search", "Search the transcript (/)", "search"),
    ("Open in pager", "Open the artifact under the cursor in $PAGER (e)", "pager"),
    ("Copy path", "Copy the artifact's path or the marker text (c)", "copy"),
    ("Follow", "Follow a transcript that is still being written (f)", "follow"),
    ("Help", "Keys and badges (?)", "help"),
]


class TranscriptCommands(Provider):
    """Palette entries for the transcript screen's actions (absent on other screens)."""

    def _actions(self) -> list[tuple[str, str, str]]:
        from transcript_view.viewer.main_screen import TranscriptScreen

        return COMMANDS if isinstance(self.screen, TranscriptScreen) else []

    async def discover(self) -> Hits:
        """Every command, for the palette's empty query."""
        for title, help_text, action in self._actions():
            yield DiscoveryHit(title, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        """Commands whose title fuzzily matches the query."""
        matcher = self.matcher(query)
        for title, help_text, action in self._actions():
            score = matcher.match(title)
            if score > 0:
                run = partial(self._run, action)
                yield Hit(score, matcher.highlight(title), run, help=help_text)

    async def _run(self, action: str) -> None:
        await self.screen.run_action(action)

"""The command palette's transcript commands (ctrl+p).

Every key of the transcript screen is also a named command, so a person who
does not remember `N` or `o` can type "previous marker" or "orphans". The
commands call the screen's own actions; nothing here duplicates behaviour, and
their titles and help come from the key table (`viewer.keys`).
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from transcript_view.viewer.keys import palette_commands
from transcript_view.viewer.main_screen import TranscriptScreen

#: (title, help, action name on the transcript screen), generated from the key table:
#: a key that gets a new action gets its command there, or says why it has none.
COMMANDS: list[tuple[str, str, str]] = palette_commands()


class TranscriptCommands(Provider):
    """Palette entries for the transcript screen's actions (absent on other screens)."""

    def _actions(self) -> list[tuple[str, str, str]]:
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

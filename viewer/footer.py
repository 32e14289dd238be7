"""The key footer: Textual's `Footer`, rebuilt only when the keys it shows change.

Textual's footer throws away its key widgets and mounts new ones every time
the screen says its bindings were updated: when the screen is pushed or
resumed, when focus moves, when the app gains focus. On opening a transcript
that was three times, each a few dozen widgets styled and laid out again on
the UI thread, 20-60 ms apiece while the background work had both cores,
and a key pressed meanwhile waited for it. Most of those updates change no
key, so this footer compares what it would show with what it shows and
leaves itself alone when they are the same.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Footer

#: What the footer shows of one binding (see `KeyFooter.shown`).
Shown = tuple[Any, ...]


class KeyFooter(Footer):
    """A `Footer` that recomposes only when the bindings it would show differ."""

    def __init__(self, *, compact: bool = False) -> None:
        """As `Footer(compact=...)`."""
        super().__init__(compact=compact)
        self._composed_for: tuple[Shown, ...] | None = None

    def shown(self) -> tuple[Shown, ...]:
        """Everything `Footer.compose` reads of the screen's bindings, in order.

        Every active binding, shown or not (the palette's key may be hidden
        and still appear), with whether it is enabled, its tooltip and how its
        key is displayed; and the footer's own switches. Taking more than
        `compose` uses can only cost a rebuild, never miss one.
        """
        app = self.app
        keys = tuple(
            (
                key,
                binding.key,
                binding.action,
                binding.description,
                binding.show,
                binding.group,
                binding.tooltip,
                app.get_key_display(binding),
                enabled,
                tooltip,
            )
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
        )
        switches = (self.show_command_palette, app.ENABLE_COMMAND_PALETTE, self.compact)
        return (*keys, switches)

    def compose(self) -> ComposeResult:
        """`Footer.compose`, noting what it was composed from.

        Noted here, where the bindings are read, and not when a rebuild is
        asked for: they can change while the old keys are being removed.
        """
        self._composed_for = self.shown() if self._bindings_ready else None
        yield from super().compose()

    async def recompose(self) -> None:
        """Rebuild the keys, unless they would come out as they are."""
        if self._bindings_ready and self.is_attached and self.shown() == self._composed_for:
            return
        await super().recompose()

"""The header line: which transcript, its counts, and what is still being worked on.

Counts change while workers index, analyse and hash, so each is a reactive
attribute and the header re-renders itself; the workers never touch it (the
screen copies numbers in from their messages). No clock is shown: the header
of a finished check is the same every time, which snapshot tests rely on.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from transcript_view.viewer.sanitize import visible

BAR_CELLS = 12


def progress_bar(done: int, total: int) -> str:
    """A small text bar: the visible progress indicator of a background phase."""
    if total <= 0:
        return "▱" * BAR_CELLS
    filled = min(BAR_CELLS, done * BAR_CELLS // total)
    return "▰" * filled + "▱" * (BAR_CELLS - filled)


class TranscriptHeader(Widget):
    """Name, envelopes, markers, verified, problems, and the phase in progress."""

    DEFAULT_CSS = """
    TranscriptHeader {
        height: 2;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    """

    name_shown: reactive[str] = reactive("")
    envelopes: reactive[int | None] = reactive(None)
    lines: reactive[int] = reactive(0)
    markers: reactive[int | None] = reactive(None)
    verified: reactive[int | None] = reactive(None)
    problems: reactive[int | None] = reactive(None)
    phase: reactive[str] = reactive("")
    done: reactive[int] = reactive(0)
    total: reactive[int] = reactive(0)
    view_name: reactive[str] = reactive("file view")
    following: reactive[bool] = reactive(False)
    search_status: reactive[str] = reactive("")

    def render(self) -> Text:
        """Two rows: identity and counts, then the view and any work in progress."""
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(visible(self.name_shown), style="bold")
        t.append("   ")

        def count(label: str, value: int | None, style: str = "") -> None:
            t.append(f"{label} ", style="dim")
            t.append("…" if value is None else f"{value:,}", style=style)
            t.append("   ")

        count("envelopes", self.envelopes)
        count("markers", self.markers)
        count("verified", self.verified, "green" if self.verified else "")
        count(
            "problems",
            self.problems,
            "bold red" if self.problems else ("green" if self.problems == 0 else ""),
        )
        t.append(f"{self.lines:,} lines", style="dim")
        t.append("\n")
        t.append(f"[{self.view_name}]", style="bold cyan")
        if self.following:
            t.append("  following", style="bold yellow")
        if self.phase:
            t.append(f"  {self.phase} ", style="yellow")
            t.append(progress_bar(self.done, self.total), style="yellow")
            if self.total:
                t.append(f" {self.done:,}/{self.total:,}", style="dim")
        elif self.envelopes is not None:
            t.append("  all artifacts checked", style="dim green")
        if self.search_status:
            t.append("  " + visible(self.search_status), style="bold")
        return t

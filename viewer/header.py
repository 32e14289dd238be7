"""The header line: which transcript, its counts, and what is still being worked on.

Counts change while workers index, analyse and hash, so each is a reactive
attribute and the header re-renders itself; the workers never touch it (the
screen copies numbers in from their messages). No clock is shown: the header
of a finished check is the same every time, which snapshot tests rely on.
Colours are component classes over theme variables, so a theme chosen from the
command palette reaches the header too (it renders on the UI thread, so it
reads them directly; no palette is needed).
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from transcript_view.core.text import plural, visible
from transcript_view.viewer.palette import component_style

BAR_CELLS = 12


def progress_bar(done: int, total: int) -> str:
    """A small text bar: the visible progress indicator of a background phase."""
    if total <= 0:
        return "▱" * BAR_CELLS
    filled = min(BAR_CELLS, done * BAR_CELLS // total)
    return "▰" * filled + "▱" * (BAR_CELLS - filled)


class TranscriptHeader(Widget):
    """Name, envelopes, markers, verified, problems, and the phase in progress."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "header--name",
        "header--label",
        "header--ok",
        "header--error",
        "header--view",
        "header--busy",
        "header--following",
        "header--done",
        "header--search",
    }

    DEFAULT_CSS = """
    TranscriptHeader {
        height: 2;
        background: $panel;
        color: $foreground;
        padding: 0 1;
        & > .header--name { text-style: bold; }
        & > .header--label { color: $text-muted; }
        & > .header--ok { color: $text-success; }
        & > .header--error { color: $text-error; text-style: bold; }
        & > .header--view { color: $text-primary; text-style: bold; }
        & > .header--busy { color: $text-warning; }
        & > .header--following { color: $text-warning; text-style: bold; }
        & > .header--done { color: $text-success; }
        & > .header--search { text-style: bold; }
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

    def _style(self, part: str) -> Style:
        return component_style(self, f"header--{part}")

    def render(self) -> Text:
        """Two rows: identity and counts, then the view and any work in progress."""
        t = Text(no_wrap=True, overflow="ellipsis")
        label, ok = self._style("label"), self._style("ok")
        t.append(visible(self.name_shown), style=self._style("name"))
        t.append("   ")

        def count(name: str, value: int | None, style: Style | None = None) -> None:
            t.append(f"{name} ", style=label)
            t.append("…" if value is None else f"{value:,}", style=style or "")
            t.append("   ")

        count("envelopes", self.envelopes)
        count("markers", self.markers)
        count("verified", self.verified, ok if self.verified else None)
        count(
            "problems",
            self.problems,
            self._style("error") if self.problems else (ok if self.problems == 0 else None),
        )
        t.append(plural(self.lines, "line"), style=label)
        t.append("\n")
        t.append(f"[{self.view_name}]", style=self._style("view"))
        if self.following:
            t.append("  following", style=self._style("following"))
        if self.phase:
            busy = self._style("busy")
            t.append(f"  {self.phase} ", style=busy)
            t.append(progress_bar(self.done, self.total), style=busy)
            if self.total:
                t.append(f" {self.done:,}/{self.total:,}", style=label)
        elif self.envelopes is not None:
            t.append("  all artifacts checked", style=self._style("done"))
        if self.search_status:
            t.append("  " + visible(self.search_status), style=self._style("search"))
        return t

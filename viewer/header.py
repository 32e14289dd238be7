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

from typing import ClassVar, NamedTuple

from rich.cells import cell_len, chop_cells
from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from transcript_view.core.formats.detect import Format
from transcript_view.core.text import plural, visible
from transcript_view.viewer.palette import component_style

BAR_CELLS = 12
#: Below this width the header packs its counts closer and leaves out the line count.
NARROW_HEADER = 100


class HeaderWords(NamedTuple):
    """The header's words for one format: only the reference's markers are "verified"."""

    records: str
    """What a line is called."""
    checked: str
    """The count of markers whose file agrees with them ("" when nothing can be checked)."""
    done: str
    """Said when every background phase has finished."""


REFERENCE_WORDS = HeaderWords("envelopes", "verified", "all artifacts checked")


def words_for(fmt: Format) -> HeaderWords:
    """The header's words for a format (what `--check`'s summary line says, shorter)."""
    if fmt is Format.CLAUDE_CODE:
        return HeaderWords(
            "records", "preview ok", "all sidecars checked (no digests in this format)"
        )
    if fmt in (Format.CODEX, Format.COPILOT):
        return HeaderWords("records", "", "read (this format stores nothing to check)")
    if fmt in (Format.QWEN, Format.GEMINI, Format.OPENCODE):
        return HeaderWords("records", "files ok", "all files checked")
    return REFERENCE_WORDS


#: The style meta key on the "+N new lines ↓" indicator: a click on it (the screen
#: reads `Click.style.meta`) jumps to the end.
NEW_LINES_META = "new-lines"


def progress_bar(done: int, total: int) -> str:
    """A small text bar: the visible progress indicator of a background phase."""
    if total <= 0:
        return "▱" * BAR_CELLS
    filled = min(BAR_CELLS, done * BAR_CELLS // total)
    return "▰" * filled + "▱" * (BAR_CELLS - filled)


def fit_middle(text: str, cells: int) -> str:
    """`text` in at most `cells` cells, its middle replaced by `…` when it is longer."""
    if cell_len(text) <= cells:
        return text
    keep = max(cells - 1, 2)
    head = chop_cells(text, (keep + 1) // 2)[0]
    tail_cells = keep - cell_len(head)
    tail = ""
    for ch in reversed(text):
        if cell_len(ch + tail) > tail_cells:
            break
        tail = ch + tail
    return head + "…" + tail


class TranscriptHeader(Widget):
    """Name, envelopes, markers, verified, problems, orphans, and the phase in progress."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "header--name",
        "header--label",
        "header--ok",
        "header--error",
        "header--orphans",
        "header--view",
        "header--busy",
        "header--following",
        "header--done",
        "header--search",
    }

    DEFAULT_CSS = """
    TranscriptHeader {
        height: 2;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        background: $panel;
        color: $foreground;
        padding: 0 1;
        & > .header--name { text-style: bold; }
        & > .header--label { color: $text-muted; }
        & > .header--ok { color: $text-success; }
        & > .header--error { color: $text-error; text-style: bold; }
        & > .header--orphans { color: $text-warning; text-style: bold; }
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
    """Errors and warnings on lines: the ones `p` visits (`VerificationLedger.problems`)."""
    orphans: reactive[int | None] = reactive(None)
    """Files no line names (`VerificationLedger.orphan_warnings`): counted apart, since
    `p` cannot reach them; shown only when there are some (`o` lists them)."""
    phase: reactive[str] = reactive("")
    done: reactive[int] = reactive(0)
    total: reactive[int] = reactive(0)
    view_name: reactive[str] = reactive("file view")
    following: reactive[bool] = reactive(False)
    about: reactive[str] = reactive("")
    """What the transcript is, when its name does not say (a subagent's own file)."""
    new_lines: reactive[int] = reactive(0)
    """Following while scrolled up: lines appended below the screen since the end was seen."""
    search_status: reactive[str] = reactive("")
    words: reactive[HeaderWords] = reactive(lambda: REFERENCE_WORDS)
    """What the counts are called in this transcript's format (`words_for`)."""

    def _style(self, part: str) -> Style:
        return component_style(self, f"header--{part}")

    def render(self) -> Text:
        """Two rows: identity and counts, then the view and any work in progress."""
        label, ok = self._style("label"), self._style("ok")
        t = Text(no_wrap=True, overflow="ellipsis")
        # Narrow (80 columns): closer counts, and the line count (the least needed) left out,
        # so problems and orphans still show.
        narrow = 0 < self.size.width < NARROW_HEADER
        gap = "  " if narrow else "   "

        def count(name: str, value: int | None, style: Style | None = None) -> None:
            t.append(f"{name} ", style=label)
            t.append("…" if value is None else f"{value:,}", style=style or "")
            t.append(gap)

        words = self.words
        count(words.records, self.envelopes)
        count("markers", self.markers)
        if words.checked:
            count(words.checked, self.verified, ok if self.verified else None)
        count(
            "problems",
            self.problems,
            self._style("error") if self.problems else (ok if self.problems == 0 else None),
        )
        if self.orphans:
            count("orphans", self.orphans, self._style("orphans"))
        if not narrow:
            t.append(plural(self.lines, "line"), style=label)
        # The counts matter more than a long file name (a Claude Code session's is a
        # uuid): the name gives way first, cut in its middle.
        room = max(self.size.width - t.cell_len - 3, 12)
        first = Text()
        first.append(fit_middle(visible(self.name_shown), room), style=self._style("name"))
        first.append(gap)
        t = first + t
        t.no_wrap, t.overflow = True, "ellipsis"
        t.append("\n")
        t.append(f"[{self.view_name}]", style=self._style("view"))
        if self.about:
            t.append("  " + visible(self.about), style=self._style("label"))
        if self.following:
            t.append("  following", style=self._style("following"))
        if self.new_lines:
            shown = f"+{plural(self.new_lines, 'new line')} ↓"
            t.append("  ")
            t.append(shown, style=self._style("following") + Style(meta={NEW_LINES_META: True}))
        if self.phase:
            busy = self._style("busy")
            t.append(f"  {self.phase} ", style=busy)
            t.append(progress_bar(self.done, self.total), style=busy)
            if self.total:
                t.append(f" {self.done:,}/{self.total:,}", style=label)
        elif self.envelopes is not None:
            t.append(f"  {words.done}", style=self._style("done"))
        if self.search_status:
            t.append("  " + visible(self.search_status), style=self._style("search"))
        return t

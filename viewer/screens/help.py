"""The help screen: every key, what badges and artifact bars mean.

The keys come from the key table (`viewer.keys`) that also generates the
bindings: the transcript's keys, then those of the screens it opens (orphans,
listing, a file, this help), so the help never drifts from them (a caller may pass its own list,
as the snapshot tests do); the badge meanings are keyed by `core.verification.MarkerState`
so a new state without an explanation is caught by the tests.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from transcript_view.core.findings import Severity
from transcript_view.core.verification import MarkerState
from transcript_view.viewer import sanitize
from transcript_view.viewer.keys import Owner, bindings, help_rows, screen_rows
from transcript_view.viewer.palette import (
    EXPOSURE_GLYPHS,
    EXPOSURE_LABELS,
    SEEN_KEY,
    SEVERITY_LABELS,
    SEVERITY_MARKS,
    UNSEEN_KEY,
)

#: What each marker badge means, in the order they are explained.
BADGE_MEANINGS: dict[MarkerState, str] = {
    MarkerState.VERIFIED: (
        "the full result is in the artifact directory; its size and sha256 match the "
        "marker, and the head and tail the model saw are the file's start and end (Qwen "
        "Code: its size in KB, sha256 and preview match the stub)"
    ),
    MarkerState.MATCHES: (
        "a sidecar whose start is the preview the model saw and whose size is the one "
        "printed (Claude Code; Qwen Code before 0.23); no digest was recorded, so the bytes "
        "cannot be proved"
    ),
    MarkerState.PRESENT: (
        "a Claude Code sidecar that is there, named by a marker form that records "
        "nothing else to check (no preview, size or digest)"
    ),
    MarkerState.EXCERPT_MATCHES: (
        "a file whose start and end are the head and tail the model saw (Qwen Code's "
        "budget cut); no digest was written, so the middle cannot be proved"
    ),
    MarkerState.EXPIRED: (
        "the file is gone, as the agent says it may be (Qwen Code deletes its files after "
        "24 hours): the rest is lost, by design rather than by a fault"
    ),
    MarkerState.MISSING: (
        "the marker names a file that is not in the artifact directory (Claude Code: "
        "the session's tool-results/)"
    ),
    MarkerState.DIGEST_MISMATCH: (
        "the file has the right size but a different sha256: it changed after it was stored"
    ),
    MarkerState.SIZE_MISMATCH: (
        "the file is not the size the marker says (a store cut short, or an edit)"
    ),
    MarkerState.EXCERPT_MISMATCH: (
        "the file matches its digest, but the head or tail the model saw is not its "
        "start or end"
    ),
    MarkerState.UNSAFE_NAME: (
        "the marker names a path, not a plain file name (separators, '..', absolute); "
        "it is never opened"
    ),
    MarkerState.UNREADABLE: (
        "something is there but cannot be read: permissions, a fifo or device, or a "
        "symlink leading out of the directory"
    ),
    MarkerState.NOT_STORED: (
        "the run had nowhere to store the full result; only the excerpt exists (Codex, "
        "older Claude Code: the output was cut and the rest is gone)"
    ),
    MarkerState.COULD_NOT_BE_STORED: (
        "the run tried to store the full result and failed; only the excerpt exists"
    ),
    MarkerState.CHECKING: "the artifact is still being read and hashed",
}

INTRO = (
    "A tool result longer than the limit reached the model as an excerpt: its head, "
    "a marker line, and its tail. The full result went to <transcript>.artifacts/. "
    "Each marker gets a badge saying what was found there:"
)


def _two_columns(rows: list[tuple[Text, Text]], left_width: int | None = None) -> Table:
    """A borderless two-column table: wrapped text keeps its hanging indent.

    `left_width`: the left column's width (None: its longest entry's); it never wraps.
    """
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, min_width=left_width)
    table.add_column(ratio=1)
    for left, right in rows:
        table.add_row(left, right)
    return table


def key_table(bindings: list[tuple[str, str]]) -> Table:
    """The keys as two aligned columns, built from plain Text (never markup)."""
    return _two_columns(
        [(sanitize.text(key, style="bold"), sanitize.text(desc)) for key, desc in bindings]
    )


def screen_key_table(rows: list[tuple[str, str, str]]) -> Group:
    """The other screens' keys: each screen's name on a line, then its keys, indented.

    `rows` are (screen, keys, what they do) as `keys.screen_rows` gives them; a
    screen's name is written once, above its first key (the README's backticks
    dropped: this is not Markdown). Every screen's key column is as wide as the
    widest of them all, so the screens' tables line up.
    """
    parts: list[Text | Table] = []
    by_screen: dict[str, list[tuple[Text, Text]]] = {}
    for screen, key, desc in rows:
        by_screen.setdefault(screen, []).append(
            (sanitize.text("  " + key, style="bold"), sanitize.text(desc))
        )
    widest = max((k.cell_len for keys in by_screen.values() for k, _ in keys), default=0)
    for screen, keys in by_screen.items():
        parts.append(sanitize.text(screen.replace("`", ""), style="italic", end="\n"))
        parts.append(_two_columns(keys, widest))
    return Group(*parts)


EXPOSURE_INTRO = (
    "Enter on a marker opens the full artifact under it; the bar beside each of its "
    "rows says whether the model saw those bytes (the same bars as in the orphans' "
    "and the pager's views):"
)


def exposure_table() -> Table:
    """The seen / never-seen bars and what they mean (the one glyph set)."""
    rows = [
        (Text(EXPOSURE_GLYPHS[key], style="bold"), Text(EXPOSURE_LABELS[key]))
        for key in (SEEN_KEY, UNSEEN_KEY)
    ]
    return _two_columns(rows)


def badge_table() -> Table:
    """Each badge name and its meaning, one per row."""
    rows = [(Text(s.value, style="bold"), Text(meaning)) for s, meaning in BADGE_MEANINGS.items()]
    return _two_columns(rows)


FINDINGS_INTRO = (
    "What a check found is shown under its marker or on its line, after a mark for "
    "how serious it is (the same words --check prints):"
)


def finding_table() -> Table:
    """Each severity's mark and what it means (the marks the finding rows wear)."""
    rows = [
        (Text(SEVERITY_MARKS[severity], style="bold"), Text(SEVERITY_LABELS[severity]))
        for severity in Severity
    ]
    return _two_columns(rows)


def _heading(title: str, id: str | None = None) -> Static:
    """A section title of the help (plain text, never markup)."""
    return Static(Text(title), id=id, classes="help-heading", markup=False)


class HelpScreen(ModalScreen[None]):
    """A modal list of key bindings and marker badge meanings; escape, ? or q closes.

    Args:
        bindings: (key, description) pairs, shown in the order given; by default
            every key of the transcript screen, from the key table.
        screens: (screen, key, description) rows for the screens a transcript
            opens; by default every one of the key table's (`keys.screen_rows`).
    """

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        #help-box {
            width: 110;
            max-width: 100%;
            height: auto;
            max-height: 100%;
            background: $panel;
            border: round $primary;
            border-title-align: center;
            padding: 0 1;
        }
        .help-heading { text-style: bold; color: $accent; }
        #help-badges-heading, #help-exposure-heading, #help-screens-heading,
        #help-findings-heading {
            margin-top: 1;
        }
        #help-keys, #help-screen-keys, #help-badges, #help-exposure { height: auto; }
        #help-findings { height: auto; }
        #help-badges { padding-left: 0; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings(Owner.HELP)

    def __init__(
        self,
        bindings: list[tuple[str, str]] | None = None,
        *,
        screens: list[tuple[str, str, str]] | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.key_rows = help_rows() if bindings is None else list(bindings)
        self.screen_key_rows = screen_rows() if screens is None else list(screens)

    def compose(self) -> ComposeResult:
        """Keys first (what people open help for), then the badges."""
        with VerticalScroll(id="help-box") as box:
            box.border_title = "Help"
            box.border_subtitle = "escape / ? / q to close"
            yield _heading("Keys")
            yield Static(key_table(self.key_rows), id="help-keys", markup=False)
            if self.screen_key_rows:
                yield _heading("On the screens it opens", "help-screens-heading")
                yield Static(
                    screen_key_table(self.screen_key_rows), id="help-screen-keys", markup=False
                )
            yield _heading("Marker badges", "help-badges-heading")
            yield Static(Text(INTRO), id="help-intro", markup=False)
            yield Static(badge_table(), id="help-badges", markup=False)
            yield _heading("Findings", "help-findings-heading")
            yield Static(Text(FINDINGS_INTRO), id="help-findings-intro", markup=False)
            yield Static(finding_table(), id="help-findings", markup=False)
            yield _heading("Opened artifacts", "help-exposure-heading")
            yield Static(Text(EXPOSURE_INTRO), id="help-exposure-intro", markup=False)
            yield Static(exposure_table(), id="help-exposure", markup=False)

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss()

"""Every key of the viewer, in one table (two: the transcript's, and its screens').

Keys used to be described in five places (two `BINDINGS` lists, the help
screen's list, the command palette and the README), and they drifted: the help
never mentioned j/k/g/G or space. Now `KEYS` is the only description and
everything else is generated from it:

- `bindings(owner)` is the `BINDINGS` of `TranscriptScreen`, `TranscriptView`
  and `TranscriptApp` (footer labels and visibility included), and, from
  `OTHER_KEYS`, of the screens a transcript opens (orphans, listing, a file,
  help) and their widgets;
- `help_rows()` and `screen_rows()` are the help screen's key lists (the
  transcript's, then the other screens');
- `palette_commands()` is what the command palette offers (`viewer.commands`);
- `readme_key_list()` is the README's key lists (both tables), between
  `README_START` and `README_END`; `python3 dev.py keys` rewrites it
  (`update_readme`).

`tests/contracts/test_keys.py` checks that they agree. This module imports
nothing of the viewer, so the render layer (the `TranscriptView` widget) may use
it without depending on any screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Final

from textual.binding import Binding, BindingType


class Owner(Enum):
    """Who binds a key: its action runs on that object.

    The table spans owners because a person pressing a key neither knows nor
    cares which widget handles it; the help lists them all in one place.
    """

    SCREEN = "screen"
    """`TranscriptScreen` (`viewer.main_screen`)."""
    VIEW = "view"
    """`TranscriptView` (`viewer.transcript_view`): moving the cursor, i.e. navigation."""
    APP = "app"
    """`TranscriptApp` (`viewer.app`): keys that work on every screen."""
    TEXTUAL = "textual"
    """Bound by Textual's `App` itself (the palette key): listed, never generated."""
    # The screens a transcript opens, and their widgets (`OTHER_KEYS`).
    ORPHANS = "orphans"
    """`OrphansScreen` (`viewer.screens.orphans`)."""
    ORPHAN_TABLE = "orphan table"
    """`RowTable`, the orphans screen's list (`viewer.screens.orphans`)."""
    LISTING = "listing"
    """`ListingScreen` (`viewer.screens.listing`)."""
    SESSIONS = "sessions"
    """`SessionsScreen`: an agent's sessions, newest first (`viewer.screens.sessions`)."""
    ARTIFACT = "artifact"
    """`ArtifactScreen`: one file, paged (`viewer.fileview`)."""
    FILE_VIEW = "file view"
    """`FileView`, the artifact screen's rows (`viewer.fileview`)."""
    HELP = "help"
    """`HelpScreen` (`viewer.screens.help`)."""
    CONTEXT = "context"
    """`ContextScreen`: the fill of every model call's window (`viewer.context_screen`)."""


@dataclass(frozen=True)
class Command:
    """A command palette entry: for people who do not remember the key."""

    title: str
    """What the palette lists and matches the query against."""
    help: str
    """The line under the title; the key is appended in parentheses."""


#: `Key.help` of a key described on the same help row as the key before it
#: (n / N, ↑ / ↓): pairs read better as one row than as two.
SAME_ROW: Final = None

#: How Textual's key names are shown to a person when a key has no `display`
#: (and "ctrl+x" is "^x", as less's own help and Textual's footer write it).
KEY_NAMES: Final[dict[str, str]] = {
    "up": "↑",
    "down": "↓",
    "pageup": "pgup",
    "pagedown": "pgdn",
    "slash": "/",
    "question_mark": "?",
}


@dataclass(frozen=True)
class Key:
    """One binding: the key(s), what runs, and every way it is described."""

    keys: str
    """The key(s) as Textual spells them, comma-separated ("down,j")."""
    action: str
    """The action, with its arguments ("cursor(1)"), run on `owner`."""
    owner: Owner
    """Which object binds it."""
    label: str
    """The footer label (`Binding.description`)."""
    help: str | None
    """The help row's text; `SAME_ROW`: described by the row of the key above."""
    display: str | None = None
    """What the footer shows instead of Textual's own spelling (`key_display`)."""
    show: bool = True
    """Whether the footer shows it."""
    priority: bool = False
    """Checked before the focused widget's bindings (`Binding.priority`)."""
    pinned: bool = False
    """First in the footer, whatever its place in the table.

    Textual's `Footer` lays its keys out left to right and clips what does not
    fit, so at 80 columns the last ones (help, quit) were cut off; a pinned key
    is bound first and so drawn first, and stays visible at any width. The help
    and README keep the table's order.
    """
    also: str | None = None
    """Something that is not a key but does the same ("click"), for help and README."""
    command: Command | None = None
    """The palette entry; a screen key without one says why in `no_command`."""
    no_command: str | None = None
    """Why a screen key has no palette entry (the contract test insists on a reason)."""

    @property
    def spelled(self) -> tuple[str, ...]:
        """Each key as a person reads it: `display`, else the key names, made readable."""
        if self.display is not None:
            return (self.display,)
        return tuple(_spell(k) for k in self.keys.split(","))

    @property
    def action_name(self) -> str:
        """The action without its arguments: `action_<name>` is the method it runs."""
        return self.action.split("(", 1)[0]


def _spell(key: str) -> str:
    """One Textual key name as a person reads it ("pageup" -> "pgup", "ctrl+f" -> "^f")."""
    if key in KEY_NAMES:
        return KEY_NAMES[key]
    return "^" + key.removeprefix("ctrl+") if key.startswith("ctrl+") else key


_S, _V = Owner.SCREEN, Owner.VIEW

#: The table. Order matters twice: it is the footer's order within an owner,
#: and the help's and README's order (a `SAME_ROW` key joins the row above).
KEYS: Final[tuple[Key, ...]] = (
    Key("n", "next_marker", _S, "Marker", display="n",
        help="next / previous marker (while a search is active: next / previous hit)",
        command=Command("Next marker", "Go to the next excerpt marker")),
    Key("N", "previous_marker", _S, "Prev", display="N", help=SAME_ROW,
        command=Command("Previous marker", "Go to the previous excerpt marker")),
    Key("p", "next_problem", _S, "Problem", display="p",
        help="next / previous problem (bad line, finding, marker that did not verify)",
        command=Command("Next problem",
                        "Go to the next bad line, finding or unverified marker")),
    Key("P", "previous_problem", _S, "Prev", display="P", help=SAME_ROW,
        command=Command("Previous problem", "Go to the previous problem")),
    Key("enter", "activate", _S, "Open", also="click",
        help="on a marker: open or close its artifact inline; on a line too long to "
             "lay out: page through it; on a folded row of records or a compaction's "
             "summary: show them (on one of them: fold them again); elsewhere: expand or "
             "collapse a message (expanded, it says which model calls had it in context "
             "and what it cost)",
        command=Command("Open / close artifact",
                        "Open the marker's artifact inline, or close it")),
    Key("o", "orphans", _S, "Orphans",
        help="orphaned artifacts (files no line names)",
        command=Command("Orphans", "Files in the artifact directory that no line names")),
    Key("w", "context_window", _S, "Context", show=False,
        help="the context window: how full it was at every model call, compactions and "
             "cut outputs marked; enter on a call shows its context",
        command=Command("Context window",
                        "How full the model's context was at every call, and what filled it")),
    Key("m", "toggle_view", _S, "Model",
        help="switch between the file view and the model view (what the model is sent next)",
        command=Command("Switch view",
                        "File view / model view: what the model is sent next")),
    Key("M", "call_context", _S, "Call", display="M", show=False,
        help="the model view at a call: on an assistant turn, what the model was sent for "
             "the call that produced it; elsewhere, for the next call after the line",
        command=Command("Context of this call",
                        "Model view: what the model was sent for the call at the cursor")),
    Key("left_square_bracket", "previous_call", _S, "Prev call", display="[", show=False,
        help="in the model view: the context of the previous / next call",
        command=Command("Previous call", "Model view: what the model was sent for the call "
                                         "before")),
    Key("right_square_bracket", "next_call", _S, "Next call", display="]", show=False,
        help=SAME_ROW,
        command=Command("Next call", "Model view: what the model was sent for the call after")),
    Key("a", "toggle_records", _S, "Records", show=False,
        help="an agent's session: fold the agent's own records (progress, hooks, "
             "snapshots, titles, telemetry: never sent to the model) or show every one; "
             "enter on a folded row shows its records",
        command=Command("Fold / show records",
                        "What the model saw (the agent's own records folded) / everything")),
    Key("slash", "search", _S, "Search", display="/",
        help="search the transcript; enter runs it, escape clears it; "
             "then n / N step through hits",
        command=Command("Search", "Search the transcript")),
    Key("e", "pager", _S, "Pager",
        help="open the artifact under the cursor in $PAGER (default: less)",
        command=Command("Open in pager", "Open the artifact under the cursor in $PAGER")),
    Key("c", "copy", _S, "Copy",
        help="copy the artifact's path (or, for an unstored result, the marker text)",
        command=Command("Copy path", "Copy the artifact's path or the marker text")),
    Key("f", "follow", _S, "Follow",
        help="follow a transcript that is still being written (toggle)",
        command=Command("Follow", "Follow a transcript that is still being written")),
    Key("escape", "clear_search", _S, "Clear search", show=False,
        help="close the search box, else end the search, else (opened from a directory "
             "listing) back to the listing",
        no_command="it undoes whatever is open, and in the palette escape closes the palette"),
    Key("up,k", "cursor(-1)", _V, "Up", show=False,
        help="move the cursor up / down a row; the mouse wheel scrolls"),
    Key("down,j", "cursor(1)", _V, "Down", show=False, help=SAME_ROW),
    Key("pageup,b,ctrl+b", "page(-1)", _V, "Page up", show=False, help="a screen up / down"),
    Key("pagedown,space,ctrl+f", "page(1)", _V, "Page down", show=False, help=SAME_ROW),
    Key("ctrl+u", "half_page(-1)", _V, "Half page up", show=False,
        help="half a screen up / down"),
    Key("ctrl+d", "half_page(1)", _V, "Half page down", show=False, help=SAME_ROW),
    Key("home,g", "top", _V, "Top", show=False, help="the first / last row"),
    Key("end,G", "bottom", _V, "Bottom", show=False, help=SAME_ROW),
    Key("ctrl+p", "command_palette", Owner.TEXTUAL, "Palette",
        help="command palette: run any of these by name"),
    Key("question_mark", "help", _S, "Help", display="?", pinned=True,
        help="this help",
        command=Command("Help", "Keys and badges")),
    Key("q", "quit", _S, "Quit", pinned=True,
        help="quit",
        no_command='Textual\'s palette already offers "Quit the application"'),
    Key("ctrl+c", "quit", Owner.APP, "Quit", show=False, priority=True, help=SAME_ROW),
)


#: The keys of the screens a transcript opens (orphans, listing, a file, help):
#: generated into their `BINDINGS` and the README's second table like `KEYS`.
OTHER_KEYS: Final[tuple[Key, ...]] = (
    Key("enter", "open", Owner.ORPHANS, "Open", help="preview the orphan under the cursor"),
    Key("e", "pager", Owner.ORPHANS, "Pager",
        help="open the orphan under the cursor in $PAGER (default: less)"),
    Key("c", "copy", Owner.ORPHANS, "Copy",
        help="copy the orphan's path (shown in the toast too, to select by hand)"),
    Key("question_mark", "help", Owner.ORPHANS, "Help", display="?",
        help="the keys of this screen"),
    Key("escape,q", "close", Owner.ORPHANS, "Back", help="back to the transcript"),
    Key("home", "scroll_top", Owner.ORPHAN_TABLE, "First", show=False,
        help="the first / last orphan"),
    Key("end", "scroll_bottom", Owner.ORPHAN_TABLE, "Last", show=False, help=SAME_ROW),
    Key("escape,q", "close", Owner.LISTING, "Back",
        help="back to the screen below, or quit when the listing is the first screen"),
    Key("enter", "choose", Owner.LISTING, "Open",
        help="open the transcript or folder under the cursor (`../` goes back up)"),
    Key("question_mark", "help", Owner.LISTING, "Help", display="?",
        help="the keys of this screen"),
    Key("escape,q", "close", Owner.SESSIONS, "Back",
        help="back to the screen below, or quit when the sessions are the first screen"),
    Key("enter", "choose", Owner.SESSIONS, "Open", help="open the session under the cursor"),
    Key("question_mark", "help", Owner.SESSIONS, "Help", display="?",
        help="the keys of this screen"),
    Key("up,k", "scroll_up", Owner.FILE_VIEW, "Up", show=False,
        help="scroll a row up / down / left / right"),
    Key("down,j", "scroll_down", Owner.FILE_VIEW, "Down", show=False, help=SAME_ROW),
    Key("left", "scroll_left", Owner.FILE_VIEW, "Left", show=False, help=SAME_ROW),
    Key("right", "scroll_right", Owner.FILE_VIEW, "Right", show=False, help=SAME_ROW),
    Key("pageup,b,ctrl+b", "page_up", Owner.FILE_VIEW, "Page up", show=False,
        help="a screen up / down"),
    Key("pagedown,space,ctrl+f", "page_down", Owner.FILE_VIEW, "Page down", show=False,
        help=SAME_ROW),
    Key("ctrl+u", "half_page(-1)", Owner.FILE_VIEW, "Half page up", show=False,
        help="half a screen up / down"),
    Key("ctrl+d", "half_page(1)", Owner.FILE_VIEW, "Half page down", show=False,
        help=SAME_ROW),
    Key("home,g", "scroll_home", Owner.FILE_VIEW, "Top", help="the first / last row"),
    Key("end,G", "scroll_end", Owner.FILE_VIEW, "End", help=SAME_ROW),
    Key("escape,q", "close", Owner.ARTIFACT, "Back", help="back to where it was opened"),
    Key("escape,question_mark,q", "close", Owner.HELP, "Close", help="close the help"),
    Key("left", "step(-1)", Owner.CONTEXT, "Previous", show=False,
        help="the call before / after (a column of calls, when they outnumber the columns)"),
    Key("right", "step(1)", Owner.CONTEXT, "Next", show=False, help=SAME_ROW),
    Key("home", "first", Owner.CONTEXT, "First", show=False, help="the first / last call"),
    Key("end", "last", Owner.CONTEXT, "Last", show=False, help=SAME_ROW),
    Key("enter", "open", Owner.CONTEXT, "Open",
        help="the model view at the selected call: what it was sent "
             "(a click on the chart selects one)"),
    Key("question_mark", "help", Owner.CONTEXT, "Help", display="?",
        help="the keys of this screen"),
    Key("escape,q", "close", Owner.CONTEXT, "Back", help="back to the transcript"),
)

#: Where each of `OTHER_KEYS`' owners is met, for the README.
SCREEN_NAMES: Final[dict[Owner, str]] = {
    Owner.ORPHANS: "orphans (`o`)",
    Owner.ORPHAN_TABLE: "orphans (`o`)",
    Owner.LISTING: "directory listing",
    Owner.SESSIONS: "agents' sessions (`--sessions`, `--claude`, `--codex`, `--gemini`, `--qwen`, "
    "`--opencode`, `--copilot`)",
    Owner.FILE_VIEW: "a file (an orphan, a long line)",
    Owner.ARTIFACT: "a file (an orphan, a long line)",
    Owner.HELP: "help (`?`)",
    Owner.CONTEXT: "context window (`w`)",
}


def bindings(owner: Owner) -> list[BindingType]:
    """The `BINDINGS` of `owner`: pinned keys first, then the rest in table order.

    Args:
        owner: the widget, screen or app whose class attribute this becomes.
    """
    own = [k for k in (*KEYS, *OTHER_KEYS) if k.owner is owner]
    # Pinned keys first: the footer draws in binding order and clips the rest.
    own.sort(key=lambda k: not k.pinned)
    return [
        Binding(k.keys, k.action, k.label, show=k.show, key_display=k.display,
                priority=k.priority)
        for k in own
    ]


def _rows(spell: str, keys: tuple[Key, ...] = KEYS) -> list[tuple[str, str]]:
    """(keys, help) per help row; `spell` formats one key name ("{}" or "`{}`")."""
    rows: list[tuple[list[str], str]] = []
    for k in keys:
        part = " ".join(spell.format(s) for s in k.spelled)
        if k.also is not None:
            part += f" / {k.also}"
        if k.help is SAME_ROW:
            if not rows:
                raise ValueError(f"{k.keys}: the first key cannot share a row")
            rows[-1][0].append(part)
        else:
            rows.append(([part], k.help))
    return [(" / ".join(parts), text) for parts, text in rows]


def help_rows() -> list[tuple[str, str]]:
    """The help screen's (keys, what they do) rows: every key of the transcript."""
    return _rows("{}")


def screen_rows(spell: str = "{}") -> list[tuple[str, str, str]]:
    """(screen, keys, what they do) for every key of `OTHER_KEYS`, screen by screen.

    The help lists these under the transcript's keys and the README has them as
    its second table: every key in the table is described somewhere a person looks.
    """
    out: list[tuple[str, str, str]] = []
    for owner in dict.fromkeys(k.owner for k in OTHER_KEYS):
        own = tuple(k for k in OTHER_KEYS if k.owner is owner)
        out += [(SCREEN_NAMES[owner], keys, text) for keys, text in _rows(spell, own)]
    return out


def palette_commands() -> list[tuple[str, str, str]]:
    """(title, help, screen action) for the palette; the help names the key."""
    return [
        (k.command.title, f"{k.command.help} ({' / '.join(k.spelled)})", k.action)
        for k in KEYS
        if k.command is not None
    ]


README_START: Final = (
    "<!-- keys:start: generated from viewer/keys.py by `python3 dev.py keys`; do not edit -->"
)
README_END: Final = "<!-- keys:end -->"


def readme_key_list() -> str:
    """The README's key list (what goes between the markers), as Markdown."""
    lines = [
        "Keys on a transcript (`?` shows the same list in the viewer):",
        "",
        "| key | what it does |",
        "|---|---|",
    ]
    lines += [f"| {keys} | {text} |" for keys, text in _rows("`{}`")]
    lines += ["", "On the screens it opens:", ""]
    lines += ["| screen | key | what it does |", "|---|---|---|"]
    lines += [f"| {screen} | {keys} | {text} |" for screen, keys, text in screen_rows("`{}`")]
    return "\n".join(lines)


def readme_block(text: str) -> str:
    """The key list currently between the markers of README text `text`.

    Raises:
        ValueError: the markers are missing or out of order.
    """
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README: no {README_START!r} ... {README_END!r} block")
    return text[start + len(README_START):end].strip("\n")


def with_readme_block(text: str) -> str:
    """README text `text` with the block between the markers regenerated."""
    readme_block(text)  # the markers are there
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    return f"{head}{README_START}\n{readme_key_list()}\n{README_END}{tail}"


def update_readme(path: Path) -> bool:
    """Rewrite the key list in the README at `path`; whether it changed."""
    old = path.read_text(encoding="utf-8")
    new = with_readme_block(old)
    if new != old:
        path.write_text(new, encoding="utf-8")
    return new != old

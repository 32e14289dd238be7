"""The key table (`viewer.keys`) is the only description of the keys; the rest agrees with it.

The bindings, the help screen, the command palette and the README's key list
are all generated from `KEYS`. These tests catch the ways they can still drift:
a binding written by hand, a key the help does not show, an action with no
palette command and no reason, a README edited instead of regenerated.
"""

from __future__ import annotations

import importlib
import io
import pkgutil
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console
from textual.app import App
from textual.binding import Binding, BindingType

from transcript_view import viewer
from transcript_view.viewer import main_screen
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.commands import COMMANDS
from transcript_view.viewer.context_screen import ContextScreen
from transcript_view.viewer.fileview import ArtifactScreen, FileView
from transcript_view.viewer.keys import (
    KEYS,
    OTHER_KEYS,
    README_END,
    README_START,
    Owner,
    help_rows,
    readme_block,
    readme_key_list,
    with_readme_block,
)
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.screens.help import HelpScreen, key_table
from transcript_view.viewer.screens.listing import ListingScreen
from transcript_view.viewer.screens.orphans import OrphansScreen, RowTable
from transcript_view.viewer.screens.sessions import SessionsScreen
from transcript_view.viewer.transcript_view import TranscriptView

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
REGENERATE = (
    "README.md's key list is not what viewer/keys.py generates: edit the table in "
    "viewer/keys.py, then run `python3 dev.py keys` to rewrite the README block"
)

#: The class whose `BINDINGS` each owner's keys become.
BOUND_BY: dict[Owner, type[object]] = {
    Owner.SCREEN: TranscriptScreen,
    Owner.VIEW: TranscriptView,
    Owner.APP: TranscriptApp,
    Owner.ORPHANS: OrphansScreen,
    Owner.ORPHAN_TABLE: RowTable,
    Owner.LISTING: ListingScreen,
    Owner.SESSIONS: SessionsScreen,
    Owner.ARTIFACT: ArtifactScreen,
    Owner.FILE_VIEW: FileView,
    Owner.HELP: HelpScreen,
    Owner.CONTEXT: ContextScreen,
}

#: `TranscriptScreen` actions that no key runs, and why they need neither a key nor a command.
UNBOUND_SCREEN_ACTIONS: dict[str, str] = {
    "poll": "the follow timer's tick (`f` starts and stops it)",
}

Flat = tuple[str, str, str, bool, str | None, bool]


def _flat(bindings: list[BindingType]) -> Counter[Flat]:
    """One entry per single key: "up,k" binds two keys with the same action."""
    out: Counter[Flat] = Counter()
    for b in bindings:
        assert isinstance(b, Binding), f"{b!r}: BINDINGS are generated as Binding objects"
        for key in b.key.split(","):
            out[(key.strip(), b.action, b.description, b.show, b.key_display, b.priority)] += 1
    return out


# -- (a) bindings ----------------------------------------------------------------------


@pytest.mark.parametrize("owner", list(BOUND_BY), ids=lambda o: o.value)
def test_bindings_are_exactly_the_table(owner: Owner) -> None:
    cls = BOUND_BY[owner]
    bound = _flat(list(getattr(cls, "BINDINGS", [])))
    table = _flat([
        Binding(k.keys, k.action, k.label, show=k.show, key_display=k.display,
                priority=k.priority)
        for k in (*KEYS, *OTHER_KEYS) if k.owner is owner
    ])
    assert bound == table, f"{cls.__name__}.BINDINGS must be keys.bindings({owner})"


def test_every_class_of_the_viewer_that_binds_keys_takes_them_from_the_table() -> None:
    """A new screen or widget with hand-written BINDINGS would drift from help and README."""
    bound = set(BOUND_BY.values())
    for info in pkgutil.walk_packages(viewer.__path__, viewer.__name__ + "."):
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if (isinstance(cls, type) and cls.__module__ == module.__name__
                    and "BINDINGS" in vars(cls)):  # fmt: skip
                assert cls in bound, f"{cls.__qualname__}: add its keys to viewer/keys.py"


def test_every_key_runs_an_existing_action() -> None:
    for k in (*KEYS, *OTHER_KEYS):
        cls = BOUND_BY.get(k.owner, App)
        assert callable(getattr(cls, f"action_{k.action_name}", None)), (k.keys, cls.__name__)


def test_textuals_own_keys_are_what_textual_binds() -> None:
    builtin = [k for k in KEYS if k.owner is Owner.TEXTUAL]
    assert [(k.keys, k.action) for k in builtin] == [
        (TranscriptApp.COMMAND_PALETTE_BINDING, "command_palette")
    ]
    assert TranscriptApp.ENABLE_COMMAND_PALETTE


def test_no_key_is_bound_twice() -> None:
    counts = Counter(key for k in KEYS for key in k.keys.split(","))
    assert [key for key, n in counts.items() if n > 1] == []


# -- (b) help --------------------------------------------------------------------------


def _rendered(rows: list[tuple[str, str]]) -> str:
    console = Console(file=io.StringIO(), width=200, record=True, color_system=None)
    console.print(key_table(rows))
    return console.export_text()


def test_help_shows_every_key() -> None:
    rows = HelpScreen().key_rows
    assert rows == help_rows() == main_screen.HELP_KEYS  # what `?` opens
    text = _rendered(rows)
    for left, what in rows:
        assert left in text and what.split()[0] in text
    for k in KEYS:
        spelled = " ".join(k.spelled)
        assert any(spelled in left.split(" / ") for left, _ in rows), f"{k.keys} not in help"


def test_help_lists_the_keys_people_move_with() -> None:
    keys = {key for left, _ in help_rows() for part in left.split(" / ") for key in part.split()}
    assert {"j", "k", "g", "G", "space", "↑", "↓", "pgup", "pgdn", "home", "end"} <= keys


# -- (c) palette -----------------------------------------------------------------------


def test_every_screen_action_that_is_not_navigation_has_a_command() -> None:
    for k in KEYS:
        if k.owner is Owner.SCREEN:
            assert (k.command is None) == bool(k.no_command), (
                f"{k.keys}: a screen key needs a palette command or a reason in no_command"
            )
        else:  # moving the cursor (the view), or app-wide keys: nothing to name
            assert k.command is None and k.no_command is None, k.keys
    commands = {action for _, _, action in COMMANDS}
    assert commands == {k.action for k in KEYS if k.owner is Owner.SCREEN and k.command}
    for title, help_text, action in COMMANDS:
        assert callable(getattr(TranscriptScreen, f"action_{action}", None)), title
        key = next(k for k in KEYS if k.owner is Owner.SCREEN and k.action == action)
        assert help_text.endswith(f"({' / '.join(key.spelled)})"), title


def test_every_screen_action_has_a_key_or_a_reason() -> None:
    defined = {
        name.removeprefix("action_")
        for name in vars(TranscriptScreen)
        if name.startswith("action_")
    }
    keyed = {k.action_name for k in KEYS if k.owner is Owner.SCREEN}
    assert defined - keyed == set(UNBOUND_SCREEN_ACTIONS)


# -- (d) README ------------------------------------------------------------------------


def test_readme_key_list_is_the_generated_one() -> None:
    text = README.read_text(encoding="utf-8")
    assert readme_block(text) == readme_key_list(), REGENERATE
    assert with_readme_block(text) == text, REGENERATE


def test_regenerating_replaces_only_the_block() -> None:
    stale = f"before\n{README_START}\nold keys\n{README_END}\nafter\n"
    fresh = with_readme_block(stale)
    assert fresh == f"before\n{README_START}\n{readme_key_list()}\n{README_END}\nafter\n"
    assert with_readme_block(fresh) == fresh
    with pytest.raises(ValueError):
        readme_block("no markers here")

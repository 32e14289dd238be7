"""The viewer's styles by meaning, and the one glyph set for "did the model see this?".

Rows are built in thread workers (layout, prefetch, search), which must not
touch the DOM, so they cannot ask a widget for its component styles. Instead
the widget that owns the rows (`TranscriptView`) resolves its component
classes on the UI thread into a `Palette` — a frozen set of `rich.style.Style`
by semantic name — and swaps it whole into the `BlockContext` the builders
read (`BlockContext.palette`, whose one writer is the view). A builder reads
one reference, never a half-updated palette, and a theme switch is one new
palette plus a rebuild of the cached rows.

`DEFAULT_PALETTE` is the plain-Rich palette used before a widget has styles
(headless tests, counting-only builds): it is the look the viewer had before
styles went through the theme, so nothing built without a widget changes.

The seen/unseen glyphs live here too because three places draw them (the
inline artifact rows, the artifact screen's gutter and its legend) and they
must mean the same everywhere: `EXPOSURE_GLYPHS` is the only definition.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Protocol

from rich.style import Style

from transcript_view.core.findings import Severity
from transcript_view.core.verification import BAD_STATES, MarkerState

# -- seen / unseen ----------------------------------------------------------------------------

SEEN_KEY = "seen"
UNSEEN_KEY = "unseen"

#: The bar left of artifact bytes: a solid bar where the model saw them (the
#: excerpt's head and tail), a dotted one where it never did (the elided middle).
#: Shapes differ, not just colours, so the difference survives a monochrome terminal.
EXPOSURE_GLYPHS: Mapping[str, str] = MappingProxyType({SEEN_KEY: "┃", UNSEEN_KEY: "┆"})

#: What each glyph means, as the legends say it.
EXPOSURE_LABELS: Mapping[str, str] = MappingProxyType(
    {SEEN_KEY: "seen by the model", UNSEEN_KEY: "never seen by the model"}
)


def exposure_glyph(seen: bool) -> str:
    """The bar for bytes the model saw (`seen`) or never saw."""
    return EXPOSURE_GLYPHS[SEEN_KEY if seen else UNSEEN_KEY]


# -- finding marks -----------------------------------------------------------------------------

#: The mark before a finding, by severity. Shapes differ, not just colours, so an
#: error, a warning and a note still read apart on a monochrome terminal; a note
#: (`chars-differ`) is information, never a problem, and wore a warning's ⚠.
#: The help's legend and the finding rows both read this table.
SEVERITY_MARKS: Mapping[Severity, str] = MappingProxyType(
    {Severity.ERROR: "✗", Severity.WARNING: "⚠", Severity.NOTE: "ℹ"}
)

#: What each mark means, as the help's legend says it.
SEVERITY_LABELS: Mapping[Severity, str] = MappingProxyType(
    {
        Severity.ERROR: "error: --check exits 1; p / P visit it",
        Severity.WARNING: "warning: --check --strict exits 1; p / P visit it (orphans: o)",
        Severity.NOTE: "note: worth knowing, never a problem (p skips it)",
    }
)


def severity_mark(severity: Severity) -> str:
    """The mark a finding of this severity wears."""
    return SEVERITY_MARKS[severity]


# -- the palette --------------------------------------------------------------------------------

#: Component classes of `TranscriptView` are this prefix plus a palette field name
#: with "_" as "-": `role_user` is `transcript-view--role-user`.
COMPONENT_PREFIX = "transcript-view--"


@dataclass(frozen=True, slots=True)
class Palette:
    """Every style a transcript row uses, by what it means rather than how it looks.

    Frozen so a worker holding one can never see it change under it; a new
    theme makes a new palette. Field names map one to one onto
    `TranscriptView`'s component classes (`component_class`), so a palette
    is made with `from_styles`, never field by field.
    """

    role_system: Style
    role_user: Style
    role_assistant: Style
    role_tool: Style
    role_other: Style
    badge_verified: Style
    badge_not_stored: Style
    badge_could_not_be_stored: Style
    badge_checking: Style
    badge_bad: Style
    badge_big_line: Style
    """The size badge of a line too long to lay out."""
    marker: Style
    quoted: Style
    """Marker text inside a user or assistant message: shown, never verified."""
    quoted_label: Style
    seen: Style
    unseen: Style
    seen_bar: Style
    unseen_bar: Style
    dim: Style
    strong: Style
    heading: Style
    """The kind of a non-message envelope: session, compaction, elision..."""
    tag: Style
    """A message's tags: system prompt, sticky, depth."""
    tag_error: Style
    envelope: Style
    """`dispatch` and `settle`."""
    tool_name: Style
    error: Style
    bad: Style
    """Failed outcomes and error text: red, not bold."""
    ok: Style
    warning: Style
    notice: Style

    def role(self, role: str) -> Style:
        """The label style of a message role (an unknown role is just bold)."""
        return {
            "system": self.role_system,
            "user": self.role_user,
            "assistant": self.role_assistant,
            "tool": self.role_tool,
        }.get(role, self.role_other)

    def badge(self, state: MarkerState) -> Style:
        """The badge style of a marker's verification state (every bad state is one red)."""
        if state in BAD_STATES:
            return self.badge_bad
        return {
            MarkerState.VERIFIED: self.badge_verified,
            # No digest to prove it, but nothing wrong found: the good colour, another icon.
            MarkerState.MATCHES: self.badge_verified,
            MarkerState.PRESENT: self.badge_verified,
            MarkerState.EXCERPT_MATCHES: self.badge_verified,
            # Gone as the agent allows: the rest is lost as with a cut that stored nothing.
            MarkerState.EXPIRED: self.badge_not_stored,
            MarkerState.NOT_STORED: self.badge_not_stored,
            MarkerState.COULD_NOT_BE_STORED: self.badge_could_not_be_stored,
        }.get(state, self.badge_checking)

    def exposure(self, seen: bool) -> tuple[Style, Style]:
        """(bar style, text style) for bytes the model saw or never saw."""
        return (self.seen_bar, self.seen) if seen else (self.unseen_bar, self.unseen)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every field name, in declaration order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_styles(cls, style_of: Callable[[str], Style]) -> Palette:
        """A palette whose every field is `style_of(field name)`."""
        return cls(**{name: style_of(name) for name in cls.names()})


def component_class(name: str) -> str:
    """The `TranscriptView` component class of palette field `name`."""
    return COMPONENT_PREFIX + name.replace("_", "-")


#: The plain Rich styles of `DEFAULT_PALETTE`: the look before styles followed the theme.
_PLAIN_STYLES: dict[str, str] = {
    "role_system": "bold magenta",
    "role_user": "bold cyan",
    "role_assistant": "bold green",
    "role_tool": "bold yellow",
    "role_other": "bold",
    "badge_verified": "bold white on dark_green",
    "badge_not_stored": "bold black on yellow3",
    "badge_could_not_be_stored": "bold black on dark_orange",
    "badge_checking": "bold white on grey35",
    "badge_bad": "bold white on red3",
    "badge_big_line": "bold black on yellow3",
    "marker": "bold #ffd75f on #3a3000",
    "quoted": "italic grey62",
    "quoted_label": "italic grey70",
    "seen": "",
    "unseen": "#8a8a8a on #1c1c2c",
    "seen_bar": "green",
    "unseen_bar": "yellow",
    "dim": "grey50",
    "strong": "bold",
    "heading": "bold reverse",
    "tag": "bold black on magenta",
    "tag_error": "on red3",
    "envelope": "bold blue",
    "tool_name": "bold yellow",
    "error": "bold red",
    "bad": "red",
    "ok": "green",
    "warning": "bold yellow",
    "notice": "yellow",
}

#: Every component class a `TranscriptView` must declare for `Palette.from_styles`.
PALETTE_CLASSES: frozenset[str] = frozenset(component_class(n) for n in Palette.names())

DEFAULT_PALETTE = Palette.from_styles(lambda name: Style.parse(_PLAIN_STYLES[name]))
"""For headless use and before a widget has resolved its styles."""


# -- resolving component styles --------------------------------------------------------------


class _HasComponentStyles(Protocol):
    def get_component_rich_style(
        self, *names: str, partial: bool = False, default: Style | None = None
    ) -> Style: ...


def component_style(widget: _HasComponentStyles, name: str) -> Style:
    """A component class as a Rich style to draw row text with.

    The full style has translucent colours (`$foreground 40%`, `auto 87%`)
    blended correctly, but it also carries the widget's own background, which
    would paint over the cursor and search highlights drawn under the text;
    the partial style keeps only what the rule sets but leaves alpha unblended.
    So: colours from the full style, and a background only when the rule
    sets one.
    """
    full = widget.get_component_rich_style(name)
    partial = widget.get_component_rich_style(name, partial=True)
    colours = Style.from_color(full.color, full.bgcolor if partial.bgcolor is not None else None)
    return colours + partial.without_color

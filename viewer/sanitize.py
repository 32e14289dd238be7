"""Make hostile transcript text safe to put on a terminal, as Rich `Text`.

Everything the viewer shows comes from files an agent's tools wrote: shell
output, web pages, other programs' logs. Such text can carry terminal escape
sequences (an OSC 52 clipboard write, a title change, a hyperlink), bare
carriage returns and backspaces that overwrite what was already drawn, bidi
overrides that reorder a line so it reads differently from its bytes, and
zero-width characters that hide inside names. Rich and Textual also read
`[bold]`-style markup out of plain strings if given the chance.

`visible` (from `core.text`, where it lives because it needs no UI; its
docstring lists what each character becomes) turns every such character into
a glyph a person can see. This module adds what does need Rich: `text` wraps
the result in a `rich.text.Text` without ever parsing markup, and `SgrState`
reads the one kind of escape sequence the viewer honours, SGR (colours and
styles), into a `rich.style.Style`.

Colour survives, control does not. A test runner, a compiler or `ls` colours
its output with SGR sequences (`ESC [ 1;46 m`); shown as glyphs they are noise
("␛[1m␛[46m RUN ␛[49m␛[22m"), so in a tool's output the viewer draws them as
the colours and styles they ask for (`core.text.split_sgr` takes them out of
the text, `viewer.rows.wrap_sgr` lays the rest out). Nothing is sent to the
terminal as the file wrote it: a parameter is read into a `Style`, which
Textual renders as sequences of its own making. Every other sequence (a
cursor move, a screen clear, OSC titles, hyperlinks and clipboard writes,
DCS) stays visible glyphs. Styles that would hide text do not apply:
conceal (SGR 8) and blink (5, 6) are dropped, and a foreground and a
background too close to tell apart are both dropped, so the text takes the
viewer's own colours (`SgrState.style`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from rich.color import Color
from rich.style import Style
from rich.terminal_theme import DEFAULT_TERMINAL_THEME
from rich.text import Text

from transcript_view.core.text import visible

__all__ = ["SgrState", "text"]


def text(
    s: str,
    style: str | Style = "",
    *,
    no_wrap: bool | None = None,
    overflow: str | None = None,
    end: str = "",
) -> Text:
    """A `rich.text.Text` of `visible(s)`, built without parsing markup.

    Use this for anything that came from a file (names, contents, messages
    quoting them) before handing it to a widget: `Static("[b]...")`,
    `DataTable.add_row("...")` and friends parse plain strings as markup, so
    a file called `[link=http://x]` would otherwise become a link.

    Args:
        s: Untrusted text.
        style: A Rich style applied to the whole text.
        no_wrap: Passed to `Text` (None means the console default).
        overflow: Passed to `Text` ("fold", "crop", "ellipsis", "ignore").
        end: Passed to `Text`; empty so a cell or line gets no trailing LF.

    Returns:
        A Text whose plain content is exactly `visible(s)`.
    """
    return Text(visible(s), style=style, no_wrap=no_wrap, overflow=overflow, end=end)  # type: ignore[arg-type]


#: Foreground and background closer than this on every RGB channel (in Rich's
#: default terminal theme) cannot be told apart: both are dropped.
TOO_CLOSE = 32

#: SGR codes that switch one attribute on (True) or off (False): (attribute, value).
_FLAGS: dict[int, tuple[tuple[str, bool], ...]] = {
    1: (("bold", True),),
    2: (("dim", True),),
    3: (("italic", True),),
    4: (("underline", True),),
    7: (("reverse", True),),
    9: (("strike", True),),
    21: (("underline", True),),  # doubly underlined: underlined
    22: (("bold", False), ("dim", False)),
    23: (("italic", False),),
    24: (("underline", False),),
    27: (("reverse", False),),
    29: (("strike", False),),
    53: (("overline", True),),
    55: (("overline", False),),
}


def _number(param: str) -> int:
    """A parameter's value: an empty one is 0 (`core.text.split_sgr` lets only digits in)."""
    return int(param) if param else 0


#: A colour as an SGR sequence names it: a palette index (0–255) or an RGB triple.
SgrColour = int | tuple[int, int, int]


def _extended(args: list[str]) -> tuple[SgrColour | None, int]:
    """The colour of a 38/48 (or 58) sequence's arguments, and how many it used.

    `5;n` is a 256-colour palette index, `2;r;g;b` a true colour (with
    sub-parameters `2:cs:r:g:b` may carry a colour space first, skipped);
    anything else, or too few arguments, is no colour.
    """
    if not args:
        return None, 0
    kind = _number(args[0])
    if kind == 5 and len(args) >= 2:
        return min(_number(args[1]), 255), 2
    if kind == 2 and len(args) >= 4:
        r, g, b = (min(_number(v), 255) for v in (args[2:5] if len(args) >= 5 else args[1:4]))
        return (r, g, b), 4
    return None, 1


@dataclass(frozen=True, slots=True)
class SgrState:
    """The colours and styles a program's SGR sequences have set so far, from none.

    `apply` reads one sequence's parameters as xterm does; `style` is what the
    viewer draws for the state. Unset (None, False) means the viewer's own:
    a reset (SGR 0, 39, 49) returns the text to the colours it is drawn in
    (a palette entry), not to the terminal's defaults.
    """

    fg: SgrColour | None = None
    """A palette index (0–7 the standard colours, 8–15 the bright ones) or RGB."""
    bg: SgrColour | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    strike: bool = False
    reverse: bool = False
    overline: bool = False

    def apply(self, params: str) -> SgrState:
        """The state after one SGR sequence with these parameters (`"1;46"`, `""`).

        Read: 0 (reset), the attributes of `_FLAGS`, 30–37, 90–97 and 38
        (palette index or true colour) for the foreground, 40–47, 100–107 and
        48 for the background, 39 and 49 (back to unset). Ignored: blink (5,
        6) and conceal (8), which would hide or flash the text, fonts, frames
        and any code no terminal agrees on. `params` is at most
        `core.text.SGR_PARAMS_MAX` characters of digits, `;` and `:`.
        """
        return _apply(self, params)

    def style(self) -> Style | None:
        """What the state draws as, or None when it draws as the text around it.

        A foreground and a background too close to read apart (`TOO_CLOSE`;
        black on black) are both dropped: the text keeps the viewer's colours.
        """
        return _style(self)


@functools.lru_cache(maxsize=1024)
def _apply(state: SgrState, params: str) -> SgrState:
    changes: dict[str, object] = {}
    groups = params.split(";")
    i = 0
    while i < len(groups):
        group = groups[i]
        i += 1
        sub = group.split(":") if ":" in group else None
        code = _number(sub[0] if sub is not None else group)
        if code in (38, 48, 58):
            if sub is not None:
                colour, _ = _extended(sub[1:])
            else:
                colour, used = _extended(groups[i : i + 4])
                i += used
            if code != 58:  # 58: the underline's colour, not drawn
                changes["fg" if code == 38 else "bg"] = colour
        elif code == 0:
            state, changes = SgrState(), {}
        elif code in _FLAGS:
            if code == 4 and sub is not None and len(sub) > 1 and _number(sub[1]) == 0:
                changes["underline"] = False  # 4:0, no underline
            else:
                changes.update(_FLAGS[code])
        elif 30 <= code <= 37 or 90 <= code <= 97:
            changes["fg"] = code - 30 if code < 90 else code - 82
        elif 40 <= code <= 47 or 100 <= code <= 107:
            changes["bg"] = code - 40 if code < 100 else code - 92
        elif code == 39:
            changes["fg"] = None
        elif code == 49:
            changes["bg"] = None
    return replace(state, **changes) if changes else state  # type: ignore[arg-type]


def _color(colour: SgrColour | None) -> Color | None:
    """Rich's colour for an SGR one: 0–15 the terminal's own palette, as Rich names them."""
    if colour is None:
        return None
    return Color.from_ansi(colour) if isinstance(colour, int) else Color.from_rgb(*colour)


def _too_close(a: Color, b: Color) -> bool:
    ra, rb = a.get_truecolor(DEFAULT_TERMINAL_THEME), b.get_truecolor(DEFAULT_TERMINAL_THEME)
    return all(abs(x - y) < TOO_CLOSE for x, y in zip(ra, rb, strict=True))


@functools.lru_cache(maxsize=1024)
def _style(state: SgrState) -> Style | None:
    fg, bg = _color(state.fg), _color(state.bg)
    if fg is not None and bg is not None and _too_close(fg, bg):
        fg = bg = None
    on = (state.bold, state.dim, state.italic, state.underline, state.strike, state.reverse)
    if fg is None and bg is None and not any(on) and not state.overline:
        return None
    return Style(
        color=fg,
        bgcolor=bg,
        bold=state.bold or None,
        dim=state.dim or None,
        italic=state.italic or None,
        underline=state.underline or None,
        strike=state.strike or None,
        reverse=state.reverse or None,
        overline=state.overline or None,
    )

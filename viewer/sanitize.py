"""Make hostile transcript text safe to put on a terminal.

Everything the viewer shows comes from files an agent's tools wrote: shell
output, web pages, other programs' logs. Such text can carry terminal escape
sequences (an OSC 52 clipboard write, a title change, a hyperlink), bare
carriage returns and backspaces that overwrite what was already drawn, bidi
overrides that reorder a line so it reads differently from its bytes, and
zero-width characters that hide inside names. Rich and Textual also read
`[bold]`-style markup out of plain strings if given the chance.

`visible` turns every such character into a glyph a person can see, so the
screen shows exactly what the bytes say and nothing can act on the terminal.
`text` wraps the result in a `rich.text.Text` without ever parsing markup.

What each class of character becomes (the forms are stable; tests pin them):

- C0 controls U+0000–U+001F (except TAB) -> their Unicode Control Pictures
  glyph, U+2400 + code: NUL "␀", BEL "␇", BS "␈", LF "␊", CR "␍", ESC "␛".
  LF is normally removed by callers that split lines; if one reaches
  `visible` it is shown, never obeyed, so the output is always one line.
- DEL U+007F -> "␡".
- TAB -> spaces up to the next multiple of `tab_size` (8) columns, counted in
  code points from the start of the string. A terminal would do the same; a
  visible tab glyph would make ordinary source code and TSV unreadable.
- Every other character that must not reach a terminal raw is shown as its
  code point in upper-case hex between angle brackets, at least two digits:
  C1 controls U+0080–U+009F ("\\x9b" -> "⟨9B⟩"), bidi embeddings, overrides,
  isolates and marks (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C ->
  "⟨202E⟩" ...), invisible characters (U+200B, U+2060–U+2064, U+FEFF,
  U+180E, U+206A–U+206F, U+FFF9–U+FFFB), line/paragraph separators U+2028,
  U+2029, and lone surrogates U+D800–U+DFFF ("⟨D800⟩"). A byte that
  `surrogateescape` decoding kept is a surrogate U+DC80–U+DCFF, so the raw
  byte 0x9B shows as "⟨DC9B⟩": its last two digits are the byte, and it can
  never be confused with the C1 character U+009B ("⟨9B⟩").
- U+200D ZERO WIDTH JOINER and U+200C ZWNJ are kept: emoji sequences and
  several scripts need them, and neither can reorder or hide text.
- The angle brackets are U+27E8/U+27E9, which markup never uses, so a shown
  escape can't be mistaken for text typed in the source as "<9B>".

Speed: `visible` runs on every rendered line, so the common case (nothing to
replace) is one precompiled regex `search` over the string; only lines that
need it pay for `str.translate` with a precomputed table.
"""

from __future__ import annotations

import re

from rich.text import Text

#: Columns between tab stops when a TAB is expanded.
TAB_SIZE = 8

#: Characters outside the C0/C1/DEL ranges that are shown as ⟨hex⟩.
_FORMAT_CHARS: tuple[int, ...] = (
    0x061C,  # ARABIC LETTER MARK
    0x180E,  # MONGOLIAN VOWEL SEPARATOR (was zero-width)
    0x200B,  # ZERO WIDTH SPACE
    0x200E,  # LEFT-TO-RIGHT MARK
    0x200F,  # RIGHT-TO-LEFT MARK
    *range(0x202A, 0x202F),  # LRE RLE PDF LRO RLO
    0x2028,  # LINE SEPARATOR
    0x2029,  # PARAGRAPH SEPARATOR
    *range(0x2060, 0x2065),  # WORD JOINER, invisible operators
    *range(0x2066, 0x206A),  # LRI RLI FSI PDI
    *range(0x206A, 0x2070),  # deprecated format characters
    0xFEFF,  # ZERO WIDTH NO-BREAK SPACE / BOM
    *range(0xFFF9, 0xFFFC),  # interlinear annotation controls
)


def _hex_form(code: int) -> str:
    return f"⟨{code:02X}⟩"


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x20):
        if code != 0x09:
            table[code] = chr(0x2400 + code)
    table[0x7F] = "␡"
    for code in range(0x80, 0xA0):
        table[code] = _hex_form(code)
    for code in _FORMAT_CHARS:
        table[code] = _hex_form(code)
    for code in range(0xD800, 0xE000):
        table[code] = _hex_form(code)
    return table


_TABLE: dict[int, str] = _build_table()

# One character class matching every key of _TABLE plus TAB: the fast "is
# there anything to do?" test. Built from the table so the two cannot drift.
_NEEDS_WORK = re.compile(
    "["
    + "".join(re.escape(chr(c)) if c < 0xD800 or c > 0xDFFF else "" for c in sorted(_TABLE))
    + "\t"
    + "\ud800-\udfff"
    + "]"
)


def visible(text: str, *, tab_size: int = TAB_SIZE) -> str:
    """Return `text` with every control, bidi and invisible character made visible.

    The result is inert on a terminal (no escape sequence survives: ESC is
    "␛"), single-line (LF and CR are glyphs), free of bidi reordering, and
    never treated as markup by anything that respects `rich.text.Text`.
    See the module docstring for the exact form of each replacement.

    Args:
        text: Any string, including lone surrogates from `surrogateescape`.
        tab_size: Columns between tab stops used to expand TAB.

    Returns:
        The string to display; `text` itself when nothing needed changing.
    """
    if _NEEDS_WORK.search(text) is None:
        return text
    out = text.translate(_TABLE)
    if "\t" in out:
        out = out.expandtabs(tab_size)
    return out


def text(
    s: str,
    style: str = "",
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

"""Pure text helpers: making hostile text visible, and the small words and numbers on screen.

They live in the headless library, not in the viewer, because none of them
needs a UI: `--check`, the benchmarks and the tests use the same forms the
screen shows, and keeping one home means "1 marker" and "⟨202E⟩" can only be
spelt one way. Nothing here imports Rich or Textual (a contract test holds
every `core` module to that); the Rich `Text` wrapper stays in
`viewer.sanitize`.

What `visible` makes of each class of character (the forms are stable; tests pin them):

- C0 controls U+0000–U+001F (except TAB) -> their Unicode Control Pictures
  glyph, U+2400 + code: NUL "␀", BEL "␇", BS "␈", LF "␊", CR "␍", ESC "␛".
  LF is normally removed by callers that split lines; if one reaches
  `visible` it is shown, never obeyed, so the output is always one line.
- DEL U+007F -> "␡".
- TAB -> spaces up to the next multiple of `TAB_SIZE` (8) columns, counted in
  code points from the start of the string. A terminal would do the same; a
  visible tab glyph would make ordinary source code and TSV unreadable.
- Every other character that must not reach a terminal raw is shown as its
  code point in upper-case hex between angle brackets, always four digits,
  zero-padded, so every escape is one width and they line up in a column:
  C1 controls U+0080–U+009F ("\\x9b" -> "⟨009B⟩"), bidi embeddings,
  overrides, isolates and marks (U+202A–U+202E, U+2066–U+2069, U+200E,
  U+200F, U+061C -> "⟨061C⟩" ...), invisible characters (U+200B,
  U+2060–U+2064, U+FEFF, U+180E, U+206A–U+206F, U+FFF9–U+FFFB),
  line/paragraph separators U+2028, U+2029, and lone surrogates
  U+D800–U+DFFF ("⟨D800⟩"). A byte that `surrogateescape` decoding kept is a
  surrogate U+DC80–U+DCFF, so the raw byte 0x9B shows as "⟨DC9B⟩": its last
  two digits are the byte, and it can never be confused with the C1
  character U+009B ("⟨009B⟩").
- U+200D ZERO WIDTH JOINER and U+200C ZWNJ are kept: emoji sequences and
  several scripts need them, and neither can reorder or hide text.
- The angle brackets are U+27E8/U+27E9, which markup never uses, so a shown
  escape can't be mistaken for text typed in the source as "<9B>".

Speed: `visible` runs on every rendered line, so the common case (nothing to
replace) is one precompiled regex `search` over the string; only lines that
need it pay for `str.translate` with a precomputed table.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

#: Columns between tab stops when a TAB is expanded.
TAB_SIZE = 8

#: Hex digits of every ⟨hex⟩ escape: the widest code point escaped is U+FFFB.
HEX_DIGITS = 4

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


def hex_form(code: int) -> str:
    """The escape shown for code point `code`: `⟨061C⟩`, always `HEX_DIGITS` wide.

    One width for every escape, so a reader never has to wonder whether
    `⟨61C⟩` and `⟨200F⟩` are the same kind of thing.
    """
    return f"⟨{code:0{HEX_DIGITS}X}⟩"


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x20):
        if code != 0x09:
            table[code] = chr(0x2400 + code)
    table[0x7F] = "␡"
    for code in range(0x80, 0xA0):
        table[code] = hex_form(code)
    for code in _FORMAT_CHARS:
        table[code] = hex_form(code)
    for code in range(0xD800, 0xE000):
        table[code] = hex_form(code)
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


def visible_parts(parts: list[str], *, tab_size: int = TAB_SIZE) -> list[str]:
    """`visible` of the parts' concatenation, cut where the parts were cut.

    Each part is made visible as `visible` makes the whole, a TAB included:
    it is expanded to the tab stop of its column in the whole (counted in the
    shown characters before it, as `visible` counts them). So
    `"".join(visible_parts(parts)) == visible("".join(parts))`, and the parts'
    own styles (a colour run) stay on the characters they cover.
    """
    out: list[str] = []
    column = 0
    for part in parts:
        shown = part
        if _NEEDS_WORK.search(part) is not None:
            shown = part.translate(_TABLE)
            if "\t" in shown:
                lead = column % tab_size
                shown = (" " * lead + shown).expandtabs(tab_size)[lead:]
        out.append(shown)
        column += len(shown)
    return out


# -- SGR: the colour and style sequences a program writes for a terminal ---------------------

#: The longest parameter string read as SGR (`ESC [ params m`). The longest real
#: one (`0;1;3;4;38;2;255;255;255;48;2;255;255;255`) is 42 characters; a longer
#: one is no colour a program meant, so it is left as text: shown as glyphs
#: ("␛[1;1;…m"), like every other escape sequence, never read.
SGR_PARAMS_MAX = 128

#: An SGR sequence as a terminal reads it from a program: ESC, `[`, only digits,
#: `;` and `:` (ITU T.416 sub-parameters), then `m`. No private or intermediate
#: bytes; the 8-bit CSI (U+009B) is not one (a UTF-8 terminal does not take it
#: for CSI, and `visible` shows it as "⟨009B⟩").
_SGR = re.compile(rf"\x1b\[([0-9;:]{{0,{SGR_PARAMS_MAX}}})m")


def strip_sgr(text: str) -> str:
    """`text` without its SGR sequences (see `split_sgr`): what is drawn of it, as text.

    Every other character, every other escape sequence included, is kept, to
    be made visible (`visible`). Text with no ESC is returned as it is, after
    one scan for ESC (`"\\x1b" in text`, in C).
    """
    if "\x1b" not in text:
        return text
    return _SGR.sub("", text)


def split_sgr(text: str) -> tuple[str, list[tuple[int, str]]]:
    """`text` split into its plain text and its SGR sequences, for drawing program output.

    Returns `(plain, switches)`: `plain` is `strip_sgr(text)`, and `switches`
    is each SGR sequence in order as (offset in `plain` where it takes effect,
    its parameter string: `"1;46"`, `""` for a bare reset). What the
    parameters mean (colours, bold...) is the viewer's to decide
    (`viewer.sanitize.SgrState`); nothing else is read: any other CSI (`ESC [ 2 J`),
    OSC (a title, a hyperlink, a clipboard write), DCS, a lone ESC, a C1
    control or an SGR longer than `SGR_PARAMS_MAX` stays in `plain`, where
    `visible` shows it as glyphs.
    """
    if "\x1b" not in text:
        return text, []
    parts = _SGR.split(text)  # text, params, text, params, ..., text
    if len(parts) == 1:
        return text, []
    pieces = parts[::2]
    switches: list[tuple[int, str]] = []
    length = 0
    for i, params in enumerate(parts[1::2]):
        length += len(pieces[i])
        switches.append((length, params))
    return "".join(pieces), switches


#: The longest run of digits `int()` reads (Python's guard against quadratic parsing).
MAX_COUNT_DIGITS = 4300


def count_of(digits: str) -> int | None:
    """The count a marker writes as ASCII digits (commas allowed), or None if too long to read.

    A hostile line can write a count of thousands of digits; `int()` refuses
    those (after 4,300 digits, a guard against quadratic time) by raising,
    which crashed a pass. The marker is still a marker; only its amount
    cannot be said.
    """
    plain = digits.replace(",", "").lstrip("0") or "0"
    return int(plain) if len(plain) <= MAX_COUNT_DIGITS else None


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 line`, `2 lines`, `0 lines`: a count and its noun, agreeing.

    Every count a person reads goes through here, so none is ever "1 markers"
    and thousands are always grouped the same way.

    Args:
        n: The count.
        word: The singular noun.
        many: The plural, for words that do not just take an s ("directories").
    """
    if n == 1:
        return f"{n:,} {word}"
    return f"{n:,} {many if many is not None else word + 's'}"


def clip_middle(text: str, limit: int = 240) -> str:
    """`text` made visible and cut to `limit` characters by dropping its middle.

    For text shown so a person can select it by hand (what `c` copied, where a
    terminal drops the clipboard escape): the start and the end of a path or a
    marker say the most (the directory, the file name, the digest's tail), so
    both are kept and one "…" stands for what was left out.

    Args:
        text: Any string; controls are shown as glyphs first (`visible`).
        limit: The most characters returned (at least 3).
    """
    shown = visible(text)
    limit = max(limit, 3)
    if len(shown) <= limit:
        return shown
    head = (limit - 1) // 2
    tail = limit - 1 - head
    return shown[:head] + "…" + shown[len(shown) - tail :]


#: What a copy toast says under the copied text. The app copies by sending the
#: terminal an OSC 52 escape, which some terminals drop (tmux by default) without
#: a word back, so the text is shown where it can be selected by hand.
COPY_HINT = "Nothing to paste? The terminal dropped it (tmux does by default): select it here."


#: Seconds a copy toast stays: long enough to select its text by hand.
COPY_TOAST_SECONDS = 12.0


def copied(text: str, limit: int = 240) -> str:
    """The body of a "Copied" toast: the text itself (`clip_middle`), then `COPY_HINT`."""
    return f"{clip_middle(text, limit)}\n{COPY_HINT}"


def human_size(n: int) -> str:
    """A byte count for people: `512 B`, `1.5 KiB`, `200.0 MiB`.

    Binary units, one decimal: exact byte counts are shown beside it where
    they matter (a marker's size is checked to the byte).
    """
    if n < 1024:
        return f"{n:,} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:,.1f} {unit}"
    return f"{n:,} B"  # pragma: no cover


def short_id(value: str | None, keep: int = 8) -> str:
    """An id cut to its first characters: enough to tell ids apart on screen.

    An id one character longer than `keep` is kept whole: an ellipsis in its
    place would hide as much as it saves. A missing id is "?".
    """
    if not value:
        return "?"
    return value if len(value) <= keep + 1 else value[:keep] + "…"


#: What `compact_json` says of a value nested too deeply to encode from where it is asked.
NESTED_TOO_DEEP = "(a value nested too deeply to show)"


def compact_json(value: Any) -> str:
    """One-line JSON of a payload value, for the compact rows of minor envelope types.

    Keys are sorted so the same payload always reads the same; a value JSON
    cannot encode falls back to its `repr` rather than failing a row. A value
    nested nearly as deep as the parser takes (it parses on a thread of its
    own: `core.transcript`) may be too deep to encode in a caller's stack: it
    is encoded on a thread of its own too (`NESTED_TOO_DEEP` if even that
    fails), never an error.
    """
    try:
        return _compact(value)
    except RecursionError:
        return _compact_apart(value)
    except (TypeError, ValueError):
        return repr(value)


def _compact_apart(value: Any) -> str:
    """`compact_json` on a thread of its own, whose stack is always the same (as a deep line
    is parsed: `core.transcript._loads`), so the answer does not depend on the caller's
    stack: a row count in a worker process and the row drawn agree."""
    outcome: list[str] = []

    def encode() -> None:
        try:
            outcome.append(_compact(value))
        except RecursionError:
            outcome.append(NESTED_TOO_DEEP)
        except (TypeError, ValueError):
            outcome.append(repr(value))

    thread = threading.Thread(target=encode, name="transcript-view-deep-value", daemon=True)
    thread.start()
    thread.join()
    return outcome[0] if outcome else NESTED_TOO_DEEP


#: `json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))`, with
#: its encoder made once: `json.dumps` with any argument makes a new one each call,
#: which cost more than the encoding of a small value (a row count reads many).
_compact = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode

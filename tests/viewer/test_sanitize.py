"""viewer.sanitize and core.text.visible: hostile text becomes visible, inert, never markup."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from transcript_view.core.text import visible
from transcript_view.viewer.sanitize import text

BIDI_CONTROLS = {
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
    "\u200e",
    "\u200f",
    "\u061c",
}


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # OSC 52: write "evil" to the clipboard.
        ("\x1b]52;c;ZXZpbA==\x07", "␛]52;c;ZXZpbA==␇"),
        # OSC 0: change the window title.
        ("\x1b]0;pwned\x07", "␛]0;pwned␇"),
        # OSC 8 hyperlink with an ST terminator.
        ("\x1b]8;;http://x\x1b\\click\x1b]8;;\x1b\\", "␛]8;;http://x␛\\click␛]8;;␛\\"),
        # CSI colour.
        ("\x1b[31mred\x1b[0m", "␛[31mred␛[0m"),
        # C1 CSI (one byte), and the other C1 ends.
        ("\x9b31m", "⟨009B⟩31m"),
        ("\x80\x9f", "⟨0080⟩⟨009F⟩"),
        ("ding\x07", "ding␇"),
        ("abc\x08\x08\x08xyz", "abc␈␈␈xyz"),
        ("visible\rhidden", "visible␍hidden"),
        ("a\nb", "a␊b"),
        ("\x00", "␀"),
        ("\x7f", "␡"),
        ("\x1f", "␟"),
    ],
)
def test_controls_become_pictures(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_no_escape_byte_survives() -> None:
    out = visible("\x1b]52;c;ZXZpbA==\x07\x1b[2J\x9b2J")
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out


@pytest.mark.parametrize(
    "markup", ["[bold red]x[/]", "[link=http://x]click[/link]", "[@click=quit]"]
)
def test_markup_stays_literal(markup: str) -> None:
    assert visible(markup) == markup
    t = text(markup)
    assert isinstance(t, Text)
    assert t.plain == markup
    assert not t.spans
    console = Console(width=80, record=True, color_system=None)
    console.print(t)
    assert markup in console.export_text()


def test_text_applies_style_without_parsing() -> None:
    t = text("[b]\x1b[1m", "italic")
    assert t.plain == "[b]␛[1m"
    assert str(t.style) == "italic"


def test_bidi_overrides_are_shown() -> None:
    assert visible("abc\u202edcba") == "abc⟨202E⟩dcba"
    assert visible("\u2066x\u2069") == "⟨2066⟩x⟨2069⟩"
    assert visible("\u200e\u200f\u061c") == "⟨200E⟩⟨200F⟩⟨061C⟩"


def test_zero_width_characters() -> None:
    assert visible("pass\u200bword") == "pass⟨200B⟩word"
    assert visible("\ufeffstart") == "⟨FEFF⟩start"
    assert visible("a\u2060b") == "a⟨2060⟩b"
    # ZWJ stays: emoji sequences need it.
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert visible(family) == family


def test_lone_surrogates() -> None:
    raw = b"ok \xff\x9b end".decode("utf-8", "surrogateescape")
    assert visible(raw) == "ok ⟨DCFF⟩⟨DC9B⟩ end"
    assert visible("\ud800") == "⟨D800⟩"


def test_tabs_expand_to_spaces() -> None:
    assert visible("a\tb") == "a       b"
    assert visible("\tx", tab_size=4) == "    x"
    # A CR shown as a glyph does not reset the tab column.
    assert visible("ab\r\tc") == "ab␍     c"


def test_plain_text_is_returned_unchanged() -> None:
    s = "hello — wörld 你好 😀"
    assert visible(s) is s


def test_line_separators_are_shown() -> None:
    assert visible("a\u2028b\u2029c") == "a⟨2028⟩b⟨2029⟩c"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_property_output_has_no_controls(s: str) -> None:
    out = visible(s)
    assert not any(unicodedata.category(c) in ("Cc", "Cs") for c in out)
    assert not any(c in BIDI_CONTROLS for c in out)
    assert "\u200b" not in out and "\ufeff" not in out


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Cf", "Zl", "Zp"))))
def test_property_ordinary_text_unchanged(s: str) -> None:
    assert visible(s) == s


def test_every_hex_escape_has_one_width() -> None:
    # U+061C used to be drawn "⟨61C⟩" beside "⟨200F⟩": every escape is four
    # zero-padded hex digits, so escapes line up and read the same.
    assert visible("\u061c") == "⟨061C⟩"
    assert visible("\x9b") == "⟨009B⟩"
    assert visible("\u180e") == "⟨180E⟩"
    for code in (*range(0x80, 0xA0), 0x061C, 0x180E, 0x200B, 0x202E, 0xFEFF, 0xD800):
        shown = visible(chr(code))
        assert re.fullmatch(r"⟨[0-9A-F]{4}⟩", shown), (hex(code), shown)
        assert int(shown[1:-1], 16) == code

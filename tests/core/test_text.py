"""core.text: the words and numbers the viewer and `--check` show, spelt one way."""

from __future__ import annotations

import re

import pytest

from transcript_view.core.text import (
    HEX_DIGITS,
    NESTED_TOO_DEEP,
    compact_json,
    hex_form,
    human_size,
    plural,
    short_id,
    visible,
)


@pytest.mark.parametrize(
    ("n", "word", "many", "shown"),
    [
        (0, "marker", None, "0 markers"),
        (1, "marker", None, "1 marker"),
        (2, "marker", None, "2 markers"),
        (1234, "line", None, "1,234 lines"),
        (1, "artifact directory", "artifact directories", "1 artifact directory"),
        (3, "artifact directory", "artifact directories", "3 artifact directories"),
    ],
)
def test_plural_agrees_with_its_count(n: int, word: str, many: str | None, shown: str) -> None:
    assert plural(n, word, many) == shown


def test_human_size() -> None:
    assert human_size(0) == "0 B"
    assert human_size(1023) == "1,023 B"
    assert human_size(1536) == "1.5 KiB"
    assert human_size(200 << 20) == "200.0 MiB"


def test_short_id_keeps_ids_one_longer_than_the_cut() -> None:
    assert short_id(None) == "?" and short_id("") == "?"
    assert short_id("123456789") == "123456789"
    assert short_id("1234567890") == "12345678…"


def test_compact_json_is_sorted_and_never_fails() -> None:
    assert compact_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'
    assert compact_json({1j}) == repr({1j})


def test_hex_escapes_are_one_width() -> None:
    assert HEX_DIGITS == 4
    assert hex_form(0x61C) == "⟨061C⟩" and hex_form(0x9B) == "⟨009B⟩"
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF or code < 0x2100 or code > 0xFEFE:
            shown = visible(chr(code))
            if shown.startswith("⟨"):
                assert re.fullmatch("⟨[0-9A-F]{4}⟩", shown), hex(code)


def test_compact_json_of_a_value_nested_to_the_parsers_limit_never_fails() -> None:
    """A line nested nearly as deep as the parser takes (it parses on a thread of its
    own) is encoded by a builder deeper in a stack: that raised RecursionError and
    failed the viewer's layout worker, and a count in a worker process could differ
    from the row drawn (found in review)."""
    value: object = []
    for _ in range(985):
        value = [value]

    def deeper(n: int) -> str:
        return deeper(n - 1) if n else compact_json({"data": value})

    whole = '{"data":' + "[" * 986 + "]" * 986 + "}"
    assert deeper(100) == deeper(0) == whole  # whatever the caller's stack
    assert NESTED_TOO_DEEP not in whole

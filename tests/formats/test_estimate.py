"""The agents' count of a tool call's arguments for an estimate (`formats.estimate`)."""

from __future__ import annotations

import json

import pytest

from transcript_view.core.formats.estimate import json_chars


@pytest.mark.parametrize(
    "value",
    [{"command": "ls -la"}, {"path": "café/naïve.txt"}, ["😀", 1, None], "x", 0, {}],
)
def test_the_count_is_the_characters_of_compact_json(value: object) -> None:
    """ASCII or not, characters (as `JSON.stringify` writes them), never bytes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert json_chars(value) == len(text)


def test_no_arguments_or_arguments_that_cannot_be_written_count_nothing() -> None:
    assert json_chars(None) == 0
    assert json_chars({"x": object()}) == 0

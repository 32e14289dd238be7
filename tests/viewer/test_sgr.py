"""Colour survives, control does not: SGR in a tool's output is drawn, nothing else is obeyed.

Issue 26, item 7: a test runner's `␛[1m␛[46m RUN ␛[49m␛[22m ␛[36mv4.0.18 ␛[39m` was
drawn as that noise. These tests hold the three parts of the rule: `core.text.split_sgr`
takes exactly the SGR sequences out of a text (every other escape stays, to be shown as
glyphs), `viewer.sanitize.SgrState` reads their parameters into styles (never conceal,
blink or unreadable colours), and `viewer.rows.wrap_sgr` cuts the rest into the rows
`wrap` makes of it, so the counting builder (`wrap_count(strip_sgr(...))`) agrees with
the drawing one; then the three formats' tool outputs, and what stays as written.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from _sessions import ClaudeSession, write_codex_rollout
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.color import Color
from rich.style import Style
from rich.text import Text

from transcript_view.core.canonical import canonical_json
from transcript_view.core.formats.detect import Format
from transcript_view.core.text import (
    SGR_PARAMS_MAX,
    split_sgr,
    strip_sgr,
    visible,
    visible_parts,
)
from transcript_view.core.transcript import Transcript
from transcript_view.viewer.blocks import FileSource, RowBuilder, build_line
from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion
from transcript_view.viewer.rows import Row, wrap, wrap_count, wrap_sgr
from transcript_view.viewer.sanitize import SgrState

#: The line of issue 26's report, as a test runner (vitest) writes it.
RUN = "\x1b[1m\x1b[46m RUN \x1b[49m\x1b[22m \x1b[36mv4.0.18 \x1b[39m\x1b[90m/work/proj\x1b[39m"


def ansi(n: int) -> Color:
    return Color.from_ansi(n)


def styles_at(text: Text) -> list[Style]:
    """The style of each character of `text`, spans combined as Rich renders them."""
    out = []
    for i in range(len(text.plain)):
        style = Style.combine(
            [text.style if isinstance(text.style, Style) else Style()]
            + [s.style for s in text.spans if s.start <= i < s.end and isinstance(s.style, Style)]
        )
        out.append(style)
    return out


# -- core.text: which sequences are SGR ---------------------------------------------------------


def test_split_sgr_takes_out_the_sgr_sequences_and_says_where_each_was() -> None:
    plain, switches = split_sgr(RUN)
    assert plain == " RUN  v4.0.18 /work/proj"
    assert switches == [(0, "1"), (0, "46"), (5, "49"), (5, "22"), (6, "36"), (14, "39"),
                        (14, "90"), (24, "39")]  # fmt: skip
    assert strip_sgr(RUN) == plain


@pytest.mark.parametrize(
    "kept",
    [
        "\x1b[2J",  # erase the screen: a CSI, not SGR
        "\x1b[1;1H",  # cursor position
        "\x1b[?25l",  # private mode: hide the cursor
        "\x1b[>4;2m",  # a private-marked `m` (xterm's modifyOtherKeys) is not SGR
        "\x1b[1 m",  # an intermediate byte
        "\x1b]52;c;ZXZpbA==\x07",  # OSC 52: a clipboard write
        "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\",  # OSC 8: a hyperlink
        "\x1bP1$r0m\x1b\\",  # DCS
        "\x1b",  # a lone ESC
        "\x1b[31",  # an SGR cut short
        "\x9b31m",  # the 8-bit CSI: a C1 control, shown as ⟨009B⟩
        "\x1b[" + "1;" * SGR_PARAMS_MAX + "m",  # longer than any colour a program meant
    ],
)
def test_every_other_escape_stays_in_the_text_to_be_shown_as_glyphs(kept: str) -> None:
    text = f"a{kept}b"
    assert split_sgr(text) == (text, [])
    assert strip_sgr(text) == text
    assert "\x1b" not in visible(text) and "\x9b" not in visible(text)


def test_a_csi_of_ten_thousand_params_is_one_visible_run_read_in_linear_time() -> None:
    huge = "\x1b[" + ";".join(["1"] * 10_000) + "mtext"
    started = time.perf_counter()
    assert split_sgr(huge) == (huge, [])
    assert time.perf_counter() - started < 0.5
    rows = wrap_sgr(huge, 80)
    assert [r.plain for r in rows] == wrap(huge, 80)
    assert rows[0].plain.startswith("␛[1;1;1;") and not any(r.spans for r in rows)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab\t\x1b\x9b中 \u202e\x00", max_size=12), max_size=8))
def test_visible_parts_is_visible_of_the_whole_cut_where_the_parts_were(parts: list[str]) -> None:
    shown = visible_parts(parts)
    assert "".join(shown) == visible("".join(parts))
    assert len(shown) == len(parts)


# -- viewer.sanitize: what the parameters mean ---------------------------------------------------


def style_of(*sequences: str) -> Style | None:
    state = SgrState()
    for params in sequences:
        state = state.apply(params)
    return state.style()


@pytest.mark.parametrize(
    ("sequences", "expected"),
    [
        (("1",), Style(bold=True)),
        (("1;3;4;9",), Style(bold=True, italic=True, underline=True, strike=True)),
        (("2",), Style(dim=True)),
        (("7",), Style(reverse=True)),
        (("31",), Style(color=ansi(1))),
        (("91",), Style(color=ansi(9))),
        (("46",), Style(bgcolor=ansi(6))),
        (("103",), Style(bgcolor=ansi(11))),
        (("38;5;208",), Style(color=ansi(208))),
        (("48;5;17",), Style(bgcolor=ansi(17))),
        (("38;2;255;128;0",), Style(color=Color.from_rgb(255, 128, 0))),
        (("38:2::255:128:0",), Style(color=Color.from_rgb(255, 128, 0))),  # T.416, colour space
        (("38:2:255:128:0",), Style(color=Color.from_rgb(255, 128, 0))),
        (("38:5:208",), Style(color=ansi(208))),
        (("38;5;208;1",), Style(color=ansi(208), bold=True)),  # the colour's arguments consumed
        (("1", "46", "49", "22"), None),  # the issue's " RUN ": on, then off
        (("1;31", "0"), None),
        (("1;31", ""), None),  # a bare ESC [ m resets
        (("31", "39"), None),
        (("4", "4:0"), None),
        (("4:3",), Style(underline=True)),  # curly: underlined
        (("1;2", "22"), None),
    ],
)
def test_sgr_parameters_become_styles(sequences: tuple[str, ...], expected: Style | None) -> None:
    assert style_of(*sequences) == expected


@pytest.mark.parametrize(
    "params",
    ["8", "5", "6", "8;5;6", "28", "25", "58;5;1", "58:2::1:2:3", "10", "20", "51", "73"],
)
def test_styles_that_hide_or_flash_text_are_never_drawn(params: str) -> None:
    """Conceal would hide the text and blink flash it; fonts, frames, underline colours
    are not drawn either: all leave the text as it was."""
    assert style_of(params) is None
    assert style_of("32", params) == Style(color=ansi(2))


@pytest.mark.parametrize(
    "params",
    ["30;40", "37;47", "38;5;196;48;5;196", "38;2;10;10;10;48;2;0;0;0", "34;44;1"],
)
def test_a_foreground_the_background_hides_takes_the_viewers_colours(params: str) -> None:
    style = style_of(params)
    assert style is None or (style.color is None and style.bgcolor is None)
    assert style_of("30;47") == Style(color=ansi(0), bgcolor=ansi(7))  # black on white: kept


@pytest.mark.parametrize(
    "params",
    ["38", "38;5", "38;2;1;2", "38;7", "48;2", "38;5;99999999999999", "38;2;999;999;999",
     ";;;;", "0000000000000000031", "38::", "::::", "4:", "1" * SGR_PARAMS_MAX],
)  # fmt: skip
def test_malformed_parameters_are_read_without_failing(params: str) -> None:
    style_of(params)  # no exception; colours clamped to the palette
    assert style_of("38;5;99999999999999") == Style(color=ansi(255))
    assert style_of("38;2;999;999;999") == Style(color=Color.from_rgb(255, 255, 255))


# -- viewer.rows: one wrapping rule, counted and drawn ------------------------------------------

#: Text with SGR sequences (whole, cut short, odd), other escapes and characters that wrap oddly.
_PIECES = st.sampled_from(
    [
        "\x1b[31m", "\x1b[0m", "\x1b[m", "\x1b[1;46m", "\x1b[38;2;1;2;3m", "\x1b[8m", "\x1b[30;40m",
        "\x1b[2J", "\x1b]52;c;eA==\x07", "\x1b[", "\x1b", "\x9b", "\n", "\t", "中", "😀", "e\u0301",
        "\u202e", "\x00", " ", "word", "x" * 30,
    ]
)  # fmt: skip
_SGR_TEXT = st.lists(_PIECES, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=_SGR_TEXT, width=st.integers(1, 50), cap=st.none() | st.integers(1, 12))
def test_wrap_sgr_draws_the_rows_wrap_cuts_and_wrap_count_counts(
    text: str, width: int, cap: int | None
) -> None:
    rows = wrap_sgr(text, width)
    plain = strip_sgr(text)
    assert [r.plain for r in rows] == wrap(plain, width)
    assert wrap_count(plain, width, cap) == (len(rows) if cap is None else min(len(rows), cap))
    for row in rows:
        assert "\x1b" not in row.plain and "\x9b" not in row.plain
        for span in row.spans:
            style = span.style
            assert isinstance(style, Style)
            assert not (style.conceal or style.blink or style.blink2 or style.link)


def test_the_issue_line_is_drawn_in_its_colours() -> None:
    (row,) = wrap_sgr(RUN, 80)
    assert row.plain == " RUN  v4.0.18 /work/proj"
    at = styles_at(row)
    assert at[1] == Style(bold=True, bgcolor=ansi(6))  # " RUN ": bold, on cyan
    assert at[5].bgcolor is None and not at[5].bold  # the space after it: plain
    assert at[6].color == ansi(6)  # v4.0.18: cyan
    assert at[14].color == ansi(8)  # the path: bright black (grey)


def test_a_colour_carries_across_a_cut_and_a_line_feed() -> None:
    text = "\x1b[32m" + "g" * 15 + "\nstill green\x1b[0m plain\ttab"
    rows = wrap_sgr(text, 10)
    assert [r.plain for r in rows] == ["g" * 10, "g" * 5, "still gree", "n plain   ", "    tab"]
    for row in rows[:3]:
        assert all(s.color == ansi(2) for s in styles_at(row))
    assert styles_at(rows[3])[0].color == ansi(2) and styles_at(rows[3])[1].color is None


def test_concealed_text_is_shown() -> None:
    (row,) = wrap_sgr("pass\x1b[8mword\x1b[28m", 80)
    assert row.plain == "password"
    assert not any(s.conceal for s in styles_at(row))


# -- the three formats ------------------------------------------------------------------------


def _built(path: Path, fmt: Format, width: int) -> list[list[Row]]:
    """Every block of `path`'s file view: counted and built alike (collapsed and expanded)."""
    blocks = []
    with Transcript.open(path) as t:
        ctx = BlockContext(AnalysisState(), {}, Expansion(), width=width, format=fmt)
        source = FileSource(t, ctx)
        source.index_complete = True
        for i in range(source.available()):
            for expand in (False, True):
                built = source.build(i, expand)
                assert source.build(i, expand, count_only=True).count == built.count, (i, width)
            blocks.append(source.build(i, True).rows)
    return blocks


def _coloured_rows(blocks: list[list[Row]]) -> dict[str, set[Color]]:
    """Each body row's text -> the colours drawn on it."""
    out: dict[str, set[Color]] = {}
    for rows in blocks:
        for row in rows:
            colours = {
                c
                for s in row.text.spans
                if isinstance(s.style, Style)
                for c in (s.style.color, s.style.bgcolor)
                if c is not None and c.type.name in ("STANDARD", "EIGHT_BIT", "TRUECOLOR")
            }
            out[row.text.plain.strip()] = colours
    return out


OUTPUT = RUN + "\n \x1b[32m✓\x1b[39m src/a.test.ts \x1b[2m(3 tests)\x1b[22m\n" + (
    " \x1b[31m×\x1b[39m src/b.test.ts > fails\n" * 12
)


def _assert_drawn(blocks: list[list[Row]], *as_written: str) -> None:
    """The output in its colours, no escape left of it; the texts `as_written` shown so."""
    rows = _coloured_rows(blocks)
    assert rows["RUN  v4.0.18 /work/proj"] >= {ansi(6), ansi(8)}
    assert ansi(1) in rows["× src/b.test.ts > fails"]
    shown = "\n".join(r.text.plain for rows_ in blocks for r in rows_)
    for text in as_written:
        assert text in shown
        shown = shown.replace(text, "")
    assert "␛" not in shown


@pytest.mark.parametrize("width", [30, 80, 200])
def test_a_claude_code_tool_result_is_drawn_in_its_colours(tmp_path: Path, width: int) -> None:
    s = ClaudeSession(tmp_path / "projects" / "-proj")
    s.user("run the tests \x1b[31mplease\x1b[0m")
    s.tool_use("toolu_01", "Bash", {"command": "npx vitest"})
    s.tool_result("toolu_01", OUTPUT)
    s.tool_use("toolu_02", "Bash", {"command": "npx vitest"})
    s.tool_result("toolu_02", [{"type": "text", "text": OUTPUT}])
    s.assistant({"type": "text", "text": "It printed \x1b[36mv4\x1b[39m."})
    blocks = _built(s.write(), Format.CLAUDE_CODE, width)
    if width >= 80:  # the model's and the user's own words are shown as written
        _assert_drawn(blocks, "␛[31mplease␛[0m", "␛[36mv4␛[39m")


@pytest.mark.parametrize("width", [30, 80, 200])
def test_a_codex_output_is_drawn_in_its_colours(tmp_path: Path, width: int) -> None:
    path = write_codex_rollout(tmp_path / "rollout.jsonl", [OUTPUT])
    blocks = _built(path, Format.CODEX, width)
    if width >= 80:
        rows = _coloured_rows(blocks)
        assert rows["RUN  v4.0.18 /work/proj"] >= {ansi(6), ansi(8)}
        assert not any("␛" in r.text.plain for rows_ in blocks for r in rows_)


@pytest.mark.parametrize("width", [30, 80, 200])
def test_a_reference_tool_message_is_drawn_in_its_colours(tmp_path: Path, width: int) -> None:
    from transcript_view.core.session import Session

    path = tmp_path / "run.jsonl"
    with Session.create(path, {"app": "sgr"}, limit=100_000) as session:
        calls = [
            {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": "{}"}}
        ]
        session.append_message("user", "the \x1b[1mbold\x1b[0m ask")
        session.append_message("assistant", "running", tool_calls=calls)
        op = session.append_tool_dispatched("c1", "sh", json.dumps({"cmd": "\x1b[31m"}))
        session.settle(op, "c1", OUTPUT)
    blocks = _built(path, Format.REFERENCE, width)
    if width >= 80:
        _assert_drawn(blocks, "␛[1mbold␛[0m")


def _claude_result(text: str) -> dict[str, object]:
    content = [{"type": "tool_result", "tool_use_id": "toolu_01", "content": text}]
    return {"type": "user", "uuid": "u", "message": {"role": "user", "content": content}}


def _codex_output(text: str) -> dict[str, object]:
    payload = {"type": "function_call_output", "call_id": "call_1", "output": text}
    return {"timestamp": "2026-01-01T00:00:00.000Z", "type": "response_item", "payload": payload}


def _reference_tool(text: str) -> dict[str, object]:
    payload = {"role": "tool", "content": text, "tool-call-id": "c1"}
    return {"id": "m", "payload": payload, "ts": "2026-01-01T00:00:00.000000Z",
            "type": "message", "v": 1}  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    text=_SGR_TEXT,
    width=st.integers(12, 130),
    expand=st.booleans(),
    shape=st.sampled_from(
        [
            (Format.CLAUDE_CODE, _claude_result),
            (Format.CODEX, _codex_output),
            (Format.REFERENCE, _reference_tool),
        ]
    ),
)
def test_a_coloured_output_counts_as_it_is_built(
    text: str, width: int, expand: bool, shape: tuple[Format, Any]
) -> None:
    """Any coloured output, in each format, at any width, collapsed or not: the counting
    builder's rows are the drawing builder's, and none of them holds an ESC."""
    fmt, line = shape
    raw = canonical_json(line(text)).encode()
    ctx = BlockContext(AnalysisState(), {}, Expansion(), width=width, format=fmt)

    def build(count_only: bool) -> RowBuilder:
        b = RowBuilder("file", 0, 1, ctx, expand, count_only=count_only)
        build_line(b, fmt, raw, 0)
        return b

    drawn = build(False)
    assert build(True).counted == drawn.counted
    for row in drawn.rows:
        assert "\x1b" not in row.text.plain

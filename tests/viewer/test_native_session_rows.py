"""The native count of a Claude Code or Codex line (`viewer/_rows.c`, `SessionCounter`).

`tests/viewer/test_session_rows.py` holds it, beside the Python count, to the
builder on every example, random session and odd line. These are the cases
its own arithmetic could get wrong where those rarely go: compact JSON's
escapes and sorted keys, `repr`'s quotes, a clip's " …" at a wide view,
numbers, TAB stops after words, and what it must leave to the Python count;
and how it fails: a helper's error propagates, bad arguments are refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from transcript_view.core.formats.detect import Format
from transcript_view.core.transcript import Transcript, fast_object
from transcript_view.viewer.blocks import FileSource
from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion
from transcript_view.viewer.line_rows import UNKNOWN
from transcript_view.viewer.session_rows import (
    ClaudeRows,
    CodexRows,
    _rows,
    native_measure,
    python_measure,
)

pytestmark = pytest.mark.skipif(_rows is None, reason="viewer/_rows.c not built here")

WIDTHS = (30, 80, 200, 5000)
CLEARED = "[Old tool result content cleared]"


def _user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, **extra}


def _tool_use(value: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": "t", "name": "n", "input": value}
    return {"type": "assistant", "message": {"role": "assistant", "content": [block]}}


def _call(arguments: str) -> dict[str, Any]:
    item = {"type": "function_call", "name": "f", "call_id": "c", "arguments": arguments}
    return {"type": "response_item", "payload": item}


class Spy:
    """The Python count as the native one's fallback, noting every line it is handed."""

    def __init__(self, rows: Callable[[bytes], int]) -> None:
        self.rows = rows
        self.asked = 0

    def __call__(self, raw: bytes) -> int:
        self.asked += 1
        return self.rows(raw)


def _check(tmp_path: Path, fmt: Format, objs: list[dict[str, Any]]) -> dict[int, int]:
    """Each line's native count is the Python count and the builder's.

    Returns how many lines the native count handed the Python one, at each width.
    """
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs), "utf-8")
    asked = {}
    with Transcript.open(path) as t:
        for width in WIDTHS:
            rows = python_measure(fmt, width)
            assert rows is not None
            spy = Spy(rows)
            native = native_measure(rows, spy)
            ctx = BlockContext(AnalysisState(), {}, Expansion(), width=width, format=fmt)
            source = FileSource(t, ctx)
            source.index_complete = True
            for line in range(1, t.line_count + 1):
                raw = t.raw_line(line)
                got = native(raw)
                assert got == rows(raw), (width, line, raw[:120])
                if got != UNKNOWN:
                    built = source.build(line - 1)
                    assert got == len(built.rows), (width, line, raw[:120])
            asked[width] = spy.asked
    return asked


def test_compact_json_is_measured_with_its_escapes_and_numbers(tmp_path: Path) -> None:
    """Every escape `json.dumps` writes, ints past 64 bits, floats as `repr` writes them."""
    values: list[Any] = [
        {},
        [],
        None,
        True,
        False,
        0,
        -7,
        2**63,
        -(10**40),
        1.5,
        -0.0,
        1e-7,
        5e-324,
        1.7976931348623157e308,
        {"s": 'q"uote and back\\slash'},
        {"s": "\b\f\n\r\t\x00\x1f"},
        {"z": [1, {"y": None}], "a": "b", "m": [[], {}]},
        ["x" * 50] * 30,
    ]
    assert set(_check(tmp_path, Format.CLAUDE_CODE, [_tool_use(v) for v in values]).values()) == {0}


def test_a_dict_is_measured_in_sorted_key_order(tmp_path: Path) -> None:
    """Written unsorted, "b"'s ASCII would fill the rows counted; sorted, "a"'s combining
    marks come first and the clip leaves one row: the count must read it sorted."""
    value = {"b": "x" * 1000, "a": "\u0301" * 5000}
    assert set(_check(tmp_path, Format.CLAUDE_CODE, [_tool_use(value)]).values()) == {1}


def test_reprs_of_a_records_fields_are_measured_with_their_quotes(tmp_path: Path) -> None:
    fields = [
        "plain",
        "it's",
        'say "hi"',
        "both ' and \"",
        "'''\"",
        "back\\slash",
        "tab\tlf\ncr\r",
        "",
        "x" * 80,
        "x" * 81,
        "é" * 81,  # its size is its UTF-8 bytes
        "x" * 5000,
    ]
    objs = [_user("p", toolUseResult={"k": f}) for f in fields]
    objs += [_user("p", toolUseResult={"a": 1, "b": [1, 2], "c": {"d": "e"}, "f": None})]
    objs += [_user("p", toolUseResult={f"k{i}": "v" * i for i in range(40)})]
    objs += [_user("p", toolUseResult=v) for v in ("text", "t" * 500, None, [1, "2"], 3.5)]
    assert set(_check(tmp_path, Format.CLAUDE_CODE, objs).values()) == {0}


def test_what_only_the_python_count_can_say_is_left_to_it(tmp_path: Path) -> None:
    """At a view wide enough that no text is cut short of what decides it."""
    objs = [
        _user("é"),  # cells: not our arithmetic
        _user("a\r\nb"),
        _user("p", toolUseResult={"k": "é"}),
        _user("p", toolUseResult={"k\n": 1}),
        _tool_use("\x7f"),
        {"type": "system", "content": "s"},
        {"type": "summary", "summary": "s"},
        {"type": "content-replacement", "replacements": []},
        {"type": "assistant", "message": {"content": [{"type": "redacted_thinking"}]}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": 5}]}},
        {"type": "assistant", "message": {"content": [{"type": "server_tool_use"}]}},
        _user([{"type": "tool_result", "tool_use_id": "t", "content": {"a": 1}}]),
    ]
    assert _check(tmp_path, Format.CLAUDE_CODE, objs)[5000] == len(objs)


def test_a_marker_is_left_to_the_python_count(tmp_path: Path) -> None:
    objs = [
        _user([{"type": "tool_result", "tool_use_id": "t", "content": CLEARED}]),
        _user(
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": ["a string part", {"type": "text", "text": "x\n" + CLEARED}],
                }
            ]
        ),
    ]
    assert set(_check(tmp_path, Format.CLAUDE_CODE, objs).values()) == {len(objs)}


def test_a_codex_calls_arguments_are_measured_as_decoded(tmp_path: Path) -> None:
    texts = [
        '{"cmd": ["ls", "-la"], "n": 1.5e3}',
        '{"b": 1, "a": 2}',
        "[1e999]",
        '{"a": NaN}',  # the standard parser's: a float NaN, asked
        '"\\ud800"',  # a lone surrogate: asked
        "{bad",
        "*** Begin Patch\n*** Add File: a\n+\tx\n*** End Patch",
        "x" * 4500,  # clipped: asked at 5000 columns only
    ]
    asked = _check(tmp_path, Format.CODEX, [_call(t) for t in texts])
    assert asked == {30: 3, 80: 3, 200: 3, 5000: 4}  # 1e999 is the standard parser's inf


def test_the_words_before_a_text_move_its_tab_stops(tmp_path: Path) -> None:
    """ "thinking: " is 10 columns: a TAB after it goes to column 16, not 8."""
    objs = [
        {"type": "assistant", "message": {"content": [{"type": "thinking", "thinking": t}]}}
        for t in ("\t" * k + "x" * n for k in range(1, 4) for n in range(0, 60, 7))
    ]
    objs += [_user("p", toolUseResult="\t" * k) for k in range(1, 12)]
    assert set(_check(tmp_path, Format.CLAUDE_CODE, objs).values()) == {0}


def test_a_helpers_error_propagates() -> None:
    rows = ClaudeRows(80)

    def broken(text: str) -> list[object]:
        raise ZeroDivisionError(text)

    counter = _rows.SessionCounter(
        "claude-code",
        rows.spec,
        ("thinking: ", "[image]", "record: "),
        {"decode": fast_object, "markers": broken, "human_size": str, "keys": frozenset()},
        rows,
    )
    line = json.dumps(_user([{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]))
    with pytest.raises(ZeroDivisionError):
        counter(line.encode())
    assert counter(json.dumps(_user("fine")).encode()) == 2


def test_bad_arguments_are_refused() -> None:
    rows = CodexRows(80)
    words = ("thinking: ", "[image]", "record: ")
    helpers: dict[str, object] = {
        "decode": fast_object,
        "markers": list,
        "arguments": dict,
        "parts": list,
        "keys": frozenset(),
    }
    make = _rows.SessionCounter
    with pytest.raises(ValueError, match="format"):
        make("reference", rows.spec, words, helpers, rows)
    with pytest.raises(ValueError, match="spec"):
        make("codex", rows.spec[:-1], words, helpers, rows)
    with pytest.raises(ValueError, match="spec"):
        make("codex", (0, *rows.spec[1:]), words, helpers, rows)
    with pytest.raises(ValueError, match="printable ASCII"):
        make("codex", rows.spec, ("é", "[image]", "r"), helpers, rows)
    with pytest.raises(TypeError, match="parts"):
        make("codex", rows.spec, words, {k: v for k, v in helpers.items() if k != "parts"}, rows)
    with pytest.raises(TypeError, match="keys"):
        make("codex", rows.spec, words, {**helpers, "keys": ["a"]}, rows)
    with pytest.raises(TypeError, match="fallback"):
        make("codex", rows.spec, words, helpers, None)
    counter = make("codex", rows.spec, words, helpers, rows)
    with pytest.raises(TypeError, match="1 argument"):
        counter(b"{}", b"{}")  # type: ignore[call-arg]
    assert counter("not bytes") == rows("not bytes")  # type: ignore[arg-type]


def _feature_lines() -> list[tuple[Format, dict[str, Any]]]:
    """Lines whose every feature moves a row boundary by a character or a column."""
    fields = ["it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\tlf\ncr\r", "x" * 81]
    fields += ["é" * 81, "", "x" * 80]
    inputs: list[Any] = [-7, 10**19, -(10**40), 1e-7, -0.0, True, None, [1, [2, [3]]]]
    inputs += [{"s": '\b\f\n\r\t\x00\x1f"\\'}, {"z": 1, "a": "b"}, "\tx\ty"]
    lines: list[tuple[Format, dict[str, Any]]] = []
    for pad in ("", "p" * 17):
        lines += [(Format.CLAUDE_CODE, _user("p", toolUseResult={"k" + pad: f})) for f in fields]
        lines += [(Format.CLAUDE_CODE, _user("p", toolUseResult={"a": 1, "b" + pad: [1]}))]
        lines += [(Format.CLAUDE_CODE, _tool_use({"k" + pad: v})) for v in inputs]
        lines += [(Format.CLAUDE_CODE, _user(pad + "\t" + pad + "\n" + pad))]
        thinking = {"type": "thinking", "thinking": pad + "\tx"}
        lines += [(Format.CLAUDE_CODE, {"type": "assistant", "message": {"content": [thinking]}})]
        lines += [(Format.CLAUDE_CODE, {"type": "progress", "data": pad, "uuid": "u"})]
        lines += [(Format.CODEX, _call(json.dumps({"cmd": ["ls", pad], "n": -12})))]
        lines += [(Format.CODEX, _call(pad + "\n\tpatch"))]
        lines += [(Format.CODEX, {"type": "event_msg", "payload": {"message": pad + "\t!"}})]
    return lines


def test_at_every_width_the_native_count_is_the_python_count() -> None:
    """A length off by one character (an escape, a quote, a sign, a separator) or a TAB
    stop off by a column is a row boundary crossed at one width: every width is tried."""
    lines = [(fmt, json.dumps(obj, ensure_ascii=False).encode()) for fmt, obj in _feature_lines()]
    for width in range(12, 260):
        for fmt in (Format.CLAUDE_CODE, Format.CODEX):
            rows = python_measure(fmt, width)
            assert rows is not None
            spy = Spy(rows)
            native = native_measure(rows, spy)
            body = rows.spec[5]  # the first piece's width: a prompt's, a message's
            full = ["x" * (k * body + d) for k in (1, 7, 8, 9) for d in (-1, 0, 1)]
            full += ["y\n" * k + "x" * (body * (8 - k) + d) for k in (1, 3) for d in (-1, 0, 1)]
            if fmt is Format.CLAUDE_CODE:
                own = [json.dumps(_user(text)).encode() for text in full]
            else:
                item = {"type": "message", "role": "user", "content": [{"text": ""}]}
                own = []
                for text in full:
                    item["content"][0]["text"] = text
                    own.append(json.dumps({"type": "response_item", "payload": item}).encode())
            for raw in [raw for f, raw in lines if f is fmt] + own:
                assert native(raw) == rows(raw), (width, raw)
            assert spy.asked == 0

"""A Claude Code or Codex line's count, taken where its pass maps it, is what the view builds.

`viewer.measure.BlockRows` builds each line, counting, in the pass's workers,
with `viewer.session_blocks`' builders; these tests hold what it tells the
view to what `FileSource` builds of the same line (counting, and drawing every
row: the counting builder's arithmetic against the drawn rows) on every
example, on random sessions, on odd lines, and on each text a line shows at
every length around its row boundaries and collapse limits.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _sessions import codex_chars_truncated, random_claude_session, random_codex_rollout
from _support import CLAUDE_EXAMPLE, CODEX_EXAMPLE, EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_view.core.formats.detect import Format, detect
from transcript_view.core.formats.readers import analyse_as
from transcript_view.core.transcript import Transcript
from transcript_view.viewer.blocks import FileSource
from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion
from transcript_view.viewer.measure import UNKNOWN, BlockRows
from transcript_view.viewer.session_blocks import call_arguments

WIDTHS = (24, 40, 80, 118, 200)


def _source(t: Transcript, fmt: Format, width: int) -> FileSource:
    ctx = BlockContext(AnalysisState(), {}, Expansion(), width=width, format=fmt)
    source = FileSource(t, ctx)
    source.index_complete = True
    return source


def _measures(fmt: Format, width: int) -> list[Callable[[bytes], int]]:
    """The format's count, and the same sent through pickle (as to a `spawn` worker)."""
    rows = BlockRows(width, fmt)
    return [rows, pickle.loads(pickle.dumps(rows))]


def _counted(path: Path, fmt: Format, widths: tuple[int, ...] = WIDTHS) -> tuple[int, int]:
    """Lines counted and lines in all, each count checked against the builder."""
    counted = total = 0
    with Transcript.open(path) as t:
        for width in widths:
            source, measures = _source(t, fmt, width), _measures(fmt, width)
            for line in range(1, t.line_count + 1):
                total += 1
                raw = t.raw_line(line)
                got, *others = (measure(raw) for measure in measures)
                assert others == [got], (path.name, width, line, others, got)
                if got == UNKNOWN:
                    continue
                counted += 1
                built = source.build(line - 1)
                assert got == source.build(line - 1, count_only=True).count == len(built.rows), (
                    path.name,
                    width,
                    line,
                )
    return counted, total


def _examples() -> list[tuple[Path, Format]]:
    found = []
    for path in sorted((EXAMPLES / "claude").rglob("*.jsonl")) + sorted(
        (EXAMPLES / "codex").rglob("*.jsonl")
    ):
        fmt = detect(path).format
        if fmt in (Format.CLAUDE_CODE, Format.CODEX):
            found.append((path, fmt))
    return found


@pytest.mark.parametrize(("path", "fmt"), _examples(), ids=lambda v: getattr(v, "name", str(v)))
def test_every_example_line_counted_is_the_builders_count(path: Path, fmt: Format) -> None:
    _counted(path, fmt)


def test_the_examples_are_mostly_counted() -> None:
    """The measure is worth having: most lines of a real-looking session are counted."""
    for path, fmt in ((CLAUDE_EXAMPLE, Format.CLAUDE_CODE), (CODEX_EXAMPLE, Format.CODEX)):
        counted, total = _counted(path, fmt, (80,))
        assert counted >= total / 2, (path.name, counted, total)


@pytest.mark.parametrize("seed", range(10))
def test_random_sessions_are_counted_as_built(tmp_path: Path, seed: int) -> None:
    """Every marker form, junk lines, torn tails, branches, replacements, subagents."""
    claude = random_claude_session(tmp_path / "claude", seed, 50)
    codex = random_codex_rollout(tmp_path / "rollout.jsonl", seed, 50)
    counted = _counted(claude, Format.CLAUDE_CODE, (30, 118))[0]
    counted += _counted(codex, Format.CODEX, (30, 118))[0]
    assert counted > 0


def _plain_outside_the_adopted(path: Path, fmt: Format, width: int) -> int:
    """Every line the analysis does not reshape (`AnalysisState.adopt`'s set, and what
    `Layouter` builds once it is on show) has the plain count, analysis or not; how many."""
    kept = 0
    with Transcript.open(path) as t:
        measure = BlockRows(width, fmt)
        state = AnalysisState()
        reshaped = state.adopt(analyse_as(t, fmt))
        reshaped |= state.index.lines_with_markers()
        source = FileSource(t, BlockContext(state, {}, Expansion(), width=width, format=fmt))
        source.index_complete = True
        for line in range(1, t.line_count + 1):
            got = measure(t.raw_line(line))  # every line, in order: a record's depends on the last
            if line in reshaped:
                continue
            kept += 1
            assert got == source.build(line - 1).count, (path.name, width, line)
    return kept


@pytest.mark.parametrize("seed", range(6))
def test_a_line_the_analysis_leaves_alone_keeps_its_plain_count(tmp_path: Path, seed: int) -> None:
    """What the layout relies on to take the pass's counts after a session analysis lands
    (the reference format's: `test_block_rows.py`, `with_analysis`)."""
    claude = random_claude_session(tmp_path / "claude", seed, 60)
    codex = random_codex_rollout(tmp_path / "rollout.jsonl", seed, 60)
    kept = 0
    for width in (30, 118):
        kept += _plain_outside_the_adopted(claude, Format.CLAUDE_CODE, width)
        kept += _plain_outside_the_adopted(codex, Format.CODEX, width)
    for path, fmt in ((CLAUDE_EXAMPLE, Format.CLAUDE_CODE), (CODEX_EXAMPLE, Format.CODEX)):
        kept += _plain_outside_the_adopted(path, fmt, 80)
    assert kept > 100


def test_a_line_with_a_marker_is_counted_as_the_view_builds_it(tmp_path: Path) -> None:
    """A spill marker or a truncation notice: a badge row, "checking" until the analysis
    lands (the view recounts it then, `AnalysisState.adopt`)."""
    claude = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "head\n\n... [1,200 characters truncated] ...\n\ntail",
                }
            ],
        },
    }
    codex = {
        "type": "response_item",
        "payload": {
            "type": "function_call_output",
            "call_id": "c",
            "output": codex_chars_truncated(1200),
        },
    }
    for obj, fmt, name in (
        (claude, Format.CLAUDE_CODE, "c.jsonl"),
        (codex, Format.CODEX, "r.jsonl"),
    ):
        path = tmp_path / name
        path.write_text(json.dumps(obj) + "\n")
        assert _counted(path, fmt) == (len(WIDTHS), len(WIDTHS))
        with Transcript.open(path) as t:
            rows = _source(t, fmt, 80).build(0).rows
        assert "marker" in [row.kind for row in rows]


def test_what_is_no_json_object_is_counted_as_its_problem_rows(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join([b"", b"   ", b"not json", b'{"type": "user"', b"[1, 2]"]) + b"\n")
    for fmt in (Format.CLAUDE_CODE, Format.CODEX):
        assert _counted(path, fmt) == (5 * len(WIDTHS), 5 * len(WIDTHS))
    assert BlockRows(80, Format.CODEX)(b"") == 0


_texts = st.one_of(
    st.text(max_size=30),
    st.text(alphabet="ab \n\t\x1b\u200b\u0301\u4e2d\U0001f600", max_size=300),
    st.just("x" * 700),
    st.just("line\n" * 40),
)
_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | _texts,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_claude_blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _values}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": _values}),
    st.fixed_dictionaries({"type": st.just("redacted_thinking")}),
    st.fixed_dictionaries(
        {"type": st.just("tool_use"), "id": _values, "name": _values, "input": _values}
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("tool_result"),
            "tool_use_id": _values,
            "is_error": st.booleans(),
            "content": st.one_of(
                _texts,
                st.none(),
                st.lists(
                    st.one_of(
                        _texts,
                        st.fixed_dictionaries({"type": st.just("text"), "text": _values}),
                        st.fixed_dictionaries({"type": st.just("image")}),
                        _values,
                    ),
                    max_size=3,
                ),
            ),
        }
    ),
    st.fixed_dictionaries({"type": st.just("image")}),
    st.fixed_dictionaries({"type": _values}),
    _values,
)
_claude_lines = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["user", "assistant", "system", "summary", "progress", "?"])
        | _values,
        "message": st.one_of(
            st.fixed_dictionaries(
                {
                    "role": st.sampled_from(["user", "assistant"]),
                    "model": _values,
                    "content": st.one_of(_texts, st.lists(_claude_blocks, max_size=4), _values),
                }
            ),
            _values,
        ),
    },
    optional={
        "toolUseResult": _values,
        "content": _values,
        "compactMetadata": _values,
        "summary": _values,
        "isSidechain": st.booleans(),
        "uuid": st.text(max_size=8),
    },
)
_codex_items = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("message"),
            "role": _values,
            "content": st.lists(
                st.fixed_dictionaries({"type": st.just("input_text"), "text": _values}) | _values,
                max_size=3,
            )
            | _values,
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("reasoning"), "summary": st.lists(st.fixed_dictionaries({"text": _texts}))}
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["function_call", "custom_tool_call", "local_shell_call"]),
            "name": _values,
            "call_id": _values,
            "arguments": st.one_of(_values, st.just('{"cmd": ["ls", "-la"]}'), st.just("{bad")),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["function_call_output", "custom_tool_call_output"]),
            "call_id": _values,
            "output": st.one_of(_values, st.fixed_dictionaries({"output": _texts})),
        }
    ),
    st.fixed_dictionaries({"type": _values}),
)
_codex_lines = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["response_item", "event_msg", "session_meta", "turn_context", "compacted", "x"]
        ),
        "payload": st.one_of(
            _codex_items,
            st.fixed_dictionaries({"type": _values, "message": _values, "instructions": _values}),
            _values,
        ),
    }
)


def _same_as_built(tmp_path: Path, fmt: Format, obj: dict[str, Any]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps(obj, ensure_ascii=False) + "\n", encoding="utf-8", errors="surrogatepass"
    )
    _counted(path, fmt, (30, 100))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(obj=_claude_lines)
def test_odd_claude_lines_are_counted_as_built(tmp_path: Path, obj: dict[str, Any]) -> None:
    _same_as_built(tmp_path, Format.CLAUDE_CODE, obj)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(obj=_codex_lines)
def test_odd_codex_lines_are_counted_as_built(tmp_path: Path, obj: dict[str, Any]) -> None:
    _same_as_built(tmp_path, Format.CODEX, obj)


def test_a_codex_item_whose_type_is_no_string_is_shown_as_written(tmp_path: Path) -> None:
    """Found by the odd lines above: an item typed `[]` raised TypeError in the file
    view's builder (a list is no key of the output types' set) instead of showing."""
    path = tmp_path / "rollout.jsonl"
    path.write_text(json.dumps({"type": "response_item", "payload": {"type": []}}) + "\n")
    with Transcript.open(path) as t:
        block = _source(t, Format.CODEX, 80).build(0)
    assert "kept as written" in block.rows[0].text.plain
    assert BlockRows(80, Format.CODEX)(path.read_bytes().rstrip(b"\n")) == len(block.rows)


def _user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, **extra}


def _assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": list(blocks)}}


def _item(payload: dict[str, Any], kind: str = "response_item") -> dict[str, Any]:
    return {"type": kind, "payload": payload}


#: Each text a line shows, in a line that shows it: the measure must agree with the
#: builder on every length around every row boundary, and on every number of rows
#: around the collapse limits, for each (a prefix one character off fails here).
CLAUDE_TEXTS = {
    "prompt": lambda s: _user(s),
    "text block": lambda s: _assistant({"type": "text", "text": s}),
    "thinking": lambda s: _assistant({"type": "thinking", "thinking": s}),
    "tool input": lambda s: _assistant({"type": "tool_use", "id": "t", "name": "n", "input": s}),
    "result": lambda s: _user([{"type": "tool_result", "tool_use_id": "t", "content": s}]),
    "result part": lambda s: _user(
        [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": s}]}]
    ),
    "own record": lambda s: _user("p", toolUseResult={"stdout": s[:80], "n": len(s)}),
    "own record text": lambda s: _user("p", toolUseResult=s),
    "system": lambda s: {"type": "system", "subtype": "x", "content": s},
    "compact metadata": lambda s: {"type": "system", "compactMetadata": {"k": s}},
    "summary": lambda s: {"type": "summary", "summary": s},
    "other line": lambda s: {"type": "progress", "data": s},
    "other block": lambda s: _assistant({"type": "server_tool_use", "x": s}),
}
CODEX_TEXTS = {
    "message": lambda s: _item(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": s}]}
    ),
    "reasoning": lambda s: _item({"type": "reasoning", "summary": [{"text": s}]}),
    "call": lambda s: _item({"type": "function_call", "name": "f", "call_id": "c", "arguments": s}),
    "output": lambda s: _item({"type": "function_call_output", "call_id": "c", "output": s}),
    "ui record": lambda s: _item({"type": "agent_message", "message": s}, "event_msg"),
    "instructions": lambda s: _item({"instructions": s}, "session_meta"),
    "compacted": lambda s: _item({"message": s}, "compacted"),
    "other item": lambda s: _item({"type": "web_search_call", "q": s}),
    "other line": lambda s: _item({"q": s}, "something_new"),
}


def _boundary_texts(width: int) -> list[str]:
    texts = ["x" * n for n in range(0, 3 * width + 8)]
    texts += ["\n".join(["y" * 5] * rows) for rows in range(1, 14)]
    texts += ["z" * (width * rows - 12 + d) for rows in (2, 3, 4, 6, 7) for d in range(-3, 4)]
    # TAB stops count from the start of the row's logical line, the words before it included.
    texts += ["\t" * k + "x" * n for k in (1, 2, 5) for n in (0, 1, 20, 23, 24, 25, 31, 70)]
    texts += ["ab\tc" * n for n in range(1, 40, 3)] + ["a\tb\n\tc\t" * n for n in (1, 5, 9)]
    # Not ASCII, only where no row shown depends on it.
    texts += ["x" * (width * 10) + tail for tail in ("é", "\u4e2d" * 9, "\r\n", "\x1b[0m")]
    return texts


#: Texts whose cells are no arithmetic of ours (wide, combining, controls).
ODD_TEXTS = ["é", "a\u0301b" * 30, "\u4e2d" * 25, "\U0001f600 x" * 12, "a\r\nb", "\x1b[31m", "\x7f"]


@pytest.mark.parametrize(
    ("fmt", "name"),
    [(Format.CLAUDE_CODE, n) for n in CLAUDE_TEXTS] + [(Format.CODEX, n) for n in CODEX_TEXTS],
)
def test_every_text_is_counted_as_built_around_every_boundary(
    tmp_path: Path, fmt: Format, name: str
) -> None:
    make = (CLAUDE_TEXTS if fmt is Format.CLAUDE_CODE else CODEX_TEXTS)[name]
    width = 40
    texts = _boundary_texts(width)
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(json.dumps(make(s)) + "\n" for s in texts + ODD_TEXTS), encoding="utf-8"
    )
    counted, total = _counted(path, fmt, (width,))
    assert counted == total, f"{total - counted} lines left to the builder"


def test_a_tool_result_whose_id_is_no_string_is_shown(tmp_path: Path) -> None:
    """Found by the odd lines above: a `tool_use_id` of `[]` raised TypeError in the
    file view's builder (looked up among the replaced results' ids) instead of showing."""
    path = tmp_path / "session.jsonl"
    result = {"type": "tool_result", "tool_use_id": [], "content": "ok"}
    path.write_text(json.dumps(_user([result])) + "\n")
    with Transcript.open(path) as t:
        block = _source(t, Format.CLAUDE_CODE, 80).build(0)
    assert "← result" in block.rows[1].text.plain
    assert (
        BlockRows(80, Format.CLAUDE_CODE)(path.read_bytes().rstrip(b"\n")) == len(block.rows) == 3
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"cmd": ["ls", "-la"], "n": 1.5e3}',
        '{"a": 1, "a": 2}',
        "NaN",
        "[1e999, -0.0, 5e-324]",
        "1" * 4301,
        "123456789012345678901234567890",
        '"\\ud800"',
        '"\\u00e9\\u2028"',
        "{bad",
        "[" * 950 + "]" * 950,
        " [1] ",
        "",
    ],
)
def test_a_calls_arguments_are_decoded_as_the_standard_parser_decodes_them(text: str) -> None:
    """msgspec first, where it vouches for the text; the standard parser's answer
    (or the text itself, where neither takes it) is the definition."""
    try:
        want: object = json.loads(text)
    except (ValueError, RecursionError):
        want = text
    got = call_arguments({"arguments": text})
    assert repr(got) == repr(want)
    assert type(got) is type(want)

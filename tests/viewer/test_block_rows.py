"""Row counts taken where the analysis maps a line (`viewer.measure.BlockRows`) are the view's.

The count is the builder's own (issue 25: no second statement of a line's
look), taken from the line's bytes in the pass's workers. These tests hold
what the pass tells the view to what the view builds of the same line, from
the transcript, counting and drawing every row, on the reference fixtures,
on random and mutated transcripts and on random envelopes built to stress
wrapping; and `wrap_count`, the fast count of a text piece's rows that the
counting builder uses, to `len(wrap(...))`.
"""

from __future__ import annotations

import json
import pickle
import tempfile
from array import array
from pathlib import Path
from typing import Any

import pytest
from _random_transcripts import mutate, random_transcript
from _support import EXAMPLES, REFERENCE, REFERENCE_TRANSCRIPTS
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_view.core.analysis import analyse
from transcript_view.core.formats.detect import Format
from transcript_view.core.text import visible
from transcript_view.core.transcript import Transcript
from transcript_view.viewer.blocks import BIG_LINE_BYTES, FileSource
from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion
from transcript_view.viewer.measure import UNKNOWN, BlockRows
from transcript_view.viewer.rows import wrap, wrap_count

#: Characters that wrap differently: controls, tabs, wide, zero-width, combining, bidi.
_ODD = "\n\t\r\x1b\x7f\x00 aé中😀\u0301\u200b\u202e\ufe0f"
_TEXT = st.text(alphabet=st.sampled_from(_ODD) | st.characters(), max_size=400)


def _measures(transcript: Transcript, width: int) -> dict[int, int]:
    """Each line's count, by `BlockRows`, as the analysis tells it."""
    got: dict[int, int] = {}

    def measured(first: int, rows: array[int]) -> None:
        assert not set(range(first, first + len(rows))) & got.keys(), "a line told twice"
        got.update((first + i, r) for i, r in enumerate(rows))

    analyse(transcript, measure=BlockRows(width, Format.REFERENCE), measured=measured, workers=1)
    return got


def _check(path: Path, width: int, *, with_analysis: bool = False) -> int:
    """Every measured line of `path` has the builder's count; returns how many were measured."""
    transcript = Transcript.open(path)
    try:
        got = _measures(transcript, width)
        state = AnalysisState()
        shaped: set[int] = set()
        if with_analysis:
            analysis = analyse(transcript)
            shaped = state.adopt(analysis)  # lines with markers or findings: the view recounts
        ctx = BlockContext(state, {}, Expansion(), width=width)
        source = FileSource(transcript, ctx)
        source.index_complete = True
        assert set(got) == set(range(1, transcript.line_count + 1))
        measured = 0
        for index in range(source.available()):
            rows = got[index + 1]
            if rows == UNKNOWN or index + 1 in shaped:
                continue
            measured += 1
            assert rows == source.build(index, count_only=True).count, (path, index + 1, width)
            assert rows == source.build(index).count, (path, index + 1, width)
        return measured
    finally:
        transcript.close()


_FIXTURES = [REFERENCE / f"{stem}.jsonl" for stem in REFERENCE_TRANSCRIPTS] + [
    EXAMPLES / "demo.jsonl",
    EXAMPLES / "broken.jsonl",
]


@pytest.mark.parametrize("width", [14, 40, 80, 120, 211])
@pytest.mark.parametrize("path", _FIXTURES, ids=lambda p: p.stem)
def test_the_measure_is_the_builders_count_on_every_fixture(path: Path, width: int) -> None:
    _check(path, width, with_analysis=True)


@pytest.mark.parametrize("seed", range(40))
def test_the_measure_is_the_builders_count_on_random_and_mutated_transcripts(
    seed: int, tmp_path: Path
) -> None:
    data = random_transcript(seed, size=80)
    if seed % 3 == 0:
        data = mutate(data, seed)
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    _check(path, 20 + 9 * seed, with_analysis=seed % 2 == 0)


def _envelope(kind: str, payload: Any, n: int) -> bytes:
    obj = {"id": f"id{n}", "payload": payload, "ts": "t", "type": kind, "v": 1}
    return json.dumps(obj).encode()


_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
_CALL = st.fixed_dictionaries(
    {"id": _VALUE, "function": st.fixed_dictionaries({"name": _TEXT, "arguments": _VALUE}) | _VALUE}
)
_LINE = st.one_of(
    st.tuples(
        st.just("message"),
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant", "tool", "system"]), "content": _VALUE},
            optional={"tool-calls": st.lists(_CALL | _VALUE, max_size=3) | _VALUE},
        ),
    ),
    st.tuples(
        st.just("tool-dispatched"),
        st.fixed_dictionaries({"arguments": _VALUE, "tool": _TEXT, "call-id": _TEXT}),
    ),
    st.tuples(
        st.just("tool-settled"),
        st.fixed_dictionaries(
            {"outcome": _TEXT},
            optional={"error": _VALUE, "reason": _VALUE, "artifact": _VALUE},
        ),
    ),
    st.tuples(st.just("session-meta"), st.dictionaries(_TEXT, _VALUE, max_size=4)),
    st.tuples(st.sampled_from(["compaction", "grants", "odd"]), st.dictionaries(_TEXT, _VALUE)),
)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_LINE, min_size=1, max_size=8), width=st.integers(10, 160))
def test_the_measure_is_the_builders_count_on_random_envelopes(
    lines: list[tuple[str, Any]], width: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_bytes(b"\n".join(_envelope(k, p, n) for n, (k, p) in enumerate(lines)) + b"\n")
        _check(path, width)


def test_most_lines_of_a_plain_transcript_are_measured(tmp_path: Path) -> None:
    """The measure is worth having: a fixture's messages, calls and settles are counted."""
    measured = _check(EXAMPLES / "demo.jsonl", 100)
    transcript = Transcript.open(EXAMPLES / "demo.jsonl")
    total = transcript.line_count
    transcript.close()
    assert measured >= total // 2


def test_a_big_line_is_left_to_the_builder() -> None:
    """It is shown in part, read from the transcript: the view builds it."""
    measure = BlockRows(80, Format.REFERENCE)
    line = b'{"v": 1, "type": "message", "id": "m", "payload": {"content": "x"}}'
    assert measure(line) == 2
    assert measure(line[:-2] + b"x" * BIG_LINE_BYTES + b'"}}') == UNKNOWN


def test_a_marker_and_a_session_meta_line_are_counted(tmp_path: Path) -> None:
    """What the restated counts left to the builder (issue 25) is the builder's count now:
    a marker with its provisional badge, as the view draws it before the analysis lands."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        _envelope("session-meta", {"app": "x", "first-paint-token": [1, 2]}, 0)
        + b"\n"
        + _envelope("message", {"role": "tool", "content": "a\n[... elided 3 chars ...]\nb"}, 1)
        + b"\n"
    )
    assert _check(path, 60) == 2
    assert _measures(Transcript.open(path), 60)[2] > 3  # head, text, marker, text


def test_the_measure_pickles_as_its_width_and_format() -> None:
    """Sent to a `spawn` worker with the pass: it makes its own context there."""
    rows = pickle.loads(pickle.dumps(BlockRows(33, Format.CODEX)))
    assert (rows.width, rows.format) == (33, Format.CODEX)
    line = json.dumps({"type": "compacted", "payload": {"message": "x" * 40}}).encode()
    # A head, the compaction's figures still to come (two rows), its summary folded.
    assert rows(line) == BlockRows(33, Format.CODEX)(line) == 4


@settings(max_examples=400, deadline=None)
@given(text=_TEXT, width=st.integers(1, 90), cap=st.none() | st.integers(1, 12))
def test_wrap_count_is_the_rows_wrap_makes(text: str, width: int, cap: int | None) -> None:
    rows = len(wrap(text, width))
    assert wrap_count(text, width, cap) == (rows if cap is None else min(rows, cap))


def test_printable_ascii_is_what_visible_leaves_alone() -> None:
    """`wrap_count`'s fast path: ASCII that `str.isprintable` accepts is drawn as written."""
    for code in range(128):
        char = chr(code)
        assert char.isprintable() == (visible(char) == char and char != "\n"), repr(char)


def test_wrap_count_stops_early_on_a_long_wide_line() -> None:
    """A collapsed piece needs only whether it has more rows than it shows."""
    text = "中" * 10_000_000
    assert wrap_count(text, 40, 9) == 9


def _boundary_lines(width: int) -> list[tuple[str, Any]]:
    """Every text a measured line shows, at lengths around each row boundary."""
    lines: list[tuple[str, Any]] = []
    for n in range(1, 2 * width + 12):
        text = "x" * n
        call = {"function": {"arguments": text}}
        lines += [
            ("message", {"role": "user", "content": text}),
            ("message", {"role": "user", "content": text * 3 + "\n" + text}),
            ("message", {"role": "assistant", "content": "", "tool-calls": [call]}),
            ("tool-dispatched", {"arguments": text}),
            ("tool-dispatched", {"arguments": {"k": text}}),
            ("tool-settled", {"error": text}),
            ("tool-settled", {"reason": text}),
            ("tool-settled", {"artifact": {"file": text, "bytes": 5, "digest": text}}),
        ]
    return lines


@pytest.mark.parametrize("width", [20, 33, 80])
def test_the_measure_is_the_builders_count_at_every_row_boundary(
    width: int, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    lines = _boundary_lines(width)
    path.write_bytes(b"\n".join(_envelope(k, p, n) for n, (k, p) in enumerate(lines)) + b"\n")
    assert _check(path, width) == len(lines)

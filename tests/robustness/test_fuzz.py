"""Bounded fuzzing: random and mutated bytes never make the reader, parser or check raise."""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from pathlib import Path

from _support import REFERENCE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_view.core.check import run_check
from transcript_view.core.formats import NotATranscript
from transcript_view.core.markers import parse_markers
from transcript_view.core.report import verify
from transcript_view.core.transcript import LineProblem, Transcript, TranscriptError

SEED_LINES = (REFERENCE / "many.jsonl").read_bytes().split(b"\n")[:12]
MARKERISH = st.sampled_from(
    [
        "[... elided ",
        "1,234",
        " chars (",
        " bytes total); full result: ",
        " bytes total); full result could not be stored",
        " sha256 ",
        "a" * 64,
        " ...]",
        "../x.txt",
        "\x00",
        "\n",
        ", sha256 ",
        "-1",
        ",",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(MARKERISH, st.text(max_size=8)), max_size=30).map("".join))
def test_marker_parser_never_raises_and_spans_are_sound(text: str) -> None:
    for m in parse_markers(text):
        assert text[m.start : m.end] == m.text
        assert m.file is None or m.why is None


def _mutate(data: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    out = bytearray(data)
    for kind, pos, value in edits:
        if not out:
            out.append(value)
            continue
        pos %= len(out)
        if kind == 0:
            out[pos] = value
        elif kind == 1:
            out.insert(pos, value)
        else:
            del out[pos]
    return bytes(out)


_EDITS = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 10**6), st.integers(0, 255)), max_size=12
)


def _check_everything(path: Path) -> None:
    try:
        report = verify(path)
    except TranscriptError as exc:
        # No line is any format's (or, for bytes that begin like zstd, not one line
        # decompresses): one message and exit 2, never a finding per line (with
        # `--json`, the PATH's one object says so).
        out = io.StringIO()
        assert run_check([path], as_json=True, strict=False, out=out) == 2
        (row,) = [json.loads(line) for line in out.getvalue().splitlines()]
        assert set(row) == {"transcript", "error"}
        if isinstance(exc, NotATranscript):
            assert "not a transcript" in row["error"]
        return
    with Transcript.open(path) as t:
        problems = [p for p in t if isinstance(p, LineProblem)]
    lines_with_findings = {f.line for f in report.findings}
    for p in problems:
        assert p.line in lines_with_findings, "every bad line becomes a finding"
    out = io.StringIO()
    assert run_check([path], as_json=True, strict=False, out=out) in (0, 1)
    json.loads(out.getvalue())


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=_EDITS, cut=st.integers(0, 12))
def test_mutated_reference_transcripts_never_raise(
    edits: list[tuple[int, int, int]], cut: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "many.jsonl"
        shutil.copytree(REFERENCE / "many.artifacts", Path(tmp) / "many.artifacts")
        data = b"\n".join(SEED_LINES[:cut]) + b"\n"
        path.write_bytes(_mutate(data, edits))
        _check_everything(path)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=600))
def test_random_bytes_never_raise(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "noise.jsonl"
        path.write_bytes(data)
        _check_everything(path)


@settings(max_examples=150, deadline=None)
@given(
    value=st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(max_size=10),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "id",
                        "type",
                        "v",
                        "payload",
                        "role",
                        "content",
                        "op-id",
                        "artifact",
                        "tool-calls",
                        "call-id",
                        "items",
                        "replaces-through-id",
                        "file",
                    ]
                ),
                children,
                max_size=5,
            )
        ),
        max_leaves=20,
    )
)
def test_json_that_is_not_an_envelope_never_raises(value: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "odd.jsonl"
        first = json.dumps({"id": "m", "type": "session-meta", "v": 1, "payload": {}})
        path.write_text(
            first
            + "\n"
            + json.dumps(value)
            + "\n"
            + json.dumps({"id": "x", "type": "message", "v": 1, "payload": value})
            + "\n",
            encoding="utf-8",
        )
        _check_everything(path)


def test_bytes_that_begin_like_zstd_and_are_not_are_one_refusal(tmp_path: Path) -> None:
    """Found by the fuzz test: zstd's magic and nothing readable is refused, not raised."""
    path = tmp_path / "noise.jsonl"
    path.write_bytes(b"(\xb5/\xfd")
    _check_everything(path)

"""A caller's measure of each line, taken where the analysis maps it (`analyse(measure=)`).

The viewer counts its rows this way (issue 11; `viewer.measure.BlockRows`).
The pass must give the measure every envelope line's bytes once, tell the
caller the results batch by batch in file order, and find exactly what it
finds without one.
"""

from __future__ import annotations

import json
from array import array
from pathlib import Path

import pytest
from _analysis_dump import dump
from _random_transcripts import mutate, random_transcript

import transcript_view.core.transcript as transcript_module
from transcript_view.core.analysis import analyse
from transcript_view.core.transcript import Transcript, parse_line_bytes_plain


class Sizes:
    """A measure anyone can check: the line's byte count, and its first byte."""

    def __call__(self, raw: bytes) -> int:
        return len(raw) * 1000 + (raw[0] if raw else 0)


def _want(t: Transcript) -> list[int]:
    """Each line's measure as the plain parser sees the line (-1: not an envelope)."""
    out = []
    for line in range(1, t.line_count + 1):
        start, _ = t.line_span(line)
        raw = t.raw_line(line)
        parsed = parse_line_bytes_plain(raw, line, start)
        if parsed is None or not hasattr(parsed, "data"):
            out.append(-1)
            continue
        out.append(Sizes()(raw))
    return out


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("seed", range(16))
def test_every_line_is_measured_once_in_order_and_the_analysis_is_the_same(
    seed: int, workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = random_transcript(seed, 150)
    if seed % 3 == 1:
        data = mutate(data, seed)
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 700)  # many batches
    told: list[tuple[int, list[int]]] = []

    def measured(first: int, rows: array[int]) -> None:
        told.append((first, list(rows)))

    with Transcript.open(path) as t:
        plain = dump(analyse(t, workers=1))
        got = analyse(t, workers=workers, measure=Sizes(), measured=measured)
        assert dump(got) == plain
        assert len(told) > 1
        assert [first for first, _ in told] == [
            1 + sum(len(rows) for _, rows in told[:i]) for i in range(len(told))
        ]
        assert [n for _, rows in told for n in rows] == _want(t)


def test_a_pass_that_starts_over_does_not_measure_again(tmp_path: Path) -> None:
    """A repeated id makes the pass run again exactly; the caller is told each line once."""
    line = {"id": "same", "payload": {"role": "user", "content": "x"}, "type": "message", "v": 1}
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(json.dumps(line).encode() for _ in range(3)) + b"\n")
    told: list[int] = []
    with Transcript.open(path) as t:
        analysis = analyse(t, measure=Sizes(), measured=lambda first, rows: told.extend(rows))
    assert any("already used" in f.message for f in analysis.findings)  # it did start over
    assert len(told) == 3

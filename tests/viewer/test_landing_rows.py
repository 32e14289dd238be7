"""An analysis landing recounts only the blocks whose rows it can change.

Issue 11: on a 1 GiB open with 5,000 artifacts, the landing recounted every
marker line (5,000 builds, a second of the GIL) while the artifact check
waited for it, though nearly every marker was "checking" before and after.
`AnalysisState.adopt` now returns only the lines whose marker rows read
something different (`_marker_look`), plus every line with findings.

The property: build every block's count before an analysis lands (the
provisional rule) and after it, and again after files are checked and a
second analysis lands; every block whose count changed is on a line `adopt`
returned. On the reference fixtures, and random and mutated transcripts.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from _random_transcripts import mutate, random_transcript
from _support import REFERENCE, REFERENCE_TRANSCRIPTS, one_read_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_view.core.analysis import analyse
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import check_file
from transcript_view.viewer.blocks import FileSource
from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion


def _counts(source: FileSource) -> list[int]:
    return [source.build(i, count_only=True).count for i in range(source.available())]


def _changed_lines(before: list[int], after: list[int]) -> set[int]:
    """Lines (1-based: block i is line i + 1) whose count differs."""
    return {i + 1 for i, (b, a) in enumerate(zip(before, after, strict=True)) if b != a}


def _hold(path: Path, width: int) -> int:
    """Check the property on one transcript; returns how many marker lines were spared."""
    with Transcript.open(path) as t:
        state = AnalysisState()
        source = FileSource(t, BlockContext(state, {}, Expansion(), width=width))
        source.index_complete = True
        provisional = _counts(source)
        analysis = analyse(t)
        changed = state.adopt(analysis)
        landed = _counts(source)
        assert _changed_lines(provisional, landed) <= changed
        spared = len({s.line for s in analysis.sites} - changed)
        # Files checked: each check's recount is `record`'s to say (tested on its own);
        # here the counts are taken afresh, then a second analysis lands on them.
        ledger = state.ledger
        assert ledger is not None
        directory = t.artifact_dir
        for name in ledger.wanted():
            state.record(check_file(directory, name))
        checked = _counts(source)
        again = state.adopt(analyse(t))
        assert _changed_lines(checked, _counts(source)) <= again
        return spared


@pytest.mark.parametrize("stem", REFERENCE_TRANSCRIPTS)
def test_landing_recounts_what_it_changes_in_the_fixtures(stem: str) -> None:
    _hold(REFERENCE / f"{stem}.jsonl", 100)


def _write(tmp: Path, data: bytes, seed: int) -> Path:
    """The transcript and an artifact directory holding some of the files it names."""
    path = tmp / f"t{seed}.jsonl"
    path.write_bytes(data)
    store = tmp / f"t{seed}.artifacts"
    store.mkdir(exist_ok=True)
    rng = random.Random(seed)
    for name in ("a.txt", "b.txt", *(f"{i}.txt" for i in range(9))):
        if rng.random() < 0.6:
            (store / name).write_bytes(rng.randbytes(rng.randrange(0, 200)))
    return path


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6), mutated=st.booleans(), width=st.sampled_from([40, 100]))
def test_landing_recounts_what_it_changes(
    tmp_path: Path, seed: int, mutated: bool, width: int
) -> None:
    data = random_transcript(seed, 40)
    if mutated:
        data = mutate(data, seed)
    _hold(_write(tmp_path, data, seed), width)


def test_landing_spares_markers_still_checking(tmp_path: Path) -> None:
    """What the change is for: markers whose badge and findings stay are not recounted."""
    spared = sum(
        _hold(_write(tmp_path, random_transcript(seed, 40), seed), 100) for seed in range(20)
    )
    assert spared > 0


def test_landing_recounts_a_marker_the_pass_chose_again(tmp_path: Path) -> None:
    """A tool that printed a marker: the first one on its own line was taken as the
    excerpt's own until the pass ended, which chose the one the settle describes."""
    path = tmp_path / "printed.jsonl"
    printed = (
        "[... elided 9,999 chars (12,345 bytes total); full result: "
        "someone-elses-file.txt sha256 " + "e" * 64 + " ...]"
    )
    rows = [f"row {i:03d}: the quick brown fox jumps over the lazy dog" for i in range(40)]
    one_read_run(path, "cat the old transcript", "\n".join(["it printed:", printed, *rows]))
    with Transcript.open(path) as t:
        analysis = analyse(t)
    [line] = {s.line for s in analysis.sites if s.role == "tool"}
    flags = [s.quoted for s in analysis.sites if s.line == line]
    assert flags == [True, False], "the pass chose the second marker"
    differs = 0
    for width in range(40, 121):
        with Transcript.open(path) as t:
            state = AnalysisState()
            source = FileSource(t, BlockContext(state, {}, Expansion(), width=width))
            source.index_complete = True
            before = source.build(line - 1, count_only=True).count
            changed = state.adopt(analyse(t))
            differs += source.build(line - 1, count_only=True).count != before
            assert line in changed
    assert differs, "at some width the two looks take other rows"

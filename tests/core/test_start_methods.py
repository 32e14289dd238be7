"""The pipeline gives the same results whatever way its worker processes start.

Ids are compared across processes by the run's `IdKeys` (`core.keys`), which
are Python's `hash` only where the workers fork (it agrees only between a
process and its forked children); so a pass mapped in workers started by fork,
forkserver or spawn is the pass mapped here. Each start method the system has
runs every pool of the project (`parallel.ordered`): the three formats' passes
(the reference's with the viewer's row measure, whose counts must arrive once
each, in order), the artifact checks, `--check` of several files, and the line
index's scan.
"""

from __future__ import annotations

import multiprocessing
from array import array
from pathlib import Path

import pytest
from _analysis_dump import dump, dump_session
from _random_transcripts import random_transcript
from _sessions import random_claude_session, random_codex_rollout

import transcript_view.core.transcript as transcript_module
from transcript_view.core import check as check_module
from transcript_view.core import parallel, verification
from transcript_view.core.analysis import analyse
from transcript_view.core.formats.claude_code import analyse_claude
from transcript_view.core.formats.codex import analyse_codex
from transcript_view.core.formats.detect import Format
from transcript_view.core.keys import IdKeys
from transcript_view.core.transcript import Transcript
from transcript_view.viewer.measure import BlockRows

METHODS = [
    m for m in ("fork", "forkserver", "spawn") if m in multiprocessing.get_all_start_methods()
]


@pytest.fixture(params=METHODS)
def method(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Workers start this way for the test; runs are small, so a file has many."""
    monkeypatch.setattr(parallel, "START_METHOD", request.param)
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 900)
    return str(request.param)


def _measured(t: Transcript, workers: int) -> tuple[dict[str, object], list[int]]:
    counts: list[int] = []
    told: list[int] = []

    def measured(first: int, rows: array[int]) -> None:
        assert first == len(counts) + 1, "measures out of order, or told twice"
        told.append(first)
        counts.extend(rows)

    a = analyse(t, workers=workers, measure=BlockRows(80, Format.REFERENCE), measured=measured)
    assert len(told) > 1 or workers == 1
    return dump(a), counts


@pytest.mark.parametrize("seed", [2, 5])
def test_the_reference_pass_and_its_measure(tmp_path: Path, method: str, seed: int) -> None:
    """Odd seeds repeat ids: the pass then runs again with exact ids, in workers too."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(seed, 150))
    with Transcript.open(path) as t:
        assert len(t.line_ranges()) > 2
        here = _measured(t, 1)
        there = _measured(t, 2)
    assert there == here


def test_the_claude_code_and_codex_passes_and_their_measure(tmp_path: Path, method: str) -> None:
    """The viewer's measure (`BlockRows`) goes to the workers with the pass."""
    session = random_claude_session(tmp_path / "projects" / "p", 7, 150)
    rollout = random_codex_rollout(tmp_path / "r.jsonl", 7, 200)
    cases = ((session, analyse_claude, Format.CLAUDE_CODE), (rollout, analyse_codex, Format.CODEX))
    for path, read, fmt in cases:
        with Transcript.open(path) as t:
            assert len(t.line_ranges()) > 2
            told: dict[int, list[int]] = {1: [], 2: []}
            dumps = {}
            for workers, counts in told.items():

                def measured(first: int, rows: array[int], counts: list[int] = counts) -> None:
                    assert first == len(counts) + 1, "measures out of order, or told twice"
                    counts.extend(rows)

                a = read(t, workers=workers, measure=BlockRows(60, fmt), measured=measured)
                dumps[workers] = dump_session(a)
            assert dumps[2] == dumps[1]
            assert told[2] == told[1] and len(told[1]) == t.line_count


def test_the_artifact_checks(tmp_path: Path, method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verification, "PARALLEL_CHECK_BYTES", 1)
    names = []
    for i in range(12):
        name = f"{i}.txt"
        (tmp_path / name).write_text(f"line {i}\n" * (i * 50) + "é\U0001f600\n")
        names.append(name)
    names.append("missing.txt")
    here = list(verification.iter_checks(tmp_path, names, workers=1))
    there = list(verification.iter_checks(tmp_path, names, workers=2))
    assert there == here


def test_check_of_several_files(tmp_path: Path, method: str) -> None:
    targets = []
    for seed in range(5):
        path = tmp_path / f"{seed}.jsonl"
        path.write_bytes(random_transcript(seed, 40))
        targets.append((path, True))
    here = list(check_module._outcomes(targets, None, 1, True))
    there = list(check_module._outcomes(targets, None, 2, True))
    assert there == here


def test_the_line_index_scan(tmp_path: Path, method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan in processes (the pure path's: the native scanner uses threads)."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(3, 300))
    with Transcript.open(path) as t:
        want = [t.line_span(i) for i in range(1, t.line_count + 1)]
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(transcript_module, "SCAN_CHUNK", 4096)
    with Transcript(path) as t:
        assert t._build_index_pieces(0, path.stat().st_size, None, threads=False)
        assert [t.line_span(i) for i in range(1, t.line_count + 1)] == want


def test_keys_made_in_a_worker_are_the_parents(method: str) -> None:
    keys = IdKeys.new()
    ids = ["call_1", "", "é", "\ud800", "a\x00", "a", "\U0001f600" * 40]
    there = list(parallel.ordered(_key_of, keys, ids, 2))
    assert there == [keys(i) for i in ids]


def _key_of(keys: IdKeys, text: str) -> int:
    return keys(text)

"""A ledger keeps of each file only the bytes its markers compare (issue 11).

A user's 300 MB transcript with 3,000 artifacts of 64 KiB grew the viewer
from 115 MB to 455 MB while the artifacts were checked, and it never came
back: every `FileCheck` kept up to 256 KiB of its file's start and end (the
whole of each small file, twice), and the ledger keeps every check. It now
keeps only the head and tail its markers' excerpts are compared with; a check
carried into a new ledger that needs more is hashed again.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from _runs import write_run

from transcript_view.core.analysis import analyse
from transcript_view.core.ledger import VerificationLedger
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import MarkerState, check_file


def _ledger(tmp_path: Path) -> tuple[VerificationLedger, str]:
    run = write_run(tmp_path)
    with Transcript.open(run.path) as t:
        return VerificationLedger(analyse(t)), run.artifact_name


def test_the_ledger_keeps_only_the_ends_its_markers_compare(tmp_path: Path) -> None:
    ledger, name = _ledger(tmp_path)
    check = check_file(tmp_path / "run.artifacts", name)
    assert len(check.head) == len(check.tail) == check.size  # a small file: all of it, twice
    ledger.record(check)
    site = ledger.analysis.excerpt_sites[0]
    assert ledger.state(site.key) is MarkerState.VERIFIED
    kept = ledger.checks[name]
    assert site.shape is not None
    assert (len(kept.head), len(kept.tail)) == (site.shape.head_bytes, site.shape.tail_bytes)
    assert len(kept.head) + len(kept.tail) < check.size // 2
    assert (kept.digest, kept.size, kept.chars) == (check.digest, check.size, check.chars)


def test_a_kept_check_carried_into_a_new_ledger_gives_the_same_verdicts(tmp_path: Path) -> None:
    ledger, name = _ledger(tmp_path)
    ledger.record(check_file(tmp_path / "run.artifacts", name))
    again = VerificationLedger(ledger.analysis, ledger.checks)
    assert again.wanted() == []  # not hashed again: what it keeps is what is compared
    site = ledger.analysis.excerpt_sites[0]
    assert again.state(site.key) is MarkerState.VERIFIED


def test_a_carried_check_cut_shorter_than_a_marker_needs_is_hashed_again(tmp_path: Path) -> None:
    ledger, name = _ledger(tmp_path)
    check = check_file(tmp_path / "run.artifacts", name)
    short = replace(check, head=check.head[:5])  # as another ledger, whose markers saw less, kept
    again = VerificationLedger(ledger.analysis, {name: short})
    assert again.wanted() == [name]  # never a false "excerpt mismatch" from a cut check

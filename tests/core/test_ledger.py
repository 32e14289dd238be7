"""The verification ledger: the one place marker states, findings and problems are decided.

`--check` records every file check at once; the viewer records them one by one
as its hashing worker posts them. Both must end in the same verdicts, and the
ledger must say at every step which markers changed, so these tests feed it
both ways and compare with `verify_transcript`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _runs import BADGE_CASES, write_key_without_marker, write_run
from _support import EXAMPLES, REFERENCE, REFERENCE_TRANSCRIPTS

from transcript_view.core.analysis import analyse
from transcript_view.core.findings import Severity
from transcript_view.core.ledger import VerificationLedger
from transcript_view.core.report import verify
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import MarkerState, check_file, list_orphans

CORPUS = [REFERENCE / f"{stem}.jsonl" for stem in REFERENCE_TRANSCRIPTS] + [
    EXAMPLES / "demo.jsonl",
    EXAMPLES / "broken.jsonl",
]


def _fed_one_by_one(path: Path) -> VerificationLedger:
    """A ledger fed as the viewer feeds it: one check at a time, then the orphans."""
    with Transcript(path) as t:
        t.build_index()
        analysis = analyse(t)
    ledger = VerificationLedger(analysis)
    directory = analysis.transcript.artifact_dir
    for name in ledger.wanted():
        ledger.record(check_file(directory, name))
    ledger.record_orphans(list_orphans(directory, analysis.named_files()))
    return ledger


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_fed_one_check_at_a_time_it_ends_where_check_does(path: Path) -> None:
    ledger = _fed_one_by_one(path)
    report = verify(path)
    assert ledger.complete
    assert ledger.findings() == report.findings
    assert ledger.verified == report.verified and ledger.markers == report.markers
    assert ledger.states() == [report.states[i] for i in range(report.markers)]


@pytest.mark.parametrize("state", BADGE_CASES)
def test_each_badge_case_is_decided_by_its_file_check(tmp_path: Path, state: str) -> None:
    run = write_run(tmp_path, state)
    with Transcript(run.path) as t:
        t.build_index()
        ledger = VerificationLedger(analyse(t))
    (site,) = ledger.analysis.excerpt_sites
    waits = state not in ("unsafe name", "not stored", "could not be stored")
    assert (ledger.state(site.key) is MarkerState.CHECKING) == waits
    assert ledger.wanted() == ([run.artifact_name] if waits else [])
    if waits:
        changed = ledger.record(check_file(run.artifact_dir, run.artifact_name))
        assert changed == [site.line]  # the marker's line is drawn again
        # The same check again changes nothing: the viewer repaints nothing.
        assert ledger.record(check_file(run.artifact_dir, run.artifact_name)) == []
    assert ledger.state(site.key).value == state
    assert ledger.is_bad(site.key) == ledger.state(site.key).is_bad
    assert not ledger.complete  # the directory has not been listed yet
    ledger.record_orphans([])
    assert ledger.complete


def test_a_settle_naming_a_missing_file_without_a_marker_is_two_problems(
    tmp_path: Path,
) -> None:
    """The case the viewer once counted as one problem while `--check` said two."""
    path = write_key_without_marker(tmp_path)
    with Transcript(path) as t:
        t.build_index()
        ledger = VerificationLedger(analyse(t))
    assert ledger.markers == 0
    assert [f.kind for f in ledger.problems()] == ["metadata-mismatch"]
    assert ledger.wanted() == ["6f7d06d2-f2c5-45a3-b687-c72851c5ef8b.txt"]
    assert not ledger.counts_chars(ledger.wanted()[0])
    assert [f.kind for f in ledger.line_findings(6)] == ["metadata-mismatch"]
    changed = ledger.record(check_file(path.parent / "keyonly.artifacts", ledger.wanted()[0]))
    assert changed == [6]  # the settle's line gains a row: the viewer draws it again
    assert [f.kind for f in ledger.line_findings(6)] == ["metadata-mismatch", "missing-artifact"]
    ledger.record_orphans([])
    assert [f.kind for f in ledger.problems()] == ["metadata-mismatch", "missing-artifact"]
    assert ledger.problem_lines() == [6]
    assert [f.kind for f in ledger.problems()] == [f.kind for f in verify(path).findings]


def test_checks_carried_over_are_not_wanted_again(tmp_path: Path) -> None:
    """Follow mode: a re-analysis keeps the files already hashed."""
    run = write_run(tmp_path, "verified")
    with Transcript(run.path) as t:
        t.build_index()
        first = VerificationLedger(analyse(t))
        first.record(check_file(run.artifact_dir, run.artifact_name))
        second = VerificationLedger(analyse(t), checks=first.checks)
    assert second.wanted() == []
    assert second.verified == 1
    assert second.check_of(run.artifact_name) is first.check_of(run.artifact_name)


def test_problems_are_errors_and_warnings_and_bad_markers_mark_their_lines(
    tmp_path: Path,
) -> None:
    run = write_run(tmp_path, "digest mismatch")
    (run.artifact_dir / "stray.txt").write_text("nobody names me")
    ledger = _fed_one_by_one(run.path)
    kinds = [(f.kind, f.severity) for f in ledger.problems()]
    assert kinds == [("digest-mismatch", Severity.ERROR)]
    # The orphan is a warning too, counted apart: `p` can reach no file no line names.
    assert [f.kind for f in ledger.orphan_warnings()] == ["orphan-artifact"]
    (site,) = ledger.analysis.excerpt_sites
    assert ledger.problem_lines() == [site.line]
    assert ledger.count(Severity.ERROR) == 1 and ledger.count(Severity.WARNING) == 1


def test_a_check_made_without_a_count_is_not_carried_to_a_marker_that_needs_one(
    tmp_path: Path,
) -> None:
    """A file first named only by a settle is checked without its grapheme count."""
    run = write_run(tmp_path, "verified")
    with Transcript(run.path) as t:
        t.build_index()
        analysis = analyse(t)
    uncounted = check_file(run.artifact_dir, run.artifact_name, count_chars=False)
    ledger = VerificationLedger(analysis, checks={run.artifact_name: uncounted})
    assert ledger.wanted() == [run.artifact_name]
    counted = check_file(run.artifact_dir, run.artifact_name)
    assert VerificationLedger(analysis, checks={run.artifact_name: counted}).wanted() == []

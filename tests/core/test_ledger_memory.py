"""A ledger keeps of each file only the bytes its markers compare (issue 11).

A user's 300 MB transcript with 3,000 artifacts of 64 KiB grew the viewer
from 115 MB to 455 MB while the artifacts were checked, and it never came
back: every `FileCheck` kept up to 256 KiB of its file's start and end (the
whole of each small file, twice), and the ledger keeps every check. It then
kept only the head and tail its markers' excerpts are compared with, which
was still ~16 KB an excerpt: 5,000 artifacts beside a 1 GiB transcript took
the viewer to 347 MiB and `--check` to 830 MB (it held every check, ends and
all, until the last was made). A kept check now holds the sha256 of each end
a marker compares instead of the bytes, `--check` records each check as it is
made, and the checks ask only for the ends the markers compare. A check
carried into a new ledger that needs other ends is hashed again.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _runs import write_run

from transcript_view.core import verification
from transcript_view.core.analysis import analyse
from transcript_view.core.ledger import VerificationLedger
from transcript_view.core.report import verify
from transcript_view.core.session import Session
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import (
    FileCheck,
    FileState,
    MarkerState,
    check_file,
    iter_checks,
)


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
    assert (kept.head, kept.tail) == (b"", b"")
    assert set(kept.edge_digests) == {
        ("head", site.shape.head_bytes),
        ("tail", site.shape.tail_bytes),
    }
    assert kept.edge_digest("head", site.shape.head_bytes) == site.shape.head_sha256
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


def test_a_kept_check_still_tells_an_excerpt_that_is_not_the_files(tmp_path: Path) -> None:
    """The digests kept are the file's ends, not the marker's: an excerpt whose head is not
    the file's start stays a mismatch when the check is carried into a new ledger."""
    run = write_run(tmp_path, "excerpt mismatch")
    with Transcript.open(run.path) as t:
        ledger = VerificationLedger(analyse(t))
    ledger.record(check_file(run.artifact_dir, run.artifact_name))
    site = ledger.analysis.excerpt_sites[0]
    assert ledger.state(site.key) is MarkerState.EXCERPT_MISMATCH
    assert ledger.checks[run.artifact_name].head == b""
    again = VerificationLedger(ledger.analysis, ledger.checks)
    assert again.wanted() == []
    assert again.state(site.key) is MarkerState.EXCERPT_MISMATCH
    assert again.findings_of(site.key) == ledger.findings_of(site.key)


def test_a_check_reads_only_the_ends_its_ledger_compares(tmp_path: Path) -> None:
    ledger, name = _ledger(tmp_path)
    site = ledger.analysis.excerpt_sites[0]
    assert site.shape is not None
    head, tail = ledger.edge_bytes(name)
    assert (head, tail) == (site.shape.head_bytes, site.shape.tail_bytes)
    (check,) = iter_checks(tmp_path / "run.artifacts", [name], edges=ledger.edge_bytes)
    assert (len(check.head), len(check.tail)) == (head, tail)
    ledger.record(check)
    assert ledger.state(site.key) is MarkerState.VERIFIED


@pytest.mark.parametrize("workers", [1, 2])
def test_a_check_is_cut_where_it_is_made_as_the_ledger_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """`iter_checks(keep=...)` cuts each check to the digests a ledger would keep, in
    the worker process that made it (the pool, with the threshold lowered): what comes
    back is what the ledger keeps of the whole check, and it keeps it as it is."""
    monkeypatch.setattr(verification, "PARALLEL_CHECK_BYTES", 1)
    path = _stored(tmp_path, 6)
    with Transcript.open(path) as t:
        ledger, whole = VerificationLedger(analyse(t)), VerificationLedger(analyse(t))
    names = ledger.wanted()
    keep = ledger.ends_to_keep(names)
    assert keep is not None and len(names) == 6
    directory = tmp_path / "many.artifacts"
    cut = list(iter_checks(directory, names, workers=workers, edges=ledger.edge_bytes, keep=keep))
    assert all(c.head == c.tail == b"" and len(c.edge_digests) == 2 for c in cut)
    for check in cut:
        ledger.record(check)
        assert ledger.checks[check.name] is check  # kept as it came
        whole.record(check_file(directory, check.name))
    assert ledger.checks == whole.checks


def test_thousands_of_kept_checks_hold_no_file_bytes(tmp_path: Path) -> None:
    """What a ledger keeps a check does not grow with the ends its markers saw."""
    ledger, name = _ledger(tmp_path)
    check = check_file(tmp_path / "run.artifacts", name)
    ledger.record(check)
    kept = ledger.checks[name]
    held = len(kept.head) + len(kept.tail) + sum(len(d) for d in kept.edge_digests.values())
    assert held <= 2 * 64  # two hex digests, whatever the excerpt's size


def _stored(tmp_path: Path, results: int) -> Path:
    """A transcript with `results` excerpted tool results, each stored (limit 100)."""
    path = tmp_path / "many.jsonl"
    with Session.create(path, {"t": 1}, limit=100) as s:
        for i in range(results):
            call = {"id": f"c{i}", "type": "function", "function": {"name": "t", "arguments": "{}"}}
            s.append_message("assistant", "", tool_calls=[call])
            op = s.append_tool_dispatched(f"c{i}", "t", "{}")
            s.settle(op, f"c{i}", f"result {i}\n" + "row of output\n" * 400)
    return path


def test_check_records_each_file_as_it_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--check` never holds every file's check at once: each is recorded before the next
    file is read, read with only the ends it needs, and cut to what the ledger keeps of
    them where it was made (`keep`: a worker process sends digests back, not bytes)."""
    path = _stored(tmp_path, 3)
    events: list[str] = []
    read: list[tuple[int, int]] = []
    real_check, real_record = verification.check_file, VerificationLedger.record

    def check_file_spy(*args: Any, **kwargs: Any) -> FileCheck:
        events.append("read")
        read.append((kwargs["edge_bytes"], kwargs["tail_bytes"]))
        return real_check(*args, **kwargs)

    def record_spy(self: VerificationLedger, check: FileCheck) -> list[int]:
        (site,) = [s for s in self.analysis.excerpt_sites if s.marker.file == check.name]
        assert site.shape is not None
        ends = (site.shape.head_bytes, site.shape.tail_bytes)
        assert read[-1] == ends
        assert (check.head, check.tail) == (b"", b"")
        assert set(check.edge_digests) == {("head", ends[0]), ("tail", ends[1])}
        events.append("record")
        return real_record(self, check)

    monkeypatch.setattr(verification, "check_file", check_file_spy)
    monkeypatch.setattr(VerificationLedger, "record", record_spy)
    report = verify(path)
    assert (report.markers, report.verified) == (3, 3)
    assert events == ["read", "record"] * 3


def test_the_counts_kept_as_verdicts_change_are_the_counts_walked(tmp_path: Path) -> None:
    """`verified`, `matched`, `present` and `problem_count` are tallied as each verdict
    changes (the header asks after every batch of checks); they must always be what a walk
    of every marker says."""
    path = _stored(tmp_path, 6)
    directory = path.parent / "many.artifacts"
    names = sorted(p.name for p in directory.iterdir())
    with Transcript.open(path) as t:
        ledger = VerificationLedger(analyse(t))

    def walked() -> tuple[int, int, int, int]:
        states = ledger.states()
        return (
            states.count(MarkerState.VERIFIED),
            states.count(MarkerState.MATCHES),
            states.count(MarkerState.PRESENT),
            len(ledger.problems()),
        )

    def tallied() -> tuple[int, int, int, int]:
        return ledger.verified, ledger.matched, ledger.present, ledger.problem_count

    rng = random.Random(7)
    good = {n: check_file(directory, n) for n in names}
    assert tallied() == walked() == (0, 0, 0, 0)
    for _ in range(60):
        name = rng.choice(names)
        how = rng.choice(["good", "missing", "resized", "good"])
        check = good[name]
        if how == "missing":
            check = replace(check, state=FileState.MISSING, detail="gone")
        elif how == "resized":
            check = replace(check, size=check.size + 1)
        ledger.record(check)
        assert tallied() == walked(), how
    ledger.record_orphans([])
    assert tallied() == walked()
    for check in good.values():
        ledger.record(check)
    assert tallied() == walked() == (6, 0, 0, 0)


def test_a_sidecars_end_is_neither_read_nor_kept() -> None:
    """A Claude Code marker's verdict reads its sidecar's start (the preview) and size,
    never its end: 2,000 sidecars of 200 KB had cost `--check` 835 MB, half of it ends."""
    from _support import CLAUDE_EXAMPLE

    from transcript_view.core.formats.detect import Format
    from transcript_view.core.formats.readers import analyse_as
    from transcript_view.core.report import analysis_dir

    with Transcript.open(CLAUDE_EXAMPLE) as t:
        ledger = VerificationLedger(analyse_as(t, Format.CLAUDE_CODE))
    directory = analysis_dir(ledger.analysis)
    assert directory is not None
    wanted = ledger.wanted()
    assert wanted
    whole = VerificationLedger(ledger.analysis)
    for name in wanted:
        assert ledger.edge_bytes(name)[1] == 0
        (check,) = iter_checks(directory, [name], edges=ledger.edge_bytes)
        assert check.tail == b""
        ledger.record(check)
        whole.record(check_file(directory, name))  # both ends, as before
        assert ledger.checks[name].tail == b""
    assert ledger.states() == whole.states()
    assert ledger.findings() == whole.findings()

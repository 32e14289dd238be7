"""Thousands of badges turning at once without a build each on the UI thread (issue 11).

A user's 300 MB transcript with 3,000 markers sat at "checking artifacts
0/3,000" for 16 s and then jumped: every hashed file was a message, and every
message rebuilt its marker's block in both views on the UI thread (a
millisecond or more each), so the screen fell behind the hashing. Checks now
come in batches, and blocks that are not on screen are counted again in a
worker (`Recounted`) instead of built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync
from _screen import assert_layout_consistent
from _support import generate

from transcript_view.core.verification import FileCheck, FileState
from transcript_view.viewer import background, workers
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.blocks import FileSource
from transcript_view.viewer.document import Document
from transcript_view.viewer.layout import SPAN
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.messages import ArtifactsChecked


@pytest.fixture
def many_markers(tmp_path: Path) -> Path:
    """A generated transcript with 60 stored artifacts, every third one gone."""
    path = generate(tmp_path / "many.jsonl", "300K", 60)
    for i, artifact in enumerate(sorted((tmp_path / "many.artifacts").iterdir())):
        if i % 3 == 0:
            artifact.unlink()  # a missing artifact: its marker gains a finding row
    return path


def test_checks_come_in_batches_in_order(
    many_markers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transcript_view.core.analysis import analyse
    from transcript_view.core.ledger import VerificationLedger
    from transcript_view.core.transcript import Transcript

    with Transcript.open(many_markers) as t:
        ledger = VerificationLedger(analyse(t))
    job = workers.VerifyJob.of(ledger)
    clock = iter(range(10**6))
    monkeypatch.setattr(background.time, "monotonic", lambda: next(clock) * 0.03)
    posted: list[Any] = []
    workers.verify_files(job, posted.append)
    batches = [m for m in posted if isinstance(m, ArtifactsChecked)]
    assert len(batches[0].checks) == 1  # the first at once
    assert 1 < len(batches) < len(job.names)  # then a few per message, not one a file
    assert [c.name for b in batches for c in b.checks] == job.names
    assert [b.done for b in batches][-1] == batches[-1].total == len(job.names)


def test_checks_come_cut_to_what_the_ledger_keeps(many_markers: Path) -> None:
    """A reference file's check is posted as the digests of the ends its markers compare:
    5,000 of them with their ends (80 MB) held the UI over its budget while they queued.
    Recorded, they give the verdicts whole checks give."""
    from transcript_view.core.analysis import analyse
    from transcript_view.core.ledger import VerificationLedger
    from transcript_view.core.transcript import Transcript
    from transcript_view.core.verification import check_file

    with Transcript.open(many_markers) as t:
        analysis = analyse(t)
    cut, whole = VerificationLedger(analysis), VerificationLedger(analysis)
    job = workers.VerifyJob.of(cut)
    assert job.files is not None and job.files.needs is not None
    posted: list[Any] = []
    workers.verify_files(job, posted.append)
    checks = [c for m in posted if isinstance(m, ArtifactsChecked) for c in m.checks]
    ok = [c for c in checks if c.state is FileState.OK]
    assert ok and all(c.head == c.tail == b"" and c.edge_digests for c in ok)
    for check in checks:
        cut.record(check)
        whole.record(check_file(job.files.directory, check.name))
    assert [cut.state(s.key) for s in analysis.sites] == [
        whole.state(s.key) for s in analysis.sites
    ]
    assert cut.problems() == whole.problems() and cut.checks == whole.checks


class _Server:
    """A pass server that checks the first files and then fails, is told to stop, or
    finds another caller waiting for it (`wanted`) after the first batch.

    As the real one does, it sends the batch it was checking when told to stop
    before it stops; "finishes anyway" is told as it sends its last batch.
    """

    busy = False

    def __init__(self, how: str) -> None:
        self.how = how
        self.wanted = False
        self.ran = False

    def run(self, job: Any, transcript: Any, files: Any, start: int, *, on_event: Any) -> Any:
        self.ran = True
        batches = list(files.batches())
        told = False
        for i, batch in enumerate(batches):
            refused = not on_event("checks", batch)
            if told:
                return None  # the cancel is read after the next batch was sent
            told = refused
            self.wanted = self.how in ("waited for", "finishes anyway")
            if self.how == "fails" and i == 1:
                raise workers.parallel.PassFailed("OSError: the disk went away")
            if self.how == "finishes anyway" and i < len(batches) - 2:
                self.wanted = False
        if told and self.how != "finishes anyway":
            raise AssertionError("told to stop, it went on")
        return batches[-1][1]


@pytest.mark.parametrize("how", ["fails", "waited for", "finishes anyway", "cancelled"])
def test_what_the_server_did_not_check_is_checked_here(
    many_markers: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A server that fails part-way, or gives way part-way to a pass that waits for it
    (posting the batch it was on, or all of them if it ends first), leaves the rest to
    this process (each file once, in order); one whose screen closed part-way stops,
    and nothing more is posted."""
    from transcript_view.core.analysis import analyse
    from transcript_view.core.ledger import VerificationLedger
    from transcript_view.core.transcript import Transcript

    with Transcript.open(many_markers) as t:
        job = workers.VerifyJob.of(VerificationLedger(analyse(t)))
    monkeypatch.setattr(background, "CHECK_POST_SECONDS", 0)  # a batch a file, on any machine
    monkeypatch.setattr(workers, "SERVER_CHECK_FILES", 2)  # the fixture's 60 go to the server
    server = _Server(how)
    monkeypatch.setattr(workers.parallel, "_server", server)
    posted: list[Any] = []
    workers.verify_files(job, posted.append, lambda: how == "cancelled" and len(posted) == 1)
    assert server.ran
    checked = [c.name for m in posted if isinstance(m, ArtifactsChecked) for c in m.checks]
    if how == "cancelled":
        assert len(posted) == 1 and 0 < len(checked) < len(job.names)
    else:
        assert checked == job.names
        assert type(posted[-1]).__name__ == "OrphansFound"


def test_counts_of_many_blocks_are_taken_in_one_pass() -> None:
    class Source:
        view = "file"

        def available(self) -> int:
            return 5

    doc = Document(Source())  # type: ignore[arg-type]
    doc.extend(0, [1, 1, 1, 1, 1])
    assert doc.set_counts({1: 3, 3: 2, 9: 4})  # 9 is not laid out: ignored
    assert list(doc.counts) == [1, 3, 1, 2, 1] and doc.layout.starts() == [0, 1, 4, 5, 7, 8]
    assert not doc.set_counts({1: 3})  # nothing changed
    doc.dirty.update({2, 7})
    assert doc.take_dirty() == [2] and doc.dirty == {7}


async def _checked(pilot: Any) -> tuple[TranscriptScreen, Any]:
    """The transcript screen once its analysis landed and every file was checked."""
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
    ledger = screen.state.ledger
    assert ledger is not None and ledger.complete
    return screen, ledger


def _all_gone(ledger: Any) -> list[FileCheck]:
    """A check for every file the ledger recorded, each found missing this time."""
    return [FileCheck(n, FileState.MISSING, "gone") for n in sorted(ledger.checks)]


@sync
async def test_badges_turning_off_screen_are_counted_in_a_worker_not_built(
    many_markers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[int] = []
    build = FileSource.build

    def spy(self: FileSource, index: int, expand: bool = False, *, count_only: bool = False) -> Any:
        if not count_only:
            built.append(index)
        return build(self, index, expand, count_only=count_only)

    monkeypatch.setattr(FileSource, "build", spy)
    app = TranscriptApp(many_markers)
    async with app.run_test(size=(100, 20)) as pilot:
        screen, ledger = await _checked(pilot)
        assert_layout_consistent(screen)  # the missing ones' finding rows are counted
        assert screen.header.problems == 20
        # Every marker's badge turns again (say, its file was checked anew) ...
        built.clear()
        checks = _all_gone(ledger)
        screen.post_message(ArtifactsChecked(checks, len(checks), len(checks)))
        await settle(pilot)
        # ... and only blocks on or near the screen were built, not one per marker,
        lines = {s.line for s in screen.analysis.sites}
        assert len(built) < len(lines) // 2, (len(built), len(lines))
        assert_layout_consistent(screen)  # yet every count is right (this builds them all)


@sync
async def test_checks_asked_for_by_a_replaced_analysis_are_dropped(many_markers: Path) -> None:
    """A batch that lands after a newer analysis was adopted was cut to the old ledger's
    ends: it is not recorded (the new ledger's job checks those files again)."""
    from transcript_view.core.analysis import analyse
    from transcript_view.core.transcript import Transcript

    app = TranscriptApp(many_markers)
    async with app.run_test(size=(100, 20)) as pilot:
        screen, ledger = await _checked(pilot)
        problems = screen.header.problems
        with Transcript.open(many_markers) as t:
            older = analyse(t)
        checks = _all_gone(ledger)
        screen.post_message(ArtifactsChecked(checks, len(checks), len(checks), older))
        await settle(pilot)
        assert screen.header.problems == problems
        assert all(c.state is FileState.OK for c in ledger.checks.values() if c.size)
        # The same batch for the analysis on show is taken.
        screen.post_message(ArtifactsChecked(checks, len(checks), len(checks), screen.analysis))
        await settle(pilot)
        assert screen.header.problems > problems


def test_a_badge_that_keeps_its_width_is_redrawn_not_recounted(tmp_path: Path) -> None:
    """ "checking" and "verified" are as wide: a file found as its marker says keeps the
    marker's rows, so the view redraws that line without counting it again; a missing
    file adds a finding row, and its line is counted again."""
    from _runs import write_run

    from transcript_view.core.analysis import analyse
    from transcript_view.core.transcript import Transcript
    from transcript_view.core.verification import check_file
    from transcript_view.viewer.context import AnalysisState

    run = write_run(tmp_path)
    with Transcript.open(run.path) as t:
        analysis = analyse(t)
    state = AnalysisState()
    state.adopt(analysis, {})
    site = analysis.excerpt_sites[0]
    recorded = state.record(check_file(run.artifact_dir, run.artifact_name))
    assert recorded.rows == [] and recorded.look == [site.line]
    gone = state.record(FileCheck(run.artifact_name, FileState.MISSING, "gone"))
    assert gone.rows == [site.line] and gone.look == []


def test_same_rows_is_the_builders_count(tmp_path: Path) -> None:
    """Wherever `same_rows` says a verdict change keeps the rows, the file view's builder
    gives the marker's block the same count in both verdicts, at every width (and where
    the badges' widths differ, some width gives other counts: the test can tell)."""
    from _runs import write_run

    from transcript_view.core.analysis import analyse
    from transcript_view.core.transcript import Transcript
    from transcript_view.core.verification import MarkerState
    from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion, same_rows

    run = write_run(tmp_path)
    with Transcript.open(run.path) as t:
        analysis = analyse(t)
        site = analysis.excerpt_sites[0]
        state = AnalysisState()
        state.adopt(analysis, {})
        ledger = state.ledger
        assert ledger is not None
        told: set[tuple[MarkerState, MarkerState]] = set()
        for width in range(20, 220):  # a badge's width moves a row boundary at some
            counts = {}
            for badge in MarkerState:
                ledger._set_verdict(site.key, (badge, []))
                ctx = BlockContext(state, {}, Expansion(), width=width)
                source = FileSource(t, ctx)
                source.index_complete = True
                counts[badge] = source.build(site.line - 1).count
            for old in MarkerState:
                for new in MarkerState:
                    if same_rows((old, []), (new, [])):
                        assert counts[old] == counts[new], (width, old, new)
                    elif counts[old] != counts[new]:
                        told.add((old, new))
        assert (MarkerState.CHECKING, MarkerState.COULD_NOT_BE_STORED) in told


def test_a_block_costs_the_layout_twelve_bytes() -> None:
    """A 1 GiB transcript's two views lay out 4.2 M blocks: 8-byte counts had cost the UI
    17 MB of its 300 MiB budget (issue 11). Counts are 4 bytes, their prefix sums 8."""

    class Source:
        view = "file"

        def available(self) -> int:
            return 100_000

    doc = Document(Source())  # type: ignore[arg-type]
    doc.extend(0, [3] * 100_000)
    assert doc.layout.nbytes <= 12 * 100_000 + 8 * (100_000 // SPAN + 2)
    assert doc.total_rows == 300_000
    doc.reset()
    assert doc.counts.itemsize == 4

"""The worker bodies (`viewer.workers`), the load state and the inline-artifact life cycle,
driven without an App: `post` is a list's `append`, and what it collects is exactly what
the screen would have been sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _runs import Run, write_key_without_marker, write_run
from textual.message import Message

from transcript_view.core.analysis import analyse
from transcript_view.core.filelines import FileLines
from transcript_view.core.ledger import VerificationLedger
from transcript_view.core.records import MarkerSite, SiteKey
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import FileCheck, FileState, MarkerState
from transcript_view.viewer import workers
from transcript_view.viewer.inline import (
    Closed,
    Index,
    InlineArtifacts,
    Refused,
    Shown,
    row_bytes_for,
)
from transcript_view.viewer.load import LoadState, Phase
from transcript_view.viewer.load import Run as Running
from transcript_view.viewer.messages import (
    AnalysisFailed,
    AnalysisReady,
    Appended,
    ArtifactGrew,
    ArtifactOpened,
    ArtifactOpenFailed,
    ArtifactsChecked,
    IndexProgress,
    OrphansFound,
    Progress,
)

# -- worker bodies -------------------------------------------------------------------------------


def test_index_posts_progress_until_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = write_run(tmp_path)
    monkeypatch.setattr(workers, "FIRST_INDEX_BYTES", 200)
    monkeypatch.setattr(workers, "INDEX_STEP_BYTES", 500)
    posted: list[Message] = []
    with Transcript(run.path) as t:
        workers.index_transcript(t, posted.append)
        assert all(isinstance(m, IndexProgress) for m in posted)
        steps = [m for m in posted if isinstance(m, IndexProgress)]
        assert len(steps) > 2 and [m.complete for m in steps] == [False] * (len(steps) - 1) + [True]
        assert steps[-1].lines == t.line_count == 8
        assert steps[-1].done_bytes == steps[-1].total_bytes == run.path.stat().st_size


def test_index_stops_when_cancelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = write_run(tmp_path)
    monkeypatch.setattr(workers, "FIRST_INDEX_BYTES", 200)
    posted: list[Message] = []
    with Transcript(run.path) as t:
        workers.index_transcript(t, posted.append, lambda: True)
    assert len(posted) == 1


def test_analysis_posts_progress_then_the_analysis(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    posted: list[Message] = []
    with Transcript(run.path) as t:
        t.build_index()
        workers.run_analysis(t, None, posted.append)
    assert isinstance(posted[-1], AnalysisReady)
    assert posted[-1].analysis.envelopes == 8
    assert all(isinstance(m, Progress) and m.phase == "reading" for m in posted[:-1])


def test_a_failing_analysis_is_posted_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = write_run(tmp_path)

    def broken(*_args: object) -> None:
        raise RuntimeError("a bug in the pass")

    monkeypatch.setattr(workers, "analyse_as", broken)
    posted: list[Message] = []
    with Transcript(run.path) as t:
        workers.run_analysis(t, None, posted.append)
    assert [type(m) for m in posted] == [AnalysisFailed]
    assert isinstance(posted[0], AnalysisFailed)
    assert posted[0].error == "RuntimeError: a bug in the pass"


def test_verify_hashes_each_wanted_file_then_lists_orphans(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    (run.artifact_dir / "lost.txt").write_text("nobody names me")
    with Transcript(run.path) as t:
        t.build_index()
        analysis = analyse(t)
    ledger = VerificationLedger(analysis)
    posted: list[Message] = []
    workers.verify_files(workers.VerifyJob.of(ledger), posted.append)
    checked, found = posted
    assert isinstance(checked, ArtifactsChecked) and isinstance(found, OrphansFound)
    [check] = checked.checks
    assert (check.name, check.state, checked.done, checked.total) == (
        run.artifact_name, FileState.OK, 1, 1,
    )
    assert [o.name for o in found.orphans] == ["lost.txt"]
    # What the screen does with them: feed the ledger, nothing else.
    assert ledger.record(check) == [analysis.excerpt_sites[0].line]
    ledger.record_orphans(found.orphans)
    assert ledger.complete and ledger.verified == 1


def test_verify_wants_a_file_only_an_artifact_key_names(tmp_path: Path) -> None:
    """The viewer once hashed only the files markers name, and counted one problem less."""
    path = write_key_without_marker(tmp_path)
    with Transcript(path) as t:
        t.build_index()
        analysis = analyse(t)
    ledger = VerificationLedger(analysis)
    posted: list[Message] = []
    workers.verify_files(workers.VerifyJob.of(ledger), posted.append)
    for m in posted:
        if isinstance(m, ArtifactsChecked):
            for check in m.checks:
                ledger.record(check)
        elif isinstance(m, OrphansFound):
            ledger.record_orphans(m.orphans)
    kinds = sorted(f.kind for f in ledger.problems())
    assert kinds == ["metadata-mismatch", "missing-artifact"]


def test_open_artifact_posts_its_first_rows_then_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = write_run(tmp_path)
    monkeypatch.setattr(workers, "FIRST_INDEX_BYTES", 300)
    monkeypatch.setattr(workers, "INDEX_STEP_BYTES", 500)
    key = SiteKey(6, 151)
    posted: list[Message] = []
    workers.open_artifact(key, run.artifact_dir, run.artifact_name, None, 60, posted.append)
    opened, *grew = posted
    assert isinstance(opened, ArtifactOpened) and opened.site_key == key
    assert opened.check.detail == "being hashed"  # the hash is the verify worker's
    assert grew and all(isinstance(m, ArtifactGrew) and m.lines is opened.lines for m in grew)
    last = grew[-1]
    assert isinstance(last, ArtifactGrew) and last.rows == opened.lines.row_count
    assert opened.lines.complete
    opened.lines.close()


def test_open_artifact_fails_with_a_reason(tmp_path: Path) -> None:
    run = write_run(tmp_path, "missing")
    posted: list[Message] = []
    workers.open_artifact(
        SiteKey(6, 0), run.artifact_dir, run.artifact_name, None, 60, posted.append
    )
    (failed,) = posted
    assert isinstance(failed, ArtifactOpenFailed)
    assert failed.reason == f"{run.artifact_name}: missing"


def test_an_artifact_that_fails_part_way_says_why_and_keeps_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug: an error after the first rows escaped the worker (and killed the app)."""
    run = write_run(tmp_path)
    monkeypatch.setattr(workers, "FIRST_INDEX_BYTES", 300)
    real = FileLines.index
    calls = 0

    def index(self: FileLines, *args: Any, **kwargs: Any) -> bool:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise OSError(5, "Input/output error")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FileLines, "index", index)
    site = _site(run)
    key = site.key
    posted: list[Message] = []
    row_bytes = row_bytes_for(WIDTH)
    workers.open_artifact(
        key, run.artifact_dir, run.artifact_name, None, row_bytes, posted.append
    )
    opened, failed = posted
    assert isinstance(opened, ArtifactOpened) and isinstance(failed, ArtifactOpenFailed)
    assert "Input/output error" in failed.reason
    arts = InlineArtifacts()
    arts.toggle(key, site, WIDTH)
    shown = arts.opened(key, opened.lines, opened.check, site, MarkerState.CHECKING, WIDTH)
    assert shown is not None
    refused = arts.failed(key, failed.reason)
    assert refused is not None and refused.severity == "warning"
    assert key in arts  # the rows found so far stay on screen
    arts.close_all()


def test_poll_posts_how_many_lines_were_appended(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    posted: list[Message] = []
    with Transcript(run.path) as t:
        t.build_index()
        with run.path.open("a", encoding="utf-8") as f:
            f.write('{"not": "an envelope"}\n')
        workers.poll_transcript(t, posted.append)
    assert [(type(m), getattr(m, "new_lines", None)) for m in posted] == [(Appended, 1)]


# -- the load state ------------------------------------------------------------------------------


def test_load_state_walks_index_reading_checking_ready() -> None:
    load = LoadState()
    assert load.phase is Phase.INDEXING and load.phase.label == "indexing"
    assert load.want_analysis(first=True)
    assert load.phase is Phase.READING and load.analysis is Running.RUNNING
    assert not load.want_analysis(first=True)  # one pass at a time: remembered
    assert load.analysis is Running.STALE
    assert load.analysis_landed()  # ...and started when the first lands
    assert load.phase is Phase.CHECKING and load.phase.label == "checking artifacts"
    assert not load.analysis_landed()
    assert load.analysis is Running.IDLE
    load.checked()
    assert load.phase is Phase.READY and load.phase.label == ""


def test_load_state_polls_one_at_a_time_and_fails_cleanly() -> None:
    load = LoadState()
    assert load.want_poll() and not load.want_poll()
    load.polled()
    assert load.want_poll()
    load.want_analysis(first=False)
    load.analysis_failed()
    assert (load.phase, load.analysis, load.poll) == (Phase.FAILED, Running.IDLE, Running.IDLE)
    assert load.phase.label == ""


# -- the inline-artifact life cycle --------------------------------------------------------------


def _site(run: Run) -> MarkerSite:
    with Transcript(run.path) as t:
        t.build_index()
        (site,) = analyse(t).excerpt_sites
    return site


def _lines(run: Run, row_bytes: int) -> FileLines:
    lines = FileLines(run.artifact_dir / run.artifact_name, row_bytes=row_bytes)
    lines.index()
    return lines


def _placeholder(run: Run) -> FileCheck:
    return FileCheck(run.artifact_name, FileState.OK, "being hashed", size=2120)


WIDTH = 80


def test_open_grow_close(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    site = _site(run)
    arts = InlineArtifacts()
    job = arts.toggle(site.key, site, WIDTH)
    assert job == Index(site.key, run.artifact_name, row_bytes_for(WIDTH))
    assert arts.indexing(site.key) and site.key not in arts
    assert arts.toggle(site.key, site, WIDTH) is None  # a second enter while it is indexed
    lines = _lines(run, row_bytes_for(WIDTH))
    shown = arts.opened(site.key, lines, _placeholder(run), site, MarkerState.CHECKING, WIDTH)
    assert shown == Shown(site.key)
    art = arts[site.key]
    assert (art.lines, art.state, art.head_bytes, art.tail_bytes) == (
        lines, MarkerState.CHECKING, 150, 50,
    )
    assert arts.growing(site.key, lines) is art
    arts.grow(art, 3)
    assert art.known_rows == lines.row_count  # never fewer than before
    verified = FileCheck(run.artifact_name, FileState.OK, size=2120, digest="d" * 64)
    arts.checked(verified, lambda key: MarkerState.VERIFIED)
    assert (art.check, art.state) == (verified, MarkerState.VERIFIED)
    assert arts.toggle(site.key, site, WIDTH) == Closed(site.key)
    assert site.key not in arts and lines.closed


def test_what_lands_after_a_close_is_dropped(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    site = _site(run)
    arts = InlineArtifacts()
    arts.toggle(site.key, site, WIDTH)
    arts.close(site.key)  # closed while being indexed
    late = _lines(run, row_bytes_for(WIDTH))
    assert arts.opened(site.key, late, _placeholder(run), site, MarkerState.CHECKING, WIDTH) is None
    assert late.closed and site.key not in arts
    assert arts.failed(site.key, "too late") is None


def test_rewrap_keeps_old_rows_until_the_new_ones_land(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    site = _site(run)
    arts = InlineArtifacts()
    arts.toggle(site.key, site, WIDTH)
    old = _lines(run, row_bytes_for(WIDTH))
    arts.opened(site.key, old, _placeholder(run), site, MarkerState.CHECKING, WIDTH)
    (job,) = arts.rewrap(50, {site.key: site})
    assert job.row_bytes == row_bytes_for(50)
    assert arts[site.key].lines is old and not old.closed  # still on screen
    assert arts.rewrap(50, {site.key: site}) == []  # already being indexed
    # A failed re-index keeps the old rows and says so mildly.
    refusal = arts.failed(site.key, "gone")
    assert refusal == Refused("gone", "warning", "Cannot re-read the artifact")
    assert arts[site.key].lines is old
    (job,) = arts.rewrap(50, {site.key: site})
    new = _lines(run, job.row_bytes)
    assert arts.opened(site.key, new, _placeholder(run), site, MarkerState.CHECKING, 50) == Shown(
        site.key
    )
    assert arts[site.key].lines is new and old.closed


def test_rows_cut_for_an_old_width_are_cut_again(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    site = _site(run)
    arts = InlineArtifacts()
    arts.toggle(site.key, site, WIDTH)
    stale = _lines(run, row_bytes_for(WIDTH))
    shown = arts.opened(site.key, stale, _placeholder(run), site, MarkerState.CHECKING, 50)
    assert shown is not None and shown.reindex == Index(
        site.key, run.artifact_name, row_bytes_for(50)
    )
    assert arts.indexing(site.key) and arts[site.key].lines is stale


@pytest.mark.parametrize(
    ("state", "severity"),
    [("not stored", "warning"), ("could not be stored", "warning"), ("unsafe name", "error")],
)
def test_markers_without_an_artifact_refuse(tmp_path: Path, state: str, severity: str) -> None:
    run = write_run(tmp_path, state)
    site = _site(run)
    arts = InlineArtifacts()
    refusal = arts.toggle(site.key, site, WIDTH)
    assert isinstance(refusal, Refused) and refusal.severity == severity
    assert not arts.indexing(site.key)


def test_before_the_analysis_nothing_opens() -> None:
    refusal = InlineArtifacts().toggle(SiteKey(6, 0), None, WIDTH)
    assert isinstance(refusal, Refused) and "Still reading" in refusal.reason


def test_a_failed_open_is_an_error(tmp_path: Path) -> None:
    run = write_run(tmp_path, "missing")
    site = _site(run)
    arts = InlineArtifacts()
    arts.toggle(site.key, site, WIDTH)
    refusal = arts.failed(site.key, "missing")
    assert refusal == Refused("missing", "error", "Cannot open the artifact")
    assert not arts.indexing(site.key)


def test_close_all_releases_every_descriptor(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    site = _site(run)
    arts = InlineArtifacts()
    arts.toggle(site.key, site, WIDTH)
    lines = _lines(run, row_bytes_for(WIDTH))
    arts.opened(site.key, lines, _placeholder(run), site, MarkerState.CHECKING, WIDTH)
    arts.close_all()
    assert lines.closed and not arts and not arts.indexing(site.key)


def test_a_missing_sidecars_record_copy_opens_and_rewraps_from_the_record(
    tmp_path: Path,
) -> None:
    """Issue 26, item 5, without an App: enter on a missing sidecar whose output Claude
    Code's own record holds indexes that field of the marker's line (never the sidecar),
    opened as a `RecordCopy`, and a resize re-reads the same field."""
    from _sessions import ClaudeSession, numbered

    from transcript_view.core.formats import Format
    from transcript_view.core.formats.model import SpillSite
    from transcript_view.core.formats.readers import analyse_as
    from transcript_view.core.formats.rules import record_copy
    from transcript_view.viewer.inline import RecordCopy

    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("go")
    full = numbered(400)
    s.spill("toolu_GONE", full, write_file=False, inline=True)
    path = s.write()
    with Transcript.open(path) as t:
        (site,) = analyse_as(t, Format.CLAUDE_CODE).sites
        assert isinstance(site, SpillSite)
        assert record_copy(site, MarkerState.CHECKING) is None  # not known missing yet
        copy = record_copy(site, MarkerState.MISSING)
        assert copy == "toolUseResult.stdout"
        arts = InlineArtifacts()
        job = arts.toggle(site.key, site, WIDTH, copy)
        assert job == Index(site.key, copy, row_bytes_for(WIDTH), record=True)
        posted: list[Message] = []
        workers.open_record(site.key, t, copy, job.row_bytes, posted.append)
        (opened,) = posted
        assert isinstance(opened, ArtifactOpened) and opened.check.name == copy
        assert opened.check.chars == len(full) and opened.lines.path == path
        shown = arts.opened(site.key, opened.lines, opened.check, site, MarkerState.MISSING, 50)
        assert shown == Shown(site.key, Index(site.key, copy, row_bytes_for(50), record=True))
        assert isinstance(arts[site.key], RecordCopy)
        assert arts[site.key].lines.row(0) == "row 00000: " + "x" * 48
        # A field the line does not hold (the file changed under the viewer): said so.
        posted.clear()
        workers.open_record(site.key, t, "toolUseResult.result", 100, posted.append)
        (failed,) = posted
        assert isinstance(failed, ArtifactOpenFailed) and "no longer holds" in failed.reason
        arts.close_all()

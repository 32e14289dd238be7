"""The viewer's background work in the pass server: the same analysis and row counts.

Issue 11: the analysis and the layout of a big transcript ran in the UI's
process, one core, starving the event loop and the hashing (a 64 MiB file was
idle after 26 s, 8 small artifacts took 8 s to hash). They now run in a
`core.parallel.PassServer` forked before Textual starts. These tests start a
real server, with the size thresholds lowered so that small transcripts take
the server's paths (and the server's own worker pool), and compare what the
screen ends up with against the in-process paths.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _analysis_dump import dump
from _pilot import settle, sync
from _random_transcripts import random_transcript
from _screen import assert_layout_consistent
from _support import CLAUDE_EXAMPLE, CODEX_EXAMPLE, EXAMPLES, REFERENCE_TRANSCRIPTS, generate
from textual import events

from transcript_view.core import parallel
from transcript_view.core.analysis import analyse
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.readers import analyse_as
from transcript_view.core.ledger import VerificationLedger
from transcript_view.core.tables import Replay
from transcript_view.core.transcript import Transcript
from transcript_view.viewer import background, main_screen, workers
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.blocks import FileSource, ModelSource
from transcript_view.viewer.context import AnalysisState, BlockContext, BlockKey, Expansion
from transcript_view.viewer.document import layout_counts
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.measure import UNKNOWN
from transcript_view.viewer.messages import (
    AnalysisReady,
    ArtifactsChecked,
    IndexProgress,
    LinesFound,
    OrphansFound,
    Progress,
)
from transcript_view.viewer.transcript_view import TranscriptView

SIZE = (100, 30)
COUNTED = [f"{stem}.jsonl" for stem in REFERENCE_TRANSCRIPTS] + ["demo.jsonl", "broken.jsonl"]


def _never() -> bool:
    return False


@pytest.fixture
def transcript_path(tmp_path: Path) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(random_transcript(40 + i, 30) for i in range(4)))
    return path


def _counts(t: Transcript, view: str, analysis: Any, width: int) -> list[int]:
    state = AnalysisState()
    state.adopt(analysis)
    ctx = BlockContext(state, {}, Expansion(), width=width)
    source = ModelSource(t, ctx) if view == "model" else FileSource(t, ctx)
    if isinstance(source, FileSource):
        source.index_complete = True
    return layout_counts(source, 0, source.available(), _never)


def test_the_server_sends_back_the_analysis_made_here(
    server: parallel.PassServer, transcript_path: Path
) -> None:
    events: list[tuple[str, Any]] = []
    with Transcript.open(transcript_path) as t:
        got = server.run(
            background.analysis_job, t, workers.Format.REFERENCE,
            on_event=lambda kind, value: events.append((kind, value)) or True,
        )  # fmt: skip
        assert got.transcript is t  # the caller's transcript, not a copy
        assert dump(got) == dump(analyse(t))
    kinds = {kind for kind, _ in events}
    assert "progress" in kinds
    found = sorted({line for kind, (markers, _) in events if kind == "found" for line in markers})
    assert found == sorted({s.line for s in got.sites})


@pytest.mark.parametrize("view", ["file", "model"])
def test_the_server_counts_rows_as_the_view_would(
    server: parallel.PassServer, transcript_path: Path, view: str
) -> None:
    """Counted in the server's own worker pool (7 blocks a task), in order."""
    with Transcript.open(transcript_path) as t:
        analysis = analyse(t)
        want = _counts(t, view, analysis, 80)
        chunks: list[tuple[int, list[int]]] = []

        def on_event(kind: str, value: Any) -> bool:
            chunks.append(value)
            return True

        stop = server.run(
            background.count_job, t, view, workers.Format.REFERENCE, 80, analysis, {}, 0,
            on_event=on_event,
        )  # fmt: skip
    assert stop == len(want) and len(chunks) > 2
    assert [first for first, _ in chunks] == [
        sum(len(c) for _, c in chunks[:i]) for i in range(len(chunks))
    ]
    assert [n for _, counts in chunks for n in counts] == want


def test_a_job_stops_when_the_caller_says_so(
    server: parallel.PassServer, transcript_path: Path
) -> None:
    with Transcript.open(transcript_path) as t:
        analysis = analyse(t)
        seen: list[Any] = []
        stopped = server.run(
            background.count_job, t, "file", workers.Format.REFERENCE, 80, analysis, {}, 0,
            on_event=lambda kind, value: seen.append(value) and False,
        )  # fmt: skip
        assert stopped is None
        # The server is free again, and answers the next job in full.
        again = server.run(
            background.count_job, t, "file", workers.Format.REFERENCE, 80, analysis, {}, 0
        )
        assert again == t.line_count
    assert 1 <= len(seen) < t.line_count // background.COUNT_STEP


def test_a_job_that_raises_is_a_pass_failed_and_the_server_goes_on(
    server: parallel.PassServer, transcript_path: Path
) -> None:
    with Transcript.open(transcript_path) as t:
        with pytest.raises(parallel.PassFailed, match="AttributeError"):
            not_an_analysis = "an analysis"
            server.run(background.count_job, t, "file", "?", 80, not_an_analysis, {}, 0)
        assert server.run(background.analysis_job, t, workers.Format.REFERENCE) is not None


@sync
async def test_the_screen_with_a_server_shows_what_it_shows_without(
    server: parallel.PassServer, transcript_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The analysis and the file view's layout in the server; the documents are the
    in-process ones (the model view's counts come from the file view's)."""
    jobs: list[str] = []
    run = server.run

    def spy(job: Any, *args: Any, **kwargs: Any) -> Any:
        jobs.append(job.__name__ if job is background.analysis_job else f"count {args[1]}")
        return run(job, *args, **kwargs)

    monkeypatch.setattr(server, "run", spy)
    app = TranscriptApp(transcript_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        assert "analysis_job" in jobs
        # Laid out again (a new width) with the analysis known: the server counts.
        await pilot.resize_terminal(SIZE[0] - 10, SIZE[1])
        await settle(pilot)
        assert "count file" in jobs
        assert_layout_consistent(screen)
        await pilot.press("m")
        await settle(pilot)
        # Taken from the file view's counts, not counted again (`counts_from_file`).
        assert "count model" not in jobs
        assert_layout_consistent(screen)


def _count_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The file blocks this process builds to count, from now on (not the server's)."""
    counted: list[int] = []
    build = FileSource.build

    def spy(self: FileSource, index: int, expand: bool = False, **kwargs: Any) -> Any:
        if kwargs.get("count_only"):
            counted.append(index)
        return build(self, index, expand, **kwargs)

    monkeypatch.setattr(FileSource, "build", spy)
    return counted


def _long_lines(path: Path) -> Path:
    """A transcript of mostly plain lines, one in ten long enough to collapse."""
    lines = []
    for n in range(3000):
        text = ("word " * 200) if n % 10 == 0 else f"line {n}"
        env = {"id": f"m{n}", "payload": {"content": text, "role": "user"}, "type": "message"}
        lines.append(json.dumps({**env, "ts": "t", "v": 1}).encode())
    lines.append(random_transcript(7, 20))  # markers, bad lines: built to be counted
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@sync
async def test_the_file_view_is_laid_out_from_the_counts_the_analysis_took(
    server: parallel.PassServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11: the file view's rows are counted as the analysis reads each line, not
    by parsing every line again beside it; only what the pass cannot count is built."""
    build = FileSource.build
    counted = _count_builds(monkeypatch)
    path = _long_lines(tmp_path / "t.jsonl")
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        view = screen.view
        assert view.file_doc.blocks > 3000
        assert len(counted) < view.file_doc.blocks / 4, "most blocks were built to be counted"
        monkeypatch.setattr(FileSource, "build", build)
        assert_layout_consistent(screen)
        # Laid out again at the same width with a long block expanded: that block is
        # built (its look is not the plain one the analysis counted), the rest taken.
        long_block = 10  # line 11: the second long message
        view.set_cursor(view.file_doc.block_start(long_block))
        view.toggle_expanded()
        expanded = view.file_doc.counts[long_block]
        view.action_bottom()  # off screen: not built again on the way
        view.relayout(view.file_doc)
        await settle(pilot)
        assert view.file_doc.counts[long_block] == expanded > 10
        assert_layout_consistent(screen)


def _claude_lines(path: Path) -> Path:
    """A Claude Code session of mostly plain prompts and answers, one in ten long."""
    lines = []
    for n in range(3000):
        text = ("word " * 200) if n % 10 == 0 else f"line {n}"
        if n % 2:
            message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
            kind = "assistant"
        else:
            message, kind = {"role": "user", "content": text}, "user"
        lines.append({"type": kind, "uuid": f"u{n}", "sessionId": "s", "message": message})
    lines.append({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "[Old tool result content cleared]"}
    ]}})  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@sync
async def test_a_claude_sessions_file_view_is_laid_out_from_the_counts_its_pass_took(
    server: parallel.PassServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11, the same for the other formats: a Claude Code session's rows are
    counted where its pass maps each line (`viewer.measure`), not by building
    every block after the analysis; the layout is the one building gives."""
    build = FileSource.build
    counted = _count_builds(monkeypatch)
    path = _claude_lines(tmp_path / "session.jsonl")
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        assert screen.format is Format.CLAUDE_CODE
        view = screen.view
        assert view.file_doc.blocks == 3001
        assert len(counted) < view.file_doc.blocks / 4, "most blocks were built to be counted"
        measured = view.layouter.measured.rows.tolist()
        assert len(measured) == 3001 and UNKNOWN not in measured
        # The marker's line was counted with its provisional badge, and again by the
        # view when the analysis landed (`AnalysisState.adopt`); every other as measured.
        assert measured[:-1] == view.file_doc.counts[:-1].tolist()
        monkeypatch.setattr(FileSource, "build", build)
        assert_layout_consistent(screen)
        assert view.file_doc.counts[-1] > 2  # the marker line: its badge row


def _index_before_width(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Hold the view's first resize until the index is whole (it returns the widths
    the view is resized to): a small file's index can beat the screen's first layout."""
    indexed = asyncio.Event()
    widths: list[int] = []
    on_index = TranscriptScreen.on_index_progress
    on_resize = TranscriptView.on_resize

    def index_progress(self: TranscriptScreen, msg: IndexProgress) -> None:
        on_index(self, msg)
        if msg.complete:
            indexed.set()

    async def late_resize(self: TranscriptView, event: events.Resize) -> None:
        await indexed.wait()
        widths.append(self.scrollable_content_region.width)
        on_resize(self, event)

    monkeypatch.setattr(TranscriptScreen, "on_index_progress", index_progress)
    monkeypatch.setattr(TranscriptView, "on_resize", late_resize)
    return widths


@sync
async def test_a_pass_started_before_the_views_first_width_counts_at_that_width(
    server: parallel.PassServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug (found in CI, where it depended on timing): when the index was whole
    before the view had a width, the pass counted rows at a width the view never
    had (its context's default), so every block was built a second time here.
    The pass now waits for the view's first width and counts at it."""
    monkeypatch.setattr(main_screen, "PASS_HOLD_SECONDS", 600.0)  # the width comes first
    counted = _count_builds(monkeypatch)
    widths = _index_before_width(monkeypatch)
    app = TranscriptApp(_long_lines(tmp_path / "t.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        view = screen.view
        assert widths and view.layouter.measured.width == widths[0] == view.ctx.width
        assert len(view.layouter.measured.rows) == view.file_doc.blocks
        assert len(counted) < view.file_doc.blocks / 4, "most blocks were built to be counted"
        assert_layout_consistent(screen)


@sync
async def test_a_pass_held_for_a_width_starts_without_one_in_the_end(
    server: parallel.PassServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view that never gets a width (a zero-width terminal) holds the pass only so
    long: it then runs without counting rows, and the view counts its own."""
    monkeypatch.setattr(main_screen, "PASS_HOLD_SECONDS", 0.05)
    on_resize = TranscriptView.on_resize
    monkeypatch.setattr(TranscriptView, "on_resize", lambda self, event: None)
    started: list[tuple[bool, int]] = []  # (after the hold, the width it counts at)
    analyse = TranscriptScreen._analyse
    release = TranscriptScreen._release_pass
    released: list[bool] = []

    def spy_analyse(self: TranscriptScreen, transcript: Any, analyser: Any, width: int) -> Any:
        started.append((bool(released), width))
        return analyse(self, transcript, analyser, width)

    def spy_release(self: TranscriptScreen) -> None:
        released.append(True)
        release(self)

    monkeypatch.setattr(TranscriptScreen, "_analyse", spy_analyse)
    monkeypatch.setattr(TranscriptScreen, "_release_pass", spy_release)
    landed = asyncio.Event()
    on_ready = TranscriptScreen.on_analysis_ready

    def analysis_ready(self: TranscriptScreen, msg: AnalysisReady) -> None:
        on_ready(self, msg)
        landed.set()

    monkeypatch.setattr(TranscriptScreen, "on_analysis_ready", analysis_ready)
    app = TranscriptApp(_long_lines(tmp_path / "t.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(landed.wait(), 60)  # the hold's timer, then the pass
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        assert started == [(True, 0)]  # held, then started without a width
        view = screen.view
        measured = view.layouter.measured
        assert not measured.coming and view.ctx.width == 0 and not measured.rows
        # A width at last: the view lays the file out itself, nothing waits for rows.
        monkeypatch.setattr(TranscriptView, "on_resize", on_resize)
        await pilot.resize_terminal(SIZE[0] - 10, SIZE[1])
        await settle(pilot)
        assert view.ctx.width > 0 and view.file_doc.blocks == view.file_doc.source.available()
        assert_layout_consistent(screen)


@sync
async def test_n_steps_to_a_marker_found_before_the_analysis_is_done(
    transcript_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The analysis is still reading (it never lands here), but what it found so far is
    known: `n` goes to the marker instead of saying markers are not known yet."""
    with Transcript.open(transcript_path) as t:
        lines = sorted({s.line for s in analyse(t).sites})
    assert lines

    def still_reading(transcript: Transcript, analyser: Any, post: Any, *rest: Any) -> None:
        post(Progress("reading", 1, 2))
        post(LinesFound(lines[:1], []))

    monkeypatch.setattr(workers, "run_analysis", still_reading)
    app = TranscriptApp(transcript_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is None
        toasts: list[str] = []
        app.notify = lambda message, *a, **k: toasts.append(message)  # type: ignore[method-assign]
        await pilot.press("n")
        row = screen.view.doc.row(screen.view.cursor)
        assert row is not None and row.kind == "marker" and row.line == lines[0]
        for _ in range(5):  # the line's other markers, if any, then the end of what is known
            await pilot.press("n")
            row = screen.view.doc.row(screen.view.cursor)
            assert row is not None and row.line == lines[0]
            if toasts:
                break
        assert toasts == ["No more markers below in the part read so far."]


@pytest.mark.parametrize("name", COUNTED)
@sync
async def test_the_model_view_counted_from_the_file_view_is_what_building_gives(
    name: str, reference_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Summaries, stubs, findings, an expanded block and open artifacts in both views:
    every model block's count, most taken from the file view's, is its built one."""
    calls: list[int] = []
    derive = ModelSource.counts_from_file

    def spy(self: ModelSource, *args: Any) -> list[int]:
        calls.append(args[1] - args[0])
        return derive(self, *args)

    monkeypatch.setattr(ModelSource, "counts_from_file", spy)
    path = EXAMPLES / name if (EXAMPLES / name).exists() else reference_dir / name
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        view = screen.view
        for site in screen.analysis.excerpt_sites[:2]:
            if site.marker.file is not None:
                view.toggle_artifact(site.key)
        view.expansion.expand(BlockKey("file", 1))
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        view.expansion.expand(BlockKey("model", 2))
        for site in screen.analysis.excerpt_sites[-1:]:
            if site.marker.file is not None:
                view.toggle_artifact(site.key)
        await settle(pilot)
        await pilot.press("m")  # back to the file view, laid out again at a new width
        await pilot.resize_terminal(SIZE[0] - 17, SIZE[1])
        await settle(pilot)
        calls.clear()
        await pilot.press("m")  # the model view at the new width: from the file view's
        await settle(pilot)
        assert view.doc is view.model_doc and sum(calls) == view.doc.blocks
        assert_layout_consistent(screen)


def test_an_analysis_the_server_cannot_make_is_made_here(
    server: parallel.PassServer, transcript_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that fails (gone, or a result that cannot be pickled back) costs time,
    never the analysis."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise parallel.PassFailed("PicklingError: cannot pickle 'function' object")

    monkeypatch.setattr(server, "run", broken)
    posted: list[Any] = []
    with Transcript.open(transcript_path) as t:
        workers.run_analysis(t, None, posted.append)
        ready = [m for m in posted if type(m).__name__ == "AnalysisReady"]
        assert len(ready) == 1 and dump(ready[0].analysis) == dump(analyse(t))


@pytest.mark.parametrize("fmt", [Format.CLAUDE_CODE, Format.CODEX])
def test_another_formats_analysis_comes_back_from_the_server_as_made_here(
    server: parallel.PassServer, fmt: Format
) -> None:
    """A Claude Code session and a Codex rollout pickle (their exemptions are data, not
    lambdas): what `--check` reports of the server's analysis is the in-process one's."""
    path = CLAUDE_EXAMPLE if fmt is Format.CLAUDE_CODE else CODEX_EXAMPLE
    found: list[int] = []

    def on_event(kind: str, value: Any) -> bool:
        if kind == "found":
            found.extend(value[0])
        return True

    with Transcript.open(path) as t:
        here = analyse_as(t, fmt)
        got = server.run(background.analysis_job, t, fmt, on_event=on_event)
        assert got.transcript is t
        assert found and set(found) <= {s.line for s in here.sites}  # `n` while it reads
        assert got.sites == here.sites
        assert got.findings == here.findings and got.named == here.named
        assert [got.exempt(n) for n in sorted(here.named)] == [
            here.exempt(n) for n in sorted(here.named)
        ]


def test_a_cancelled_analysis_stops_in_the_server_and_lands_nowhere(
    server: parallel.PassServer, transcript_path: Path
) -> None:
    """Quitting while a big file is read must not wait for the pass to end."""
    posted: list[Any] = []
    with Transcript.open(transcript_path) as t:
        workers.run_analysis(t, None, posted.append, Format.REFERENCE, lambda: True)
        assert not [m for m in posted if type(m).__name__ in ("AnalysisReady", "AnalysisFailed")]
        # The server is free for the next one.
        workers.run_analysis(t, None, posted.append)
    assert [type(m).__name__ for m in posted][-1] == "AnalysisReady"


def test_model_counts_taken_from_the_file_view_build_summaries_and_stubs(tmp_path: Path) -> None:
    """A stubbed message and a compaction's summary are not their lines as written: their
    model blocks are built, not given the file view's count (long texts make the two differ)."""
    long = "word " * 300
    rows = [
        ("message", {"content": long, "role": "user"}, "m1"),
        ("message", {"content": long, "role": "assistant"}, "m2"),
        ("message", {"content": long, "role": "user"}, "m3"),
        ("compaction", {"summary": long, "replaces-through-id": "m1"}, "c1"),
        ("elision", {"items": [{"id": "m3", "stub": "[gone]"}]}, "e1"),
        ("message", {"content": "after", "role": "user"}, "m4"),
    ]
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b"\n".join(
            json.dumps({"id": i, "payload": p, "ts": "t", "type": k, "v": 1}).encode()
            for k, p, i in rows
        )
        + b"\n"
    )
    with Transcript.open(path) as t:
        analysis = analyse(t)
        file_counts = _counts(t, "file", analysis, 60)
        state = AnalysisState()
        state.adopt(analysis)
        source = ModelSource(t, BlockContext(state, {}, Expansion(), width=60))
        n = source.available()
        built = [source.build(i, count_only=True).count for i in range(n)]
        assert source.counts_from_file(0, n, file_counts, set()) == built
        assert source.counts_from_file(1, n, file_counts, set()) == built[1:]
        # Each differs from its line's file block, or the test would prove nothing.
        replay = source._replay()
        assert isinstance(replay, Replay)
        unplain = replay.unplain(0, n - 1)
        assert unplain, "no summary or stub in the replay"
        assert any(built[j + 1] != file_counts[replay.line_at(j) - 1] for j in unplain)


@pytest.mark.parametrize("seed", range(12))
def test_the_entries_not_taken_from_the_file_view_are_the_unplain_ones(
    seed: int, tmp_path: Path, reference_dir: Path
) -> None:
    """`Replay.unplain` (C speed) names exactly the entries `is_plain` refuses."""
    path = reference_dir / "compaction.jsonl"
    if seed:
        path = tmp_path / "t.jsonl"
        path.write_bytes(random_transcript(seed, 120))
    with Transcript.open(path) as t:
        replay = analyse(t).replay
        n = len(replay)
        want = [j for j in range(n) if not replay.is_plain(j)]
        assert replay.unplain(0, n) == want
        assert replay.unplain(2, n) == [j - 2 for j in want if j >= 2]
        lines = {replay.line_at(j) for j in range(0, n, 3)}
        on_lines = {j for j in range(n) if replay.line_at(j) in lines}
        assert replay.unplain(0, n, lines) == sorted(set(want) | on_lines)


@pytest.mark.parametrize("seed", range(12))
def test_an_entry_is_found_by_its_line_with_or_without_ascending_lines(
    seed: int, tmp_path: Path, reference_dir: Path
) -> None:
    """`Replay.index_of_line`: bisection when the lines ascend, a table when a summary
    is out of place; either way the first entry from that line (what a model view's
    badge change looks up, 2.6 M times over a big file's blocks)."""
    path = reference_dir / "compaction.jsonl"
    if seed:
        path = tmp_path / "t.jsonl"
        path.write_bytes(random_transcript(seed, 120))
    with Transcript.open(path) as t:
        replay = analyse(t).replay
        lines = [replay.line_at(j) for j in range(len(replay))]
        for line in range(t.line_count + 2):
            assert replay.index_of_line(line) == (lines.index(line) if line in lines else None)
    if seed == 0:
        assert lines != sorted(lines), "the fixture's summary is out of place: the table's case"


def _verified(path: Path) -> tuple[list[tuple[str, int, int]], list[Any], list[str]]:
    """What `verify_files` posts for `path`: (batch sizes, done, total), every check, orphans."""
    with Transcript.open(path) as t:
        ledger = VerificationLedger(analyse(t))
        posted: list[Any] = []
        workers.verify_files(workers.VerifyJob.of(ledger), posted.append)
    *checked, found = posted
    assert all(isinstance(m, ArtifactsChecked) for m in checked)
    assert isinstance(found, OrphansFound)
    batches = [(m.checks[-1].name, m.done, m.total) for m in checked]
    return batches, [c for m in checked for c in m.checks], [o.name for o in found.orphans]


def test_artifacts_are_checked_in_the_server_as_here(
    server: parallel.PassServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands of files are hashed in the server, not beside the UI (small ones in the
    server itself, as here): the checks that come back are the ones made here."""
    path = generate(tmp_path / "many.jsonl", "300K", 30)
    store = tmp_path / "many.artifacts"
    for i, artifact in enumerate(sorted(store.iterdir())):
        if i % 4 == 0:
            artifact.unlink()  # missing
        elif i % 4 == 1:
            artifact.write_bytes(artifact.read_bytes()[:-1])  # a size mismatch
    (store / "lost.txt").write_text("nobody names me")
    jobs: list[Any] = []
    run = server.run
    monkeypatch.setattr(server, "run", lambda job, *a, **k: jobs.append(job) or run(job, *a, **k))
    there = _verified(path)
    assert jobs == [background.verify_job]
    monkeypatch.setattr(parallel, "_server", None)
    here = _verified(path)
    assert [b[1:] for b in there[0]][-1] == (30, 30)
    assert there[1] == here[1] and there[2] == here[2] == ["lost.txt"]

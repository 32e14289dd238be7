"""The viewer on Codex's compressed rollouts: opened, listed, and what cannot be read said once.

The rollouts are compressed by the test as Codex compresses them (`_zstd`);
the app runs headless (Pilot) and decompresses them itself, into its private
copy, which must be gone once the app has quit.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync
from _screen import SIZE, cursor_row
from _sessions import codex_chars_truncated, codex_lines_omitted, numbered, write_codex_rollout
from _zstd import compress_file, snapshot
from textual.widgets import DataTable

from transcript_view.core import parallel
from transcript_view.core.formats.detect import Format
from transcript_view.core.ledger import VerificationLedger
from transcript_view.core.transcript import Transcript
from transcript_view.viewer import background, workers
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.load import LoadState, Phase
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.messages import IndexProgress
from transcript_view.viewer.screens.sessions import SessionsScreen

NAME = "rollout-2026-01-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl"
LINES = 21


def _rollout(root: Path, name: str = NAME) -> Path:
    day = root / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True, exist_ok=True)
    outputs = [numbered(3000, 60 + i) for i in range(8)]
    outputs[2] = codex_lines_omitted(300)
    outputs[5] = codex_chars_truncated(4321)
    return write_codex_rollout(day / name, outputs)


def _text(screen: TranscriptScreen) -> str:
    source = screen.view.doc.source
    rows = []
    for i in range(source.available()):
        rows.extend(r.text.plain for r in source.build(i).text_rows())
    return "\n".join(rows)


def _temp_copies() -> set[str]:
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("transcript-view-")}


def _listen(app: TranscriptApp) -> list[tuple[str, dict[str, Any]]]:
    toasts: list[tuple[str, dict[str, Any]]] = []
    app.notify = lambda message, **k: toasts.append((message, k))  # type: ignore[method-assign]
    return toasts


async def _opened(path: Path) -> tuple[tuple[object, ...], str]:
    """What the screen shows of `path` once settled: header counts, and every row."""
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.format is Format.CODEX
        h = screen.header
        return (h.envelopes, h.lines, h.markers, h.problems, h.orphans, h.phase), _text(screen)


@sync
async def test_a_compressed_rollout_opens_as_its_plain_file_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    plain = _rollout(tmp_path / "a")
    packed = compress_file(_rollout(tmp_path / "b"))
    before, temps = snapshot(tmp_path), _temp_copies()
    want = await _opened(plain)
    got = await _opened(packed)
    assert got == want
    counts, text = got
    assert counts[1] == LINES and counts[2] == 2 and counts[3] == 0
    assert "○ not stored" in text and "47 of 300 lines cut" in text
    assert snapshot(tmp_path) == before  # nothing written beside the session
    assert _temp_copies() <= temps  # the private copy went with the screen (a stale one,
    # a killed process's, may be swept meanwhile)


@sync
async def test_f_on_a_compressed_rollout_says_there_is_nothing_to_follow(tmp_path: Path) -> None:
    app = TranscriptApp(compress_file(_rollout(tmp_path)))
    toasts = _listen(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert not screen.following and not screen.header.following
        assert any("nothing to follow" in message for message, _ in toasts)


@sync
async def test_a_truncated_rollout_shows_what_was_read_and_says_why_the_rest_is_not(
    tmp_path: Path,
) -> None:
    packed = compress_file(_rollout(tmp_path))
    packed.write_bytes(packed.read_bytes()[: packed.stat().st_size // 2])
    temps = _temp_copies()
    app = TranscriptApp(packed)
    toasts = _listen(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.error is None
        lines = screen.header.lines
        assert 0 < lines < LINES
        assert screen.header.problems == 1  # the one finding, on the last line read
        ledger = screen.state.ledger
        assert ledger is not None
        (finding,) = ledger.line_findings(lines)
        assert finding.kind == "unreadable-compressed" and "cut short" in finding.message
        assert [f.kind for f in ledger.problems()] == ["unreadable-compressed"]
        (toast,) = [(m, k) for m, k in toasts if k.get("severity") == "error"]
        assert "cut short" in toast[0] and f"the {lines} lines decompressed" in toast[0]
        assert "unreadable-compressed" in _text(screen)
        # p goes to it.
        await pilot.press("p")
        await settle(pilot)
        row = cursor_row(screen)
        assert row.line == lines and "unreadable-compressed" in row.text.plain
    assert _temp_copies() <= temps  # (a killed process's stale copy may be swept)


def test_the_index_worker_says_it_is_decompressing_until_it_is_done(tmp_path: Path) -> None:
    packed = compress_file(_rollout(tmp_path))
    posted: list[Any] = []
    with Transcript(packed) as t:
        # Steps small enough that the file takes several of them.
        old = workers.FIRST_INDEX_BYTES, workers.INDEX_STEP_BYTES
        workers.FIRST_INDEX_BYTES = workers.INDEX_STEP_BYTES = 64 << 10
        try:
            workers.index_transcript(t, posted.append)
        finally:
            workers.FIRST_INDEX_BYTES, workers.INDEX_STEP_BYTES = old
    steps = [m for m in posted if isinstance(m, IndexProgress)]
    assert len(steps) > 2 and steps[0].decompressing and not steps[-1].decompressing
    assert steps[-1].complete and steps[-1].lines == LINES
    assert steps[0].total_bytes == packed.stat().st_size  # compressed bytes while decompressing
    load = LoadState()
    load.index_grew(decompressing=True)
    assert load.phase is Phase.DECOMPRESSING and load.phase.label == "decompressing"
    load.index_grew(decompressing=False)
    assert load.phase is Phase.INDEXING


def test_a_closed_compressed_transcript_ends_its_index_worker_quietly(tmp_path: Path) -> None:
    packed = compress_file(_rollout(tmp_path))
    posted: list[Any] = []
    t = Transcript(packed)
    t.close()
    workers.index_transcript(t, posted.append, lambda: True)
    assert all(not isinstance(m, workers.AnalysisFailed) for m in posted)


def test_the_pass_server_reads_a_compressed_rollout_as_the_screen_does(
    server: parallel.PassServer, tmp_path: Path
) -> None:
    packed = compress_file(_rollout(tmp_path))
    packed.write_bytes(packed.read_bytes()[: packed.stat().st_size // 2])
    with Transcript.open(packed) as t:
        got = server.run(background.analysis_job, t, Format.CODEX)
        assert got.transcript is t
        kinds = [f.kind for f in VerificationLedger(got).findings()]
        assert "unreadable-compressed" in kinds


@pytest.mark.usefixtures("small_thresholds")
@sync
async def test_the_sessions_screen_lists_a_compressed_rollout_and_opens_it(tmp_path: Path) -> None:
    plain = _rollout(tmp_path, NAME.replace("09-00-00", "10-00-00"))
    packed = compress_file(_rollout(tmp_path))
    compress_file(plain, keep=True)  # beside its plain file: the plain one is listed
    app = TranscriptApp(tmp_path / "sessions")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionsScreen) and screen.format is Format.CODEX
        assert sorted(s.path for s in screen.sessions) == sorted([plain, packed])
        for s in screen.sessions:
            result = screen.results[str(s.path)]
            assert result.counts == (2, 0, 0, 0, 0) and s.first_prompt == "build it"
        row = [s.path for s in screen.sessions].index(packed)
        table = screen.query_one("#sessions-table", DataTable)
        assert str(table.get_cell(str(packed), "size")).endswith(" zst")
        assert not str(table.get_cell(str(plain), "size")).endswith(" zst")
        await pilot.press(*(["down"] * row), "enter")
        await settle(pilot)
        opened = app.screen
        assert isinstance(opened, TranscriptScreen) and opened.path == packed
        assert opened.header.lines == LINES


@sync
async def test_a_rollout_of_which_nothing_can_be_read_does_not_open_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    packed = compress_file(_rollout(tmp_path))
    packed.write_bytes(packed.read_bytes()[:40])
    temps = _temp_copies()
    app = TranscriptApp(packed)
    toasts = _listen(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert screen.transcript is None and screen.error is not None
        assert "cannot be decompressed" in screen.error
        assert any(k.get("title") == "Cannot open" for _, k in toasts)
        assert _temp_copies() <= temps  # closed at once, not only when the app quits

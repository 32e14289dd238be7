"""A big layout streams in without holding the UI thread (issue 11: keys within 50 ms).

While a big transcript is read, row counts arrive in hundreds of chunks. Each
chunk once cleared every drawn strip, repainted the screen and set a new
virtual size (which re-lays the whole screen out, ~25 ms on the development
machine), and the model view's millions of counts came as one chunk that held
the UI thread a third of a second. These tests hold the view to the cheaper
behaviour: rows appended below the screen leave what is drawn alone, the
virtual size grows at most every `SIZE_SECONDS` (and at once when the layout
is done), and no chunk holds more than `LAYOUT_POST_COUNTS` counts plus one
step of the worker.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync
from _random_transcripts import random_transcript

from transcript_view.core.transcript import Transcript
from transcript_view.viewer import layouter, transcript_view
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.blocks import FileSource
from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion
from transcript_view.viewer.document import Document
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.messages import LayoutChunk

SIZE = (100, 30)


@pytest.fixture
def transcript_path(tmp_path: Path) -> Path:
    """Random lines (markers, bad lines), then 600 plain messages the model view keeps."""
    path = tmp_path / "t.jsonl"
    plain = [
        json.dumps(
            {"id": f"m{n}", "payload": {"content": f"message {n}", "role": "user"},
             "ts": "t", "type": "message", "v": 1}
        ).encode()
        for n in range(600)
    ]  # fmt: skip
    path.write_bytes(random_transcript(61, 60) + b"\n" + b"\n".join(plain) + b"\n")
    return path


@sync
async def test_rows_appended_below_the_screen_leave_it_drawn_and_grow_the_size_later(
    transcript_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transcript_view, "SIZE_SECONDS", 3600.0)
    app = TranscriptApp(transcript_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        doc = view.file_doc
        assert doc.total_rows > SIZE[1] * 2  # the screen is full: appends land below it
        await pilot.pause()
        drawn = len(view._strips)
        height = view.virtual_size.height
        assert drawn and height == doc.total_rows
        # Long ago, the first growth goes at once. Not 0.0: `time.monotonic()` counts from
        # the boot, and a machine up for less than SIZE_SECONDS failed this test.
        view._sized_at = -math.inf
        view.apply_chunk(doc, LayoutChunk("file", doc.generation, doc.blocks, [3] * 10))
        assert view.virtual_size.height == doc.total_rows == height + 30
        view.apply_chunk(doc, LayoutChunk("file", doc.generation, doc.blocks, [2] * 10))
        assert doc.total_rows == height + 50
        assert view.virtual_size.height == height + 30, "grew again within SIZE_SECONDS"
        assert len(view._strips) == drawn, "appending below the screen threw the strips away"
        view.apply_chunk(doc, LayoutChunk("file", doc.generation, doc.blocks, [1], done=True))
        assert view.virtual_size.height == doc.total_rows == height + 51


@sync
async def test_no_layout_chunk_holds_more_than_the_cap(
    transcript_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model view's counts are taken from the file view's in big steps: posted in pieces."""
    monkeypatch.setattr(layouter, "LAYOUT_CHUNK", 2)  # steps of 100 blocks
    monkeypatch.setattr(layouter, "LAYOUT_POST_COUNTS", 30)
    sizes: dict[str, list[int]] = {"file": [], "model": []}

    def hook(message: Any) -> None:
        if isinstance(message, LayoutChunk):
            sizes[message.view].append(len(message.counts))

    app = TranscriptApp(transcript_path)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("m")
        await settle(pilot)
        model = screen.view.model_doc
        assert model is not None and model.blocks == model.source.available() > 200
    assert len(sizes["model"]) > 2
    assert max(sizes["model"]) <= 30 + 2 * 50, sizes["model"]


@sync
async def test_rows_not_laid_out_yet_are_estimated_and_replaced_without_moving_the_screen(
    transcript_path: Path,
) -> None:
    """Issue 25: the view is usable before every row is counted, as a pager is. The rows
    past those laid out are estimated (the scrollbar is the whole file's), the row
    after the last one laid out says so, `G` goes to the last row laid out, and the
    real counts replace the estimate with nothing on screen moving."""
    app = TranscriptApp(transcript_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        doc = view.file_doc
        counts, total = doc.counts.tolist(), doc.total_rows
        half = doc.blocks // 2
        doc.truncate(half)  # as if the layout had got half way through the file
        doc.laying_out = True  # and were still at it: nothing starts another
        view._update_size()
        laid = doc.total_rows
        reached, whole = doc.source.extent(half)
        assert 0 < reached < whole == transcript_path.stat().st_size
        assert view.virtual_size.height == laid + laid * (whole - reached) // reached
        assert laid < view.virtual_size.height and abs(view.virtual_size.height - total) < total / 2
        view.scroll_to(y=laid - 3, animate=False, immediate=True)
        await pilot.pause()
        shown = [view.render_line(y).text for y in range(SIZE[1])]
        assert shown[3].strip().startswith("… laying out (")
        assert "the rows below are an estimate" in shown[3]
        view.action_bottom()
        assert view.cursor == laid - 1
        assert view.scroll_y == laid - view.scrollable_content_region.height
        view.set_cursor(10)
        view.scroll_to(y=5, animate=False, immediate=True)
        await pilot.pause()
        before = [view.render_line(y).text for y in range(SIZE[1])]
        view.apply_chunk(doc, LayoutChunk("file", doc.generation, half, counts[half:], done=True))
        assert doc.total_rows == view.virtual_size.height == total
        assert (view.cursor, view.scroll_y) == (10, 5)
        assert [view.render_line(y).text for y in range(SIZE[1])] == before


def _file_doc(path: Path, *, complete: bool, following: bool = False) -> Document:
    transcript = Transcript.open(path)
    source = FileSource(transcript, BlockContext(AnalysisState(), {}, Expansion(), width=80))
    source.index_complete, source.following = complete, following
    return Document(source)


def test_the_estimate_is_the_rest_of_the_file_at_the_rate_laid_out(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = b'{"v": 1, "type": "message", "id": "m", "payload": {"content": "x"}}\n'
    path.write_bytes(line * 10)
    doc = _file_doc(path, complete=False)
    assert doc.estimated_rest() == 0, "nothing laid out: no rate yet"
    doc.extend(0, [2] * 4)
    assert doc.estimated_rest() == 12  # 6 lines to come at 2 rows each
    doc.extend(4, [2] * 6)
    assert doc.estimated_rest() == 0


def test_a_line_still_being_written_is_no_row_to_come(tmp_path: Path) -> None:
    """Follow mode holds back a last line with no LF yet: nothing is estimated for it."""
    path = tmp_path / "t.jsonl"
    line = b'{"v": 1, "type": "message", "id": "m", "payload": {"content": "x"}}\n'
    path.write_bytes(line * 10 + line[:-30])
    doc = _file_doc(path, complete=True, following=True)
    assert doc.source.available() == 10
    doc.extend(0, [2] * 10)
    assert doc.estimated_rest() == 0
    indexing = _file_doc(path, complete=False)
    indexing.extend(0, [2] * 10)
    assert indexing.estimated_rest() > 0, "while indexing, the file's size is what is known"

"""An inline artifact shows its last rows before the index reaches them.

The artifact's indexing worker is held after its first step (a gate around
`FileLines.index`), so the test sees the state a 200 MiB artifact is in for a
while: the rows indexed so far, one row saying how much is not indexed yet, the
file's real last rows, and a footer saying it is still indexing. `end` shows
the end at once; when the index completes, the rows in between appear and the
cursor stays on the row it was on.
"""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from _filelines import generated, naive_spans
from _pilot import settle, settle_except, sync
from _runs import Run
from _screen import SIZE, assert_layout_consistent, cursor_row, rows_of

import transcript_view.core.filelines as filelines
from transcript_view.core.filelines import FileLines
from transcript_view.viewer import workers
from transcript_view.viewer.app import TranscriptApp


@pytest.fixture
def held_index(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Let each FileLines index its first step, then wait for the event."""
    opened = threading.Event()
    real = FileLines.index
    calls: dict[int, int] = {}

    def index(self: FileLines, *args: Any, **kwargs: Any) -> bool:
        calls[id(self)] = calls.get(id(self), 0) + 1
        if calls[id(self)] > 1:
            assert opened.wait(60), "the test never released the index"
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FileLines, "index", index)
    monkeypatch.setattr(workers, "FIRST_INDEX_BYTES", 300)
    monkeypatch.setattr(workers, "INDEX_STEP_BYTES", 100_000)
    monkeypatch.setattr(filelines, "TAIL_BYTES", 400)
    return opened


@sync
async def test_the_end_of_an_artifact_shows_before_it_is_indexed(
    run_factory: Any, held_index: threading.Event
) -> None:
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = app.screen
            await pilot.press("n", "enter")
            await settle_except(pilot, "artifact")
            art = next(iter(screen.artifacts.values()))
            assert not art.complete
            rows = rows_of(screen)
            art_rows = [t for k, t in rows if k == "art"]
            assert art_rows[0].strip() == "┃ row 000: the quick brown fox jumps over the lazy dog"
            gap = next(t for t in art_rows if "not indexed yet" in t)
            assert "bytes not indexed yet; the file's last rows follow" in gap
            assert "row 039" in art_rows[-1]
            # Rows after the gap are the file's real last rows, in order, none twice.
            numbers = [int(t.split("row ")[1][:3]) for t in art_rows if "row " in t]
            assert numbers == sorted(set(numbers))
            assert numbers[: art.known_rows] == list(range(art.known_rows))
            assert numbers[-1] == 39 and len(numbers) < 40
            footer = next(t for k, t in rows if k == "art-end")
            assert "still indexing" in footer and "so far" in footer
            assert_layout_consistent(screen)
            # End shows the artifact's end now, not after the index.
            await pilot.press("end")
            view = screen.view
            last = cursor_row(screen)
            height = view.scrollable_content_region.height
            painted = ["".join(s.text for s in view.render_line(y)) for y in range(height)]
            assert any("row 039" in t for t in painted)
            # The index completes: every row, and the cursor still on the same row.
            held_index.set()
            await settle(pilot)
            assert art.complete
            art_rows = [t for k, t in rows_of(screen) if k == "art"]
            assert len(art_rows) == 40 and not any("not indexed" in t for t in art_rows)
            assert cursor_row(screen) == last
            assert_layout_consistent(screen)
            assert any("└ end of artifact · 40 rows" in t for _, t in rows_of(screen))
    finally:
        held_index.set()


def test_tail_rows_match_the_full_index(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filelines, "TAIL_BYTES", 2000)
    for seed in range(6):
        data = generated(random.Random(seed), 20_000)
        path = tmp_path / f"t{seed}.txt"
        path.write_bytes(data)
        spans = naive_spans(data, 40)
        with FileLines(path, row_bytes=40) as fl:
            tail = fl.tail_rows()
            if tail:
                assert tail == spans[-len(tail) :]
                assert tail[0][0] >= len(data) - 2000
            else:  # no line starts in the last 2,000 bytes
                assert b"\n" not in data[-2000:-1]

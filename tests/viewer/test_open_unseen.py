"""Enter on a marker lands on what the model never saw; the model view never shows the file.

The head the model saw is on screen already, in the excerpt above the marker;
opening the artifact puts the first byte it never saw (`ExcerptShape.head_bytes`
into the file) at the top of the view, with the seen head one `k` above. And
what the file view opens stays out of the model view, which is what the model
is sent: collapsed there until enter opens it there too.

The test run (`_runs.write_run`) stores 40 rows of 57 bytes; the model saw the
first 150 bytes (rows 000, 001 and part of 002) and the last 50.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync
from _runs import Run
from _screen import SIZE, assert_layout_consistent, cursor_row, rows_of

from transcript_view.core.filelines import FileLines
from transcript_view.core.records import SiteKey
from transcript_view.core.verification import FileCheck, FileState, MarkerState
from transcript_view.viewer import workers
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.inline import boundary_row
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.rows import InlineArtifact

ROW = 57  # bytes per row of the test run's artifact, LF included


def screen_of(app: TranscriptApp) -> TranscriptScreen:
    screen = app.screen
    assert isinstance(screen, TranscriptScreen)
    return screen


def art_count(screen: TranscriptScreen) -> int:
    return sum(1 for kind, _ in rows_of(screen) if kind == "art")


@sync
async def test_enter_puts_the_first_unseen_byte_at_the_top(run_factory: Any) -> None:
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        view = screen.view
        await pilot.press("n", "enter")
        await settle(pilot)
        row = cursor_row(screen)
        assert row.kind == "art" and "row 002" in row.text.plain  # holds byte 150
        assert int(view.scroll_y) == view.cursor  # at the top of the view
        await pilot.press("k")  # the seen head, one key away
        row = cursor_row(screen)
        assert row.kind == "art" and "row 001" in row.text.plain
        assert row.text.plain.strip().startswith("┃")  # a row the model saw
        assert int(view.scroll_y) == view.cursor
        await pilot.press("j", "j")
        assert cursor_row(screen).text.plain.strip().startswith("┆")  # never seen


@sync
async def test_landing_waits_until_the_index_reaches_the_boundary(
    run_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big artifact shows its first rows at once: the boundary may come with a later step."""
    monkeypatch.setattr(workers, "FIRST_INDEX_BYTES", 2 * ROW)  # rows 000-001 only
    monkeypatch.setattr(workers, "INDEX_STEP_BYTES", 3 * ROW)
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await pilot.press("n", "enter")
        await settle(pilot)
        row = cursor_row(screen)
        assert row.kind == "art" and "row 002" in row.text.plain
        assert int(screen.view.scroll_y) == screen.view.cursor
        assert_layout_consistent(screen)


@sync
async def test_closing_from_inside_the_artifact_puts_the_cursor_back_on_the_marker(
    run_factory: Any,
) -> None:
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await pilot.press("n")
        marker = screen.view.cursor
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("enter")  # on the boundary row: closes it
        await settle(pilot)
        assert not screen.artifacts
        assert screen.view.cursor == marker and cursor_row(screen).kind == "marker"


# -- the boundary row ------------------------------------------------------------------------


def _artifact(tmp_path: Path, head: int, tail: int = 50, rows: int = 10) -> InlineArtifact:
    body = b"".join(b"row %03d: the quick brown fox jumps over the lazy dog\n" % i
                    for i in range(rows))  # fmt: skip
    path = tmp_path / "a.txt"
    path.write_bytes(body)
    lines = FileLines(path, row_bytes=200)
    lines.index()
    check = FileCheck("a.txt", FileState.OK, size=len(body))
    return InlineArtifact(SiteKey(6, 0), lines, check, MarkerState.VERIFIED, head, tail)


@pytest.mark.parametrize(
    ("head", "row"),
    [
        (150, 2),  # inside row 002
        (2 * ROW, 2),  # row 002 starts the unseen part
        (2 * ROW - 1, 2),  # the head ends on row 001's LF: row 001 shows only seen text
        (0, 0),  # the model saw none of the head (no excerpt shape)
    ],
)
def test_the_boundary_row_holds_the_first_unseen_byte(tmp_path: Path, head: int, row: int) -> None:
    art = _artifact(tmp_path, head)
    try:
        assert boundary_row(art) == InlineArtifact.HEADER_ROWS + row
    finally:
        art.lines.close()


def test_an_artifact_the_model_saw_whole_lands_on_its_first_row(tmp_path: Path) -> None:
    art = _artifact(tmp_path, head=10 * ROW, tail=0)
    try:
        assert boundary_row(art) == InlineArtifact.HEADER_ROWS
    finally:
        art.lines.close()


# -- the model view --------------------------------------------------------------------------


@sync
async def test_an_artifact_opened_in_the_file_view_stays_collapsed_in_the_model_view(
    run_factory: Any,
) -> None:
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await pilot.press("n", "enter")
        await settle(pilot)
        assert art_count(screen) == 40
        await pilot.press("m")
        await settle(pilot)
        assert screen.view.showing_model
        assert art_count(screen) == 0  # what the model is sent: the excerpt, not the file
        assert any(kind == "marker" for kind, _ in rows_of(screen))
        assert_layout_consistent(screen)
        # Enter there shows it there too, landing on what the model never saw.
        await pilot.press("n", "enter")
        await settle(pilot)
        assert art_count(screen) == 40
        assert "row 002" in cursor_row(screen).text.plain
        # Enter again hides it in the model view only: the file view keeps it open.
        await pilot.press("enter")
        await settle(pilot)
        assert art_count(screen) == 0 and len(screen.artifacts) == 1
        await pilot.press("m")
        await settle(pilot)
        assert art_count(screen) == 40
        assert_layout_consistent(screen)


@sync
async def test_an_artifact_opened_in_the_model_view_is_not_spliced_into_the_file_view(
    run_factory: Any,
) -> None:
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await pilot.press("m")
        await settle(pilot)
        await pilot.press("n", "enter")
        await settle(pilot)
        assert art_count(screen) == 40
        await pilot.press("m")
        await settle(pilot)
        assert art_count(screen) == 0
        # Back in the model view where the cursor was (in the artifact it opened):
        # enter there closes it.
        await pilot.press("m", "enter")
        await settle(pilot)
        assert not screen.artifacts  # closed in the only view that showed it: closed
        assert art_count(screen) == 0

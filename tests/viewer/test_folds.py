"""The agent's own records folded: a run of them is one row of "what the model saw"."""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync
from _real_shapes import parallel_session
from _screen import SIZE, assert_counting_matches_building, assert_layout_consistent

from transcript_view.core import transcript as transcript_module
from transcript_view.core.formats.agent_records import RecordKind, record_of
from transcript_view.core.formats.claude_code import analyse_claude
from transcript_view.core.formats.detect import Format
from transcript_view.core.transcript import Transcript
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.blocks import FileSource
from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion
from transcript_view.viewer.folds import fold_words
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.measure import BlockRows


def test_a_run_says_how_many_of_what_and_that_none_reached_the_model() -> None:
    hook = RecordKind("progress record", "progress records", "", "hook", "hooks")
    bash = RecordKind("progress record", "progress records", "", "Bash", "Bash")
    title = RecordKind("title", "titles", "")
    assert fold_words([hook] * 12 + [bash] * 2) == (
        "14 progress records: 12 hooks, 2 Bash — not sent to the model"
    )
    assert fold_words([hook]) == "1 progress record: hook — not sent to the model"
    assert fold_words([hook] * 3) == "3 progress records: hooks — not sent to the model"
    assert fold_words([hook, bash, title]) == (
        "3 records: 2 progress records (1 hook, 1 Bash), 1 title — not sent to the model"
    )
    assert fold_words([title] * 2, more=True) == "at least 2 titles — not sent to the model"


def _rows(t: Transcript, ctx: BlockContext) -> list[tuple[int, list[str]]]:
    source = FileSource(t, ctx)
    source.index_complete = True
    return [
        (line, [r.text.plain for r in source.build(line - 1).rows])
        for line in range(1, t.line_count + 1)
    ]


def test_a_run_of_records_is_one_row_on_its_first_line_and_none_on_the_others(
    tmp_path: Path,
) -> None:
    path = parallel_session(tmp_path)
    with Transcript.open(path) as t:
        ctx = BlockContext(AnalysisState(), {}, Expansion(), width=100, format=Format.CLAUDE_CODE)
        built = _rows(t, ctx)
        folds = [(line, rows) for line, rows in built if any("▸" in r for r in rows)]
        # Lines 5-9 are the first call's progress; 10 its result; and so on.
        assert [line for line, _ in folds] == [5, 11, 17, 23]
        assert "▸ 5 progress records: 4 hooks, 1 Bash — not sent to the model" in folds[0][1][0]
        assert "4 progress records: hooks" in folds[2][1][0]
        assert "2 records: 1 turn duration, 1 title" in folds[3][1][0]
        assert all(rows == [] for line, rows in built if 5 < line < 10)
        text = "\n".join(r for _, rows in built for r in rows)
        assert "hookEvent" not in text and "Friendly Robot" not in text
        # Everything: each record on its own rows, the title as a title.
        ctx.fold_records = False
        text = "\n".join(r for _, rows in _rows(t, ctx) for r in rows)
        assert "▸" not in text and "hookEvent" in text
        assert "summary  the session's title, as `/resume` lists it" in text
        assert "Friendly Robot Icon Identification" in text


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("chunk", [150, 400, 900])
def test_the_pass_counts_a_fold_as_the_view_builds_it_across_batch_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, workers: int
) -> None:
    """A record's rows depend on the line before: a batch's measure is given that line."""
    path = parallel_session(tmp_path)
    monkeypatch.setattr(transcript_module, "READ_CHUNK", chunk)  # batches of a few lines
    measured: dict[int, int] = {}

    def take(first: int, counts: array[int]) -> None:
        measured.update((first + i, n) for i, n in enumerate(counts))

    with Transcript.open(path) as t:
        t.build_index()
        assert len(t.line_ranges()) > 3
        measure = BlockRows(90, Format.CLAUDE_CODE)
        analyse_claude(t, measure=measure, measured=take, workers=workers)
        ctx = BlockContext(AnalysisState(), {}, Expansion(), width=90, format=Format.CLAUDE_CODE)
        built = {line: len(rows) for line, rows in _rows(t, ctx)}
    assert measured == built
    assert sorted(line for line, n in built.items() if n == 0)[:4] == [6, 7, 8, 9]


def _text(screen: TranscriptScreen) -> str:
    source = screen.view.doc.source
    return "\n".join(
        r.text.plain for i in range(source.available()) for r in source.build(i).text_rows()
    )


def _go_to(screen: TranscriptScreen, kind: str, nth: int = 0) -> int:
    """Put the cursor on the `nth` row of `kind`; its row."""
    view = screen.view
    rows = [i for i in range(view.doc.total_rows) if (r := view.doc.row(i)) and r.kind == kind]
    view.set_cursor(rows[nth])
    return rows[nth]


@sync
async def test_enter_unfolds_a_run_and_folds_it_again(tmp_path: Path) -> None:
    app = TranscriptApp(parallel_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        folded_rows = view.doc.total_rows
        row = _go_to(screen, "fold")
        await pilot.press("enter")
        await settle(pilot)
        assert view.doc.row(row) is not None and view.doc.row(row).kind == "unfold"
        text = _text(screen)
        assert text.count("▾ progress  hook") == 4 and "▾ progress  Bash" in text
        assert text.count("▸ 5 progress records") == 1 and "▸ 4 progress records" in text
        assert view.doc.total_rows > folded_rows
        assert_layout_consistent(screen)
        assert_counting_matches_building(screen)
        # Enter on any of them folds the run back.
        _go_to(screen, "unfold", 2)
        await pilot.press("enter")
        await settle(pilot)
        assert view.doc.total_rows == folded_rows
        assert _text(screen).count("▸ 5 progress records") == 2
        assert view.doc.row(view.cursor).kind == "fold"
        assert_counting_matches_building(screen)


@sync
async def test_a_folded_row_opens_with_a_click_too(tmp_path: Path) -> None:
    app = TranscriptApp(parallel_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        row = _go_to(screen, "fold")
        view.set_cursor(0)
        await pilot.click(view, offset=(10, row - int(view.scroll_y)))
        await settle(pilot)
        assert view.doc.row(row) is not None and view.doc.row(row).kind == "unfold"


@sync
async def test_a_switches_between_what_the_model_saw_and_everything(tmp_path: Path) -> None:
    app = TranscriptApp(parallel_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        folded_rows = view.doc.total_rows
        await pilot.press("a")
        await settle(pilot)
        assert screen.header.view_name == "file view: every record"
        text = _text(screen)
        assert "▸" not in text and "hookEvent" in text and "turn_duration" in text
        assert view.doc.total_rows > folded_rows
        assert_layout_consistent(screen)
        assert_counting_matches_building(screen)
        await pilot.press("a")
        await settle(pilot)
        assert screen.header.view_name == "file view"
        assert view.doc.total_rows == folded_rows
        assert_counting_matches_building(screen)


@sync
async def test_a_search_hit_in_a_folded_record_shows_that_record(tmp_path: Path) -> None:
    app = TranscriptApp(parallel_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        view.search("Friendly Robot")
        await settle(pilot)
        row = view.current_row
        assert row is not None and "Friendly Robot Icon Identification" in row.text.plain
        assert view.expansion.unfolded_lines() == {row.line}
        assert_layout_consistent(screen)
        assert_counting_matches_building(screen)


def test_records_of_the_example_are_what_core_says(tmp_path: Path) -> None:
    """The viewer's fold is the core's rule: each folded line is a record there."""
    path = parallel_session(tmp_path)
    with Transcript.open(path) as t:
        ctx = BlockContext(AnalysisState(), {}, Expansion(), width=100, format=Format.CLAUDE_CODE)
        source = FileSource(t, ctx)
        source.index_complete = True
        for line in range(1, t.line_count + 1):
            obj: Any = json.loads(t.raw_line(line))
            assert source.folded(line) == (record_of(Format.CLAUDE_CODE, obj) is not None)


@sync
async def test_records_appended_while_following_join_the_run_they_follow(
    tmp_path: Path,
) -> None:
    path = parallel_session(tmp_path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("f")
        await settle(pilot)
        assert "▸ 2 records: 1 turn duration, 1 title" in _text(screen)
        with open(path, "a", encoding="utf-8") as fh:
            for n in range(3):
                fh.write(json.dumps({"type": "progress", "data": {"type": "hook_progress"},
                                     "uuid": f"late-{n}", "sessionId": "s"}) + "\n")
        screen.action_poll()
        await settle(pilot)
        text = _text(screen)
        assert "▸ 5 records: 1 turn duration, 1 title, 3 progress records (hooks)" in text
        assert text.count("▸") == 4
        assert_layout_consistent(screen)
        assert_counting_matches_building(screen)


def _rows_shown(screen: TranscriptScreen) -> list[tuple[str, int, str]]:
    doc = screen.view.doc
    return [(r.kind, r.line, r.text.plain) for i in range(doc.total_rows) if (r := doc.row(i))]


@sync
async def test_a_record_expanded_while_shown_folds_back_with_its_run(tmp_path: Path) -> None:
    """Enter on an unfolded record's text expands it (a block key); folding its run
    again must not leave it drawn whole with the rest of the run hidden and no fold
    row to reach them (found in review)."""
    app = TranscriptApp(parallel_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        folded = _rows_shown(screen)
        row = _go_to(screen, "fold")
        await pilot.press("enter")  # lines 5-9 on their own rows
        await settle(pilot)
        view.set_cursor(row + 1)  # the first record's text
        await pilot.press("enter")  # expands it
        await settle(pilot)
        view.set_cursor(row)
        await pilot.press("enter")  # folds the run again
        await settle(pilot)
        assert _rows_shown(screen) == folded
        assert_layout_consistent(screen)
        assert_counting_matches_building(screen)


@sync
async def test_a_record_expanded_in_everything_folds_with_its_run(tmp_path: Path) -> None:
    app = TranscriptApp(parallel_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        folded = _rows_shown(screen)
        await pilot.press("a")
        await settle(pilot)
        row = next(i for i, (_, line, _) in enumerate(_rows_shown(screen)) if line == 5)
        view.set_cursor(row + 1)
        await pilot.press("enter")  # expands line 5's record
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert _rows_shown(screen) == folded
        assert_layout_consistent(screen)


def test_a_fold_row_shows_a_type_names_controls_as_glyphs(tmp_path: Path) -> None:
    """A record type is the transcript's text: its controls are glyphs on the fold row as
    on the record's own heading (Rich drops a BEL a row is made of; found in review)."""
    path = tmp_path / "s.jsonl"
    weird = {"type": "x\x07\x1b]0;t\x07y", "sessionId": "s"}
    path.write_text(json.dumps(weird) + "\n")
    with Transcript.open(path) as t:
        ctx = BlockContext(AnalysisState(), {}, Expansion(), width=100, format=Format.CLAUDE_CODE)
        ((_, rows),) = _rows(t, ctx)
        assert "x␇␛]0;t␇y record" in rows[0]

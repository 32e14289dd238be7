"""Issue 27 in the file view: where a message lived and what it cost, compactions in place.

On `_real_shapes.context_session` (every call's size recorded, a spilled result,
an auto compaction and its summary): enter on a tool result's block says which
calls had it and what it cost, in the core's words (`core.lifetime`); the
compaction row says its trigger and the context before and after; its summary
is one folded row that enter opens and folds again. Counting agrees with
building throughout (the rows are the same code's).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _pilot import hold_analysis, settle, settle_except, sync
from _real_shapes import CONTEXT_SUMMARY, codex_compacted_rollout, context_session
from _runs import line as ref_line
from _screen import SIZE, assert_counting_matches_building, assert_layout_consistent, rows_of
from _support import REFERENCE

from transcript_view.core.lifetime import Lifetimes
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen


def _block_rows(screen: TranscriptScreen, line: int) -> list[tuple[str, str]]:
    doc = screen.view.doc
    index = doc.source.index_of_line(line)
    assert index is not None
    return [(r.kind, r.text.plain) for r in doc.block(index).text_rows()]


def _notes(rows: list[tuple[str, str]]) -> str:
    """The note rows' words, their wrapping undone."""
    return " ".join(text.strip() for kind, text in rows if kind == "note")


async def _enter_on(screen: TranscriptScreen, pilot: object, line: int) -> None:
    doc = screen.view.doc
    index = doc.source.index_of_line(line)
    assert index is not None
    screen.view.set_cursor(doc.block_start(index))
    await pilot.press("enter")  # type: ignore[attr-defined]
    await settle(pilot)


@sync
async def test_enter_on_a_tool_result_says_where_it_lived_and_what_it_cost(tmp_path: Path) -> None:
    path = context_session(tmp_path / "projects" / "p")
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert not _notes(_block_rows(screen, 7))  # not before the reader asks
        await _enter_on(screen, pilot, 7)
        said = _notes(_block_rows(screen, 7))
        analysis = screen.view.ctx.analysis
        assert analysis is not None
        # The words are the core's, for the same line.
        assert said == Lifetimes.of(analysis).words(screen.view.transcript, 7)
        assert said.startswith(
            "in context for calls 3–4 (2 calls); left at the compaction on line 11 · "
            "~820 tokens from usage (calls 2→3, with the turn that asked for it); the whole "
            "output would have cost ~5,991 tokens (estimate: the marker's size 23.4KB / 4)"
        )
        # The Bash result: its cost from usage, too.
        await _enter_on(screen, pilot, 5)
        assert "~180 tokens from usage (calls 1→2" in _notes(_block_rows(screen, 5))
        # The last reply: never sent.
        await _enter_on(screen, pilot, 13)
        said = _notes(_block_rows(screen, 13))
        assert said.startswith("never sent: no call after it · ~3 tokens")
        assert_layout_consistent(screen)
        assert_counting_matches_building(screen)
        # Enter again: the block as it was.
        await _enter_on(screen, pilot, 7)
        assert not _notes(_block_rows(screen, 7))


@sync
async def test_the_compaction_row_says_its_trigger_and_the_context_before_and_after(
    tmp_path: Path,
) -> None:
    app = TranscriptApp(context_session(tmp_path / "projects" / "p"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        notes = [text.strip() for kind, text in _block_rows(screen, 11) if kind == "note"]
        assert notes == [
            "compaction · trigger auto",
            "context before: 13,150 tokens (compactMetadata.preTokens)",
            "context after: 2,400 tokens (call 5's size, recorded)",
        ]
        assert_layout_consistent(screen)


@sync
async def test_the_summary_is_folded_and_enter_unfolds_and_refolds_it(tmp_path: Path) -> None:
    app = TranscriptApp(context_session(tmp_path / "projects" / "p"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        start = CONTEXT_SUMMARY[:40]
        folded = _block_rows(screen, 12)
        fold = [text for kind, text in folded if kind == "fold"]
        assert fold and fold[0].strip().endswith(
            f"▸ the compaction's summary: {len(CONTEXT_SUMMARY):,} characters, folded "
            "(enter shows it)"
        )
        assert not any(start in text for _, text in rows_of(screen))
        doc = screen.view.doc
        index = doc.source.index_of_line(12)
        assert index is not None
        row = next(i for i, (k, _) in enumerate(folded) if k == "fold")
        screen.view.set_cursor(doc.block_start(index) + row)
        await pilot.press("enter")
        await settle(pilot)
        shown = _block_rows(screen, 12)
        assert any(k == "unfold" and "(enter folds it)" in t for k, t in shown)
        assert any(start in text for _, text in shown)
        assert_layout_consistent(screen)
        assert_counting_matches_building(screen)
        row = next(i for i, (k, _) in enumerate(shown) if k == "unfold")
        screen.view.set_cursor(doc.block_start(index) + row)
        await pilot.press("enter")
        await settle(pilot)
        assert _block_rows(screen, 12) == folded
        assert_layout_consistent(screen)


@sync
async def test_a_search_finds_the_words_of_a_folded_summary(tmp_path: Path) -> None:
    app = TranscriptApp(context_session(tmp_path / "projects" / "p"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        screen.view.search("Point 17")
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        row = screen.view.current_row
        assert row is not None and "Point 17" in row.text.plain


@sync
async def test_codex_compactions_in_place_and_an_output_that_lived_one_call(
    tmp_path: Path,
) -> None:
    """`compacted`: its figures, its message folded; the encrypted `compaction`: its
    figures and the words that its summary cannot be read; an output's lifetime and cost."""
    app = TranscriptApp(codex_compacted_rollout(tmp_path / "rollout.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        compacted = _block_rows(screen, 9)
        assert [t.strip() for k, t in compacted if k == "note"] == [
            "compaction · trigger not recorded",
            "context before: 20,450 tokens (call 2's size, recorded)",
            "context after: 3,000 tokens (call 3's size, recorded)",
        ]
        assert any(k == "fold" and "its summary (message): 17 characters" in t
                   for k, t in compacted)  # fmt: skip
        assert not any("SUMMARY: built it" in t for _, t in compacted)
        encrypted = _block_rows(screen, 13)
        assert [t.strip() for k, t in encrypted if k == "note"] == [
            "compaction · trigger not recorded",
            "context before: 3,000 tokens (call 3's size, recorded)",
            "context after: 1,000 tokens (call 4's size, recorded)",
        ]
        assert any("summary not readable: encrypted by the provider" in t for _, t in encrypted)
        await _enter_on(screen, pilot, 6)
        assert _notes(_block_rows(screen, 6)).startswith(
            "in context for call 2 (1 call); left at the compaction on line 9 · ~450 tokens "
            "from usage (calls 1→2, with the turn that asked for it)"
        )
        assert_layout_consistent(screen)
        assert_counting_matches_building(screen)


@sync
async def test_a_block_expanded_before_the_analysis_is_recounted_when_it_lands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The words need the analysis: a block expanded before it lands says nothing yet, and
    is counted again when it does (as is the compaction, whose figures were to come)."""
    opened = hold_analysis(monkeypatch)
    app = TranscriptApp(context_session(tmp_path / "projects" / "p"))
    try:
        async with app.run_test(size=(100, 14)) as pilot:
            await settle_except(pilot, "analysis")
            screen = app.screen
            assert isinstance(screen, TranscriptScreen)
            assert screen.view.ctx.analysis is None
            assert _notes(_block_rows(screen, 11)) == "its figures come with the analysis…"
            doc = screen.view.doc
            index = doc.source.index_of_line(5)
            assert index is not None
            screen.view.set_cursor(doc.block_start(index))
            await pilot.press("enter")
            await settle_except(pilot, "analysis")
            assert not _notes(_block_rows(screen, 5))
            assert_layout_consistent(screen)
            await pilot.press("end")  # off the screen: nothing rebuilds it on the way
            await settle_except(pilot, "analysis")
            opened.set()
            await settle(pilot)
            assert screen.view.ctx.analysis is not None
            assert_layout_consistent(screen)
            assert _notes(_block_rows(screen, 5)).startswith("in context for calls 2–4")
            assert _notes(_block_rows(screen, 11)).startswith("compaction · trigger auto")
    finally:
        opened.set()


@pytest.mark.parametrize("which", ["codex", "reference"])
@sync
async def test_a_compaction_off_the_screen_is_recounted_when_the_analysis_lands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    """A Codex `compacted` line and an LLM::Agent `compaction`: counted before the analysis
    (one row saying its figures are to come), then again with them (three rows)."""
    if which == "codex":
        path, line = codex_compacted_rollout(tmp_path / "rollout.jsonl"), 9
    else:
        path, line = REFERENCE / "compaction.jsonl", 10
    opened = hold_analysis(monkeypatch)
    app = TranscriptApp(path)
    try:
        async with app.run_test(size=(100, 12)) as pilot:
            await settle_except(pilot, "analysis")
            screen = app.screen
            assert isinstance(screen, TranscriptScreen)
            assert _notes(_block_rows(screen, line)) == "its figures come with the analysis…"
            await pilot.press("home")
            await settle_except(pilot, "analysis")
            opened.set()
            await settle(pilot)
            assert_layout_consistent(screen)
            assert _notes(_block_rows(screen, line)).startswith("compaction · trigger")
    finally:
        opened.set()


def _kept_run(path: Path) -> Path:
    """An LLM::Agent run: a plain message (2), a sticky one (3), one injected at a depth (4;
    a depth of any value keeps a message, as the pass reads it), two calls, then a
    compaction that replaces everything through line 6 but what it keeps."""
    answer = {"role": "assistant", "content": "A" * 20, "usage": {"prompt-tokens": 37}}
    compaction = {"summary": "Z" * 60, "tokens-before": 300, "tokens-after": 90,
                  "replaces-through-id": "00000000-0000-4000-8000-000000000006",
                  "fallback": False}  # fmt: skip
    lines = [
        ref_line(1, "session-meta", {"app": "t"}),
        ref_line(2, "message", {"role": "user", "content": "U" * 100}),
        ref_line(3, "message", {"role": "user", "content": "S" * 40, "sticky": True}),
        ref_line(4, "message", {"role": "user", "content": "D" * 30, "depth": "x"}),
        ref_line(5, "message", answer),
        ref_line(6, "message", {"role": "user", "content": "V" * 50}),
        ref_line(7, "message", {**answer, "usage": {"prompt-tokens": 80}}),
        ref_line(8, "compaction", compaction),
        ref_line(9, "message", {**answer, "usage": {"prompt-tokens": 91}}),
    ]
    path.write_text("".join(lines), "utf-8")
    return path


@sync
async def test_a_message_no_compaction_drops_says_so_and_a_plain_one_leaves(
    tmp_path: Path,
) -> None:
    app = TranscriptApp(_kept_run(tmp_path / "run.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        said = {}
        for line in (2, 3, 4):
            await _enter_on(screen, pilot, line)
            said[line] = _notes(_block_rows(screen, line))
        left = "in context for calls 1–2 (2 calls); left at the compaction on line 8"
        assert said[2].startswith(left), said[2]
        for line in (3, 4):  # kept through the compaction: in context for every call
            assert said[line].startswith("in context for calls 1–3 (3 calls)"), said[line]
            assert "left at" not in said[line]

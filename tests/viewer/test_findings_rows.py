"""Counts and words on the transcript screen: findings, the header, `p`'s last word, `c`.

What a newcomer met: a finding cut at the width ("the file digests t…") with no
way to read the rest; a note wearing a warning's ⚠; `problems 3` where `p`
reached two; "No more problems found (so far)" after everything had been
checked; "replaces through 38393639…"; "Copied …" in a tmux that dropped it.
"""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync
from _runs import Run, line, write_key_without_marker
from _screen import SIZE, assert_counting_matches_building, cursor_row, rows_of
from _support import EXAMPLES, REFERENCE
from rich.console import Console

from transcript_view.core.findings import Severity
from transcript_view.core.text import COPY_HINT
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.palette import SEVERITY_MARKS
from transcript_view.viewer.screens.help import HelpScreen, finding_table

Toasts = list[tuple[str, dict[str, Any]]]


def _screen(app: TranscriptApp) -> TranscriptScreen:
    screen = app.screen
    assert isinstance(screen, TranscriptScreen)
    return screen


def _listen(app: TranscriptApp) -> Toasts:
    """Every toast from now on: (message, its keyword arguments)."""
    toasts: Toasts = []
    app.notify = lambda message, **k: toasts.append((message, k))  # type: ignore[method-assign]
    return toasts


def _finding_rows(screen: TranscriptScreen) -> list[tuple[str, str]]:
    return [(k, t) for k, t in rows_of(screen) if k in ("finding", "finding-wrap")]


# -- a finding too long for the width ------------------------------------------------------------


@pytest.mark.parametrize("width", [120, 80, 60])
@sync
async def test_a_long_finding_is_wrapped_and_every_word_shown(run_factory: Any, width: int) -> None:
    run: Run = run_factory("digest mismatch")
    app = TranscriptApp(run.path)
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(pilot)
        screen = _screen(app)
        ledger = screen.state.ledger
        assert ledger is not None
        (finding,) = ledger.findings_of(ledger.analysis.excerpt_sites[0].key)
        rows = _finding_rows(screen)
        assert rows[0][0] == "finding" and len(rows) > 1, rows
        assert all(kind == "finding-wrap" for kind, _ in rows[1:])
        assert not any(text.rstrip().endswith("…") for _, text in rows), rows
        pieces = [text.split(": ", 1)[1] if i == 0 else text for i, (_, text) in enumerate(rows)]
        # Every character, in order (a digest wider than the row is cut where it must be).
        assert "".join("".join(pieces).split()) == "".join(finding.message.split())
        if width >= 80:  # wide enough for a digest: broken only at spaces
            assert " ".join(p.strip() for p in pieces) == finding.message
        assert all(len(text) <= width for _, text in rows)
        assert_counting_matches_building(screen)


@sync
async def test_p_stops_once_per_finding_not_on_its_wrapped_rows(tmp_path: Path) -> None:
    """A wrapped finding is one problem: `p` lands on its first row, then the next finding."""
    path = write_key_without_marker(tmp_path)  # line 6: two findings, one of them long
    app = TranscriptApp(path)
    async with app.run_test(size=(80, 30)) as pilot:
        await settle(pilot)
        screen = _screen(app)
        kinds = [k for k, _ in _finding_rows(screen)]
        assert kinds.count("finding-wrap") >= 1, kinds
        seen = []
        for _ in range(kinds.count("finding")):
            await pilot.press("p")
            row = cursor_row(screen)
            seen.append((row.kind, row.text.plain.split(":")[0].strip()))
        assert seen == [("finding", "✗ metadata-mismatch"), ("finding", "✗ missing-artifact")]
        toasts = _listen(app)
        await pilot.press("p")
        assert cursor_row(screen).kind == "finding"  # stayed on the last one
        assert [m for m, _ in toasts] == ["No more problems below."]


# -- a note is not a warning -------------------------------------------------------------------


def test_each_severity_has_its_own_mark() -> None:
    marks = [SEVERITY_MARKS[s] for s in Severity]
    assert len(set(marks)) == len(marks) == 3
    assert SEVERITY_MARKS[Severity.NOTE] != "⚠"


@sync
async def test_a_note_wears_the_note_mark_and_an_error_the_error_mark(
    run_factory: Any,
) -> None:
    """basic's artifact has a `chars-differ` note; a missing file is an error."""
    app = TranscriptApp(REFERENCE / "basic.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        (note,) = [t for _, t in _finding_rows(_screen(app)) if "chars-differ" in t]
        assert note.strip().startswith(f"{SEVERITY_MARKS[Severity.NOTE]} chars-differ:"), note
    run: Run = run_factory("missing")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        (error,) = [t for _, t in _finding_rows(_screen(app)) if "missing-artifact" in t]
        assert error.strip().startswith(f"{SEVERITY_MARKS[Severity.ERROR]} missing-artifact:")


def test_the_help_explains_every_mark() -> None:
    console = Console(file=StringIO(), width=120, record=True, color_system=None)
    console.print(finding_table())
    text = console.export_text()
    for severity in Severity:
        assert f"{SEVERITY_MARKS[severity]}  {severity.value}:" in text, text


@sync
async def test_question_mark_shows_the_finding_legend() -> None:
    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        legend = app.screen.query_one("#help-findings")
        assert legend.display


# -- the header: problems p reaches, orphans apart -------------------------------------------


@sync
async def test_the_header_counts_the_orphan_apart_from_the_problems() -> None:
    app = TranscriptApp(EXAMPLES / "broken.jsonl")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        header = _screen(app).header
        assert (header.problems, header.orphans) == (2, 1)
        first = header.render().plain.splitlines()[0]
        assert "problems 2" in first and "orphans 1" in first, first


@sync
async def test_no_orphans_no_orphan_count() -> None:
    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        header = _screen(app).header
        assert header.orphans == 0
        assert "orphans" not in header.render().plain


@sync
async def test_p_reaches_as_many_problems_as_the_header_counts() -> None:
    app = TranscriptApp(EXAMPLES / "broken.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = _screen(app)
        lines = []
        for _ in range(5):
            await pilot.press("p")
            row = cursor_row(screen)
            if row.line in lines:
                break
            lines.append(row.line)
        assert len(lines) == screen.header.problems == 2


# -- p's last word -----------------------------------------------------------------------------


@sync
async def test_p_says_no_problems_found_without_so_far_once_all_is_checked(
    run_factory: Any,
) -> None:
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert _screen(app).state.ledger.complete  # type: ignore[union-attr]
        toasts = _listen(app)
        await pilot.press("p")
        await pilot.press("P")
        assert [m for m, _ in toasts] == ["No problems found.", "No problems found."]


@sync
async def test_p_says_so_far_while_artifacts_are_still_being_checked(
    run_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run: Run = run_factory("verified")
    monkeypatch.setattr(TranscriptScreen, "_verify", lambda self, *a: None)  # never finishes
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        toasts = _listen(app)
        await pilot.press("p")
        assert [m for m, _ in toasts] == [
            "No problems found so far: artifacts are still being checked."
        ]


@sync
async def test_at_the_last_problem_p_points_to_the_orphans() -> None:
    app = TranscriptApp(EXAMPLES / "broken.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p", "p")
        toasts = _listen(app)
        await pilot.press("p")
        assert [m for m, _ in toasts] == ["No more problems below. Besides: 1 orphan (o lists it)."]


# -- compactions by line -----------------------------------------------------------------------


@sync
async def test_a_compaction_says_which_lines_it_replaces() -> None:
    app = TranscriptApp(REFERENCE / "compaction.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        (head,) = [t for k, t in rows_of(_screen(app)) if k == "head" and "compaction" in t]
        assert "replaces lines 3–5" in head, head
        assert "replaces through" not in head


@sync
async def test_a_compaction_that_cuts_nothing_says_so(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        line(1, "session-meta", {})
        + line(2, "message", {"content": "q", "role": "user"}, "m-user")
        + line(3, "compaction", {"replaces-through-id": "nobody-knows", "summary": "s"}),
        encoding="utf-8",
    )
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        (head,) = [t for k, t in rows_of(_screen(app)) if k == "head" and "compaction" in t]
        assert "replaces nothing: nobody-k… is not in the conversation" in head, head


# -- c shows what it copied ----------------------------------------------------------------------


@sync
async def test_c_shows_the_copied_path_in_its_toast(
    run_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    clipboard: list[str] = []
    monkeypatch.setattr(TranscriptApp, "copy_to_clipboard", lambda self, t: clipboard.append(t))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n")
        toasts = _listen(app)
        await pilot.press("c")
        path = str(run.artifact_dir / run.artifact_name)
        assert clipboard == [path]
        ((message, kwargs),) = toasts
        assert message.splitlines() == [path, COPY_HINT]
        assert kwargs["title"] == f"Copied the path of {run.artifact_name}"
        assert kwargs["markup"] is False


@sync
async def test_c_on_an_unstored_marker_shows_the_marker_text(
    run_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run: Run = run_factory("not stored")
    app = TranscriptApp(run.path)
    monkeypatch.setattr(TranscriptApp, "copy_to_clipboard", lambda self, t: None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n")
        toasts = _listen(app)
        await pilot.press("c")
        ((message, kwargs),) = toasts
        assert message.splitlines()[0] == run.marker
        assert kwargs["title"] == "Copied the marker text"

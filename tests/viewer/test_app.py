"""What every key of the transcript screen does, driven through Textual's pilot.

No test sleeps: each waits on the app's workers (`settle`) and then looks at
the screen's state. Small transcripts are written into tmp_path by conftest.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pilot import settle, sync
from _runs import BADGE_CASES, Run, line
from _screen import (
    SIZE,
    assert_counting_matches_building,
    assert_layout_consistent,
    cursor_row,
    rows_of,
)
from _support import EXAMPLES, REFERENCE_TRANSCRIPTS, one_read_run

from transcript_view.core.verification import MarkerState
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.context import BlockKey
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.transcript_view import TranscriptView

# -- opening -------------------------------------------------------------------------------


@pytest.mark.parametrize("stem", REFERENCE_TRANSCRIPTS)
@sync
async def test_reference_fixture_opens_and_renders(stem: str, reference_dir: Path) -> None:
    app = TranscriptApp(reference_dir / f"{stem}.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert screen.analysis is not None
        assert screen.header.envelopes == screen.analysis.envelopes
        rows = rows_of(screen)  # every block builds without an error
        assert rows and rows[0][1].strip().startswith("1 session")
        assert_layout_consistent(screen)
        await pilot.press("m")  # and the model view too
        await settle(pilot)
        assert screen.view.doc.view == "model"
        assert rows_of(screen)
        assert_layout_consistent(screen)


COUNTED = [f"{stem}.jsonl" for stem in REFERENCE_TRANSCRIPTS] + ["demo.jsonl", "broken.jsonl"]


@pytest.mark.parametrize("name", COUNTED)
@sync
async def test_counting_a_block_matches_building_it(name: str, reference_dir: Path) -> None:
    """At two widths, with every stored artifact open and a long block expanded."""
    path = EXAMPLES / name if (EXAMPLES / name).exists() else reference_dir / name
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        assert_counting_matches_building(screen)
        for site in screen.analysis.excerpt_sites:
            if site.marker.file is not None:
                screen.post_message(TranscriptView.ArtifactRequested(site.key))
        await settle(pilot)
        screen.view.expansion.expand(BlockKey("file", 1))
        assert_counting_matches_building(screen)
        await pilot.resize_terminal(50, 30)
        await settle(pilot)
        assert_counting_matches_building(screen)
        assert_layout_consistent(screen)


@sync
async def test_reference_basic_verifies(reference_dir: Path) -> None:
    app = TranscriptApp(reference_dir / "basic.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        header = app.screen.header
        assert (header.markers, header.verified, header.problems) == (1, 1, 0)


@sync
async def test_demo_example_counts() -> None:
    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        header = app.screen.header
        assert header.envelopes == 14
        assert header.markers == 2
        assert header.verified == 1
        assert header.phase == ""


@sync
async def test_broken_example_has_problems() -> None:
    app = TranscriptApp(EXAMPLES / "broken.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        # Two on lines (a missing file, a digest mismatch), and an orphan counted apart.
        assert (screen.header.problems, screen.header.orphans) == (2, 1)
        assert screen.state.ledger is not None
        states = set(screen.state.ledger.states())
        assert MarkerState.MISSING in states
        assert MarkerState.DIGEST_MISMATCH in states
        assert screen.orphans


@pytest.mark.parametrize("state", BADGE_CASES)
@sync
async def test_each_badge_state(state: str, run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory(state)
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.state.ledger is not None
        assert [s.value for s in screen.state.ledger.states()] == [state]
        markers = [text for kind, text in rows_of(screen) if kind == "marker"]
        assert any(state in text for text in markers)
        quoted = [text for kind, text in rows_of(screen) if kind == "quoted"]
        assert quoted and "verified" not in quoted[0]


@sync
async def test_checking_badge_while_hashing(run_factory, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    monkeypatch.setattr(TranscriptScreen, "_verify", lambda self, *a: None)
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.state.ledger is not None
        assert screen.state.ledger.states() == [MarkerState.CHECKING]
        assert screen.header.phase == "checking artifacts"


@sync
async def test_hostile_text_is_shown_not_obeyed(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    evil = "\x1b]52;c;aGk=\x07 [bold red]markup[/] \x1b[2J done\rover"
    path.write_text(
        line(1, "session-meta", {"x": "\x1b[31m"})
        + line(2, "message", {"content": evil, "role": "user"})
        + line(3, "grants", {"fs": ["read"]})
        + line(4, "run-context", {"facts": [["a", "b"]], "run-id": "r1", "sections": []})
        + line(5, "subagent-spawned", {"child": "c1"})
        + line(6, "mystery-type", {"what": 1})
        + line(7, "elision", {"items": [{"id": "00000000-0000-4000-8000-000000000002",
                                         "stub": "[stubbed]"}]})
        + "{not json\n"
        + '{"id":"x","payload":{},"ts":"t","type":"message","v":2}\n'
        + '{"id":"y","payload":{"role":"user","content":"torn',
        encoding="utf-8",
    )
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = rows_of(app.screen)
        text = "\n".join(t for _, t in rows)
        assert "\x1b" not in text and "\x07" not in text and "\r" not in text
        assert "␛]52;c;aGk=␇ [bold red]markup[/] ␛[2J done␍over" in text
        kinds = [k for k, _ in rows]
        assert kinds.count("problem") == 3
        assert any("torn-tail" in t for k, t in rows if k == "problem")
        # The row names the kind `--check` reports (a version it cannot read is a
        # malformed line), and the reader's reason after it.
        assert any("malformed-line" in t and "envelope version" in t
                   for k, t in rows if k == "problem")  # fmt: skip
        for word in ("grants", "run-context", "subagent-spawned", "unknown type mystery-type",
                     "elision"):
            assert any(word in t for k, t in rows if k == "head"), word


# -- keys --------------------------------------------------------------------------------------


@sync
async def test_toasts_never_parse_markup_from_file_names(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        shown: list[tuple[str, bool]] = []
        app.notify = lambda message, *a, markup=True, **k: shown.append((message, markup))  # type: ignore[method-assign]
        await pilot.press("n")
        run.artifact_dir.joinpath(run.artifact_name).unlink()
        (run.artifact_dir / run.artifact_name).mkdir()  # now a directory: cannot be paged
        await pilot.press("e")
        assert shown and all(markup is False for _, markup in shown)
        assert screen is app.screen


@sync
async def test_n_and_N_step_through_markers(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("n")
        first = cursor_row(screen)
        assert first.kind == "marker" and first.line == 6
        await pilot.press("n")
        second = cursor_row(screen)
        assert second.kind == "quoted" and second.line == 8
        await pilot.press("N")
        assert cursor_row(screen).site == first.site


@sync
async def test_p_and_P_step_through_problems(tmp_path: Path, run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("missing")
    with run.path.open("a", encoding="utf-8") as f:
        f.write("{broken\n")
        f.write(line(10, "message", {"content": "after", "role": "user"}))
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("p")
        row = cursor_row(screen)
        assert row.kind == "marker" and row.line == 6
        await pilot.press("p")
        row = cursor_row(screen)
        assert row.kind == "problem" and row.line == 9
        await pilot.press("P")
        assert cursor_row(screen).line == 6


@sync
async def test_enter_opens_the_artifact_inline_and_closes_it(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        before = screen.view.doc.total_rows
        await pilot.press("n", "enter")
        await settle(pilot)
        key = cursor_row(screen).site
        assert key in screen.artifacts
        rows = rows_of(screen)
        art = [t for k, t in rows if k == "art"]
        assert len(art) == 40
        assert "row 000" in art[0] and "row 039" in art[-1]
        head = "\n".join(t for k, t in rows if k == "art-head")
        assert "2,120 bytes" in head and "verified" in head
        assert "it never saw bytes 150–2,070" in head
        # The model saw rows 000-002 (head) and the last row (tail); 003-038 it never saw.
        art_rows = [screen.view.doc.row(i) for i in range(screen.view.doc.total_rows)]
        art_rows = [r for r in art_rows if r is not None and r.kind == "art"]
        assert art_rows[0].text.plain.strip().startswith("┃")
        assert art_rows[10].text.plain.strip().startswith("┆")
        assert art_rows[-1].text.plain.strip().startswith("┃")
        await pilot.press("enter")
        await settle(pilot)
        assert key not in screen.artifacts
        assert screen.view.doc.total_rows == before


@sync
async def test_a_big_artifact_opens_at_once_and_grows(run_factory, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The first rows show while the rest is indexed; the hash comes from verification."""
    from transcript_view.viewer import workers

    monkeypatch.setattr(workers, "FIRST_INDEX_BYTES", 300)
    monkeypatch.setattr(workers, "INDEX_STEP_BYTES", 500)
    monkeypatch.setattr(TranscriptScreen, "_verify", lambda self, *a: None)
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("n", "enter")
        await settle(pilot)
        art = next(iter(screen.artifacts.values()))
        assert art.known_rows == art.lines.row_count == 40
        rows = rows_of(screen)
        assert sum(1 for k, _ in rows if k == "art") == 40
        assert any("└ end of artifact" in t for k, t in rows if k == "art-end")
        assert any("sha256 being computed" in t for k, t in rows if k == "art-head")
        assert_layout_consistent(screen)


@sync
async def test_enter_expands_and_collapses_a_long_message(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    body = "\n".join(f"line {i}" for i in range(60))
    path.write_text(
        line(1, "session-meta", {}) + line(2, "message", {"content": body, "role": "user"}),
        encoding="utf-8",
    )
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        rows = rows_of(screen)
        more = next(i for i, (k, _) in enumerate(rows) if k == "more")
        assert "54 more lines (enter to expand)" in rows[more][1]
        screen.view.set_cursor(more)
        await pilot.press("enter")
        # Every line, and a row saying where the message lived (`core.lifetime`).
        assert len(rows_of(screen)) == len(rows) + 54 - 1 + 1
        assert [k for k, _ in rows_of(screen)].count("note") == 1
        await pilot.press("enter")
        assert len(rows_of(screen)) == len(rows)


@sync
async def test_an_open_artifact_shows_in_both_views_and_survives_a_resize(run_factory) -> None:  # type: ignore[no-untyped-def]
    """Opened in the file view, then in the model view too (where it starts collapsed)."""
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("n", "enter")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert not any(k == "art" for k, _ in rows_of(screen))  # not sent: collapsed here
        await pilot.press("n", "enter")
        await settle(pilot)
        assert sum(1 for k, _ in rows_of(screen) if k == "art") == 40
        assert_layout_consistent(screen)
        await pilot.resize_terminal(90, 30)
        await settle(pilot)
        assert screen.view.text_width < 90
        assert all(len(t) <= screen.view.text_width for _, t in rows_of(screen))
        assert_layout_consistent(screen)
        await pilot.press("m")
        await settle(pilot)
        assert screen.view.doc.view == "file"
        assert_layout_consistent(screen)
        assert all(len(t) <= screen.view.text_width for _, t in rows_of(screen))


def write_wide_artifact_run(path: Path) -> list[str]:
    """A run whose one stored result has lines of 200 characters; returns those lines."""
    lines = [f"{i:03d} " + "abcdefghij" * 19 + "xyz!" for i in range(30)]
    one_read_run(path, "read the wide file", "\n".join(lines))
    return lines


def art_texts(screen: TranscriptScreen) -> list[str]:
    """The file text of every inline-artifact row on show, bar and gutter removed."""
    return [t.strip()[2:] for k, t in rows_of(screen) if k == "art"]


@sync
async def test_a_resize_rewraps_an_open_artifact_without_losing_text(tmp_path: Path) -> None:
    """Artifact rows are cut to the width when opened; a narrower window cuts them again.

    Before the fix the rows kept the old cut and were truncated at the new width,
    hiding the end of every long line.
    """
    path = tmp_path / "wide.jsonl"
    lines = write_wide_artifact_run(path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("n", "enter")
        await settle(pilot)
        (art,) = screen.artifacts.values()
        assert art.lines.row_bytes == screen.view.text_width - 9
        assert "".join(art_texts(screen)) == "".join(lines)
        await pilot.resize_terminal(70, 30)
        await settle(pilot)
        (art,) = screen.artifacts.values()
        assert art.lines.row_bytes == screen.view.text_width - 9
        texts = art_texts(screen)
        assert "".join(texts) == "".join(lines)  # every byte still on screen
        assert len(texts) > 30 * (200 // (screen.view.text_width - 9))
        assert all(len(t) <= screen.view.text_width for _, t in rows_of(screen))
        assert_layout_consistent(screen)


@sync
async def test_an_artifact_row_too_wide_to_show_ends_in_an_ellipsis(tmp_path: Path) -> None:
    """Tabs expand to up to 8 cells: a row cut by bytes can overflow, and says so."""
    from transcript_view.core.session import Session

    path = tmp_path / "tabs.jsonl"
    content = "\n".join("\t\t\t\t" + f"{i:03d} " + "x" * 200 for i in range(30))
    with Session.create(path, {"app": "tests"}, limit=300) as s:
        op = s.append_tool_dispatched("call_1", "fs_read", "{}", round=1)
        s.settle(op, "call_1", content)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("n", "enter")
        await settle(pilot)
        art = [t for k, t in rows_of(screen) if k == "art"]
        assert art and all(len(t) <= screen.view.text_width for t in art)
        first = next(t for t in art if "000" in t)
        assert first.endswith("…")  # 4 tabs became 32 cells: the row's end is cut
        assert sum(t.endswith("…") for t in art) == 30  # one per line: its first row


@sync
async def test_a_resize_while_an_artifact_is_being_indexed_is_not_lost(tmp_path: Path) -> None:
    """Rows cut for the old width that land after a resize are cut again."""
    from transcript_view.core.filelines import FileLines
    from transcript_view.viewer.messages import ArtifactOpened

    path = tmp_path / "wide.jsonl"
    lines = write_wide_artifact_run(path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("n", "enter")
        await settle(pilot)
        (key,) = screen.artifacts
        art = screen.artifacts[key]
        old_width = art.lines.row_bytes
        screen.artifacts._indexing.add(key)  # an index at the old width is still running...
        await pilot.resize_terminal(70, 30)  # ...when the window shrinks
        await settle(pilot)
        assert screen.artifacts[key].lines.row_bytes == old_width
        late = FileLines(art.lines.path, row_bytes=old_width)
        late.index()
        screen.post_message(ArtifactOpened(key, late, art.check))  # it lands
        await settle(pilot)
        now = screen.artifacts[key]
        assert now.lines.row_bytes == screen.view.text_width - 9 != old_width
        assert "".join(art_texts(screen)) == "".join(lines)
        assert_layout_consistent(screen)


@sync
async def test_an_artifact_closed_while_being_rewrapped_stays_closed(tmp_path: Path) -> None:
    from transcript_view.core.filelines import FileLines
    from transcript_view.viewer.messages import ArtifactOpened

    path = tmp_path / "wide.jsonl"
    write_wide_artifact_run(path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("n", "enter")
        await settle(pilot)
        (key,) = screen.artifacts
        art = screen.artifacts[key]
        screen.artifacts._indexing.add(key)  # a rewrap is in flight...
        await pilot.press("enter")  # ...when the artifact is closed
        assert key not in screen.artifacts
        late = FileLines(art.lines.path, row_bytes=20)
        late.index()
        screen.post_message(ArtifactOpened(key, late, art.check))
        await settle(pilot)
        assert key not in screen.artifacts
        assert late.closed


@sync
async def test_click_on_a_marker_opens_its_artifact(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        rows = rows_of(screen)
        at = next(i for i, (k, _) in enumerate(rows) if k == "marker")
        await pilot.click("#transcript", offset=(30, at))
        await settle(pilot)
        assert screen.artifacts


@sync
async def test_a_double_or_triple_click_on_the_transcript_does_not_crash(run_factory) -> None:  # type: ignore[no-untyped-def]
    """Bug: a reactive named `query` shadowed `DOMNode.query()`, which Textual calls
    to select all on a multi-click: `TypeError: 'str' object is not callable`."""
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.double_click("#transcript", offset=(10, 2))
        await pilot.triple_click("#transcript", offset=(10, 3))
        await settle(pilot)
        assert app.is_running and app.screen is screen
        assert screen.view.cursor == 3
        assert callable(screen.view.query)  # Textual's own method, not shadowed


@sync
async def test_o_opens_the_orphans_screen(run_factory) -> None:  # type: ignore[no-untyped-def]
    from transcript_view.viewer.screens.orphans import OrphansScreen

    run: Run = run_factory("verified")
    (run.artifact_dir / "lost.txt").write_text("nobody names me\n")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert [o.name for o in app.screen.orphans] == ["lost.txt"]
        assert (app.screen.header.problems, app.screen.header.orphans) == (0, 1)
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, OrphansScreen)


@sync
async def test_m_switches_to_the_model_view(reference_dir: Path) -> None:
    app = TranscriptApp(reference_dir / "compaction.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("m")
        await settle(pilot)
        assert screen.view.doc.view == "model"
        assert "model view" in screen.header.view_name
        heads = [t for k, t in rows_of(screen) if k == "head" and t[:6].strip()]
        assert len(heads) == len(screen.analysis.replay)
        assert any("compaction summary" in t for t in heads)
        assert "1 compaction summary" in rows_of(screen)[0][1]  # the preamble
        assert any("THE SUMMARY" in t for _, t in rows_of(screen))
        await pilot.press("m")
        assert screen.view.doc.view == "file"


@sync
async def test_model_view_shows_elision_stubs(reference_dir: Path) -> None:
    app = TranscriptApp(reference_dir / "aging.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        rows = rows_of(app.screen)
        assert any("elision stub" in t for k, t in rows if k == "head")
        assert not any(k == "marker" for k, _ in rows)  # the excerpt itself was stubbed


@sync
async def test_slash_searches_and_n_steps_through_hits(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("slash")
        await pilot.press(*"039")
        await pilot.press("enter")
        await settle(pilot)
        assert screen.view.search_query == "039"
        assert len(screen.view.hits) == 2  # the tool result's tail and the final answer
        assert "039" in cursor_row(screen).text.plain
        first = screen.view.cursor
        await pilot.press("n")
        assert screen.view.cursor > first
        assert "039" in cursor_row(screen).text.plain
        await pilot.press("N")
        assert screen.view.cursor == first
        await pilot.press("escape")
        assert screen.view.search_query == ""


@sync
async def test_typing_in_the_search_box_does_not_trigger_keys(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("slash", *"quick fox nop", "enter")
        await settle(pilot)
        assert app.is_running and app.screen is screen
        assert screen.view.search_query == "quick fox nop"
        assert screen.view.hits == []


@sync
async def test_search_expands_a_collapsed_hit(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        # "row 037" is in the artifact only, "row 002" in the head the model saw.
        screen.view.search("row 002")
        await settle(pilot)
        assert "row 002" in cursor_row(screen).text.plain


@sync
async def test_e_opens_the_artifact_in_the_pager(run_factory, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    calls: list[list[str]] = []
    monkeypatch.setenv("PAGER", "mypager -R")
    monkeypatch.setattr("transcript_view.viewer.pager.shutil.which", lambda name: f"/bin/{name}")
    monkeypatch.setattr(
        "transcript_view.viewer.pager.subprocess.call", lambda argv: calls.append(argv) or 0
    )
    monkeypatch.setattr("transcript_view.viewer.pager.wait_for_enter", lambda: True)

    @contextlib.contextmanager
    def fake_suspend(self: TranscriptApp) -> Iterator[None]:
        yield

    monkeypatch.setattr(TranscriptApp, "suspend", fake_suspend)
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n", "e")
        assert calls == [["mypager", "-R", str(run.artifact_dir / run.artifact_name)]]


@sync
async def test_c_copies_the_artifact_path(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n", "c")
        assert app.clipboard == str(run.artifact_dir / run.artifact_name)


@sync
async def test_c_copies_the_marker_text_when_nothing_was_stored(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("not stored")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n", "c")
        assert app.clipboard == run.marker


@sync
async def test_f_follows_appended_lines(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("f")
        assert screen.following and screen.header.following
        # Not at the end: the position is kept.
        screen.view.set_cursor(3)
        with run.path.open("a", encoding="utf-8") as f:
            f.write(line(9, "message", {"content": "a new question", "role": "user"}))
        screen.action_poll()
        await settle(pilot)
        assert screen.header.envelopes == 9
        assert screen.view.cursor == 3
        assert any("a new question" in t for _, t in rows_of(screen))
        # At the end: the view follows the new lines.
        await pilot.press("end")
        with run.path.open("a", encoding="utf-8") as f:
            f.write(line(10, "message", {"content": "and the answer", "role": "assistant"}))
        screen.action_poll()
        await settle(pilot)
        assert "and the answer" in cursor_row(screen).text.plain
        await pilot.press("f")
        assert not screen.following


@sync
async def test_following_reads_only_the_appended_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live run: each poll analyses the new lines, and states move on as they land."""
    from _support import spy_parsed_lines

    from transcript_view.core.records import OpState
    from transcript_view.core.session import Session

    path = tmp_path / "live.jsonl"
    session = Session.create(path, {"app": "tests"}, limit=300)
    session.append_message("user", "list the files")
    calls = [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]
    session.append_message("assistant", "", tool_calls=calls)
    starts = spy_parsed_lines(monkeypatch)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("f")
        op = session.append_tool_dispatched("c1", "ls", "{}", round=1)
        screen.action_poll()
        await settle(pilot)
        assert screen.analysis is not None
        (running,) = screen.analysis.operations
        assert running.state is OpState.RUNNING
        session.settle(op, "c1", "\n".join(f"file {i:04d}" for i in range(200)))
        starts.clear()
        screen.action_poll()
        await settle(pilot)
        (settled,) = screen.analysis.operations
        assert settled.state is OpState.SETTLED
        assert starts == [4]  # from the dispatch line (the last one before), not line 1
        assert screen.header.verified == 1  # the new artifact was verified too
        await pilot.press("f")
        assert screen._analyser is None  # its state is freed when following stops
    session.close()


@sync
async def test_the_model_view_is_laid_out_after_the_file_view(run_factory) -> None:  # type: ignore[no-untyped-def]
    """Two layouts at once would share one core; the model view waits its turn."""
    from transcript_view.viewer.messages import AnalysisReady, LayoutChunk

    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        file_doc = screen.view.file_doc
        assert file_doc is not None and screen.analysis is not None
        file_doc.laying_out = True  # as if a big file were still being laid out
        screen.post_message(AnalysisReady(screen.analysis))
        await settle(pilot)
        model = screen.view.model_doc
        assert model is not None and model.blocks == 0 and not model.laying_out
        file_doc.laying_out = False
        done = LayoutChunk("file", file_doc.generation, file_doc.blocks, [], done=True)
        screen.view.post_message(done)
        await settle(pilot)
        assert model.blocks == model.source.available() > 0


@sync
async def test_question_mark_opens_help(run_factory) -> None:  # type: ignore[no-untyped-def]
    from transcript_view.viewer.screens.help import HelpScreen

    app = TranscriptApp(run_factory("verified").path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert any("n / N" in key and "hit" in what for key, what in app.screen.key_rows)


@sync
async def test_q_quits(run_factory) -> None:  # type: ignore[no-untyped-def]
    app = TranscriptApp(run_factory("verified").path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.return_code is None
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0  # set by App.exit()


@sync
async def test_command_palette_lists_transcript_commands(run_factory) -> None:  # type: ignore[no-untyped-def]
    from transcript_view.viewer.screens.orphans import OrphansScreen

    app = TranscriptApp(run_factory("verified").path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"orphans")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, OrphansScreen)


@sync
async def test_a_directory_opens_the_listing(tmp_path: Path, run_factory) -> None:  # type: ignore[no-untyped-def]
    from transcript_view.viewer.screens.listing import ListingScreen

    run: Run = run_factory("verified")
    app = TranscriptApp(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ListingScreen)
        app.screen.post_message(ListingScreen.Chosen(run.path))
        await settle(pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert app.screen.path == run.path
        await pilot.press("escape")  # back to the listing
        await pilot.pause()
        assert isinstance(app.screen, ListingScreen)


@sync
async def test_mouse_wheel_scrolls(run_factory) -> None:  # type: ignore[no-untyped-def]
    from textual import events

    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=(120, 12)) as pilot:
        await settle(pilot)
        view = app.screen.view
        assert view.scroll_y == 0
        for _ in range(3):
            view.post_message(events.MouseScrollDown(view, 10, 3, 0, 1, 0, False, False, False))
        await pilot.pause()
        assert view.scroll_y > 0


@sync
async def test_a_huge_transcript_shows_before_it_is_indexed(tmp_path: Path) -> None:
    """The first screen comes from the first megabyte; the rest is laid out after."""
    path = tmp_path / "huge.jsonl"
    pad = "x" * 200
    with path.open("w", encoding="utf-8") as f:
        f.write(line(1, "session-meta", {}))
        for n in range(2, 12_000):
            f.write(line(n, "message", {"content": f"message {n} {pad}", "role": "user"}))
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.view.doc.blocks == 11_999
        await pilot.press("end")
        assert "message 11999" in "".join(t for _, t in rows_of(screen)[-3:])


# -- the layout model, without an app ----------------------------------------------------------


class _CountingSource:
    """A source whose block i has `sizes[i]` rows: enough to test the layout arithmetic."""

    view = "file"

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes

    def available(self) -> int:
        return len(self.sizes)

    def build(self, index: int, expand: bool = False, *, count_only: bool = False):  # type: ignore[no-untyped-def]
        from rich.text import Text

        from transcript_view.viewer.rows import Block, Row

        rows = [Row(Text(f"{index}.{j}"), "body", index + 1) for j in range(self.sizes[index])]
        return Block(index + 1, rows, [], 80)

    def line_of(self, index: int) -> int:
        return index + 1

    def index_of_line(self, line: int) -> int | None:
        return line - 1


def test_document_locates_rows_across_empty_blocks_and_chunks() -> None:
    from transcript_view.viewer.document import Document, layout_counts

    source = _CountingSource([2, 0, 3, 1])
    doc = Document(source)  # type: ignore[arg-type]
    assert doc.extend(0, layout_counts(source, 0, 2, lambda: False))  # type: ignore[arg-type]
    assert not doc.extend(3, [1])  # a chunk that does not follow on is refused
    assert doc.extend(2, layout_counts(source, 2, 4, lambda: False))  # type: ignore[arg-type]
    assert doc.layout.starts() == [0, 2, 2, 5, 6]
    assert [doc.locate(r) for r in range(6)] == [(0, 0), (0, 1), (2, 0), (2, 1), (2, 2), (3, 0)]
    assert doc.locate(6) is None
    assert doc.row(4).text.plain == "2.2"  # type: ignore[union-attr]


def test_document_corrects_a_stale_count_when_a_block_is_built() -> None:
    from transcript_view.viewer.document import Document

    source = _CountingSource([2, 2, 2])
    doc = Document(source)  # type: ignore[arg-type]
    doc.extend(0, [2, 2, 2])
    version = doc.version
    source.sizes[1] = 5  # the block grew (a finding row) after it was counted
    assert doc.rebuild(1) == 3
    assert doc.layout.starts() == [0, 2, 7, 9] and doc.version > version
    source.sizes[2] = 1
    doc.invalidate()
    assert doc.block(2).count == 1 and doc.total_rows == 8
    doc.truncate(1)
    assert doc.blocks == 1 and doc.total_rows == 2
    doc.rebuild(2)  # not laid out yet: remembered, rebuilt when its chunk lands
    assert 2 in doc.dirty


def test_wrap_makes_controls_visible_and_respects_cell_width() -> None:
    from rich.cells import cell_len

    from transcript_view.viewer.rows import wrap

    rows = wrap("a\x1b[31mb\nｗｉｄｅ文字" * 3, 7)
    assert all(cell_len(r) <= 7 for r in rows)
    assert "\x1b" not in "".join(rows) and "␛" in rows[0]

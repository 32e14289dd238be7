"""Styles follow the theme, and "seen by the model" is drawn the same everywhere.

Rows are styled in worker threads from a `viewer.palette.Palette` that the
`TranscriptView` resolves from its component classes; these tests switch the
app's theme (what the command palette does) and read the styles back off the
rendered strips, so a hard-coded colour sneaking back in shows up here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _pilot import settle, sync
from _screen import SIZE
from _support import EXAMPLES
from rich.color import Color
from rich.style import Style
from textual.app import App
from textual.screen import Screen

from transcript_view.core.filelines import FileLines
from transcript_view.core.verification import FileCheck, FileState, MarkerState
from transcript_view.viewer import fileview, rows
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.fileview import GUTTER_GLYPHS, SEEN, UNSEEN, ArtifactScreen
from transcript_view.viewer.palette import (
    DEFAULT_PALETTE,
    EXPOSURE_GLYPHS,
    EXPOSURE_LABELS,
    PALETTE_CLASSES,
    SEEN_KEY,
    UNSEEN_KEY,
    Palette,
    component_class,
    exposure_glyph,
)
from transcript_view.viewer.screens import help as help_screen
from transcript_view.viewer.transcript_view import TranscriptView


def _segments_of(view: TranscriptView, kind: str, word: str) -> tuple[int, Style]:
    """(screen line, style) of the first on-screen segment of a `kind` row holding `word`."""
    top = int(view.scroll_y)
    for y in range(view.scrollable_content_region.height):
        row = view.doc.row(top + y)
        if row is None or row.kind != kind or word not in row.text.plain:
            continue
        for segment in view.render_line(y):
            if word in segment.text and segment.style is not None:
                return y, segment.style
    raise AssertionError(f"no {kind} row with {word!r} on screen")


def _rgb(color: Color | None) -> tuple[int, int, int]:
    assert color is not None
    triplet = color.get_truecolor()
    return triplet.red, triplet.green, triplet.blue


@sync
async def test_a_theme_switch_restyles_role_labels_and_badges() -> None:
    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        app.theme = "textual-dark"
        await settle(pilot)
        view = app.screen.query_one(TranscriptView)
        view.set_cursor(view.doc.total_rows - 1)  # keep the cursor off the rows read
        view.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        _, dark_role = _segments_of(view, "head", "assistant")
        _, dark_badge = _segments_of(view, "marker", "verified")
        dark_palette = view.ctx.palette
        assert dark_palette != DEFAULT_PALETTE

        for theme in ("textual-light", "nord"):
            app.theme = theme
            await settle(pilot)
            _, role = _segments_of(view, "head", "assistant")
            _, badge = _segments_of(view, "marker", "verified")
            assert role.color != dark_role.color, theme
            if theme == "nord":  # textual-light shares textual-dark's $success
                assert badge.bgcolor != dark_badge.bgcolor, theme
            assert role.bold and badge.bold
            # Still recognisable: a verified badge is green whatever the theme.
            r, g, b = _rgb(badge.bgcolor)
            assert g > r and g > b, (theme, badge)
            assert view.ctx.palette != dark_palette
            app.screen.header.render()  # the header draws in the new theme too


@sync
async def test_every_badge_keeps_its_colour_family_in_each_theme() -> None:
    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(TranscriptView)
        for theme in ("textual-dark", "textual-light", "nord"):
            app.theme = theme
            await settle(pilot)
            palette = view.ctx.palette
            green = _rgb(palette.badge(MarkerState.VERIFIED).bgcolor)
            red = _rgb(palette.badge(MarkerState.MISSING).bgcolor)
            yellow = _rgb(palette.badge(MarkerState.NOT_STORED).bgcolor)
            assert green[1] > green[0] and green[1] > green[2], (theme, green)
            assert red[0] > red[1] and red[0] > red[2], (theme, red)
            assert yellow[0] > yellow[2] and yellow[1] > yellow[2], (theme, yellow)
            # Row text never carries a background of its own: it would hide the cursor.
            assert palette.role_user.bgcolor is None and palette.dim.bgcolor is None


def test_every_palette_entry_is_a_component_class_of_the_view() -> None:
    assert PALETTE_CLASSES <= TranscriptView.COMPONENT_CLASSES
    assert {component_class(n) for n in Palette.names()} == set(PALETTE_CLASSES)
    for name in Palette.names():
        assert f".{component_class(name)} " in TranscriptView.DEFAULT_CSS, name


# -- one glyph set ---------------------------------------------------------------------


def test_seen_and_unseen_glyphs_are_one_definition() -> None:
    seen, unseen = EXPOSURE_GLYPHS[SEEN_KEY], EXPOSURE_GLYPHS[UNSEEN_KEY]
    assert seen != unseen
    assert exposure_glyph(True) == seen and exposure_glyph(False) == unseen
    assert GUTTER_GLYPHS[SEEN] == seen and GUTTER_GLYPHS[UNSEEN] == unseen
    assert fileview.EXPOSURE_GLYPHS is EXPOSURE_GLYPHS
    assert rows.exposure_glyph is exposure_glyph
    # The help explains the same two bars, with the same words as the legends.
    legend = help_screen.exposure_table()
    (bars, words) = legend.columns
    assert list(bars.cells) and [c.plain for c in bars.cells] == [seen, unseen]
    assert [c.plain for c in words.cells] == [
        EXPOSURE_LABELS[SEEN_KEY], EXPOSURE_LABELS[UNSEEN_KEY]
    ]


def test_inline_artifact_rows_draw_the_shared_glyphs(tmp_path: Path) -> None:
    body = b"".join(b"row %02d\n" % i for i in range(20))
    path = tmp_path / "a.txt"
    path.write_bytes(body)
    lines = FileLines(path)
    try:
        lines.index()
        check = FileCheck("a.txt", FileState.OK, size=len(body))
        head = tail = 3 * 7  # the model saw rows 0-2 and 17-19
        art = rows.InlineArtifact((1, 0), lines, check, MarkerState.VERIFIED, head, tail)
        drawn = [art.row(i, 1, 80).text.plain for i in range(art.count)]
    finally:
        lines.close()
    seen, unseen = exposure_glyph(True), exposure_glyph(False)
    file_rows = drawn[art.HEADER_ROWS : -1]
    bars = [r.strip()[0] for r in file_rows]
    assert bars[:3] == [seen] * 3 and bars[-3:] == [seen] * 3
    assert set(bars[3:-3]) == {unseen}
    legend = drawn[2]
    assert f"{seen} the model saw" in legend and f"{unseen} it never saw" in legend


class _ScreenApp(App[None]):
    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self._screen = screen

    def on_mount(self) -> None:
        self.push_screen(self._screen)


@sync
async def test_the_artifact_screen_legend_and_gutter_use_the_shared_glyphs(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.txt"
    path.write_bytes(b"".join(b"line %02d\n" % i for i in range(30)))
    regions = [(0, 40, SEEN), (40, 200, UNSEEN), (200, 240, SEEN)]
    app = _ScreenApp(ArtifactScreen(path, "r.txt", regions=regions))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = str(app.screen.query_one("#artifact-status").render())
        for key in (SEEN_KEY, UNSEEN_KEY):
            assert f"{EXPOSURE_GLYPHS[key]} {EXPOSURE_LABELS[key]}" in status
        view = app.screen.query_one(fileview.FileView)
        gutters = [view.render_line(y).text[0] for y in range(30)]
        assert gutters[0] == exposure_glyph(True) and gutters[10] == exposure_glyph(False)
        app.theme = "textual-light"  # restyles the legend without crashing
        await settle(pilot)


@sync
async def test_the_cursor_row_and_search_hits_follow_the_theme() -> None:
    """They were fixed colours: a dark-blue cursor is unreadable on a light theme."""
    app = TranscriptApp(EXAMPLES / "demo.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(TranscriptView)
        await pilot.press("slash", *"cargo", "enter")
        await settle(pilot)
        seen: dict[str, tuple[object, object]] = {}
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await settle(pilot)
            y = view.cursor - int(view.scroll_y)
            strip = view.render_line(y)
            cursor_bg = {s.style.bgcolor for s in strip if s.style is not None} - {None}
            hit = [s.style for s in strip if s.style is not None and "argo" in s.text.lower()]
            assert hit, "the cursor is on a hit"
            seen[theme] = (frozenset(cursor_bg), hit[0].bgcolor)
        assert seen["textual-dark"][0] != seen["textual-light"][0]

"""A single 50 MB line never freezes the UI: a prefix, a label, and a pager over the rest.

The analysis worker is held at a gate for most of the test, so everything
asserted before the gate opens happens *while the worker still runs*: the first
screen paints, keys move the cursor, the label is there. Meanwhile every
`parse_line_bytes` and `wrap` call, and every line the analysis pass decodes
itself (`core.analysis.decode_shape`, `parse_line_bytes`), is recorded with the thread it ran on: no
big line may be parsed or wrapped on the UI (main) thread.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest
from _hostile import META, USER, env, lines
from _pilot import hold_analysis, settle, settle_except, sync

import transcript_view.core.analysis as core_analysis
import transcript_view.core.transcript as core_transcript
import transcript_view.viewer.blocks as viewer_blocks
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.blocks import BIG_LINE_BYTES
from transcript_view.viewer.fileview import ArtifactScreen, FileView
from transcript_view.viewer.main_screen import TranscriptScreen

SIZE = (120, 40)
CHUNK = 12  # "[0000000042]": each chunk names its own index


def big_body(size: int) -> str:
    return "".join(f"[{i:010d}]" for i in range(size // CHUNK))


def write_big(tmp_path: Path, size: int = 50 * 1024 * 1024) -> Path:
    path = tmp_path / "big.jsonl"
    big = env("message", {"role": "tool", "content": big_body(size)}, "big")
    path.write_bytes(lines(META, USER.replace(b"u1", b"u0"), big, USER))
    return path


@pytest.fixture
def thread_log(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool, int]]:
    """(what, on the main thread, length) for every line parse and every wrap."""
    log: list[tuple[str, bool, int]] = []
    real_parse = core_transcript.parse_line_bytes
    real_decode = core_analysis.decode_shape
    real_wrap = viewer_blocks.wrap

    def parse(raw: bytes, *args: Any, **kwargs: Any) -> Any:
        log.append(("parse", threading.current_thread() is threading.main_thread(), len(raw)))
        return real_parse(raw, *args, **kwargs)

    def decode(raw: bytes) -> Any:
        log.append(("parse", threading.current_thread() is threading.main_thread(), len(raw)))
        return real_decode(raw)

    def wrap(text: str, width: int) -> list[str]:
        log.append(("wrap", threading.current_thread() is threading.main_thread(), len(text)))
        return real_wrap(text, width)

    # The viewer's and the analysis's ways to a line's fields: the whole parse, and
    # the analysis's decode into its shape (short lines) or whole parse (long ones).
    monkeypatch.setattr(core_transcript, "parse_line_bytes", parse)
    monkeypatch.setattr(core_analysis, "parse_line_bytes", parse)
    monkeypatch.setattr(core_analysis, "decode_shape", decode)
    monkeypatch.setattr(viewer_blocks, "wrap", wrap)
    return log


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold the analysis worker until the test sets the event."""
    return hold_analysis(monkeypatch)


@sync
async def test_a_50_mb_line_shows_a_prefix_and_pages(
    tmp_path: Path, thread_log: list[tuple[str, bool, int]], gate: threading.Event
) -> None:
    path = write_big(tmp_path)
    line_length = len(path.read_bytes().split(b"\n")[2])
    app = TranscriptApp(path)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle_except(pilot, "analysis")
            screen = app.screen
            assert isinstance(screen, TranscriptScreen)
            analysis = [w for w in app.workers if w.group == "analysis"]
            assert analysis and analysis[0].state.name == "RUNNING"
            view = screen.view
            # The first screen paints: every screen line renders, the label among them.
            height = view.scrollable_content_region.height
            painted = ["".join(s.text for s in view.render_line(y)) for y in range(height)]
            label = next(t for t in painted if "more on this line" in t)
            assert "… 50.0 MiB more on this line (enter to page through)" in label, label
            assert any("[0000000000][0000000001]" in t for t in painted)
            assert any("50.0 MiB line" in t for t in painted)
            # Keys respond while the analysis is still running.
            await pilot.press("end")
            assert view.cursor == view.doc.total_rows - 1
            await pilot.press("home")
            assert view.cursor == 0
            assert analysis[0].state.name == "RUNNING"
            # Enter on the label pages through the line.
            rows = [view.doc.row(i) for i in range(view.doc.total_rows)]
            at = next(i for i, r in enumerate(rows) if r is not None and r.kind == "bigline")
            view.set_cursor(at)
            await pilot.press("enter")
            await settle_except(pilot, "analysis")
            pager = app.screen
            assert isinstance(pager, ArtifactScreen)
            fv = pager.query_one(FileView)
            assert fv.lines.complete and fv.lines.size == line_length
            # The middle of the line: the chunks there name their own position.
            middle = line_length // 2
            fv.scroll_to_offset(middle)
            await pilot.pause()
            text = "".join(s.text for s in fv.render_line(0))
            numbers = [int(n) for n in re.findall(r"\[(\d{10})\]", text)]
            assert numbers, text
            expected = middle // CHUNK
            assert all(abs(n - expected) < fv.lines.row_bytes // CHUNK + 4 for n in numbers)
            top = fv.scroll_y
            await pilot.press("pagedown")
            await pilot.pause()
            assert fv.scroll_y > top
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is screen
            # Let the analysis finish: the line is read there, in its worker only.
            gate.set()
            await settle(pilot)
            assert screen.analysis is not None and screen.header.envelopes == 4
            assert any(
                r is not None and r.kind == "bigline"
                for r in (view.doc.row(i) for i in range(view.doc.total_rows))
            )
    finally:
        gate.set()
    big_on_ui = [(what, n) for what, main, n in thread_log if main and n > BIG_LINE_BYTES]
    assert big_on_ui == []
    # The analysis did parse the big line (in its worker thread).
    assert any(what == "parse" and not main and n >= line_length for what, main, n in thread_log)


@sync
async def test_a_big_line_in_the_model_view_and_search(tmp_path: Path) -> None:
    path = write_big(tmp_path, size=3 * 1024 * 1024)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("m")
        await settle(pilot)
        view = screen.view
        rows = [view.doc.row(i) for i in range(view.doc.total_rows)]
        labels = [r.text.plain for r in rows if r is not None and r.kind == "bigline"]
        assert len(labels) == 1 and "MiB more on this line" in labels[0]
        # A search sees the prefix that is shown (and never builds the whole line).
        await pilot.press("slash", *"[0000000003]", "enter")
        await settle(pilot)
        assert view.hits
        await pilot.press("m", "slash", *"[0000000003]", "enter")
        await settle(pilot)
        assert view.doc.view == "file" and view.hits == [2]

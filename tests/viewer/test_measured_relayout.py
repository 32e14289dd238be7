"""Counts the pass took in the plain look, used again after the analysis landed.

Found by an independent review of issue 25's measure: the pass counts a
marker's line with its provisional badge ("checking"), the analysis changes
the badge (a Codex notice becomes "not stored", two cells wider), and a
layout at the measured width after that (a resize away and back, the last
line laid out again in follow mode) took the stale count. Lines with
markers or tags are built once an analysis is on show (`Layouter`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _pilot import settle, sync
from _screen import assert_layout_consistent
from _sessions import codex_chars_truncated

from transcript_view.core import parallel
from transcript_view.core.formats.detect import Format
from transcript_view.viewer import layouter
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen

SIZE = (110, 30)


@pytest.fixture
def no_server_layout(small_thresholds: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The view lays every block out itself (the measured counts' path), never the server."""
    monkeypatch.setattr(layouter, "SERVER_LAYOUT_BLOCKS", 10**9)


def _rollout(path: Path) -> Path:
    lines: list[dict[str, object]] = [
        {"type": "session_meta", "payload": {"cli_version": "0.40", "cwd": "/x"}}
    ]
    for i in range(20):
        text = {"type": "input_text", "text": f"line {i}"}
        lines.append(
            {
                "type": "response_item",
                "payload": {"type": "message", "role": "user", "content": [text]},
            }
        )
    for k in range(1, 8):
        call = {"type": "function_call", "name": "shell", "call_id": f"c{k}", "arguments": "{}"}
        out = {
            "type": "function_call_output",
            "call_id": f"c{k}",
            "output": codex_chars_truncated(10**k),
        }
        lines += [
            {"type": "response_item", "payload": call},
            {"type": "response_item", "payload": out},
        ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@sync
async def test_a_relayout_at_the_measured_width_after_the_analysis_keeps_marker_rows(
    server: parallel.PassServer, no_server_layout: None, tmp_path: Path
) -> None:
    """Resized away and back: the file view is laid out again at the width the pass
    measured, with the analysis on show. A notice's badge is no longer "checking"."""
    app = TranscriptApp(_rollout(tmp_path / "rollout.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        assert screen.format is Format.CODEX
        view = screen.view
        width = view.ctx.width
        assert view.layouter.measured.width == width and len(view.layouter.measured.rows) > 0
        assert_layout_consistent(screen)  # the normal flow: adopt recounted the notices
        await pilot.resize_terminal(SIZE[0] - 30, SIZE[1])
        await settle(pilot)
        assert_layout_consistent(screen)
        await pilot.resize_terminal(*SIZE)
        await settle(pilot)
        assert view.ctx.width == width
        assert_layout_consistent(screen)


@sync
async def test_the_last_line_laid_out_again_after_an_append_keeps_its_marker_rows(
    server: parallel.PassServer, no_server_layout: None, tmp_path: Path
) -> None:
    """Follow mode: `appended` drops the last block and lays it out again; at the
    measured width that takes the pass's plain count, after the analysis landed."""
    app = TranscriptApp(_rollout(tmp_path / "rollout.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        view = screen.view
        last = view.file_doc.blocks - 1
        assert view.layouter.measured.width == view.ctx.width
        assert last < len(view.layouter.measured.rows)
        assert_layout_consistent(screen)
        plain = view.layouter.measured.rows[last]
        assert plain != view.file_doc.counts[last]  # the notice's badge changed its rows
        view.appended(0)  # what stopping follow mode does for a held-back last line
        await settle(pilot)
        assert_layout_consistent(screen)

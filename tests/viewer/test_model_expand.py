"""Enter on a collapsed message in the model view expands that message, not the next.

The model view's first block is a preamble, so replay entry i is block i + 1;
the expansion key must be the block index, the same one the view toggles.
"""

from __future__ import annotations

from pathlib import Path

from _pilot import settle, sync
from _runs import line
from _screen import SIZE, rows_of

from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen


def _long(tag: str) -> str:
    return "\n".join(f"{tag} row {i:02d}" for i in range(20))


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "two-long.jsonl"
    path.write_text(
        line(1, "session-meta", {"app": "test"})
        + line(2, "message", {"role": "user", "content": _long("first")})
        + line(3, "message", {"role": "user", "content": _long("second")}),
        encoding="utf-8",
    )
    return path


@sync
async def test_enter_expands_the_collapsed_message_under_the_cursor(tmp_path: Path) -> None:
    app = TranscriptApp(_write(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("m")
        await settle(pilot)
        view = screen.view
        assert view.doc.view == "model"
        rows = rows_of(screen)
        assert sum(1 for k, _ in rows if k == "more") == 2  # both messages collapsed
        first = next(i for i, (_, t) in enumerate(rows) if "first row 00" in t)
        view.set_cursor(first)
        await pilot.press("enter")
        await settle(pilot)
        texts = [t for _, t in rows_of(screen)]
        assert any("first row 10" in t for t in texts), "the message under the cursor expands"
        assert not any("second row 10" in t for t in texts), "the next one stays collapsed"
        # And it stays so when every block is built again (a relayout).
        view.relayout(view.doc)
        await settle(pilot)
        texts = [t for _, t in rows_of(screen)]
        assert any("first row 10" in t for t in texts)
        assert not any("second row 10" in t for t in texts)

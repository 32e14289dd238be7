"""Workers give way to input, and stepping past an open artifact never builds its rows.

`viewer.pacing` is tested against a fake clock (no test measures time); the
app's part is that every key reaches `note_input`. The second half checks
that `n`/`N`/`p` look only at a block's own rows: an open artifact of 20,000
rows is stepped past without drawing more than a screen of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync

import transcript_view.viewer.pacing as pacing
from transcript_view.core.session import Session
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.rows import InlineArtifact


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(pacing.time, "monotonic", fake.monotonic)
    monkeypatch.setattr(pacing.time, "sleep", fake.sleep)
    monkeypatch.setattr(pacing, "_last_input", float("-inf"))
    return fake


def test_give_way_does_not_wait_without_input(clock: FakeClock) -> None:
    pacing.give_way()
    assert clock.sleeps == []


def test_give_way_waits_for_quiet_after_input(clock: FakeClock) -> None:
    pacing.note_input()
    clock.now += 0.02
    pacing.give_way()
    waited = sum(clock.sleeps)
    assert pacing.QUIET_AFTER_INPUT - 0.02 <= waited < pacing.QUIET_AFTER_INPUT
    clock.sleeps.clear()
    pacing.give_way()  # quiet now: no more waiting
    assert clock.sleeps == []


def test_give_way_is_bounded_under_constant_input(
    clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    def sleep(seconds: float) -> None:
        clock.sleeps.append(seconds)
        clock.now += seconds
        pacing.note_input()  # someone keeps typing

    monkeypatch.setattr(pacing.time, "sleep", sleep)
    pacing.note_input()
    pacing.give_way()
    assert pacing.MAX_WAIT <= sum(clock.sleeps) < pacing.MAX_WAIT + 0.05


def big_artifact_run(directory: Path, rows: int = 20_000) -> Path:
    path = directory / "big-artifact.jsonl"
    content = "".join(f"artifact row {i:05d}\n" for i in range(rows))
    with Session.create(path, {"app": "pacing"}, limit=400) as s:
        calls = [{"id": "c1", "type": "function", "function": {"name": "sh", "arguments": "{}"}}]
        s.append_message("assistant", "running", tool_calls=calls)
        op = s.append_tool_dispatched("c1", "sh", "{}")
        s.settle(op, "c1", content)
        s.append_message("assistant", "done: see the marker above")
    return path


@sync
async def test_keys_are_noted_and_jumps_skip_artifact_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_artifact_run(tmp_path)
    app = TranscriptApp(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen: Any = app.screen
        await pilot.press("n")
        marker_row = screen.view.cursor
        await pilot.press("enter")  # lands inside the artifact, where the model stopped seeing
        await settle(pilot)
        (art,) = screen.artifacts.values()
        assert art.complete and art.known_rows == 20_000
        built: list[int] = []
        real_row = InlineArtifact.row

        def counting_row(self: InlineArtifact, i: int, line: int, width: int, *rest: Any) -> Any:
            built.append(i)
            return real_row(self, i, line, width, *rest)

        monkeypatch.setattr(InlineArtifact, "row", counting_row)
        monkeypatch.setattr(pacing, "_last_input", float("-inf"))
        await pilot.press("n")  # past the artifact: no more markers below
        await pilot.press("N")
        assert screen.view.cursor == marker_row
        await pilot.press("p", "P")
        assert pacing._last_input > float("-inf")  # the app noted the keys
        assert len(built) < 400, len(built)  # a few screens' worth, not 20,000 rows

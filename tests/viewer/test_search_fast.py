"""`/` search: the transcript's text only, with progress, hits usable while it runs.

The search scans the file's bytes for lines that can hold the query
(`core.search`) and builds only those blocks. What it finds is the
transcript's text: never the line-number gutter, never the viewer's own words
(badges, labels taken from other lines, "… N more lines"). No test sleeps: a
search held mid-file waits at a gate (a `threading.Event`) its test opens,
and the test waits on the app's messages and workers.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, settle_except, sync
from _runs import Run
from _screen import SIZE, cursor_row
from _support import REFERENCE
from rich.style import Style

import transcript_view.core.search as search_module
import transcript_view.viewer.transcript_view as view_module
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.messages import SearchDone, SearchProgress
from transcript_view.viewer.transcript_view import TranscriptView


def letters(n: int) -> str:
    """`n` spelt in letters (0 -> a, 1 -> b…): ids and stamps that no digit query matches."""
    return "".join(chr(ord("a") + int(d)) for d in str(n))


def write_messages(path: Path, contents: list[str]) -> Path:
    """A transcript of user messages with these contents, one a line, no digits elsewhere."""
    rows = [
        {
            "id": f"m-{letters(i)}",
            "payload": {"content": text, "role": "user"},
            "ts": "2026-01-01T00:00:00.000000Z",
            "type": "message",
            "v": 1,
        }
        for i, text in enumerate(contents)
    ]
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
    return path


async def until(pilot: Any, condition: Callable[[], bool], rounds: int = 200) -> None:
    """Let the app handle its messages until `condition` holds."""
    for _ in range(rounds):
        if condition():
            return
        await pilot.pause()
    raise AssertionError("the app never got there")


class Gate:
    """Holds the scan of one query before it yields a line past `line`, until opened."""

    def __init__(self, query: str, line: int) -> None:
        self.query, self.line = query, line
        self.reached = threading.Event()
        self.opened = threading.Event()
        self.lines_after: list[int] = []
        """Lines the held scan yielded once opened (a superseded one yields none)."""

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real = search_module.candidate_lines

        def candidate_lines(transcript: Any, query: str, **kwargs: Any) -> Iterator[int]:
            for line in real(transcript, query, **kwargs):
                if query == self.query and line > self.line:
                    if not self.opened.is_set():
                        self.reached.set()
                        assert self.opened.wait(30), "the test never opened the gate"
                    self.lines_after.append(line)
                yield line

        monkeypatch.setattr(view_module, "candidate_lines", candidate_lines, raising=False)


@pytest.fixture
def small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of a few lines and a progress message after every one."""
    monkeypatch.setattr(search_module, "SEARCH_CHUNK", 300)
    monkeypatch.setattr(TranscriptView, "SEARCH_POST_SECONDS", 0.0, raising=False)


# -- what counts as a hit ------------------------------------------------------------------------


@sync
async def test_the_gutter_is_not_searched(tmp_path: Path) -> None:
    """Searching 42 stopped at line 42's number; now only at text that holds 42."""
    contents = ["hello world"] * 60
    contents[49] = "the answer is 42"
    app = TranscriptApp(write_messages(tmp_path / "t.jsonl", contents))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert any(r.text.plain.startswith("    42 ") for r in screen.view.doc.block(41).rows)
        await pilot.press("slash", *"42", "enter")
        await settle(pilot)
        assert screen.view.hits == [49]
        assert cursor_row(screen).line == 50 and "answer is 42" in cursor_row(screen).text.plain
        assert screen.header.search_status == "/42: 1 block (n/N)"
        await pilot.press("n")  # the only hit: n wraps onto it, never onto a gutter
        assert cursor_row(screen).line == 50
        # Nor is a gutter painted as a hit: line 42's number stays as it was.
        view = screen.view
        row = view.doc.block_start(41)
        hit = view._hit_style
        marked = [
            s
            for s in view._render_row(row, 100, Style(), False)
            if s.style and hit.bgcolor == s.style.bgcolor
        ]
        assert marked == []
        answer = next(
            i for i in range(view.doc.total_rows) if "answer is 42" in view.doc.row(i).text.plain
        )
        marked = [
            s.text
            for s in view._render_row(answer, 100, Style(), False)
            if s.style and s.style.bgcolor == hit.bgcolor
        ]
        assert marked == ["42"]


@sync
async def test_the_viewers_own_words_are_not_searched(run_factory: Any) -> None:
    """A badge, or a tool name a result's heading borrows from its call, is not the line's text."""
    run: Run = run_factory("verified")
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen.query_one(TranscriptView)
        badges = [b for b in range(view.doc.blocks) if "✓ verified" in str(rows(view, b))]
        assert badges == [5]
        view.search("verified")  # the session-meta line says state: verified
        await settle(pilot)
        assert view.hits == [0]
        assert any("← fs_read" in text for text in rows(view, 5))
        view.search("fs_read")  # the call (line 4) and the dispatch (line 5) name it
        await settle(pilot)
        assert view.hits == [3, 4]


def rows(view: TranscriptView, block: int) -> list[str]:
    return [r.text.plain for r in view.doc.block(block).rows]


@sync
async def test_the_model_view_finds_stub_text_but_not_its_labels() -> None:
    """A stubbed message shows its elision's text (another line): that is found, the
    "content replaced by an elision stub" label is not."""
    app = TranscriptApp(REFERENCE / "aging.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        view = app.screen.query_one(TranscriptView)
        assert view.doc.view == "model"
        stubbed = [
            b for b in range(view.doc.blocks) if "replaced by an elision stub" in str(rows(view, b))
        ]
        assert stubbed
        view.search("re-run the call")  # the stub's words, from the elision line
        await settle(pilot)
        assert view.hits == stubbed
        view.search("replaced by an elision stub")
        await settle(pilot)
        assert view.hits == []


# -- progress, and hits while it runs -------------------------------------------------------------


@sync
async def test_progress_messages_arrive_and_the_header_shows_them(
    tmp_path: Path, small_steps: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    contents = [f"filler line {letters(i)}" for i in range(200)]
    for i in (20, 90, 170):
        contents[i] = "a needle here"
    progress: list[SearchProgress] = []
    statuses: list[str] = []
    advanced = getattr(TranscriptScreen, "on_transcript_view_search_advanced", None)

    def record(screen: TranscriptScreen, msg: Any) -> None:
        if advanced is not None:
            advanced(screen, msg)
        statuses.append(screen.header.search_status)

    monkeypatch.setattr(
        TranscriptScreen, "on_transcript_view_search_advanced", record, raising=False
    )

    def hook(message: object) -> None:
        if isinstance(message, SearchProgress):
            progress.append(message)

    app = TranscriptApp(write_messages(tmp_path / "t.jsonl", contents))
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("slash", *"needle", "enter")
        await settle(pilot)
        assert len(progress) >= 10, "a progress message after every few lines"
        assert [m.done for m in progress] == sorted(m.done for m in progress)
        assert sorted(b for m in progress for b in m.blocks) == [20, 90, 170]
        shown = re.compile(r"^/needle: searching (\d+)% \((\d+) hits? so far\)$")
        matches = [shown.match(s) for s in statuses]
        assert statuses and all(matches), statuses
        percents = [int(m.group(1)) for m in matches if m]
        counts = [int(m.group(2)) for m in matches if m]
        assert percents == sorted(percents) and 0 < percents[len(percents) // 2] < 100
        assert counts == sorted(counts) and counts[0] < 3 and counts[-1] == 3
        assert screen.header.search_status == "/needle: 3 blocks (n/N)"


@sync
async def test_n_steps_through_the_hits_found_so_far(
    tmp_path: Path, small_steps: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held half way, the search has landed on the first hit and `n` reaches the second;
    when it finishes it leaves the cursor where `n` put it."""
    contents = [f"filler line {letters(i)}" for i in range(200)]
    for i in (30, 60, 150):
        contents[i] = "a needle here"
    gate = Gate("needle", line=100)
    gate.install(monkeypatch)
    app = TranscriptApp(write_messages(tmp_path / "t.jsonl", contents))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        await pilot.press("slash", *"needle", "enter")
        assert gate.reached.wait(30), "the search never reached the gate"
        await settle_except(pilot, "search")
        await until(pilot, lambda: view.hits == [30, 60])
        assert cursor_row(screen).line == 31, "on the first hit as soon as it was found"
        assert re.match(r"/needle: searching \d+% \(2 hits so far\)", screen.header.search_status)
        await pilot.press("n")
        assert cursor_row(screen).line == 61
        gate.opened.set()
        await settle(pilot)
        assert view.hits == [30, 60, 150]
        assert cursor_row(screen).line == 61
        assert screen.header.search_status == "/needle: 3 blocks (n/N)"
        await pilot.press("n")
        assert cursor_row(screen).line == 151


@sync
async def test_n_before_the_first_hit_says_the_search_is_still_going(
    tmp_path: Path, small_steps: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    contents = [f"filler line {letters(i)}" for i in range(200)]
    contents[150] = "a needle here"
    gate = Gate("needle", line=100)
    gate.install(monkeypatch)
    app = TranscriptApp(write_messages(tmp_path / "t.jsonl", contents))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        toasts: list[str] = []
        app.notify = lambda message, *a, **k: toasts.append(message)  # type: ignore[method-assign]
        await pilot.press("slash", *"needle", "enter")
        assert gate.reached.wait(30), "the search never reached the gate"
        await settle_except(pilot, "search")
        await pilot.press("n")
        assert toasts == ["No hits so far; still searching."]
        gate.opened.set()
        await settle(pilot)
        toasts.clear()
        app.screen.view.search("nothing like it")
        await settle(pilot)
        await pilot.press("n")
        assert toasts == ["No hits."]


@sync
async def test_an_older_search_is_superseded(
    tmp_path: Path, small_steps: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search held mid-file while a newer one runs: its scan stops at the next chunk,
    and nothing it found or says reaches the view or the header."""
    contents = [f"filler line {letters(i)}" for i in range(200)]
    for i in (10, 120, 180):
        contents[i] = "alpha"
    contents[50] = "beta"
    gate = Gate("alpha", line=100)
    gate.install(monkeypatch)
    done: list[SearchDone] = []

    def hook(message: object) -> None:
        if isinstance(message, SearchDone):
            done.append(message)

    app = TranscriptApp(write_messages(tmp_path / "t.jsonl", contents))
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        await pilot.press("slash", *"alpha", "enter")
        assert gate.reached.wait(30), "the search never reached the gate"
        await settle_except(pilot, "search")
        await until(pilot, lambda: view.hits == [10])
        await pilot.press("slash", *"beta", "enter")
        await settle_except(pilot, "search")
        await until(pilot, lambda: screen.header.search_status == "/beta: 1 block (n/N)")
        gate.opened.set()
        await settle(pilot)
        assert [m.query for m in done] == ["beta"]
        assert view.search_query == "beta" and view.hits == [50]
        assert screen.header.search_status == "/beta: 1 block (n/N)"
        assert gate.lines_after == [121], "the held scan gave the line it held and stopped"
        assert cursor_row(screen).line == 51

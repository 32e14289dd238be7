"""Follow mode (`f`) on a transcript that is still being written, driven through the pilot.

Each test opens a transcript written by `_runs`, turns following on, appends
to the file the way a writer does (a line in two writes, a call whose settle
comes later, lines below the screen), runs a poll (`action_poll`, what the
follow timer calls) and waits on the app's workers (`settle`); none sleeps.
"""

from __future__ import annotations

from pathlib import Path

from _pilot import settle, sync
from _runs import Run, line
from _screen import SIZE, assert_layout_consistent, rows_of

from transcript_view.core.report import verify
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.header import TranscriptHeader
from transcript_view.viewer.main_screen import TranscriptScreen

CALL = [{"function": {"arguments": "{}", "name": "ls"}, "id": "c1", "type": "function"}]
OP = "6f7d06d2-f2c5-45a3-b687-c72851c5ef8a"


def append(path: Path, data: str | bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data.encode() if isinstance(data, str) else data)


async def poll(pilot, screen: TranscriptScreen) -> None:  # type: ignore[no-untyped-def]
    """One follow-mode poll, and everything it starts (analysis, hashing, layout)."""
    screen.action_poll()
    await settle(pilot)


def finding_kinds(screen: TranscriptScreen) -> list[str]:
    assert screen.analysis is not None
    return [f.kind for f in screen.analysis.findings]


def header_text(screen: TranscriptScreen) -> str:
    return screen.header.render().plain


# -- a line appended in two writes ------------------------------------------------------------


@sync
async def test_a_line_appended_in_two_writes_is_counted_once_complete(run_factory) -> None:  # type: ignore[no-untyped-def]
    run: Run = run_factory("verified")
    whole = line(9, "message", {"content": "a new question", "role": "user"}).encode()
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert screen.header.problems == 0 and screen.header.envelopes == 8
        await pilot.press("f")
        append(run.path, whole[:40])
        await poll(pilot, screen)
        # Half a line is a line still being written, not a crash.
        assert "torn-tail" not in finding_kinds(screen)
        assert screen.header.problems == 0
        append(run.path, whole[40:])
        await poll(pilot, screen)
        # The second write completed it: read again, counted, laid out.
        assert screen.header.envelopes == 9
        assert "torn-tail" not in finding_kinds(screen)
        assert screen.header.problems == 0
        assert any("a new question" in text for _, text in rows_of(screen))
        assert_layout_consistent(screen)


# -- a call whose settle has not arrived yet ---------------------------------------------------


def write_live_run(path: Path) -> None:
    """A run whose last turn calls a tool that is dispatched and answered, not settled."""
    lines = [
        line(1, "session-meta", {"scenario": "live"}),
        line(2, "message", {"content": "list the files", "role": "user"}),
        line(3, "message", {"content": "", "role": "assistant", "tool-calls": CALL}),
    ]
    path.write_text("".join(lines), encoding="utf-8")


DISPATCH = line(4, "tool-dispatched", {"arguments": "{}", "call-id": "c1", "tool": "ls"}, OP)
ANSWER = line(5, "message", {"content": "a b c", "role": "tool", "tool-call-id": "c1"})
SETTLE = line(6, "tool-settled", {"duration": 0.5, "op-id": OP, "outcome": "completed"})


def dispatch_row(screen: TranscriptScreen) -> str:
    return next(text for _, text in rows_of(screen) if "dispatch" in text and "ls" in text)


@sync
async def test_a_call_whose_settle_has_not_arrived_reads_running(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    write_live_run(path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("f")
        append(path, DISPATCH + ANSWER)
        await poll(pilot, screen)
        assert "running" in dispatch_row(screen)
        shown = "\n".join(text for _, text in rows_of(screen))
        assert "never landed" not in shown and "process died" not in shown
        assert "unsettled-operation" not in finding_kinds(screen)
        assert screen.header.problems == 0
        append(path, SETTLE)
        await poll(pilot, screen)
        (op,) = screen.analysis.operations  # type: ignore[union-attr]
        assert op.describe_state() == "completed"
        assert "running" not in dispatch_row(screen)


@sync
async def test_when_following_stops_an_open_call_reads_as_check_says(tmp_path: Path) -> None:
    """Not following, the viewer and `--check` agree again: the settle never landed."""
    path = tmp_path / "live.jsonl"
    write_live_run(path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("f")
        append(path, DISPATCH + ANSWER)
        await poll(pilot, screen)
        assert "running" in dispatch_row(screen)
        await pilot.press("f")
        await settle(pilot)
        assert screen.analysis is not None and not screen.analysis.live
        assert "the settle never landed" in dispatch_row(screen)
        report = verify(path)
        assert finding_kinds(screen) == [f.kind for f in report.findings]
        assert screen.header.problems == 1


# -- new lines below the screen ----------------------------------------------------------------


def write_long_run(path: Path, messages: int = 60) -> None:
    lines = [line(1, "session-meta", {"scenario": "long"})]
    for n in range(2, messages + 2):
        lines.append(line(n, "message", {"content": f"message {n}", "role": "user"}))
    path.write_text("".join(lines), encoding="utf-8")


def more(path: Path, first: int, count: int) -> None:
    append(
        path,
        "".join(
            line(n, "message", {"content": f"appended {n}", "role": "assistant"})
            for n in range(first, first + count)
        ),
    )


@sync
async def test_new_lines_below_the_screen_are_counted_until_the_end_is_reached(
    tmp_path: Path,
) -> None:
    path = tmp_path / "long.jsonl"
    write_long_run(path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        assert view.cursor == 0 and view.doc.total_rows > SIZE[1]  # scrolled up: at the top
        await pilot.press("f")
        more(path, 62, 3)
        await poll(pilot, screen)
        assert view.cursor == 0  # the position is kept
        assert "+3 new lines ↓" in header_text(screen)
        more(path, 65, 1)
        await poll(pilot, screen)
        assert "+4 new lines ↓" in header_text(screen)
        await pilot.press("G")  # to the end: seen, the indicator goes
        assert "new line" not in header_text(screen)
        assert view.cursor == view.doc.total_rows - 1
        more(path, 66, 2)  # at the end, the view follows: nothing is below
        await poll(pilot, screen)
        assert "new line" not in header_text(screen)
        assert view.cursor == view.doc.total_rows - 1
        await pilot.press("home")
        more(path, 68, 1)
        await poll(pilot, screen)
        assert "+1 new line ↓" in header_text(screen)
        await pilot.press("end")
        assert "new line" not in header_text(screen)


@sync
async def test_clicking_the_new_lines_indicator_jumps_to_the_end(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    write_long_run(path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("f")
        more(path, 62, 2)
        await poll(pilot, screen)
        second_row = header_text(screen).split("\n")[1]
        assert "+2 new lines ↓" in second_row
        x = second_row.index("+2 new lines") + 1 + 2  # the header's left padding, a cell in
        await pilot.click(TranscriptHeader, offset=(x, 1))
        await settle(pilot)
        view = screen.view
        assert view.cursor == view.doc.total_rows - 1
        assert any("appended 63" in text for _, text in rows_of(screen))
        assert "new line" not in header_text(screen)
        # Clicking the header elsewhere does not move the cursor.
        await pilot.press("home")
        await pilot.click(TranscriptHeader, offset=(2, 0))
        assert view.cursor == 0


@sync
async def test_stopping_following_clears_the_new_lines_indicator(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    write_long_run(path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("f")
        more(path, 62, 2)
        await poll(pilot, screen)
        assert "+2 new lines ↓" in header_text(screen)
        await pilot.press("f")
        await settle(pilot)
        assert "new line" not in header_text(screen)


@sync
async def test_following_a_file_with_an_open_call_reads_running_at_once(tmp_path: Path) -> None:
    """`f` on a file whose last call is open: running, before anything is appended."""
    path = tmp_path / "live.jsonl"
    write_live_run(path)
    append(path, DISPATCH + ANSWER)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert "the settle never landed" in dispatch_row(screen)  # not following: as --check
        await pilot.press("f")
        await settle(pilot)
        assert "running" in dispatch_row(screen)
        assert screen.header.problems == 0

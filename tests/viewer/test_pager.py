"""`e`: the artifact in `$PAGER`, and the app always comes back.

Textual's `App.suspend()` resumes only when its `with` block ends normally, so
a pager that raised left the screen blank for good. `real_suspend` below does
the same (it resumes only after a clean exit), so a test whose pager raises
inside the suspension sees the app stay suspended unless the screen guards it.
The headless driver cannot suspend at all: that path is tested as it is.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle, sync
from _runs import Run
from _screen import SIZE

from transcript_view.viewer import pager
from transcript_view.viewer.app import TranscriptApp


class Terminal:
    """What the pager saw of the app: suspended now, how often, and what it ran."""

    def __init__(self) -> None:
        self.suspended = False
        self.suspensions = 0
        self.calls: list[list[str]] = []
        self.waits = 0
        self.toasts: list[str] = []


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    """A terminal that suspends like Textual's: an exception in the body skips the resume."""
    term = Terminal()

    @contextlib.contextmanager
    def real_suspend(self: TranscriptApp) -> Iterator[None]:
        term.suspended = True
        term.suspensions += 1
        yield  # an exception here propagates and `suspended` stays True, as in Textual
        term.suspended = False

    def wait() -> bool:
        assert term.suspended, "the Enter is read while the terminal is handed over"
        term.waits += 1
        return True

    monkeypatch.setattr(TranscriptApp, "suspend", real_suspend)
    monkeypatch.setattr(pager, "wait_for_enter", wait)
    return term


def on_path(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """`shutil.which` finds exactly `names`."""
    found = set(names)
    monkeypatch.setattr(pager.shutil, "which", lambda n: f"/usr/bin/{n}" if n in found else None)


def spawn(monkeypatch: pytest.MonkeyPatch, term: Terminal, result: Any) -> None:
    """`subprocess.call` records its argv, then returns `result` or raises it."""

    def call(argv: list[str]) -> int:
        term.calls.append(argv)
        if isinstance(result, BaseException):
            raise result
        return int(result)

    monkeypatch.setattr(pager.subprocess, "call", call)


async def press_e(pilot: Any, term: Terminal) -> None:
    """Go to the marker, note every toast from now on, press `e`."""
    app = pilot.app
    await settle(pilot)
    await pilot.press("n")
    app.notify = lambda message, *a, **k: term.toasts.append(message)
    await pilot.press("e")
    await pilot.pause()


async def still_works(pilot: Any, run: Run) -> None:
    """The app took the next keys: `N` moves, `q` quits."""
    app = pilot.app
    assert app.is_running
    await pilot.press("N")
    await pilot.press("q")
    await pilot.pause()
    assert not app.is_running


@sync
async def test_a_missing_pager_is_named_and_the_app_carries_on(
    run_factory: Any, terminal: Terminal, monkeypatch: pytest.MonkeyPatch
) -> None:
    run: Run = run_factory("verified")
    monkeypatch.setenv("PAGER", "nonexistent-pager --flag")
    on_path(monkeypatch)  # nothing is
    # Were it run, it would fail as a missing program does: inside the suspension.
    spawn(monkeypatch, terminal, FileNotFoundError(2, "No such file or directory"))
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await press_e(pilot, terminal)
        assert terminal.suspensions == 0 and not terminal.suspended  # never left the screen
        assert terminal.calls == []
        assert any("nonexistent-pager" in t and "not found" in t for t in terminal.toasts)
        await still_works(pilot, run)


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        (PermissionError(13, "Permission denied"), "Permission denied"),
        (RuntimeError("the pager blew up"), "the pager blew up"),
        (KeyboardInterrupt(), "interrupted"),
    ],
    ids=["cannot-run", "crashes", "ctrl-c"],
)
@sync
async def test_a_pager_that_fails_while_suspended_gives_the_terminal_back(
    run_factory: Any,
    terminal: Terminal,
    monkeypatch: pytest.MonkeyPatch,
    failure: BaseException,
    said: str,
) -> None:
    run: Run = run_factory("verified")
    monkeypatch.setenv("PAGER", "brokenpager")
    on_path(monkeypatch, "brokenpager")
    spawn(monkeypatch, terminal, failure)
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await press_e(pilot, terminal)
        assert terminal.calls == [["brokenpager", str(run.artifact_dir / run.artifact_name)]]
        assert terminal.suspensions == 1 and not terminal.suspended  # resumed
        assert any("brokenpager" in t and said in t for t in terminal.toasts), terminal.toasts
        await still_works(pilot, run)


@sync
async def test_a_pager_exiting_with_an_error_status_is_said(
    run_factory: Any, terminal: Terminal, monkeypatch: pytest.MonkeyPatch
) -> None:
    run: Run = run_factory("verified")
    monkeypatch.setenv("PAGER", "less --no-such-option")
    on_path(monkeypatch, "less")
    spawn(monkeypatch, terminal, 2)
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await press_e(pilot, terminal)
        assert terminal.calls[0][:2] == ["less", "--no-such-option"]
        assert not terminal.suspended
        assert terminal.waits == 1  # it printed its complaint and returned at once
        assert any("less" in t and "status 2" in t for t in terminal.toasts), terminal.toasts


@sync
async def test_a_pager_that_returns_at_once_waits_for_enter(
    run_factory: Any, terminal: Terminal, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`PAGER=cat` prints and returns: without the wait its output only flashes."""
    run: Run = run_factory("verified")
    monkeypatch.setenv("PAGER", "cat")
    on_path(monkeypatch, "cat")
    spawn(monkeypatch, terminal, 0)
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await press_e(pilot, terminal)
        assert terminal.calls == [["cat", str(run.artifact_dir / run.artifact_name)]]
        assert terminal.waits == 1
        assert not terminal.suspended
        assert terminal.toasts == []  # nothing went wrong


@sync
async def test_a_pager_the_person_read_for_a_while_does_not_wait(
    run_factory: Any, terminal: Terminal, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quitting less is the person's own key: no second "press Enter" after it."""
    run: Run = run_factory("verified")
    monkeypatch.setenv("PAGER", "less")
    on_path(monkeypatch, "less")
    spawn(monkeypatch, terminal, 0)
    monkeypatch.setattr(pager, "QUICK_SECONDS", 0.0)  # every run counts as a long one
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await press_e(pilot, terminal)
        assert terminal.calls and terminal.waits == 0


@sync
async def test_a_terminal_that_cannot_suspend_says_so_and_names_the_file(
    run_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The headless driver (and Textual Web) cannot hand the terminal over."""
    run: Run = run_factory("verified")
    monkeypatch.setenv("PAGER", "cat")
    on_path(monkeypatch, "cat")
    term = Terminal()
    spawn(monkeypatch, term, 0)
    app = TranscriptApp(run.path)
    async with app.run_test(size=SIZE) as pilot:
        await press_e(pilot, term)
        assert term.calls == []
        assert any(
            "cannot hand over" in t and run.artifact_name in t for t in term.toasts
        ), term.toasts
        await still_works(pilot, run)


# -- the pieces, without an app ------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "argv"),
    [(None, ["less"]), ("", ["less"]), ("less -R", ["less", "-R"]), ("  ", ["less"])],
)
def test_the_pager_command_comes_from_PAGER(
    monkeypatch: pytest.MonkeyPatch, spec: str | None, argv: list[str]
) -> None:
    on_path(monkeypatch, "less")
    environ = {} if spec is None else {"PAGER": spec}
    found = pager.command(environ)
    assert isinstance(found, pager.Pager) and found.argv == argv


def test_an_unreadable_PAGER_is_said_not_raised() -> None:
    said = pager.command({"PAGER": 'less "unclosed'})
    assert isinstance(said, str) and "PAGER" in said


class FakeTty(io.StringIO):
    """A terminal whose person presses Enter: what was written stays readable after close."""

    def __init__(self) -> None:
        super().__init__("\n")
        self.written: list[str] = []

    def write(self, s: str) -> int:
        self.written.append(s)
        return len(s)


def test_waiting_for_enter_prompts_on_the_terminal_and_reads_a_line() -> None:
    tty = FakeTty()
    assert pager.wait_for_enter(lambda: tty)
    assert pager.PROMPT in "".join(tty.written)
    assert tty.closed


def test_waiting_for_enter_without_a_terminal_returns_at_once() -> None:
    def no_tty() -> FakeTty:
        raise OSError(6, "No such device or address")

    assert pager.wait_for_enter(no_tty) is False


def test_run_never_raises_and_waits_only_after_a_quick_pager(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    waits: list[int] = []
    monkeypatch.setattr(pager.subprocess, "call", lambda argv: 0)
    ticks = iter([0.0, 5.0])
    slow = pager.run(pager.Pager(["less"]), tmp_path, wait=lambda: waits.append(1),
                     clock=lambda: next(ticks))  # fmt: skip
    assert slow.problem is None and waits == []

    def boom(argv: list[str]) -> int:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(pager.subprocess, "call", boom)
    failed = pager.run(pager.Pager(["gone"]), tmp_path, wait=lambda: waits.append(1))
    assert failed.problem == "No such file or directory" and waits == [1]


def test_waiting_for_enter_reads_a_real_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: a text-mode open(tty, "r+") needs a seekable file, so a tty never waited."""
    import os as _os

    from transcript_view.viewer import pager as pager_module

    master, slave = _os.openpty()
    try:
        monkeypatch.setattr(pager_module, "TTY", _os.ttyname(slave))
        _os.write(master, b"\n")
        assert pager_module.wait_for_enter() is True
        import select

        seen = b""
        while pager_module.PROMPT.encode() not in seen:
            ready, _, _ = select.select([master], [], [], 5)
            assert ready, f"the prompt never reached the terminal: {seen!r}"
            seen += _os.read(master, 4096)  # the echo of the typed newline comes first
    finally:
        _os.close(master)
        _os.close(slave)

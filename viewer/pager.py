"""Handing the terminal to `$PAGER` for one file, and always getting it back.

Textual's `App.suspend()` resumes the app only when its `with` block ends
normally: a pager that is not installed (`FileNotFoundError` from
`subprocess`), cannot be run, or is interrupted (ctrl+c reaches this process
too while the terminal is handed over) left the screen blank for good, keys
echoing as text and `q` no longer quitting. So nothing here raises inside the
suspension: `command` finds the pager before the app is suspended (a missing
one is said in a toast and the app never leaves the screen), and `run` turns
every failure into a `PagerRun` that the caller reports after the app is back.

A pager that returns at once (`PAGER=cat`, `less -F` on a short file, one that
prints an error and exits) would flash its output and vanish; `run` then
waits for Enter on the terminal before handing it back.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from textual.app import App, SuspendNotSupported

from transcript_view.core.verification import resolve_inside

#: The pager when `$PAGER` is unset or empty.
DEFAULT_PAGER = "less"
#: A pager that returns sooner than this (seconds) gets "press Enter" after it.
QUICK_SECONDS = 1.0
#: What the terminal shows before the app comes back from a quick pager.
PROMPT = "press Enter to return to transcript-view"
#: The controlling terminal: read for the Enter, even when stdin is redirected.
TTY = "/dev/tty"


@dataclass(frozen=True)
class Pager:
    """The pager's command line, found on `PATH` (`command`)."""

    argv: list[str]
    """The program and its options, as `$PAGER` spells them; the file is appended."""

    @property
    def name(self) -> str:
        """The program as `$PAGER` names it (for toasts)."""
        return self.argv[0]


@dataclass(frozen=True)
class PagerRun:
    """How one run went; `run` never raises, so the app is always resumed first."""

    status: int | None = None
    """The pager's exit status (None: it never ran to an end)."""
    error: str | None = None
    """Why it did not run or did not finish, for a toast."""

    @property
    def problem(self) -> str | None:
        """What to tell the person once the app is back (None: nothing went wrong)."""
        if self.error is not None:
            return self.error
        if self.status:
            return f"exited with status {self.status}"
        return None


def command(environ: Mapping[str, str] = os.environ) -> Pager | str:
    """The pager `$PAGER` names (default `less`), or why it cannot be run.

    Checked before the app is suspended: a missing pager is a toast, never a
    blank screen.
    """
    spec = environ.get("PAGER") or DEFAULT_PAGER
    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        return f"$PAGER ({spec!r}) cannot be read as a command: {exc}"
    if not argv:
        argv = [DEFAULT_PAGER]
    if shutil.which(argv[0]) is None:
        return f"pager {argv[0]!r} not found (set $PAGER to a program on your PATH)"
    return Pager(argv)


def wait_for_enter(open_tty: Callable[[], TextIO] | None = None) -> bool:
    """Show `PROMPT` on the terminal and read a line; False when there is no terminal.

    Reads the controlling terminal, not stdin, which may be redirected. The
    terminal is opened with `os.open`: a text-mode `open(..., "r+")` wants a
    seekable file and refuses a tty (so it once never waited).
    """
    if open_tty is not None:
        try:
            tty = open_tty()
        except OSError:
            return False
        with contextlib.suppress(OSError, EOFError, KeyboardInterrupt), tty:
            tty.write(f"\n{PROMPT}")
            tty.flush()
            tty.readline()
        return True
    try:
        fd = os.open(TTY, os.O_RDWR | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return False
    try:
        with contextlib.suppress(OSError, KeyboardInterrupt):
            os.write(fd, f"\n{PROMPT}".encode())
            while True:
                data = os.read(fd, 1024)
                if not data or b"\n" in data or b"\r" in data:
                    break
    finally:
        os.close(fd)
    return True


def run(
    pager: Pager,
    path: Path,
    *,
    wait: Callable[[], object] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> PagerRun:
    """Run `pager` on `path` (the app is suspended meanwhile); never raises.

    A pager that returned within `QUICK_SECONDS` is followed by `wait` (by
    default `wait_for_enter`), so its output is read before the app redraws.
    """
    wait = wait or wait_for_enter
    started = clock()
    try:
        status = subprocess.call([*pager.argv, str(path)])
        outcome = PagerRun(status=status)
    except OSError as exc:
        outcome = PagerRun(error=f"{exc.strerror or exc}")
    except KeyboardInterrupt:
        outcome = PagerRun(error="interrupted")
    except Exception as exc:  # anything at all: the app must come back
        outcome = PagerRun(error=f"{type(exc).__name__}: {exc}")
    if clock() - started < QUICK_SECONDS:
        with contextlib.suppress(Exception, KeyboardInterrupt):
            wait()
    return outcome


def page(app: App[Any], path: Path, say: Callable[..., None]) -> None:
    """The whole of `e` on any screen: resolve `path`, find the pager, suspend, run, report.

    One code path for every screen with an `e` (a transcript's marker, an
    orphan), so each gets the same care: the name is resolved inside its
    directory (a symlink out of it is refused), a missing pager is said before
    the app is suspended, and whatever the pager did is said once it is back.

    Args:
        app: the app to suspend while the pager has the terminal.
        path: the file, as its directory and basename (resolved here).
        say: how the calling screen shows a toast (`say(message, title=, severity=)`).
    """
    resolved, why = resolve_inside(path.parent, path.name)
    if resolved is None:
        say(f"{path.name}: {why}", severity="error")
        return
    # Found before suspending: Textual never resumes from a `with` body that
    # raises, so a missing pager must not get that far.
    found = command()
    if isinstance(found, str):
        say(found, title="Cannot open the pager", severity="error")
        return
    try:
        with app.suspend():
            outcome = run(found, resolved)  # never raises
    except SuspendNotSupported:
        say(
            f"This terminal cannot hand over to a pager; the file is {resolved}",
            title="Cannot open the pager",
            severity="error",
        )
        return
    if outcome.problem is not None:
        say(f"{found.name}: {outcome.problem}", title="Pager", severity="warning")

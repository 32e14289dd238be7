"""Driving the app headlessly: what tests, screenshots and benchmarks share (never shipped).

The screen's message handlers start new workers (the analysis after the index,
hashing after the analysis), so a single `wait_for_complete` returns too early.
Every headless driver needs the same "wait until quiet" loop; this is it.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from textual.pilot import Pilot


def _busy(pilot: Pilot[Any]) -> bool:
    return any(w.state.name in ("PENDING", "RUNNING") for w in pilot.app.workers)


async def wait_until_quiet(pilot: Pilot[Any], rounds: int = 50) -> None:
    """Wait until no worker is pending or running and their messages are handled.

    Quiet must hold across two message-queue drains: a handler run by the first
    drain may start another worker.
    """
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if not _busy(pilot):
            await pilot.pause()
            if not _busy(pilot):
                return
    busy = [w.name for w in pilot.app.workers if w.state.name in ("PENDING", "RUNNING")]
    raise AssertionError(f"workers still busy after {rounds} rounds: {busy}")


async def settle(pilot: Any) -> None:
    """Wait until the app is quiet (see `wait_until_quiet`)."""
    await wait_until_quiet(pilot)


def sync(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async pilot test with `asyncio.run` (the project has no asyncio plugin).

    `functools.wraps` keeps the signature, so pytest still injects fixtures.
    """

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))  # type: ignore[arg-type]

    return run


async def settle_except(pilot: Any, group: str) -> None:
    """`settle`, but without waiting for the workers of `group` (held at a gate)."""
    app = pilot.app
    for _ in range(50):
        others = [w for w in app.workers if w.group != group]
        if others:
            await app.workers.wait_for_complete(others)
        await pilot.pause()
        busy = [
            w for w in app.workers if w.group != group and w.state.name in ("PENDING", "RUNNING")
        ]
        if not busy:
            return
    raise AssertionError(f"workers outside {group!r} still busy after 50 rounds")


def hold_analysis(monkeypatch: Any) -> threading.Event:
    """Hold the viewer's analysis worker (`viewer.workers.analyse_as`) until the returned
    event is set: what a test asserts before then happens while the worker still runs."""
    from transcript_view.viewer import workers

    opened = threading.Event()
    real = workers.analyse_as

    def held(*args: Any, **kwargs: Any) -> Any:
        assert opened.wait(120), "the test never opened the gate"
        return real(*args, **kwargs)

    monkeypatch.setattr(workers, "analyse_as", held)
    return opened

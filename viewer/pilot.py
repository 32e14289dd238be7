"""Driving the app headlessly: what tests, screenshots and benchmarks share.

The screen's message handlers start new workers (the analysis after the index,
hashing after the analysis), so a single `wait_for_complete` returns too early.
Every headless driver needs the same "wait until quiet" loop; this is it.
"""

from __future__ import annotations

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

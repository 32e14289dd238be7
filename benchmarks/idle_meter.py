"""One viewer open, headless, timed until all its background work is done (a child process).

`python benchmarks/idle_meter.py FILE` prints one JSON object: seconds from
starting the app until idle — the line index, the analysis, the artifact
checks and both views' row counts all finished — and the peak RSS (VmHWM) of
this process (the UI) and of its pass server (`core.parallel`), in MiB. Run
as its own process by `bench_idle.py`, so every measurement starts cold in
memory (the page cache is warm) and its peak is its own.

The app runs as `transcript-view FILE` does (`run_app` starts the pass server
first), but headless through `App.run_test` at 120x40, and "idle" is read off
the app itself: no worker running, the header's phase over, and every block
of both documents laid out (a model view made only when shown, a Claude Code
session's or a Codex rollout's, is not: it is no work until `m`). It is polled
every 20 ms from the app's own loop, so the time is within a poll of the truth.

With `--keys`, the same open is also used the way a person reads while it
works: from the first screen on, `down` and `up` are pressed in turn every
`KEY_EVERY` seconds (posted as a terminal sends them, `App.simulate_key`),
and each key's latency is the time until the view's cursor has moved, polled
every millisecond from the app's own loop (a blocked loop shows in it). The
object then also holds `keys` (how many), `key_p95` and `key_max` (seconds),
and `key_latencies`: every key's, in the order they were pressed, with
`key_times`, when each was pressed (seconds from the start).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def hwm_mib(pid: int | str = "self") -> float:
    """A process's peak resident set (VmHWM), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


#: Seconds between two key presses of the `--keys` meter.
KEY_EVERY = 0.2


async def key_latency(app: Any, key: str) -> float:
    """Seconds from posting `key` until the transcript view's cursor has moved."""
    view = app.screen.view
    before = view.cursor
    t0 = time.perf_counter()
    app.simulate_key(key)
    while view.cursor == before:
        if time.perf_counter() - t0 > 30:
            raise RuntimeError(f"{key} never moved the cursor")
        await asyncio.sleep(0.001)
    return time.perf_counter() - t0


def readable(app: Any) -> bool:
    """The first screen is up: the file view has rows to move through."""
    from transcript_view.viewer.main_screen import TranscriptScreen

    screen = app.screen
    return isinstance(screen, TranscriptScreen) and screen.view.doc.total_rows > 100


def idle(app: Any) -> bool:
    from transcript_view.viewer.main_screen import TranscriptScreen

    screen = app.screen
    if not isinstance(screen, TranscriptScreen) or screen.header.phase:
        return False
    if any(not w.is_finished for w in app.workers):
        return False
    view = screen.view
    docs = [view.file_doc, view.model_doc]
    return all(d is not None and (_deferred(d) or d.blocks == d.source.available() > 0)
               for d in docs)  # fmt: skip


def _deferred(doc: Any) -> bool:
    """A model view whose context is made only when it is shown (a Claude Code session's,
    a Codex rollout's): not laid out, and no work owed, until `m`."""
    deferred = getattr(doc.source, "deferred", None)
    return bool(deferred()) if deferred is not None else False


async def measure(path: Path, keys: bool = False) -> dict[str, Any]:
    from transcript_view.core import parallel
    from transcript_view.viewer.app import TranscriptApp

    t0 = time.perf_counter()
    server = parallel.start_server()
    app = TranscriptApp(path)
    latencies: list[float] = []
    pressed_at: list[float] = []
    next_key = 0.0
    async with app.run_test(size=(120, 40)):
        while not idle(app):
            now = time.perf_counter()
            if keys and now >= next_key and readable(app):
                key = "down" if len(latencies) % 2 == 0 else "up"
                pressed_at.append(now - t0)
                latencies.append(await key_latency(app, key))
                next_key = time.perf_counter() + KEY_EVERY
            await asyncio.sleep(0.02)
        seconds = time.perf_counter() - t0
        pid = server.pid if server is not None else None
        server_hwm = hwm_mib(pid) if pid is not None else 0.0
    out: dict[str, Any] = {"seconds": seconds, "ui_hwm": hwm_mib(), "server_hwm": server_hwm}
    if keys:
        ranked = sorted(latencies) or [0.0]
        out["keys"] = len(latencies)
        out["key_p95"] = ranked[min(len(ranked) - 1, int(len(ranked) * 0.95))]
        out["key_max"] = ranked[-1]
        out["key_latencies"] = latencies
        out["key_times"] = pressed_at
    return out


if __name__ == "__main__":
    path, *flags = sys.argv[1:]
    print(json.dumps(asyncio.run(measure(Path(path), keys="--keys" in flags))))

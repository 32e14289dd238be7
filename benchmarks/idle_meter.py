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
of both documents laid out. It is polled every 20 ms from the app's own loop,
so the time is within a poll of the truth.
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


def idle(app: Any) -> bool:
    from transcript_view.viewer.main_screen import TranscriptScreen

    screen = app.screen
    if not isinstance(screen, TranscriptScreen) or screen.header.phase:
        return False
    if any(not w.is_finished for w in app.workers):
        return False
    view = screen.view
    docs = [view.file_doc, view.model_doc]
    return all(d is not None and d.blocks == d.source.available() > 0 for d in docs)


async def measure(path: Path) -> dict[str, float]:
    from transcript_view.core import parallel
    from transcript_view.viewer.app import TranscriptApp

    t0 = time.perf_counter()
    server = parallel.start_server()
    app = TranscriptApp(path)
    async with app.run_test(size=(120, 40)):
        while not idle(app):
            await asyncio.sleep(0.02)
        seconds = time.perf_counter() - t0
        pid = server.pid if server is not None else None
        server_hwm = hwm_mib(pid) if pid is not None else 0.0
    return {"seconds": seconds, "ui_hwm": hwm_mib(), "server_hwm": server_hwm}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(measure(Path(sys.argv[1])))))

"""Search: `/` for a rare word in a 256 MiB transcript, against `grep -c` of the same word.

Run: ``.venv/bin/python benchmarks/bench_search.py``

Measured in-process with Textual's `App.run_test()` (headless, 120x40), on the
throughput group's `throughput-256m.jsonl` (`gen.transcript`, 256 MiB, ~400-byte
lines, 8 excerpted tool results). Every worker of the open (index, analysis,
hashing, layout of both views) finishes first, so the search has the machine
to itself. Then `/`, the word, and `enter` (posted as a terminal sends it,
`App.simulate_key`); the time runs until the view handles the search's
`SearchDone` (seen by the app's message hook, so nothing polls meanwhile). That
covers the scan of the file's bytes (`core.search`), building the candidates'
blocks, and the messages back. Median of 3 searches, warm page cache.

The reference is `grep -c WORD FILE` in a process of its own (start-up
included), median of 3, in the same run: what a person would type to count the
word's lines. grep is case-sensitive; the search is case-insensitive and
decodes escapes, so it does more. Target: <= 10x grep -c. (`less` took 90x grep
on a user's 300 MB transcript; the viewer's search before the scan, 500x.)

* **rare word** — `elided`, on 16 lines (the 8 excerpts' markers and their
  settles).
* **rare non-ASCII word** — `éééé`, on 8 lines: the per-line check of the
  decoded strings for lines holding an "é" (raw or escaped); no target, for
  information.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))  # the headless driver tests share (_pilot)

from _pilot import wait_until_quiet  # noqa: E402
from gen import DATA, MiB, transcript  # noqa: E402

RUNS = 3
SIZE = (120, 40)
WORDS = (
    ("elided", "rare word", "target <= 10"),
    ("éééé", "rare non-ASCII word", "no target"),
)


def _grep(word: str, path: Path, runs: int) -> float:
    """Median seconds of `grep -c word path` (the count itself is discarded)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        # Into a pipe: GNU grep stops at the first match when its output is /dev/null.
        subprocess.run(["grep", "-c", word, str(path)], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def _search(pilot: Any, word: str, arrived: list[float], timeout: float = 600.0) -> float:
    """Seconds from `enter` in the search box until the view's `SearchDone` is handled.

    `arrived` is appended to by the app's message hook, on the app's own loop,
    when a `SearchDone` is dispatched: nothing polls meanwhile (a poll every
    millisecond takes the GIL from the search's thread a thousand times a second).
    """
    app = pilot.app
    await pilot.press("slash", *word)
    arrived.clear()
    t0 = time.perf_counter()
    app.simulate_key("enter")
    while not arrived:
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"search for {word!r} never finished")
        await asyncio.sleep(0.05)
    seconds = arrived[0] - t0
    await wait_until_quiet(pilot)
    return seconds


async def _measure(path: Path, runs: int) -> dict[str, tuple[float, str]]:
    """Median search seconds per word, and what the header says of the last one."""
    from transcript_view.viewer.app import TranscriptApp
    from transcript_view.viewer.messages import SearchDone

    arrived: list[float] = []

    def hook(message: object) -> None:
        if isinstance(message, SearchDone):
            arrived.append(time.perf_counter())

    app = TranscriptApp(path)
    out = {}
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await wait_until_quiet(pilot)
        screen: Any = app.screen
        for word, _, _ in WORDS:
            times = [await _search(pilot, word, arrived) for _ in range(runs)]
            out[word] = (statistics.median(times), screen.header.search_status)
    return out


def run(runs: int = RUNS) -> list[tuple[str, float, float, str]]:
    path = transcript(
        DATA / "throughput-256m.jsonl", 256 * MiB, artifacts=8, artifact_size=64 << 10, spread=True
    )
    size = path.stat().st_size / MiB
    _grep(WORDS[0][0], path, 1)  # warm the page cache
    searched = asyncio.run(_measure(path, runs))
    rows = []
    for word, label, target in WORDS:
        seconds, status = searched[word]
        print(f"  {status}", file=sys.stderr)
        rows.append(
            (
                f"/ search, {label} ({word}), {size:,.0f} MiB",
                seconds,
                _grep(word, path, runs),
                f"grep -c of the same word, same file ({target})",
            )
        )
    return rows


if __name__ == "__main__":
    for name, ours, ref, what in run():
        print(f"{name}: {ours:.3f}s vs {what} {ref:.3f}s = {ours / ref:.2f}x")

"""How much grapheme counting and cutting cost next to just hashing the text.

Run: ``.venv/bin/python benchmarks/bench_graphemes.py``

An oversized tool result is hashed (sha256 of its UTF-8) anyway, so the hash
is the yardstick: it is the cheapest thing that must read all 10 MB. Two
inputs: the reference's mixed-script result (CJK, Hangul, ZWJ emoji, flags,
combining marks, Indic, controls, CRLF blocks) repeated to 10 MB, and 10 MB of
ASCII. For each: sha256, `count` (the native counter when it was built),
`_count_pure` (the pure-Python path, used where it was not), `cut(text, 12288,
4096)` (what an excerpt needs), the plain engine's count for comparison, and
the ratios to sha256.
Times are the best of a few runs.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wcwidth import iter_graphemes  # noqa: E402

from transcript_view.core.graphemes import NATIVE, _count_pure, count, cut  # noqa: E402

SAMPLE = ROOT / "tests" / "data" / "reference" / "basic.big-input.txt"
TARGET_BYTES = 10_000_000
REPEATS = 5


def to_size(unit: str, size: int = TARGET_BYTES) -> str:
    """Repeat `unit` and trim it to about `size` UTF-8 bytes (whole code points)."""
    text = unit * (size // len(unit.encode("utf-8")) + 1)
    while len(text.encode("utf-8")) > size:
        text = text[: len(text) - max(1, (len(text.encode("utf-8")) - size) // 4)]
    return text


def best(fn: Callable[[], object]) -> float:
    """Best wall time of `fn` over REPEATS runs, in seconds."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    """Print one block of timings per input."""
    ascii_unit = (
        '    let value = compute("key/7", { retries: 3 }); // path C:\\tmp\\f7.txt\n'
        "lorem ipsum dolor sit amet, consectetur adipiscing elit\r\n"
    )
    inputs = {
        "mixed-script": to_size(SAMPLE.read_text(encoding="utf-8")),
        "ascii": to_size(ascii_unit),
    }
    print(f"native counter (core._gcount): {'built' if NATIVE else 'not built'}")
    for name, text in inputs.items():
        data_bytes = len(text.encode("utf-8"))
        total, first, last = cut(text, 12_288, 4_096)
        t_sha = best(lambda text=text: hashlib.sha256(text.encode("utf-8")).digest())
        t_count = best(lambda text=text: count(text))
        t_pure = best(lambda text=text: _count_pure(text))
        t_cut = best(lambda text=text: cut(text, 12_288, 4_096))
        t_plain = best(lambda text=text: sum(1 for _ in iter_graphemes(text)))
        print(
            f"{name}: {data_bytes:,} bytes, {len(text):,} code points, {total:,} graphemes"
            f" (head {len(first):,} / tail {len(last):,} code points)"
        )
        for label, seconds in [
            ("sha256(utf-8)", t_sha),
            ("count", t_count),
            ("count, pure Python", t_pure),
            ("cut(12288, 4096)", t_cut),
            ("plain engine count", t_plain),
        ]:
            rate = data_bytes / seconds / 1e6
            print(
                f"  {label:<20} {seconds * 1000:9.2f} ms  {rate:9.0f} MB/s"
                f"  {seconds / t_sha:7.2f}x sha256"
            )


if __name__ == "__main__":
    main()

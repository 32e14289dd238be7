"""Many transcripts: `--check DIR` over a tree of 1,000, against their parse floor.

Issue 11: "`--check DIR` (and several paths) checks a tree of 1,000
transcripts using every core". The tree is 1,000 `gen.transcript` files of
128 KiB in 10 folders (~125 MiB), every tenth with one stored 64 KiB
artifact. The floor parses every line of every file in one process
(`orjson.loads`, as `bench_throughput`'s floor does), so a ratio under 1
means the check used more than one core; the target is the single
transcript's, <= 2x the floor. Medians of 3, warm page cache.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_throughput import floor_parser, timed  # noqa: E402
from gen import DATA, transcript  # noqa: E402

TREE = DATA / "tree-1000"
FILES = 1000
FILE_SIZE = 128 << 10

_FLOOR = """
import sys
from pathlib import Path
try:
    from orjson import loads
except ImportError:
    import msgspec
    loads = msgspec.json.Decoder().decode
for path in sorted(Path(sys.argv[1]).rglob("*.jsonl")):
    with open(path, "rb") as fh:
        for line in fh:
            loads(line)
"""


def tree() -> Path:
    """The 1,000 transcripts, generated on first use."""
    for i in range(FILES):
        path = TREE / f"d{i % 10}" / f"t{i:04}.jsonl"
        transcript(path, FILE_SIZE + i, artifacts=1 if i % 10 == 0 else 0, artifact_size=64 << 10)
    return TREE


def run(runs: int = 3) -> list[tuple[str, float, float, str]]:
    root = tree()
    base = timed([sys.executable, "-c", _FLOOR, str(root)], runs)
    check = timed([sys.executable, "-m", "transcript_view", "--check", str(root)], runs)
    return [
        (
            f"--check DIR, {FILES:,} transcripts (~{FILES * FILE_SIZE >> 20} MiB)",
            check,
            base,
            f"parse floor ({floor_parser()} of every line of every file, in one process)"
            " (target <= 2)",
        )
    ]


if __name__ == "__main__":
    for name, ours, ref, what in run():
        print(f"{name}: {ours:.3f} vs {what} {ref:.3f} = {ours / ref:.2f}x")

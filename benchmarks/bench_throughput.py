"""Throughput: `--check` against the parse floor, the time to parse every line and nothing else.

Run: ``.venv/bin/python benchmarks/bench_throughput.py``

The parse floor is `orjson.loads` of every line of the same file (`for line in
file`), in a process of its own like `--check`'s, so both pay an interpreter's
start; msgspec's decoder stands in when orjson is not installed (the row says
which). Every row divides by the floor of its own input, measured in the same
run, and prints it. Medians of 3, warm page cache.

* **reference format, 64 MiB / 256 MiB / 1 GiB** — `gen.transcript` files, ~400
  bytes a line, 8 stored 64 KiB artifacts (none in the 1 GiB one, which is the
  open benchmark's file). Target at 256 MiB and 1 GiB: <= 2x the floor.
* **large artifacts** — the check benchmark's transcript (100 artifacts, 1,000
  MiB) against the floor of its transcript plus `sha256sum` of its artifacts.
  Target <= 1.25x.
* **Claude Code, Codex, 64 MiB / 256 MiB; Qwen Code, Gemini CLI, OpenCode, Copilot CLI,
  256 MiB** —
  `gen.claude_session` / `gen.codex_rollout` / `gen.qwen_session` (8 stubs verified by
  sha256) / `gen.gemini_session` (each message written again as it changes, 8 cuts
  matched by head and tail) / `gen.opencode_session` (a SQLite database; its floor reads
  every row as the export does and parses its data; 8 cuts matched by lines and count) /
  `gen.copilot_session` (a usage record a call, 8 large-output markers);
  target <= 2x the floor.
* **thousands of files** — a 1 GiB transcript with 5,000 artifacts of 64 KiB,
  and a Claude Code session with 2,000 sidecars of 200 KB
  (`gen.claude_sidecars`): their time against the floor plus `sha256sum` of the
  files, for comparison, and each check's peak RSS against the 300 MiB budget.
* **many small lines, 256 MiB / 1 GiB, each format** — `gen.small_transcript`,
  `gen.small_claude_session`, `gen.small_codex_rollout` (most lines under 300
  bytes, as an agent session's are; the label gives the median). Target <= 1.25x
  the floor.

With `BENCH_BEFORE=REV` (`run.py --before REV`), every `--check` row is also timed
with the code of REV (`before.py`), in turns with this tree's, on the same input
and against the same floor. With `BENCH_SMOKE=16M`, every input is made at that
size (and a few artifacts or sidecars) under `data/smoke-16m/`: a quick proof that
the group runs, not a measurement.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Collection
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import before  # noqa: E402
from gen import (  # noqa: E402
    DATA,
    MiB,
    claude_session,
    claude_sidecars,
    codex_rollout,
    copilot_session,
    gemini_session,
    line_sizes,
    opencode_session,
    parse_size,
    qwen_session,
    small_claude_session,
    small_codex_rollout,
    small_transcript,
    transcript,
)

from transcript_view.core.artifacts import artifact_dir_for  # noqa: E402

RUNS = 3

#: `BENCH_SMOKE=16M`: every input at that size, to prove the group runs (not a measurement).
SMOKE = parse_size(os.environ["BENCH_SMOKE"]) if os.environ.get("BENCH_SMOKE") else None

#: A row: (label, ours, reference, what), or (label, ours, reference, what, unit[, before]).
Row = tuple[Any, ...]

_FLOOR = """
import sys
try:
    from orjson import loads
except ImportError:
    import msgspec
    loads = msgspec.json.Decoder().decode
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        loads(line)
"""


def floor_parser() -> str:
    """Which parser the floor uses here."""
    try:
        import orjson  # noqa: F401
    except ImportError:
        return "msgspec's decoder (orjson not installed)"
    return "orjson.loads"


def timed(
    cmd: list[str], runs: int = RUNS, env: dict[str, str] | None = None, cwd: Path | None = None
) -> float:
    """Median wall time of `runs` runs of `cmd` (output discarded)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, env=env, cwd=cwd)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def timed_with_before(
    path: Path, runs: int, tree: before.Tree | None
) -> tuple[float, float | None, str]:
    """Our `--check` of `path` and, with a before tree, its: medians of `runs`, in turns.

    Each is run once first (the page cache warmed, the exit status read): a check
    that does not exit 0 is named in the third value, for the row's label.
    """
    commands: list[tuple[str, list[str], Path | None]] = [("", check_command(path), None)]
    if tree is not None:
        commands.append((f"before {tree.short} ", tree.check_command(path), tree.root))
    notes = []
    for who, cmd, cwd in commands:
        code = subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, cwd=cwd).returncode
        if code != 0:
            notes.append(f"{who}exit {code}")
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for spent, (_, cmd, cwd) in zip(times, commands, strict=True):
            spent.append(timed(cmd, 1, cwd=cwd))
    medians = [statistics.median(t) for t in times]
    note = f" [{', '.join(notes)}]" if notes else ""
    return medians[0], (medians[1] if tree is not None else None), note


#: An OpenCode session's floor: its rows read as OpenCode's export reads them (each
#: message, then its parts by the `(message_id, id)` index) and each `data` parsed.
_FLOOR_DB = """
import sqlite3, sys
try:
    from orjson import loads
except ImportError:
    import msgspec
    loads = msgspec.json.Decoder().decode
db, sid = sys.argv[1].rsplit("/", 1)
conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
conn.text_factory = bytes
parts = conn.cursor()
for mid, data in conn.execute(
    "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,)
):
    loads(data)
    for (p,) in parts.execute(
        "SELECT data FROM part WHERE message_id = ? ORDER BY id", (mid.decode(),)
    ):
        loads(p)
"""


def floor_command(path: Path) -> list[str]:
    """The parse floor's command: every line of `path` parsed, nothing else (an OpenCode
    session, `<database>/<id>`: every row's data read from the database and parsed)."""
    if not path.exists() and path.parent.is_file():
        return [sys.executable, "-c", _FLOOR_DB, str(path)]
    return [sys.executable, "-c", _FLOOR, str(path)]


def floor(path: Path, runs: int = RUNS) -> float:
    """The parse floor of `path`: every line parsed, nothing else."""
    return timed(floor_command(path), runs)


def check_command(path: Path) -> list[str]:
    """`transcript-view --check PATH`, run by this interpreter (the project's venv)."""
    return [sys.executable, "-m", "transcript_view", "--check", str(path)]


def inputs(keys: Collection[str] | None = None) -> dict[str, Path]:
    """The inputs (only `keys`, when given), generated on first use (minutes, once)."""
    data = DATA if SMOKE is None else DATA / f"smoke-{SMOKE // MiB}m"

    def size(n: int) -> int:
        return n if SMOKE is None else SMOKE

    def many(n: int) -> int:
        return n if SMOKE is None else min(n, 20)

    big_artifacts = (100, 10 * MiB) if SMOKE is None else (4, 1 * MiB)
    makers: dict[str, Callable[[], Path]] = {
        "64m": lambda: transcript(
            data / "throughput-64m.jsonl",
            size(64 * MiB),
            artifacts=8,
            artifact_size=64 << 10,
            spread=True,
        ),
        "256m": lambda: transcript(
            data / "throughput-256m.jsonl",
            size(256 * MiB),
            artifacts=8,
            artifact_size=64 << 10,
            spread=True,
        ),
        "1g": lambda: transcript(data / "open-1g.jsonl", size(1024 * MiB)),
        "claude": lambda: claude_session(data / "throughput-claude-64m.jsonl", size(64 * MiB)),
        "claude-256m": lambda: claude_session(
            data / "throughput-claude-256m.jsonl", size(256 * MiB)
        ),
        "codex": lambda: codex_rollout(data / "throughput-codex-64m.jsonl", size(64 * MiB)),
        "codex-256m": lambda: codex_rollout(
            data / "throughput-codex-256m.jsonl", size(256 * MiB)
        ),
        "qwen-256m": lambda: qwen_session(data / "throughput-qwen-256m", size(256 * MiB)),
        "gemini-256m": lambda: gemini_session(
            data / "throughput-gemini-256m" / "tmp" / "proj", size(256 * MiB)
        ),
        "opencode-256m": lambda: opencode_session(
            data / "throughput-opencode-256m", size(256 * MiB)
        ),
        "copilot-256m": lambda: copilot_session(data / "throughput-copilot-256m", size(256 * MiB)),
        "artifacts": lambda: transcript(
            data / "check-1g.jsonl",
            1 * MiB,
            artifacts=big_artifacts[0],
            artifact_size=big_artifacts[1],
        ),
        # Issue 11: "memory must stay under 300 MiB through every phase at 1 GiB with
        # thousands of artifacts" (`gen.py --size 1G --markers 5000`).
        "1g-artifacts": lambda: transcript(
            data / "user-1g.jsonl",
            size(1024 * MiB),
            artifacts=many(MANY_ARTIFACTS),
            artifact_size=64 << 10,
            spread=True,
        ),
        # The same budget for the other formats: a Claude Code sidecar's check keeps
        # its start, which a preview is compared with.
        "claude-sidecars": lambda: claude_sidecars(
            data / "claude-sidecars", many(MANY_SIDECARS), SIDECAR_SIZE
        ),
    }
    # Issue 25: many small lines, as an agent session is.
    for name, gen in SMALL_LINES.items():
        for tag, n in (("256m", 256 * MiB), ("1g", 1024 * MiB)):
            path = data / f"throughput-small-{name}-{tag}.jsonl"
            makers[f"small-{name}-{tag}"] = partial(gen, path, size(n))
    return {key: make() for key, make in makers.items() if keys is None or key in keys}


#: The small-line generators, by the name their files and rows take.
SMALL_LINES = {
    "reference": small_transcript,
    "claude": small_claude_session,
    "codex": small_codex_rollout,
}
_SMALL_LABELS = {
    "reference": "reference format",
    "claude": "Claude Code session",
    "codex": "Codex rollout",
}


#: The stored artifacts of the "thousands of artifacts" input.
MANY_ARTIFACTS = 5000
#: The sidecars of the Claude Code session with thousands of them, and their size.
MANY_SIDECARS = 2000
SIDECAR_SIZE = 200_000


def floor_and_hashes(
    path: Path, runs: int, directory: Path | None = None
) -> tuple[float, list[str]]:
    """The parse floor of `path` plus `sha256sum` of its artifacts (warmed once), and those.

    `directory` is where the files are, when not the reference's `<stem>.artifacts/`.
    """
    where = directory if directory is not None else artifact_dir_for(path)
    names = sorted(str(p) for p in where.iterdir())
    sha = ["sha256sum", *names]
    timed(sha, 1)
    return floor(path, runs) + timed(sha, runs), names


#: Runs argv[1:] and prints its peak RSS in KiB (`wait4`'s `ru_maxrss`).
_PEAK = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, _, usage = os.wait4(child.pid, 0)
print(usage.ru_maxrss)
"""


def peak_rss_mib(cmd: list[str], cwd: Path | None = None) -> float:
    """Peak RSS (MiB) of one run of `cmd`: its largest process (`wait4`'s `ru_maxrss`).

    Started from a small Python of its own: Linux carries a process's peak across
    its `exec`, so a child forked straight from this one starts its count at this
    process's size (after the other groups of a full run, 476 MiB for a check
    whose own peak is 171 MiB).
    """
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, *cmd], capture_output=True, text=True, check=True, cwd=cwd
    )
    return int(out.stdout) / 1024


def _row(
    label: str, ours: float, base: float, what: str, was: float | None, unit: str = "s"
) -> Row:
    """A row for run.py's table: with the before tree's measure last when there is one."""
    if was is None:
        return (label, ours, base, what) if unit == "s" else (label, ours, base, what, unit)
    return (label, ours, base, what, unit, was)


def run(runs: int = RUNS) -> list[Row]:
    rev = before.revision()
    tree = before.tree(rev) if rev else None
    paths = inputs()
    parser = floor_parser()
    rows: list[Row] = []
    checks = [
        ("64m", "reference format", "no target at this size"),
        ("256m", "reference format", "target <= 2"),
        ("1g", "reference format, no artifacts", "target <= 2"),
        ("claude", "Claude Code session", "target <= 2"),
        ("claude-256m", "Claude Code session", "target <= 2"),
        ("codex", "Codex rollout", "target <= 2"),
        ("codex-256m", "Codex rollout", "target <= 2"),
        ("qwen-256m", "Qwen Code session", "target <= 2"),
        ("gemini-256m", "Gemini CLI session", "target <= 2"),
        ("opencode-256m", "OpenCode session (SQLite)", "target <= 2"),
        ("copilot-256m", "Copilot CLI session", "target <= 2"),
    ]
    for name in SMALL_LINES:
        for tag in ("256m", "1g"):
            path = paths[f"small-{name}-{tag}"]
            median, _ = line_sizes(path)
            label = f"{_SMALL_LABELS[name]}, small lines (median {median} bytes)"
            checks.append((f"small-{name}-{tag}", label, "target <= 1.25"))
    for key, label, target in checks:
        path = paths[key]
        # An OpenCode session's size is its database's (`<database>/<id>`).
        size = (path if path.exists() else path.parent).stat().st_size / MiB
        timed(floor_command(path), 1)  # warm the page cache
        base = floor(path, runs)
        ours, was, note = timed_with_before(path, runs, tree)
        rows.append(
            _row(
                f"--check, {label}, {size:,.0f} MiB{note}",
                ours,
                base,
                f"parse floor ({parser} of every line), same file ({target})",
                was,
            )
        )
    path = paths["artifacts"]
    base, names = floor_and_hashes(path, runs)
    ours, was, note = timed_with_before(path, runs, tree)
    total = sum(os.path.getsize(n) for n in names) / MiB
    rows.append(
        _row(
            f"--check, {len(names)} artifacts, {total:,.0f} MiB{note}",
            ours,
            base,
            "parse floor of the transcript + sha256sum of the artifacts (target <= 1.25)",
            was,
        )
    )
    path = paths["1g-artifacts"]
    count = len(list(artifact_dir_for(path).iterdir()))
    size = path.stat().st_size / MiB
    label = f"{size:,.0f} MiB with {count:,} artifacts of 64 KiB"
    rows += many_files_rows(path, label, runs, tree=tree)
    path = paths["claude-sidecars"]
    count = len(list(sidecar_dir_of(path).iterdir()))
    label = f"Claude Code session with {count:,} sidecars of {SIDECAR_SIZE // 1000} KB"
    rows += many_files_rows(path, label, runs, sidecar_dir_of(path), tree)
    return rows


def many_files_rows(
    path: Path,
    label: str,
    runs: int,
    directory: Path | None = None,
    tree: before.Tree | None = None,
) -> list[Row]:
    """`--check` of a transcript with thousands of files, and that check's peak RSS.

    Its time is printed against the floor plus `sha256sum` of the files, with no
    target (thousands of small files); its peak against the 300 MiB budget.
    """
    base, _ = floor_and_hashes(path, runs, directory)
    ours, was, note = timed_with_before(path, runs, tree)
    peak_was = None
    if tree is not None:
        peak_was = peak_rss_mib(tree.check_command(path), cwd=tree.root)
    return [
        _row(
            f"--check, {label}{note}",
            ours,
            base,
            "parse floor of the transcript + sha256sum of its files, for comparison; "
            "no target (thousands of small files)",
            was,
        ),
        _row(
            "peak RSS of that --check (its largest process)",
            peak_rss_mib(check_command(path)),
            300.0,
            "300 MiB budget (target <= 1)",
            peak_was,
            "MiB",
        ),
    ]


def sidecar_dir_of(path: Path) -> Path:
    """Where a Claude Code session's sidecars are: `<session>/tool-results/` beside it."""
    return path.with_suffix("") / "tool-results"


if __name__ == "__main__":
    for name, ours, ref, what, *rest in run():
        was = f" (before: {rest[1] / ref:.2f}x)" if len(rest) > 1 else ""
        print(f"{name}: {ours:.3f} vs {what} {ref:.3f} = {ours / ref:.2f}x{was}")

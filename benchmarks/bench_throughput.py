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
* **Claude Code, Codex, 64 MiB / 256 MiB** — `gen.claude_session` /
  `gen.codex_rollout`; target <= 2x the floor.
* **thousands of files** — a 1 GiB transcript with 5,000 artifacts of 64 KiB,
  and a Claude Code session with 2,000 sidecars of 200 KB
  (`gen.claude_sidecars`): their time against the floor plus `sha256sum` of the
  files, for comparison, and each check's peak RSS against the 300 MiB budget.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen import (  # noqa: E402
    DATA,
    MiB,
    claude_session,
    claude_sidecars,
    codex_rollout,
    transcript,
)

from transcript_view.core.artifacts import artifact_dir_for  # noqa: E402

RUNS = 3

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


def timed(cmd: list[str], runs: int = RUNS, env: dict[str, str] | None = None) -> float:
    """Median wall time of `runs` runs of `cmd` (output discarded)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def floor(path: Path, runs: int = RUNS) -> float:
    """The parse floor of `path`: every line parsed, nothing else."""
    return timed([sys.executable, "-c", _FLOOR, str(path)], runs)


def check_command(path: Path) -> list[str]:
    """`transcript-view --check PATH`, run by this interpreter (the project's venv)."""
    return [sys.executable, "-m", "transcript_view", "--check", str(path)]


def inputs() -> dict[str, Path]:
    """The inputs, generated on first use (minutes, once)."""
    return {
        "64m": transcript(
            DATA / "throughput-64m.jsonl",
            64 * MiB,
            artifacts=8,
            artifact_size=64 << 10,
            spread=True,
        ),
        "256m": transcript(
            DATA / "throughput-256m.jsonl",
            256 * MiB,
            artifacts=8,
            artifact_size=64 << 10,
            spread=True,
        ),
        "1g": transcript(DATA / "open-1g.jsonl", 1024 * MiB),
        "claude": claude_session(DATA / "throughput-claude-64m.jsonl", 64 * MiB),
        "claude-256m": claude_session(DATA / "throughput-claude-256m.jsonl", 256 * MiB),
        "codex": codex_rollout(DATA / "throughput-codex-64m.jsonl", 64 * MiB),
        "codex-256m": codex_rollout(DATA / "throughput-codex-256m.jsonl", 256 * MiB),
        "artifacts": transcript(
            DATA / "check-1g.jsonl", 1 * MiB, artifacts=100, artifact_size=10 * MiB
        ),
        # Issue 11: "memory must stay under 300 MiB through every phase at 1 GiB with
        # thousands of artifacts" (`gen.py --size 1G --markers 5000`).
        "1g-artifacts": transcript(
            DATA / "user-1g.jsonl",
            1024 * MiB,
            artifacts=MANY_ARTIFACTS,
            artifact_size=64 << 10,
            spread=True,
        ),
        # The same budget for the other formats: a Claude Code sidecar's check keeps
        # its start, which a preview is compared with.
        "claude-sidecars": claude_sidecars(DATA / "claude-sidecars", MANY_SIDECARS, SIDECAR_SIZE),
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


def peak_rss_mib(cmd: list[str]) -> float:
    """Peak RSS (MiB) of one run of `cmd`: its largest process (`wait4`'s `ru_maxrss`).

    Started from a small Python of its own: Linux carries a process's peak across
    its `exec`, so a child forked straight from this one starts its count at this
    process's size (after the other groups of a full run, 476 MiB for a check
    whose own peak is 171 MiB).
    """
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, *cmd], capture_output=True, text=True, check=True
    )
    return int(out.stdout) / 1024


def run(
    runs: int = RUNS,
) -> list[tuple[str, float, float, str] | tuple[str, float, float, str, str]]:
    paths = inputs()
    parser = floor_parser()
    rows: list[tuple[str, float, float, str] | tuple[str, float, float, str, str]] = []
    for key, label, target in (
        ("64m", "reference format", "no target at this size"),
        ("256m", "reference format", "target <= 2"),
        ("1g", "reference format, no artifacts", "target <= 2"),
        ("claude", "Claude Code session", "target <= 2"),
        ("claude-256m", "Claude Code session", "target <= 2"),
        ("codex", "Codex rollout", "target <= 2"),
        ("codex-256m", "Codex rollout", "target <= 2"),
    ):
        path = paths[key]
        size = path.stat().st_size / MiB
        timed(check_command(path), 1)  # warm the page cache
        base = floor(path, runs)
        ours = timed(check_command(path), runs)
        rows.append(
            (
                f"--check, {label}, {size:,.0f} MiB",
                ours,
                base,
                f"parse floor ({parser} of every line), same file ({target})",
            )
        )
    path = paths["artifacts"]
    base, names = floor_and_hashes(path, runs)
    ours = timed(check_command(path), runs)
    total = sum(os.path.getsize(n) for n in names) / MiB
    rows.append(
        (
            f"--check, {len(names)} artifacts, {total:,.0f} MiB",
            ours,
            base,
            "parse floor of the transcript + sha256sum of the artifacts (target <= 1.25)",
        )
    )
    path = paths["1g-artifacts"]
    rows += many_files_rows(path, f"1,024 MiB with {MANY_ARTIFACTS:,} artifacts of 64 KiB", runs)
    path = paths["claude-sidecars"]
    label = f"Claude Code session with {MANY_SIDECARS:,} sidecars of {SIDECAR_SIZE // 1000} KB"
    rows += many_files_rows(path, label, runs, sidecar_dir_of(path))
    return rows


def many_files_rows(
    path: Path, label: str, runs: int, directory: Path | None = None
) -> list[tuple[str, float, float, str] | tuple[str, float, float, str, str]]:
    """`--check` of a transcript with thousands of files, and that check's peak RSS.

    Its time is printed against the floor plus `sha256sum` of the files, with no
    target (thousands of small files); its peak against the 300 MiB budget.
    """
    base, _ = floor_and_hashes(path, runs, directory)
    ours = timed(check_command(path), runs)
    return [
        (
            f"--check, {label}",
            ours,
            base,
            "parse floor of the transcript + sha256sum of its files, for comparison; "
            "no target (thousands of small files)",
        ),
        (
            "peak RSS of that --check (its largest process)",
            peak_rss_mib(check_command(path)),
            300.0,
            "300 MiB budget (target <= 1)",
            "MiB",
        ),
    ]


def sidecar_dir_of(path: Path) -> Path:
    """Where a Claude Code session's sidecars are: `<session>/tool-results/` beside it."""
    return path.with_suffix("") / "tool-results"


if __name__ == "__main__":
    for name, ours, ref, what, *_ in run():
        print(f"{name}: {ours:.3f} vs {what} {ref:.3f} = {ours / ref:.2f}x")

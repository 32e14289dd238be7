"""Instructions: the work of a pass, counted by callgrind instead of timed.

Run: ``python3 dev.py bench --before REV instructions`` (needs `valgrind`)

This machine is a shared VM: the same `--check` takes ±15 % longer from one run
to the next, more than the 10 % a feature may cost (issue 27's target for the
model calls). The instructions a run retires do not wander: callgrind counts
the same run the same to a tenth of a percent. So this group counts them, on
the first `SLICE` bytes (whole lines) of each throughput input:

* **--check's pass**: `core.check.check_one`, in one process (`core.parallel`
  told to use no workers, whose instructions callgrind would not count);
* **the viewer's pass**: `viewer.background.analysis_job` at 118 columns, the
  pass the pass server runs, with each line's rows counted where it is read;
* **the parse floor**: `orjson.loads` of every line (msgspec's decoder where
  orjson is not installed), the reference of every row, as in the throughput
  group.

Each count is a run that does the work once minus a run that does everything
else (starts, imports, opens): what is left is the work's own, with what the work
pays once whatever the slice's size (a decoder made, a regex compiled on first
use), which pulls every ratio a little towards 1. With
`--before REV` (`before.py`) the before tree's passes are counted on the same
slices, and the table shows both; the ratio of the two is the cost of the
change, free of the machine's noise. It is no timing: a change that trades
instructions for memory traffic can count fewer and run slower (the throughput
and idle groups time it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import before  # noqa: E402
from bench_throughput import inputs  # noqa: E402
from gen import DATA, MiB  # noqa: E402

ROOT = HERE.parent
#: How much of each input is counted (whole lines): instructions grow with it linearly.
SLICE = 4 * MiB
#: The inputs counted, by their key in `bench_throughput.inputs()`: (label, format).
INPUTS = {
    "256m": ("reference format", "reference"),
    "claude-256m": ("Claude Code session", "claude-code"),
    "codex-256m": ("Codex rollout", "codex"),
    "small-reference-256m": ("reference format, small lines", "reference"),
    "small-claude-256m": ("Claude Code session, small lines", "claude-code"),
    "small-codex-256m": ("Codex rollout, small lines", "codex"),
}
#: What each counted run does `reps` times: `WHAT FILE FORMAT REPS`.
_WORK = r"""
import sys
from pathlib import Path
what, path, fmt, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if what == "floor":
    try:
        from orjson import loads
    except ImportError:
        import msgspec
        loads = msgspec.json.Decoder().decode
    for _ in range(reps):
        with open(path, "rb") as fh:
            for line in fh:
                loads(line)
    sys.exit()
import transcript_view.core.parallel as parallel
parallel.worker_count = lambda: 1
parallel.workers_for = lambda nbytes: 1
if what == "check":
    from transcript_view.core.check import check_one
    for _ in range(reps):
        check_one(Path(path), True, None, 1)
else:
    from transcript_view.core.formats.detect import Format
    from transcript_view.core.transcript import Transcript
    from transcript_view.viewer.background import analysis_job
    for _ in range(reps):
        with Transcript(Path(path)) as t:
            t.build_index()
            analysis_job(t, Format(fmt), 118, emit=lambda kind, value: None)
"""
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")

Row = tuple[Any, ...]


def sliced(path: Path) -> Path:
    """The first `SLICE` bytes of `path`, whole lines, under `data/instructions/` (made once;
    named by the input's size too, so a smoke run's input of the same name is not taken).

    A slice is apart from its input's artifacts: a reference marker in it is counted
    as a missing file, in both trees alike."""
    size = path.stat().st_size
    out = DATA / "instructions" / f"{path.stem}-{size}-{SLICE // MiB}m.jsonl"
    if not out.exists() or out.stat().st_mtime < path.stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        with path.open("rb") as fh:
            head = fh.read(SLICE)
        out.write_bytes(head[: head.rindex(b"\n") + 1])
    return out


def counted(python: Path, cwd: Path, what: str, path: Path, fmt: str) -> int:
    """Instructions of `what` done once on `path`, less those of the same run without it."""

    def run(reps: int) -> int:
        command = [
            "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
            str(python), "-P", "-c", _WORK, what, str(path), fmt, str(reps),
        ]  # fmt: skip
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=True)
        found = _COLLECTED.search(done.stderr)
        if found is None:
            raise RuntimeError(f"callgrind printed no count: {done.stderr[-500:]}")
        return int(found.group(1))

    return run(1) - run(0)


def counted_before(tree: before.Tree, what: str, path: Path, fmt: str) -> float | None:
    """`counted` with the before tree's code, in millions; None (its row then has no before
    column) where that tree cannot do it (one older than `check_one` or `analysis_job`)."""
    try:
        return counted(tree.python, tree.root, what, path, fmt) / 1e6
    except (subprocess.CalledProcessError, RuntimeError) as exc:
        print(f"  before: {what} on {path.name} failed ({exc})", file=sys.stderr)
        return None


def run() -> list[Row]:
    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not installed; no rows", file=sys.stderr)
        return []
    rev = before.revision()
    tree = before.tree(rev) if rev else None
    here = ROOT / ".venv" / "bin" / "python"
    paths = inputs(INPUTS)
    rows: list[Row] = []
    for key, (label, fmt) in INPUTS.items():
        path = sliced(paths[key])
        size = path.stat().st_size / MiB
        floor = counted(here, ROOT, "floor", path, fmt) / 1e6
        print(f"  {label}: floor {floor:,.0f} M", file=sys.stderr, flush=True)
        for what, name in (("check", "--check's pass"), ("view", "the viewer's pass")):
            ours = counted(here, ROOT, what, path, fmt) / 1e6
            was = counted_before(tree, what, path, fmt) if tree else None
            rows.append(
                (
                    f"instructions, {name}, {label}, {size:.0f} MiB",
                    ours,
                    floor,
                    "parse floor's instructions, same slice",
                    "M instr",
                    *((was,) if was is not None else ()),
                )
            )
    return rows


if __name__ == "__main__":
    for label, ours, floor, what, _unit, *was in run():
        then = f" (before: {was[0]:,.0f} M, {ours / was[0]:.3f}x)" if was else ""
        print(f"{label}: {ours:,.0f} M vs {what} {floor:,.0f} M = {ours / floor:.2f}x{then}")

#!/usr/bin/env python3
"""Run the whole benchmark suite and print one table of ratios.

Every row compares our time with a reference measured in the same run on the
same input (the machines are noisy; only ratios mean anything), and says the
target. Big inputs are generated on first use under `benchmarks/data/`.

    python3 dev.py bench            # everything
    python3 dev.py bench check open # only some groups
    python3 dev.py bench --before 410c68c throughput   # and the --check rows at 410c68c

`--before REV` (or `BENCH_BEFORE=REV`) times the throughput group's `--check` rows,
the idle group's until-idle rows and counts the instructions group's passes with the
code of REV too, in the same run, on the same inputs (`before.py`): the
table then has both times and both ratios.
"""

from __future__ import annotations

import importlib
import os
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import before  # noqa: E402

#: Benchmark groups, in the order the scale issue lists its targets.
GROUPS = {
    "check": "bench_check",
    "open": "bench_open",
    "artifact": "bench_artifact",
    "settle": "bench_settle",
    "toolong": "bench_toolong",
    "throughput": "bench_throughput",
    "search": "bench_search",
    "idle": "bench_idle",
    "tree": "bench_tree",
    "context": "bench_call_context",
    "instructions": "bench_instructions",
    "fleet": "bench_fleet",
}

_TARGET = re.compile(r"target\s*<=\s*([0-9.]+)")


def compile_bytecode() -> None:
    """Compile the package's bytecode, as any install does, before anything is timed.

    Where `PYTHONDONTWRITEBYTECODE` is set (this project's machines set it) an
    editable install never writes its `__pycache__`, and every `--check` a row
    times would compile the whole package first: ~0.1 s, a tenth of a small
    file's check, that no installed copy pays.
    """
    import compileall

    for folder in ("core", "viewer", "transcript_view"):
        compileall.compile_dir(HERE.parent / folder, quiet=2)


def _before_arg(argv: list[str]) -> list[str]:
    """Take `--before REV` / `--before=REV` out of `argv`, into `BENCH_BEFORE`."""
    rest = []
    args = iter(argv)
    for arg in args:
        if arg == "--before" or arg.startswith("--before="):
            rev = arg.split("=", 1)[1] if "=" in arg else next(args, "")
            if not rev or rev.startswith("-"):
                raise SystemExit("run.py: --before needs a revision, e.g. --before 410c68c")
            os.environ[before.ENV] = rev
        else:
            rest.append(arg)
    return rest


def main(argv: list[str]) -> int:
    argv = _before_arg(argv)
    wanted = argv or list(GROUPS)
    unknown = [w for w in wanted if w not in GROUPS]
    if unknown:
        print(f"unknown group(s) {unknown}; choose from {list(GROUPS)}", file=sys.stderr)
        return 2
    # A row is (label, ours, reference, "what (target <= X)"), optionally with a unit
    # ("s" when absent, or "MiB" for memory rows); the ratio is ours / reference.
    rows: list[tuple[Any, ...]] = []
    started = time.time()
    rev = before.revision()
    if rev:
        before.tree(rev)  # made and built now, before anything is timed
    compile_bytecode()
    for group in wanted:
        module = importlib.import_module(GROUPS[group])
        print(f"running {group} ...", file=sys.stderr, flush=True)
        rows.extend(module.run())
    from transcript_view.core.graphemes import NATIVE

    counter = "native grapheme counter" if NATIVE else "pure-Python grapheme counter (not built)"
    machine = f"{platform.machine()}, Python {platform.python_version()}, {counter}"
    print(f"\n{machine}, suite took {time.time() - started:.0f}s\n")
    if rev:
        was = before.tree(rev)
        print(f"before: {was.short} ({rev}); after: {before.head()} (this tree)\n")
        print(
            f"| benchmark | before ({was.short}) | after | reference | ratio before | "
            "ratio after | target | met (after) |"
        )
        print("|---|---:|---:|---|---:|---:|---:|:-:|")
    else:
        print("| benchmark | ours | reference | ratio | target | met |")
        print("|---|---:|---|---:|---:|:-:|")
    failed = 0
    for label, ours, ref, what, *rest in rows:
        unit = rest[0] if rest else "s"
        ratio = ours / ref if ref else float("inf")
        m = _TARGET.search(what)
        target = float(m.group(1)) if m else None
        met = "—" if target is None else ("yes" if ratio <= target else "no")
        failed += met == "no"
        ref_text = _TARGET.sub("", what).replace("()", "").strip(" ,;")
        target_text = f"{'≤ ' + format(target, 'g') + '×' if target is not None else ''}"
        if rev:
            was_time = rest[1] if len(rest) > 1 else None
            was_text, was_ratio = "—", "—"
            if was_time is not None:
                was_text = _fmt(was_time, unit)
                was_ratio = f"{was_time / ref if ref else float('inf'):.2f}×"
            print(
                f"| {label} | {was_text} | {_fmt(ours, unit)} | {ref_text}: {_fmt(ref, unit)} | "
                f"{was_ratio} | {ratio:.2f}× | {target_text} | {met} |"
            )
            continue
        print(
            f"| {label} | {_fmt(ours, unit)} | {ref_text}: {_fmt(ref, unit)} | {ratio:.2f}× | "
            f"{target_text} | {met} |"
        )
    return 0


def _fmt(seconds: float, unit: str = "s") -> str:
    if unit != "s":
        return f"{seconds:,.0f} {unit}"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1000:.1f} ms"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

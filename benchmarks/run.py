#!/usr/bin/env python3
"""Run the whole benchmark suite and print one table of ratios.

Every row compares our time with a reference measured in the same run on the
same input (the machines are noisy; only ratios mean anything), and says the
target. Big inputs are generated on first use under `benchmarks/data/`.

    python3 dev.py bench            # everything
    python3 dev.py bench check open # only some groups
"""

from __future__ import annotations

import importlib
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

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


def main(argv: list[str]) -> int:
    wanted = argv or list(GROUPS)
    unknown = [w for w in wanted if w not in GROUPS]
    if unknown:
        print(f"unknown group(s) {unknown}; choose from {list(GROUPS)}", file=sys.stderr)
        return 2
    # A row is (label, ours, reference, "what (target <= X)"), optionally with a unit
    # ("s" when absent, or "MiB" for memory rows); the ratio is ours / reference.
    rows: list[tuple[Any, ...]] = []
    started = time.time()
    compile_bytecode()
    for group in wanted:
        module = importlib.import_module(GROUPS[group])
        print(f"running {group} ...", file=sys.stderr, flush=True)
        rows.extend(module.run())
    from transcript_view.core.graphemes import NATIVE

    counter = "native grapheme counter" if NATIVE else "pure-Python grapheme counter (not built)"
    machine = f"{platform.machine()}, Python {platform.python_version()}, {counter}"
    print(f"\n{machine}, suite took {time.time() - started:.0f}s\n")
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
        print(
            f"| {label} | {_fmt(ours, unit)} | {ref_text}: {_fmt(ref, unit)} | {ratio:.2f}× | "
            f"{'≤ ' + format(target, 'g') + '×' if target is not None else ''} | {met} |"
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

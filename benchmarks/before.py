"""The code of another revision, timed beside this tree's in the same run ("before / after").

    python3 dev.py bench --before 410c68c throughput
    BENCH_BEFORE=410c68c python3 dev.py bench throughput     # the same

makes (once) a git worktree of that revision under `build/bench-before/<commit>/`
(git-ignored) and its own `.venv/`, built by that revision's `dev.py` as it builds
its environment (its pins, its C extensions), with the Python this tree's `.venv/`
was made from, so both run on the same interpreter. The throughput group then
times every `--check` row with both trees on the same input, against the same
floor, in turns (before, after, before, ...), and the table shows both.

The before tree's check is its own `.venv/bin/python -P -m transcript_view --check
FILE`, run in its own directory: `-P` keeps the current directory off `sys.path`,
so a `transcript_view/` folder there (this tree's, say) cannot stand in for the
installed one. `tree()` makes sure the package it imports is the worktree's.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The environment variable that asks for before/after rows, set to a revision.
ENV = "BENCH_BEFORE"
#: Where the before trees are, one folder per commit.
TREES = ROOT / "build" / "bench-before"

# Runs the before tree's `dev.py` far enough to build its environment, no further.
_ENSURE_ENV = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("dev", sys.argv[1])
dev = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dev)
dev.ensure_env()
"""

# Compiles a tree's bytecode, as any install does (see run.compile_bytecode).
_COMPILE = """
import compileall, sys
for folder in sys.argv[1:]:
    compileall.compile_dir(folder, quiet=2)
"""

# Where the package a check imports comes from.
_WHERE = "import transcript_view.core.check as m; print(m.__file__)"


def revision() -> str | None:
    """The revision asked for (`BENCH_BEFORE`), or None: no before/after rows."""
    return os.environ.get(ENV) or None


@dataclass(frozen=True)
class Tree:
    """A before tree, ready to run."""

    commit: str
    root: Path
    python: Path

    @property
    def short(self) -> str:
        return self.commit[:7]

    def check_command(self, path: Path) -> list[str]:
        """Its `transcript-view --check PATH` (run it with `cwd=self.root`)."""
        return [str(self.python), "-P", "-m", "transcript_view", "--check", str(path)]


def git(*args: str, cwd: Path = ROOT) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def head() -> str:
    """This tree's commit, short, with `+changes` when its files differ from it."""
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return git("rev-parse", "--short", "HEAD") + (" +changes" if dirty else "")


def base_python() -> str:
    """The interpreter this tree's `.venv/` was made from (the same for both trees)."""
    return getattr(sys, "_base_executable", None) or sys.executable


@functools.cache
def tree(rev: str) -> Tree:
    """The worktree of `rev` with its environment built (minutes the first time)."""
    try:
        commit = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError:
        raise SystemExit(f"before: {rev!r} is not a commit of this repository") from None
    root = TREES / commit[:12]
    if not (root / ".git").exists():
        print(f"before: making a worktree of {commit[:7]} in {root}", file=sys.stderr)
        TREES.mkdir(parents=True, exist_ok=True)
        git("worktree", "add", "--detach", str(root), commit)
    elif git("rev-parse", "HEAD", cwd=root) != commit:
        raise SystemExit(f"before: {root} is not at {commit}; remove it and run again")
    print(f"before: {root / '.venv'}, as its dev.py builds it", file=sys.stderr)
    subprocess.run([base_python(), "-c", _ENSURE_ENV, str(root / "dev.py")], cwd=root, check=True)
    python = root / ".venv" / "bin" / "python"
    folders = [str(root / f) for f in ("core", "viewer", "transcript_view")]
    subprocess.run([str(python), "-c", _COMPILE, *folders], cwd=root, check=True)
    where = subprocess.run(
        [str(python), "-P", "-c", _WHERE], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(root):
        raise SystemExit(f"before: {python} imports transcript_view from {where}, not {root}")
    return Tree(commit, root, python)

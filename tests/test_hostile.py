"""`--check` on every hostile case: the right findings, nothing written, nothing hangs."""

from __future__ import annotations

import io
import json
import os
import threading
from pathlib import Path

import pytest
from hostile import CASES, Case

from viewer.cli import main


def tree_state(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every entry under `root` with size, mtime and (for regular files) bytes; lstat only."""
    state: dict[str, tuple[int, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            is_file = p.is_file() and not p.is_symlink()
            state[str(p)] = (st.st_size, st.st_mtime_ns, p.read_bytes() if is_file else b"")
    return state


def run_check_json(path: Path) -> tuple[int, list[dict[str, object]], str]:
    """`transcript-view --check --json PATH` in-process, with a watchdog against hangs."""
    out, err = io.StringIO(), io.StringIO()
    result: list[int] = []

    def target() -> None:
        import contextlib

        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result.append(main(["--check", "--json", str(path)]))

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), f"--check hung on {path}"
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    return result[0], rows, err.getvalue()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check_on_hostile_input(case: Case, tmp_path: Path) -> None:
    path = case.build(tmp_path)
    before = tree_state(tmp_path)
    code, rows, err = run_check_json(path)
    assert tree_state(tmp_path) == before, "--check wrote something"
    assert code == case.exit, (rows, err)
    if case.exit == 2:
        assert rows == [] and err.startswith("transcript-view: ") and err[-1] == "\n"
        assert "Traceback" not in err
        return
    (row,) = rows
    if case.name == "two-markers-one-file":
        assert (row["markers"], row["verified"]) == (2, 2)
    kinds = sorted({f["kind"] for f in row["findings"]})  # type: ignore[index, union-attr]
    if case.exact:
        errors_and_warnings = sorted(
            {f["kind"] for f in row["findings"] if f["severity"] != "note"}  # type: ignore[index, union-attr]
        )
        assert errors_and_warnings == sorted(set(case.kinds)), row["findings"]
    else:
        assert set(case.kinds) <= set(kinds), row["findings"]

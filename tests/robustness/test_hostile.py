"""`--check` on every hostile case: the right findings, nothing written, nothing hangs."""

from __future__ import annotations

import importlib
import io
import json
import os
import threading
from pathlib import Path

import pytest
from _hostile import CASES, QUOTED_MARKERS, Case

from transcript_view.cli import main


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
        assert err.startswith("transcript-view: ") and err[-1] == "\n"
        assert "Traceback" not in err
        # One object for the PATH, in its place: the words of the line on stderr.
        assert rows == [{"transcript": str(path), "error": err[len("transcript-view: ") : -1]}]
        if case.name == "json-document":
            assert "one JSON document, not JSON lines;" in err and "Gemini CLI chat" not in err
        return
    (row,) = rows
    if case.name == "two-markers-one-file":
        assert (row["markers"], row["verified"]) == (2, 2)
    if case.name in QUOTED_MARKERS:
        assert (row["markers"], row["findings"]) == (0, [])
    kinds = sorted({f["kind"] for f in row["findings"]})  # type: ignore[index, union-attr]
    if case.exact:
        errors_and_warnings = sorted(
            {f["kind"] for f in row["findings"] if f["severity"] != "note"}  # type: ignore[index, union-attr]
        )
        assert errors_and_warnings == sorted(set(case.kinds)), row["findings"]
    else:
        assert set(case.kinds) <= set(kinds), row["findings"]


def _deny(monkeypatch: pytest.MonkeyPatch, module: object, victim: Path) -> None:
    """Make `os.open` of one path fail with EACCES, as it does for a non-root reader.

    The suite runs as root in CI, where permission bits do not stop a read; this
    is the same failure, injected where the code meets it.
    """
    real_open = os.open

    def fake_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if Path(str(path)) == victim:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(module.os, "open", fake_open)  # type: ignore[attr-defined]


def test_an_artifact_that_cannot_be_read_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from _hostile import stored_run

    import transcript_view.core.verification as core_verification

    path, artifact = stored_run(tmp_path)
    _deny(monkeypatch, core_verification, artifact)
    code, rows, _ = run_check_json(path)
    assert code == 1
    (finding,) = rows[0]["findings"]  # type: ignore[misc]
    assert finding["kind"] == "unreadable-artifact"
    assert "Permission denied" in finding["message"]


def test_a_transcript_that_cannot_be_read_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from _hostile import stored_run

    path, _ = stored_run(tmp_path)
    _deny(monkeypatch, importlib.import_module("transcript_view.core.transcript"), path)
    code, rows, err = run_check_json(path)
    assert (code, rows) == (2, [{"transcript": str(path), "error": f"{path}: permission denied"}])
    assert err == f"transcript-view: {path}: permission denied\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_real_permission_bits(tmp_path: Path) -> None:
    from _hostile import stored_run

    path, artifact = stored_run(tmp_path)
    artifact.chmod(0)
    assert run_check_json(path)[0] == 1
    path.chmod(0)
    assert run_check_json(path)[0] == 2

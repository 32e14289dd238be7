"""`python3 benchmarks/gen.py OUT.jsonl --size 300M --markers 3000`, at a tiny size.

A newcomer who wants a big transcript to try the viewer on should not have to
read the benchmarks' code. These run the generator as a person would (a
subprocess, in a directory of their own) and hold what it writes to `--check`:
every marker verifies, no finding at all.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from _support import ROOT

GEN = ROOT / "benchmarks" / "gen.py"


def _gen(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GEN), *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _check_json(path: Path) -> tuple[int, dict[str, object]]:
    out = subprocess.run(
        [sys.executable, "-m", "transcript_view", "--check", "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out.returncode, json.loads(out.stdout)


def test_gen_writes_a_transcript_that_check_passes(tmp_path: Path) -> None:
    out = _gen(
        tmp_path, "small.jsonl", "--size", "200K", "--markers", "4", "--artifact-size", "24K"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("small.jsonl: "), out.stdout
    transcript = tmp_path / "small.jsonl"
    assert transcript.stat().st_size >= 200 * 1024
    files = sorted((tmp_path / "small.artifacts").iterdir())
    assert len(files) == 4
    assert all(abs(f.stat().st_size - 24 * 1024) < 64 for f in files), "about --artifact-size"
    code, report = _check_json(transcript)
    assert code == 0, report
    assert report["findings"] == []
    assert report["markers"] == report["verified"] == 4
    # Spread through the file, as a long session has them, not all at its start.
    lines = [b["line"] for b in report["badges"]]  # type: ignore[attr-defined]
    assert lines == sorted(lines)
    assert lines[-1] > 0.6 * int(report["lines"])  # type: ignore[call-overload]


def test_gen_without_markers_writes_a_plain_transcript(tmp_path: Path) -> None:
    out = _gen(tmp_path, "plain.jsonl", "--size", "16K")
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "plain.artifacts").exists()
    code, report = _check_json(tmp_path / "plain.jsonl")
    assert code == 0
    assert report["markers"] == 0 and report["findings"] == []


def test_gen_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "taken.jsonl").write_bytes(b"mine\n")
    out = _gen(tmp_path, "taken.jsonl", "--size", "16K")
    assert out.returncode == 2
    assert "exists" in out.stderr
    assert (tmp_path / "taken.jsonl").read_bytes() == b"mine\n"
    (tmp_path / "other.artifacts").mkdir()
    assert _gen(tmp_path, "other.jsonl", "--size", "16K", "--markers", "1").returncode == 2
    assert not (tmp_path / "other.jsonl").exists()


@pytest.mark.parametrize("argv", [("--size", "3Q"), ("--markers", "1", "--artifact-size", "1K")])
def test_gen_refuses_what_it_cannot_write(tmp_path: Path, argv: tuple[str, ...]) -> None:
    out = _gen(tmp_path, "x.jsonl", *argv)
    assert out.returncode == 2
    assert "usage: gen.py" in out.stderr
    assert not (tmp_path / "x.jsonl").exists()


def _load(path: Path, name: str) -> ModuleType:
    """Import a script by path, leaving `sys.path` as it was (gen.py puts the root on it)."""
    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


def test_size_suffixes_are_powers_of_1024() -> None:
    parse_size = _load(GEN, "gen_under_test").parse_size
    assert parse_size("300M") == 300 << 20
    assert parse_size("64k") == 64 << 10
    assert parse_size("2G") == 2 << 30
    assert parse_size("1.5MiB") == 3 << 19
    assert parse_size("512") == 512


def test_gen_from_a_python_without_the_project_runs_in_the_project_env(tmp_path: Path) -> None:
    """`python3 benchmarks/gen.py` from a fresh clone: no site-packages, so it re-runs in .venv/."""
    dev = _load(ROOT / "dev.py", "dev_under_test")
    if not dev.STAMP.exists() or dev.STAMP.read_text().strip() != dev._wanted_stamp():
        # dev.py would (re)build .venv/ first, which no test may set off.
        pytest.skip("run through `python3 dev.py test`: .venv/ is not what dev.py would build")
    env = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_VIEW_GEN_REEXEC"}
    out = subprocess.run(
        # -S: no site-packages, so the project (and wcwidth) cannot be imported.
        [sys.executable, "-S", str(GEN), "bare.jsonl", "--size", "16K"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "bare.jsonl").stat().st_size >= 16 * 1024


def test_the_sidecar_session_is_a_claude_code_session_whose_previews_all_match(
    tmp_path: Path,
) -> None:
    """The benchmark input with thousands of sidecars is what its rows say it is."""
    gen = _load(GEN, "gen_sidecars")
    path = gen.claude_sidecars(tmp_path / "proj", 6, 20_000)
    sidecars = sorted((path.with_suffix("") / "tool-results").iterdir())
    assert len(sidecars) == 6
    assert all(abs(f.stat().st_size - 20_000) < 64 for f in sidecars)
    code, report = _check_json(path)
    assert code == 0, report
    assert report["format"] == "claude-code"
    assert report["findings"] == []
    assert [b["state"] for b in report["badges"]] == ["preview matches"] * 6  # type: ignore[attr-defined]
    assert gen.claude_sidecars(tmp_path / "proj", 6, 20_000) == path  # reused, not rewritten

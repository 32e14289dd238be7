"""`python3 dev.py view PATH` / `check PATH` read PATH where the caller typed it.

`dev.py` used to run every task in the repository, so `cd run && python3
../tv/dev.py check live.jsonl` said "no such file". These run `dev.py` in a
subprocess from a directory far from the checkout, as a person would.

`dev.py` (re)builds `.venv/` when its stamp is stale, which no test should set
off: if the environment is not the one `dev.py` would build, the tests skip and
say so (`python3 dev.py test` always builds it first, so CI never skips).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from _support import REFERENCE, ROOT

DEV = ROOT / "dev.py"


def _dev_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev_under_test", DEV)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def dev_env() -> None:
    """Skip unless `dev.py` would run its task at once (no install in the middle of a test)."""
    dev = _dev_module()
    stamp = dev.STAMP
    if (
        not dev.PY.exists()
        or not stamp.exists()
        or stamp.read_text().strip() != dev._wanted_stamp()
    ):
        pytest.skip("run through `python3 dev.py test`: .venv/ is not what dev.py would build")


def _dev(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(DEV), *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """`run/live.jsonl` (a reference transcript with its artifacts), far from the repository."""
    run = tmp_path / "run"
    run.mkdir()
    shutil.copyfile(REFERENCE / "basic.jsonl", run / "live.jsonl")
    artifacts = run / "live.artifacts"
    artifacts.mkdir()
    for f in sorted((REFERENCE / "basic.artifacts").iterdir()):
        shutil.copyfile(f, artifacts / f.name)
    return run


def test_check_reads_a_relative_path_from_the_callers_directory(
    dev_env: None, run_dir: Path
) -> None:
    out = _dev(run_dir, "check", "live.jsonl")
    assert "no such file" not in out.stderr, out.stderr
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("live.jsonl: 11 envelopes"), out.stdout


def test_check_takes_several_relative_paths_and_options(dev_env: None, run_dir: Path) -> None:
    (run_dir / "sub").mkdir()
    shutil.copyfile(run_dir / "live.jsonl", run_dir / "sub" / "copy.jsonl")
    out = _dev(run_dir / "sub", "check", "--json", "copy.jsonl", "../live.jsonl")
    assert out.returncode == 1, out.stderr  # copy.jsonl's artifacts were not copied
    lines = out.stdout.splitlines()
    assert len(lines) == 2
    assert '"transcript": "copy.jsonl"' in lines[0]
    assert '"transcript": "../live.jsonl"' in lines[1]


def test_view_reads_a_relative_path_from_the_callers_directory(
    dev_env: None, run_dir: Path
) -> None:
    # A fifo is refused before any terminal is needed: the message shows which file
    # the viewer found (before the fix: "no such file or directory").
    os.mkfifo(run_dir / "pipe.jsonl")
    out = _dev(run_dir, "view", "pipe.jsonl")
    assert out.returncode == 2
    assert out.stderr.strip() == "transcript-view: pipe.jsonl: a fifo, not a regular file"


def test_a_package_in_the_callers_directory_does_not_shadow_the_installed_one(
    dev_env: None, run_dir: Path
) -> None:
    fake = run_dir / "transcript_view"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text("raise SystemExit('shadowed by the caller\\'s folder')\n")
    out = _dev(run_dir, "check", "live.jsonl")
    assert "shadowed" not in out.stderr
    assert out.returncode == 0, out.stderr


def test_the_readme_quick_start_is_two_dev_py_tasks() -> None:
    """The README promises a fresh clone needs two commands; both must be dev.py tasks."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Quick start", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["python3 dev.py demo", "python3 dev.py test"]
    usage = _dev_module().__doc__ or ""
    for task in ("demo", "test", "view", "check"):
        assert re.search(rf"^\s+python3 dev\.py {task}\b", usage, re.M), task


# -- the pins ---------------------------------------------------------------------------


def _pins() -> dict[str, str]:
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    pairs = (line.split("#", 1)[0].strip().split("==") for line in text.splitlines())
    return {p[0].strip(): p[1].strip() for p in pairs if len(p) == 2}


def test_the_stamp_covers_every_c_file() -> None:
    """An edit to any C source or header rebuilds the extensions: none is left out."""
    dev = _dev_module()
    found = {
        p.relative_to(ROOT).as_posix()
        for d in ("core", "viewer")
        for p in (ROOT / d).glob("*.[ch]")
    }
    assert found == set(dev.NATIVE_SOURCES)


def test_the_stamp_covers_the_constraints_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new pin must reinstall `.venv/`, or the snapshots run on the old version."""
    dev = _dev_module()
    for name in ("pyproject.toml", "constraints.txt", "setup.py", *dev.NATIVE_SOURCES):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    monkeypatch.setattr(dev, "ROOT", tmp_path)
    before = dev._wanted_stamp()
    with open(tmp_path / "constraints.txt", "a", encoding="utf-8") as fh:
        fh.write("textual==8.2.7\n")
    assert dev._wanted_stamp() != before


def test_the_environment_is_the_one_the_constraints_pin(dev_env: None) -> None:
    """The snapshots were recorded with these versions; anything else must be a decision."""
    from importlib.metadata import PackageNotFoundError, version

    pins = _pins()
    assert {"textual", "rich", "wcwidth"} <= set(pins)
    wrong = {}
    for name, pinned in pins.items():
        try:
            got = version(name)
        except PackageNotFoundError:
            got = "not installed"
        if got != pinned:
            wrong[name] = (pinned, got)
    assert not wrong, f"constraints.txt pins (pinned, installed): {wrong}"


def test_the_package_asks_for_ranges_the_pins_satisfy() -> None:
    """pyproject.toml must not pin a runtime dependency to one release; the pins sit inside."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _pins()
    for spec in project["dependencies"]:
        req = Requirement(spec)
        assert not any(s.operator in ("==", "===") for s in req.specifier), spec
        assert req.specifier.contains(pins[req.name]), (spec, pins[req.name])

"""The wheel, installed for real: one import name, every module, typed, and it runs.

The tests import the working tree (an editable install), so a subpackage left
out of the wheel, a stray top-level `core`, or a missing `py.typed` would never
show in them. This builds the wheel, installs it (not editable) into a fresh
virtual environment, and uses it from a directory far from the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from _support import REFERENCE, ROOT

#: Repository folder -> the package it installs as.
FOLDERS = {"transcript_view": "transcript_view", "core": "transcript_view.core",
           "viewer": "transcript_view.viewer", "fleet": "transcript_view.fleet"}  # fmt: skip


def _repo_modules() -> set[str]:
    """Every module the working tree has, by the name it must have once installed."""
    out: set[str] = set()
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out.add(".".join([package, *parts]))
    return out


#: What a build never needs, and what would make it stale: an in-tree build
#: reuses `build/lib`, where a module deleted from the tree lives on.
NOT_BUILT = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.so", ".*_cache",
    "tests", "benchmarks", "screenshots", "examples",
)  # fmt: skip


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a clean copy of the working tree (as from a fresh clone)."""
    source = tmp_path_factory.mktemp("source") / "transcript-view"
    shutil.copytree(ROOT, source, ignore=NOT_BUILT)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-q", "-w", str(out), str(source)],
        check=True, capture_output=True, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )  # fmt: skip
    (built,) = out.glob("transcript_view-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel (and its pinned dependencies) installed; its bin/."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q",
         str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    return bin_dir


def test_the_wheel_claims_one_import_name_and_ships_every_module(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert tops - dist_info == {"transcript_view"}, tops
    shipped = {
        n.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for n in names
        if n.endswith(".py")
    }
    assert shipped == _repo_modules(), (
        f"missing from the wheel: {sorted(_repo_modules() - shipped)}; "
        f"not in the tree: {sorted(shipped - _repo_modules())}"
    )
    assert "transcript_view/py.typed" in names
    assert "transcript_view/core/_gcount.pyi" in names
    assert "transcript_view/core/_lines.pyi" in names
    assert not [n for n in names if n.endswith(".c")], "the C source is not shipped"
    # (tests/_pilot.py's name; `copilot.py`, a reader, holds the same letters)
    assert not [n for n in names if "_pilot" in n or "/tests/" in n or "conftest" in n]


def test_the_installed_command_checks_a_reference_transcript(
    installed: Path, tmp_path: Path
) -> None:
    result = subprocess.run(
        [str(installed / "transcript-view"), "--check", str(REFERENCE / "basic.jsonl")],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "basic.jsonl: 11 envelopes on 11 lines, 1 marker, 1 verified; 0 errors" in result.stdout
    module = subprocess.run(
        [str(installed / "python"), "-m", "transcript_view", "--check", "--json",
         str(REFERENCE / "aging.jsonl")],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert module.returncode == 0, module.stderr
    assert '"verified": 1' in module.stdout


def _python_lines(installed: Path, where: Path, code: str) -> list[str]:
    """What the installed environment's Python prints running `code` in `where` (outside
    the repository, so nothing is imported from it), a line each; it must exit 0."""
    result = subprocess.run(
        [str(installed / "python"), "-c", code], cwd=where, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_every_module_imports_from_the_install_and_core_does_not(
    installed: Path, tmp_path: Path
) -> None:
    # The fleet package needs its extra, which the plain install does not bring.
    modules = sorted(
        m for m in _repo_modules() - {"transcript_view.__main__"}
        if not m.startswith("transcript_view.fleet")
    )  # fmt: skip
    code = (
        "import importlib, importlib.util, sys\n"
        f"for name in {modules!r}:\n"
        "    mod = importlib.import_module(name)\n"
        "    assert 'site-packages' in (mod.__file__ or ''), (name, mod.__file__)\n"
        "print([n for n in ('core', 'viewer') if importlib.util.find_spec(n) is not None])\n"
        "import transcript_view.core.graphemes as g\n"
        "from transcript_view import Session, Store, excerpt, parse_markers, verify\n"
        "print(g.NATIVE)\n"
    )
    found, native = _python_lines(installed, tmp_path, code)[-2:]
    assert found == "[]", "`import core` (or viewer) must not work from an install"
    assert native in ("True", "False")


def test_the_plain_install_brings_no_fleet_library_and_says_which_extra(
    installed: Path, tmp_path: Path
) -> None:
    """Dask, fsspec and pyarrow come with `transcript-view[fleet]` only; without them the
    fleet check is one clear line, and the rest works."""
    code = (
        "import importlib.util\n"
        "print([m for m in ('dask', 'distributed', 'fsspec', 'pyarrow', 'pandas')"
        " if importlib.util.find_spec(m) is not None])\n"
        "try:\n"
        "    import transcript_view.fleet\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    present, message = _python_lines(installed, tmp_path, code)[-2:]
    assert present == "[]"
    assert "pip install 'transcript-view[fleet]'" in message
    cli = subprocess.run(
        [str(installed / "transcript-view"), "--check", "s3://bucket/x.jsonl", "--workers", "2"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert cli.returncode == 2 and "transcript-view[fleet]" in cli.stderr

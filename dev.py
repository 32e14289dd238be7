#!/usr/bin/env python3
"""One entry point for a fresh clone: builds the project's own environment, then runs a task.

Why a script and not a Makefile: the only thing a new machine is promised is
Python 3.11+, and the machine's global pytest (9) cannot load the snapshot
plugin, so every task must run inside the project's own virtual environment.
This script creates `.venv/` on first use, installs the project with its test
extras, and reinstalls only when `pyproject.toml`, `constraints.txt`, `setup.py`
or one of the two C sources (the optional native leaf loops) changes.

`pyproject.toml` asks for ranges (what `pip install` of the package accepts);
`constraints.txt` pins the exact versions this environment installs, because the
snapshot tests compare rendered screens and a new Textual or Rich patch release
may move a cell. CI builds its environment through this script, so it is
reproducible; a user's install is not held to one patch release.

PATH arguments of `view` and `check` are the caller's: they are read relative to
the directory `dev.py` was run from, not the repository.

Usage:
    python3 dev.py demo          open the viewer on the bundled example
    python3 dev.py test          ruff, mypy --strict on every package, then the whole pytest suite
    python3 dev.py test-pure     the whole pytest suite with TRANSCRIPT_VIEW_PURE=1 (no C loaded)
    python3 dev.py sanitize      the C loops built with ASan and UBSan, under their own tests
    python3 dev.py view PATH     open the viewer on PATH
    python3 dev.py check PATH... run `transcript-view --check PATH...`
    python3 dev.py screenshots   regenerate screenshots/ from the bundled examples
    python3 dev.py bench         run the benchmark suite and print its table
    python3 dev.py keys          rewrite README.md's key list from viewer/keys.py
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".transcript-view-stamp"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
#: The exact versions of the development environment (see the module docstring).
CONSTRAINTS = ROOT / "constraints.txt"


#: The C the install compiles (setup.py's extensions): a change to any rebuilds them.
NATIVE_SOURCES = ("core/_gcount.c", "core/_lines.c")


def _wanted_stamp() -> str:
    """What the install depends on: the project files, the pins, and the C source it compiles."""
    digest = hashlib.sha256()
    for name in ("pyproject.toml", CONSTRAINTS.name, "setup.py", *NATIVE_SOURCES):
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def ensure_env() -> None:
    """Create or refresh `.venv/` so that it matches `pyproject.toml`."""
    if not PY.exists():
        print("dev.py: creating .venv/ (first run only)", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    if STAMP.exists() and STAMP.read_text().strip() == _wanted_stamp():
        return
    print("dev.py: installing the project and its test tools into .venv/", file=sys.stderr)
    pip = [str(PY), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
    # setuptools warns on every editable install that a folder named like the
    # package (transcript_view/) may shadow it: here it *is* it (mapped to itself).
    env = {**os.environ, "PYTHONWARNINGS": "ignore:Editable installation"}
    subprocess.run(
        [*pip, "install", "-c", str(CONSTRAINTS), "-e", f"{ROOT}[test,fleet]"], check=True, env=env
    )
    # Asked without TRANSCRIPT_VIEW_PURE: exported in the shell, it would hide what was built.
    unpure = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_VIEW_PURE"}
    native = subprocess.run(
        [str(PY), "-c", "import transcript_view.core.graphemes as g, "
         "transcript_view.core.transcript as t;"
         " print(g.NATIVE and t._lines is not None)"],
        cwd=ROOT, capture_output=True, text=True, env=unpure,
    ).stdout.strip()
    if native != "True":
        print("dev.py: the native grapheme counter and line scanner (core/_gcount.c,"
              " core/_lines.c) were not built, no C compiler? Everything works;"
              " counting graphemes is about 4x slower, indexing lines about 8x.",
              file=sys.stderr)
    STAMP.write_text(_wanted_stamp())


#: Benchmark-only tools, by the module that tells whether each is there: pyte, the
#: first-paint meter's terminal emulator; orjson, the parse floor issue 11 names
#: (`orjson.loads` of every line; msgspec's decoder stands in without it).
BENCH_TOOLS = (("pyte", "pyte==0.8.2"), ("orjson", "orjson==3.13.0"))


def ensure_bench_tools() -> None:
    """Install the benchmarks' own tools into `.venv/` when they are missing."""
    for module, pin in BENCH_TOOLS:
        if subprocess.call([str(PY), "-c", f"import {module}"], stderr=subprocess.DEVNULL) != 0:
            print(f"dev.py: installing {pin} (for the benchmarks) into .venv/", file=sys.stderr)
            pip = [str(PY), "-m", "pip", "--disable-pip-version-check", "-q"]
            subprocess.run([*pip, "install", pin], check=True)


#: Azurite, Microsoft's Azure Storage emulator, for the fleet tests' `az://` store: an npm
#: package, installed under `.venv/` where npm is on the machine (CI's is). Without it
#: those tests are skipped, and say so; the rest of the suite needs nothing but Python.
AZURITE = "azurite@3.37.0"
AZURITE_DIR = VENV / "azurite"


def ensure_test_servers() -> None:
    """Install Azurite into `.venv/azurite/` when npm is here and it is not installed yet."""
    stamp = AZURITE_DIR / ".installed"
    if stamp.exists() and stamp.read_text() == AZURITE:
        return
    npm = shutil.which("npm")
    if npm is None:
        print(f"dev.py: npm is not on this machine, so {AZURITE} (the fleet tests' Azure"
              " store) is not installed; those tests will be skipped", file=sys.stderr)
        return
    print(f"dev.py: installing {AZURITE} (the fleet tests' Azure store) into .venv/azurite/",
          file=sys.stderr)
    subprocess.run(
        [npm, "install", "--prefix", str(AZURITE_DIR), "--no-audit", "--no-fund",
         "--loglevel=error", AZURITE],
        check=True,
    )  # fmt: skip
    stamp.write_text(AZURITE)


def run(*args: str, cwd: Path = ROOT) -> int:
    """Run the environment's Python on `args`, in the repository unless told otherwise."""
    return subprocess.call([str(PY), *args], cwd=cwd)


def run_here(*args: str) -> int:
    """Run the command line where the caller is, so a relative PATH means what they typed.

    `-P` keeps that directory off `sys.path`: a stray `transcript_view` folder or
    module there must not shadow the installed package.
    """
    return run("-P", "-m", "transcript_view", *args, cwd=Path.cwd())


#: The installed package's shape, for mypy: `transcript_view/` with `core/`, `viewer/`
#: and `fleet/` inside it, as symlinks to the repository's folders.
TYPECHECK_TREE = ROOT / "build" / "typecheck"


def typecheck_tree() -> Path:
    """Lay out the package as it installs, so mypy sees `transcript_view.core.*`.

    The editable install maps `core/` to `transcript_view.core` with an import
    hook, which mypy cannot follow; a tree of symlinks gives it the same module
    names (new files appear in it at once). Rebuilt on every run: it is cheap.
    """
    package = TYPECHECK_TREE / "transcript_view"
    if package.exists():
        for entry in package.iterdir():
            entry.unlink()
    package.mkdir(parents=True, exist_ok=True)
    for entry in (ROOT / "transcript_view").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    (package / "core").symlink_to(ROOT / "core", target_is_directory=True)
    (package / "viewer").symlink_to(ROOT / "viewer", target_is_directory=True)
    (package / "fleet").symlink_to(ROOT / "fleet", target_is_directory=True)
    return package


def task_mypy() -> int:
    """mypy --strict on every package, its paths reported as the repository's own."""
    package = typecheck_tree()
    out = subprocess.run(
        [str(PY), "-m", "mypy", "--strict", str(package.relative_to(ROOT))],
        cwd=ROOT, capture_output=True, text=True,
    )
    prefix = str(package.relative_to(ROOT)) + os.sep
    for line in (out.stdout + out.stderr).splitlines():
        if line.startswith(prefix):
            rest = line[len(prefix):]
            top = rest.split(os.sep, 1)[0]
            line = rest if top in ("core", "viewer", "fleet") else "transcript_view" + os.sep + rest
        print(line)
    return out.returncode


def task_keys() -> int:
    """Regenerate the README's key list from the key table (a contract test compares them).

    Run in the project's environment because the table builds Textual bindings.
    """
    code = (
        "import sys; from pathlib import Path\n"
        "from transcript_view.viewer.keys import update_readme\n"
        "changed = update_readme(Path(sys.argv[1]))\n"
        "print('README.md: key list', 'rewritten' if changed else 'already up to date')\n"
    )
    return run("-c", code, str(ROOT / "README.md"))


def task_test(extra: list[str]) -> int:
    steps: list[tuple[str, list[str] | None]] = [
        ("ruff check .", ["-m", "ruff", "check", "."]),
        ("mypy --strict transcript_view (core/, viewer/, fleet/ and the command line)", None),
        ("pytest " + " ".join(extra), ["-m", "pytest", *extra]),
    ]
    for title, step in steps:
        print("dev.py: " + title, file=sys.stderr, flush=True)
        code = task_mypy() if step is None else run(*step)
        if code != 0:
            return code
    return 0


def task_test_pure(extra: list[str]) -> int:
    """The pure lane: the whole pytest suite with `TRANSCRIPT_VIEW_PURE=1`.

    The package then loads none of its native modules (core/native.py), so every
    answer comes from the Python paths, as on a machine without a C compiler.
    ruff and mypy read the same source in both lanes, so only `test` runs them.
    """
    print(" ".join(["dev.py: TRANSCRIPT_VIEW_PURE=1 pytest", *extra]), file=sys.stderr, flush=True)
    env = {**os.environ, "TRANSCRIPT_VIEW_PURE": "1"}
    return subprocess.call([str(PY), "-m", "pytest", *extra], cwd=ROOT, env=env)


#: The sanitizer lane (`sanitize`): the C it instruments (module name -> source), how,
#: where the build goes, and the tests that run it (its own, the line index's, the fuzz).
SANITIZE_SOURCES = {"_gcount": "core/_gcount.c", "_lines": "core/_lines.c"}
SANITIZE_FLAGS = (
    "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
    "-fno-sanitize-recover=undefined", "-O1", "-g",
)
SANITIZE_BUILD = ROOT / "build" / "sanitize"
SANITIZE_TESTS = (
    "tests/core/test_gcount.py", "tests/core/test_graphemes.py", "tests/core/test_native.py",
    "tests/core/test_transcript.py", "tests/core/test_fast_path.py",
    "tests/core/test_parallel.py", "tests/robustness/test_fuzz.py",
)


def build_sanitized() -> tuple[str, str] | None:
    """Build `SANITIZE_SOURCES` into `SANITIZE_BUILD`; return the ASan and UBSan runtimes.

    None (and a message) when the compiler or its sanitizer runtimes are missing.
    """
    cc = "gcc"
    runtimes = tuple(
        subprocess.run(
            [cc, f"-print-file-name={name}"], capture_output=True, text=True
        ).stdout.strip()
        for name in ("libasan.so", "libubsan.so")
    )
    if not all(os.path.isabs(path) for path in runtimes):  # gcc echoes a name it has not
        print("dev.py: sanitize needs gcc and its libasan and libubsan"
              " (gcc -print-file-name=libasan.so)", file=sys.stderr)
        return None
    where = subprocess.run(
        [str(PY), "-c", "import importlib.machinery as m, sysconfig;"
         " print(sysconfig.get_paths()['include']); print(m.EXTENSION_SUFFIXES[0])"],
        capture_output=True, text=True, check=True,
    ).stdout.split("\n")
    include, suffix = where[0], where[1]
    SANITIZE_BUILD.mkdir(parents=True, exist_ok=True)
    for name, source in SANITIZE_SOURCES.items():
        out = SANITIZE_BUILD / (name + suffix)
        out.unlink(missing_ok=True)
        cmd = [cc, *SANITIZE_FLAGS, "-shared", "-fPIC", "-Wall", f"-I{include}",
               str(ROOT / source), "-o", str(out)]
        print("dev.py: " + " ".join(cmd[:len(SANITIZE_FLAGS) + 1]) + f" {source}",
              file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True)
    return runtimes[0], runtimes[1]


def task_sanitize(extra: list[str]) -> int:
    """The sanitizer lane: the C loops built with ASan and UBSan, run by their tests.

    The instrumented modules go to a folder of their own, `build/sanitize/`, and
    take the place of the normal ones (built beside their sources) through
    `tests/sanitize/sitecustomize.py`: that folder is put first on PYTHONPATH,
    so every Python process of the run (pytest and the processes it starts)
    imports it at start-up, and it answers the imports of those two module
    names from `TRANSCRIPT_VIEW_SANITIZE_BUILD`. The pytest plugin beside it
    (`-p sanitize_check`) checks before any test that `graphemes` and
    `transcript` use those files and that the ASan runtime is loaded, and
    names the files in the run's header.

    Python is not built with ASan, so its runtime is preloaded (LD_PRELOAD);
    PYTHONMALLOC=malloc sends Python's own objects (the str and bytes the C
    reads) through the malloc ASan watches, not pymalloc's arenas; leak
    detection is off (CPython's allocations at exit are not leaks to fix).
    A report stops the process that hit it (`halt_on_error`,
    `-fno-sanitize-recover`) and is written to `build/sanitize/reports/`,
    whichever process it came from (pytest captures stderr, and a report
    there would die with its process; the shim points UBSan at the file,
    which gcc's libubsan does not do from UBSAN_OPTIONS); any report fails
    the lane, and the reports are printed at the end.
    """
    runtimes = build_sanitized()
    if runtimes is None:
        return 2
    asan, ubsan = runtimes
    reports = SANITIZE_BUILD / "reports"
    reports.mkdir(exist_ok=True)
    for old in reports.iterdir():
        old.unlink()
    preload = os.environ.get("LD_PRELOAD")
    path = os.environ.get("PYTHONPATH")
    env = {
        **os.environ,
        "LD_PRELOAD": asan + (f" {preload}" if preload else ""),
        "ASAN_OPTIONS": f"detect_leaks=0:log_path={reports / 'asan'}",
        "UBSAN_OPTIONS": f"print_stacktrace=1:halt_on_error=1:log_path={reports / 'ubsan'}",
        "PYTHONMALLOC": "malloc",
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "tests" / "sanitize"), *([path] if path else [])]
        ),
        "TRANSCRIPT_VIEW_SANITIZE_BUILD": str(SANITIZE_BUILD),
        "TRANSCRIPT_VIEW_SANITIZE_UBSAN": ubsan,
    }
    env.pop("TRANSCRIPT_VIEW_PURE", None)
    print("dev.py: pytest (ASan, UBSan) " + " ".join([*SANITIZE_TESTS, *extra]),
          file=sys.stderr, flush=True)
    code = subprocess.call(
        [str(PY), "-m", "pytest", "-p", "sanitize_check", *SANITIZE_TESTS, *extra],
        cwd=ROOT, env=env,
    )
    found = sorted(reports.iterdir())
    for report in found:
        print(f"dev.py: {report.relative_to(ROOT)}:", file=sys.stderr)
        print(report.read_text(errors="replace"), file=sys.stderr)
    if found:
        print(f"dev.py: sanitize: {len(found)} sanitizer report(s), see above", file=sys.stderr)
        return code or 1
    return code


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help", "help"}:
        print(__doc__)
        return 0 if argv else 2
    task, rest = argv[0], argv[1:]
    ensure_env()
    if task == "demo":
        return run("-m", "transcript_view", str(ROOT / "examples" / "demo.jsonl"), *rest)
    if task == "test":
        ensure_test_servers()
        return task_test(rest)
    if task == "mypy":
        return task_mypy()
    if task == "view":
        return run_here(*rest)
    if task == "check":
        return run_here("--check", *rest)
    if task == "screenshots":
        return run(str(ROOT / "screenshots" / "make_screenshots.py"), *rest)
    if task == "keys":
        return task_keys()
    if task == "bench":
        ensure_bench_tools()
        return run(str(ROOT / "benchmarks" / "run.py"), *rest)
    if task == "test-pure":
        ensure_test_servers()
        return task_test_pure(rest)
    if task == "sanitize":
        return task_sanitize(rest)
    print(f"dev.py: unknown task {task!r}; see `python3 dev.py --help`", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""core/ is headless: importing it (or the top package) must never pull in a UI library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE_MODULES = sorted(
    f"transcript_view.core.{p.stem}" for p in (ROOT / "core").glob("*.py") if p.stem != "__init__"
)


def test_importing_every_core_module_imports_neither_textual_nor_rich() -> None:
    code = (
        "import sys\n"
        f"for name in {CORE_MODULES!r}: __import__(name)\n"
        "import transcript_view, transcript_view.core\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""
    assert len(CORE_MODULES) >= 8


def test_check_mode_does_not_import_textual() -> None:
    code = (
        "import sys\n"
        "from transcript_view.cli import main\n"
        f"code = main(['--check', {str(ROOT / 'examples' / 'demo.jsonl')!r}])\n"
        "print('textual' in sys.modules, code)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "False 0"


def test_core_imports_no_fleet_library() -> None:
    """Dask, fsspec, pyarrow and pandas are the fleet extra's (`transcript_view.fleet`): the
    core, the command line's `--check` and the viewer never import them."""
    code = (
        "import sys\n"
        f"for name in {CORE_MODULES!r}: __import__(name)\n"
        "import transcript_view, transcript_view.core, transcript_view.cli\n"
        "import transcript_view.viewer.app\n"
        "from transcript_view.cli import main\n"
        f"main(['--check', {str(ROOT / 'examples' / 'demo.jsonl')!r}])\n"
        "heavy = ('dask', 'distributed', 'fsspec', 'pyarrow', 'pandas', 'numpy', 's3fs')\n"
        "print('heavy:' + ','.join(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "heavy:"

"""The sanitizer lane's import shim (`python3 dev.py sanitize`): instrumented native modules.

`dev.py sanitize` builds `core/_gcount.c` and `core/_lines.c` with ASan and
UBSan into `build/sanitize/`, puts this folder first on `PYTHONPATH` and names
the build in `TRANSCRIPT_VIEW_SANITIZE_BUILD`. Python imports `sitecustomize`
at start-up, in the test run and in every Python process it starts, so each
of them finds `transcript_view.core._gcount` and `_lines` in that build, never
the normal ones beside the sources: a finder placed first on `sys.meta_path`
answers for those two names and nothing else. It also points UBSan's reports
at the file `UBSAN_OPTIONS` names (see `ubsan_reports_to_file`).

Without the variable it does nothing of that. Either way it then runs the
interpreter's own `sitecustomize`, if there is one: this file shadows it.
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

#: The native modules the lane instruments (dev.py's SANITIZE_SOURCES builds them).
NAMES = ("transcript_view.core._gcount", "transcript_view.core._lines")


class InstrumentedFinder:
    """Finds the instrumented build of each of `NAMES`, and only those."""

    def __init__(self, build: Path) -> None:
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        self.files = {name: build / (name.rsplit(".", 1)[1] + suffix) for name in NAMES}

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        file = self.files.get(name)
        if file is None:
            return None
        if not file.exists():
            raise ImportError(f"sanitizer lane: {file} was not built", name=name)
        loader = importlib.machinery.ExtensionFileLoader(name, str(file))
        return importlib.util.spec_from_file_location(name, file, loader=loader)


def ubsan_reports_to_file(library: str, options: str) -> None:
    """Send UBSan's reports to the `log_path` of `options` (UBSAN_OPTIONS), as ASan's go.

    gcc 12's libubsan, loaded as a dependency of an extension module, reads
    UBSAN_OPTIONS but prints to stderr whatever `log_path` says, and pytest
    captures stderr: a report there is lost with the process it stops. Its
    API takes the path (each process then writes `<path>.<pid>`).
    """
    settings = dict(item.split("=", 1) for item in options.split(":") if "=" in item)
    if "log_path" in settings:
        ctypes.CDLL(library).__sanitizer_set_report_path(settings["log_path"].encode())


def _hand_over() -> None:
    """Run the `sitecustomize` this one shadows, if there is one further on `sys.path`."""
    here = str(Path(__file__).resolve().parent)
    rest = [p for p in sys.path if p and str(Path(p).resolve()) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


_build = os.environ.get("TRANSCRIPT_VIEW_SANITIZE_BUILD")
if _build:
    sys.meta_path.insert(0, InstrumentedFinder(Path(_build)))
    ubsan_reports_to_file(
        os.environ["TRANSCRIPT_VIEW_SANITIZE_UBSAN"], os.environ.get("UBSAN_OPTIONS", "")
    )
_hand_over()

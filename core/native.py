"""The optional native modules, and the one switch that keeps them out.

Where a C compiler is present, the install builds two native leaf loops (the
grapheme counter, `core/_gcount.c`; the line scanner, `core/_lines.c`), each
beside Python that gives the same answers without it. Every import of one
goes through `load`, so the rule for when one is used is written here once.

`TRANSCRIPT_VIEW_PURE`: set to a non-empty value other than ``0``, the package
imports none of its native modules (`load` returns None without importing
anything) and runs its pure-Python paths even where they were built. It is read
once, when this module is first imported, so set it before the process starts
(or before the first `import transcript_view`). It is for the pure test lane
(`python3 dev.py test-pure`), for measuring what the native loops buy, and for
asking whether a problem is in the C.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from types import ModuleType
from typing import Final

__all__ = ["PURE", "PURE_VARIABLE", "load", "pure_requested"]

#: The environment variable that turns the native modules off.
PURE_VARIABLE: Final = "TRANSCRIPT_VIEW_PURE"


def pure_requested(environ: Mapping[str, str]) -> bool:
    """Whether `environ` asks for the pure paths: `PURE_VARIABLE` set, not empty, not "0"."""
    return environ.get(PURE_VARIABLE, "") not in ("", "0")


#: Whether this process runs without its native modules (`TRANSCRIPT_VIEW_PURE`).
PURE: Final = pure_requested(os.environ)


def load(name: str) -> ModuleType | None:
    """The native module `name` (e.g. ``"transcript_view.core._gcount"``), or None.

    None when `PURE` is set (then nothing is imported) or when the module was
    not built here (no C compiler where the package was installed).
    """
    if PURE:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None

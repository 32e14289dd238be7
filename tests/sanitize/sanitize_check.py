"""pytest plugin of the sanitizer lane (`python3 dev.py sanitize`, `-p sanitize_check`).

Before any test runs, it checks that the run is what the lane claims: the
package's native modules are the instrumented builds in
`TRANSCRIPT_VIEW_SANITIZE_BUILD` (the ones `graphemes` and `transcript`
actually call, not merely importable ones), and the ASan and UBSan runtimes
are in the process. The header of the run names the files. A failed check
stops the run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _instrumented() -> list[str]:
    """One line per native module: where it was loaded from. Raises if any is wrong."""
    build = Path(os.environ["TRANSCRIPT_VIEW_SANITIZE_BUILD"]).resolve()
    from transcript_view.core import graphemes, native, transcript

    if native.PURE:
        raise pytest.UsageError("sanitizer lane: TRANSCRIPT_VIEW_PURE is set")
    lines = []
    for owner, module in (("graphemes", graphemes._gcount), ("transcript", transcript._lines)):
        file = getattr(module, "__file__", None)
        if file is None or Path(file).resolve().parent != build:
            raise pytest.UsageError(
                f"sanitizer lane: {owner} uses {module!r}, not the instrumented build in {build}"
            )
        lines.append(f"sanitize: {module.__name__} from {file}")
    maps = Path("/proc/self/maps").read_text()  # the libraries this process has loaded
    for runtime in ("libasan", "libubsan"):
        if runtime not in maps:
            raise pytest.UsageError(f"sanitizer lane: {runtime} is not loaded in this process")
    return [*lines, "sanitize: the ASan and UBSan runtimes are loaded"]


_HEADER = pytest.StashKey[list[str]]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_HEADER] = _instrumented()


def pytest_report_header(config: pytest.Config) -> list[str]:
    return config.stash[_HEADER]

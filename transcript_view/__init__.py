"""transcript-view: what did the model really see, and where is the rest?

One import name holds the whole distribution. The headless library lives in
`transcript_view.core` (built from the repository's `core/`), the Textual app in
`transcript_view.viewer` (from `viewer/`), and the command line in
`transcript_view.cli`. The library API an agent developer needs is re-exported
here, so a loop of your own reads:

    from transcript_view import Session, Store, excerpt, parse_markers, verify

Importing this package imports `transcript_view.core` only: never Textual or
Rich (a test holds it to that), so scripts and `--check` stay light.
"""

from typing import Any

from transcript_view.core import *  # noqa: F403 (the API is core's __all__, re-exported)
from transcript_view.core import __all__ as _core_all

__all__ = [*_core_all, "__version__"]  # noqa: F405 (a module attribute: `__getattr__`)


def __getattr__(name: str) -> Any:
    """`__version__`, read from the installed metadata when first asked for.

    `importlib.metadata` takes ~50 ms to import (it brings the `email`
    package), a tenth of a small `--check`; only `--version` needs it.
    """
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("transcript-view")
    except PackageNotFoundError:  # imported from a tree that was never installed
        found = "0+unknown"
    globals()["__version__"] = found
    return found

"""Types of the optional native row count built from `_rows.c`."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

class Counter:
    """A `core.analysis.Measure`: the file view's rows of a plain line, else `fallback`'s."""

    def __init__(
        self, spec: Sequence[int], fallback: Callable[[str, Mapping[str, Any], bytes], int]
    ) -> None: ...
    def __call__(self, kind: str, payload: Mapping[str, Any], raw: bytes, /) -> int: ...

class SessionCounter:
    """A `core.formats.batches.LineMeasure` for a Claude Code or Codex line, else `fallback`'s."""

    def __init__(
        self,
        format: str,
        spec: Sequence[int],
        words: tuple[str, str, str],
        helpers: dict[str, object],
        fallback: Callable[[bytes], int],
    ) -> None: ...
    def __call__(self, raw: bytes, /) -> int: ...

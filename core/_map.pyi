"""Types of the optional native map built from `_map.c` (see `core.analysis._map_raw`)."""

from typing import Any

def map_run(
    items: list[bytes],
    first: int,
    start: int,
    env: tuple[Any, ...],
    out: tuple[Any, ...],
    state: list[Any],
    /,
) -> None:
    """`_map_into` of one run of raw lines, into `out`, with `state` read and written back."""

def sorted_keys(keys: Any, /) -> bytes:
    """The native int64 numbers of `keys` (an array('q')), sorted."""

def has_repeats(runs: list[Any], /) -> bool:
    """Whether any number occurs twice in `runs`, sorted array('q')s."""

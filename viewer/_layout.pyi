"""Types of the optional native prefix sums built from `_layout.c`."""

from array import array

def prefix_sums(starts: array[int], counts: array[int], first: int, /) -> None:
    """Refill `starts[first + 1:]` with the running sums of `counts[first:]`."""

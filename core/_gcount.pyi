"""Types of the optional native counter built from `_gcount.c`."""

from typing import final

def crlf_pairs(text: str, /) -> int:
    """How many times CR LF occurs in `text` (`text.count("\\r\\n")`)."""

@final
class Automaton:
    """A grapheme-boundary automaton whose tables were checked once."""

    def __init__(self, stage1: bytes, stage2: bytes, moves: bytes, classes: int) -> None: ...
    def count(self, text: str, /) -> int:
        """Number of code points of `text` before which there is a boundary."""
    @property
    def plain_runs(self) -> bool:
        """Whether runs of printable ASCII are skipped (what these tables allow)."""

"""Extended grapheme clusters (UAX #29): count, first N and last N.

PLACEHOLDER: being replaced by the real implementation (wcwidth engine + ASCII
fast paths). The signatures below are the contract the rest of core/ uses.
"""

from __future__ import annotations

from wcwidth import iter_graphemes, iter_graphemes_reverse


def count(text: str) -> int:
    """Number of extended grapheme clusters in `text`."""
    return sum(1 for _ in iter_graphemes(text))


def head(text: str, n: int) -> str:
    """The first `n` graphemes of `text` (all of it when it has fewer)."""
    if n <= 0:
        return ""
    end = 0
    for i, g in enumerate(iter_graphemes(text)):
        if i >= n:
            break
        end += len(g)
    return text[:end]


def tail(text: str, n: int) -> str:
    """The last `n` graphemes of `text` (all of it when it has fewer)."""
    if n <= 0:
        return ""
    start = len(text)
    for i, g in enumerate(iter_graphemes_reverse(text)):
        if i >= n:
            break
        start -= len(g)
    return text[start:]

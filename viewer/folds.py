"""Folding the agent's own records: a run of them is one dim row in "what the model saw".

Which lines are records is the core's rule (`core.formats.agent_records`);
this module is how a run of them reads. In the file view's default look (the
context's `fold_records`), a record line that follows a record line that is
folded too takes no rows, and the first line of such a run draws the one row
that stands for all of them ("14 progress records: 12 hooks, 2 Bash — not
sent to the model"). So a line's rows depend on the line before it: every
place that counts a line's rows is given whether that line was a folded
record (`RowBuilder.after_fold`), and every builder says whether its line is
one (`RowBuilder.folded`).

Enter on the row unfolds the run (`Expansion.unfold`: each line on its own
rows again, until folded back); `a` shows every record everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable

from transcript_view.core.formats.agent_records import RecordKind
from transcript_view.core.text import plural

__all__ = ["FOLD_SCAN_LINES", "fold_words"]

#: The most lines a fold row's words read to count its run; a longer run says "at least".
FOLD_SCAN_LINES = 100_000
#: What a fold row starts with (it opens on enter), and an unfolded record's heading.
FOLDED_MARK, UNFOLDED_MARK = "▸ ", "▾ "


def fold_words(records: Iterable[RecordKind], *, more: bool = False) -> str:
    """What a folded run of records says: how many of what, and that none reached the model.

    Args:
        records: the run's records, in file order.
        more: the run goes on past those given (it was too long to count).
    """
    kinds: dict[tuple[str, str], dict[tuple[str, str] | None, int]] = {}
    total = 0
    for r in records:
        total += 1
        details = kinds.setdefault((r.kind, r.kinds), {})
        key = (r.detail, r.details or r.detail) if r.detail is not None else None
        details[key] = details.get(key, 0) + 1

    def said(counts: dict[tuple[str, str] | None, int]) -> str:
        named = [(k, n) for k, n in counts.items() if k is not None]
        if len(counts) == 1 and named:  # all of one: "3 UI records: token_count"
            (one, many), n = named[0]
            return one if n == 1 else many
        named.sort(key=lambda kn: -kn[1])
        return ", ".join(plural(n, *k) for k, n in named)

    at_least = "at least " if more else ""
    if len(kinds) == 1:
        (one, many), counts = next(iter(kinds.items()))
        words = at_least + plural(total, one, many)
        inner = said(counts)
        if inner:
            words += ": " + inner
    else:
        parts = []
        for (one, many), counts in kinds.items():
            part = plural(sum(counts.values()), one, many)
            inner = said(counts)
            parts.append(f"{part} ({inner})" if inner else part)
        words = f"{at_least}{plural(total, 'record')}: " + ", ".join(parts)
    return words + " — not sent to the model"

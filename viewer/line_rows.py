"""The file view's row count of a transcript line, from the line as the analysis decoded it.

Counting a big transcript's rows was the viewer's slowest background work:
each line read again, parsed again into an envelope, and drawn by the row
builder counting only, about 18 µs a line (48 s of CPU for 2.6 M lines). The
analysis pass decodes every line already, in worker processes; `PlainRows`
is handed to it (`core.analysis.analyse(measure=)`) and counts a line's rows
there, from the decoded payload, in about a microsecond.

It counts a line in its *plain* look: the file view's default (nothing
expanded, no artifact open), with no analysis (no finding rows) and no
marker. For the lines that look like that it is the builder's count, which
the tests hold it to on every fixture and on random transcripts; the lines
it cannot say (a marker, a line problem, a big line, an envelope type it does
not count) it gives as `UNKNOWN`, and the view builds those. A line the
analysis later gives findings, or an open artifact, is recounted by the view
as any line whose look changes is (`TranscriptView.lines_changed`).

The rules are the builder's own pieces (`wrap_count`, `shown_rows`, the
widths and limits, `artifact_words`), so there is one rule for how many rows
a text takes; what is repeated here is only which texts a line shows, as
`viewer.blocks.build_envelope` draws them. `measure` adds the native count
(`viewer/_rows.c`, optional) for the common lines, about 4 µs a line less;
it takes every width and limit from `PlainRows.spec`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from transcript_view.core import native
from transcript_view.core.analysis import Measure
from transcript_view.core.envelopes import field_text
from transcript_view.core.text import compact_json
from transcript_view.viewer.blocks import (
    ARTIFACT_ROWS,
    BIG_LINE_BYTES,
    CALL_ROWS,
    DISPATCH_ROWS,
    ERROR_ROWS,
    META_ROWS,
    REASON_ROWS,
    artifact_words,
)
from transcript_view.viewer.rows import COLLAPSE_ROWS, GUTTER, shown_rows, wrap_count

if TYPE_CHECKING:
    from transcript_view.viewer import _rows  # the optional native count (viewer/_rows.c)
else:  # None where it was not built, or under TRANSCRIPT_VIEW_PURE (core/native.py)
    _rows = native.load("transcript_view.viewer._rows")

#: What `PlainRows` says of a line it does not count: the view builds it.
UNKNOWN = -1


def measure(width: int) -> Measure:
    """The measure to hand the analysis for the file view at `width`.

    The native count (`viewer/_rows.c`) where it was built, which gives the
    common lines' rows itself and every other line to `PlainRows`; else
    `PlainRows` alone. Both give the same counts.
    """
    rows = PlainRows(width)
    if _rows is None:
        return rows
    return _rows.Counter(rows.spec, rows)


class PlainRows:
    """The row count of each line in the file view's plain look, at one width.

    A callable the analysis's map calls once an envelope line, in whatever
    process maps it: `(type, payload, the line's bytes) -> rows` (see
    `core.analysis.Measure`).
    """

    __slots__ = ("_args", "_body", "_calls")

    def __init__(self, width: int) -> None:
        """Count at the view's `width` (the whole row, gutter included)."""
        self._body = max(width - GUTTER - 2, 1)
        self._calls = max(width - GUTTER - 6, 1)
        self._args = max(width - GUTTER - 4, 1)

    @property
    def spec(self) -> tuple[int, ...]:
        """What the native count needs to count as this does (see `viewer/_rows.c`).

        The big-line threshold, the three text widths, then each limit
        followed by the rows a piece collapsed under it shows.
        """
        limits = (COLLAPSE_ROWS, CALL_ROWS, DISPATCH_ROWS, ERROR_ROWS, REASON_ROWS)
        return (
            BIG_LINE_BYTES - 1,
            self._body,
            self._calls,
            self._args,
            *(n for limit in limits for n in (limit, shown_rows(limit + 1, limit))),
        )

    def __call__(self, kind: str, p: Mapping[str, Any], raw: bytes) -> int:
        """Rows of one envelope line of type `kind` and payload `p`, or `UNKNOWN`.

        Each text's rows are `wrap_count`'s, then `shown_rows`' (collapsed past
        its limit), as `RowBuilder.text` counts them.
        """
        if len(raw) >= BIG_LINE_BYTES - 1:
            return UNKNOWN  # shown in part (`RowBuilder.big_line`), by the builder
        if kind == "message":
            content = p.get("content")
            if type(content) is not str:
                content = field_text(content)
            if "[... elided " in content:
                return UNKNOWN  # a marker: its rows depend on its badge
            rows = 1 + shown_rows(wrap_count(content, self._body, COLLAPSE_ROWS + 1), COLLAPSE_ROWS)
            calls = p.get("tool-calls")
            if isinstance(calls, list):
                for call in calls:
                    if type(call) is not dict and not isinstance(call, Mapping):
                        continue
                    fn = call.get("function")
                    args = fn.get("arguments") if isinstance(fn, Mapping) else None
                    text = field_text(args)
                    rows += 1 + shown_rows(wrap_count(text, self._calls, CALL_ROWS + 1), CALL_ROWS)
            return rows
        if kind == "tool-dispatched":
            value = p.get("arguments")
            text = value if isinstance(value, str) else compact_json(value)
            return 1 + self._rows(text, self._args, DISPATCH_ROWS)
        if kind == "tool-settled":
            rows = 1
            error = p.get("error")
            if error and isinstance(error, str):
                rows += self._rows("error: " + error, self._args, ERROR_ROWS)
            reason = p.get("reason")
            if reason and isinstance(reason, str):
                rows += self._rows("reason: " + reason, self._args, REASON_ROWS)
            art = p.get("artifact")
            if isinstance(art, Mapping):
                rows += self._rows(artifact_words(art), self._args, ARTIFACT_ROWS)
            return rows
        if kind == "session-meta":
            rows = 1
            for key, value in p.items():
                shown = value if isinstance(value, str) else compact_json(value)
                rows += self._rows(f"{key}: {shown}", self._body, META_ROWS)
            return rows
        return UNKNOWN

    @staticmethod
    def _rows(text: str, width: int, limit: int) -> int:
        return shown_rows(wrap_count(text, width, limit + 1), limit)

"""The context chart's arithmetic: each call's fill, and which calls each column shows.

Plain numbers, no widget: the transcript screen makes a session's `Fills` in a
worker (hundreds of thousands of calls take a fifth of a second), and the context
screen (`viewer.context_screen`) draws them with Textual's `Sparkline`, whose
bucketing `chart_columns` repeats once so that the ruler's marks and a click find
the calls of the column the reader sees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from transcript_view.core.calls import ModelCalls, estimate_tokens

__all__ = ["Fills", "chart_columns", "first_columns"]

def chart_columns(count: int, width: int) -> list[range]:
    """The values each column of a `Sparkline` `width` columns wide shows, of `count` values.

    The sparkline cuts its data into `width` buckets (`Sparkline._buckets`: bucket `b`
    is `[int(b·count/width), int((b+1)·count/width))`, the empty ones dropped) and then
    walks its columns over the buckets with a float step; this is the same arithmetic,
    kept in one place so that the ruler's marks and a mouse click find the calls of the
    column the reader sees (a test holds it to the sparkline's own).
    """
    if count <= 0 or width <= 0:
        return []
    if count == 1:  # a single value is drawn across the whole width
        return [range(0, 1)] * width
    step = Fraction(count, width)
    buckets: list[range] = []
    for bucket in range(width):
        start, end = int(step * bucket), int(step * (bucket + 1))
        if end > start:
            buckets.append(range(start, end))
    columns: list[range] = []
    at, per = 0.0, len(buckets) / width
    for _ in range(width):
        columns.append(buckets[int(at)])
        at += per
    return columns


def first_columns(columns: Sequence[range]) -> dict[int, int]:
    """Each value's first column (a value spans several when there are fewer than columns)."""
    first: dict[int, int] = {}
    for column, values in enumerate(columns):
        for value in values:
            first.setdefault(value, column)
    return first


@dataclass(frozen=True, slots=True)
class Fills:
    """What the chart draws: each call's size against its scale, a few numbers a call.

    A call's scale is its window (recorded, assumed or set); a call with none is drawn
    against the largest window of the others, or, when no call has a window, against
    the largest call (`relative`).
    """

    values: list[float]
    """Each call's size over its scale (1.0: a full window; above: over it)."""
    estimated: int
    """How many sizes are estimates (the file records none)."""
    relative: bool
    """No call has a window: sizes are drawn against the largest call."""
    top: float
    """The chart's top: a full window, or higher if a call went over its window."""
    largest: int
    """The largest call's size, in tokens (the top when `relative`)."""

    @classmethod
    def of(cls, calls: ModelCalls, window: int | None = None) -> Fills:
        """The fills of every call of `calls` (`window`: for calls whose file records none)."""
        count = len(calls)
        tokens = [0] * count
        scales = [0] * count
        estimated = 0
        # A call's window follows from its recorded window and its model alone: asked once
        # a pair, not once a call (a gigabyte session has hundreds of thousands of calls).
        known: dict[tuple[int, int], int] = {}
        recorded, models = calls.windows, calls.models
        for i in range(count):
            size = calls.tokens[i]
            if size < 0:
                size = estimate_tokens(calls.context_chars(i))
                estimated += 1
            tokens[i] = size
            key = (recorded[i], models[i])
            scale = known.get(key)
            if scale is None:
                scale = known[key] = calls.window_of(i, window)[0] or 0
            scales[i] = scale
        largest = max(tokens, default=0)
        fallback = max(scales, default=0)
        relative = fallback == 0
        if relative:
            fallback = max(largest, 1)
        values = [t / (s or fallback) for t, s in zip(tokens, scales, strict=True)]
        top = 1.0 if relative else max(1.0, max(values, default=0.0))
        return cls(values, estimated, relative, top, largest)

    def summary(self) -> Callable[[Sequence[float]], float]:
        """The sparkline's summary function: a bucket's largest fill, drawn on an absolute
        scale (0 to `top`), not the sparkline's own, which stretches the smallest value to
        the bottom and the largest to the top (a session between 9 and 11 % would look
        empty, then full)."""
        low = min(self.values, default=0.0)
        extent = (max(self.values, default=0.0) - low) or 1.0
        top = self.top

        def tallest(bucket: Sequence[float]) -> float:
            return low + extent * min(max(bucket) / top, 1.0)

        return tallest

    def data(self) -> list[float]:
        """The sparkline's data: the values (a single call twice: the sparkline draws a lone
        value as a full bar, whatever it is)."""
        return self.values * 2 if len(self.values) == 1 else self.values

    def biggest_in(self, calls: range) -> int:
        """The call a column shows: the fullest of its bucket (the first of equals)."""
        values = self.values
        return max(calls, key=values.__getitem__)

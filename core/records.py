"""The records an analysis hands out: tool operations, marker sites, replayed messages.

These are the values a caller holds — a viewer row, a `--check` finding, a
test's expectation — so they live apart from the tables and the pass that make
them: a module that only reads an `Analysis` should not need to import how it
was built. Nothing here reads a file or knows about columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from transcript_view.core.markers import Marker


class OpState(StrEnum):
    """What the lines present say about one tool call (FORMAT.md's crash table)."""

    NEVER_DISPATCHED = "never-dispatched"
    RUNNING = "running-when-died"
    SETTLE_NEVER_LANDED = "settle-never-landed"
    SETTLED = "settled"


def op_state(dispatch: int, message: int, settle: int) -> OpState:
    """The state of a call from the lines it has (-1 for a line that is not there).

    One function for both views of an operation — the `ToolOperation` record and
    the row of the operations table — so the two cannot drift apart. The call
    line itself never matters: a settle decides alone, and without one the
    dispatch and the tool message tell how far the call got.
    """
    if settle >= 0:
        return OpState.SETTLED
    if dispatch < 0:
        return OpState.NEVER_DISPATCHED
    if message < 0:
        return OpState.RUNNING
    return OpState.SETTLE_NEVER_LANDED


@dataclass(slots=True)
class ToolOperation:
    """One tool call joined across its assistant turn, dispatch, tool message and settle."""

    call_id: str
    tool: str
    index: int = -1
    """Its row in `Analysis.operations` (identity: two views of one operation share it)."""
    op_id: str | None = None
    call_line: int | None = None
    dispatch_line: int | None = None
    dispatch_ts: str | None = None
    message_line: int | None = None
    message_id: str | None = None
    settle_line: int | None = None
    settle_ts: str | None = None
    outcome: str | None = None
    duration: float | None = None
    error: str | None = None
    reason: str | None = None
    result_digest: str | None = None
    artifact: Mapping[str, Any] | None = None
    is_error: bool = False
    in_flight: bool = False
    """The transcript is being followed and this call is of its last turn, unsettled:
    it may still be running, so it reads "running" instead of a crash's words."""

    @property
    def state(self) -> OpState:
        """Where the call got to, read off which lines exist."""
        return op_state(
            -1 if self.dispatch_line is None else self.dispatch_line,
            -1 if self.message_line is None else self.message_line,
            -1 if self.settle_line is None else self.settle_line,
        )

    def describe_state(self) -> str:
        """The state in words a person reads in a viewer.

        The words for an unsettled call are what a finished file means (the
        process died, the settle was lost); while its file is still being
        written (`in_flight`) the same lines mean it has not got there yet.
        """
        state = self.state
        if state is OpState.SETTLED:
            return self.outcome or "settled"
        if self.in_flight:
            return "not dispatched yet" if state is OpState.NEVER_DISPATCHED else "running"
        if state is OpState.NEVER_DISPATCHED:
            return "never dispatched"
        if state is OpState.RUNNING:
            return "running when the process died"
        return "completed; the settle never landed"


@dataclass(frozen=True, slots=True)
class ExcerptShape:
    """The parts of an excerpt around its marker, kept as lengths and digests only."""

    head_bytes: int
    head_sha256: str
    head_chars: int
    tail_bytes: int
    tail_sha256: str


class SiteKey(NamedTuple):
    """A marker's identity in one transcript: its line and where it starts in the content.

    Typed rather than a bare `(int, int)`, so the viewer's state keyed by marker
    cannot be confused with a block index or a row; it is still a tuple, so it
    sorts by line and hashes cheaply.
    """

    line: int
    start: int
    """Character offset of the marker in the message content."""


@dataclass(slots=True)
class MarkerSite:
    """A marker found in a message, with the operation it belongs to (if any)."""

    line: int
    message_id: str | None
    role: str
    marker: Marker
    quoted: bool
    """True when the marker is text *about* a marker (in a user or assistant message, or
    a second marker-shaped line inside a tool result) rather than the excerpt's own."""
    op: ToolOperation | None = None
    shape: ExcerptShape | None = None
    op_index: int = -1

    @property
    def file(self) -> str | None:
        """The artifact basename the marker names, if it is a stored marker."""
        return self.marker.file

    @property
    def key(self) -> SiteKey:
        """This marker's identity (line, offset in the content)."""
        return SiteKey(self.line, self.marker.start)


@dataclass(frozen=True, slots=True)
class ReplayEntry:
    """One message of what the model is sent next: its id, source line and any stub."""

    id: str
    line: int
    role: str
    sticky: bool
    summary: bool = False
    """A compaction's summary turn (content is the compaction line's `summary`)."""
    stub: str | None = None
    """Content replaced by an elision stub."""

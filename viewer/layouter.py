"""Where each block's row count comes from, and the loop that counts them: no widget.

A view scrolls by row counts (`viewer.document.Document`'s `RowLayout`),
and a big transcript's are had from the cheapest place that has them: the
first screens are built at once; past them, the file view takes the counts
the analysis took as it read (`MeasuredRows`, from `viewer.measure.BlockRows`),
waiting for them while the pass reads; the model view takes its plain
entries' counts from the file view's (`ModelSource.counts_from_file`); the
rest of a big view, once the analysis is in, is counted by the pass server
(`background.count_job`); and a block whose look the view changed (expanded,
an artifact open, a finding) is built.

`Layouter.run` is the body of `TranscriptView`'s layout worker: it posts the
counts back to the view as `LayoutChunk` messages, a few a second, and the
view takes them in on its thread (`TranscriptView.apply_chunk`). The view
draws and handles keys; it asks this where counts come from.
"""

from __future__ import annotations

import time
from array import array
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from textual.message import Message

from transcript_view.core import parallel
from transcript_view.core.transcript import Transcript
from transcript_view.viewer.background import count_job
from transcript_view.viewer.blocks import FileSource, ModelSource
from transcript_view.viewer.context import BlockContext
from transcript_view.viewer.document import Document, layout_counts
from transcript_view.viewer.layout import COUNT_TYPECODE
from transcript_view.viewer.measure import UNKNOWN
from transcript_view.viewer.measured_rows import MeasuredRows
from transcript_view.viewer.messages import LayoutChunk
from transcript_view.viewer.pacing import give_way

#: Blocks laid out per posted chunk: small enough that the first screen appears
#: at once, large enough that a million lines are not a million messages.
LAYOUT_CHUNK = 400
#: Seconds between layout messages after the first one.
LAYOUT_POST_SECONDS = 0.25
#: Blocks left to count above which the pass server counts them (when there is one).
SERVER_LAYOUT_BLOCKS = 20_000
#: Counts a layout chunk holds at most: the UI thread takes a chunk in one go
#: (~0.3 µs a count), and a big file's counts come faster than they are posted.
LAYOUT_POST_COUNTS = 1 << 16


def _file_line(view: str, block: int) -> int | None:
    """The transcript line of a file-view block (None for another view's)."""
    return block + 1 if view == "file" else None


class Layouter:
    """Counts a view's blocks' rows from wherever they are cheapest (see the module)."""

    def __init__(
        self,
        transcript: Transcript | None,
        ctx: BlockContext,
        file_doc: Document,
        post: Callable[[Message], object],
    ) -> None:
        """`post` sends a `LayoutChunk` to the view (from any thread: `post_message`)."""
        self.transcript = transcript
        self.ctx = ctx
        self.file_doc = file_doc
        self._post = post
        self.measured = MeasuredRows()
        """The file view's row counts the analysis took as it read."""
        self._server_failed = False
        """The pass server failed a layout once: count in-process from then on."""

    def run(
        self, doc: Document, generation: int, start: int, cancelled: Callable[[], bool]
    ) -> None:
        """Count rows of blocks from `start` while the source has more (a layout worker's body).

        The first screens are counted here; the rest of a big transcript is
        taken from the analysis's counts, or handed to the pass server when it
        is free (`_server_counts`). Every count goes to the view as a
        `LayoutChunk`; the last says `done`. Stops when `cancelled` or when
        `doc` is laid out again (its `generation` moved on).
        """
        i = pending_start = start
        pending = array(COUNT_TYPECODE)
        posted = time.monotonic()

        def current() -> bool:
            return not cancelled() and generation == doc.generation

        def due() -> bool:
            return len(pending) >= LAYOUT_POST_COUNTS or (
                time.monotonic() - posted >= LAYOUT_POST_SECONDS
            )

        def post() -> None:
            """Send the counts of blocks `pending_start…i` and start the next chunk at `i`."""
            nonlocal pending_start, pending, posted
            self._post(LayoutChunk(doc.view, generation, pending_start, pending))
            pending_start, pending, posted = i, array(COUNT_TYPECODE), time.monotonic()

        derive = self._model_from_file(doc)
        step = LAYOUT_CHUNK * 50 if derive is not None else LAYOUT_CHUNK
        unplain: list[int] | None = None
        while current():
            available = doc.source.available()
            stop = min(available, i + step)
            if i >= stop:
                break
            if derive is not None:
                pending.extend(derive(i, stop))
                i = stop
                give_way()
                if due():
                    # In pieces: one chunk of a big model view's millions of counts
                    # held the UI thread a third of a second to take in.
                    post()
                continue
            if unplain is None and doc is self.file_doc:
                unplain = self._unplain_lines()  # later ones: `lines_changed`
            taken = self._from_measured(doc, i, min(available, i + LAYOUT_CHUNK * 50), unplain)
            if taken:
                pending.extend(taken)
                i += len(taken)
                give_way()
                if due():
                    post()
                continue
            if self.waits(doc, i):
                # The analysis is counting these: wait for them here, so that one
                # worker lays the whole read out, posting by time as it goes.
                if pending and time.monotonic() - posted >= LAYOUT_POST_SECONDS:
                    post()
                self.measured.sleep(i, self.ctx.width, LAYOUT_POST_SECONDS / 2)
                continue
            if i > start and self._hand_over(doc, available - i):
                if pending:
                    self._post(LayoutChunk(doc.view, generation, pending_start, pending))
                    pending_start, pending = i, array(COUNT_TYPECODE)
                reached = self._server_counts(doc, generation, i, current)
                if reached is None:
                    break  # the server could not: counted here after all (next kick)
                i = pending_start = reached
                continue
            pending.extend(layout_counts(doc.source, i, stop, cancelled))
            i = stop
            give_way()
            # The first chunk goes at once (the first screen); later ones are batched
            # by time, so a huge file is a few messages a second, not thousands.
            if pending_start == start or time.monotonic() - posted >= LAYOUT_POST_SECONDS:
                post()
        self._post(LayoutChunk(doc.view, generation, pending_start, pending, done=True))

    def waits(self, doc: Document, block: int) -> bool:
        """Whether laying out `doc` from `block` waits for the analysis's counts."""
        return (
            doc is self.file_doc
            and block >= LAYOUT_CHUNK  # the first screen never waits
            and self.ctx.fold_records  # the analysis counts records folded
            and self.measured.waits(block, self.ctx.width)
        )

    def _unplain_lines(self) -> list[int]:
        """Lines whose look the analysis on show changed from the plain one, sorted.

        The pass measured every line before any analysis (`BlockRows`). Once
        one is on show, a line with findings, markers (their badges are the
        ledger's: a Codex notice's "not stored" is wider than "checking") or,
        for another format, the whole file's tags is not in its plain look.
        `AnalysisState.adopt` recounts those when the analysis lands; a layout
        at the measured width after that (a resize away and back, the last
        line again in follow mode) builds them here.
        """
        lines = self.ctx.finding_lines()
        if self.ctx.analysis is not None:
            lines = lines | self.ctx.index.lines_with_markers()
        return sorted(lines)

    def _from_measured(
        self, doc: Document, start: int, stop: int, unplain: list[int] | None
    ) -> list[int] | None:
        """Counts of file blocks `start…stop` from the analysis's, where it has them.

        The analysis counted each line in its plain look. Built to count, here:
        a line it did not count (one too long to build whole), a block not in its
        default look (expanded, an artifact open), and a line in `unplain`
        (`_unplain_lines`). A line whose look changes later is recounted as any
        is (`lines_changed`, `analysis_changed`).
        """
        if doc is not self.file_doc or not self.ctx.fold_records:
            return None  # the analysis counts the file view with records folded
        counts = self.measured.counts(start, stop, self.ctx.width)
        if counts is None:
            return None
        build = []
        if UNKNOWN in counts:
            build = [start + i for i, n in enumerate(counts) if n == UNKNOWN]
        if not self.ctx.default_look(doc.view):
            shaped = self.ctx.reshaped_lines(_file_line)
            build += [line - 1 for line in shaped if start < line <= start + len(counts)]
        if unplain:
            lo, hi = bisect_right(unplain, start), bisect_right(unplain, start + len(counts))
            build += [line - 1 for line in unplain[lo:hi]]
        source = doc.source
        for index in build:
            counts[index - start] = source.build(index, count_only=True).count
        return counts

    def _model_from_file(self, doc: Document) -> Callable[[int, int], list[int]] | None:
        """How to count the model view from the file view's counts, if they are all known.

        Most replayed messages are their line's file block row for row
        (`ModelSource.counts_from_file`), so once the file view is laid out at
        this width the model view is a lookup per block instead of a parse.
        """
        source, file_doc = doc.source, self.file_doc
        if not isinstance(source, ModelSource) or file_doc.laying_out or file_doc.dirty:
            return None
        if file_doc.width != self.ctx.width or file_doc.blocks != file_doc.source.available():
            return None

        def line_of(view: str, block: int) -> int | None:
            if view == "file":
                return block + 1
            return source.line_of(block) if 0 < block < source.available() else None

        reshaped = self.ctx.finding_lines() | self.ctx.reshaped_lines(line_of)
        counts = file_doc.counts
        return lambda first, last: source.counts_from_file(first, last, counts, reshaped)

    def _hand_over(self, doc: Document, remaining: int) -> bool:
        """Whether to count the rest of `doc` in the pass server instead of this process.

        Only for many blocks, once the line index is whole and the analysis is
        on show (the file view before it is counted here, so the server is
        free for the analysis), when the server is not busy, and while every
        block of the view has its default look (what the server can know).
        """
        server = parallel.server()
        if server is None or server.busy or remaining < SERVER_LAYOUT_BLOCKS:
            return False
        if self.ctx.analysis is None or self._server_failed:
            return False
        if not self.ctx.default_look(doc.view):
            return False  # an expanded block or an open artifact: only this process knows
        source = doc.source
        if isinstance(source, ModelSource) and source.call is not None:
            return False  # the server counts the next call's context, not another call's
        return not isinstance(source, FileSource) or (
            source.index_complete and not source.following
        )

    def _server_counts(
        self, doc: Document, generation: int, start: int, current: Callable[[], bool]
    ) -> int | None:
        """Count blocks `start…` in the pass server, posting them as `LayoutChunk`s.

        Returns where the counts reached, or None if the server failed (the
        view then counts in-process, as it did before servers).
        """
        server = parallel.server()
        assert server is not None and self.transcript is not None
        reached = start
        pending = array(COUNT_TYPECODE)
        pending_start = start
        posted = time.monotonic()

        def on_event(kind: str, value: Any) -> bool:
            nonlocal reached, pending, pending_start, posted
            if not current():
                return False
            first, counts = value
            if first != reached:  # never: the job counts in order
                return False
            pending.extend(counts)
            reached += len(counts)
            if time.monotonic() - posted >= LAYOUT_POST_SECONDS:
                self._post(LayoutChunk(doc.view, generation, pending_start, pending))
                pending_start, pending, posted = reached, array(COUNT_TYPECODE), time.monotonic()
            return True

        try:
            server.run(
                count_job,
                self.transcript,
                doc.view,
                self.ctx.format,
                self.ctx.width,
                self.ctx.analysis,
                self.ctx.file_checks(),
                start,
                on_event=on_event,
            )
        except (OSError, parallel.PassFailed):
            self._server_failed = True
        if pending:
            self._post(LayoutChunk(doc.view, generation, pending_start, pending))
        if self._server_failed and reached == start:
            return None
        return reached

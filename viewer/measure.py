"""A line's rows in the file view, counted by building it where the analysis maps it.

Laying out a big transcript needs every line's row count. The analysis pass
decodes every line already, in worker processes; handed a `BlockRows`
(`core.decoding.Measure`), it also counts each line's rows there, so the
screen need not read and parse every line a second time after the pass.

The count is the builder's own: the line is built by `viewer.blocks.build_line`
(what `FileSource.build` draws) with a counting `RowBuilder`, in the file
view's *plain* look: nothing expanded, no artifact open, no analysis yet
(markers wear their provisional badge, as on the screen before the analysis
lands). So how a line looks is written once, in `viewer.blocks` and
`viewer.session_blocks`, and what the view scrolls by derives from it. A line
whose look the analysis changes (a badge of another width, a finding, a tag)
is recounted by the view when the analysis lands (`AnalysisState.adopt`), as
any line is; a line too long to build whole is `UNKNOWN`, and the view builds
it (it shows in part, read from the transcript).
"""

from __future__ import annotations

from transcript_view.core.formats.detect import Format
from transcript_view.viewer.blocks import BIG_LINE_BYTES, RowBuilder, build_line, line_record
from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion

#: What `BlockRows` says of a line it does not count: the view builds it.
UNKNOWN = -1


class BlockRows:
    """The row count of each line of a `fmt` transcript in the file view's plain look.

    A callable the pass calls once a line, in whatever process maps it. It
    pickles as its width and format (a worker started by `spawn` makes its own
    context), and keeps nothing of the lines it is given.
    """

    __slots__ = ("_after_fold", "_ctx", "format", "width")

    def __init__(self, width: int, fmt: Format) -> None:
        """Count at the view's `width` (the whole row, gutter included)."""
        self.width = width
        self.format = fmt
        self._ctx = BlockContext(AnalysisState(), {}, Expansion(), width=width, format=fmt)
        self._after_fold = False
        """Whether the line counted last is a folded record: a record after one takes no
        rows (`viewer.folds`). The lines come in file order (`core.decoding.Measure`)."""

    def __reduce__(self) -> tuple[type[BlockRows], tuple[int, Format]]:
        """Sent to a worker as what makes it: the context is made again there."""
        return (BlockRows, (self.width, self.format))

    def __call__(self, raw: bytes) -> int:
        """Rows of the line `raw` (without its LF), or `UNKNOWN` for a line shown in part."""
        if len(raw) >= BIG_LINE_BYTES - 1:
            # The view builds it (a line shown in part is read from the transcript);
            # whether it is a folded record, the next line needs to know here.
            self._after_fold = line_record(self.format, raw, 1, 0) is not None
            return UNKNOWN
        b = RowBuilder("file", 0, 1, self._ctx, count_only=True)
        b.after_fold = self._after_fold
        build_line(b, self.format, raw, 0)
        self._after_fold = b.folded
        return b.counted

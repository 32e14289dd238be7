"""An analysis kept up to date as its transcript grows (the viewer's follow mode).

Apart from `core.analysis` because it is a different use of the same pass: it
keeps one open between calls and deals with a last line that may still be
being written, which a one-shot `analyse` never has to think about.
"""

from __future__ import annotations

from collections.abc import Callable

from transcript_view.core.analysis import Analysis, AnalysisPass
from transcript_view.core.envelopes import Envelope
from transcript_view.core.transcript import LineProblem, Transcript, as_last


class Analyser:
    """An analysis kept up to date as its transcript grows (the viewer's follow mode).

    Re-reading a gigabyte transcript after every appended line would take a
    minute each time; this keeps the pass's state and reads only the new
    lines. Every line but the last non-blank one is fed to the pass for good;
    that last one may still be being written (or is a torn tail only while it
    is last), so it is read again by the next `update` and, until then, fed
    only to the snapshot that `update` finishes. Unless it is live, the result
    of every `update` equals `analyse` of the file as it is then (the tests
    hold it to that).

    A live analyser (`live`, what follow mode makes) reads the file as one still
    being written (`Analysis.live`): a last line without its LF that does not
    parse is taken for unfinished, not torn, and left out until it is complete;
    the last turn's unsettled calls read "running". A one-shot `analyse`, and
    so `--check`, reads the same lines as what a crash left. Setting `live`
    back to False and updating once (only the last line is read again) gives
    exactly `analyse`'s result.

    Not thread-safe: one `update` at a time. The `Analysis` objects it returns
    are independent of it and of each other.
    """

    def __init__(self, transcript: Transcript, *, live: bool = False) -> None:
        """Nothing is read until the first `update`.

        Args:
            transcript: the transcript to follow (indexed by the caller).
            live: whether the file is still being written (see above); the
                caller may change it between updates.
        """
        self.transcript = transcript
        self.live = live
        self._start()

    def _start(self) -> None:
        self._pass = AnalysisPass(self.transcript)
        self._resume = 1  # the first line not yet fed for good
        self._resets = self.transcript.resets

    def update(self, progress: Callable[[int, int], None] | None = None) -> Analysis:
        """Read the lines indexed since the last update; return the whole analysis.

        Call `Transcript.refresh` (or `build_index`) first. A transcript that
        was truncated or replaced since (`Transcript.resets`) is read again
        from its start.

        Args:
            progress: called as `(line, lines_total)` every few thousand lines.
        """
        t = self.transcript
        live = self.live  # read once: the UI thread may change it meanwhile
        if t.resets != self._resets:
            self._start()
        total = t.line_count  # read once: a refresh may index more meanwhile
        last: Envelope | LineProblem | None = None
        for n, parsed in enumerate(t.parsed_lines(self._resume, total), start=1):
            if last is not None:
                self._pass.feed(last)
                self._resume = parsed.line
            last = parsed
            if progress is not None and n % 2048 == 0:
                progress(parsed.line, total)
        snap = self._pass.snapshot()
        if last is not None and not (live and _unfinished(t, last)):
            snap.feed(as_last(last))
        result = snap.finish(total, live=live)
        if progress is not None:
            progress(total, total)
        return result


def _unfinished(transcript: Transcript, last: Envelope | LineProblem) -> bool:
    """Whether the last line is still being written: no LF yet, and not a line yet.

    A writer lands a long line in several writes, and a poll can fall between
    them; a line that already parses is whole whether or not its LF is there.
    """
    return (
        isinstance(last, LineProblem)
        and last.kind == "malformed-line"
        and not transcript.line_terminated(last.line)
    )

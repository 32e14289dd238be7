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
    only to the snapshot that `update` finishes. The result of every `update`
    equals `analyse` of the file as it is then (the tests hold it to that).

    Not thread-safe: one `update` at a time. The `Analysis` objects it returns
    are independent of it and of each other.
    """

    def __init__(self, transcript: Transcript) -> None:
        """Nothing is read until the first `update`."""
        self.transcript = transcript
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
        if last is not None:
            snap.feed(as_last(last))
        result = snap.finish(total)
        if progress is not None:
            progress(total, total)
        return result

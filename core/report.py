"""Verifying one transcript end to end: the analysis, every named artifact, the orphans.

This is the orchestration `--check`, `transcript_view.verify` and the
directory listing use; the verdicts themselves come from the
`VerificationLedger`, which the viewer feeds the same way one check at a time.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from transcript_view.core.analysis import Analysis, analyse
from transcript_view.core.findings import Finding, Severity
from transcript_view.core.ledger import VerificationLedger
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import MarkerState, OrphanFile, check_files, list_orphans


@dataclass(frozen=True, slots=True)
class Badge:
    """One excerpt marker's verdict, as `--check --json` lists it and the viewer draws it."""

    line: int
    start: int
    """Where the marker starts in the message content (two markers can share a line)."""
    file: str | None
    state: MarkerState

    def as_dict(self) -> dict[str, object]:
        """The `--check --json` shape of a badge."""
        return {"line": self.line, "start": self.start, "file": self.file,
                "state": self.state.value}  # fmt: skip


@dataclass(slots=True)
class Report:
    """The outcome of verifying one transcript."""

    transcript: Path
    artifact_dir: Path
    lines: int
    envelopes: int
    markers: int
    verified: int
    findings: list[Finding]
    analysis: Analysis | None = None
    orphans: list[OrphanFile] = field(default_factory=list)
    badges: list[Badge] = field(default_factory=list)
    """Each excerpt marker's line, file and state, in transcript order."""

    @property
    def states(self) -> dict[int, MarkerState]:
        """Badge per excerpt marker, keyed by its index in `analysis.excerpt_sites`."""
        return {i: b.state for i, b in enumerate(self.badges)}

    def count(self, severity: Severity) -> int:
        """How many findings have this severity."""
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def errors(self) -> int:
        """Number of error findings."""
        return self.count(Severity.ERROR)

    @property
    def warnings(self) -> int:
        """Number of warning findings."""
        return self.count(Severity.WARNING)

    def as_dict(self) -> dict[str, object]:
        """The `--check --json` object for this transcript."""
        return {
            "transcript": str(self.transcript),
            "artifact_dir": str(self.artifact_dir),
            "lines": self.lines,
            "envelopes": self.envelopes,
            "markers": self.markers,
            "verified": self.verified,
            "badges": [b.as_dict() for b in self.badges],
            "findings": [f.as_dict() for f in self.findings],
        }


def verify_transcript(
    transcript: Transcript,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    count_chars: bool = True,
    workers: int = 1,
) -> Report:
    """Verify an opened transcript: analysis, every named artifact, orphans.

    `progress(phase, done, total)` reports `index`, `lines` and `artifacts` phases.
    `workers` > 1 checks artifacts in that many processes (see `check_files`).
    """
    if not transcript.index_complete or transcript.line_count == 0:
        transcript.build_index(
            (lambda d, t: progress("index", d, t)) if progress is not None else None
        )
    analysis = analyse(
        transcript, (lambda d, t: progress("lines", d, t)) if progress is not None else None
    )
    ledger = VerificationLedger(analysis)
    directory = transcript.artifact_dir
    wanted = ledger.wanted()
    counted = [n for n in wanted if count_chars and ledger.counts_chars(n)]
    existence = [n for n in wanted if not (count_chars and ledger.counts_chars(n))]
    for names, chars in ((counted, True), (existence, False)):
        checks = check_files(
            directory, names, count_chars=chars, workers=workers, progress=progress
        )
        for check in checks.values():
            ledger.record(check)
    ledger.record_orphans(list_orphans(directory, analysis.named_files()))
    return report_of(ledger)


def report_of(ledger: VerificationLedger) -> Report:
    """The `Report` of a fully fed ledger: what `--check` prints and `verify` returns."""
    analysis = ledger.analysis
    transcript = analysis.transcript
    return Report(
        transcript=transcript.path,
        artifact_dir=transcript.artifact_dir,
        lines=analysis.lines,
        envelopes=analysis.envelopes,
        markers=ledger.markers,
        verified=ledger.verified,
        findings=ledger.findings(),
        analysis=analysis,
        orphans=list(ledger.orphans or []),
        badges=[
            Badge(s.line, s.marker.start, s.marker.file, ledger.state(s.key))
            for s in analysis.excerpt_sites
        ],
    )


def verify(
    path: str | os.PathLike[str],
    *,
    progress: Callable[[str, int, int], None] | None = None,
    count_chars: bool = True,
    workers: int = 1,
) -> Report:
    """Verify the transcript at `path` and its artifacts; never writes anything.

    Raises:
        TranscriptError: the path is not a readable regular file.
    """
    with Transcript(path) as t:
        return verify_transcript(t, progress=progress, count_chars=count_chars, workers=workers)

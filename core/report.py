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

from transcript_view.core.analysis import Analysis
from transcript_view.core.findings import Finding, Severity
from transcript_view.core.formats.detect import Format, NotATranscript, detect, expected_message
from transcript_view.core.formats.model import SessionAnalysis, SpillSite
from transcript_view.core.formats.readers import analyse_as
from transcript_view.core.ledger import VerificationLedger, explain_orphans
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import MarkerState, OrphanFile, iter_checks, list_orphans


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
        return {
            "line": self.line,
            "start": self.start,
            "file": self.file,
            "state": self.state.value,
        }


@dataclass(slots=True)
class Report:
    """The outcome of verifying one transcript."""

    transcript: Path
    artifact_dir: Path | None
    """Where the marked-out rest lives (None for a format that keeps none)."""
    lines: int
    envelopes: int
    markers: int
    verified: int
    findings: list[Finding]
    analysis: Analysis | SessionAnalysis | None = None
    format: Format = Format.REFERENCE
    matched: int = 0
    """Markers whose sidecar's start is their preview and whose size is theirs (no digest)."""
    present: int = 0
    """Markers of a form that records only the sidecar's name, whose sidecar is there."""
    expired: int = 0
    """Markers whose file is gone as the agent allows (Qwen Code's 24 hours)."""
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
    def agreeing(self) -> int:
        """Markers whose file is what they say, as far as their form lets it be checked
        (`VerificationLedger.agreeing`): verified or matched."""
        return self.verified + self.matched

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
            "format": self.format.value,
            "artifact_dir": str(self.artifact_dir) if self.artifact_dir is not None else None,
            "lines": self.lines,
            "envelopes": self.envelopes,
            "markers": self.markers,
            "verified": self.verified,
            "matched": self.matched,
            "present": self.present,
            "expired": self.expired,
            "badges": [b.as_dict() for b in self.badges],
            "findings": [f.as_dict() for f in self.findings],
        }


def verify_transcript(
    transcript: Transcript,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    count_chars: bool = True,
    workers: int = 1,
    format: Format | None = None,
) -> Report:
    """Verify an opened transcript: analysis, every named artifact, orphans.

    `progress(phase, done, total)` reports `index`, `lines` and `artifacts` phases.
    `workers` > 1 checks artifacts in that many processes (see `iter_checks`).
    `format` forces a format; by default the file's first lines decide.

    Raises:
        NotATranscript: the file is none of the formats (and none was forced).
    """
    fmt = format if format is not None else detect_or_raise(transcript.path)
    if not transcript.index_complete or transcript.line_count == 0:
        transcript.build_index(
            (lambda d, t: progress("index", d, t)) if progress is not None else None
        )
    analysis = analyse_as(
        transcript, fmt, (lambda d, t: progress("lines", d, t)) if progress is not None else None
    )
    ledger = VerificationLedger(analysis)
    directory = analysis_dir(analysis)
    if directory is not None:
        wanted = ledger.wanted()
        counted = [n for n in wanted if count_chars and ledger.counts_chars(n)]
        utf16 = [n for n in wanted if n not in counted and ledger.counts_utf16(n)]
        existence = [n for n in wanted if n not in counted and n not in utf16]
        keep = ledger.ends_to_keep(wanted)  # workers send back digests, not ends
        for names, chars, units in (
            (counted, True, False),
            (utf16, False, True),
            (existence, False, False),
        ):
            for check in iter_checks(
                directory,
                names,
                count_chars=chars,
                count_utf16=units,
                workers=workers,
                progress=progress,
                edges=ledger.edge_bytes,
                keep=keep,
            ):
                ledger.record(check)  # kept as the ledger keeps it: thousands fit
    ledger.record_orphans(orphans_of(analysis), explained=True)
    return report_of(ledger)


def analysis_dir(analysis: Analysis | SessionAnalysis) -> Path | None:
    """Where an analysis's markers point: the artifact or sidecar directory, if any."""
    if isinstance(analysis, Analysis):
        return analysis.transcript.artifact_dir
    return analysis.artifact_dir


def orphans_of(analysis: Analysis | SessionAnalysis) -> list[OrphanFile]:
    """Files in the artifact or sidecar directory that nothing names (and no rule exempts),
    each with its reason (`explain_orphans`).

    The viewer's verification worker and `--check` both call this.
    """
    directory = analysis_dir(analysis)
    if directory is None:
        return []
    if isinstance(analysis, SessionAnalysis) and not analysis.owns_orphans:
        return []  # the session's main transcript reports them
    found = list_orphans(directory, analysis.named_files())
    if isinstance(analysis, SessionAnalysis):
        found = [o for o in found if not analysis.exempt(o.name)]
    return explain_orphans(found, analysis)


def detect_or_raise(path: Path) -> Format:
    """The file's format, or `NotATranscript` with the one line a user should read."""
    detection = detect(path)
    if detection.format is None:
        raise NotATranscript(expected_message(path, detection))
    return detection.format


def report_of(ledger: VerificationLedger) -> Report:
    """The `Report` of a fully fed ledger: what `--check` prints and `verify` returns."""
    analysis = ledger.analysis
    transcript = analysis.transcript
    return Report(
        transcript=transcript.path,
        artifact_dir=analysis_dir(analysis),
        lines=analysis.lines,
        envelopes=analysis.envelopes,
        markers=ledger.markers,
        verified=ledger.verified,
        findings=ledger.findings(),
        analysis=analysis,
        orphans=list(ledger.orphans or []),
        badges=[
            Badge(
                s.line,
                s.offset if isinstance(s, SpillSite) else s.marker.start,
                s.file,
                ledger.state(s.key),
            )
            for s in analysis.excerpt_sites
        ],
        format=analysis.format if isinstance(analysis, SessionAnalysis) else Format.REFERENCE,
        matched=ledger.matched,
        present=ledger.present,
        expired=ledger.expired,
    )


def verify(
    path: str | os.PathLike[str],
    *,
    progress: Callable[[str, int, int], None] | None = None,
    count_chars: bool = True,
    workers: int = 1,
    format: Format | None = None,
) -> Report:
    """Verify the transcript at `path` and its artifacts; never writes anything.

    Raises:
        TranscriptError: the path is not a readable regular file.
        NotATranscript: the file is none of the formats (and none was forced).
    """
    with Transcript(path) as t:
        return verify_transcript(
            t, progress=progress, count_chars=count_chars, workers=workers, format=format
        )

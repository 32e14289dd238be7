"""`transcript-view --check`: the headless contract for scripts and CI.

Exit 0 when no transcript has an error finding; 1 when one has (or, with
`--strict`, any warning); 2 for a PATH that is not a readable regular file.
Plain output is a summary line per transcript and a line per finding; `--json`
is one object per PATH per line. Nothing is ever written to a transcript or an
artifact directory.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from transcript_view.core.findings import Severity
from transcript_view.core.report import Report, verify
from transcript_view.core.transcript import TranscriptError


def summary_line(report: Report) -> str:
    """One line per transcript: counts a person scans first."""
    notes = report.count(Severity.NOTE)
    return (
        f"{report.transcript}: {report.envelopes:,} envelopes on {report.lines:,} lines, "
        f"{report.markers:,} markers, {report.verified:,} verified; "
        f"{report.errors} errors, {report.warnings} warnings, {notes} notes"
    )


def finding_line(report: Report, index: int) -> str:
    """One finding as `  severity kind line N file F: message`."""
    f = report.findings[index]
    where = []
    if f.line is not None:
        where.append(f"line {f.line}")
    if f.file is not None:
        where.append(f.file)
    place = (" " + ", ".join(where)) if where else ""
    return f"  {f.severity.value:<7} {f.kind}{place}: {f.message}"


def run_check(
    paths: Sequence[Path], *, as_json: bool, strict: bool, out: TextIO | None = None
) -> int:
    """Verify each PATH and print the results; return the exit status."""
    out = out if out is not None else sys.stdout
    status = 0
    for path in paths:
        try:
            report = verify(path, workers=os.cpu_count() or 1)
        except TranscriptError as exc:
            print(f"transcript-view: {exc}", file=sys.stderr)
            status = 2
            continue
        if as_json:
            out.write(json.dumps(report.as_dict(), ensure_ascii=False) + "\n")
        else:
            out.write(summary_line(report) + "\n")
            for i in range(len(report.findings)):
                out.write(finding_line(report, i) + "\n")
        failed = report.errors > 0 or (strict and report.warnings > 0)
        if failed and status == 0:
            status = 1
    out.flush()
    return status

"""A fleet check's results as a dataset: three Parquet tables, written a part at a time.

    findings     transcript, format, line, kind, severity, file, message
    transcripts  transcript, format, markers, verified, matched, present, expired,
                 errors, warnings, notes, problems (the summary line's: findings that
                 are problems), bytes, lines, error
    calls        transcript, call, line, model, tokens, source, field, window,
                 window_source, fill

Each is a folder of `part-NNNNN.parquet` files (`--out DIR` makes `DIR/findings/`,
`DIR/transcripts/`, `DIR/calls/`), one part each time `PART_TRANSCRIPTS` results
have come in: what a query engine reads as one table (DuckDB's
`read_parquet('DIR/findings/*.parquet')`, pandas' `read_parquet('DIR/findings')`), and
what never holds a whole fleet's rows in memory. The numbers are `--check --json`'s
for the same transcripts (`tests/fleet`); a call's figures are `--context --json`'s
(`source` says whether `tokens` was recorded or is an estimate).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from transcript_view.core.context import rounded_fill
from transcript_view.core.findings import Severity

if TYPE_CHECKING:
    from transcript_view.core.report import Report
    from transcript_view.fleet.task import Checked

#: Transcripts a part of each table holds at most.
PART_TRANSCRIPTS = 5000

FINDINGS = pa.schema([
    ("transcript", pa.string()), ("format", pa.string()), ("line", pa.int64()),
    ("kind", pa.string()), ("severity", pa.string()), ("file", pa.string()),
    ("message", pa.string()),
])  # fmt: skip
TRANSCRIPTS = pa.schema([
    ("transcript", pa.string()), ("format", pa.string()), ("markers", pa.int64()),
    ("verified", pa.int64()), ("matched", pa.int64()), ("present", pa.int64()),
    ("expired", pa.int64()), ("errors", pa.int64()), ("warnings", pa.int64()),
    ("notes", pa.int64()), ("problems", pa.int64()), ("bytes", pa.int64()),
    ("lines", pa.int64()), ("error", pa.string()),
])  # fmt: skip
CALLS = pa.schema([
    ("transcript", pa.string()), ("call", pa.int64()), ("line", pa.int64()),
    ("model", pa.string()), ("tokens", pa.int64()), ("source", pa.string()),
    ("field", pa.string()), ("window", pa.int64()), ("window_source", pa.string()),
    ("fill", pa.float64()),
])  # fmt: skip
#: The tables, by the folder each is written to.
TABLES = {"findings": FINDINGS, "transcripts": TRANSCRIPTS, "calls": CALLS}
#: A call row's columns, in order (`call_rows`).
CALL_COLUMNS = tuple(CALLS.names)


def call_rows(report: Report, url: str) -> list[tuple[Any, ...]]:
    """Each model call of a checked transcript, a `CALLS` row (`--context --json`'s figures)."""
    analysis = report.analysis
    if analysis is None:
        return []
    calls = analysis.calls
    rows = []
    for i in range(len(calls)):
        c = calls.call(i)
        source = c.window_source.value if c.window_source else None
        rows.append(
            (url, c.number, c.line, c.model, c.tokens, c.source, c.field, c.window, source,
             rounded_fill(c))
        )  # fmt: skip
    return rows


def finding_rows(checked: Checked) -> list[dict[str, Any]]:
    """A checked transcript's findings, `FINDINGS` rows."""
    record = checked.record
    if record is None:
        return []
    fmt = record["format"]
    return [
        {
            "transcript": checked.url,
            "format": fmt,
            "line": f.get("line"),
            "kind": f.get("kind"),
            "severity": f.get("severity"),
            "file": f.get("file"),
            "message": f.get("message"),
        }
        for f in record["findings"]
    ]


def transcript_row(checked: Checked) -> dict[str, Any]:
    """A checked transcript's `TRANSCRIPTS` row (one that could not be checked has its
    `error` and nothing else)."""
    record = checked.record
    if record is None:
        return {"transcript": checked.url, "error": checked.error}
    severities = [f.get("severity") for f in record["findings"]]
    notes = severities.count(Severity.NOTE.value)
    return {
        "transcript": checked.url,
        "format": record["format"],
        "markers": record["markers"],
        "verified": record["verified"],
        "matched": record["matched"],
        "present": record["present"],
        "expired": record["expired"],
        "errors": checked.errors,
        "warnings": checked.warnings,
        "notes": notes,
        "problems": checked.problems,
        "bytes": checked.size,
        "lines": record["lines"],
        "error": None,
    }


def rows_of(checked: Checked) -> dict[str, list[dict[str, Any]]]:
    """A checked transcript's rows of each table, by table (`TABLES`)."""
    return {
        "findings": finding_rows(checked),
        "transcripts": [transcript_row(checked)],
        "calls": [dict(zip(CALL_COLUMNS, r, strict=True)) for r in checked.calls],
    }


class DatasetWriter:
    """Writes results as they come, a part of each table every `PART_TRANSCRIPTS`.

    The folder is made if need be; a table folder that holds parts already is refused
    (results of two runs are never mixed without saying so).
    """

    def __init__(self, out: Path, part_transcripts: int = PART_TRANSCRIPTS) -> None:
        self.out = out
        self.part_transcripts = part_transcripts
        self.parts = 0
        for name in TABLES:
            folder = out / name
            if folder.is_dir() and any(folder.glob("*.parquet")):
                raise FileExistsError(
                    f"{folder}: holds the results of an earlier run; give another --out"
                )
            folder.mkdir(parents=True, exist_ok=True)
        self._rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
        self._count = 0

    def add(self, checked: Checked) -> None:
        """One transcript's results (written with the next part)."""
        for name, rows in rows_of(checked).items():
            self._rows[name].extend(rows)
        self._count += 1
        if self._count >= self.part_transcripts:
            self.flush()

    def flush(self) -> None:
        """Write what has come since the last part (nothing, when nothing has)."""
        if not self._count:
            return
        for name, schema in TABLES.items():
            table = pa.Table.from_pylist(self._rows[name], schema=schema)
            path = self.out / name / f"part-{self.parts:05d}.parquet"
            tmp = path.with_suffix(".parquet.tmp")
            pq.write_table(table, tmp)
            os.replace(tmp, path)  # a reader never sees half a part
            self._rows[name] = []
        self.parts += 1
        self._count = 0

    def extend(self, results: Iterable[Checked]) -> None:
        for checked in results:
            self.add(checked)
        self.flush()

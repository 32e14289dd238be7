"""What a transcript says about itself that only the whole of it can show.

The pass reports what one line contradicts as it reads it (a duplicate id, a
settle of an unknown operation, a digest that does not match). Some findings
need the lines after, too: whether a dispatched call was ever settled, whether
a settle's artifact key has a marker to go with it, whether a bad line was the
last one (a torn tail) or not. These are made once, after the last line, from
the tables the pass built; nothing here reads the transcript or an artifact.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from transcript_view.core.findings import Finding
from transcript_view.core.markers import MarkerKind
from transcript_view.core.records import MarkerSite, OpState
from transcript_view.core.tables import Operations
from transcript_view.core.transcript import LineProblem


def end_of_pass_findings(
    *,
    problems: Iterable[LineProblem],
    envelopes: int,
    first: tuple[int, str] | None,
    operations: Operations,
    site_rows: set[int],
    excerpt_sites: Iterable[MarkerSite],
) -> list[Finding]:
    """Every finding that needs the whole transcript, in the order the pass reports them.

    Args:
        problems: the lines that did not parse, in file order.
        envelopes: how many lines did parse.
        first: the first envelope's line and type, if there is one.
        operations: the operations table, complete.
        site_rows: the operation rows whose tool message carries an excerpt marker.
        excerpt_sites: the markers that are a tool result's own (resolved).
    """
    out: list[Finding] = []
    # A file in which nothing parses is not a transcript a crash tore: every
    # bad line, the last one included, is an error.
    nothing_parsed = envelopes == 0
    for problem in problems:
        torn = problem.kind == "torn-tail" and not nothing_parsed
        kind = "torn-tail" if torn else "malformed-line"
        out.append(Finding(kind, problem.line, None, problem.message))
    if first is not None and first[1] != "session-meta":
        out.append(
            Finding(
                "malformed-line",
                first[0],
                None,
                f"the first envelope is a {first[1][:40]!r} line; "
                "a transcript starts with session-meta",
            )
        )
    out.extend(unsettled_findings(operations))
    out.extend(unexcerpted_artifact_findings(operations, site_rows))
    for site in excerpt_sites:
        art = operations.artifact(site.op_index) if site.op_index >= 0 else None
        out.extend(site_findings(site, art))
    return out


def unsettled_findings(operations: Operations) -> list[Finding]:
    """A warning for each call dispatched but never settled (a crash, or a lost settle).

    Not for a call that may still be running (`Operations.in_flight`: the last
    turn of a file being followed): that is no problem, only not done yet.
    """
    out = []
    for row in operations.unsettled_rows():
        unsettled = operations.state(row) in (OpState.RUNNING, OpState.SETTLE_NEVER_LANDED)
        if unsettled and not operations.in_flight(row):
            op = operations[row]
            out.append(
                Finding(
                    "unsettled-operation",
                    op.dispatch_line,
                    None,
                    f"{op.tool or 'tool'} call {op.call_id!r}: {op.describe_state()}",
                )
            )
    return out


def unexcerpted_artifact_findings(operations: Operations, site_rows: set[int]) -> list[Finding]:
    """An error for each settle that records an artifact its tool message never excerpted."""
    out = []
    for row, art in operations.with_artifacts().items():
        if row not in site_rows:
            name = art.get("file")
            message_line = operations.line("message", row)
            out.append(
                Finding(
                    "metadata-mismatch",
                    operations.line("settle", row),
                    name if isinstance(name, str) else None,
                    "the settle records an artifact, but the tool message"
                    + (f" on line {message_line}" if message_line >= 0 else "")
                    + " carries no excerpt marker",
                )
            )
    return out


def site_findings(site: MarkerSite, art: Mapping[str, Any] | None) -> list[Finding]:
    """What an excerpt marker and its settle's artifact key (`art`) say against each other.

    Only what the transcript itself shows: whether the named file exists and
    matches is verification's business (`core.verification`).
    """
    out = []
    m = site.marker
    if m.kind is not MarkerKind.STORED:
        out.append(
            Finding(
                "not-stored",
                site.line,
                None,
                f"full result {m.why} ({m.bytes:,} bytes, sha256 {m.digest[:12]}…)",
            )
        )
        if art is not None:
            out.append(
                Finding(
                    "metadata-mismatch",
                    site.line,
                    None,
                    "the marker says the result was not stored, but the settle records an artifact",
                )
            )
        return out
    if not m.safe_name:
        out.append(
            Finding(
                "unsafe-name",
                site.line,
                None,
                f"the marker names {_show(m.file or '')}, which is not a plain basename; "
                "it was not opened",
            )
        )
    if art is None:
        return out
    diffs = []
    for key, mine in (
        ("file", m.file),
        ("bytes", m.bytes),
        ("digest", m.digest),
        ("elided-chars", m.elided),
    ):
        theirs = art.get(key)
        if theirs != mine:
            diffs.append(f"{key}: marker {_show(str(mine))}, artifact key {_show(str(theirs))}")
    if diffs:
        out.append(
            Finding(
                "metadata-mismatch",
                site.line,
                m.file if m.safe_name else None,
                "marker and settle disagree (" + "; ".join(diffs) + ")",
            )
        )
    return out


def _show(text: str, limit: int = 80) -> str:
    """A value for a message: repr'd (so controls are escaped) and bounded."""
    shown = repr(text[:limit])
    return shown + ("…" if len(text) > limit else "")

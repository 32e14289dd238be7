"""`transcript-view --context FILE`: every model call, and how full its context was.

One row per call (`core.calls`): where its response starts, the model, the
size of the context it was sent and where that figure comes from, its window
and where that comes from, how full the window was, the compactions since the
call before, the items the context gained and the biggest of them. A size the
file does not record is an estimate and every row that shows one says so
(`estimate`, never a bare number); `--json` says it in `source`. Exit 0, or 2
(as `--check`) for a FILE that cannot be read or is no transcript. Nothing is
ever written.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import TextIO, cast

import msgspec

from transcript_view.core.analysis import Analysis
from transcript_view.core.calls import (
    ESTIMATE_RULE,
    FIELDS,
    Compaction,
    ModelCall,
    ModelCalls,
    WindowSource,
    estimate_tokens,
)
from transcript_view.core.check import refusal_json
from transcript_view.core.formats.detect import Format, NotATranscript
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.formats.readers import analyse_as
from transcript_view.core.report import detect_or_raise
from transcript_view.core.text import plural
from transcript_view.core.transcript import Transcript, TranscriptError


def read_calls(path: Path, format: Format | None = None) -> tuple[Format, ModelCalls]:
    """The model calls of the transcript at `path` (one pass; its format told or detected).

    Raises:
        TranscriptError: the path is not a readable regular file.
        NotATranscript: the file is none of the formats (and none was forced).
    """
    with Transcript(path) as t:
        fmt = format if format is not None else detect_or_raise(t.path)
        t.build_index()
        analysis: Analysis | SessionAnalysis = analyse_as(t, fmt)
        return fmt, analysis.calls


# -- JSON ------------------------------------------------------------------------------------

_encode = msgspec.json.Encoder().encode


def rounded_fill(call: ModelCall) -> float | None:
    """A call's fill as `--context --json` gives it (six places), or None (no window)."""
    fill = call.fill
    return round(fill, 6) if fill is not None else None


def call_dict(call: ModelCall) -> dict[str, object]:
    """The `--context --json` object of one call."""
    biggest: dict[str, object] | None = None
    if call.biggest_line is not None:
        biggest = {
            "line": call.biggest_line,
            "chars": call.biggest_chars,
            "tokens": estimate_tokens(call.biggest_chars),
            "source": "estimate",
        }
    return {
        "type": "call",
        "call": call.number,
        "line": call.line,
        "model": call.model,
        "tokens": call.tokens,
        "source": call.source,
        "field": call.field,
        "window": call.window,
        "window_source": call.window_source.value if call.window_source else None,
        "window_basis": call.window_basis,
        "fill": rounded_fill(call),
        "compactions_before": [c.line for c in call.compactions],
        "items_added": call.items_added,
        "biggest_item": biggest,
    }


def summary_dict(
    path: Path,
    fmt: Format,
    calls: ModelCalls,
    window: int | None,
    closest: ModelCall | None = None,
) -> dict[str, object]:
    """The `--context --json` summary, after the calls: counts, every compaction, and the
    call that came closest to its window (`closest`, when the caller found it already)."""
    recorded = sum(1 for t in calls.tokens if t >= 0)
    if closest is None:
        closest = calls.closest(window)
    return {
        "type": "summary",
        "transcript": str(path),
        "format": fmt.value,
        "calls": len(calls),
        "recorded": recorded,
        "estimated": len(calls) - recorded,
        "estimate_rule": ESTIMATE_RULE,
        "window_option": window,
        "compactions": [c.as_dict() for c in calls.compactions],
        "closest": (
            {
                "call": closest.number,
                "line": closest.line,
                "tokens": closest.tokens,
                "source": closest.source,
                "window": closest.window,
                "window_source": closest.window_source.value if closest.window_source else None,
                "fill": rounded_fill(closest),
            }
            if closest is not None
            else None
        ),
    }


# -- text ------------------------------------------------------------------------------------

_HEADER = (
    f"{'call':>6} {'line':>9}  {'model':<24} {'tokens':>11}  {'source':<8} "
    f"{'window':>9}  {'window':<8} {'fill':>7}  {'cmp':>3} {'added':>6}  biggest item"
)


def _tokens_text(call: ModelCall) -> str:
    return f"{call.tokens:,}" if call.recorded else f"~{call.tokens:,}"


def call_row(call: ModelCall) -> str:
    """One call as a row of the table (an estimate marked `~` and `estimate`)."""
    model = call.model or "(not recorded)"
    if len(model) > 24:
        model = model[:23] + "…"
    if call.window is not None and call.window_source is not None:
        window, whence = f"{call.window:,}", call.window_source.value
        fill = f"{call.fill * 100:.1f} %" if call.fill is not None else "-"
    else:
        window, whence, fill = "-", "-", "-"
    compacted = str(len(call.compactions)) if call.compactions else ""
    biggest = ""
    if call.biggest_line is not None:
        biggest = (
            f"line {call.biggest_line:,}: {plural(call.biggest_chars, 'char')} "
            f"(~{estimate_tokens(call.biggest_chars):,} tokens, estimate)"
        )
    return (
        f"{call.number:>6,} {call.line:>9,}  {model:<24} {_tokens_text(call):>11}  "
        f"{call.source:<8} {window:>9}  {whence:<8} {fill:>7}  {compacted:>3} "
        f"{call.items_added:>6,}  {biggest}"
    ).rstrip()


def compaction_row(c: Compaction) -> str:
    """A compaction, between the calls it falls between."""
    words = [c.kind + (f" ({c.trigger})" if c.trigger else "")]
    if c.tokens_before is not None:
        words.append(f"{c.tokens_before:,} tokens before ({c.before_field})")
    if c.tokens_after is not None:
        words.append(f"{c.tokens_after:,} after")
    if c.tokens_saved is not None:
        words.append(f"{c.tokens_saved:,} saved")
    words.append(
        {
            "readable": "summary in the file",
            "encrypted": "summary not readable: encrypted by the provider",
        }.get(c.summary, "no summary (tool results cleared)" if not c.resets else "no summary")
    )
    what = "compaction" if c.resets else "microcompaction"
    return f"{'':>6} {c.line:>9,}  -- {what}, " + "; ".join(words)


def _header(path: Path, fmt: Format, calls: ModelCalls, window: int | None) -> list[str]:
    recorded = sum(1 for t in calls.tokens if t >= 0)
    estimated = len(calls) - recorded
    codes = {f for f, t in zip(calls.fields, calls.tokens, strict=True) if t >= 0}
    lines = [
        f"{path} ({fmt.label}): {plural(len(calls), 'model call')}, "
        f"{plural(len(calls.compactions), 'compaction')}"
    ]
    if recorded:
        fields = "; ".join(FIELDS[code] for code in sorted(codes))
        lines.append(f"  {recorded:,} sizes recorded in the file: {fields}")
    if estimated:
        lines.append(
            f"  {estimated:,} sizes estimated ({ESTIMATE_RULE}: the characters of what the file "
            "says was sent; the system prompt and tool definitions are not in it)"
        )
    if window is not None:
        lines.append(f"  window {window:,} where the file records none (--window)")
    return lines


def _footer(closest: ModelCall | None, over: int, over_assumed: bool) -> list[str]:
    """The last lines: the call that came closest to its window, and whether any call
    recorded more than a window the table assumed."""
    if closest is None:
        return ["no call has a window (none recorded, the model's not known): --window N sets one"]
    assert closest.fill is not None and closest.window_source is not None
    label = "" if closest.recorded else " (estimate)"
    lines = [
        f"closest to its window: call {closest.number:,}, line {closest.line:,}: "
        f"{_tokens_text(closest)}{label} of {closest.window:,} tokens "
        f"({closest.window_source.value}), {closest.fill * 100:.1f} %"
    ]
    if over_assumed:
        lines.append(
            f"{plural(over, 'call')} recorded more than its window: the session had a larger "
            "one than the table assumes (a 1M-context option?); --window N sets it"
        )
    return lines


def write_text(
    out: TextIO, path: Path, fmt: Format, calls: ModelCalls, window: int | None
) -> None:
    """The plain report, row by row (a gigabyte's is a few hundred thousand): a header, a
    row per call with the compactions in place, then the call that came closest to its
    window."""
    write = out.write
    for line in _header(path, fmt, calls, window):
        write(line + "\n")
    compactions = calls.compactions
    if not len(calls):
        write("no model calls\n")
        for c in compactions:
            write(compaction_row(c) + "\n")
        return
    write(_HEADER + "\n")
    closest: ModelCall | None = None
    over, over_assumed = 0, False
    k = 0
    for i in range(len(calls)):
        call = calls.call(i, window)
        while k < len(compactions) and compactions[k].line < call.line:
            write(compaction_row(compactions[k]) + "\n")
            k += 1
        write(call_row(call) + "\n")
        fill = call.fill
        if fill is not None and (closest is None or fill > cast(float, closest.fill)):
            closest = call
        if call.window and call.recorded and call.tokens > call.window:
            over += 1
            over_assumed = over_assumed or call.window_source is WindowSource.ASSUMED
    for c in compactions[k:]:
        write(compaction_row(c) + "\n")
    for line in _footer(closest, over, over_assumed):
        write(line + "\n")


def write_json(
    out: TextIO, path: Path, fmt: Format, calls: ModelCalls, window: int | None
) -> None:
    """`--json`: one object per call, one a line, then the summary object."""
    write = out.write
    closest: ModelCall | None = None
    for i in range(len(calls)):
        call = calls.call(i, window)
        write(_encode(call_dict(call)).decode() + "\n")
        fill = call.fill
        if fill is not None and (closest is None or fill > cast(float, closest.fill)):
            closest = call
    summary = summary_dict(path, fmt, calls, window, closest)
    write(_encode(summary).decode() + "\n")


def context_text(path: Path, fmt: Format, calls: ModelCalls, window: int | None) -> str:
    """`write_text`'s report, as one string."""
    out = io.StringIO()
    write_text(out, path, fmt, calls, window)
    return out.getvalue()


def context_json(path: Path, fmt: Format, calls: ModelCalls, window: int | None) -> str:
    """`write_json`'s lines, as one string."""
    out = io.StringIO()
    write_json(out, path, fmt, calls, window)
    return out.getvalue()


def run_context(
    path: Path,
    *,
    as_json: bool,
    window: int | None = None,
    format: Format | None = None,
    out: TextIO | None = None,
) -> int:
    """Print the model calls of one transcript; returns the exit status (0, or 2 for a FILE
    that cannot be read or is no transcript, said on stderr and, with `as_json`, as
    `--check --json` says it)."""
    out = out if out is not None else sys.stdout
    try:
        fmt, calls = read_calls(path, format)
    except (NotATranscript, TranscriptError) as exc:
        print(f"transcript-view: {exc}", file=sys.stderr)
        if as_json:
            out.write(refusal_json(path, str(exc)))
        return 2
    try:
        (write_json if as_json else write_text)(out, path, fmt, calls, window)
        out.flush()
    except BrokenPipeError:
        # The reader stopped (`| head`): not an error of the report's. Python's own flush
        # at exit would raise again on the closed pipe, so stdout goes nowhere from here.
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


"""Reading a Codex rollout: what the model saw, and every place its output was cut.

Codex never spills: it truncates a tool's output before the model sees it
and keeps nothing else, so every notice it leaves (CODEX.md, "Truncation
notices") is a marker with a "not stored" badge and the amount cut, and a
rollout has no sidecar directory. `response_item` lines are what went to and
came from the model; `event_msg` lines are the UI's record and are not read
for markers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from transcript_view.core.formats.claude_code import problem_findings, read_lines
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis, SpillForm, SpillSite
from transcript_view.core.formats.rules import site_notes
from transcript_view.core.transcript import Transcript

#: Payload types of `response_item` whose text is a tool's output the model was given.
OUTPUT_TYPES = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "mcp_tool_call_output",
        "tool_search_output",
    }
)

_NOTICES: tuple[tuple[SpillForm, re.Pattern[str]], ...] = (
    (
        SpillForm.LINES_OMITTED,
        re.compile(r"\[\.\.\. omitted (?P<n>[0-9]+) of (?P<total>[0-9]+) lines \.\.\.\]"),
    ),
    (
        SpillForm.BYTES_TRUNCATED,
        re.compile(r"\[\.\.\. output truncated to fit (?P<n>[0-9]+) bytes \.\.\.\]"),
    ),
    (SpillForm.CHARS_CUT, re.compile("\u2026(?P<n>[0-9]+) chars truncated\u2026")),
    (SpillForm.TOKENS_CUT, re.compile("\u2026(?P<n>[0-9]+) tokens truncated\u2026")),
    (SpillForm.ITEMS_OMITTED, re.compile(r"\[omitted (?P<n>[0-9]+) text items \.\.\.\]")),
)
_PREFIX = re.compile(
    r"\A(?:Warning: truncated output \(original token count: (?P<tokens>[0-9]+)\)\n)?"
    r"Total output lines: (?P<total>[0-9]+)\n"
)


@dataclass(frozen=True, slots=True)
class Notice:
    """One truncation notice in one output text."""

    start: int
    end: int
    form: SpillForm
    cut: str


def _cut(form: SpillForm, m: re.Match[str], total: str | None) -> str:
    n = int(m["n"])
    of = f" of a {int(total):,}-line output" if total else ""
    if form is SpillForm.LINES_OMITTED:
        return f"{n:,} of {int(m['total']):,} lines"
    if form is SpillForm.BYTES_TRUNCATED:
        return f"everything past {n:,} bytes{of}"
    if form is SpillForm.CHARS_CUT:
        return f"{n:,} characters{of}"
    if form is SpillForm.TOKENS_CUT:
        return f"{n:,} tokens{of}"
    return f"{n:,} text items"


def find_notices(text: str) -> list[Notice]:
    """Every truncation notice in one output, in order.

    The `Total output lines:` prefix goes with the notice below it (one cut, one
    marker); alone, it is the marker (the output was cut, how is not said).
    """
    prefix = _PREFIX.match(text)
    total = prefix["total"] if prefix is not None else None
    found = []
    if "truncated" in text or "omitted" in text:
        for form, pattern in _NOTICES:
            for m in pattern.finditer(text):
                found.append(Notice(m.start(), m.end(), form, _cut(form, m, total)))
    if prefix is not None and not found:
        cut = f"part of {int(prefix['total']):,} lines"
        found.append(Notice(prefix.start(), prefix.end() - 1, SpillForm.TOTAL_LINES, cut))
    found.sort(key=lambda n: n.start)
    return found


def output_texts(output: object) -> Iterable[tuple[int, str]]:
    """An output's text parts as (part index, text): 0.40's JSON string decoded, lists split."""
    if isinstance(output, str):
        if output.startswith('{"output"'):
            try:
                inner = json.loads(output)
            except ValueError:
                inner = None
            if isinstance(inner, Mapping) and isinstance(inner.get("output"), str):
                yield -1, inner["output"]
                return
        yield -1, output
    elif isinstance(output, Mapping):
        inner = output.get("output", output.get("content"))
        if isinstance(inner, str):
            yield -1, inner
        elif isinstance(inner, list):
            yield from output_texts(inner)
    elif isinstance(output, list):
        for i, item in enumerate(output):
            if isinstance(item, Mapping) and isinstance(item.get("text"), str):
                yield i, item["text"]


def output_parts(output: object) -> Iterator[tuple[int, int, str]]:
    """(part, base, text) of an output: `base` is where the part starts in the
    output's seen text (its parts joined by one LF), what marker offsets count in."""
    base = 0
    for part, text in output_texts(output):
        yield part, base, text
        base += len(text) + 1


@dataclass(slots=True)
class CodexPass:
    """One pass over a Codex rollout, fed lines in file order."""

    transcript: Transcript
    analysis: SessionAnalysis
    calls: dict[str, str] = field(default_factory=dict)
    """call_id -> tool name, from `function_call` items."""

    def feed(self, line: int, offset: int, raw: bytes, *, is_last: bool) -> None:
        """Take one line."""
        a = self.analysis
        parsed = a.take(line, offset, raw, is_last=is_last)
        if parsed is None:
            return
        kind = parsed.get("type")
        payload = parsed.get("payload")
        if kind == "response_item" and isinstance(payload, Mapping):
            self._item(line, payload)

    def _item(self, line: int, item: Mapping[str, Any]) -> None:
        kind = item.get("type")
        call_id = item.get("call_id")
        call_id = call_id if isinstance(call_id, str) else None
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            name = item.get("name")
            if call_id is not None:
                self.calls[call_id] = name if isinstance(name, str) else str(kind)
            return
        if kind not in OUTPUT_TYPES:
            return
        sites = self.analysis.sites
        for part, base, text in output_parts(item.get("output")):
            for notice in find_notices(text):
                sites.append(
                    SpillSite(
                        line=line,
                        offset=base + notice.start,
                        format=Format.CODEX,
                        form=notice.form,
                        block=-1,
                        part=part,
                        start=notice.start,
                        end=notice.end,
                        cut=notice.cut,
                        tool_use_id=call_id,
                        tool=self.calls.get(call_id) if call_id is not None else None,
                        text=text[notice.start : notice.end],
                    )
                )

    def finish(self, lines: int) -> SessionAnalysis:
        """Turn problems into findings and note every cut."""
        a = self.analysis
        a.lines = lines
        a.findings = problem_findings(a.problems)
        for site in a.sites:
            a.findings.extend(site_notes(site))
        a.findings.sort(key=lambda f: f.line or 0)
        return a


def analyse_codex(
    transcript: Transcript, progress: Callable[[int, int], None] | None = None
) -> SessionAnalysis:
    """One pass over a Codex rollout (it has no sidecars, so nothing else is read)."""
    p = CodexPass(transcript, SessionAnalysis(Format.CODEX, transcript, None))
    lines = read_lines(
        transcript, lambda n, off, raw, last: p.feed(n, off, raw, is_last=last), progress
    )
    return p.finish(lines)

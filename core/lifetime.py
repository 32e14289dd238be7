"""Where each message lived: which model calls had a line in their context, and what it cost.

"Why did it forget X?" is answered line by line: a message or tool result is in
the context of every call after it, until the first compaction after it that
starts the context over (`Compaction.resets`), the microcompaction that cleared
it (Claude Code: a `[Old tool result content cleared]` stand-in stayed), or the
rewind that left its branch (Claude Code: the conversation went on from an
earlier line); else it is still in context at the last call. One rule, here:
the file view words it, and any other reader asks the same functions.

What a line cost is said exactly only where the file records it: when two
consecutive calls both record their size and nothing was added between them
but the earlier call's response and this line, the difference of their sizes
is this line with that response ("from usage (with the turn that asked for
it)"); a Claude Code attachment between them (context of unrecorded size)
rules it out. Anywhere else it is an estimate, characters / 4 (`core.calls`), and
labelled "estimate". A result spilled or cut before the model saw it says
what it cost (its marker and preview) against what the whole output would
have cost (the size its sidecar, its record or its marker states, / 4).

Everything here is a bisection on `ModelCalls.lines` (a few per line asked
about), never a loop over the calls: the file view asks per block it draws.
Only the exact cost reads lines: those between the two calls around the line.

Known limits, said where they show: an LLM::Agent message an elision stubbed is
counted as in context until a compaction drops it (its stub is what stays); a
Codex `compacted` record's `replacement_history` may carry a copy of a message
it dropped (the copy is the compaction's line, not the message's).

Claude Code's rule is the chain of parents, the one `core.call_context` walks to
list a call's context: the pass records where the chain does not go on to the
line before (`SessionAnalysis.branches`: rewinds, retries, forks, lines that name
no parent; `sides`: a batch's results hung off their own calls), so a line can
leave at a rewind and come back when a later branch goes on from after it
("calls 9–13 and 22"). Where a chain names a parent the file does not hold, the
model view says so and the lifetime takes the line before as its parent.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from transcript_view.core.call_context import call_at_line
from transcript_view.core.calls import Compaction, ModelCalls, estimate_tokens
from transcript_view.core.envelopes import Compaction as CompactionEnvelope
from transcript_view.core.envelopes import Message
from transcript_view.core.formats import copilot, gemini, opencode, qwen
from transcript_view.core.formats.claude_code import result_texts
from transcript_view.core.formats.codex import (
    COMPACTION_ITEMS,
    GHOST,
    MODEL_ITEMS,
    OUTPUT_TYPES,
    item_chars,
)
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis, SpillForm, SpillSite
from transcript_view.core.records import MarkerSite
from transcript_view.core.transcript import Transcript, parse_json_line
from transcript_view.core.transcript import parse_line_bytes as parse_envelope

if TYPE_CHECKING:
    from transcript_view.core.analysis import Analysis

__all__ = [
    "CompactionFigures",
    "Cost",
    "Lifetime",
    "Lifetimes",
    "compaction_figures",
    "is_compaction_summary",
    "lifetime",
]

#: How a lifetime ended (`Lifetime.end`).
STILL, NEVER, COMPACTED, CLEARED, REWOUND = "still", "never", "compaction", "cleared", "rewind"

#: Where a Claude Code chain of parents goes at a jump, when not to a line (`Lifetimes`).
_ROOT, _RESET, _CLEARED = 0, -1, -2
_END = {_ROOT: REWOUND, _RESET: COMPACTED, _CLEARED: CLEARED}

#: The most lines the exact cost reads between two calls: past it, an estimate.
COST_SCAN_LINES = 2_000


# -- which calls had it ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Lifetime:
    """The calls whose context held one line's message or tool result."""

    line: int
    first: int | None
    """The first such call's number (1-based), None: no call had it."""
    last: int | None
    end: str
    """`still` (in context at the last call), `never` (no call after it), `compaction`,
    `cleared` (a microcompaction), `rewind` (its branch was abandoned)."""
    end_line: int | None = None
    """The line that ended it (the compaction, microcompaction or rewind)."""
    branched_from: int | None = None
    """For a rewind: the line the conversation went on from (0: a line that names no
    parent, where the chain of parents starts over)."""
    spans: tuple[tuple[int, int], ...] = ()
    """Claude Code: the runs of calls that had it, (first, last), when there are several
    (a later branch went on from a line after it and brought it back); () when one run
    (`first`–`last`)."""

    @property
    def calls(self) -> int:
        """How many calls had it."""
        if self.spans:
            return sum(last - first + 1 for first, last in self.spans)
        return self.last - self.first + 1 if self.first is not None and self.last else 0

    def _span_words(self) -> str:
        """"calls 12–57 (46 calls)", "call 3 (1 call)", "calls 9–13 and 22 (6 calls)"."""
        runs = self.spans or ((self.first or 0, self.last or 0),)
        if len(runs) == 1 and runs[0][0] == runs[0][1]:
            return f"call {runs[0][0]:,} (1 call)"
        said = [f"{a:,}" if a == b else f"{a:,}–{b:,}" for a, b in runs]
        listed = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
        return f"calls {listed} ({self.calls:,} calls)"

    def words(self) -> str:
        """"in context for calls 12–57 (46 calls); left at the compaction on line 3,210"."""
        why = self._why()
        if self.first is None or self.last is None:
            if self.end == NEVER or self.end_line is None:
                return "never sent: no call after it"
            if self.end == REWOUND:
                return f"never sent: its branch was left on line {self.end_line:,} before any call"
            return f"never sent: {why} came before any call"
        span = self._span_words()
        if self.end == STILL:
            return f"in context for {span}; still in context at the last call"
        if self.end == CLEARED:
            return (
                f"in context for {span}; cleared at {why} (a stand-in stayed: "
                "[Old tool result content cleared])"
            )
        return f"in context for {span}; left at {why}"

    def _why(self) -> str:
        at = f"line {self.end_line:,}" if self.end_line is not None else "?"
        if self.end == CLEARED:
            return f"the microcompaction on {at}"
        if self.end == REWOUND:
            back = self.branched_from
            if back == 0:
                return f"{at}, where the conversation started over (the line names no parent)"
            went = f"went back to line {back:,}" if back is not None else "branched"
            return f"{at}, where the conversation {went} (a rewind, retry or fork)"
        return f"the compaction on {at}"


def lifetime(
    calls: ModelCalls,
    line: int,
    *,
    drops: Sequence[int] | None = None,
    cleared_at: int | None = None,
) -> Lifetime:
    """Which calls had `line` in their context: from the first call after it to the last one
    before whatever removed it.

    Args:
        calls: the transcript's model calls.
        line: the line of the message or tool result.
        drops: the sorted lines of the compactions that drop it (default: every compaction
            that starts the context over, `Compaction.resets`).
        cleared_at: the microcompaction that cleared it, if one did.
    """
    if drops is None:
        drops = [c.line for c in calls.compactions if c.resets]
    lines = calls.lines
    first = bisect_right(lines, line)
    end, end_line = STILL, None
    at = bisect_right(drops, line)
    if at < len(drops):
        end, end_line = COMPACTED, drops[at]
    if cleared_at is not None and cleared_at > line and (end_line is None or cleared_at < end_line):
        end, end_line = CLEARED, cleared_at
    stop = bisect_left(lines, end_line) if end_line is not None else len(lines)
    if first >= stop:
        return Lifetime(line, None, None, NEVER if end_line is None else end, end_line)
    return Lifetime(line, first + 1, stop, end, end_line)


# -- what it cost ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cost:
    """What a line cost in the context, in tokens, and how that is known."""

    tokens: int
    from_usage: bool
    """Exact: the difference of two consecutive calls' recorded sizes (`with`)."""
    with_: str = ""
    """What the difference also holds ("the turn that asked for it"); "" when only the line."""
    calls: tuple[int, int] | None = None
    """The two calls' numbers the difference is of."""
    full_tokens: int | None = None
    """For a spilled or cut result: what its whole output would have cost (an estimate)."""
    full_basis: str = ""
    """Where the whole output's size comes from, and how it became tokens."""

    def words(self) -> str:
        """"~1,234 tokens from usage (with the turn that asked for it)", or "… estimate"."""
        if self.from_usage:
            said = f"~{self.tokens:,} tokens from usage"
            if self.calls is not None:
                said += f" (calls {self.calls[0]:,}→{self.calls[1]:,}"
                said += f", with {self.with_})" if self.with_ else ")"
        else:
            said = f"~{self.tokens:,} tokens (estimate: characters / 4)"
        if self.full_tokens is not None:
            said += (
                f"; the whole output would have cost ~{self.full_tokens:,} tokens "
                f"(estimate: {self.full_basis})"
            )
        return said


def line_chars(fmt: Format, obj: object) -> int:
    """The characters of a line's item as an estimate of the context counts them: what each
    format's pass counts (`core.formats.claude_lines`, `core.formats.codex.item_chars`,
    `core.analysis`): texts, tool results' texts, tool calls' input; not thinking or images.

    `obj` is the decoded line (the reference's: its envelope).
    """
    if fmt is Format.REFERENCE:
        if isinstance(obj, Message):
            return len(obj.content) + sum(len(c.arguments) for c in obj.tool_calls)
        if isinstance(obj, CompactionEnvelope):
            return len(obj.summary)
        return 0
    if not isinstance(obj, Mapping):
        return 0
    if fmt is Format.QWEN:
        return qwen.record_chars(obj)
    if fmt is Format.GEMINI:
        return gemini.record_chars(obj)
    if fmt is Format.OPENCODE:
        return opencode.record_chars(obj)
    if fmt is Format.COPILOT:
        return copilot.record_chars(obj)
    if fmt is Format.CODEX:
        item = obj.get("payload")
        if obj.get("type") != "response_item" or not isinstance(item, Mapping):
            return 0
        args = item.get("arguments")
        return item_chars(
            item.get("type"),
            item.get("content"),
            args,
            item.get("input"),
            item.get("output"),
            item.get("summary"),
        )
    message = obj.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return len(content)
    if not isinstance(content, list):
        return 0
    chars = sum(len(text) for _, _, _, text, _ in result_texts(content))
    for block in content:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            chars += len(block["text"])
        elif block.get("type") == "tool_use" and block.get("input") is not None:
            chars += len(_compact(block["input"]))
    return chars


def _compact(value: object) -> str:
    """A tool call's input as its JSON text (the pass's `_json_chars`)."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return ""


#: What a line is to the calls around it (`_role`): the model's, an input, neither, or a reset
#: (a compaction, or context of unrecorded size: no difference across it is exact).
MODEL, INPUT, RESET = "model", "input", "reset"


def _role(fmt: Format, raw: bytes, line: int, offset: int) -> tuple[str | None, object]:
    """Whether a line is an item of the model's response, an input, a compaction, or none of
    the context (each format's pass's rule for its items), and the line decoded."""
    if fmt is Format.REFERENCE:
        env = parse_envelope(raw, line, offset)
        if isinstance(env, Message):  # an `injected` turn is the application's, no call's
            model = env.role == "assistant" and env.payload.get("injected") is not True
            return (MODEL if model else INPUT), env
        if isinstance(env, CompactionEnvelope):
            return RESET, env
        return None, env
    obj = parse_json_line(raw, line, offset)
    if not isinstance(obj, Mapping):
        return None, obj
    kind = obj.get("type")
    if fmt is Format.QWEN:
        return qwen.record_role(obj), obj
    if fmt is Format.GEMINI:
        return gemini.record_role(obj), obj
    if fmt is Format.OPENCODE:
        return opencode.record_role(obj), obj
    if fmt is Format.COPILOT:
        return copilot.record_role(obj), obj
    if fmt is Format.CLAUDE_CODE:
        # An attachment is context Claude Code adds to the next request, its size unrecorded:
        # a difference across one is not the items' alone.
        roles = {"assistant": MODEL, "user": INPUT, "attachment": RESET}
        return roles.get(kind) if isinstance(kind, str) else None, obj
    if kind == "compacted":
        return RESET, obj
    if kind != "response_item":
        return None, obj
    item = obj.get("payload")
    what = item.get("type") if isinstance(item, Mapping) else None
    if not isinstance(item, Mapping):
        return None, obj
    if not isinstance(what, str):
        return INPUT, obj
    if what == GHOST:
        return None, obj
    if what in COMPACTION_ITEMS:
        return RESET, obj
    if what in OUTPUT_TYPES:
        return INPUT, obj
    if what == "message":
        return (MODEL if item.get("role") == "assistant" else INPUT), obj
    return (MODEL if what in MODEL_ITEMS else INPUT), obj


def _is_result(fmt: Format, obj: object) -> bool:
    """Whether a decoded line is a tool's result (what a call asked for)."""
    if isinstance(obj, Message):
        return obj.role == "tool"
    if not isinstance(obj, Mapping):
        return False
    if fmt is Format.QWEN:
        return qwen.is_tool_result(obj)
    if fmt is Format.GEMINI:
        return False  # results are in the model's own message (`toolCalls[].result`)
    if fmt is Format.OPENCODE:
        return opencode.is_tool_result(obj)
    if fmt is Format.COPILOT:
        return copilot.is_tool_result(obj)
    if fmt is Format.CODEX:
        item = obj.get("payload")
        return isinstance(item, Mapping) and item.get("type") in OUTPUT_TYPES
    message = obj.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content
    )


def _lines(transcript: Transcript, first: int, last: int) -> Iterator[tuple[int, int, bytes]]:
    for start, offset, parts in transcript.raw_chunks(first, last):
        at = start
        for raw in parts:
            yield at, offset, raw
            offset += len(raw) + 1
            at += 1


def cost(
    calls: ModelCalls,
    fmt: Format,
    transcript: Transcript,
    line: int,
    *,
    full: tuple[int, str] | None = None,
) -> Cost:
    """What `line`'s item cost in the context: from usage where the file lets it be exact,
    else an estimate.

    Exact when the calls k−1 and k around it (k the first call after it) both record
    their size, no compaction came between them, and the items added between them
    (`ModelCalls.added`, read back: the lines between the two calls') are call k−1's
    response and at most one input: then `tokens[k] − tokens[k−1]` is that response and
    that input, and it is this line's cost (with the turn that asked for it, when the
    line is the input; with the rest of its response, when the line is the model's).

    Args:
        full: a spilled or cut result's whole output, (tokens, where the size comes from).
    """
    index = bisect_right(calls.lines, line)
    chars: int | None = None
    exact = _exact(calls, fmt, transcript, line, index)
    if exact is not None:
        tokens, with_, chars = exact
        if tokens > 0:
            return Cost(tokens, True, with_, (index, index + 1), *(full or (None, "")))
    if chars is None:
        chars = _chars_of(fmt, transcript, line)
    return Cost(estimate_tokens(chars), False, "", None, *(full or (None, "")))


def _chars_of(fmt: Format, transcript: Transcript, line: int) -> int:
    try:
        start, _ = transcript.line_span(line)
        _, obj = _role(fmt, transcript.raw_line(line), line, start)
    except (OSError, ValueError, IndexError):
        return 0
    return line_chars(fmt, obj)


def _exact(
    calls: ModelCalls, fmt: Format, transcript: Transcript, line: int, index: int
) -> tuple[int, str, int | None] | None:
    """(tokens, what they hold besides the line, the line's characters), or None: not exact."""
    if index < 1 or index >= len(calls):
        return None
    before, after = calls.tokens[index - 1], calls.tokens[index]
    if before < 0 or after < 0:
        return None
    lo, hi = calls.lines[index - 1], calls.lines[index]
    if hi - lo > COST_SCAN_LINES or calls.compactions_between(lo, hi):
        return None
    models = inputs = 0
    mine: str | None = None
    chars: int | None = None
    result = False
    try:
        for at, offset, raw in _lines(transcript, lo, hi - 1):
            role, obj = _role(fmt, raw, at, offset)
            if role is None:
                continue
            if role == RESET:
                return None
            if at == line:
                mine, chars, result = role, line_chars(fmt, obj), _is_result(fmt, obj)
            if role == MODEL:
                if inputs:
                    return None  # the model's after an input: not one response
                models += 1
            else:
                inputs += 1
    except (OSError, ValueError, IndexError):
        return None
    if mine is None or models + inputs != calls.added[index] or inputs > 1:
        return None
    if mine == INPUT:
        asked = "the turn that asked for it" if result else "the response before it"
        return after - before, (asked if models else ""), chars
    if inputs:
        return None  # the difference holds an input too
    return after - before, ("the rest of its response" if models > 1 else ""), chars


# -- spilled and cut results ---------------------------------------------------------------------

#: Claude Code's printed sizes (`formatFileSize`: KB of 1024).
_SIZE = re.compile(r"([0-9][0-9,]*(?:\.[0-9]+)?)\s*(bytes|KB|MB|GB)\b")
_UNITS = {"bytes": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
#: Codex's own counts of what it cut (CODEX.md, "Truncation notices").
_CODEX_CUT = re.compile("\u2026([0-9]+) (chars|tokens) truncated\u2026")
_CODEX_ORIGINAL = re.compile(r"original token count: ([0-9]{1,18})\)")


def full_output(site: object, shown_chars: int) -> tuple[int, str] | None:
    """What a spilled or cut result's whole output would have cost, in tokens, and where its
    size comes from (an estimate: characters or bytes / 4, or the count Codex wrote in its
    notice); None: the file does not say.

    `shown_chars` is what the model got of it (a Codex cut adds what it cut to that).
    """
    if isinstance(site, MarkerSite):
        size = site.marker.bytes
        return (estimate_tokens(size), "the artifact's bytes / 4") if size > 0 else None
    if not isinstance(site, SpillSite):
        return None
    if site.persisted_size is not None:
        return estimate_tokens(site.persisted_size), "persistedOutputSize, in bytes, / 4"
    if site.inline_chars is not None:
        where = site.inline_field or "Claude Code's record"
        return estimate_tokens(site.inline_chars), f"{where}'s characters / 4"
    if site.size_text:
        m = _SIZE.search(site.size_text)
        if m is not None:
            n = float(m[1].replace(",", "")) * _UNITS[m[2]]
            return estimate_tokens(int(n)), f"the marker's size {site.size_text} / 4"
    m = _CODEX_CUT.search(site.text)
    if m is not None and site.form in (SpillForm.CHARS_CUT, SpillForm.TOKENS_CUT):
        n = int(m[1])
        if m[2] == "tokens":
            return estimate_tokens(shown_chars) + n, "the characters shown / 4, and the tokens cut"
        return estimate_tokens(shown_chars + n), "the characters shown and cut / 4"
    m = _CODEX_ORIGINAL.search(site.text)
    if m is not None:
        return int(m[1]), "Codex's own count of the original output (original token count)"
    return None


# -- an analysis's lifetimes -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Lifetimes:
    """Every line's lifetime in one analysis: what `lifetime` needs, indexed once.

    Built from the analysis (a few numbers a compaction, microcompaction or rewind),
    then asked per line: a bisection each.
    """

    calls: ModelCalls
    format: Format
    drops: tuple[int, ...]
    """The lines of the compactions that start the context over."""
    spans: Mapping[int, tuple[int, int]]
    """LLM::Agent: each compaction's line -> the lines it replaced (`Analysis.compactions`)."""
    cleared: Mapping[int, int]
    """Claude Code: a cleared result's line -> the first microcompaction that cleared it."""
    sites: Mapping[int, list[Any]]
    sides: tuple[tuple[int, int], ...] = ()
    """Claude Code: (a line beside its batch, the line it hangs off), in file order."""
    jump_lines: tuple[int, ...] = ()
    """Claude Code: every line where the chain of parents does not go on to the line
    before, in order (`_jumps`)."""
    jump_to: tuple[int, ...] = ()
    """Where each goes instead: a line (a branch, or a line beside its batch), `_ROOT`
    (the line names no parent) or `_RESET` (a compaction)."""
    analysis: SessionAnalysis | None = field(default=None, repr=False, compare=False)
    """Claude Code: the analysis, to find the response a line is part of."""

    @classmethod
    def of(
        cls, analysis: Analysis | SessionAnalysis, sites: Mapping[int, list[Any]] | None = None
    ) -> Lifetimes:
        """The lifetimes of `analysis`'s lines; `sites`: its marker sites by line, when the
        caller has them indexed already (else they are indexed here)."""
        calls = analysis.calls
        if sites is None:
            by_line: dict[int, list[Any]] = {}
            for site in analysis.sites:
                by_line.setdefault(site.line, []).append(site)
            sites = by_line
        if isinstance(analysis, SessionAnalysis):
            cleared: dict[int, int] = {}
            for m in analysis.microcompactions:
                for c in m.cleared:
                    if c.result is not None:
                        cleared.setdefault(c.result, m.line)
            drops = tuple(c.line for c in calls.compactions if c.resets)
            sides = tuple(sorted(analysis.sides))
            claude = analysis.format is Format.CLAUDE_CODE
            jump_lines, jump_to = _jumps(analysis.branches, sides, drops) if claude else ((), ())
            return cls(
                calls,
                analysis.format,
                drops,
                {},
                cleared,
                sites,
                sides,
                jump_lines,
                jump_to,
                analysis if claude else None,
            )
        return cls(calls, Format.REFERENCE, (), dict(analysis.compactions), {}, sites)

    def at(self, line: int, *, kept: bool = False) -> Lifetime:
        """`line`'s lifetime; `kept`: an LLM::Agent message no compaction drops (sticky)."""
        if self.format is Format.CLAUDE_CODE:
            return self._on_chains(line)
        drops: Sequence[int] = self.drops
        if self.format is Format.REFERENCE:
            drops = () if kept else self._dropping(line)
        return lifetime(self.calls, line, drops=drops, cleared_at=self.cleared.get(line))

    def _dropping(self, line: int) -> list[int]:
        """The LLM::Agent compactions that replaced `line` (a few: compactions are rare)."""
        return sorted(at for at, (lo, hi) in self.spans.items() if lo <= line <= hi and at > line)

    def _carried(self, target: int) -> list[tuple[int, bool, int]]:
        """Claude Code: for the calls after `target`, whether their request carried it, as
        a step function of the call's response line: (from line, carried, the jump there).

        A request carries what the chain of parents of its response's parent holds
        (`core.call_context` walks that chain). Between two jumps the chain runs line by
        line, so whether a line on the run after jump `e` carries `target` is whether
        `e`'s parent did: known already, the jumps being visited in order (each a
        bisection, never a walk back along the chain).
        """
        start = bisect_right(self.jump_lines, target)
        seen = self.jump_lines[start:]
        held: list[bool] = []
        steps: list[tuple[int, bool, int]] = [(target + 1, True, 0)]
        for k, parent in enumerate(self.jump_to[start:]):
            if parent < target:  # a root, a compaction, or a line before it: not carried
                holds = False
            else:
                e = bisect_right(seen, parent, 0, k) - 1
                holds = held[e] if e >= 0 else True
            held.append(holds)
            steps.append((seen[k], holds, parent))
        return steps

    def _on_chains(self, line: int) -> Lifetime:
        """Claude Code: the calls whose request carried `line`, by the chain of parents
        (`_carried`); a line beside its batch is carried also where its parent is."""
        # A request carries a line on its chain, a line beside its batch when it carries
        # the line it hangs off, and a response's later line when it carries the response
        # (its first line): whatever carries any of these carries `line`.
        targets, todo = {line}, [line]
        while todo:
            for up in (self._side_parent(todo[-1]), self._response_head(todo.pop())):
                if up is not None and up not in targets:
                    targets.add(up)
                    todo.append(up)
        steps = self._carried(line)
        for up in sorted(targets - {line}):
            steps = _either(steps, _after(self._carried(up), line))
        cleared = self.cleared.get(line)
        if cleared is not None and cleared > line:
            steps = [s for s in steps if s[0] < cleared] + [(cleared, False, _CLEARED)]
        calls = self.calls.lines
        runs: list[tuple[int, int]] = []
        end, end_line, back = STILL, None, None
        for i, (at, carried, why) in enumerate(steps):
            hi = steps[i + 1][0] if i + 1 < len(steps) else None
            if carried:
                a = bisect_left(calls, at)
                b = bisect_left(calls, hi) if hi is not None else len(calls)
                if a < b:
                    if runs and runs[-1][1] == a:
                        runs[-1] = (runs[-1][0], b)
                    else:
                        runs.append((a + 1, b))
                end, end_line, back = STILL, None, None
            elif i and steps[i - 1][1]:
                end, end_line = _END.get(why, REWOUND), at
                back = why if why >= 0 else None
        if not runs:
            return Lifetime(line, None, None, NEVER if end == STILL else end, end_line, back)
        return Lifetime(
            line, runs[0][0], runs[-1][1], end, end_line, back, tuple(runs) if len(runs) > 1 else ()
        )

    def _response_head(self, line: int) -> int | None:
        """The first line of the response `line` is a later line of (Claude Code), or None."""
        if self.analysis is None:
            return None
        index = call_at_line(self.analysis, line)
        if index is None:
            return None
        head = self.calls.lines[index]
        return head if head < line else None

    def _side_parent(self, line: int) -> int | None:
        """The line a line beside its batch hangs off (`SessionAnalysis.sides`), or None."""
        sides = self.sides
        i = bisect_left(sides, (line, 0))
        return sides[i][1] if i < len(sides) and sides[i][0] == line else None

    def cost(self, transcript: Transcript, line: int) -> Cost:
        """What `line` cost (`cost`), with a spilled or cut result's whole output beside it."""
        full = None
        for site in self.sites.get(line, ()):
            if isinstance(site, MarkerSite) and site.quoted:
                continue
            if isinstance(site, SpillSite) and site.form is SpillForm.MICROCOMPACTED:
                continue
            shown = _chars_of(self.format, transcript, line)
            full = full_output(site, shown)
            if full is not None:
                break
        return cost(self.calls, self.format, transcript, line, full=full)

    def words(self, transcript: Transcript | None, line: int, *, kept: bool = False) -> str:
        """What the file view says under a message: its lifetime, then its cost."""
        said = self.at(line, kept=kept).words()
        if transcript is not None:
            said += " · " + self.cost(transcript, line).words()
        return said


def _jumps(
    branches: Sequence[tuple[int, int]],
    sides: Sequence[tuple[int, int]],
    drops: Sequence[int],
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Claude Code: every line where the chain of parents does not go on to the line
    before, in order, and where it goes instead (`Lifetimes.jump_lines`, `jump_to`)."""
    to: dict[int, int] = {}
    for line, parent in (*branches, *sides):
        to[line] = parent if parent > 0 else _ROOT
    for line in drops:
        to[line] = _RESET
    lines = tuple(sorted(to))
    return lines, tuple(to[n] for n in lines)


def _after(steps: list[tuple[int, bool, int]], line: int) -> list[tuple[int, bool, int]]:
    """A step function of `Lifetimes._carried` from the line after `line` on (the calls
    before a line cannot carry it, whatever carries the line it hangs off)."""
    i = bisect_right(steps, line + 1, key=lambda s: s[0])
    if i == 0:
        return steps
    return [(line + 1, steps[i - 1][1], 0), *steps[i:]]


def _either(
    a: list[tuple[int, bool, int]], b: list[tuple[int, bool, int]]
) -> list[tuple[int, bool, int]]:
    """Two step functions of `Lifetimes._carried` joined: carried where either carries it
    (before its first step, a function carries nothing)."""
    points = sorted({p for p, _, _ in a} | {p for p, _, _ in b})
    out: list[tuple[int, bool, int]] = []
    for p in points:
        value = False
        why = 0
        for steps in (a, b):
            i = bisect_right(steps, p, key=lambda s: s[0]) - 1
            if i >= 0:
                value = value or steps[i][1]
                if steps[i][0] == p:
                    why = steps[i][2]
        out.append((p, value, why))
    return out


# -- compactions in place ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompactionFigures:
    """A compaction's figures as the file view's compaction row says them."""

    compaction: Compaction
    before: int | None
    before_label: str
    after: int | None
    after_label: str

    def trigger_words(self, *, summary: bool = True) -> str:
        """"compaction · trigger auto" (the first row); `summary`: with what became of the
        summary when it cannot be read (a view that says so on its own row leaves it out)."""
        c = self.compaction
        what = "microcompaction" if not c.resets else (
            "truncation" if c.kind == "truncation" else "compaction"
        )
        said = f"{what} · trigger {c.trigger or 'not recorded'}"
        if c.tokens_saved is not None:
            said += f" · saved {c.tokens_saved:,} tokens (microcompactMetadata.tokensSaved)"
        if not summary:
            return said
        if c.summary == "encrypted":
            said += " · summary not readable: encrypted by the provider"
        elif c.summary == "none" and not c.resets:
            said += " · no summary: old tool results were cleared"
        return said

    def before_words(self) -> str:
        """"context before: 170,012 tokens (compactMetadata.preTokens)"."""
        if self.before is None:
            return "context before: not recorded (no call before it)"
        return f"context before: {self.before:,} tokens ({self.before_label})"

    def after_words(self) -> str:
        """"context after: 9,003 tokens (call 4, recorded)"."""
        if self.after is None:
            return "context after: no call after it"
        return f"context after: {self.after:,} tokens ({self.after_label})"


def compaction_figures(calls: ModelCalls, line: int) -> CompactionFigures | None:
    """The figures of the compaction on `line` (None: the calls record none there).

    Before: the size the record states (its field named), else the last call's before
    it (recorded or estimate). After: the size the record states (LLM::Agent's
    `tokens-after`), else the next call's.
    """
    found = calls.compactions
    at = bisect_left(found, line, key=_line_of)
    if at >= len(found) or found[at].line != line:
        return None
    c = found[at]
    index = bisect_left(calls.lines, line)
    before, before_label = c.tokens_before, c.before_field or ""
    if before is None and index > 0:
        call = calls.call(index - 1)
        before, before_label = call.tokens, f"call {call.number:,}'s size, {call.source}"
    after, after_label = c.tokens_after, c.after_field or "tokens-after"
    if after is None and index < len(calls):
        call = calls.call(index)
        after, after_label = call.tokens, f"call {call.number:,}'s size, {call.source}"
    return CompactionFigures(c, before, before_label, after, after_label)


def _line_of(c: Compaction) -> int:
    return c.line


def is_compaction_summary(fmt: Format, obj: object) -> bool:
    """Whether a decoded line is a compaction's summary on a line of its own (Claude Code's
    `isCompactSummary` user line): what the file view folds under the compaction."""
    return fmt is Format.CLAUDE_CODE and isinstance(obj, Mapping) and obj.get(
        "isCompactSummary"
    ) is True


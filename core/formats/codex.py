"""Reading a Codex rollout: what the model saw, and every place its output was cut.

Codex never spills: it truncates a tool's output before the model sees it
and keeps nothing else, so every notice it leaves (CODEX.md, "Truncation
notices") is a marker with a "not stored" badge and the amount cut, and a
rollout has no sidecar directory. `response_item` lines are what went to and
came from the model; `event_msg` lines are the UI's record and are not read
for markers.

The pass is a map and a fold (`batches`): `map_codex` reads a run of lines
into a `CodexBatch` (in a worker process, for a big file), and `CodexPass`
folds the batches in file order; the call an output answers, when it was made
before the output's batch, is named at the end.

The same pass lists the model calls (`core.calls`): a run of the model's items
(an assistant message, reasoning, tool calls) is one call, and the `token_count`
event after it records the size of the context it was sent and its window.
"""

from __future__ import annotations

import json
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from transcript_view.core.calls import (
    CODEX_TOKEN_COUNT,
    FIGURE_FORMAT,
    FOLDS,
    INHERITED,
    ROW_FORMAT,
    CallFold,
    CallRun,
    Compaction,
)
from transcript_view.core.decoding import Measure, Measured, decode_line, decoded_lines
from transcript_view.core.formats.batches import (
    LATER,
    Later,
    LineIndex,
    fold_mapped,
)
from transcript_view.core.formats.claude_code import problem_findings
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis, SpillForm, SpillSite
from transcript_view.core.formats.rules import site_notes
from transcript_view.core.found import Found
from transcript_view.core.keys import KEY_CODE, IdKeys
from transcript_view.core.text import MAX_COUNT_DIGITS, count_of
from transcript_view.core.transcript import LineProblem, Transcript

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

#: Each notice where Codex writes it (`codex-rs/core/src/truncate.rs`): the line and byte
#: cuts stand on their own line (`\n[... omitted N of M lines ...]\n\n` between head and
#: tail), as does the omitted-items notice (a text item of its own); the character and
#: token cuts sit wherever the budget ran out, mid-line too (`head…N chars truncated…tail`).
#: The same words quoted inside a line of output are text.
_NOTICES: tuple[tuple[SpillForm, re.Pattern[str]], ...] = (
    (
        SpillForm.LINES_OMITTED,
        re.compile(
            r"^\[\.\.\. omitted (?P<n>[0-9]+) of (?P<total>[0-9]+) lines \.\.\.\]$", re.MULTILINE
        ),
    ),
    (
        SpillForm.BYTES_TRUNCATED,
        re.compile(
            r"^\[\.\.\. output truncated to fit (?P<n>[0-9]+) bytes \.\.\.\]$", re.MULTILINE
        ),
    ),
    (SpillForm.CHARS_CUT, re.compile("\u2026(?P<n>[0-9]+) chars truncated\u2026")),
    (SpillForm.TOKENS_CUT, re.compile("\u2026(?P<n>[0-9]+) tokens truncated\u2026")),
    (
        SpillForm.ITEMS_OMITTED,
        re.compile(r"^\[omitted (?P<n>[0-9]+) text items \.\.\.\]$", re.MULTILINE),
    ),
)
#: How `_PREFIX` starts when its warning line (which says "truncated") is not there.
_TOTAL = "Total output lines: "
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


def _amount(digits: str | None) -> str:
    """A count as a person reads it ("12,000"), or what it is when too long to read."""
    n = count_of(digits) if digits is not None else None
    return f"{n:,}" if n is not None else f"10^{MAX_COUNT_DIGITS} or more"


def _cut(form: SpillForm, m: re.Match[str], total: str | None) -> str:
    n = _amount(m["n"])
    of = f" of a {_amount(total)}-line output" if total else ""
    if form is SpillForm.LINES_OMITTED:
        return f"{n} of {_amount(m['total'])} lines"
    if form is SpillForm.BYTES_TRUNCATED:
        return f"everything past {n} bytes{of}"
    if form is SpillForm.CHARS_CUT:
        return f"{n} characters{of}"
    if form is SpillForm.TOKENS_CUT:
        return f"{n} tokens{of}"
    return f"{n} text items"


def find_notices(text: str) -> list[Notice]:
    """Every truncation notice in one output, in order.

    The `Total output lines:` prefix goes with the notice below it (one cut, one
    marker); alone, it is the marker (the output was cut, how is not said).
    """
    if "truncated" not in text and "omitted" not in text and not text.startswith(_TOTAL):
        return []  # most outputs: nothing `_PREFIX` or a notice could match
    prefix = _PREFIX.match(text)
    total = prefix["total"] if prefix is not None else None
    found = []
    if "truncated" in text or "omitted" in text:
        for form, pattern in _NOTICES:
            for m in pattern.finditer(text):
                found.append(Notice(m.start(), m.end(), form, _cut(form, m, total)))
    if prefix is not None and not found:
        cut = f"part of {_amount(prefix['total'])} lines"
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


# -- the map --------------------------------------------------------------------------------------
#
# A line is decoded into these shapes, which declare only what the pass reads, each
# field taking any JSON value (see `decoding.decode_line`).

_Other = list[Any] | str | int | float | bool | None


class Part(msgspec.Struct, gc=False):
    """A part of a message's `content` or a reasoning item's `summary` (its text counted)."""

    text: Any = None


class TokenUsage(msgspec.Struct, gc=False):
    """A `token_count`'s `last_token_usage`: `input_tokens` is the context sent."""

    input_tokens: Any = None


class TokenInfo(msgspec.Struct, gc=False):
    """A `token_count` event's `info` (CODEX.md: exact, from the file itself)."""

    last_token_usage: TokenUsage | _Other = None
    model_context_window: Any = None


_Parts = list[Part | _Other] | dict[str, Any] | str | int | float | bool | None


class Payload(msgspec.Struct, gc=False):
    """A line's `payload`, as far as the pass reads it: a `response_item`'s item, an
    `event_msg`'s event, a `turn_context`, a `compacted` record."""

    type: Any = None
    call_id: Any = None
    name: Any = None
    output: Any = None
    role: Any = None
    content: _Parts = None
    arguments: Any = None
    input: Any = None
    summary: _Parts = None
    model: Any = None
    """`turn_context`: the model of the calls that follow."""
    info: TokenInfo | _Other = None


class CompactedPayload(msgspec.Struct, gc=False):
    """A `compacted` record's payload (read apart: it is rare, and its history can be most
    of a file)."""

    message: Any = None
    """The summary."""
    replacement_history: Any = None
    """The history the model continued from (when recorded)."""


class CompactedLine(msgspec.Struct, gc=False):
    """A `compacted` line, as far as the pass reads it."""

    payload: CompactedPayload | _Other = None


_decode_compacted = msgspec.json.Decoder(CompactedLine).decode


class Line(msgspec.Struct, gc=False):
    """One rollout line, as far as the pass reads it."""

    type: Any = None
    payload: Payload | _Other = None


_decode = msgspec.json.Decoder(Line).decode

#: Item types that name a call (what its output's markers say they cut).
CALL_TYPES = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
#: Item types the model writes (with an assistant `message`): a run of them is one call's
#: response, which a `token_count` (or the next input) ends.
MODEL_ITEMS = CALL_TYPES | {
    "reasoning",
    "web_search_call",
    "image_generation_call",
    "tool_search_call",
}
#: Item types of a remote compaction, whose summary is encrypted (CODEX.md).
COMPACTION_ITEMS = frozenset({"compaction", "compaction_summary"})
#: An item kept for `/undo`, never sent to the model.
GHOST = "ghost_snapshot"


def _parts_chars(parts: object) -> int:
    """The characters of the texts of a list of parts (shapes, or dicts)."""
    if type(parts) is not list:
        return 0
    n = 0
    for part in parts:
        text = part.text if type(part) is Part else (
            part.get("text") if isinstance(part, Mapping) else None
        )
        if type(text) is str:
            n += len(text)
    return n


def item_chars(
    what: object, content: object, arguments: object, tool_input: object, output: object,
    summary: object,
) -> int:  # fmt: skip
    """The characters of an item that an estimate of the context counts: a message's
    texts, a call's arguments (or a custom tool's input), an output's texts, a reasoning
    item's summary (its encrypted content cannot be counted)."""
    if what == "message":
        return _parts_chars(content)
    if what in OUTPUT_TYPES:
        return sum(len(text) for _, text in output_texts(output))
    if what == "reasoning":
        return _parts_chars(summary)
    if type(arguments) is str:
        return len(arguments)
    if type(tool_input) is str:
        return len(tool_input)
    return 0


def _is_encrypted_compaction(entry: object) -> bool:
    return isinstance(entry, Mapping) and entry.get("type") in COMPACTION_ITEMS


def compacted(raw: bytes, line: int, offset: int) -> tuple[Compaction, list[int]]:
    """A `compacted` line: its record, and the characters of each item the context starts
    over with (the history it records, `replacement_history`, or else its summary)."""
    obj = decode_line(_decode_compacted, CompactedLine, raw, line, offset, is_last=False)
    payload = obj.payload if type(obj) is CompactedLine else None
    if type(payload) is not CompactedPayload:
        return Compaction(line, "compacted", summary="none"), []
    message, history = payload.message, payload.replacement_history
    if type(message) is str and message.strip():
        summary = "readable"
    elif type(history) is list and any(_is_encrypted_compaction(e) for e in history):
        summary = "encrypted"
    else:
        summary = "none"
    record = Compaction(line, "compacted", summary=summary)
    if type(history) is not list:
        return record, [len(message) if type(message) is str else 0]
    return record, [
        item_chars(
            entry.get("type"),
            entry.get("content"),
            entry.get("arguments"),
            entry.get("input"),
            entry.get("output"),
            entry.get("summary"),
        )
        for entry in history
        if isinstance(entry, Mapping) and entry.get("type") != GHOST
    ]


@dataclass(slots=True, eq=False)
class CodexBatch:
    """What the fold needs of lines `first` to `last` (made by `map_codex`)."""

    first: int
    last: int
    envelopes: int = 0
    types: dict[str, int] = field(default_factory=dict)
    problems: list[LineProblem] = field(default_factory=list)
    sites: list[SpillSite] = field(default_factory=list)
    late_sites: list[tuple[int, str]] = field(default_factory=list)
    """Sites whose call was made before the batch: (index in `sites`, call_id)."""
    call_keys: array[int] = field(default_factory=lambda: array(KEY_CODE))
    """The pass's key of each call item's call_id (see `batches.LineIndex`)."""
    call_lines: array[int] = field(default_factory=lambda: array("q"))
    calls: CallRun = field(default_factory=CallRun)
    """The model calls the batch's lines begin (a run of the model's items, up to the
    `token_count` that records its size), and what the context gained between them."""


def map_codex(
    transcript: Transcript, first: int, last: int, last_content: int, keys: IdKeys
) -> CodexBatch:
    """Read lines `first` to `last` of a rollout into a batch (pure: it reads the lines only)."""
    b = CodexBatch(first, last)
    problems = b.problems
    calls: dict[str, str] = {}  # call_id -> tool name, as the batch's lines so far say
    call_key, call_line = b.call_keys.append, b.call_lines.append
    kinds: list[str] = []  # each record's type, counted at the end (in C): one a line
    count = kinds.append
    # The model calls (`core.calls.CallRun`, written inline): a row each, and the items
    # (every item but a ghost snapshot) before each, their characters and the biggest.
    run = b.calls
    rows, add_row, pack, model_index = run.rows, run.rows.extend, ROW_FORMAT.pack, run.model_index
    put_figure, at_end = FIGURE_FORMAT.pack_into, -FIGURE_FORMAT.size
    items = context = started = 0
    big_line = big_chars = reset_at = -1
    model = INHERITED
    head: object = None
    target: object = FOLDS  # the row a recorded size goes to (FOLDS: the fold's; None: none)
    state: object = FOLDS  # whether a call's response is open (FOLDS: as the batch before left it)
    sized = True  # whether the batch's last call has the size a `token_count` recorded
    lines = decoded_lines(transcript.raw_chunks(first, last), _decode, Line, problems, last_content)
    for line, offset, raw, obj in lines:
        kind = obj.type
        kind = kind if type(kind) is str else "?"
        count(kind)
        item = obj.payload
        if type(item) is not Payload:
            continue
        if kind != "response_item":
            if kind == "event_msg":
                info = item.info
                if type(info) is TokenInfo and item.type == "token_count":
                    # The size of the last call's context and its window (CODEX.md: exact).
                    usage = info.last_token_usage
                    tokens = usage.input_tokens if type(usage) is TokenUsage else None
                    if type(tokens) is int and tokens >= 0:
                        state = False  # the call it follows is over
                        if not sized or type(target) is not int:
                            window = info.model_context_window
                            if type(window) is not int or window <= 0:
                                window = -1
                            if type(target) is int:  # the first count after a call is its own
                                put_figure(rows, len(rows) + at_end, tokens, CODEX_TOKEN_COUNT,
                                           window)  # fmt: skip
                                sized = True
                            elif target is FOLDS and run.head_figure is None:
                                run.head_figure = (tokens, CODEX_TOKEN_COUNT, window)
            elif kind == "turn_context":
                name = item.model
                if type(name) is str and name:
                    model = model_index(name)
            elif kind == "compacted":
                record, added = compacted(raw, line, offset)
                run.compactions.append(record)
                if reset_at < 0:
                    reset_at = started
                context, target, state = 0, None, False
                for chars in added:
                    items += 1
                    context += chars
                    if chars > big_chars:
                        big_line, big_chars = line, chars
            continue
        what = item.type
        if type(what) is not str:
            items += 1
            continue  # no call and no output
        if what in OUTPUT_TYPES:  # an input: what the model is sent next
            state = False
            call_id = item.call_id
            call_id = call_id if type(call_id) is str else None
            output = item.output
            if type(output) is str and not output.startswith('{"output"'):
                # `output_parts` of a plain string, written out: most outputs are one.
                chars = len(output)
                found = find_notices(output)
                if found:
                    _sites(b, calls, line, call_id, -1, 0, output, found)
            else:
                chars = 0
                for part, base, text in output_parts(output):
                    chars += len(text)
                    found = find_notices(text)
                    if found:
                        _sites(b, calls, line, call_id, part, base, text, found)
        elif what == "message":
            chars = 0
            content = item.content
            if type(content) is list:  # `item_chars`, written out for the commonest
                for piece in content:
                    if type(piece) is Part and type(piece.text) is str:
                        chars += len(piece.text)
            if item.role != "assistant":
                state = False  # an input
            elif state is not True:  # the model's: a response begins
                # No size yet (-1, 0, -1): its `token_count` comes after it.
                add_row(pack(line, model, context, items, big_line, big_chars, -1, 0, -1))
                items, big_line, big_chars, sized = 0, -1, -1, False
                target = started
                started += 1
                if state is FOLDS:
                    head = True  # it continues the fold's, if that one is still open
                state = True
        elif what in MODEL_ITEMS:
            if state is not True:  # a response begins
                add_row(pack(line, model, context, items, big_line, big_chars, -1, 0, -1))
                items, big_line, big_chars, sized = 0, -1, -1, False
                target = started
                started += 1
                if state is FOLDS:
                    head = True
                state = True
            call_id = item.call_id
            if what in CALL_TYPES and type(call_id) is str:
                name = item.name  # `_tool_of`, written out
                calls[call_id] = name if type(name) is str else what
                call_key(keys(call_id))
                call_line(line)
            arguments = item.arguments
            if type(arguments) is str:
                chars = len(arguments)
            else:
                chars = item_chars(what, None, None, item.input, None, item.summary)
        elif what == GHOST:
            continue
        else:
            if what in COMPACTION_ITEMS:
                run.compactions.append(Compaction(line, "compaction", summary="encrypted"))
                if reset_at < 0:
                    reset_at = started
                context, target, state = 0, None, False
            chars = item_chars(what, item.content, item.arguments, item.input, None, item.summary)
        items += 1
        context += chars
        if chars > big_chars:
            big_line, big_chars = line, chars
    run.items, run.big_line, run.big_chars, run.chars = items, big_line, big_chars, context
    run.reset_at, run.head, run.end, run.model = reset_at, head, state, model
    run.takes_figure = True if type(target) is int else False if target is None else None
    b.envelopes = len(kinds)
    b.types = dict(Counter(kinds))
    return b


def _tool_of(item: Payload, kind: str) -> str:
    """The tool a call item names: its `name`, or its type when it has none."""
    return item.name if type(item.name) is str else kind


def _sites(
    b: CodexBatch,
    calls: dict[str, str],
    line: int,
    call_id: str | None,
    part: int,
    base: int,
    text: str,
    notices: list[Notice],
) -> None:
    """One output text's truncation notices, each a site (the call made before the batch:
    its tool is the fold's to name)."""
    tool: str | Later | None = None
    if call_id is not None:
        tool = calls.get(call_id, LATER)
    for notice in notices:
        if tool is LATER:
            assert call_id is not None
            b.late_sites.append((len(b.sites), call_id))
        b.sites.append(
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
                tool=tool if type(tool) is str else None,
                text=text[notice.start : notice.end],
            )
        )


# -- the fold -------------------------------------------------------------------------------------


@dataclass(slots=True)
class CodexPass:
    """The fold of a Codex pass: batches of lines (`map_codex`), in file order.

    An output whose call was made before its batch is named at the end, from
    an index of the call items' lines (`batches.LineIndex`), not a dict of
    every call id.
    """

    transcript: Transcript
    analysis: SessionAnalysis
    calls: LineIndex = field(default_factory=LineIndex)
    """Call items' lines, by call_id."""
    id_keys: IdKeys = field(default_factory=IdKeys.new)
    """The keys of `calls` (the pass's own, given to every process that maps its lines)."""
    late_sites: list[tuple[int, str]] = field(default_factory=list)
    """Sites whose call was made before their batch: (index in the analysis's sites, call_id)."""
    model_calls: CallFold = field(default_factory=CallFold)
    """The model calls so far (the analysis's at the end)."""

    def read(
        self,
        progress: Callable[[int, int], None] | None,
        workers: int | None,
        found: Found | None = None,
        measure: Measure | None = None,
        measured: Measured | None = None,
    ) -> None:
        """Fold every indexed line of the rollout, mapped in batches (`batches.mapped`).

        With `measure`, each line is measured where it is mapped (`fold_mapped`).
        """
        fold_mapped(
            self.transcript,
            map_codex,
            self.id_keys,
            self.absorb,
            self.analysis,
            progress,
            workers,
            found,
            measure,
            measured,
        )

    def absorb(self, b: CodexBatch) -> None:
        """Fold the next batch."""
        a = self.analysis
        a.envelopes += b.envelopes
        a.type_counts.update(b.types)
        a.problems.extend(b.problems)
        at = len(a.sites)
        self.late_sites.extend((at + i, call_id) for i, call_id in b.late_sites)
        a.sites.extend(b.sites)
        self.calls.add(b.call_keys, b.call_lines)
        self.model_calls.absorb(b.calls)

    def finish(self, lines: int) -> SessionAnalysis:
        """Name the calls of the outputs that waited; turn problems into findings; note cuts."""
        a = self.analysis
        a.lines = lines
        a.calls = self.model_calls.calls
        found = self.calls.lines_of({self.id_keys(call_id) for _, call_id in self.late_sites})
        for i, call_id in self.late_sites:
            site = a.sites[i]
            tool = None
            for line in reversed(found.get(self.id_keys(call_id), ())):
                if line < site.line:
                    tool = self._call_at(line, call_id)
                    if tool is not None:
                        break
            a.sites[i] = replace(site, tool=tool)
        a.findings = problem_findings(a.problems)
        for site in a.sites:
            a.findings.extend(site_notes(site))
        a.findings.sort(key=lambda f: f.line or 0)
        return a

    def _call_at(self, line: int, call_id: str) -> str | None:
        """The tool a line's call item with this call_id names; None: it has none (a key
        two call ids share)."""
        start, _ = self.transcript.line_span(line)
        obj = decode_line(_decode, Line, self.transcript.raw_line(line), line, start, is_last=False)
        if type(obj) is not Line or obj.type != "response_item" or type(obj.payload) is not Payload:
            return None
        item = obj.payload
        kind = item.type
        if type(kind) is not str or kind not in CALL_TYPES or item.call_id != call_id:
            return None
        return _tool_of(item, kind)


def analyse_codex(
    transcript: Transcript,
    progress: Callable[[int, int], None] | None = None,
    *,
    workers: int | None = None,
    found: Found | None = None,
    measure: Measure | None = None,
    measured: Measured | None = None,
) -> SessionAnalysis:
    """One pass over a Codex rollout (it has no sidecars, so nothing else is read).

    Args:
        transcript: an indexed transcript.
        progress: called as `(lines_done, lines_total)` after each batch of lines.
        workers: processes to map lines in (default: `core.parallel.workers_for` its size).
        found: told the lines of markers and line problems as batches are read.
        measure: the caller's number for each line, taken where the line is mapped
            (`core.decoding.Measure`; the viewer's row count).
        measured: told each batch's measures, in file order.
    """
    p = CodexPass(transcript, SessionAnalysis(Format.CODEX, transcript, None))
    total = transcript.line_count
    p.read(progress, workers, found, measure, measured)
    analysis = p.finish(total)
    if progress is not None:
        progress(total, total)
    return analysis

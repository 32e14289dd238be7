"""The map of a Claude Code pass: what a run of lines says by itself, as plain data.

`map_claude` reads lines `first` to `last` and keeps, in a `ClaudeBatch`,
everything a line decides alone — its problem, its markers, the sidecars and
tool ids it names, its subagent link, its notes — and, for what earlier lines
decide, what the fold needs to decide it: a branch's parent, the response a
line may continue, a compaction's parent, the tool a result answers, and the
keys of the lines a far later one may ask for (`batches.LineIndex`). Those
are the fold's (`claude_code.ClaudePass`), which has every earlier line.

A line is decoded into the shapes below, which declare only the fields the
pass reads; each field accepts any JSON value, as `dict.get` does, so the
pass reads a field as it would read the dict (`type(x) is Message` where it
asked `isinstance(x, Mapping)`, `UNSET` where it asked `key in dict`).
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from transcript_view.core.calls import (
    CLAUDE_USAGE,
    FIGURE_FORMAT,
    FOLDS,
    ROW_FORMAT,
    CallRun,
    Compaction,
)
from transcript_view.core.decoding import decode_line, decoded_lines
from transcript_view.core.formats.batches import LATER, Later
from transcript_view.core.formats.claude_markers import (
    PREVIEW_UNITS,
    FoundSpill,
    basename,
    find_spills,
)
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SpillSite
from transcript_view.core.keys import KEY_CODE, IdKeys
from transcript_view.core.markers import is_safe_basename
from transcript_view.core.transcript import LineProblem, Transcript

#: Where sidecars live inside a session directory, and subagent transcripts.
TOOL_RESULTS = "tool-results"
SUBAGENTS = "subagents"

# -- the shapes --------------------------------------------------------------------------------
#
# Every declared field takes any JSON value: a container the pass reads into is a
# Struct in a union with every other kind of value (which the pass ignores, as it
# ignores a value that is not a Mapping), and a leaf is `Any`.

_Other = list[Any] | str | int | float | bool | None


class Part(msgspec.Struct, gc=False):
    """A part of a tool result's content list."""

    type: Any = None
    text: Any = None


class Block(msgspec.Struct, gc=False):
    """A content block: `tool_use` (assistant), `tool_result` (user), or another kind."""

    type: Any = None
    id: Any = None
    name: Any = None
    tool_use_id: Any = None
    content: list[Part | _Other] | dict[str, Any] | str | int | float | bool | None = None
    text: Any = None
    """A `text` block's text (what an estimate of the context counts)."""
    input: Any = None
    """A `tool_use` block's input (counted as its JSON text)."""


class Usage(msgspec.Struct, gc=False):
    """An assistant line's `message.usage`: the parts of the context's size (CLAUDE_CODE.md,
    "Token usage"). `output_tokens` is not read: it undercounts the response."""

    input_tokens: Any = None
    cache_read_input_tokens: Any = None
    cache_creation_input_tokens: Any = None


class Message(msgspec.Struct, gc=False):
    """A line's `message`."""

    id: Any = None
    content: list[Block | _Other] | dict[str, Any] | str | int | float | bool | None = None
    model: Any = None
    usage: Usage | _Other = None


class ToolUseResult(msgspec.Struct, gc=False):
    """The parts of `toolUseResult` (Claude Code's own record) the pass reads."""

    agentId: Any = None
    persistedOutputPath: Any | UnsetType = UNSET
    persistedOutputSize: Any = None
    stdout: Any = None
    stderr: Any | UnsetType = UNSET
    content: Any = None
    result: Any = None


class Replacement(msgspec.Struct, gc=False):
    """One entry of a `content-replacement` line."""

    toolUseId: Any = None
    replacement: Any = None


class CompactMetadata(msgspec.Struct, gc=False):
    """A `compact_boundary`'s `compactMetadata`."""

    trigger: Any = None
    preTokens: Any = None


class MicrocompactMetadata(msgspec.Struct, gc=False):
    """A `microcompact_boundary`'s `microcompactMetadata` (Claude Code 2.1.9+)."""

    trigger: Any = None
    preTokens: Any = None
    tokensSaved: Any = None
    compactedToolIds: Any = None


class Line(msgspec.Struct, gc=False):
    """One Claude Code line, as far as the pass reads it."""

    type: Any = None
    uuid: Any = None
    parentUuid: Any = None
    requestId: Any = None
    subtype: Any = None
    isCompactSummary: Any = None
    isMeta: Any = None
    sourceToolAssistantUUID: Any = None
    logicalParentUuid: Any = None
    compactMetadata: CompactMetadata | _Other = None
    microcompactMetadata: MicrocompactMetadata | _Other = None
    message: Message | _Other = None
    toolUseResult: ToolUseResult | _Other = None
    replacements: list[Replacement | _Other] | dict[str, Any] | str | int | float | bool | None = (
        None
    )


_decode = msgspec.json.Decoder(Line).decode


def read_line(raw: bytes, line: int, offset: int, *, is_last: bool) -> Line | LineProblem | None:
    """One line's shape, its problem, or None for a blank line."""
    return decode_line(_decode, Line, raw, line, offset, is_last=is_last)


# -- reading a user line's results ----------------------------------------------------------------


def result_parts(content: object) -> list[tuple[int, int, int, str, str | None]]:
    """`claude_code.result_texts` of a line's shape: (block, part, base, text, tool_use_id)."""
    out: list[tuple[int, int, int, str, str | None]] = []
    if type(content) is not list:
        return out
    base = 0
    for b, block in enumerate(content):
        if type(block) is not Block or block.type != "tool_result":
            continue
        tid = block.tool_use_id
        tid = tid if type(tid) is str else None
        inner = block.content
        if type(inner) is str:
            out.append((b, -1, base, inner, tid))
            base += len(inner) + 1
        elif type(inner) is list:
            for i, part in enumerate(inner):
                if type(part) is Part and part.type == "text":
                    text = part.text
                    if type(text) is str:
                        out.append((b, i, base, text, tid))
                        base += len(text) + 1
    return out


#: The fields of Claude Code's own record of a tool call (`toolUseResult`) that hold the
#: tool's output: Bash's `stdout`; Grep's, a Task's or an MCP tool's `content` (a string,
#: or text blocks); WebFetch's `result`. An MCP tool's record may be its output itself (a
#: string, or text blocks): that is `RECORD`. Others (Bash's `stderr`, Edit's
#: `originalFile`, Read's `file`) are not the result the model was given, or not whole.
OUTPUT_FIELDS = ("stdout", "content", "result")
RECORD = "toolUseResult"


def _texts_in(value: object) -> list[str] | None:
    """A record's value as the texts of an output: a string, or the texts of text blocks."""
    if type(value) is str:
        return [value]
    if type(value) is list:
        texts = [
            p["text"]
            for p in value
            if isinstance(p, Mapping) and p.get("type") == "text" and type(p.get("text")) is str
        ]
        return texts or None
    return None


def _outputs(record: object) -> Iterator[tuple[str, list[str]]]:
    """Each place a `toolUseResult` holds an output: (its name, its texts)."""
    if isinstance(record, Mapping):
        for name in OUTPUT_FIELDS:
            texts = _texts_in(record.get(name))
            if texts is not None:
                yield f"{RECORD}.{name}", texts
    else:
        texts = _texts_in(record)
        if texts is not None:
            yield RECORD, texts


def output_copy(record: object) -> tuple[str, int] | None:
    """Where Claude Code's own record holds the most of a tool's output: (the field, as
    `toolUseResult.stdout`, and its length in characters, text blocks joined by one LF).

    Only the length is kept (the text can be megabytes on one line); `output_text` reads
    the text again where it is shown.
    """
    best: tuple[str, int] | None = None
    for name, texts in _outputs(record):
        n = sum(map(len, texts)) + len(texts) - 1
        if best is None or n > best[1]:
            best = (name, n)
    return best


def output_text(record: object, field: str) -> str | None:
    """The text of `field` (an `output_copy` field) in a `toolUseResult`, as it counted it."""
    for name, texts in _outputs(record):
        if name == field:
            return "\n".join(texts)
    return None


@dataclass(frozen=True, slots=True)
class ResultContext:
    """What a tool result's line says about it, beyond its text (for its markers)."""

    tid: str | None
    tool: str | None
    bash: bool = False
    persisted_size: int | None = None
    persisted_name: str | None = None
    copy: tuple[str, int] | None = None
    """Where `toolUseResult` holds the most of the output, and its length (`output_copy`;
    the string itself is not kept: it can be 5 MB)."""


@dataclass(frozen=True, slots=True)
class LineRecord:
    """The `toolUseResult` facts every result of one line shares."""

    persisted_key: bool
    """`toolUseResult` has a `persistedOutputPath` (of any value): Bash wrote it."""
    stdout_bash: bool
    """`toolUseResult.stdout` is a string and `stderr` is there: Bash's shape."""
    persisted_size: int | None
    persisted_name: str | None
    copy: tuple[str, int] | None

    def context(self, tid: str | None, tool: str | None) -> ResultContext:
        """The context of a result of this line answering `tool`."""
        bash = tool == "Bash" or self.persisted_key or (tool is None and self.stdout_bash)
        return ResultContext(tid, tool, bash, self.persisted_size, self.persisted_name, self.copy)


_NO_RECORD = LineRecord(False, False, None, None, None)


def line_record(tur: object) -> LineRecord:
    """What a line's `toolUseResult` says that its results' markers carry."""
    if type(tur) is not ToolUseResult:
        copy = output_copy(tur) if tur is not None else None
        return _NO_RECORD if copy is None else LineRecord(False, False, None, None, copy)
    persisted = tur.persistedOutputPath
    size = tur.persistedOutputSize
    stdout = tur.stdout
    return LineRecord(
        persisted_key=persisted is not UNSET,
        stdout_bash=type(stdout) is str and tur.stderr is not UNSET,
        persisted_size=size if type(size) is int else None,
        persisted_name=basename(persisted) if type(persisted) is str else None,
        copy=output_copy({"stdout": stdout, "content": tur.content, "result": tur.result}),
    )


#: The most of a marker's own text kept on its site (what `c` copies).
MARKER_TEXT_CHARS = 400


def _inline(preview: str | None, copy: tuple[str, int] | None) -> tuple[str, int] | None:
    """The inline copy, when Claude Code's own record holds far more than the preview."""
    if preview is None or copy is None:
        return None
    if copy[1] > max(2 * len(preview), 2 * PREVIEW_UNITS):
        return copy
    return None


def make_site(
    line: int,
    base: int,
    block: int,
    part: int,
    text: str,
    found: FoundSpill,
    ctx: ResultContext,
    replaced_at: int | None = None,
) -> SpillSite:
    """The one way a Claude Code marker becomes a site (results and replacements alike)."""
    name = found.file
    inline = _inline(found.preview, ctx.copy)
    return SpillSite(
        line=line,
        offset=base + found.start,
        format=Format.CLAUDE_CODE,
        form=found.form,
        block=block,
        part=part,
        start=found.start,
        end=found.end,
        file=name,
        path=found.path,
        safe_name=name is None or is_safe_basename(name),
        size_text=found.size_text,
        preview=found.preview,
        has_more=found.has_more,
        cut=found.cut_words,
        tool_use_id=ctx.tid,
        tool=ctx.tool,
        bash=ctx.bash,
        persisted_size=ctx.persisted_size,
        persisted_name=ctx.persisted_name,
        inline_chars=inline[1] if inline is not None else None,
        inline_field=inline[0] if inline is not None else None,
        replaced_at=replaced_at,
        text=text[found.start : min(found.end, found.start + MARKER_TEXT_CHARS)],
    )


# -- model calls: their sizes, and what the context held ----------------------------------------

#: The `message.model` of an assistant line Claude Code writes itself, without calling the
#: model (an API error's stand-in, "No response requested."): no model call.
SYNTHETIC_MODEL = "<synthetic>"

_encode = msgspec.json.Encoder().encode


def usage_tokens(usage: object) -> int:
    """The size of the context a response's `message.usage` records (CLAUDE_CODE.md, "Token
    usage"): `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`, of
    those present; -1 when it records none."""
    if type(usage) is not Usage:
        return -1
    total, seen = 0, False
    for part in (usage.input_tokens, usage.cache_read_input_tokens,
                 usage.cache_creation_input_tokens):  # fmt: skip
        if type(part) is int and part >= 0:
            total += part
            seen = True
    return total if seen else -1


#: What an estimate of the context counts of a line (`core.calls`): its text, every tool
#: result's text and every tool call's input (as the length of its JSON text); thinking
#: blocks and images are not counted.


def _json_chars(value: object) -> int:
    """A tool call's input as the model was sent it: the length of its JSON text."""
    try:
        return len(_encode(value))
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError, msgspec.EncodeError):
        return 0


def _int_or_none(value: object) -> int | None:
    return value if type(value) is int else None


def claude_compaction(line: int, obj: Line) -> Compaction:
    """A `compact_boundary` or `microcompact_boundary` line as a compaction."""
    if obj.subtype == "microcompact_boundary":
        micro = obj.microcompactMetadata
        if type(micro) is not MicrocompactMetadata:
            return Compaction(line, "microcompact_boundary", summary="none", resets=False)
        return Compaction(
            line,
            "microcompact_boundary",
            micro.trigger if type(micro.trigger) is str else None,
            _int_or_none(micro.preTokens),
            "microcompactMetadata.preTokens",
            tokens_saved=_int_or_none(micro.tokensSaved),
            summary="none",
            resets=False,
        )
    meta = obj.compactMetadata
    if type(meta) is not CompactMetadata:
        return Compaction(line, "compact_boundary")
    return Compaction(
        line,
        "compact_boundary",
        meta.trigger if type(meta.trigger) is str else None,
        _int_or_none(meta.preTokens),
        "compactMetadata.preTokens",
    )


# -- the batch -------------------------------------------------------------------------------------

#: A note the fold finishes, in its line's list of notes (`ClaudeBatch.tags`), first field first:
#: `(FIRST_BRANCH, Branch)`: the batch's first conversation line (the line before it is the fold's);
FIRST_BRANCH = 0
#: `(BRANCH, Branch)`: a parent that is not the line before, nor any earlier line of the batch;
BRANCH = 1
#: `(CONTINUES, message id, request id)`: the batch's first assistant line, which may
#: continue the response of the fold's last one;
CONTINUES = 2
#: `(HEAD,)`: continues the response that the batch's first assistant line is part of;
HEAD = 3
#: `(COMPACTION, trigger, logicalParentUuid)`: a parent no earlier line of the batch has.
COMPACTION = 4

Note = str | tuple[Any, ...]

#: `ClaudeBatch.response`'s first line when it is the first assistant line's response's,
#: which only the fold knows (lines are numbered from 1).
HEAD_FIRST = 0

#: The `system` subtype of a failed API call's line (a line parented past it is a retry).
API_ERROR = "api_error"

Response = tuple[object, object]
"""An API response's identity: an assistant line's `(message.id, requestId)`."""


@dataclass(frozen=True, slots=True)
class Branch:
    """A conversation line whose parent is not the line before it: what decides whether it
    starts a branch, and which kind (CLAUDE_CODE.md, "Parallel tool calls").

    One response's tool calls are written one a line, and each result is parented on the
    line that holds its own `tool_use`, with other calls and results (and `progress`
    lines) between: the normal shape of a parallel batch, not a branch. Only a parent
    that is none of these starts one (`parented_by`). Plain data: a batch carries it to
    the fold when the parent is in an earlier batch.
    """

    parent: str
    answers: tuple[str, ...] = ()
    """The tool_use ids the line's tool results answer: the line holding one is their parent."""
    response: Response | Later | None = None
    """The response a parent may be a line of: an assistant line's own; a tool result
    line's, the last assistant line's (the batch of calls it answers). LATER: that line is
    before the batch (the fold's); None: no such parent."""
    prompt: bool = False
    """The line is a prompt (a user line with no tool result): sent again after a rewind."""
    error: int | Later | None = None
    """The line before it, when that is a failed API call's (`API_ERROR`): a retry."""

    def parented_by(self, response: Response | None, tools: Iterable[str]) -> bool:
        """Whether a parent is of this line's own step, not a branch: the line holding a
        tool_use it answers, or a line of its response.

        Args:
            response: the parent's response, when it is an assistant line with a `message.id`.
            tools: the ids of the parent's tool_use blocks.
        """
        if response is not None and self.response is not LATER and response == self.response:
            return True
        return any(t in self.answers for t in tools)

    def words(self, at: int) -> str:
        """The note on the line, its parent on line `at`."""
        if self.prompt:
            why = "a prompt sent again after a rewind"
        elif type(self.error) is int:
            why = f"a retry after the failed API call on line {self.error:,}"
        else:
            why = "a rewind, retry or fork"
        return f"branches from line {at:,}, not the line before it ({why})"


def branch(
    obj: Line,
    kind: str,
    parent: str,
    last: tuple[object, object, int] | Later | None,
    error: int | Later | None,
) -> Branch:
    """What a conversation line says about its parent (`Branch`), the rest of the file
    aside: `last` is the last assistant line's response before it, `error` the line
    before it if that is a failed API call's (either LATER: before the batch).
    """
    message = obj.message
    content = message.content if type(message) is Message else None
    blocks = content if type(content) is list else ()
    results = [b for b in blocks if type(b) is Block and b.type == "tool_result"]
    answers = tuple(b.tool_use_id for b in results if type(b.tool_use_id) is str)
    response: Response | Later | None = None
    if kind == "assistant":
        msg_id = message.id if type(message) is Message else None
        response = (msg_id, obj.requestId) if msg_id is not None else None
    elif results:
        response = last if last is None or last is LATER else (last[0], last[1])
    meta = obj.isMeta is True or obj.isCompactSummary is True
    prompt = kind == "user" and not results and not meta
    return Branch(parent, answers, response, prompt, error)


def continues_words(first: int) -> str:
    """The note on an assistant line that continues an earlier line's response."""
    return f"continues the response that starts on line {first:,}"


def compaction_words(trigger: object, before: int | None) -> str:
    """The note on a compaction boundary."""
    where = f"; the conversation through line {before:,} was summarised" if before else ""
    return f"compaction ({trigger or 'trigger not recorded'}){where}"


SUMMARY = "the compaction's summary: what the model continued from"

#: Line types that make up the conversation's `uuid` chain.
CONVERSATION = frozenset({"user", "assistant", "system"})
#: What an `agentId` may be before it is made into a file name.
_AGENT_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


@dataclass(slots=True, eq=False)
class ClaudeBatch:
    """What the fold needs of lines `first` to `last` (made by `map_claude`).

    Plain data, so a worker process can send it back.
    """

    first: int
    last: int
    envelopes: int = 0
    types: dict[str, int] = field(default_factory=dict)
    problems: list[LineProblem] = field(default_factory=list)
    sites: list[SpillSite] = field(default_factory=list)
    late_sites: list[tuple[int, str, LineRecord]] = field(default_factory=list)
    """Sites whose tool was named before the batch: (index in `sites`, tool_use_id, record)."""
    tags: dict[int, list[Note]] = field(default_factory=dict)
    notes_later: list[int] = field(default_factory=list)
    """Lines whose notes hold one the fold finishes (a tuple), in order."""
    uuid_keys: array[int] = field(default_factory=lambda: array(KEY_CODE))
    """The pass's key of each conversation `uuid` of the batch (the strings are not sent: a
    fold only looks one up for a branch or a compaction, and checks the line it finds)."""
    uuid_lines: array[int] = field(default_factory=lambda: array("q"))
    """The last line of the batch with each of `uuid_keys`."""
    last_uuid: str | None = None
    """The last conversation line's `uuid` (None: the batch has none)."""
    last_error: int | None = None
    """That line, when it is a failed API call's (`API_ERROR`)."""
    response: tuple[object, object, int] | Later | None = LATER
    """(message id, request id, first line) of the last assistant line's response
    (`HEAD_FIRST`: the first assistant line's); LATER when the batch has no assistant line."""
    tool_keys: array[int] = field(default_factory=lambda: array(KEY_CODE))
    """The pass's key of the id of each tool_use block that names its tool (see `LineIndex`)."""
    tool_lines: array[int] = field(default_factory=lambda: array("q"))
    result_keys: array[int] = field(default_factory=lambda: array(KEY_CODE))
    """The pass's key of the tool_use id of each tool result that has a text."""
    result_lines: array[int] = field(default_factory=lambda: array("q"))
    ids: set[str] = field(default_factory=set)
    named: set[str] = field(default_factory=set)
    replacements: list[tuple[int, str, str]] = field(default_factory=list)
    links: dict[int, Path] = field(default_factory=dict)
    microcompactions: list[MicrocompactRecord] = field(default_factory=list)
    """Each `microcompact_boundary` line's record, in order (its ids resolved by the fold)."""
    branches: list[tuple[int, int]] = field(default_factory=list)
    """(line, its parent's line) of each branch the batch found alone (`SessionAnalysis`)."""
    first_root: int | None = None
    """The batch's first line with a uuid, when it names no parent: a root of the chain
    unless it is the file's first (the fold decides)."""
    sides: list[tuple[int, int]] = field(default_factory=list)
    """(line, its parent's line) of each line parented beside the line before it, on a
    line of its own step (`SessionAnalysis.sides`)."""
    calls: CallRun = field(default_factory=CallRun)
    """The model calls the batch's lines begin, and what the context gained between them.
    A call is a response (the assistant lines sharing `message.id` and `requestId`); its
    head, the first one's identity, may continue the fold's last (`CallFold`)."""


def map_claude(
    transcript: Transcript, first: int, last: int, last_content: int, keys: IdKeys
) -> ClaudeBatch:
    """Read lines `first` to `last` of a Claude Code transcript into a batch.

    Pure: it reads the lines (and, for a Task's subagent, whether its file is
    there) and nothing else, so it runs in any process. One loop with the
    field reads written out, because it runs once a line.
    """
    b = ClaudeBatch(first, last)
    problems, tags, ids = b.problems, b.tags, b.ids
    kinds: list[str] = []  # each record's type, counted at the end (in C)
    count = kinds.append
    tools: dict[str, str] = {}  # tool_use id -> tool name, as the batch's lines so far say
    tool_key, tool_line = b.tool_keys.append, b.tool_lines.append
    uuids: dict[str, int] = {}  # each conversation line's uuid -> the last line so far with it
    turns: dict[int, tuple[Response | None, list[str]]] = {}  # assistant line -> its response, ids
    later = b.notes_later.append
    envelopes = 0
    previous: str | Later | None = LATER
    error: int | Later | None = LATER  # the line before, if a failed API call's
    response: tuple[object, object, int] | Later | None = LATER
    # The model calls (`core.calls.CallRun`, written inline): a row each, and the items
    # (user and assistant lines) before each, their characters and the biggest.
    run = b.calls
    rows, add_row, pack, model_index = run.rows, run.rows.extend, ROW_FORMAT.pack, run.model_index
    put_figure, at_end = FIGURE_FORMAT.pack_into, -FIGURE_FORMAT.size
    items = context = started = 0
    big_line = big_chars = reset_at = -1
    head: object = None
    sized = True  # whether the batch's last call has its size (or the batch has none)
    last_model: object = None  # the last call's model, and its index in the rows
    last_index = -1
    lines = decoded_lines(transcript.raw_chunks(first, last), _decode, Line, problems, last_content)
    for line, _, _, obj in lines:
        envelopes += 1
        kind = obj.type
        if type(kind) is not str:
            count("?")
            continue
        count(kind)
        if kind not in CONVERSATION:
            if kind == "content-replacement":
                _replacements(b, line, obj.replacements)
            continue
        # The uuid tree: a line whose parent is not the line before may be a branch.
        uuid = obj.uuid
        notes: list[Note] | None = None
        if type(uuid) is str:
            parent = obj.parentUuid
            if type(parent) is not str:  # no parent: the chain of parents starts over here
                if previous is LATER:  # the file's first line, or a root after a batch's
                    b.first_root = line
                else:
                    b.branches.append((line, 0))
            elif parent != previous:
                if parent == obj.sourceToolAssistantUUID:  # a result beside its batch
                    at = uuids.get(parent)
                    if at is not None:
                        b.sides.append((line, at))
                else:
                    fork = branch(obj, kind, parent, response, error)
                    if previous is LATER:
                        notes = (notes or []) + [(FIRST_BRANCH, fork)]
                    elif previous is not None:
                        at = uuids.get(parent)
                        if at is None:
                            notes = (notes or []) + [(BRANCH, fork)]
                        elif not fork.parented_by(*turns.get(at, (None, ()))):
                            notes = (notes or []) + [fork.words(at)]
                            b.branches.append((line, at))
                        else:
                            b.sides.append((line, at))
            uuids[uuid] = line
            previous = uuid
            error = line if kind == "system" and obj.subtype == API_ERROR else None
        if kind == "user":
            if obj.isCompactSummary is True:
                notes = (notes or []) + [SUMMARY]
            message = obj.message
            content = message.content if type(message) is Message else None
            if type(content) is list:
                notes, chars = _user(b, tools, transcript.path, line, obj, content, notes, keys)
            else:
                chars = len(content) if type(content) is str else 0
            items += 1
            context += chars
            if chars > big_chars:
                big_line, big_chars = line, chars
        elif kind == "assistant":
            message = obj.message
            msg_id = message.id if type(message) is Message else None
            begins = line  # the line its response begins on (HEAD_FIRST: the fold knows)
            first = response is LATER  # the batch's first assistant line
            if msg_id is None:
                response = None
            else:
                request = obj.requestId
                if response is LATER:
                    notes = (notes or []) + [(CONTINUES, msg_id, request)]
                    begins = HEAD_FIRST
                elif response is not None and (msg_id, request) == response[:2]:
                    begins = response[2]
                    note = continues_words(begins) if begins != HEAD_FIRST else (HEAD,)
                    notes = (notes or []) + [note]
                response = (msg_id, request, begins)
            # A model call: a response's first line (its usage read there, or on the first
            # of its lines that has one); a line Claude Code wrote itself is none.
            if type(message) is not Message or message.model == SYNTHETIC_MODEL:
                if begins == line:
                    sized = True  # its own lines have no call to size
            elif begins == line or first:
                if first and msg_id is not None:
                    head = (msg_id, obj.requestId)  # call 0 may continue the fold's last call
                usage = message.usage  # `usage_tokens`, written out for a valid input count
                if type(usage) is Usage:
                    tokens = usage.input_tokens
                    if type(tokens) is int and tokens >= 0:
                        part = usage.cache_read_input_tokens
                        if type(part) is int and part >= 0:
                            tokens += part
                        part = usage.cache_creation_input_tokens
                        if type(part) is int and part >= 0:
                            tokens += part
                    else:
                        tokens = usage_tokens(usage)
                else:
                    tokens = -1
                model = message.model
                if model != last_model:
                    last_model = model
                    last_index = model_index(model) if type(model) is str and model else -1
                add_row(
                    pack(
                        line,
                        last_index,
                        context,
                        items,
                        big_line,
                        big_chars,
                        tokens,
                        CLAUDE_USAGE if tokens >= 0 else 0,
                        -1,
                    )
                )
                items, big_line, big_chars = 0, -1, -1
                started += 1
                sized = tokens >= 0
            elif not sized:  # a response begun in this batch, its usage still to come
                tokens = usage_tokens(message.usage)
                if tokens >= 0:
                    put_figure(rows, len(rows) + at_end, tokens, CLAUDE_USAGE, -1)  # its row
                    sized = True
            called: list[str] = []
            chars = 0
            content = message.content if type(message) is Message else None
            if type(content) is list:
                for block in content:
                    if type(block) is not Block:
                        continue
                    what = block.type
                    if what == "tool_use":
                        tid, name = block.id, block.name
                        if type(tid) is str:
                            called.append(tid)
                            ids.add(tid)
                            if type(name) is str:
                                tools[tid] = name
                                tool_key(keys(tid))
                                tool_line(line)
                        if block.input is not None:
                            chars += _json_chars(block.input)
                    elif what == "text":
                        text = block.text
                        if type(text) is str:
                            chars += len(text)
            elif type(content) is str:
                chars = len(content)
            items += 1
            context += chars
            if chars > big_chars:
                big_line, big_chars = line, chars
            turns[line] = (response[:2] if type(response) is tuple else None, called)
        elif obj.subtype == "microcompact_boundary":
            _microcompaction(b, line, obj.microcompactMetadata)
            run.compactions.append(claude_compaction(line, obj))
        elif obj.subtype == "compact_boundary":
            # The context starts over from the summary (the next line).
            run.compactions.append(claude_compaction(line, obj))
            if reset_at < 0:
                reset_at = started
            context = 0
            meta = obj.compactMetadata
            trigger = meta.trigger if type(meta) is CompactMetadata else None
            parent = obj.logicalParentUuid
            before = uuids.get(parent) if type(parent) is str else None
            if before is None and type(parent) is str:
                notes = (notes or []) + [(COMPACTION, trigger, parent)]
            else:
                notes = (notes or []) + [compaction_words(trigger, before)]
        if notes is not None:
            tags[line] = notes
            for note in notes:
                if type(note) is tuple:
                    later(line)
                    break
    b.envelopes = envelopes
    b.types = dict(Counter(kinds))
    b.last_uuid = previous if type(previous) is str else None
    b.last_error = error if type(error) is int else None
    b.uuid_keys = array(KEY_CODE, map(keys, uuids))
    b.uuid_lines = array("q", uuids.values())
    b.response = response
    run.items, run.big_line, run.big_chars, run.chars = items, big_line, big_chars, context
    run.reset_at, run.head = reset_at, head
    # What the next batch's first response is compared with (`CallFold`): the last
    # assistant line's, as its own `CONTINUES` note is (`ClaudePass.absorb`).
    run.end = response[:2] if type(response) is tuple else None if response is None else FOLDS
    return b


def _user(
    b: ClaudeBatch,
    tools: dict[str, str],
    here: Path,
    line: int,
    obj: Line,
    content: list[Any],
    notes: list[Note] | None,
    keys: IdKeys,
) -> tuple[list[Note] | None, int]:
    """A user line whose content is a list: its tool results, their markers, its subagent;
    and the characters of its texts and results (what an estimate of the context counts).

    The texts are numbered as `result_parts` numbers them, written out here
    because every tool result goes through it.
    """
    tur = obj.toolUseResult
    if type(tur) is ToolUseResult:
        agent = tur.agentId
        if type(agent) is str and agent:
            notes = (notes or []) + [_subagent(b, here, line, agent)]
        persisted = tur.persistedOutputPath
        if type(persisted) is str:
            name = basename(persisted)
            if name:
                b.named.add(name)
    ids = b.ids
    base = chars = 0
    for blk, block in enumerate(content):
        if type(block) is not Block:
            continue
        tid = block.tool_use_id
        if type(tid) is str:
            ids.add(tid)
        else:
            tid = None
        if block.type != "tool_result":
            if block.type == "text" and type(block.text) is str:
                chars += len(block.text)
            continue
        inner = block.content
        if type(inner) is str:
            texts: list[tuple[int, str]] | tuple[tuple[int, str]] = ((-1, inner),)
        elif type(inner) is list:
            texts = [
                (i, p.text)
                for i, p in enumerate(inner)
                if type(p) is Part and p.type == "text" and type(p.text) is str
            ]
            if not texts:
                continue
        else:
            continue
        if tid:
            b.result_keys.append(keys(tid))
            b.result_lines.append(line)
        for part, text in texts:
            found = find_spills(text)
            if found:
                _sites(b, tools, line, base, blk, part, text, found, tid, line_record(tur))
            base += len(text) + 1
            chars += len(text)
    return notes, chars


def _sites(
    b: ClaudeBatch,
    tools: dict[str, str],
    line: int,
    base: int,
    blk: int,
    part: int,
    text: str,
    found: list[FoundSpill],
    tid: str | None,
    record: LineRecord,
) -> None:
    """One result text's markers as sites (the tool named before the batch: the fold's)."""
    late = tid is not None and tid not in tools
    ctx = record.context(tid, tools.get(tid) if tid is not None else None)
    for spill in found:
        site = make_site(line, base, blk, part, text, spill, ctx)
        if site.file is not None and site.safe_name:
            b.named.add(site.file)
        if late:
            assert tid is not None
            b.late_sites.append((len(b.sites), tid, record))
        b.sites.append(site)


def _subagent(b: ClaudeBatch, here: Path, line: int, agent: str) -> str:
    """A Task's result names its subagent: link its transcript, if it is there.

    The id becomes a file name, so it must be a plain id; the file must be a
    regular file directly in the session's `subagents/` (2.1.x) or beside
    the session (the old layout).
    """
    if not _AGENT_ID.match(agent):
        return "subagent: its agentId is not a plain id (not looked for)"
    name = f"agent-{agent}.jsonl"
    for folder, shown in (
        (session_dir(here) / SUBAGENTS, f"{SUBAGENTS}/{name}"),
        (here.parent, name),
    ):
        sub = folder / name
        if sub.is_file() and not sub.is_symlink() and sub != here:
            b.links[line] = sub
            return f"subagent transcript: {shown} (enter opens it)"
    return f"subagent transcript: {SUBAGENTS}/{name} (not found)"


@dataclass(frozen=True, slots=True)
class MicrocompactRecord:
    """What a `microcompact_boundary` line says: from it on, the model no longer saw these
    tool results in full (their full outputs are `tool-results/<tool id>` files)."""

    line: int
    trigger: str | None
    pre_tokens: int | None
    tokens_saved: int | None
    tool_ids: tuple[str, ...]


def _int(value: object) -> int | None:
    return value if type(value) is int else None


def _microcompaction(b: ClaudeBatch, line: int, meta: object) -> None:
    """A microcompaction's record; its tool ids count as the session's (not orphans)."""
    if type(meta) is not MicrocompactMetadata:
        b.microcompactions.append(MicrocompactRecord(line, None, None, None, ()))
        return
    ids = meta.compactedToolIds
    # Each id once: a result is cleared or not (a hostile list repeats one id).
    tool_ids = tuple(dict.fromkeys(t for t in ids if type(t) is str)) if type(ids) is list else ()
    b.ids.update(tool_ids)
    trigger = meta.trigger if type(meta.trigger) is str else None
    b.microcompactions.append(
        MicrocompactRecord(line, trigger, _int(meta.preTokens), _int(meta.tokensSaved), tool_ids)
    )


def _replacements(b: ClaudeBatch, line: int, reps: object) -> None:
    if type(reps) is not list:
        return
    for rep in reps:
        if type(rep) is not Replacement:
            continue
        tid, text = rep.toolUseId, rep.replacement
        if type(tid) is str and type(text) is str:
            b.ids.add(tid)
            b.replacements.append((line, tid, text))


def _stem(path: Path) -> str:
    name = path.name
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


def session_dir(transcript: Path) -> Path:
    """The session directory a transcript belongs to.

    A subagent file (`…/<session>/subagents/agent-x.jsonl`, or deeper under
    `subagents/workflows/…`) belongs to its parent session; a main session
    file to the sibling directory named by its stem.
    """
    parents = transcript.parents
    # Only the layouts Claude Code writes: <session>/subagents/<f>.jsonl and
    # <session>/subagents/workflows/<wf>/<f>.jsonl. A folder called "subagents"
    # further up is somebody's directory name, not a session.
    if len(parents) > 1 and parents[0].name == SUBAGENTS:
        return parents[1]
    if len(parents) > 3 and parents[1].name == "workflows" and parents[2].name == SUBAGENTS:
        return parents[3]
    return transcript.with_name(_stem(transcript))

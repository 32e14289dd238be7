"""Reading a GitHub Copilot CLI session: what the model saw, and where the rest of each output is.

A session is `~/.copilot/session-state/<id>/events.jsonl` (`$COPILOT_HOME` for
`~/.copilot`; OTHER_AGENTS.md, "GitHub Copilot CLI"): one event a line,
`{"type", "data", "id", "timestamp", "parentId"}`, each `parentId` the line
before's. The conversation is `user.message` (its `transformedContent` is what
the model got), `assistant.message` (its text and `toolRequests`),
`tool.execution_complete` (`result.content`, the text the model got) and
`system.message`; `session.compaction_complete` and `session.truncation` shorten
the context; everything else (turns, tool starts, usage records, hooks, the
session's start and end) is Copilot CLI's own record, never sent.

Each `session.usage_record` is one model call (the persisted copy of the
ephemeral `assistant.usage`): `usage.inputTokens` is the prompt it was sent
(exact) and `usage.maxPromptTokens` the prompt's limit for it.

A result over the threshold reached the model as a marker naming a file in the
OS temp folder (`core.formats.copilot_markers`), which Copilot CLI deletes when
the session ends: the marker is read and said, its file never looked for.

The file is appended in bursts of several events; a crash can leave NUL bytes
where a write never landed, or a line cut short with the next event run into it.
Each is a finding on its line, in words that say so (`damage_words`), and the
lines around it are read as usual.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from transcript_view.core.calls import COPILOT_USAGE, INHERITED, ROW_FORMAT, Compaction
from transcript_view.core.decoding import decoded_lines, field
from transcript_view.core.formats.agent_pass import AgentBatch, analyse_agent
from transcript_view.core.formats.claude_markers import basename
from transcript_view.core.formats.copilot_markers import TEMP_WORDS, find_saved
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.estimate import json_chars
from transcript_view.core.formats.genai_parts import Other
from transcript_view.core.formats.model import SpillForm, SpillSite
from transcript_view.core.keys import IdKeys
from transcript_view.core.transcript import Transcript

#: The events that are what the model was sent (the rest are Copilot CLI's records).
USER, ASSISTANT, RESULT, SYSTEM = (
    "user.message",
    "assistant.message",
    "tool.execution_complete",
    "system.message",
)
COMPACTED, TRUNCATED, USAGE = (
    "session.compaction_complete",
    "session.truncation",
    "session.usage_record",
)
CONVERSATION = frozenset({USER, ASSISTANT, RESULT, SYSTEM, COMPACTED, TRUNCATED})
COMPACTION_WORDS = (
    "the history was summarised here: later calls saw the summary, not what came before"
)
TRUNCATION_WORDS = "older messages were dropped here to fit the context (session.truncation)"

# -- the shapes a line is decoded into -----------------------------------------------------------


class Usage(msgspec.Struct, gc=False):
    """A usage record's `usage`: the call's model, prompt tokens and prompt limit."""

    model: Any = None
    inputTokens: Any = None
    maxPromptTokens: Any = None


class Result(msgspec.Struct, gc=False):
    """A tool's `result`: `content` is the text the model got."""

    content: Any = None


class Data(msgspec.Struct, gc=False):
    """An event's `data`, as far as the pass reads it."""

    content: Any = None
    transformedContent: Any = None
    toolRequests: Any = None
    toolCallId: Any = None
    toolName: Any = None
    result: Result | Other = None
    usage: Usage | Other = None
    summaryContent: Any = None
    success: Any = None
    preCompactionTokens: Any = None
    postCompactionTokens: Any = None
    preTruncationTokensInMessages: Any = None
    postTruncationTokensInMessages: Any = None
    trigger: Any = None
    performedBy: Any = None


class Line(msgspec.Struct, gc=False):
    """One event."""

    type: Any = None
    data: Data | Other = None


_decode = msgspec.json.Decoder(Line).decode

# -- what an event holds -------------------------------------------------------------------------


def _str_len(value: object) -> int:
    return len(value) if type(value) is str else 0


def result_text(data: object) -> str | None:
    """A `tool.execution_complete`'s `result.content`: the text the model got."""
    content = field(field(data, "result"), "content")
    return content if type(content) is str else None


def event_chars(kind: object, data: object) -> int:
    """The characters of an event that an estimate of the context counts: a prompt as it was
    sent, the model's text and its tool requests' arguments (as JSON), a result's text, a
    system message, a compaction's summary. Of the pass's typed `Data` or a mapping alike."""
    if kind == USER:
        sent = field(data, "transformedContent")
        return _str_len(sent if type(sent) is str else field(data, "content"))
    if kind == ASSISTANT:
        requests = field(data, "toolRequests")
        args = 0
        if isinstance(requests, list):
            args = sum(json_chars(field(r, "arguments")) for r in requests)
        return _str_len(field(data, "content")) + args
    if kind == RESULT:
        return _str_len(result_text(data))
    if kind == SYSTEM:
        return _str_len(field(data, "content"))
    if kind == COMPACTED:
        return _str_len(field(data, "summaryContent"))
    return 0


def _count(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


def shortening(line: int, kind: str, data: object) -> Compaction:
    """A compaction's or a truncation's figures: the context's tokens before and after."""
    if kind == COMPACTED:
        before, after = field(data, "preCompactionTokens"), field(data, "postCompactionTokens")
        trigger = field(data, "trigger")
        return Compaction(
            line,
            "compaction",
            trigger=trigger if type(trigger) is str else None,
            tokens_before=_count(before),
            before_field="data.preCompactionTokens (Copilot CLI's estimate)"
            if _count(before) is not None
            else None,
            tokens_after=_count(after),
            after_field="data.postCompactionTokens (Copilot CLI's estimate)"
            if _count(after) is not None
            else None,
            summary="readable" if _str_len(field(data, "summaryContent")) else "none",
        )
    before = field(data, "preTruncationTokensInMessages")
    after = field(data, "postTruncationTokensInMessages")
    by = field(data, "performedBy")
    return Compaction(
        line,
        "truncation",
        trigger=by if type(by) is str else None,
        tokens_before=_count(before),
        before_field="data.preTruncationTokensInMessages" if _count(before) is not None else None,
        tokens_after=_count(after),
        after_field="data.postTruncationTokensInMessages" if _count(after) is not None else None,
        summary="none",
    )


def result_sites(
    line: int, text: str, call_id: str | None, tool: str | None
) -> list[SpillSite]:
    """The marker a tool's result is (the whole text, or none): what the pass records and the
    viewer draws, alike."""
    saved = find_saved(text)
    if saved is None:
        return []
    name = basename(saved.path) or None
    return [
        SpillSite(
            line=line,
            offset=0,
            format=Format.COPILOT,
            form=SpillForm.COPILOT_SAVED,
            block=-1,
            start=0,
            end=saved.end,
            file=name,
            path=saved.path,
            size_text=saved.size,
            preview=saved.preview,
            cut=f"the output ({saved.size}) past its first {len(saved.preview):,} characters; "
            f"the whole was saved to {name or 'a file'} {TEMP_WORDS}",
            tool_use_id=call_id,
            tool=tool,
            text=text[: saved.end][:400],
        )
    ]


def copilot_prompt(obj: Mapping[str, Any]) -> str | None:
    """A `user.message`'s text (the first is the session's first prompt), cut to 200."""
    data = obj.get("data")
    if obj.get("type") != USER or not isinstance(data, Mapping):
        return None
    text = data.get("content")
    return text.strip()[:200] or None if isinstance(text, str) else None


def damage_words(raw: bytes) -> str | None:
    """What a line a crash left says, when it is such a line: NUL bytes where a write never
    landed, or an event cut short with the next one run into it."""
    if raw and not raw.strip(b"\x00 \t\r"):
        return (
            f"{len(raw):,} NUL bytes where events should be: the file was extended but the "
            "write never landed (a crash); the lines around them are read as usual"
        )
    at = raw.find(b'{"type":"', 1)
    if at > 0 and raw.startswith(b'{"type":"'):
        return (
            f"an event cut short after {at:,} bytes with the next event run into it (a write "
            "lost in a crash): neither is read"
        )
    return None


# -- a line, decoded whole (the viewer's and the lifetimes' reading) ---------------------------

#: What a line is to the calls around it (`core.lifetime`'s roles).
MODEL, INPUT, RESET = "model", "input", "reset"


def record_role(obj: Mapping[str, Any]) -> str | None:
    """Whether an event begins a model call (its usage record), is an input (what the model is
    sent), shortens the context, or is none of it (the pass's rule)."""
    kind = obj.get("type")
    if kind == USAGE:
        return MODEL
    if kind in (COMPACTED, TRUNCATED):
        return RESET
    return INPUT if kind in CONVERSATION else None


def record_chars(obj: Mapping[str, Any]) -> int:
    """The characters of an event that an estimate of the context counts (the pass's)."""
    return event_chars(obj.get("type"), obj.get("data"))


def is_tool_result(obj: Mapping[str, Any]) -> bool:
    """Whether an event is a tool's result."""
    return obj.get("type") == RESULT


# -- the map -------------------------------------------------------------------------------------


def map_copilot(
    transcript: Transcript, first: int, last: int, last_content: int, keys: IdKeys
) -> AgentBatch:
    """Read lines `first` to `last` of a session into a batch (pure: it reads the lines only)."""
    b = AgentBatch(first, last)
    kinds: list[str] = []
    run = b.calls
    add_row, pack = run.rows.extend, ROW_FORMAT.pack
    items = context = started = 0
    big_line = big_chars = reset_at = -1
    tools: dict[str, str] = {}  # a call's id -> its tool, as the batch's starts say
    lines = decoded_lines(
        transcript.raw_chunks(first, last), _decode, Line, b.problems, last_content
    )
    for line, _, _, obj in lines:
        kind = obj.type
        kind = kind if type(kind) is str else "?"
        kinds.append(kind)
        data = obj.data
        if type(data) is not Data:
            continue
        if kind == USAGE:
            usage = data.usage
            if type(usage) is Usage:
                tokens, window, name = usage.inputTokens, usage.maxPromptTokens, usage.model
            else:
                tokens = window = name = None
            tokens = tokens if type(tokens) is int and tokens >= 0 else -1
            window = window if type(window) is int and window > 0 else -1
            model = run.model_index(name) if type(name) is str and name else -1
            add_row(pack(line, model, context, items, big_line, big_chars, tokens,
                         COPILOT_USAGE if tokens >= 0 else 0, window))  # fmt: skip
            items, big_line, big_chars = 0, -1, -1
            started += 1
            continue
        if kind == "tool.execution_start":
            if type(data.toolCallId) is str and type(data.toolName) is str:
                tools[data.toolCallId] = data.toolName
            continue
        if kind not in CONVERSATION:
            continue
        if kind in (COMPACTED, TRUNCATED):
            if kind == COMPACTED and data.success is False:
                continue  # a compaction that failed changed nothing
            run.compactions.append(shortening(line, kind, data))
            if reset_at < 0:
                reset_at = started
            context = 0
            b.tags.append((line, COMPACTION_WORDS if kind == COMPACTED else TRUNCATION_WORDS))
        elif kind == RESULT:
            text = result_text(data)
            if text is not None and text.startswith("Output too large"):
                call_id = data.toolCallId if type(data.toolCallId) is str else None
                b.sites.extend(result_sites(line, text, call_id, tools.get(call_id or "")))
        chars = event_chars(kind, data)
        if not chars:
            continue
        items += 1
        context += chars
        if chars > big_chars:
            big_line, big_chars = line, chars
    for i, p in enumerate(b.problems):
        words = damage_words(transcript.raw_line(p.line))
        if words is not None:
            b.problems[i] = replace(p, message=words)
    run.items, run.big_line, run.big_chars, run.chars = items, big_line, big_chars, context
    run.reset_at, run.head, run.end, run.model = reset_at, None, None, INHERITED
    run.takes_figure = False
    b.envelopes = len(kinds)
    b.types = dict(Counter(kinds))
    return b


def sidecar_dir(path: Path) -> None:
    """Where a session's large outputs are looked for: nowhere (they were in the OS temp
    folder, no session's, which Copilot CLI empties when the session ends)."""
    return None


# -- the pass -------------------------------------------------------------------------------------

#: One pass over a Copilot CLI session (its markers' files are never looked for):
#: `agent_pass.analyse_agent` with this format's map and folder, called as `analyse_codex` is.
analyse_copilot = partial(analyse_agent, Format.COPILOT, map_copilot, sidecar_dir)

"""Reading a Qwen Code session: what the model saw, and where the rest of each big output is.

A session is JSON lines (`<runtimeDir>/projects/<sanitized cwd>/chats/<id>.jsonl`;
OTHER_AGENTS.md, "Qwen Code"), one record a line: `user`, `assistant` (the
model's turn: `message.parts` of text, thought and `functionCall` parts, its
`usageMetadata` and `contextWindowSize`), `tool_result` (the result as the
model got it: a `functionResponse` part whose `response.output` is the text,
the stub when it was spilled) and `system` (a compaction, a rewind, telemetry).

A tool result over its threshold reached the model as a stub naming a file
in the project's `tool-results/` folder, with the whole output's size and,
since 0.23, its sha256 (`core.formats.qwen_markers`): such a file is verified
as the reference's artifacts are (`rules.qwen_state`). The folder is the
project's, not the session's (`qwen_markers.tool_results_dir`, found from the
records' `cwd`): every session of the project writes there, so no session
reports another's files as orphans.

The pass is a map and a fold (`agent_pass`): `map_qwen` reads a run of lines
into an `AgentBatch`, `AgentPass` folds the batches in file order.
It lists the model calls too (`core.calls`): each `assistant` record is one
call (the records of one turn share its `uuid`), and its `usageMetadata.
promptTokenCount` is the size of the context it was sent (exact: the API's
own count), its `contextWindowSize` the window.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from transcript_view.core.calls import (
    FIGURE_FORMAT,
    FOLDS,
    INHERITED,
    QWEN_USAGE,
    ROW_FORMAT,
    Compaction,
)
from transcript_view.core.decoding import decoded_lines
from transcript_view.core.formats.agent_pass import AgentBatch, analyse_agent
from transcript_view.core.formats.claude_markers import basename
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.estimate import json_chars
from transcript_view.core.formats.genai_parts import (
    FunctionCall,
    FunctionResponse,
    Other,
    Part,
    Parts,
    response_output,
)
from transcript_view.core.formats.model import SpillForm, SpillSite
from transcript_view.core.formats.qwen_markers import (
    QwenCut,
    QwenStub,
    find_cut,
    find_stub,
    tool_results_dir,
)
from transcript_view.core.keys import IdKeys
from transcript_view.core.markers import is_safe_basename
from transcript_view.core.transcript import Transcript, first_json_string

#: A `system` record's subtype that replaced the history the model was sent.
COMPRESSION = "chat_compression"
#: A `system` record's subtype that rewound the conversation: the records after the turn it
#: rewound to sit on a dead branch (never sent again).
REWIND = "rewind"
REWIND_WORDS = "rewind: the records after the turn it rewinds to were never sent again"

# -- the shapes a line is decoded into -----------------------------------------------------------

_Other = Other
_Parts = Parts


class Message(msgspec.Struct, gc=False):
    """A record's `message`: Gemini's `Content`."""

    role: Any = None
    parts: _Parts = None


class Usage(msgspec.Struct, gc=False):
    """An assistant record's `usageMetadata`: `promptTokenCount` is the context sent."""

    promptTokenCount: Any = None


class Line(msgspec.Struct, gc=False):
    """One session record, as far as the pass reads it."""

    type: Any = None
    subtype: Any = None
    uuid: Any = None
    model: Any = None
    message: Message | _Other = None
    usageMetadata: Usage | _Other = None
    contextWindowSize: Any = None
    systemPayload: Any = None


_decode = msgspec.json.Decoder(Line).decode

# -- what a record holds -------------------------------------------------------------------------


def _part(part: object) -> Mapping[str, Any] | Part | None:
    return part if type(part) is Part or isinstance(part, Mapping) else None


def _get(part: Mapping[str, Any] | Part, name: str) -> object:
    return part.get(name) if isinstance(part, Mapping) else getattr(part, name)


#: A `functionResponse`'s text as the model got it (`genai_parts.response_output`).
output_of = response_output


Result = tuple[int, int, object, str]
"""A tool result in a message's parts: (part, base, result, text). `base` is where the text
starts in the line's seen text (the results' texts joined by one LF), what marker offsets
count in; `result` is the `functionResponse` (its `id` and `name`)."""

_NONE: tuple[Result, ...] = ()


def seen_parts(parts: object) -> tuple[int, Sequence[Result]]:
    """A message's parts as an estimate of the context counts them, and their tool results:
    one walk, which runs on every record (a part decoded as `Part`, or parsed as a mapping).

    The characters are texts (not thoughts), calls' arguments as JSON and results' texts.
    """
    if not isinstance(parts, list):
        return 0, _NONE
    n = base = 0
    out: list[Result] = []
    for i, raw in enumerate(parts):
        if type(raw) is Part:
            text, thought, call, fr = raw.text, raw.thought, raw.functionCall, raw.functionResponse
        elif isinstance(raw, Mapping):
            text, thought = raw.get("text"), raw.get("thought")
            call, fr = raw.get("functionCall"), raw.get("functionResponse")
        else:
            continue
        if type(text) is str and thought is not True:
            n += len(text)
        if type(call) is FunctionCall:
            n += json_chars(call.args)
        elif call is not None and isinstance(call, Mapping):
            n += json_chars(call.get("args"))
        if type(fr) is FunctionResponse:
            output = output_of(fr.response)
        elif fr is not None and isinstance(fr, Mapping):
            output = output_of(fr.get("response"))
        else:
            continue
        if output is not None:
            out.append((i, base, fr, output))
            size = len(output)
            n += size
            base += size + 1
    return n, out


def result_texts(parts: object) -> Sequence[Result]:
    """Each tool result in a message's parts (`seen_parts`')."""
    return seen_parts(parts)[1]


def _call_id(fr: object) -> str | None:
    value = fr.id if type(fr) is FunctionResponse else (
        fr.get("id") if isinstance(fr, Mapping) else None
    )  # fmt: skip
    return value if type(value) is str else None


def _tool_name(fr: object) -> str | None:
    value = fr.name if type(fr) is FunctionResponse else (
        fr.get("name") if isinstance(fr, Mapping) else None
    )  # fmt: skip
    return value if type(value) is str else None


def parts_chars(parts: object) -> int:
    """The characters of a message that an estimate of the context counts (`seen_parts`')."""
    return seen_parts(parts)[0]


def history_chars(history: object) -> list[int]:
    """The characters of each entry of a compression's `compressedHistory` (Gemini `Content`
    objects): what the context started over with."""
    if not isinstance(history, list):
        return []
    return [
        parts_chars(entry.get("parts")) for entry in history if isinstance(entry, Mapping)
    ]


def compression(line: int, payload: object) -> tuple[Compaction, list[int]]:
    """A `chat_compression` record: its figures, and the entries the context starts over with.

    `info.originalTokenCount` is the context's size before it (Qwen Code's own count,
    an estimate where `originalTokenCountIsEstimated` says so), `newTokenCount` after.
    """
    pl = payload if isinstance(payload, Mapping) else {}
    info = pl.get("info")
    info = info if isinstance(info, Mapping) else {}

    def count(name: str) -> int | None:
        value = info.get(name)
        return value if type(value) is int and value >= 0 else None

    trigger = info.get("triggerReason")
    history = pl.get("compressedHistory")
    added = history_chars(history)
    before, after = count("originalTokenCount"), count("newTokenCount")
    record = Compaction(
        line,
        COMPRESSION,
        trigger=trigger if type(trigger) is str else None,
        tokens_before=before,
        before_field=(
            "systemPayload.info.originalTokenCount"
            + (" (Qwen Code's estimate)" if info.get("originalTokenCountIsEstimated") else "")
            if before is not None
            else None
        ),
        tokens_after=after,
        after_field=(
            "systemPayload.info.newTokenCount"
            + (" (Qwen Code's estimate)" if info.get("newTokenCountIsEstimated") else "")
            if after is not None
            else None
        ),
        summary="readable" if any(added) else "none",
    )
    return record, added


# -- a record, decoded whole (the viewer's and the lifetimes' reading) --------------------------

#: What a record is to the calls around it (`core.lifetime`'s roles).
MODEL, INPUT, RESET = "model", "input", "reset"


def record_role(obj: Mapping[str, Any]) -> str | None:
    """Whether a record is the model's turn, an input (a user turn, a tool's result), a
    compression (the context starts over), or none of the context (the pass's rule)."""
    kind = obj.get("type")
    if kind == "assistant":
        return MODEL
    if kind in ("user", "tool_result"):
        return INPUT
    if kind == "system" and obj.get("subtype") == COMPRESSION:
        return RESET
    return None


def record_chars(obj: Mapping[str, Any]) -> int:
    """The characters of a record that an estimate of the context counts (the pass's)."""
    if record_role(obj) == RESET:
        payload = obj.get("systemPayload")
        history = payload.get("compressedHistory") if isinstance(payload, Mapping) else None
        return sum(history_chars(history))
    message = obj.get("message")
    return parts_chars(message.get("parts")) if isinstance(message, Mapping) else 0


def qwen_prompt(obj: Mapping[str, Any]) -> str | None:
    """The text of a user record (the first one is the session's first prompt), cut to 200."""
    message = obj.get("message")
    parts = message.get("parts") if isinstance(message, Mapping) else None
    if obj.get("type") != "user" or not isinstance(parts, list):
        return None
    texts = [p["text"] for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
    text = "\n".join(texts).strip()
    return text[:200] or None


def is_tool_result(obj: Mapping[str, Any]) -> bool:
    """Whether a record is a tool's result (what a call asked for)."""
    message = obj.get("message")
    parts = message.get("parts") if isinstance(message, Mapping) else None
    return bool(result_texts(parts))


# -- the map -------------------------------------------------------------------------------------


def map_qwen(
    transcript: Transcript, first: int, last: int, last_content: int, keys: IdKeys
) -> AgentBatch:
    """Read lines `first` to `last` of a session into a batch (pure: it reads the lines only)."""
    b = AgentBatch(first, last)
    kinds: list[str] = []
    run = b.calls
    rows, add_row, pack = run.rows, run.rows.extend, ROW_FORMAT.pack
    put_figure, at_end = FIGURE_FORMAT.pack_into, -FIGURE_FORMAT.size
    items = context = started = 0
    big_line = big_chars = reset_at = -1
    model = INHERITED
    head: object = None
    state: object = FOLDS  # the open call's uuid; None: none open; FOLDS: as the fold left it
    sized = True  # whether the batch's last call has its recorded size
    lines = decoded_lines(
        transcript.raw_chunks(first, last), _decode, Line, b.problems, last_content
    )
    for line, _, _, obj in lines:
        kind = obj.type
        kind = kind if type(kind) is str else "?"
        kinds.append(kind)
        message = obj.message
        parts = message.parts if type(message) is Message else None
        if kind == "system":
            if obj.subtype == COMPRESSION:
                record, added = compression(line, obj.systemPayload)
                run.compactions.append(record)
                if reset_at < 0:
                    reset_at = started
                context, state = 0, None
                b.tags.append((line, "the model continued from the compressed history here"))
                for chars in added:
                    items += 1
                    context += chars
                    if chars > big_chars:
                        big_line, big_chars = line, chars
            elif obj.subtype == REWIND:
                b.tags.append((line, REWIND_WORDS))
            continue
        if kind == "assistant":
            uuid = obj.uuid if type(obj.uuid) is str else None
            usage = obj.usageMetadata
            tokens = usage.promptTokenCount if type(usage) is Usage else None
            tokens = tokens if type(tokens) is int and tokens >= 0 else -1
            window = obj.contextWindowSize
            window = window if type(window) is int and window > 0 else -1
            name = obj.model
            if type(name) is str and name:
                model = run.model_index(name)
            if uuid is not None and state == uuid:  # another record of the open call
                if not sized and tokens >= 0:
                    put_figure(rows, len(rows) + at_end, tokens, QWEN_USAGE, window)
                    sized = True
            else:
                if state is FOLDS and uuid is not None:
                    head = uuid  # it continues the fold's, if that one is the same turn
                source = QWEN_USAGE if tokens >= 0 else 0
                add_row(pack(line, model, context, items, big_line, big_chars, tokens, source,
                             window))  # fmt: skip
                items, big_line, big_chars = 0, -1, -1
                sized = tokens >= 0
                started += 1
                state = uuid
        elif kind in ("user", "tool_result"):
            state = None
        else:
            continue
        chars, outputs = seen_parts(parts)
        for part, base, fr, text in outputs:
            _sites(b, line, part, base, fr, text)
        items += 1
        context += chars
        if chars > big_chars:
            big_line, big_chars = line, chars
    run.items, run.big_line, run.big_chars, run.chars = items, big_line, big_chars, context
    run.reset_at, run.head, run.end, run.model = reset_at, head, state, model
    run.takes_figure = False
    b.envelopes = len(kinds)
    b.types = dict(Counter(kinds))
    return b


def _sites(b: AgentBatch, line: int, part: int, base: int, fr: object, text: str) -> None:
    """The marker a tool result's text is, if it is one."""
    if text.startswith(_STARTS):  # most results are none
        b.sites.extend(text_sites(line, part, base, text, _call_id(fr), _tool_name(fr)))


#: How every text that is a marker starts (a stub or a cut is the whole text).
_STARTS = ("<persisted-output>", "Output too large (", "Tool output ")


def text_sites(
    line: int, part: int, base: int, text: str, call_id: str | None = None,
    tool: str | None = None,
) -> list[SpillSite]:  # fmt: skip
    """The markers one tool result's text is (the stub, or a cut naming its files), with
    their places in it: what the pass records and the viewer draws, alike."""
    if not text.startswith(_STARTS):
        return []
    stub = find_stub(text)
    if stub is not None:
        return [_stub_site(line, part, base, text, stub, call_id, tool)]
    cut = find_cut(text)
    if cut is not None:
        return _cut_sites(line, part, base, text, cut, call_id, tool)
    return []


def _stub_site(
    line: int, part: int, base: int, text: str, stub: QwenStub, call_id: str | None,
    tool: str | None,
) -> SpillSite:  # fmt: skip
    name = stub.file
    head_end = text.find("\n\n")
    return SpillSite(
        line=line,
        offset=base,
        format=Format.QWEN,
        form=SpillForm.QWEN_PERSISTED if stub.path is not None else SpillForm.QWEN_NOT_PERSISTED,
        block=-1,
        part=part,
        start=0,
        end=head_end if head_end >= 0 else len(text),
        file=name,
        path=stub.path,
        safe_name=stub.path is None or (name is not None and is_safe_basename(name)),
        preview=None if stub.structured else stub.preview,
        size_kb=stub.kb,
        digest=stub.digest,
        cut=(
            f"the output ({stub.kb:,} KB) past its preview"
            if stub.note is None
            else f"the output ({stub.kb:,} KB) past its preview, and no file was written "
            f"{stub.note}"
        ),
        tool_use_id=call_id,
        tool=tool,
        text=text[: max(head_end, 0)][:400],
    )


def _cut_sites(
    line: int, part: int, base: int, text: str, cut: QwenCut, call_id: str | None,
    tool: str | None,
) -> list[SpillSite]:  # fmt: skip
    kept = (
        f"its first {len(cut.head):,} and last {len(cut.tail):,} characters"
        if cut.tail is not None
        else f"its first {len(cut.head):,} characters"
    )
    header_end = text.find("\n\n")
    header_end = header_end if header_end >= 0 else len(text)
    if cut.old or not cut.paths:
        return [
            SpillSite(
                line=line,
                offset=base,
                format=Format.QWEN,
                form=SpillForm.QWEN_LEGACY_SAVED if cut.old else SpillForm.QWEN_TRUNCATED_UNSAVED,
                block=-1,
                part=part,
                start=0,
                end=header_end,
                path=cut.paths[0] if cut.paths else None,
                file=_name(cut.paths[0]) if cut.paths else None,
                cut=(
                    f"all but {kept}; the whole went to a .output file in the project's "
                    "temp folder, which is not looked in"
                    if cut.old
                    else f"all but {kept}"
                ),
                tool_use_id=call_id,
                tool=tool,
                text=text[:header_end][:400],
            )
        ]
    out = []
    for path in cut.paths:
        at = text.find(path, 0, header_end)
        name = _name(path)
        out.append(
            SpillSite(
                line=line,
                offset=base + max(at, 0),
                format=Format.QWEN,
                form=SpillForm.QWEN_TRUNCATED,
                block=-1,
                part=part,
                start=max(at, 0),
                end=max(at, 0) + len(path),
                file=name,
                path=path,
                safe_name=name is not None and is_safe_basename(name),
                # Several files for one text: which part of it each holds is not said.
                preview=cut.head if len(cut.paths) == 1 else None,
                tail=cut.tail if len(cut.paths) == 1 else None,
                cut=kept,
                tool_use_id=call_id,
                tool=tool,
                text=text[:header_end][:400],
            )
        )
    return out


def _name(path: str) -> str | None:
    return basename(path) or None


#: How much of a session's start is read for its project root (the first record has it).
HEAD_BYTES = 256 << 10
#: The first `cwd` key and its JSON string: every record has it near its start (after
#: `uuid`, `parentUuid`, `sessionId`, `timestamp`, `type`), so a cut line still shows it.
CWD_RE = re.compile(rb'"cwd"\s*:\s*("(?:[^"\\\n]|\\.){0,4096}")')


def project_root(path: Path) -> str | None:
    """The project a session's records say they ran in: the first record's `cwd`."""
    return first_json_string(path, CWD_RE, HEAD_BYTES)


def sidecar_dir(path: Path) -> Path:
    """Where a session's stubs' files are: its project's `tool-results/`
    (`qwen_markers.tool_results_dir`). A session whose records name no `cwd` gets the
    folder of an empty project root, which Qwen Code never makes: its files are missing."""
    return tool_results_dir(path, project_root(path) or "")


# -- the pass -------------------------------------------------------------------------------------

#: One pass over a Qwen Code session (its stubs' files are checked by the ledger):
#: `agent_pass.analyse_agent` with this format's map and folder, called as `analyse_codex` is.
analyse_qwen = partial(analyse_agent, Format.QWEN, map_qwen, sidecar_dir)

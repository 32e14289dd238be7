"""Reading an OpenCode session: what the model saw, and where the rest of each big output is.

OpenCode keeps a session as rows (`core.opencode_store`), read here as the JSON
lines that module makes of them: the session, then each message followed by its
parts (OTHER_AGENTS.md, "OpenCode"). A message's `data` says whose it is (`role`)
and, for the model's, which model (`modelID`); what was said is in the parts:
`text`, `reasoning`, `tool` (its call and its result: `state.output` is the text
the model got), `step-start` and `step-finish` around each model call, and a
`compaction` part where the history was summarised.

A tool output over its limits reached the model cut, naming the file that holds
the whole (`core.formats.opencode_markers`); such a file is matched by its start
(or end) and the counts (`rules.opencode_state`). The folder is OpenCode's, every
session's (`<data>/tool-output/`): no session reports its orphans.

The pass is a map and a fold (`agent_pass`), as Qwen Code's is. Each `step-start`
part begins a model call (`core.calls`); the `step-finish` after it records that
call's tokens, `input + cache.read + cache.write` being the prompt it was sent
(exact: the provider's own count, as OpenCode stores it). OpenCode records no
window. A `compaction` part starts the context over: the model continued from the
summary after it (OpenCode's `filterCompacted`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from transcript_view.core.calls import (
    FIGURE_FORMAT,
    FOLDS,
    INHERITED,
    OPENCODE_TOKENS,
    ROW_FORMAT,
    Compaction,
)
from transcript_view.core.decoding import decoded_lines, field
from transcript_view.core.formats.agent_pass import AgentBatch, analyse_agent
from transcript_view.core.formats.claude_markers import basename
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.estimate import json_chars
from transcript_view.core.formats.genai_parts import Other
from transcript_view.core.formats.model import SpillForm, SpillSite
from transcript_view.core.formats.opencode_markers import find_cut, might_be_cut
from transcript_view.core.keys import IdKeys
from transcript_view.core.markers import is_safe_basename
from transcript_view.core.opencode_store import (
    address,
    storage_root,
    tool_output_dir,
)
from transcript_view.core.transcript import Transcript

#: What the model got for a result OpenCode cleared from the history (`toModelMessages`).
CLEARED = "[Old tool result content cleared]"
#: What the model got for a tool that never finished.
INTERRUPTED = "[Tool execution was interrupted]"
#: What the model got for a `compaction` part (the question the summary answers).
COMPACTION_PROMPT = "What did we do so far?"
COMPACTED_WORDS = (
    "OpenCode later cleared this result from the history (state.time.compacted): calls after "
    f"that saw {CLEARED!r}"
)
COMPACTION_WORDS = (
    "the history was summarised here: later calls saw the summary, not what came before"
)

# -- the shapes a line is decoded into -----------------------------------------------------------


class Cache(msgspec.Struct, gc=False):
    """`tokens.cache`: the prompt's tokens read from and written to the provider's cache."""

    read: Any = None
    write: Any = None


class Tokens(msgspec.Struct, gc=False):
    """A `step-finish` part's (or an assistant message's) `tokens`."""

    input: Any = None
    cache: Cache | Other = None


class Times(msgspec.Struct, gc=False):
    """A tool state's `time`: `compacted` is set once OpenCode cleared the result."""

    end: Any = None
    compacted: Any = None


class State(msgspec.Struct, gc=False):
    """A tool part's `state`: `output` is the text the model got."""

    status: Any = None
    input: Any = None
    output: Any = None
    error: Any = None
    metadata: Any = None
    time: Times | Other = None


class Data(msgspec.Struct, gc=False):
    """A message's or a part's `data`, as far as the pass reads it."""

    type: Any = None
    role: Any = None
    text: Any = None
    ignored: Any = None
    tool: Any = None
    callID: Any = None
    state: State | Other = None
    tokens: Tokens | Other = None
    modelID: Any = None
    summary: Any = None
    auto: Any = None


class Line(msgspec.Struct, gc=False):
    """One line of the copy (`core.opencode_store`)."""

    opencode: Any = None
    id: Any = None
    message: Any = None
    data: Data | Other = None


_decode = msgspec.json.Decoder(Line).decode

# -- what a line holds ---------------------------------------------------------------------------


def tool_text(state: object) -> str | None:
    """What the model got for a tool part: its output, its error, or OpenCode's words for a
    tool that never finished (the text as it stood before any compaction cleared it)."""
    if type(state) is State:
        status, output, error = state.status, state.output, state.error
    elif isinstance(state, Mapping):
        status, output, error = state.get("status"), state.get("output"), state.get("error")
    else:
        return None
    if status == "completed":
        return output if type(output) is str else None
    if status == "error":
        return error if type(error) is str else None
    if status in ("pending", "running"):
        return INTERRUPTED
    return None


def part_chars(data: object) -> int:
    """The characters of a part that an estimate of the context counts: texts and reasoning,
    a tool's input (as JSON) and what it returned; nothing for the bookkeeping parts.

    Of the pass's typed `Data` or of a part decoded otherwise (a mapping), alike.
    """
    if type(data) is Data:
        kind, text, ignored, state = data.type, data.text, data.ignored, data.state
    elif isinstance(data, Mapping):
        kind, text, ignored = data.get("type"), data.get("text"), data.get("ignored")
        state = data.get("state")
    else:
        return 0
    if kind == "text" or kind == "reasoning":
        return len(text) if type(text) is str and ignored is not True else 0
    if kind == "tool":
        result = tool_text(state)
        args = state.input if type(state) is State else field(state, "input")
        return json_chars(args) + (len(result) if result is not None else 0)
    if kind == "compaction":
        return len(COMPACTION_PROMPT)
    return 0


def is_compacted(state: object) -> bool:
    """Whether OpenCode cleared a tool's result from the history later (`time.compacted`)."""
    times = state.time if type(state) is State else field(state, "time")
    if type(times) is Times:
        value = times.compacted
    else:
        value = field(times, "compacted") if isinstance(times, Mapping) else None
    return value is not None and value is not False


def step_tokens(tokens: object) -> int:
    """The prompt a call was sent, in tokens, as its `step-finish` records it: `input +
    cache.read + cache.write` (-1: not recorded)."""
    if type(tokens) is Tokens:
        first, cache = tokens.input, tokens.cache
    elif isinstance(tokens, Mapping):
        first, cache = tokens.get("input"), tokens.get("cache")
    else:
        return -1
    if type(cache) is Cache:
        read, write = cache.read, cache.write
    elif isinstance(cache, Mapping):
        read, write = cache.get("read"), cache.get("write")
    else:
        read = write = None
    if type(first) is not int or first < 0:
        return -1
    total = first
    for value in (read, write):
        if value is None:
            continue
        if type(value) is not int or value < 0:
            return -1
        total += value
    return total


def part_sites(
    line: int, text: str, call_id: str | None, tool: str | None, state: object
) -> list[SpillSite]:
    """The marker a tool's output is (the whole text, or none): what the pass records and the
    viewer draws, alike."""
    if not might_be_cut(text):
        return []
    cut = find_cut(text)
    if cut is None:
        return []
    name = basename(cut.path) or None
    meta = field(state, "metadata")
    said = field(meta, "outputPath") if isinstance(meta, Mapping) else None
    times = field(state, "time")
    end = field(times, "end") if times is not None else None
    kept = cut.kept.count("\n") + 1 if cut.kept else 0
    if cut.shell:
        words = f"its last {kept:,} lines ({len(cut.kept):,} characters)"
    elif not kept:
        words = f"{cut.removed:,} {cut.unit}, all of it: the model saw none of its lines"
    else:
        where = "last" if cut.tail else "first"
        words = f"{cut.removed:,} {cut.unit} of it; the model saw its {where} {kept:,} lines"
    return [
        SpillSite(
            line=line,
            offset=cut.start,
            format=Format.OPENCODE,
            form=SpillForm.OPENCODE_SHELL if cut.shell else SpillForm.OPENCODE_TRUNCATED,
            block=-1,
            start=cut.start,
            end=cut.end,
            file=name,
            path=cut.path,
            safe_name=name is not None and is_safe_basename(name),
            preview=None if cut.tail else cut.kept,
            tail=cut.kept if cut.tail and not cut.shell else None,
            file_bytes=cut.file_bytes,
            file_lines=cut.file_lines,
            written_ms=end if type(end) is int and end > 0 else None,
            persisted_name=basename(said) if type(said) is str and said else None,
            cut=words,
            tool_use_id=call_id,
            tool=tool,
            text=text[cut.start : cut.end][:400],
        )
    ]


def opencode_prompt(obj: Mapping[str, Any]) -> str | None:
    """The text of a user's text part (the first one is the session's first prompt), cut to 200."""
    data = obj.get("data")
    if obj.get("opencode") != "part" or not isinstance(data, Mapping):
        return None
    if data.get("type") != "text" or data.get("synthetic") or data.get("ignored"):
        return None
    text = data.get("text")
    return text.strip()[:200] or None if isinstance(text, str) else None


# -- a line, decoded whole (the viewer's and the lifetimes' reading) ---------------------------

#: What a line is to the calls around it (`core.lifetime`'s roles).
MODEL, INPUT, RESET = "model", "input", "reset"


def record_role(obj: Mapping[str, Any]) -> str | None:
    """Whether a line begins a model call, is an input (a part the model is sent), a compaction
    (the context starts over), or none of the context (the pass's rule)."""
    data = obj.get("data")
    if obj.get("opencode") != "part" or not isinstance(data, Mapping):
        return None
    kind = data.get("type")
    if kind == "step-start":
        return MODEL
    if kind == "compaction":
        return RESET
    return INPUT if part_chars(data) else None


def record_chars(obj: Mapping[str, Any]) -> int:
    """The characters of a line that an estimate of the context counts (the pass's)."""
    data = obj.get("data")
    return part_chars(data) if obj.get("opencode") == "part" else 0


def is_tool_result(obj: Mapping[str, Any]) -> bool:
    """Whether a line is a tool's part (its call and what it returned)."""
    data = obj.get("data")
    return isinstance(data, Mapping) and data.get("type") == "tool"


# -- the map -------------------------------------------------------------------------------------


def map_opencode(
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
    target: object = FOLDS  # the call a `step-finish` sizes (FOLDS: the fold's; None: none)
    sized = True
    lines = decoded_lines(
        transcript.raw_chunks(first, last), _decode, Line, b.problems, last_content
    )
    for line, _, _, obj in lines:
        what = obj.opencode
        data = obj.data
        if what != "part" or type(data) is not Data:
            kinds.append(what if type(what) is str else "?")
            if what == "message" and type(data) is Data and data.role == "assistant":
                name = data.modelID
                if type(name) is str and name:
                    model = run.model_index(name)
            continue
        kind = data.type
        kind = kind if type(kind) is str else "?"
        kinds.append(kind)
        if kind == "step-start":
            add_row(pack(line, model, context, items, big_line, big_chars, -1, 0, -1))
            items, big_line, big_chars, sized = 0, -1, -1, False
            target = started
            started += 1
            continue
        if kind == "step-finish":
            tokens = step_tokens(data.tokens)
            if tokens >= 0:
                if type(target) is int:
                    if not sized:  # the first after a call begins is its own
                        put_figure(rows, len(rows) + at_end, tokens, OPENCODE_TOKENS, -1)
                        sized = True
                elif target is FOLDS and run.head_figure is None:
                    run.head_figure = (tokens, OPENCODE_TOKENS, -1)
            continue
        if kind == "compaction":
            trigger = "auto" if data.auto is True else "manual"
            record = Compaction(line, "compaction", trigger=trigger, summary="readable")
            run.compactions.append(record)
            if reset_at < 0:
                reset_at = started
            context, target = 0, None
            b.tags.append((line, COMPACTION_WORDS))
        elif kind == "tool":
            state = data.state
            text = tool_text(state)
            if text is not None:
                call_id = data.callID if type(data.callID) is str else None
                tool = data.tool if type(data.tool) is str else None
                b.sites.extend(part_sites(line, text, call_id, tool, state))
            if is_compacted(state):
                b.tags.append((line, COMPACTED_WORDS))
        chars = part_chars(data)
        if not chars:
            continue
        items += 1
        context += chars
        if chars > big_chars:
            big_line, big_chars = line, chars
    run.items, run.big_line, run.big_chars, run.chars = items, big_line, big_chars, context
    run.reset_at, run.head, run.end, run.model = reset_at, None, None, model
    run.takes_figure = True if type(target) is int else False if target is None else None
    b.envelopes = len(kinds)
    b.types = dict(Counter(kinds))
    return b


def sidecar_dir(path: Path) -> Path:
    """Where a session's cut outputs are: `<data>/tool-output/`, the data folder being the
    database's (a session's path is `<database>/<id>`) or the older storage tree's parent."""
    stored = address(path)
    if stored is not None:
        return tool_output_dir(stored[0])
    root = storage_root(path)
    return tool_output_dir(root) if root is not None else path.parent / "tool-output"


# -- the pass -------------------------------------------------------------------------------------

#: One pass over an OpenCode session (its cut outputs' files are checked by the ledger):
#: `agent_pass.analyse_agent` with this format's map and folder, called as `analyse_codex` is.
analyse_opencode = partial(analyse_agent, Format.OPENCODE, map_opencode, sidecar_dir)

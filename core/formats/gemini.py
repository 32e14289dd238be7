"""Reading a Gemini CLI session: the conversation the model had, and where its cut outputs are.

A session is JSON lines (`~/.gemini/tmp/<project>/chats/session-<when>-<id>.jsonl`, since
2026-04; OTHER_AGENTS.md, "Gemini CLI"; `chatRecordingService.ts` at 5411f113): a first
line of metadata (`sessionId`, `projectHash`, `startTime`, `kind`), then one line per
message as it is written (`{id, timestamp, type: user|gemini|info|error|warning,
content, toolCalls?, thoughts?, tokens?, model?}`), `{"$set": {…}}` patches and
`{"$rewindTo": <id>}`. Gemini CLI writes a message again, whole, each time it changes
(its tool calls' results, its tokens): the later line replaces the earlier
(`loadConversationRecord`). A `$set` with `messages` replaces the whole history: the
masking of older results and a compression reach the file that way.

A tool call's `result` is the parts the model got (`functionResponse.response.output`),
and the markers Gemini CLI leaves there are read by `gemini_markers`; a marker is the
same marker wherever the same result is written again, so each is reported once, on
the line where the model first had it (a masked result is a new one: the model saw
that after). Files are looked up by basename in the session's
`tool-outputs/session-<id>/` (`gemini_markers.outputs_dir`).

Each `gemini` message is one model call, sized exactly by its `tokens.input` (the
API's `promptTokenCount`) when a line of it records one.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from transcript_view.core.calls import GEMINI_TOKENS, Compaction, ModelCalls
from transcript_view.core.decoding import Measure, Measured, as_shape, decoded_lines
from transcript_view.core.formats.batches import fold_mapped
from transcript_view.core.formats.claude_code import problem_findings
from transcript_view.core.formats.claude_markers import basename
from transcript_view.core.formats.detect import GEMINI_TYPES, Format
from transcript_view.core.formats.estimate import json_chars
from transcript_view.core.formats.gemini_markers import GeminiForm, find_marker, outputs_dir
from transcript_view.core.formats.genai_parts import (
    FunctionResponse,
    Other,
    Part,
    Parts,
    response_output,
)
from transcript_view.core.formats.model import SessionAnalysis, SpillForm, SpillSite
from transcript_view.core.formats.qwen_markers import find_cut
from transcript_view.core.formats.rules import site_notes
from transcript_view.core.found import Found
from transcript_view.core.keys import KEY_CODE, IdKeys
from transcript_view.core.markers import is_safe_basename
from transcript_view.core.transcript import LineProblem, Transcript, first_json_string

#: The types the model is sent: the others are the UI's (info, error, warning).
SENT_TYPES = frozenset({"user", "gemini"})
#: A `$set` that replaced the history (masking, compression), as a compaction's kind.
HISTORY_SET = "$set messages"

_FORMS = {
    GeminiForm.TRUNCATED: SpillForm.GEMINI_TRUNCATED,
    GeminiForm.MASKED: SpillForm.GEMINI_MASKED,
    GeminiForm.MASKED_NODE: SpillForm.GEMINI_MASKED,
    GeminiForm.NORMALIZED: SpillForm.GEMINI_NORMALIZED,
}

# -- what a message holds ------------------------------------------------------------------------
#
# A message is decoded into these shapes, which declare only what the rules read, each
# field taking any JSON value (`core.decoding`); a message parsed otherwise (the viewer's,
# a `$set`'s history) is converted to them (`shape_of`), so the rules are written once.

_Other = Other
_Parts = Parts


class ToolCall(msgspec.Struct, gc=False):
    """A call the model made, with its result once it came (`ToolCallRecord`)."""

    id: Any = None
    name: Any = None
    args: Any = None
    result: _Parts = None


class Message(msgspec.Struct, gc=False):
    """A message (`MessageRecord`), as far as the rules read it."""

    id: Any = None
    type: Any = None
    content: _Parts = None
    toolCalls: list[ToolCall | _Other] | dict[str, Any] | str | int | float | bool | None = None
    tokens: Any = None
    model: Any = None


def shape_of(message: Mapping[str, Any]) -> Message:
    """A message parsed as a mapping, as the rules read it."""
    return as_shape(message, Message)


def _texts(content: object) -> Iterator[str]:
    """The texts of a message's `content` (a string, a part, or a list of parts), not its
    thoughts."""
    if type(content) is str:
        yield content
    elif type(content) is list:
        for part in content:
            if type(part) is Part:
                if type(part.text) is str and part.thought is not True:
                    yield part.text
            elif type(part) is str:
                yield part
    elif (
        type(content) is dict
        and type(content.get("text")) is str
        and content.get("thought") is not True
    ):
        yield content["text"]


def _output(part: object) -> str | None:
    """A result part's text as the model got it: `functionResponse.response.output` (or its
    `error`), or a plain text part."""
    if type(part) is not Part:
        return None
    fr = part.functionResponse
    if type(fr) is FunctionResponse:
        return response_output(fr.response)
    return part.text if type(part.text) is str else None


Result = tuple[int, int, "ToolCall", str]
"""A tool result's text in a `gemini` message: (call index, base, call, text), `base` being
where the text starts in the message's seen text (its results' texts joined by one LF),
what marker offsets count in."""

_NONE: tuple[Result, ...] = ()


def seen(message: Message) -> tuple[int, Sequence[Result]]:
    """A message as an estimate of the context counts it, and its tool results' texts: one
    walk of it, which runs on every version of every message.

    The characters are its texts (not thoughts), its calls' arguments as JSON (compact,
    as `JSON.stringify` writes them) and their results' texts; each result is a `Result`.
    """
    content = message.content
    if type(content) is str:
        n = len(content)
    elif content is None:
        n = 0
    else:
        n = sum(map(len, _texts(content)))
    calls = message.toolCalls
    if type(calls) is not list:
        return n, _NONE
    out: list[Result] = []
    base = 0
    for i, call in enumerate(calls):
        if type(call) is not ToolCall:
            continue
        n += json_chars(call.args)
        result = call.result
        if result is None:
            continue
        for part in result if type(result) is list else (result,):
            text = _output(part)
            if text is not None:
                out.append((i, base, call, text))
                size = len(text)
                n += size
                base += size + 1
    return n, out


def results(message: Message) -> Sequence[Result]:
    """Each tool result text in a `gemini` message (`seen`'s)."""
    return seen(message)[1]


def chars_of(message: Message) -> int:
    """The characters of a message an estimate of the context counts (`seen`'s)."""
    return seen(message)[0]


def result_texts(message: Mapping[str, Any]) -> Iterator[tuple[int, int, Mapping[str, Any], str]]:
    """`results` of a message parsed as a mapping, each call as that mapping's."""
    calls = message.get("toolCalls")
    for i, base, _, text in results(shape_of(message)):
        call = calls[i] if type(calls) is list else {}
        yield i, base, call if isinstance(call, Mapping) else {}, text


def message_chars(message: Mapping[str, Any]) -> int:
    """`chars_of` a message parsed as a mapping."""
    return chars_of(shape_of(message))


#: What a line is to the calls around it (`core.lifetime`'s roles).
MODEL, INPUT, RESET = "model", "input", "reset"


def record_role(obj: Mapping[str, Any]) -> str | None:
    """Whether a line is the model's message, an input (the user's), a rewrite of the
    history or a rewind (no difference across one is exact), or none of the context."""
    kind = obj.get("type")
    if is_message(obj):
        return MODEL if kind == "gemini" else INPUT if kind == "user" else None
    patch = obj.get("$set")
    if (isinstance(patch, Mapping) and "messages" in patch) or "$rewindTo" in obj:
        return RESET
    return None


def record_chars(obj: Mapping[str, Any]) -> int:
    """The characters of a line an estimate of the context counts (the pass's)."""
    if is_message(obj):
        return message_chars(obj) if obj.get("type") in SENT_TYPES else 0
    patch = obj.get("$set")
    history = patch.get("messages") if isinstance(patch, Mapping) else None
    if isinstance(history, list):
        return sum(
            message_chars(m)
            for m in history
            if isinstance(m, Mapping) and is_message(m) and m.get("type") in SENT_TYPES
        )
    return 0


def gemini_prompt(obj: Mapping[str, Any]) -> str | None:
    """The text of a user message (the first is the session's first prompt), cut to 200."""
    if not is_message(obj) or obj.get("type") != "user":
        return None
    text = "".join(_texts(shape_of(obj).content)).strip()
    return text[:200] or None


def is_message(obj: Mapping[str, Any]) -> bool:
    """A message line (not the metadata, a patch or a rewind)."""
    return isinstance(obj.get("id"), str) and obj.get("type") in GEMINI_TYPES


# -- the map -------------------------------------------------------------------------------------


class Line(Message, gc=False):
    """One session line, as far as the pass reads it: what it is, and a message's fields
    (`Message`, which the rules read)."""

    sessionId: Any = None
    messages: Any = None
    """An older record written whole on one line: its history."""
    set_: Any = msgspec.field(default=None, name="$set")
    rewind_to: Any = msgspec.field(default=None, name="$rewindTo")


_decode = msgspec.json.Decoder(Line).decode

#: What a line is, for the fold (`GeminiBatch.events`).
SET, REWIND = 2, 3
#: A message's kind in a batch's columns (`GeminiBatch.kinds`): the user's, the model's, the
#: UI's (never sent).
USER, MODEL_MESSAGE, UI = 0, 1, 2
_KIND_CODES = {"user": USER, "gemini": MODEL_MESSAGE}


@dataclass(frozen=True, slots=True)
class Fact:
    """A line that changes the history wholesale: a `$set` of it, or a rewind (rare)."""

    line: int
    what: int
    target: int = 0
    """A rewind's: the key of the message it rewinds to (0: none)."""
    messages: tuple[tuple[int, int, int, int, int], ...] = ()
    """A `$set`'s history: (key, kind, chars, tokens, model index) of each message."""


@dataclass(slots=True, eq=False)
class GeminiBatch:
    """What the fold needs of lines `first` to `last` (made by `map_gemini`).

    One row of columns per message line (a gemini session has one or more lines per
    message, and a gigabyte has millions), its id as the pass's key (`core.keys`): the
    fold keeps numbers, never the lines' strings.
    """

    first: int
    last: int
    envelopes: int = 0
    types: dict[str, int] = field(default_factory=dict)
    problems: list[LineProblem] = field(default_factory=list)
    sites: list[tuple[bytes, SpillSite]] = field(default_factory=list)
    """Each marker with its key (the call and the text): the same key is the same marker."""
    lines: array[int] = field(default_factory=lambda: array("q"))
    keys: array[int] = field(default_factory=lambda: array(KEY_CODE))
    kinds: array[int] = field(default_factory=lambda: array("b"))
    chars: array[int] = field(default_factory=lambda: array("q"))
    tokens: array[int] = field(default_factory=lambda: array("q"))
    models: array[int] = field(default_factory=lambda: array("q"))
    model_names: list[str] = field(default_factory=list)
    events: list[tuple[int, Fact]] = field(default_factory=list)
    """Each `$set` of the history and rewind, after how many of the batch's message rows."""


def _kind(obj: Line) -> str:
    if obj.rewind_to is not None:
        return "$rewindTo"
    if obj.set_ is not None:
        return "$set"
    if type(obj.type) is str and type(obj.id) is str:
        return obj.type
    if obj.sessionId is not None:
        return "metadata"
    return "?"


def _model_index(names: list[str], model: object) -> int:
    if type(model) is not str or not model:
        return -1
    try:
        return names.index(model)
    except ValueError:
        names.append(model)
        return len(names) - 1


def _tokens(tokens: object) -> int:
    """A message's `tokens.input` (the API's `promptTokenCount`), or -1."""
    n = tokens.get("input") if type(tokens) is dict else None
    return n if type(n) is int and n >= 0 else -1


def map_gemini(
    transcript: Transcript, first: int, last: int, last_content: int, keys: IdKeys
) -> GeminiBatch:
    """Read lines `first` to `last` of a session into a batch (pure: it reads the lines only)."""
    b = GeminiBatch(first, last)
    kinds: list[str] = []
    add_line, add_key, add_kind = b.lines.append, b.keys.append, b.kinds.append
    add_chars, add_tokens, add_model = b.chars.append, b.tokens.append, b.models.append
    chunks = transcript.raw_chunks(first, last)
    lines = decoded_lines(chunks, _decode, Line, b.problems, last_content)
    for line, _, _, obj in lines:
        kind = _kind(obj)
        kinds.append(kind)
        if kind in GEMINI_TYPES:
            code = _KIND_CODES.get(kind, UI)
            add_line(line)
            add_key(keys(obj.id))
            add_kind(code)
            if code == UI:
                add_chars(0)
            else:
                chars, outputs = seen(obj)
                add_chars(chars)
                if code == MODEL_MESSAGE and outputs:
                    _sites(b, line, outputs, 0)
            add_tokens(_tokens(obj.tokens))
            add_model(_model_index(b.model_names, obj.model))
        elif kind == "$rewindTo":
            target = obj.rewind_to
            fact = Fact(line, REWIND, keys(target) if type(target) is str else 0)
            b.events.append((len(b.lines), fact))
        elif kind in ("$set", "metadata"):
            # A patch's history, or a whole older record written on one line (its messages).
            patch = obj.set_
            history = patch.get("messages") if type(patch) is dict else obj.messages
            if type(history) is not list:
                continue
            messages = [shape_of(m) for m in history if type(m) is dict and is_message(m)]
            rows = tuple(
                (
                    keys(m.id),
                    _KIND_CODES.get(m.type, UI),
                    chars_of(m) if m.type in SENT_TYPES else 0,
                    _tokens(m.tokens),
                    _model_index(b.model_names, m.model),
                )
                for m in messages
            )
            b.events.append((len(b.lines), Fact(line, SET, messages=rows)))
            base = 0
            for m in messages:
                base = _sites(b, line, results(m), base)
    b.envelopes = len(kinds)
    b.types = dict(Counter(kinds))
    return b


def _sites(b: GeminiBatch, line: int, outputs: Sequence[Result], base: int) -> int:
    """The markers in one message's results (`outputs`; `base`: where its seen text starts
    in the line's); returns where the next message's starts."""
    end = base
    for _, at, call, text in outputs:
        end = base + at + len(text) + 1
        if not text.startswith(_STARTS):
            continue  # most results
        for site in text_sites(line, base + at, text, call.id, call.name):
            key = hashlib.blake2b(
                f"{call.id}\0{text}".encode("utf-8", "surrogatepass"), digest_size=12
            ).digest()
            b.sites.append((key, site))
    return end


#: How every text that is a marker starts (each form is the whole text).
_STARTS = (
    "Output too large. ",
    "<tool_output_masked>",
    "[Message Normalized: ",
    "Tool output was too large",
)


def text_sites(
    line: int, base: int, text: str, call_id: object = None, tool: object = None
) -> list[SpillSite]:
    """The marker one tool result's text is (each form is the whole text), with its place:
    what the pass records and the viewer draws, alike (`call_id` and `tool` name the call
    when they are strings)."""
    call_id = call_id if type(call_id) is str else None
    tool = tool if type(tool) is str else None
    marker = find_marker(text)
    if marker is not None:
        name = marker.file
        head = text.find("\n")
        return [
            SpillSite(
                line=line,
                offset=base + marker.start,
                format=Format.GEMINI,
                form=_FORMS[marker.form],
                block=-1,
                start=marker.start,
                end=marker.end,
                file=name,
                path=marker.path,
                safe_name=name is not None and is_safe_basename(name),
                preview=marker.head,
                tail=marker.tail,
                units=marker.units,
                cut=marker.cut,
                tool_use_id=call_id,
                tool=tool,
                text=text[marker.start : marker.end][:400] if head else text[:400],
            )
        ]
    cut = find_cut(text)
    if cut is not None and cut.old:
        end = text.find("\n", text.find("\n") + 1)
        name = (basename(cut.paths[0]) or None) if cut.paths else None
        return [
            SpillSite(
                line=line,
                offset=base,
                format=Format.GEMINI,
                form=SpillForm.GEMINI_LEGACY_SAVED,
                block=-1,
                start=0,
                end=end if end > 0 else len(text),
                file=name,
                path=cut.paths[0] if cut.paths else None,
                cut="all but a head and a tail; the whole went to a .output file in the "
                "project's temp folder, which is not looked in",
                tool_use_id=call_id,
                tool=tool,
                text=text[:400],
            )
        ]
    return []


# -- the fold ------------------------------------------------------------------------------------


@dataclass(slots=True)
class GeminiPass:
    """The fold of a Gemini CLI pass: batches of lines (`map_gemini`), in file order.

    The calls are made as the batches come (`absorb`), from numbers: the characters in
    force of each message (its latest version), by its key.
    """

    transcript: Transcript
    analysis: SessionAnalysis
    id_keys: IdKeys = field(default_factory=IdKeys.new)
    seen: set[bytes] = field(default_factory=set)
    """The keys of the markers reported so far (a result written again is the same one)."""
    calls: ModelCalls = field(default_factory=ModelCalls)
    in_force: dict[int, int] = field(default_factory=dict)
    """Each message in the conversation, by key, in the order first written: its row in
    `versions` (its latest line and characters)."""
    version_lines: array[int] = field(default_factory=lambda: array("q"))
    version_chars: array[int] = field(default_factory=lambda: array("q"))
    total: int = 0
    """The characters of the messages in force (kept as they change, never summed again)."""
    call_of: dict[int, int] = field(default_factory=dict)
    """Each model message's call, by key."""
    items: int = 0
    big_line: int = -1
    big_chars: int = -1
    earlier: array[int] = field(default_factory=lambda: array("q"))
    later: array[int] = field(default_factory=lambda: array("q"))
    """Each message line written again (`earlier`) and the line that replaced it (`later`)."""

    def read(
        self,
        progress: Callable[[int, int], None] | None,
        workers: int | None,
        found: Found | None = None,
        measure: Measure | None = None,
        measured: Measured | None = None,
    ) -> None:
        """Fold every indexed line of the session, mapped in batches (`batches.mapped`)."""
        fold_mapped(
            self.transcript, map_gemini, self.id_keys, self.absorb, self.analysis, progress,
            workers, found, measure, measured,
        )  # fmt: skip

    def absorb(self, b: GeminiBatch) -> None:
        """Fold the next batch: its markers not reported before, its messages' calls."""
        a = self.analysis
        a.envelopes += b.envelopes
        a.type_counts.update(b.types)
        a.problems.extend(b.problems)
        for key, site in b.sites:
            if key not in self.seen:
                self.seen.add(key)
                a.sites.append(site)
        models = [self.calls.model_index(name) for name in b.model_names]
        start = 0
        for at, fact in b.events:
            self._messages(b, start, at, models)
            self._event(fact, models)
            start = max(start, at)
        self._messages(b, start, len(b.lines), models)

    def _messages(self, b: GeminiBatch, start: int, stop: int, models: list[int]) -> None:
        """Fold the batch's message rows `start` to `stop` (the loop of the fold: written
        with locals, it runs once a message line)."""
        calls = self.calls
        in_force, call_of = self.in_force, self.call_of
        version_lines, version_chars = self.version_lines, self.version_chars
        earlier, later = self.earlier.append, self.later.append
        total, items, big_line, big_chars = self.total, self.items, self.big_line, self.big_chars
        rows = zip(
            b.lines[start:stop], b.keys[start:stop], b.kinds[start:stop], b.chars[start:stop],
            b.tokens[start:stop], b.models[start:stop], strict=True,
        )  # fmt: skip
        for line, key, kind, chars, tokens, model in rows:
            at = in_force.get(key)
            if at is not None:  # written again: this version replaces the one before
                earlier(version_lines[at])
                later(line)
            if kind == MODEL_MESSAGE and key not in call_of:
                call_of[key] = len(calls.lines)
                calls.lines.append(line)
                calls.tokens.append(-1)
                calls.fields.append(0)
                calls.windows.append(-1)
                calls.chars.append(total)
                calls.added.append(items)
                calls.models.append(models[model] if model >= 0 else -1)
                calls.big_lines.append(big_line)
                calls.big_chars.append(big_chars)
                items, big_line, big_chars = 0, -1, -1
            if tokens >= 0:
                self._size(key, tokens)
            if kind == UI:
                continue
            if at is None:
                items += 1
                in_force[key] = len(version_lines)
                version_lines.append(line)
                version_chars.append(chars)
            else:
                total -= version_chars[at]
                version_lines[at], version_chars[at] = line, chars
            total += chars
            if chars > big_chars:
                big_line, big_chars = line, chars
        self.total, self.items, self.big_line, self.big_chars = total, items, big_line, big_chars

    def _size(self, key: int, tokens: int) -> None:
        index = self.call_of.get(key)
        if index is not None and tokens >= 0 and self.calls.tokens[index] < 0:
            self.calls.set_figure(index, tokens, GEMINI_TOKENS, -1)

    def _event(self, fact: Fact, models: list[int]) -> None:
        a = self.analysis
        if fact.what == REWIND:
            if fact.target in self.in_force:
                keys = list(self.in_force)
                for gone in keys[keys.index(fact.target) :]:
                    self.total -= self.version_chars[self.in_force.pop(gone)]
                a.tag(fact.line, "rewind: that message and those after it are gone from the "
                      "conversation (the model never saw them again)")  # fmt: skip
            else:
                self.in_force.clear()
                self.total = 0
                a.tag(fact.line, "rewind: to a message not in the file; the conversation "
                      "starts over")  # fmt: skip
            return
        self.in_force.clear()
        self.total = 0
        for key, kind, chars, tokens, _ in fact.messages:
            self._size(key, tokens)
            if kind == UI:
                continue
            self.in_force[key] = len(self.version_lines)
            self.version_lines.append(fact.line)
            self.version_chars.append(chars)
            self.total += chars
        self.calls.compactions.append(
            Compaction(fact.line, HISTORY_SET, summary="readable", resets=True)
        )
        a.tag(fact.line, f"the history was rewritten here ({len(fact.messages):,} messages: "
              "older results masked, or the conversation compressed)")  # fmt: skip

    def finish(self, lines: int) -> SessionAnalysis:
        """The calls, the versions, the outputs folder; findings."""
        a = self.analysis
        a.lines = lines
        a.calls = self.calls
        a.versions = (self.earlier, self.later)
        a.replaced_by = a.versions
        if self.earlier != array("q", sorted(self.earlier)):  # (in order, but for a rewrite
            pairs = sorted(zip(self.earlier, self.later, strict=True))  # of an older message)
            a.replaced_by = (array("q", (e for e, _ in pairs)), array("q", (n for _, n in pairs)))
        a.artifact_dir = sidecar_dir(self.transcript.path)
        a.named = {s.file for s in a.sites if s.file is not None and s.form.stored}
        a.findings = problem_findings(a.problems)
        for site in a.sites:
            a.findings.extend(site_notes(site))
        a.findings.sort(key=lambda f: f.line or 0)
        return a


#: How much of a session's start is read for its id (the metadata line is first).
HEAD_BYTES = 64 << 10


def _session_id(path: Path) -> str | None:
    """The `sessionId` of the session's metadata line (its first)."""
    return first_json_string(path, _SESSION_ID_RE, HEAD_BYTES)


#: The first `sessionId` and its JSON string: the metadata line's (an older chat, one JSON
#: document, has it near its top as well).
_SESSION_ID_RE = re.compile(rb'"sessionId"\s*:\s*("(?:[^"\\\n]|\\.){0,512}")')


def sidecar_dir(path: Path) -> Path:
    """Where a session's outputs are (`gemini_markers.outputs_dir` of its `sessionId`)."""
    return outputs_dir(path, _session_id(path) or "")


def analyse_gemini(
    transcript: Transcript,
    progress: Callable[[int, int], None] | None = None,
    *,
    workers: int | None = None,
    found: Found | None = None,
    measure: Measure | None = None,
    measured: Measured | None = None,
) -> SessionAnalysis:
    """One pass over a Gemini CLI session (its markers' files are checked by the ledger).

    Args: as `core.formats.codex.analyse_codex`'s.
    """
    p = GeminiPass(transcript, SessionAnalysis(Format.GEMINI, transcript, None))
    total = transcript.line_count
    p.read(progress, workers, found, measure, measured)
    analysis = p.finish(total)
    if progress is not None:
        progress(total, total)
    return analysis


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

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from transcript_view.core.calls import GEMINI_TOKENS, Compaction, ModelCalls
from transcript_view.core.compressed import CompressedError, is_zstd, read_head
from transcript_view.core.decoding import Measure, Measured, decoded_lines
from transcript_view.core.formats.batches import fold_mapped
from transcript_view.core.formats.claude_code import problem_findings
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.gemini_markers import GeminiForm, find_marker, outputs_dir
from transcript_view.core.formats.model import SessionAnalysis, SpillForm, SpillSite
from transcript_view.core.formats.qwen_markers import find_cut
from transcript_view.core.formats.rules import site_notes
from transcript_view.core.found import Found
from transcript_view.core.keys import IdKeys
from transcript_view.core.markers import is_safe_basename
from transcript_view.core.transcript import LineProblem, Transcript, TranscriptError, open_readonly

#: Message types (`ConversationRecordExtra`); `gemini` is the model's.
GEMINI_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
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


def _texts(content: object) -> Iterator[str]:
    """The texts of a message's `content` (a string, a part, or a list of parts)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, Mapping):
        if isinstance(content.get("text"), str) and content.get("thought") is not True:
            yield content["text"]
    elif isinstance(content, list):
        for part in content:
            yield from _texts(part)


def _output(part: object) -> str | None:
    """A result part's text as the model got it: `functionResponse.response.output` (or its
    `error`), or a plain text part."""
    if not isinstance(part, Mapping):
        return None
    fr = part.get("functionResponse")
    if isinstance(fr, Mapping):
        response = fr.get("response")
        if isinstance(response, Mapping):
            out = response.get("output", response.get("error"))
            return out if isinstance(out, str) else None
        return None
    text = part.get("text")
    return text if isinstance(text, str) else None


def result_texts(message: Mapping[str, Any]) -> Iterator[tuple[int, int, Mapping[str, Any], str]]:
    """(call index, base, call, text) of each tool result text in a `gemini` message: `base`
    is where the text starts in the message's seen text (its results' texts joined by one
    LF), what marker offsets count in."""
    calls = message.get("toolCalls")
    if not isinstance(calls, list):
        return
    base = 0
    for i, call in enumerate(calls):
        if not isinstance(call, Mapping):
            continue
        result = call.get("result")
        parts = result if isinstance(result, list) else [result]
        for part in parts:
            text = _output(part)
            if text is not None:
                yield i, base, call, text
                base += len(text) + 1


def message_chars(message: Mapping[str, Any]) -> int:
    """The characters of a message an estimate of the context counts: its texts (not
    thoughts), its calls' arguments as JSON, their results' texts."""
    n = sum(len(t) for t in _texts(message.get("content")))
    calls = message.get("toolCalls")
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, Mapping) and call.get("args") is not None:
                with contextlib.suppress(TypeError, ValueError):
                    n += len(json.dumps(call["args"], ensure_ascii=False))
    return n + sum(len(text) for _, _, _, text in result_texts(message))


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
    text = "".join(_texts(obj.get("content"))).strip()
    return text[:200] or None


def is_message(obj: Mapping[str, Any]) -> bool:
    """A message line (not the metadata, a patch or a rewind)."""
    return isinstance(obj.get("id"), str) and obj.get("type") in GEMINI_TYPES


# -- the map -------------------------------------------------------------------------------------


class Line(msgspec.Struct, gc=False):
    """One session line, as far as the map needs to tell what it is (the rest is read from
    the line, parsed whole, where it is a message or a patch)."""

    id: Any = None
    type: Any = None
    sessionId: Any = None
    set_: Any = msgspec.field(default=None, name="$set")
    rewind_to: Any = msgspec.field(default=None, name="$rewindTo")


_decode = msgspec.json.Decoder(Line).decode

#: What a line is, for the fold (`GeminiBatch.facts`).
MESSAGE, SET, REWIND = 1, 2, 3


@dataclass(frozen=True, slots=True)
class Fact:
    """What one message (or a patch's or a rewind's line) says, for the calls and the tags."""

    line: int
    what: int
    id: str | None = None
    """The message's id (a rewind's: the message it rewinds to)."""
    type: str | None = None
    chars: int = 0
    tokens: int = -1
    model: str | None = None
    messages: tuple[tuple[str, str, int, int, str | None], ...] = ()
    """A `$set`'s history: (id, type, chars, tokens, model) of each message."""


@dataclass(slots=True, eq=False)
class GeminiBatch:
    """What the fold needs of lines `first` to `last` (made by `map_gemini`)."""

    first: int
    last: int
    envelopes: int = 0
    types: dict[str, int] = field(default_factory=dict)
    problems: list[LineProblem] = field(default_factory=list)
    sites: list[tuple[bytes, SpillSite]] = field(default_factory=list)
    """Each marker with its key (the call and the text): the same key is the same marker."""
    facts: list[Fact] = field(default_factory=list)


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


def _message_fact(line: int, message: Mapping[str, Any]) -> tuple[str, str, int, int, str | None]:
    tokens = message.get("tokens")
    n = tokens.get("input") if isinstance(tokens, Mapping) else None
    model = message.get("model")
    return (
        str(message.get("id")),
        str(message.get("type")),
        message_chars(message),
        n if type(n) is int and n >= 0 else -1,
        model if isinstance(model, str) and model else None,
    )


def map_gemini(
    transcript: Transcript, first: int, last: int, last_content: int, keys: IdKeys
) -> GeminiBatch:
    """Read lines `first` to `last` of a session into a batch (pure: it reads the lines only)."""
    b = GeminiBatch(first, last)
    kinds: list[str] = []
    chunks = transcript.raw_chunks(first, last)
    lines = decoded_lines(chunks, _decode, Line, b.problems, last_content)
    for line, _, raw, obj in lines:
        kind = _kind(obj)
        kinds.append(kind)
        if kind == "$rewindTo":
            target = obj.rewind_to
            b.facts.append(Fact(line, REWIND, target if type(target) is str else None))
            continue
        if kind not in GEMINI_TYPES and kind not in ("$set", "metadata"):
            continue
        whole = json.loads(raw)  # a message or a patch: read whole (the result parts)
        if kind in ("$set", "metadata"):
            # A patch's history, or a whole older record written on one line (its messages).
            patch = whole.get("$set") if kind == "$set" else whole
            patch = patch if isinstance(patch, Mapping) else None
            history = patch.get("messages") if isinstance(patch, Mapping) else None
            if not isinstance(history, list):
                continue
            messages = [m for m in history if isinstance(m, Mapping) and is_message(m)]
            b.facts.append(
                Fact(line, SET, messages=tuple(_message_fact(line, m) for m in messages))
            )
            base = 0
            for m in messages:
                base = _sites(b, line, m, base)
            continue
        fact = _message_fact(line, whole)
        b.facts.append(Fact(line, MESSAGE, fact[0], fact[1], fact[2], fact[3], fact[4]))
        if kind == "gemini":
            _sites(b, line, whole, 0)
    b.envelopes = len(kinds)
    counts: dict[str, int] = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    b.types = counts
    return b


def _sites(b: GeminiBatch, line: int, message: Mapping[str, Any], base: int) -> int:
    """The markers in one message's results (`base`: where its seen text starts in the
    line's); returns where the next message's starts."""
    end = base
    for _, at, call, text in result_texts(message):
        end = base + at + len(text) + 1
        for site in text_sites(line, base + at, text, call):
            key = hashlib.blake2b(
                f"{call.get('id')}\0{text}".encode("utf-8", "surrogatepass"), digest_size=12
            ).digest()
            b.sites.append((key, site))
    return end


def text_sites(
    line: int, base: int, text: str, call: Mapping[str, Any] | None = None
) -> list[SpillSite]:
    """The marker one tool result's text is (each form is the whole text), with its place:
    what the pass records and the viewer draws, alike."""
    call = call or {}
    call_id = call.get("id") if isinstance(call.get("id"), str) else None
    tool = call.get("name") if isinstance(call.get("name"), str) else None
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
        name = (cut.paths[0].rsplit("/", 1)[-1] or None) if cut.paths else None
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
    """The fold of a Gemini CLI pass: batches of lines (`map_gemini`), in file order."""

    transcript: Transcript
    analysis: SessionAnalysis
    id_keys: IdKeys = field(default_factory=IdKeys.new)
    seen: set[bytes] = field(default_factory=set)
    """The keys of the markers reported so far (a result written again is the same one)."""
    facts: list[Fact] = field(default_factory=list)

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
        """Fold the next batch: its markers not reported before, its facts kept for the end."""
        a = self.analysis
        a.envelopes += b.envelopes
        a.type_counts.update(b.types)
        a.problems.extend(b.problems)
        for key, site in b.sites:
            if key not in self.seen:
                self.seen.add(key)
                a.sites.append(site)
        self.facts.extend(b.facts)

    def finish(self, lines: int) -> SessionAnalysis:
        """The calls and tags from the facts; the outputs folder; findings."""
        a = self.analysis
        a.lines = lines
        a.calls = _calls(self.facts, a)
        a.artifact_dir = sidecar_dir(self.transcript.path)
        a.named = {s.file for s in a.sites if s.file is not None and s.form.stored}
        a.findings = problem_findings(a.problems)
        for site in a.sites:
            a.findings.extend(site_notes(site))
        a.findings.sort(key=lambda f: f.line or 0)
        return a


def _calls(facts: list[Fact], a: SessionAnalysis) -> ModelCalls:
    """Each `gemini` message a call (at its first line), sized by the first `tokens.input`
    any line of it records; the context's characters are the messages in force (the last
    version of each, since the last `$set` of the history, less what a rewind took)."""
    calls = ModelCalls()
    in_force: dict[str, int] = {}  # message id -> its characters, in the order first written
    versions: dict[str, int] = {}  # message id -> the line of its latest version
    call_of: dict[str, int] = {}
    items = 0
    big_line = big_chars = -1
    for f in facts:
        if f.what == REWIND:
            if f.id in in_force:
                ids = list(in_force)
                for gone in ids[ids.index(f.id) :]:
                    del in_force[gone]
                a.tag(f.line, f"rewind: the messages from {f.id!s:.40} on are gone from the "
                      "conversation (the model never saw them again)")  # fmt: skip
            else:
                in_force.clear()
                a.tag(f.line, "rewind: to a message not in the file; the conversation starts over")
            continue
        if f.what == SET:
            in_force = {m[0]: (m[2] if m[1] in SENT_TYPES else 0) for m in f.messages}
            calls.compactions.append(
                Compaction(f.line, HISTORY_SET, summary="readable", resets=True)
            )
            a.tag(f.line, f"the history was rewritten here ({len(f.messages):,} messages: "
                  "older results masked, or the conversation compressed)")  # fmt: skip
            for m in f.messages:
                _size_call(calls, call_of, m[0], m[3])
            continue
        assert f.id is not None
        chars = f.chars if f.type in SENT_TYPES else 0
        before = versions.get(f.id)
        if before is not None:
            a.tag(f.line, f"the message of line {before:,}, written again with what it "
                  "gained (results, tokens): this version replaces that one")  # fmt: skip
            a.tag(before, f"written again on line {f.line:,} (with its results or tokens): "
                  "that version replaces this one")  # fmt: skip
        versions[f.id] = f.line
        if f.type == "gemini" and f.id not in call_of:
            call_of[f.id] = len(calls.lines)
            calls.lines.append(f.line)
            calls.tokens.append(-1)
            calls.fields.append(0)
            calls.windows.append(-1)
            calls.chars.append(sum(in_force.values()))
            calls.added.append(items)
            calls.models.append(calls.model_index(f.model) if f.model else -1)
            calls.big_lines.append(big_line)
            calls.big_chars.append(big_chars)
            items, big_line, big_chars = 0, -1, -1
        _size_call(calls, call_of, f.id, f.tokens)
        if f.type in SENT_TYPES:
            if f.id not in in_force:
                items += 1
            in_force[f.id] = chars
            if chars > big_chars:
                big_line, big_chars = f.line, chars
    return calls


def _size_call(calls: ModelCalls, call_of: dict[str, int], message: str, tokens: int) -> None:
    index = call_of.get(message)
    if index is not None and tokens >= 0 and calls.tokens[index] < 0:
        calls.set_figure(index, tokens, GEMINI_TOKENS, -1)


#: How much of a session's start is read for its id (the metadata line is first).
HEAD_BYTES = 64 << 10


def _session_id(path: Path) -> str | None:
    """The `sessionId` of the session's metadata line (its first)."""
    try:
        fd = open_readonly(path)
    except (OSError, TranscriptError):
        return None
    try:
        head = os.pread(fd, HEAD_BYTES, 0)
        if is_zstd(head):
            head = read_head(fd, HEAD_BYTES)[0]
    except (OSError, CompressedError):
        return None
    finally:
        os.close(fd)
    for raw in head.split(b"\n")[:8]:
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, Mapping) and isinstance(obj.get("sessionId"), str):
            return str(obj["sessionId"])
    return None


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


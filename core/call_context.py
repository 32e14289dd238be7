"""The context of one model call: the messages the model was sent for it, as the file has them.

"What did the model really see at call 57?" is answered from the file alone,
by each format's own rule of what a request carries (`../shared/spec`):

- Claude Code: the conversation the request carried is the branch the
  response is on: its `parentUuid` chain, back to the last `compact_boundary`
  (whose `parentUuid` is null), so a rewound branch's lines are not in it. A
  parallel batch's results hang off the lines of their own `tool_use`s, beside
  the chain: a line the pass found parented on its own step
  (`SessionAnalysis.sides`) whose parent is in it is in it too, and so is a
  later line of the response its parent is part of. The agent's own records are
  never sent, and a line parented on one goes on from the conversation line
  before it (the pass's rule, which `core.lifetime` follows); a response written over several lines
  (one `message.id`) is one turn; a result a `microcompact_boundary` cleared
  before the call is said to be cleared (the model got
  `[Old tool result content cleared]`), every other result is the line's text,
  spill marker and preview as the line holds them.
- Codex: the `response_item`s since the last compaction, in file order: a
  `compacted` record's `replacement_history` first (or its `message`, the
  summary), or a remote `compaction` item, whose summary cannot be read.
  `ghost_snapshot`s, `event_msg`s and `turn_context`s are not sent.
- LLM::Agent: the replay (`core.tables.Replay`, the reference's `load`) as of
  the line before the call's response. When no compaction or elision came at
  or after that line, that is the start of the whole file's replay; otherwise
  the lines before it are replayed again.

What the file does not record is said once: the tool definitions, and but for an
LLM::Agent transcript (which records it as a `system` message) the system prompt.
Where the call's size is recorded, with the tokens it implies beyond what the file
holds (the recorded size less an estimate of the entries' characters,
`core.calls.estimate_tokens`, never below 0, and always called an estimate).

Only the lines a call needs are read: from its last compaction to its response
(Claude Code, Codex), found through the analysis's calls and compactions.
"""

from __future__ import annotations

import contextlib
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from transcript_view.core.analysis import Analysis, AnalysisPass, map_lines
from transcript_view.core.calls import Compaction, ModelCall, estimate_tokens
from transcript_view.core.decoding import decoded_lines
from transcript_view.core.formats import claude_lines as cl
from transcript_view.core.formats import codex as cx
from transcript_view.core.formats import copilot as cp
from transcript_view.core.formats import gemini as gm
from transcript_view.core.formats import opencode as oc
from transcript_view.core.formats import qwen as qw
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.tables import Replay
from transcript_view.core.text import plural
from transcript_view.core.transcript import LineProblem, Transcript, parse_json_line

__all__ = [
    "CLEARED_TEXT",
    "ENCRYPTED_SUMMARY",
    "CallContext",
    "ContextEntry",
    "call_at_line",
    "claude_line_chars",
    "compacted_history",
    "context_of_call",
    "replay_at",
]

#: What microcompaction put in a request for a result it cleared (CLAUDE_CODE.md).
CLEARED_TEXT = "[Old tool result content cleared]"
#: What a compaction whose summary the provider encrypted is, in words.
ENCRYPTED_SUMMARY = "summary not readable: encrypted by the provider"
#: What the file never holds of a request (Claude Code, Codex, and an LLM::Agent
#: transcript with no system message).
NOT_IN_FILE = "system prompt and tool definitions"
#: What an LLM::Agent transcript that records its system prompt still does not hold.
NOT_IN_FILE_WITH_PROMPT = "tool definitions"


@dataclass(frozen=True, slots=True)
class ContextEntry:
    """One message of a call's context: where the file has it, and what it is."""

    line: int
    """The line it is read from (a turn's first line; a compaction's for its summary)."""
    role: str
    """`user`, `assistant`, `tool` (a tool result), `summary` (a compaction's), or the
    reference role (`system`…)."""
    chars: int
    """Its characters as the model got them (what an estimate counts)."""
    what: str
    """It in a few words ("tool result", "compaction summary", "response, lines 5–7")."""
    lines: tuple[int, ...] = ()
    """Every line of the turn, when it is written over several (a Claude Code response)."""
    item: int = -1
    """Codex: the index of the item in its `compacted` line's `replacement_history`."""
    cleared_at: int | None = None
    """Claude Code: the microcompaction that cleared this result before the call."""
    cleared: tuple[str, ...] = ()
    """The tool ids of the results of this line that were cleared."""
    stub: str | None = None
    """LLM::Agent: the elision stub the model got instead of the content."""
    summary: bool = False
    """The entry is a compaction's summary (or stands where it would be)."""

    @property
    def all_lines(self) -> tuple[int, ...]:
        """Every line the entry is read from (its own, at least)."""
        return self.lines or (self.line,)


@dataclass(frozen=True, slots=True)
class CallContext:
    """What the model was sent for one call (or the next, `index` None)."""

    call: ModelCall | None
    """The call (None: the next call, after the file's last line)."""
    entries: tuple[ContextEntry, ...]
    compaction: Compaction | None
    """The compaction the context starts after (None: it starts at the file's start)."""
    not_in_file: int | None
    """Tokens the recorded size implies beyond the entries (an estimate); None when the
    size is not recorded."""
    index: int | None = None
    """0-based in `analysis.calls`; None: the next call."""
    chars: int = 0
    """The entries' characters, together."""
    line: int = 0
    """The context is what the file holds before this line (the call's response)."""
    replay: Replay | None = None
    """LLM::Agent: the replay as of the call (the model view draws it)."""
    problems: tuple[str, ...] = ()
    """What could not be followed (a chain whose parent is not in the file, a replay's)."""
    system_line: int | None = None
    """LLM::Agent: the line of the system prompt the call was sent (the reference
    records it as a `system` message), so only the tool definitions are missing."""

    @property
    def unrecorded(self) -> str:
        """What of the request the file does not hold, in words, for this format."""
        return NOT_IN_FILE if self.system_line is None else NOT_IN_FILE_WITH_PROMPT

    @property
    def estimate(self) -> int:
        """The entries' size in tokens, estimated (`core.calls.estimate_tokens`)."""
        return int(estimate_tokens(self.chars))

    @property
    def number(self) -> int | None:
        """The call's 1-based number (None: the next call)."""
        return None if self.index is None else self.index + 1

    def tokens_words(self) -> str:
        """The call's size: recorded (and where from), or an estimate, said so."""
        call = self.call
        if call is None:
            return f"~{self.estimate:,} tokens (estimate: {plural(self.chars, 'character')} / 4)"
        if call.recorded:
            return f"{call.tokens:,} tokens (recorded: {call.field})"
        return f"~{call.tokens:,} tokens (estimate: {call.field})"

    def fill_words(self) -> str | None:
        """The call's window and how full it was, or None (no window)."""
        call = self.call
        if call is None or not call.window:
            return None
        source = call.window_source.value if call.window_source is not None else ""
        fill = call.fill or 0.0
        estimate = "" if call.recorded else " (estimate)"
        return f"window {call.window:,} ({source}) · {fill:.0%} full{estimate}"

    def compaction_words(self) -> str:
        """The compaction the context starts after, or that it starts at the file's start."""
        c = self.compaction
        if c is None:
            return "no compaction before it: the context starts at the file's start"
        words = f"starts after the {c.kind} on line {c.line:,}"
        if c.trigger:
            words += f" ({c.trigger})"
        if c.summary == "encrypted":
            words += f": {ENCRYPTED_SUMMARY}"
        return words

    def not_in_file_words(self) -> str:
        """What the file never holds, said once, with the size the usage implies for it."""
        prompt = (
            ""
            if self.system_line is None
            else f"; the system prompt is in it (line {self.system_line:,}) and counted"
        )
        if self.not_in_file is None:
            return (
                f"The {self.unrecorded} are not in the file and not counted "
                f"(the size is an estimate of what the file holds{prompt})."
            )
        assert self.call is not None
        return (
            f"about {self.not_in_file:,} tokens not in the file: {self.unrecorded} "
            f"(an estimate: the recorded {self.call.tokens:,} less ~{self.estimate:,} "
            f"for the entries' characters / 4{prompt})"
        )


def context_of_call(
    transcript: Transcript,
    analysis: Analysis | SessionAnalysis,
    index: int | None,
    *,
    entries: bool = True,
) -> CallContext:
    """The context of call `index` (0-based in `analysis.calls`; None: the next call).

    Args:
        transcript: the analysed transcript, indexed (its lines are read again).
        analysis: its analysis (where the calls and compactions are).
        index: the call; None for the call after the file's last line.
        entries: False: an LLM::Agent transcript's entries are not made (each reads its
            line back), only its `replay` (what the model view draws) and its characters.

    Raises:
        IndexError: no such call.
    """
    calls = analysis.calls
    if index is not None and not 0 <= index < len(calls):
        raise IndexError(index)
    call = calls.call(index) if index is not None else None
    stop = calls.lines[index] if index is not None else transcript.line_count + 1
    if isinstance(analysis, Analysis):
        replay, problems = replay_at(transcript, analysis, index)
        made = tuple(_replay_entries(replay)) if entries else ()
        chars = replay.chars_total
        compaction = _last_reset(calls.compactions, stop)
    elif analysis.format is Format.CODEX:
        made, compaction, problems = _codex(transcript, analysis, stop)
        chars, replay = sum(e.chars for e in made), None
    elif analysis.format is Format.QWEN:
        made, compaction, problems = _qwen(transcript, analysis, stop)
        chars, replay = sum(e.chars for e in made), None
    elif analysis.format is Format.GEMINI:
        made, compaction, problems = _gemini(transcript, analysis, stop)
        chars, replay = sum(e.chars for e in made), None
    elif analysis.format is Format.OPENCODE:
        made, compaction, problems = _opencode(transcript, analysis, stop)
        chars, replay = sum(e.chars for e in made), None
    elif analysis.format is Format.COPILOT:
        made, compaction, problems = _copilot(transcript, analysis, stop)
        chars, replay = sum(e.chars for e in made), None
    else:
        made, compaction, problems = _claude(transcript, analysis, stop)
        chars, replay = sum(e.chars for e in made), None
    system_line = None
    if replay is not None and (first := replay.first_of_role("system")) is not None:
        system_line = replay.line_at(first)
    not_in_file = None
    if call is not None and call.recorded:
        not_in_file = max(call.tokens - estimate_tokens(chars), 0)
    return CallContext(
        call,
        made,
        compaction,
        not_in_file,
        index=index,
        chars=chars,
        line=stop,
        replay=replay,
        problems=tuple(problems),
        system_line=system_line,
    )


def call_at_line(analysis: Analysis | SessionAnalysis, line: int) -> int | None:
    """The call whose response `line` is part of, or else the first call after it (`M`):
    the call a line "belongs to" for a reader. None: no call at or after it (the next)."""
    lines = analysis.calls.lines
    at = bisect_left(lines, line + 1) - 1  # the last call beginning at or before `line`
    if at >= 0 and _same_response(analysis, at, line):
        return at
    after = at + 1
    return after if after < len(lines) else None


def _same_response(analysis: Analysis | SessionAnalysis, index: int, line: int) -> bool:
    """Whether `line` is a line of call `index`'s response (its first line, or a line of
    the same Claude Code response)."""
    first = analysis.calls.lines[index]
    if line == first:
        return True
    if isinstance(analysis, SessionAnalysis) and analysis.format is Format.CODEX:
        return _codex_same_response(analysis.transcript, first, line)
    if isinstance(analysis, SessionAnalysis) and analysis.format is Format.QWEN:
        return _qwen_same_response(analysis.transcript, first, line)
    if not isinstance(analysis, SessionAnalysis) or analysis.format is not Format.CLAUDE_CODE:
        return False
    t = analysis.transcript
    head, here = _read_claude(t, first), _read_claude(t, line)
    if head is None or here is None or here.type != "assistant":
        return False
    return _msg_id(head) is not None and _msg_id(head) == _msg_id(here)


#: How many lines past a Codex response's first `M` looks for the item under the cursor.
_RESPONSE_SPAN = 2_000


def _codex_same_response(t: Transcript, first: int, line: int) -> bool:
    """Whether rollout `line` is one of the model's items of the response that begins on
    `first`: no input (a user message, a tool output) and no compaction between them."""
    if line - first > _RESPONSE_SPAN:
        return False
    problems: list[LineProblem] = []
    model = False  # whether the last line read is one of the model's items
    for _, _, _, obj in decoded_lines(t.raw_chunks(first + 1, line), _codex_decode, cx.Line,
                                      problems):  # fmt: skip
        item = obj.payload
        model = False
        if obj.type == "compacted":
            return False
        if obj.type != "response_item" or type(item) is not cx.Payload:
            continue
        what = item.type
        model = (what == "message" and item.role == "assistant") or (
            type(what) is str and what in cx.MODEL_ITEMS
        )
        if not model and what != cx.GHOST:
            return False
    return model


def _last_reset(compactions: list[Compaction], before: int) -> Compaction | None:
    """The last compaction that started the context over, before line `before`."""
    at = bisect_left(compactions, before, key=lambda c: c.line)
    for c in reversed(compactions[:at]):
        if c.resets:
            return c
    return None


# -- LLM::Agent ----------------------------------------------------------------------------------


def replay_at(
    transcript: Transcript, analysis: Analysis, index: int | None
) -> tuple[Replay, list[str]]:
    """The replay as the model was sent it for call `index` (None: next): what the pass's
    replay held before the call's response, and the problems it met on the way.

    The next call's is the analysis's own. An earlier call's is the start of it
    when nothing after the call's line edited the conversation (a compaction or an
    elision, which change entries before them): the entries from later lines
    are all at its end. Otherwise the lines before the call are replayed again,
    by the pass's own rules.
    """
    if index is None:
        return analysis.replay, list(analysis.replay_problems)
    calls = analysis.calls
    line = calls.lines[index]
    edited = analysis.type_counts.get("elision", 0) > 0 or any(
        c.line >= line for c in calls.compactions
    )
    if not edited:
        replay = analysis.replay
        lines = replay.entry_lines()
        count = len(lines)
        while count and lines[count - 1] >= line:
            count -= 1
        problems = [p for p in analysis.replay_problems if _problem_line(p) < line]
        return replay.prefix(count, calls.context_chars(index)), problems
    p = AnalysisPass(transcript)
    for first, last in transcript.line_ranges():
        if first >= line:
            break
        p.absorb(map_lines(transcript, first, min(last, line - 1), p.id_keys))
    return p.replay, list(p.analysis.replay_problems)


def _problem_line(problem: str) -> int:
    """The line a replay problem names ("line 12: …")."""
    head = problem.split(":", 1)[0]
    digits = head.removeprefix("line ").strip()
    return int(digits) if digits.isdigit() else 0


def _replay_entries(replay: Replay) -> list[ContextEntry]:
    out = []
    for i in range(len(replay)):
        line, role, _, summary, stub = replay.slot(i)
        if summary:
            what = "compaction summary, replacing earlier turns"
        elif stub is not None:
            what = "content replaced by an elision stub"
        elif role == "tool":
            what = "tool result"
        else:
            what = "message"
        out.append(
            ContextEntry(
                line,
                "summary" if summary else role,
                replay.entry_chars(i),
                what,
                stub=stub,
                summary=summary,
            )
        )
    return out


# -- Claude Code ---------------------------------------------------------------------------------

_claude_decode = msgspec.json.Decoder(cl.Line).decode
_encode = msgspec.json.Encoder().encode


def _read_claude(t: Transcript, line: int) -> cl.Line | None:
    start, _ = t.line_span(line)
    obj = cl.read_line(t.raw_line(line), line, start, is_last=False)
    return obj if type(obj) is cl.Line else None


def _msg_id(obj: cl.Line) -> object:
    message = obj.message
    return message.id if type(message) is cl.Message else None


def claude_line_chars(obj: cl.Line) -> tuple[int, dict[str, int]]:
    """A Claude Code line's characters as an estimate counts them (the rule of
    `claude_lines.map_claude`: texts, tool results' texts, tool calls' inputs as JSON),
    and each tool result's own, by its tool_use id."""
    message = obj.message
    if type(message) is not cl.Message:
        return 0, {}
    content = message.content
    if type(content) is str:
        return len(content), {}
    if type(content) is not list:
        return 0, {}
    chars = 0
    results: dict[str, int] = {}
    for block in content:
        if type(block) is not cl.Block:
            continue
        if block.type == "text" and type(block.text) is str:
            chars += len(block.text)
        elif block.type == "tool_use" and obj.type == "assistant" and block.input is not None:
            with contextlib.suppress(TypeError, ValueError, OverflowError, msgspec.EncodeError):
                chars += len(_encode(block.input))
        elif block.type == "tool_result" and obj.type == "user":
            inner, n = block.content, 0
            if type(inner) is str:
                n = len(inner)
            elif type(inner) is list:
                n = sum(
                    len(p.text) for p in inner if type(p) is cl.Part and p.type == "text"
                    and type(p.text) is str
                )  # fmt: skip
            chars += n
            if type(block.tool_use_id) is str:
                results[block.tool_use_id] = results.get(block.tool_use_id, 0) + n
    return chars, results


@dataclass(slots=True)
class _Node:
    """What the walk needs of one Claude Code line with a uuid."""

    line: int
    kind: str
    parent: str | None
    msg_id: object = None
    summary: bool = False
    calls: frozenset[str] = frozenset()
    answers: tuple[str, ...] = ()
    chars: int = 0
    results: dict[str, int] = field(default_factory=dict)


def _claude_nodes(t: Transcript, start: int, stop: int) -> tuple[dict[str, _Node], list[str]]:
    """Lines `start` to `stop` with a uuid, by uuid, and the uuids in file order."""
    nodes: dict[str, _Node] = {}
    order: list[str] = []
    problems: list[LineProblem] = []
    if stop < start:
        return nodes, order
    records: set[str] = set()  # the uuids of Claude Code's own records (progress, …)
    previous: str | None = None  # the last conversation line's uuid
    for line, _, _, obj in decoded_lines(t.raw_chunks(start, stop), _claude_decode, cl.Line,
                                         problems):  # fmt: skip
        uuid, kind = obj.uuid, obj.type
        if type(uuid) is not str or type(kind) is not str:
            continue
        if kind not in cl.CONVERSATION:
            records.add(uuid)
            continue
        parent = obj.parentUuid if type(obj.parentUuid) is str else None
        if parent in records:  # the pass's rule: it goes on from the conversation line before
            parent = previous
        previous = uuid
        node = _Node(line, kind, parent)
        if kind in ("user", "assistant"):
            node.msg_id = _msg_id(obj) if kind == "assistant" else None
            node.summary = obj.isCompactSummary is True
            node.chars, node.results = claude_line_chars(obj)
            content = obj.message.content if type(obj.message) is cl.Message else None
            blocks = [b for b in content if type(b) is cl.Block] if type(content) is list else []
            node.calls = frozenset(
                b.id for b in blocks if b.type == "tool_use" and type(b.id) is str
            )
            node.answers = tuple(
                b.tool_use_id
                for b in blocks
                if b.type == "tool_result" and type(b.tool_use_id) is str
            )
        elif kind == "system" and obj.subtype == "compact_boundary":
            node.parent = None  # the context starts over here, whatever it names
        if uuid not in nodes:
            order.append(uuid)
        nodes[uuid] = node
    return nodes, order


def _claude(
    t: Transcript, analysis: SessionAnalysis, stop: int
) -> tuple[tuple[ContextEntry, ...], Compaction | None, list[str]]:
    """The conversation the request before line `stop` carried (see the module)."""
    boundaries = [c for c in analysis.calls.compactions if c.kind == "compact_boundary"]
    compaction = _last_reset(boundaries, stop)
    start = compaction.line if compaction is not None else 1
    last = min(stop, t.line_count + 1) - 1
    problems: list[str] = []
    while True:
        nodes, order = _claude_nodes(t, start, min(stop, t.line_count))
        if stop <= t.line_count:  # the response: its request is what its parent chain holds
            head = next((u for u in reversed(order) if nodes[u].line == stop), None)
            leaf = nodes[head].parent if head is not None else None
            if head is None:  # no uuid on the response: the line before it is the leaf
                leaf = next((u for u in reversed(order) if nodes[u].line < stop), None)
        else:  # the next call: the last conversation line is the leaf
            leaf = next((u for u in reversed(order) if nodes[u].kind in ("user", "assistant")),
                        None)  # fmt: skip
        chain: set[str] = set()
        cur = leaf
        while cur is not None and cur in nodes and cur not in chain:
            chain.add(cur)
            cur = nodes[cur].parent
        if cur is None or cur in chain or start == 1:
            if cur is not None and cur not in chain:
                problems.append(
                    f"the chain of parents leaves the file at {cur[:40]!r}: "
                    "the lines before it are not in this file"
                )
            break
        start = 1  # the chain goes back past the compaction: read from the start
    # The compaction the context starts after: the boundary the chain ends at, else the last
    # before the chain's first line (a chain whose first line has no parent).
    at_line = {c.line: c for c in boundaries}
    ends = [nodes[u].line for u in chain if nodes[u].line in at_line]
    if ends:
        compaction = at_line[max(ends)]
    elif compaction is not None:
        head_line = min((nodes[u].line for u in chain), default=last + 1)
        if head_line < compaction.line:
            compaction = _last_reset(boundaries, head_line)
    # Beside the chain: a parallel batch's results and the other lines of its responses.
    # Which lines hang off their own step is the pass's rule (`SessionAnalysis.sides`),
    # which `core.lifetime` follows too.
    included: set[str] = set(chain)
    sides = analysis.sides
    for uuid in order:
        node = nodes[uuid]
        if uuid in included or node.line > last or node.kind not in ("user", "assistant"):
            continue
        if node.parent is None or node.parent not in included:
            continue
        # A later line of its parent's response (the request carries the whole response).
        same_response = node.msg_id is not None and node.msg_id == nodes[node.parent].msg_id
        i = bisect_left(sides, (node.line, 0))
        beside = i < len(sides) and sides[i][0] == node.line
        if same_response or beside:
            included.add(uuid)
    cleared: dict[int, dict[str, int]] = {}
    for micro in analysis.microcompactions:
        if micro.line < stop:
            for result in micro.cleared:
                if result.result is not None:
                    cleared.setdefault(result.result, {})[result.tool_use_id] = micro.line
    kept = sorted((nodes[u] for u in included if nodes[u].kind in ("user", "assistant")),
                  key=lambda n: n.line)  # fmt: skip
    replaced = _replacements(t, analysis.replaced, {n.line for n in kept}, stop)
    return tuple(_claude_entries(kept, cleared, replaced)), compaction, problems


def _replacements(
    t: Transcript, replaced: dict[int, dict[str, int]], lines: set[int], stop: int
) -> dict[int, dict[str, tuple[int, int]]]:
    """The results of `lines` a `content-replacement` line before `stop` replaced: by
    result line and tool id, (the replacement's line, its characters: what the model got)."""
    out: dict[int, dict[str, tuple[int, int]]] = {}
    for line in lines & replaced.keys():
        for tid, at in replaced[line].items():
            if at >= stop:
                continue
            try:
                obj = msgspec.json.decode(t.raw_line(at))
            except (msgspec.DecodeError, OSError):
                continue
            reps = obj.get("replacements") if isinstance(obj, Mapping) else None
            for rep in reps if isinstance(reps, list) else ():
                if isinstance(rep, Mapping) and rep.get("toolUseId") == tid:
                    text = rep.get("replacement")
                    if isinstance(text, str):
                        out.setdefault(line, {})[tid] = (at, len(text))
    return out


def _claude_entries(
    kept: list[_Node],
    cleared: dict[int, dict[str, int]],
    replaced: dict[int, dict[str, tuple[int, int]]],
) -> list[ContextEntry]:
    out: list[ContextEntry] = []
    turn: list[_Node] = []

    def close() -> None:
        if not turn:
            return
        lines = tuple(n.line for n in turn)
        what = "response" if len(lines) == 1 else f"response, lines {lines[0]:,}–{lines[-1]:,}"
        chars = sum(n.chars for n in turn)
        several = lines if len(lines) > 1 else ()
        out.append(ContextEntry(lines[0], "assistant", chars, what, several))
        turn.clear()

    for node in kept:
        if node.kind == "assistant":
            if turn and (node.msg_id is None or node.msg_id != turn[-1].msg_id):
                close()
            turn.append(node)
            continue
        close()
        if node.summary:
            out.append(ContextEntry(node.line, "summary", node.chars, "compaction summary",
                                    summary=True))  # fmt: skip
        elif node.answers:
            gone = cleared.get(node.line, {})
            chars = node.chars
            what = "tool result" if len(node.answers) == 1 else plural(len(node.answers),
                                                                       "tool result")  # fmt: skip
            at = None
            if gone:
                at = max(gone.values())
                chars -= sum(node.results.get(tid, 0) for tid in gone)
                chars += len(CLEARED_TEXT) * len(gone)
                what += (
                    f" cleared by the microcompaction on line {at:,}: "
                    f"the model was sent {CLEARED_TEXT}"
                )
            for tid, (where, length) in replaced.get(node.line, {}).items():
                if tid not in gone:
                    chars += length - node.results.get(tid, 0)
                    what += f" (replaced at request time by line {where:,}: what the model got)"
            out.append(
                ContextEntry(node.line, "tool", chars, what, cleared_at=at, cleared=tuple(gone))
            )
        else:
            out.append(ContextEntry(node.line, "user", node.chars, "prompt"))
    close()
    return out


# -- Codex ---------------------------------------------------------------------------------------

_codex_decode = msgspec.json.Decoder(cx.Line).decode


def _item_role(kind: object, role: object) -> str:
    if kind == "message":
        return role if type(role) is str else "user"
    if type(kind) is str and kind in cx.OUTPUT_TYPES:
        return "tool"
    if type(kind) is str and kind in cx.MODEL_ITEMS:
        return "assistant"
    if type(kind) is str and kind in cx.COMPACTION_ITEMS:
        return "summary"
    return "other"


def _item_what(kind: object) -> str:
    if type(kind) is str and kind in cx.COMPACTION_ITEMS:
        return f"remote compaction: {ENCRYPTED_SUMMARY}"
    if kind == "message":
        return "message"
    if type(kind) is str and kind in cx.OUTPUT_TYPES:
        return "tool output"
    return str(kind) if type(kind) is str else "item"


def _codex(
    t: Transcript, analysis: SessionAnalysis, stop: int
) -> tuple[tuple[ContextEntry, ...], Compaction | None, list[str]]:
    """The items sent before line `stop`: since the last compaction, in file order."""
    compaction = _last_reset(analysis.calls.compactions, stop)
    start = compaction.line if compaction is not None else 1
    last = min(stop - 1, t.line_count)
    out: list[ContextEntry] = []
    problems: list[LineProblem] = []
    if last < start:
        return (), compaction, []
    for line, offset, raw, obj in decoded_lines(t.raw_chunks(start, last), _codex_decode,
                                                cx.Line, problems):  # fmt: skip
        kind = obj.type
        if kind == "compacted":
            out.extend(_compacted_entries(raw, line, offset))
            continue
        item = obj.payload
        if kind != "response_item" or type(item) is not cx.Payload:
            continue
        what = item.type
        if what == cx.GHOST:
            continue
        chars = cx.item_chars(
            what, item.content, item.arguments, item.input, item.output, item.summary
        )
        out.append(
            ContextEntry(
                line,
                _item_role(what, item.role),
                chars,
                _item_what(what),
                summary=type(what) is str and what in cx.COMPACTION_ITEMS,
            )
        )
    return tuple(out), compaction, []


# -- Qwen Code -----------------------------------------------------------------------------------


def _qwen_record(t: Transcript, line: int) -> Mapping[str, Any] | None:
    start, _ = t.line_span(line)
    obj = parse_json_line(t.raw_line(line), line, start)
    return obj if isinstance(obj, Mapping) else None


def _qwen_same_response(t: Transcript, first: int, line: int) -> bool:
    """Whether session `line` is a record of the turn that begins on `first`: the model's
    records of one turn share its `uuid`, one after the other."""
    if line - first > _RESPONSE_SPAN:
        return False
    head = _qwen_record(t, first)
    uuid = head.get("uuid") if head is not None else None
    if not isinstance(uuid, str):
        return False
    for at in range(first + 1, line + 1):
        obj = _qwen_record(t, at)
        if obj is None or obj.get("type") != "assistant" or obj.get("uuid") != uuid:
            return False
    return True


_QWEN_ROLES = {"user": "user", "assistant": "assistant", "tool_result": "tool"}


def _qwen(
    t: Transcript, analysis: SessionAnalysis, stop: int
) -> tuple[tuple[ContextEntry, ...], Compaction | None, list[str]]:
    """The records sent before line `stop`: since the last compression (whose compressed
    history the model continued from), on the chain of `parentUuid`s that leads to the last
    record before `stop` (what Qwen Code sends, and resumes: a rewind leaves the records
    after the turn it went back to on a dead branch), in file order. The records of one
    turn share its `uuid` and are all on the chain."""
    compaction = _last_reset(analysis.calls.compactions, stop)
    start = compaction.line if compaction is not None else 1
    last = min(stop - 1, t.line_count)
    records: dict[int, Mapping[str, Any]] = {}
    lines_of: dict[str, list[int]] = {}
    for line in range(start, last + 1):
        obj = _qwen_record(t, line)
        if obj is not None:
            records[line] = obj
            if isinstance(obj.get("uuid"), str):
                lines_of.setdefault(obj["uuid"], []).append(line)
    chain = _qwen_chain(records, lines_of)
    out: list[ContextEntry] = []
    for line, obj in records.items():
        if chain is not None and line not in chain:
            continue
        role = qw.record_role(obj)
        if role is None:
            continue
        chars = qw.record_chars(obj)
        if role == qw.RESET:
            out.append(ContextEntry(line, "summary", chars, "compressed history", summary=True))
            continue
        kind = str(obj.get("type"))
        what = "tool result" if kind == "tool_result" else "message"
        out.append(ContextEntry(line, _QWEN_ROLES.get(kind, "other"), chars, what))
    return tuple(out), compaction, []


def _qwen_chain(
    records: dict[int, Mapping[str, Any]], lines_of: dict[str, list[int]]
) -> set[int] | None:
    """The lines on the `parentUuid` chain of the last record (None: it names no uuid, and
    every record counts)."""
    tip = next((obj for obj in reversed(records.values()) if isinstance(obj.get("uuid"), str)),
               None)  # fmt: skip
    if tip is None:
        return None
    chain: set[int] = set()
    uuid: object = tip["uuid"]
    while isinstance(uuid, str) and uuid in lines_of:
        lines = lines_of.pop(uuid)  # (popped: a cycle in the file ends the walk)
        chain.update(lines)
        uuid = records[lines[0]].get("parentUuid")
    return chain


# -- OpenCode ------------------------------------------------------------------------------------


def _opencode(
    t: Transcript, analysis: SessionAnalysis, stop: int
) -> tuple[tuple[ContextEntry, ...], Compaction | None, list[str]]:
    """The parts sent before line `stop`: since the last compaction (OpenCode's
    `filterCompacted` sends the compaction's request, its summary and what came after), each
    part the model is sent, with the role of the message it is a part of."""
    compaction = _last_reset(analysis.calls.compactions, stop)
    start = compaction.line if compaction is not None else 1
    role = "user"
    out: list[ContextEntry] = []
    for line in range(start, min(stop - 1, t.line_count) + 1):
        obj = _qwen_record(t, line)
        if obj is None:
            continue
        data = obj.get("data")
        if obj.get("opencode") == "message" and isinstance(data, Mapping):
            role = "assistant" if data.get("role") == "assistant" else "user"
            continue
        kind_of = oc.record_role(obj)
        if kind_of is None or kind_of == oc.MODEL:
            continue
        chars = oc.record_chars(obj)
        kind = data.get("type") if isinstance(data, Mapping) else None
        if kind_of == oc.RESET:
            out.append(ContextEntry(line, "user", chars, "compaction request", summary=True))
        elif kind == "tool":
            out.append(ContextEntry(line, "tool", chars, "tool call and result"))
        else:
            what = "reasoning" if kind == "reasoning" else "message"
            out.append(ContextEntry(line, role, chars, what))
    return tuple(out), compaction, []


# -- Copilot CLI ---------------------------------------------------------------------------------

_COPILOT_ROLES = {
    cp.USER: ("user", "message"),
    cp.ASSISTANT: ("assistant", "message"),
    cp.RESULT: ("tool", "tool result"),
    cp.SYSTEM: ("system", "system message"),
}


def _copilot(
    t: Transcript, analysis: SessionAnalysis, stop: int
) -> tuple[tuple[ContextEntry, ...], Compaction | None, list[str]]:
    """The events sent before line `stop`: since the last compaction (its summary first) or
    truncation (what it kept is not said: from there on), each that is what the model got."""
    compaction = _last_reset(analysis.calls.compactions, stop)
    start = compaction.line if compaction is not None else 1
    out: list[ContextEntry] = []
    for line in range(start, min(stop - 1, t.line_count) + 1):
        obj = _qwen_record(t, line)
        if obj is None or cp.record_role(obj) not in (cp.INPUT, cp.RESET):
            continue
        chars = cp.record_chars(obj)
        kind = obj.get("type")
        if kind == cp.COMPACTED:
            out.append(ContextEntry(line, "summary", chars, "compaction summary", summary=True))
        elif isinstance(kind, str) and kind in _COPILOT_ROLES:
            role, what = _COPILOT_ROLES[kind]
            out.append(ContextEntry(line, role, chars, what))
    return tuple(out), compaction, []


# -- Gemini CLI ----------------------------------------------------------------------------------


def _gemini(
    t: Transcript, analysis: SessionAnalysis, stop: int
) -> tuple[tuple[ContextEntry, ...], Compaction | None, list[str]]:
    """The messages in force before line `stop`, in the order first written: the last
    version of each, from the last rewrite of the history on, less what a rewind dropped
    (`loadConversationRecord`'s rule)."""
    compaction = _last_reset(analysis.calls.compactions, stop)
    start = compaction.line if compaction is not None else 1
    last = min(stop - 1, t.line_count)
    in_force: dict[str, ContextEntry] = {}
    for line in range(start, last + 1):
        obj = _qwen_record(t, line)
        if obj is None:
            continue
        patch = obj.get("$set")
        history = patch.get("messages") if isinstance(patch, Mapping) else None
        if isinstance(history, list):
            in_force = {}
            for m in history:
                if isinstance(m, Mapping) and gm.is_message(m) and m.get("type") in gm.SENT_TYPES:
                    in_force[str(m["id"])] = _gemini_entry(line, m, " (rewritten history)")
        elif isinstance(obj.get("$rewindTo"), str):
            ids = list(in_force)
            target = obj["$rewindTo"]
            for gone in ids[ids.index(target) :] if target in in_force else ids:
                del in_force[gone]
        elif gm.is_message(obj) and obj.get("type") in gm.SENT_TYPES:
            in_force[str(obj["id"])] = _gemini_entry(line, obj, "")  # a rewrite keeps its place
    return tuple(in_force.values()), compaction, []


def _gemini_entry(line: int, message: Mapping[str, Any], where: str) -> ContextEntry:
    role = "assistant" if message.get("type") == "gemini" else "user"
    what = "message and its tool results" if message.get("toolCalls") else "message"
    return ContextEntry(line, role, gm.message_chars(message), what + where)


def _compacted_entries(raw: bytes, line: int, offset: int) -> list[ContextEntry]:
    """A `compacted` line's entries: its history's items, or else its summary."""
    try:
        obj = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return []
    payload = obj.get("payload") if isinstance(obj, Mapping) else None
    if not isinstance(payload, Mapping):
        return []
    history = payload.get("replacement_history")
    if isinstance(history, list):
        out = []
        for i, entry in enumerate(history):
            if not isinstance(entry, Mapping) or entry.get("type") == cx.GHOST:
                continue
            kind = entry.get("type")
            chars = cx.item_chars(
                kind,
                entry.get("content"),
                entry.get("arguments"),
                entry.get("input"),
                entry.get("output"),
                entry.get("summary"),
            )
            role = _item_role(kind, entry.get("role"))
            encrypted = type(kind) is str and kind in cx.COMPACTION_ITEMS
            what = _item_what(kind) + " (replacement history)"
            out.append(ContextEntry(line, role, chars, what, item=i, summary=encrypted))
        return out
    message = payload.get("message")
    text = message if isinstance(message, str) else ""
    return [ContextEntry(line, "summary", len(text), "compaction summary", summary=True)]


def compacted_history(raw: bytes) -> list[dict[str, Any]]:
    """The items of a `compacted` line's `replacement_history`, as the entries number them
    (`ContextEntry.item`): what the viewer draws. [] when it records none."""
    try:
        obj = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return []
    payload = obj.get("payload") if isinstance(obj, Mapping) else None
    history = payload.get("replacement_history") if isinstance(payload, Mapping) else None
    if not isinstance(history, list):
        return []
    return [dict(e) if isinstance(e, Mapping) else {} for e in history]

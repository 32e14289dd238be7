"""One pass over a transcript: tool operations, excerpt markers, replay, line problems.

Everything a viewer header, `--check` and the model view need is collected in a
single streaming pass that keeps no message content and no per-envelope Python
objects: a gigabyte transcript has millions of lines, and a few hundred bytes
each would be gigabytes. Operations and the replayed conversation are columns of
line numbers (`core.tables`); the `ToolOperation` and `ReplayEntry` objects a
caller sees are made on access, by re-reading the few lines they come from.

This module is the pass itself and its result. The records it hands out are in
`core.records`, the tables in `core.tables`, the findings only the whole file
can show in `core.consistency`, and the incremental `Analyser` (which keeps a
pass open as a transcript grows) in `core.analyser`.
"""

from __future__ import annotations

import copy
import hashlib
import struct
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, pairwise
from operator import sub
from typing import Any, cast

import msgspec

from transcript_view.core import graphemes, parallel
from transcript_view.core.artifacts import head_tail_sizes, to_bytes
from transcript_view.core.calls import (
    NOT_RECORDED,
    REFERENCE_INPUT_TOKENS,
    REFERENCE_PROMPT_TOKENS,
    REFERENCE_PROMPT_TOKENS_SNAKE,
    CallFold,
    CallRun,
    Compaction,
    ModelCalls,
)
from transcript_view.core.canonical import canonical_string, data_digest
from transcript_view.core.compact import IdOverlay, IdTable
from transcript_view.core.consistency import end_of_pass_findings
from transcript_view.core.decoding import Measure, Measured, as_shape, decoded_lines
from transcript_view.core.envelope_shape import EMPTY_PAYLOAD, Function, Line, Payload, ToolCall
from transcript_view.core.envelope_shape import decode as decode_shape
from transcript_view.core.envelopes import (
    ENVELOPE_VERSION,
    Envelope,
    Message,
    field_str,
    field_text,
)
from transcript_view.core.findings import Finding
from transcript_view.core.found import Found, FoundSoFar
from transcript_view.core.keys import KEY_CODE, IdKeys
from transcript_view.core.markers import Marker, parse_markers
from transcript_view.core.records import ExcerptShape, MarkerSite
from transcript_view.core.tables import (
    ROLE_CODES,
    STICKY,
    Operations,
    Replay,
    id_at,
    read_envelope,
)
from transcript_view.core.transcript import (
    LineProblem,
    Transcript,
    as_last,
    parse_line_bytes,
)

# -- the result ------------------------------------------------------------------------------------


@dataclass(slots=True, weakref_slot=True)
class Analysis:
    """What one pass over a transcript found.

    Weakly referable: a pass server's caller remembers which analysis the
    server has (`core.parallel`) without keeping an old one alive.
    """

    transcript: Transcript
    operations: Operations
    replay: Replay
    lines: int = 0
    envelopes: int = 0
    type_counts: Counter[str] = field(default_factory=Counter)
    meta_line: int | None = None
    problems: list[LineProblem] = field(default_factory=list)
    sites: list[MarkerSite] = field(default_factory=list)
    replay_problems: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    compactions: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Each applied compaction's line -> (first, last) line of the messages it replaced
    (first is -1 when every message up to the cut was sticky and kept): the
    viewer says "replaces lines 3–41", not an id nobody can place."""
    live: bool = False
    """Made while the file is still being written (`Analyser` in follow mode): its last
    turn's unsettled calls read "running" and are not findings, and a last line still
    without its LF is not read yet. `analyse` (and so `--check`) is never live."""
    calls: ModelCalls = field(default_factory=ModelCalls)
    """Every model call (each assistant message), with the size of its context where the
    message's `usage` records it, and every compaction (`core.calls`)."""

    @property
    def excerpt_sites(self) -> list[MarkerSite]:
        """Markers that are a tool result's own excerpt marker (the ones to verify)."""
        return [s for s in self.sites if not s.quoted]

    def named_files(self) -> set[str]:
        """Every artifact basename a marker or an artifact key names."""
        names = {s.marker.file for s in self.excerpt_sites if s.marker.file is not None}
        for art in self.operations.with_artifacts().values():
            if isinstance(art.get("file"), str):
                names.add(str(art["file"]))
        return names


# -- excerpt markers ------------------------------------------------------------------------------


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _shape(content: str, marker: Marker) -> ExcerptShape:
    head = content[: max(marker.start - 1, 0)]
    tail = content[marker.end + 1 :]
    hb, tb = to_bytes(head), to_bytes(tail)
    return ExcerptShape(len(hb), _sha(hb), graphemes.count(head), len(tb), _sha(tb))


def quoted_flags(role: str, content: str, markers: list[Marker]) -> list[bool]:
    """Which markers in a message are quoted (True) rather than the excerpt's own.

    Only a tool result has an excerpt marker of its own, and it stands on a
    line of its own; every other marker is text *about* a marker. When several
    stand alone (a tool that printed a transcript), the one the settle's
    artifact key describes is resolved at the end of the pass; here the first
    is chosen provisionally. Public because the viewer shows a transcript
    before its pass has finished and must apply the same rule, not a copy.
    """
    quoted = [True] * len(markers)
    if role != "tool":
        return quoted
    for i, m in enumerate(markers):
        if m.on_own_line(content):
            quoted[i] = False
            break
    return quoted


# -- digests of what the model saw -----------------------------------------------------------------

_encode = msgspec.json.Encoder().encode
#: The UTF-8 lead bytes of characters beyond the BMP (each found by memchr).
_ASTRAL_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")


def string_digest(text: str) -> str:
    """`data_digest(text)` for a string: sha256 of its canonical JSON, without the slow encoder.

    Every tool message's content is digested (`result-digest`), so this runs a
    hundred thousand times a gigabyte. msgspec's encoder writes a string as the
    reference's canonical JSON does (the same escapes, lower-case `\\u00xx`,
    everything else raw) except for three things, which send it to
    `canonical_string`: `\\b` and `\\f` (named by msgspec), characters beyond
    the BMP (raw there, surrogate pairs in canonical JSON), and lone
    surrogates (msgspec refuses them).
    """
    if "\b" in text or "\f" in text:  # one-character searches: memchr, not a scan each
        return hashlib.sha256(canonical_string(text).encode("utf-8")).hexdigest()
    try:
        data = _encode(text)
    except (UnicodeEncodeError, msgspec.EncodeError):
        return hashlib.sha256(canonical_string(text).encode("utf-8")).hexdigest()
    if not data.isascii() and any(lead in data for lead in _ASTRAL_LEADS):
        data = canonical_string(text).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def _value_digest(value: Any) -> str:
    return string_digest(value) if type(value) is str else data_digest(value)


# -- the map: what each line says, by itself ---------------------------------------------------
#
# A pass is a map and a fold. `map_lines` reads a run of lines and keeps, per
# line, only what the fold needs (a `LineBatch`): counts, id keys, the replay's
# columns, and one small tuple per line that takes part in an operation, a
# marker or the replay's edits. It needs nothing but the lines themselves, so a
# big file's runs are mapped in worker processes at once (`_batches`), while
# the fold (`AnalysisPass.absorb`), which needs every earlier line, takes the
# batches in file order. The event tuples, first field first:

#: `(EV_MESSAGE, line, call_ids, tool_call_id, is_error, digest, sites, ambiguous)`
EV_MESSAGE = 0
#: `(EV_DISPATCH, line, call_id, op_id, key, mismatch)` (`mismatch`: the finding's text or None)
EV_DISPATCH = 1
#: `(EV_SETTLE, line, op_id, artifact, result_digest)`
EV_SETTLE = 2
#: `(EV_COMPACTION, line, replaces_through_id, envelope_id, summary_chars, chars_before)`
EV_COMPACTION = 3
#: `(EV_ELISION, line, items, chars_before)` (`chars_before`: the batch's messages' before it)
EV_ELISION = 4

# What a worker's fold leaves to the real one (`LocalOps.deferred`): a dispatch it
# could not match `(_DISPATCH, line, call_id, row)`, a tool message it could not
# `(_ANSWER, line, call_id, is_error, digest, sites)`, and a settle of an
# operation it never saw dispatched `(_SETTLE, line, op_id, artifact, digest)`.
_DISPATCH, _ANSWER, _SETTLE = 10, 11, 12


def _take(queues: dict[str, list[int]], key: str) -> int:
    """The first row `queues` holds for `key` (which leaves it), or -1."""
    queue = queues.get(key)
    if not queue:
        return -1
    row = queue.pop(0)
    if not queue:
        del queues[key]
    return row


@dataclass(slots=True, eq=False)
class LineBatch:
    """What the fold needs of the lines `first` to `last` (made by `map_lines`).

    Plain data, so a worker process can send it back: no transcript, no
    content (but the few lines whose markers are ambiguous keep theirs).
    """

    first: int
    last: int
    envelopes: int = 0
    types: dict[str, int] = field(default_factory=dict)
    first_envelope: tuple[int, str] | None = None
    meta_line: int | None = None
    keys: array[int] = field(default_factory=lambda: array(KEY_CODE))
    """The pass's `IdKeys` of each envelope id, in line order (lines without an id have none)."""
    key_lines: array[int] = field(default_factory=lambda: array("i"))
    buckets: list[array[int]] = field(default_factory=list)
    """`keys` cut by value into `key_buckets` ranges (by `seal`): how the fold checks a
    whole file's ids at once, a range at a time."""
    problems: list[LineProblem] = field(default_factory=list)
    last_content: int = 0
    """The last line that is not blank (a bad one there is a torn tail, if it is the file's)."""
    last_turn: int = 0
    replay_lines: array[int] = field(default_factory=lambda: array("i"))
    replay_keys: array[int] = field(default_factory=lambda: array(KEY_CODE))
    replay_flags: array[int] = field(default_factory=lambda: array("b"))
    replay_roles: dict[int, str] = field(default_factory=dict)
    events: list[tuple[Any, ...]] = field(default_factory=list)
    chars: int = 0
    """The characters of the batch's messages (their content and tool calls' arguments:
    `tables.message_chars`); each replay edit's event ends with those before it."""
    calls: CallRun = field(default_factory=CallRun)
    """The model calls of the batch: its assistant messages."""
    call_rows: bytearray = field(default_factory=bytearray)
    """A `CALL_ROW` for each call: its message's index in `replay_lines`, the characters
    of the batch's messages before it, and the biggest message since the call before."""
    call_usage: list[tuple[int, int, int]] = field(default_factory=list)
    """The calls whose message has a `usage`: (call, tokens, field code; `usage_tokens`)."""
    folded: LocalOps | None = None
    """The batch's operations, already folded where it was mapped (`_fold_run`); its
    events then hold only the replay's edits."""
    measures: array[int] | None = None
    """The caller's `Measure` of each line, `first` to `last` (-1: no envelope), if asked."""

    def seal(self, lines: int) -> LineBatch:
        """Cut the keys into the fold's ranges (`key_buckets` of the file's `lines`) for its
        whole-file id check; returns the batch.

        A loop over the keys, not a sort (which compares each with a dozen others):
        the fold only needs each range's keys together, in any order.
        """
        count = key_buckets(lines)
        shift = 62 - (count.bit_length() - 1)  # keys are below 2**62 (`core.keys`)
        parts: list[list[int]] = [[] for _ in range(count)]
        adds = [part.append for part in parts]
        for key in self.keys:
            adds[key >> shift](key)
        self.buckets = [array(KEY_CODE, part) for part in parts]
        return self


def key_buckets(lines: int) -> int:
    """Into how many ranges of value a file of `lines` lines cuts its id keys (a power of
    two): some 16,384 keys a range at most, so that each range's set is small."""
    return 1 << (lines >> 14).bit_length()


def _elision_items(items: object) -> list[tuple[str, str]]:
    # `Elision.items`, of the payload's `items`.
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        if isinstance(item, Mapping) and isinstance(item.get("id"), str):
            out.append((str(item["id"]), field_text(item.get("stub"))))
    return out


def _sites(
    line: int, env_id: str | None, role: str, content: str, markers: list[Marker]
) -> tuple[list[MarkerSite], tuple[MarkerSite, list[MarkerSite], str] | None]:
    """A message's markers as sites (their operation is the fold's to join), and any ambiguity."""
    sites = []
    for marker, quoted in zip(markers, quoted_flags(role, content, markers), strict=True):
        site = MarkerSite(line=line, message_id=env_id, role=role, marker=marker, quoted=quoted)
        if not quoted:
            site.shape = _shape(content, marker)
        sites.append(site)
    candidates = [s for s in sites if s.marker.on_own_line(content)]
    if role == "tool" and len(candidates) > 1:
        return sites, (candidates[0], candidates, content)
    return sites, None


def _marker_sites(
    line: int, env_id: str | None, role: str, content: str
) -> tuple[list[MarkerSite], tuple[MarkerSite, list[MarkerSite], str] | None] | None:
    """A message's marker sites and any ambiguity (`_sites`), or None when it names no marker."""
    markers = parse_markers(content)
    return _sites(line, env_id, role, content, markers) if markers else None


def _arguments_mismatch(want: str, arguments: Any) -> str | None:
    """A dispatch's metadata-mismatch text when its arguments do not digest to `want`."""
    got = _value_digest(arguments)
    if got == want:
        return None
    return (
        f"arguments-digest {want[:64]} does not match the arguments "
        f"(their canonical JSON digests to {got})"
    )


def usage_tokens(usage: object) -> tuple[int, int]:
    """The context size an assistant message's `usage` records, and its field's code
    (`core.calls.FIELDS`): the reference's `prompt-tokens`, the OpenAI wire form's
    `prompt_tokens`, or the Anthropic one's `input_tokens` with the cache's parts;
    (-1, `NOT_RECORDED`) when it records none (`completion-tokens` is the response's,
    not the context's)."""
    if type(usage) is not dict:
        return -1, NOT_RECORDED
    for key, code in (
        ("prompt-tokens", REFERENCE_PROMPT_TOKENS),
        ("prompt_tokens", REFERENCE_PROMPT_TOKENS_SNAKE),
    ):
        value = usage.get(key)
        if type(value) is int and value >= 0:
            return value, code
    parts = [
        usage.get(key)
        for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    ]
    if type(parts[0]) is int and parts[0] >= 0:
        return sum(p for p in parts if type(p) is int and p >= 0), REFERENCE_INPUT_TOKENS
    return -1, NOT_RECORDED


def _compaction_record(line: int, p: Payload) -> Compaction:
    """A `compaction` line as a compaction record (`core.calls`)."""
    before, after = p.tokens_before, p.tokens_after
    return Compaction(
        line,
        "compaction",
        tokens_before=before if type(before) is int else None,
        before_field="tokens-before",
        tokens_after=after if type(after) is int else None,
        summary="readable" if type(p.summary) is str else "none",
    )


#: A call's numbers in `LineBatch.call_rows`: its message's index in the batch's replay, the
#: characters of the messages before it, the line and characters of the biggest since the
#: call before. Packed, not appended number by number (see `core.calls.ROW_FORMAT`).
CALL_ROW = struct.Struct("=4q")


def _call_run(batch: LineBatch, rows: array[int]) -> CallRun:
    """A batch's model calls as `CallFold` takes them, from its `call_rows` (`rows`): the
    map kept only where each call's message is, its usage and the biggest message before
    it; the rest follows from where the messages are (each message, and each compaction's
    summary, is an item)."""
    run = batch.calls
    entries = rows[0::4]
    n = len(entries)
    none, zero = array("q", (-1,)), array("q", (0,))
    calls = run.columns = ModelCalls(
        lines=array("q", map(batch.replay_lines.__getitem__, entries)),
        tokens=none * n,
        fields=zero * n,
        windows=none * n,
        models=none * n,
        chars=zero * n,  # the pass's replay counts them (`absorb`)
        # Items: the messages since the call before began (its own among them).
        added=array("q", map(sub, entries, chain((0,), entries))),
        big_lines=rows[2::4],
        big_chars=rows[3::4],
        compactions=run.compactions,
    )
    for i, tokens, source in batch.call_usage:
        calls.tokens[i], calls.fields[i] = tokens, source
    run.items = len(batch.replay_lines) - (entries[-1] if n else 0)
    for c in calls.compactions:
        at = bisect_left(calls.lines, c.line)
        if at < n:
            calls.added[at] += 1
        else:
            run.items += 1
    return run


def map_lines(
    transcript: Transcript,
    first: int,
    last: int,
    keys: IdKeys,
    measure: Measure | None = None,
) -> LineBatch:
    """Read and parse lines `first` to `last`, keeping what the fold needs of each.

    Pure: it reads the lines and nothing else, so it runs in any process.
    Ids are kept as `keys` makes them (the pass's, which the fold compares).
    With `measure`, the batch also keeps its number for each line (`measures`).
    """
    batch = LineBatch(first, last)
    _map_into(batch, _decoded(batch, transcript.raw_chunks(first, last)), keys, measure=measure)
    return batch.seal(transcript.line_count)


def _unmeasured(raw: bytes) -> int:
    return -1


Lines = Iterable[tuple[int, int, bytes, Line]]
"""Decoded lines: `(line, offset, bytes, shape)`, in file order (`decoding.decoded_lines`)."""


def _whole_envelope(raw: bytes, line: int, offset: int, is_last: bool) -> Line | LineProblem | None:
    """A line read whole (`parse_line_bytes`), as the shape: what `decoded_lines` falls
    back to, and what says why a line decoded as the shape is no envelope. A torn tail
    is the pass's to make, at the end (`as_last`), so `is_last` is not read."""
    parsed = parse_line_bytes(raw, line, offset)
    if parsed is None or isinstance(parsed, LineProblem):
        return parsed
    return as_shape(parsed.data, Line)


def _decoded(batch: LineBatch, chunks: Iterable[tuple[int, int, list[bytes]]]) -> Lines:
    """Lines read as bytes, decoded once (`decoding.decoded_lines`); problems to `batch`."""
    return decoded_lines(chunks, decode_shape, Line, batch.problems, whole=_whole_envelope)


def _map_into(
    batch: LineBatch,
    lines: Lines,
    keys: IdKeys,
    fold: AnalysisPass | None = None,
    measure: Measure | None = None,
) -> None:
    """Add decoded lines to a batch (their problems are in it already: `_decoded`).

    The one place a line is turned into what the fold needs, for the batches of
    a pass and for the lines `AnalysisPass.feed` is given alike. A line comes
    decoded once, into its shape (`core.envelope_shape.Line`: the fields this
    loop and a `Measure` read), by the rule every format's map reads through
    (`core.decoding.decoded_lines`: a short ASCII line by msgspec into the
    shape, any other by `parse_line_bytes` and converted); one decoded as the
    shape that is no envelope is read whole here, for the problem to say why.
    It is one loop, with every field access written out, because it runs once
    a line: a method call or an accessor a field costs more than the decode of
    a typical line. Each field is read as the `core.envelopes` accessor of the
    same name reads it (`Message.role`, `.content`, `.is_sticky`, `.tool_calls`, …).

    With `fold` (the pass that absorbs the batch, or a batch's own: `_fold_run`),
    each operation's event goes straight to it instead of into the batch. With
    `measure`, each envelope line's measure goes into `batch.measures`.
    """
    kinds: list[str] = []  # each envelope's type, counted at the end (in C)
    add_kind = kinds.append
    add_key, add_key_line = batch.keys.append, batch.key_lines.append
    add_line, add_replay_key = batch.replay_lines.append, batch.replay_keys.append
    add_flags, roles = batch.replay_flags.append, batch.replay_roles
    add_event, add_problem = batch.events.append, batch.problems.append
    # The model calls: where each one's message is, and the biggest message before it
    # (the rest of a call's row is the fold's to make: `_call_run`).
    replay_lines, run = batch.replay_lines, batch.calls
    add_call, pack_call, add_usage = batch.call_rows.extend, CALL_ROW.pack, batch.call_usage.append
    big_line, big_chars, total = run.big_line, run.big_chars, batch.chars
    if fold is not None:
        fold_message, fold_dispatched = fold._message, fold._dispatched
        fold_settled, fold_calls, fold_answer = fold._settled, fold._calls, fold._answer
    key_of = keys.__call__
    envelopes, last_content, last_turn = batch.envelopes, batch.last_content, batch.last_turn
    first_envelope, meta_line = batch.first_envelope, batch.meta_line
    measures = None
    count = _unmeasured if measure is None else measure
    if measure is not None:
        measures = batch.measures = array("i", [-1]) * (batch.last - batch.first + 1)
    kind: str
    for line, offset, raw, obj in lines:
        kind, v = obj.type, obj.v
        if type(kind) is not str or type(v) is not int or v != ENVELOPE_VERSION:
            # Decoded as the shape, yet no envelope: the whole parse says why.
            last_content = line
            whole = _whole_envelope(raw, line, offset, False)
            if not isinstance(whole, Line):
                if whole is not None:
                    add_problem(whole)
                continue
            obj, kind = whole, whole.type
        last_content = line
        add_kind(kind)
        if first_envelope is None:
            first_envelope = (line, kind)
        env_id = obj.id
        if type(env_id) is str:
            key = key_of(env_id)
            add_key(key)
            add_key_line(line)
        else:
            env_id = None
        p = obj.payload
        if type(p) is not Payload:
            p = EMPTY_PAYLOAD
        if measures is not None:
            measures[line - batch.first] = count(raw)
        if kind == "message":
            role = p.role
            if type(role) is not str:
                role = "user"
            code = ROLE_CODES.get(role, 7)
            if code == 7:
                roles[line] = role
            add_line(line)
            add_replay_key(key if env_id else key_of(f"line-{line}"))
            if p.sticky or p.sysprompt or p.depth is not None:
                code |= STICKY
            add_flags(code)
            content = p.content
            if type(content) is not str:
                content = field_text(content)
            call_ids: Sequence[str] = ()
            call_id = digest = None
            is_error = False
            chars = len(content)
            if role == "assistant":
                last_turn = line
                calls = p.tool_calls
                if type(calls) is list and calls:
                    call_ids = []
                    for c in calls:
                        if type(c) is ToolCall:
                            call_ids.append(field_text(c.id))
                            function = c.function
                            if type(function) is Function and type(function.arguments) is str:
                                chars += len(function.arguments)
                if not p.injected:  # a model call (an injected turn is the application's)
                    if p.usage is not None:
                        add_usage((len(batch.call_rows) // CALL_ROW.size, *usage_tokens(p.usage)))
                    add_call(pack_call(len(replay_lines) - 1, total, big_line, big_chars))
                    big_line = big_chars = -1
            elif role == "tool":
                call_id = p.tool_call_id
                if type(call_id) is not str:
                    call_id = None
                if call_id is not None:
                    is_error = bool(p.is_error)
                    digest = string_digest(content)
            total += chars
            if chars > big_chars:
                big_line, big_chars = line, chars
            sites = ambiguous = None
            if "[... elided " in content:
                found_sites = _marker_sites(line, env_id, role, content)
                if found_sites is not None:
                    sites, ambiguous = found_sites
            if call_ids or call_id is not None or sites:
                if fold is not None:
                    # A message with no markers (almost every one) goes straight to the
                    # one step of `_message` it takes.
                    if sites:
                        fold_message(line, call_ids, call_id, is_error, digest, sites, ambiguous)
                    elif call_ids:
                        fold_calls(line, call_ids)
                    else:
                        fold_answer(line, cast(str, call_id), is_error, cast(str, digest))
                else:
                    add_event(
                        (
                            EV_MESSAGE,
                            line,
                            call_ids,
                            call_id,
                            is_error,
                            digest,
                            sites,
                            ambiguous,
                        )
                    )
        elif kind == "tool-dispatched":
            want = p.arguments_digest
            arguments = p.arguments
            mismatch = None
            if want is not None and arguments is not None and type(want) is str:
                mismatch = _arguments_mismatch(want, arguments)
            call = p.call_id
            if type(call) is not str:
                call = field_text(call)
            op_key = key if env_id is not None else 0
            if fold is not None:
                fold_dispatched(line, call, env_id, op_key, mismatch)
            else:
                add_event((EV_DISPATCH, line, call, env_id, op_key, mismatch))
        elif kind == "tool-settled":
            op_id = p.op_id
            if type(op_id) is not str:
                op_id = None
            artifact = p.artifact
            if type(artifact) is not dict:
                artifact = None
            digest = p.result_digest
            if type(digest) is not str:
                digest = None
            if fold is not None:
                fold_settled(line, op_id, artifact, digest)
            else:
                add_event((EV_SETTLE, line, op_id, artifact, digest))
        elif kind == "session-meta":
            if meta_line is None:
                meta_line = line
        elif kind == "compaction":
            through = field_str(p.replaces_through_id)
            summary = p.summary
            summary_chars = len(field_text(summary))
            add_event((EV_COMPACTION, line, through, env_id, summary_chars, total))
            run.compactions.append(_compaction_record(line, p))
            if summary_chars > big_chars:  # the summary: a user turn from here on
                big_line, big_chars = line, summary_chars
        elif kind == "elision":
            add_event((EV_ELISION, line, _elision_items(p.items), total))
    run.big_line, run.big_chars, batch.chars = big_line, big_chars, total
    types = batch.types
    for kind, n in Counter(kinds).items():
        types[kind] = types.get(kind, 0) + n
    envelopes += len(kinds)
    problems = batch.problems
    if problems and problems[-1].line > last_content:  # a bad line is content too
        last_content = problems[-1].line
    batch.envelopes, batch.last_content, batch.last_turn = envelopes, last_content, last_turn
    batch.first_envelope, batch.meta_line = first_envelope, meta_line


# -- the map's processes ------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class LocalOps:
    """A batch's operations folded from an empty state, for the fold to merge (`_merge`).

    A worker sees only its own lines. What it matched among them is final;
    what it could not match might belong to an operation begun before its
    run, so it leaves those lookups to the fold (`deferred`, in line order).
    Its matches are final only if no earlier operation was still waiting on
    the same call id, which the fold checks against the ids it was given
    (`taken_calls`, `asked_answers`: their sorted keys).
    """

    columns: list[array[int]]
    call_pos: array[int]
    flags: array[int]
    artifacts: dict[int, Mapping[str, Any]]
    dispatch_keys: array[int]
    undispatched: dict[str, list[int]]
    unanswered: dict[str, list[int]]
    pending: dict[str, int]
    message_digest: dict[int, str]
    site_rows: set[int]
    sites: list[MarkerSite]
    ambiguous: list[tuple[MarkerSite, list[MarkerSite], str]]
    findings: list[Finding]
    deferred: list[tuple[Any, ...]]
    taken_calls: array[int]
    """Call ids whose announced calls this batch matched (a dispatch, or an answer)."""
    asked_answers: array[int]
    """Call ids this batch's tool messages looked for among dispatched operations."""


Shared = tuple[Transcript, IdKeys, "Measure | None"]
"""What every batch of a pass reads (`parallel.ordered`'s `shared`): its transcript, keys
and measure."""


def _map_run(shared: Shared, run: tuple[int, int]) -> LineBatch:
    """A worker's job: map the run (`map_lines`)."""
    transcript, keys, measure = shared
    return map_lines(transcript, run[0], run[1], keys, measure)


def _fold_run(shared: Shared, run: tuple[int, int]) -> LineBatch:
    """A worker's job: map the run, then fold its operations from an empty state."""
    transcript, keys, measure = shared
    return fold_lines(transcript, run[0], run[1], keys, measure)


def fold_lines(
    transcript: Transcript,
    first: int,
    last: int,
    keys: IdKeys,
    measure: Measure | None = None,
) -> LineBatch:
    """`map_lines`, with the batch's operations folded from an empty state (`LocalOps`).

    Its events then hold only the replay's edits; `AnalysisPass.absorb` merges
    the rest, which leaves the fold of a big file little to do.
    """
    batch = LineBatch(first, last)
    local = AnalysisPass(transcript, exact_ids=False, local=True, keys=keys)
    _map_into(batch, _decoded(batch, transcript.raw_chunks(first, last)), keys, local, measure)
    batch.folded = local.export()
    return batch.seal(transcript.line_count)


def parse_workers(transcript: Transcript) -> int:
    """How many processes to map a transcript's lines in when the caller does not say.

    `core.parallel.workers_for` its size: one (this process) for a small file,
    a worker, or a threaded program that may not fork; a process a core
    otherwise.
    """
    return parallel.workers_for(transcript.indexed_bytes)


def _batches(
    transcript: Transcript,
    workers: int | None,
    keys: IdKeys,
    *,
    fold: AnalysisPass | None = None,
    measure: Measure | None = None,
) -> Iterator[LineBatch]:
    """Every line's batch in file order: mapped here, or in `workers` processes.

    With `fold` (a pass without exact ids, which absorbs the batches in this
    order), each batch's operations are folded as it is mapped. Here, that is
    straight into `fold`: the batch keeps only the replay's edits, and no
    second pass is made to be merged (for a small file, that pass and its merge
    cost more than its operations). In workers, each batch is folded from an
    empty state (`_fold_run`), which leaves the fold here little to do but
    merge (`parallel.ordered` keeps the batches in order and only a few in
    flight: a gigabyte's would not fit).
    """
    runs = transcript.line_ranges()
    n = parse_workers(transcript) if workers is None else workers
    if n <= 1 or len(runs) < 2:
        for first, last in runs:
            batch = LineBatch(first, last)
            lines = _decoded(batch, transcript.raw_chunks(first, last))
            _map_into(batch, lines, keys, fold, measure)
            yield batch.seal(transcript.line_count)
        return
    job = _fold_run if fold is not None else _map_run
    yield from parallel.ordered(job, (transcript, keys, measure), runs, n)


# -- the fold ------------------------------------------------------------------------------------


class AnalysisPass:
    """The state of one streaming pass: fed lines in file order, finished once.

    `analyse` runs one over a whole file, folding batches (`absorb`).
    `core.analyser.Analyser` keeps one open as its transcript grows, feeding
    it new lines one at a time (`feed`) and finishing a `snapshot` after each
    update (finishing changes what it finishes).

    Envelope ids are checked for duplicates in one of two ways. `exact_ids`
    (the default) checks each as it comes, in hash tables. Without it the
    pass keeps every id's key and checks them all at once at the end
    (`ids_unique`), a set a range of key values; it may then answer as if no
    id repeats only if none does, so a caller that finds a repeat must run an
    exact pass instead (`analyse` does; repeated ids are what a corrupt file has, not a
    healthy one).
    """

    def __init__(
        self,
        transcript: Transcript,
        *,
        exact_ids: bool = True,
        local: bool = False,
        keys: IdKeys | None = None,
    ) -> None:
        """A pass over `transcript`, nothing fed yet.

        Args:
            transcript: the transcript, indexed.
            exact_ids: check ids as they come (see the class).
            local: a worker's fold of one batch (`_fold_run`): lookups that
                may belong to earlier lines are left to the real fold.
            keys: the keys ids are compared by (default: new ones, for this
                pass); a worker's fold is given its pass's.
        """
        self.t = transcript
        self.exact_ids = exact_ids
        self.local = local
        self.id_keys = IdKeys.new() if keys is None else keys
        self.deferred: list[tuple[Any, ...]] = []
        # A local pass's call ids (`LocalOps`), keyed once each when it is exported.
        self.taken_calls: list[str] = []
        self.asked_answers: list[str] = []
        self.ops = Operations(transcript)
        self.replay = Replay(transcript, self.id_keys)
        self.analysis = Analysis(transcript=transcript, operations=self.ops, replay=self.replay)
        # Pending work only: entries leave these maps as soon as they are matched,
        # so their size is what is in flight, not what the file holds.
        self.undispatched: dict[str, list[int]] = {}
        self.unanswered: dict[str, list[int]] = {}
        self.pending: dict[str, int] = {}
        self.message_digest: dict[int, str] = {}
        # Only an exact-ids pass looks dispatches up by id key (a table of 4,096 slots).
        self.op_ids: IdTable | IdOverlay = IdTable(expected=2048 if exact_ids else 0)
        self.ids_seen: IdTable | IdOverlay = IdTable(
            expected=transcript.line_count if exact_ids else 0
        )
        # An id whose key an earlier, different id holds in those tables (a collision:
        # almost never, `core.keys`): its first line, and its operation's row, by the id.
        self.ids_collided: dict[str, int] = {}
        self.ops_collided: dict[str, int] = {}
        # Without exact ids: every id's key by line, each run's keys cut into ranges, and
        # each operation row's dispatch key (0: none yet).
        self.keys = array(KEY_CODE)
        self.key_lines = array("i")
        self.key_buckets: list[list[array[int]]] = []
        self.dispatch_keys = array(KEY_CODE)
        # The first row of each dispatch key, made only when a settle asks for one that
        # is not pending (none, in a healthy file): `_dispatch_row`.
        self.dispatch_rows: dict[int, int] | None = None
        self.dispatch_rows_upto = 0
        self.first: tuple[int, str] | None = None
        """The first envelope's line and type."""
        self.site_rows: set[int] = set()
        self.last_turn = 0
        """The line of the last assistant message (what a live analysis calls the last turn)."""
        # Multi-candidate tool results, resolved once settles are known.
        self.ambiguous: list[tuple[MarkerSite, list[MarkerSite], str]] = []
        self.calls = CallFold()
        """The model calls so far (the analysis's at the end)."""

    def run(
        self, progress: Callable[[int, int], None] | None, workers: int | None = None
    ) -> Analysis:
        """Feed every line of the transcript and finish (see `read`)."""
        total = self.t.line_count
        self.read(progress, workers)
        a = self.finish(total)
        if progress is not None:
            progress(total, total)
        return a

    def read(
        self,
        progress: Callable[[int, int], None] | None,
        workers: int | None = None,
        found: Found | None = None,
        measure: Measure | None = None,
        measured: Measured | None = None,
    ) -> None:
        """Fold every indexed line of the transcript into the pass, in batches.

        The last line with content that does not parse is a torn tail, as
        iterating the transcript says.

        Args:
            progress: called as `(line, lines_total)` after each batch (a few MiB).
            workers: processes to parse in (default: `parse_workers`).
            found: called after each batch with the lines of the markers and of
                the line problems it found (see `Found`).
            measure: the caller's number for each line, taken as it is decoded;
                `measured` is told each batch's, in file order (see `Measure`).
        """
        total = self.t.line_count
        last = 0
        a = self.analysis
        told = FoundSoFar(found)
        fold = None if self.exact_ids else self
        for batch in _batches(self.t, workers, self.id_keys, fold=fold, measure=measure):
            self.absorb(batch)
            if measured is not None and batch.measures is not None:
                measured(batch.first, batch.measures)
            last = batch.last_content or last
            told.tell(a.sites, a.problems)
            if progress is not None:
                progress(batch.last, total)
        problems = self.analysis.problems
        if problems and problems[-1].line == last:
            problems[-1] = cast(LineProblem, as_last(problems[-1]))

    def feed(self, parsed: Envelope | LineProblem) -> None:
        """Take one parsed line, in file order."""
        batch = LineBatch(parsed.line, parsed.line)
        if isinstance(parsed, LineProblem):
            batch.problems.append(parsed)
            lines: Lines = ()
        else:
            lines = ((parsed.line, parsed.offset, b"", as_shape(parsed.data, Line)),)
        _map_into(batch, lines, self.id_keys)
        self.absorb(batch)

    def snapshot(self) -> AnalysisPass:
        """A copy of the pass so far that can be fed and finished on its own.

        `finish` changes what it finishes (it resolves markers, adds findings),
        so an `Analyser` finishes a copy and keeps feeding the original. The
        transcript is shared, and the two id tables (the biggest part of the
        state, 48 MB for 2.6 M lines) are seen through overlays that keep the
        copy's few additions apart instead of being copied.
        """
        memo: dict[int, Any] = {
            id(self.t): self.t,
            id(self.op_ids): IdOverlay(self.op_ids),
            id(self.ids_seen): IdOverlay(self.ids_seen),
        }
        # Frozen objects are shared, not copied: deepcopy costs microseconds an
        # object, and a long run has many problems, findings and markers. Only
        # the sites themselves (which `finish` resolves) are copied.
        a = self.analysis
        frozen: list[object] = [*a.problems, *a.findings]
        for site in a.sites:
            frozen.append(site.marker)
            frozen.append(site.shape)
        for obj in frozen:
            memo[id(obj)] = obj
        return copy.deepcopy(self, memo)

    # -- per batch -------------------------------------------------------------

    def absorb(self, batch: LineBatch) -> None:
        """Fold the next batch of lines (they follow the last one folded)."""
        if batch.folded is not None and self._collides(batch.folded):
            # A call id the worker matched was still awaited from before its run:
            # its matches may be wrong. The lines are mapped again, to fold here.
            batch = map_lines(self.t, batch.first, batch.last, self.id_keys)
        a = self.analysis
        if batch.envelopes:
            a.envelopes += batch.envelopes
            a.type_counts.update(batch.types)
            if self.first is None:
                self.first = batch.first_envelope
            if a.meta_line is None:
                a.meta_line = batch.meta_line
            if batch.last_turn:
                self.last_turn = batch.last_turn
        if batch.problems:
            a.problems.extend(batch.problems)
        if batch.keys:
            if self.exact_ids:
                self._check_ids(batch)
            else:
                self.keys.extend(batch.keys)
                self.key_lines.extend(batch.key_lines)
                self.key_buckets.append(batch.buckets)
        lines = batch.replay_lines
        done = done_chars = 0
        message, dispatched, settled = self._message, self._dispatched, self._settled
        rows = array("q")
        rows.frombytes(batch.call_rows)
        calls = (rows[0::4], rows[1::4])  # each call's message's index, the characters before
        context = array("q")  # each call's context, in characters, as the replay has it
        for event in batch.events:
            kind = event[0]
            if kind == EV_MESSAGE:
                message(*event[1:])
            elif kind == EV_DISPATCH:
                dispatched(*event[1:])
            elif kind == EV_SETTLE:
                settled(*event[1:])
            else:
                # The replay's edits see the conversation as it was at their line.
                upto = bisect_left(lines, event[1], done)
                self._replay(batch, done, upto, done_chars, event[-1], calls, context)
                done, done_chars = upto, event[-1]
                if kind == EV_COMPACTION:
                    self._compaction(event)
                else:
                    self._elision(event)
        self._replay(batch, done, len(lines), done_chars, batch.chars, calls, context)
        self.calls.absorb(_call_run(batch, rows), context)
        if batch.folded is not None:
            self._merge(batch.folded)

    def _replay(
        self,
        batch: LineBatch,
        lo: int,
        hi: int,
        lo_chars: int,
        hi_chars: int,
        calls: tuple[array[int], array[int]],
        context: array[int],
    ) -> None:
        """Add the batch's messages `lo` to `hi` (the characters of the batch's messages
        before each: `lo_chars`, `hi_chars`) to the replay, and the context of each model
        call among them to `context`: what the replay holds before its message.

        `calls` are the batch's calls' message indexes and the characters before each.
        """
        if hi <= lo:
            return
        entries, before = calls
        first, after = bisect_left(entries, lo), bisect_left(entries, hi)
        if after > first:
            base = self.replay.chars_total - lo_chars
            context.extend(map(base.__add__, before[first:after]))
        if lo == 0 and hi == len(batch.replay_lines):
            self.replay.extend(
                batch.replay_lines,
                batch.replay_keys,
                batch.replay_flags,
                batch.replay_roles,
                hi_chars - lo_chars,
            )
        else:
            self.replay.extend(
                batch.replay_lines[lo:hi],
                batch.replay_keys[lo:hi],
                batch.replay_flags[lo:hi],
                batch.replay_roles,
                hi_chars - lo_chars,
            )

    def _check_ids(self, batch: LineBatch) -> None:
        """A finding for each envelope id that an earlier line already used (exact ids).

        The batch's ids are checked before its events are folded; each finding
        is the first one on its line either way, and a compaction's lookup
        (`_first_line`) ignores lines after its own.
        """
        setdefault = self.ids_seen.setdefault
        for key, line in zip(batch.keys, batch.key_lines, strict=True):
            earlier = setdefault(key, line)
            if earlier < 0:
                continue
            env = read_envelope(self.t, line, limit=None)
            env_id = env.id if env is not None else None
            if env_id is not None and not self._holds(earlier, env_id):
                # Another id holds this key: this one is looked up by its string.
                earlier = self.ids_collided.setdefault(env_id, line)
                if earlier == line:
                    continue
            if env_id is not None and id_at(self.t, earlier) == env_id:
                self.analysis.findings.append(
                    Finding(
                        "malformed-line",
                        line,
                        None,
                        f"envelope id {env_id[:80]!r} was already used on line {earlier}",
                    )
                )

    def ids_unique(self) -> bool:
        """Whether no two envelope ids share a key (without exact ids; see the class).

        The keys of every batch were cut into the same ranges of value where it
        was mapped (`LineBatch.seal`); here each range's keys from every batch go
        through one small set. A few hundred milliseconds for a gigabyte, in a
        few megabytes: a set of every key at once would take hundreds.
        """
        if self.exact_ids or not self.key_buckets:
            return True
        for b in range(len(self.key_buckets[0])):
            piece = array(KEY_CODE)
            for parts in self.key_buckets:
                piece.extend(parts[b])
            if len(set(piece)) != len(piece):
                return False
        return True

    def _first_line(self, text: str, before: int) -> int:
        """The first line up to `before` whose envelope id is `text`, or -1."""
        if self.exact_ids:
            line = self.ids_seen.get(self.id_keys(text))
            if line >= 0 and not self._holds(line, text):
                line = self.ids_collided.get(text, -1)
        else:
            try:
                line = self.key_lines[self.keys.index(self.id_keys(text))]
            except ValueError:
                line = -1
        return line if 0 <= line <= before else -1

    def _holds(self, line: int, text: str) -> bool:
        """Whether the envelope id on `line` is `text`: what tells a key another id holds
        from a repeat of this one. `id_at`'s cheap read first; the line read whole only
        where that differs (`id_at` names an empty id by its line)."""
        if id_at(self.t, line) == text:
            return True
        env = read_envelope(self.t, line, limit=None)
        return env is not None and env.id == text

    def _dispatch_row(self, op_id: str, key: int) -> int:
        """The operation row an earlier dispatch of `op_id` (its key `key`) made, or -1."""
        if self.exact_ids:
            row = self.op_ids.get(key)
            if row >= 0 and not self._holds(self.ops.line("dispatch", row), op_id):
                row = self.ops_collided.get(op_id, -1)
            return row
        # The first row with this key (`dispatch_keys.index`), from a table of the rows
        # so far: a scan a settle made thousands of orphan settles quadratic.
        rows = self.dispatch_rows
        if rows is None:
            rows = self.dispatch_rows = {}
        keys = self.dispatch_keys
        for row in range(self.dispatch_rows_upto, len(keys)):
            rows.setdefault(keys[row], row)
        self.dispatch_rows_upto = len(keys)
        return rows.get(key, -1)

    def _set_dispatch_key(self, row: int, key: int) -> None:
        """Row `row`'s dispatch key is `key` now (it was 0: none yet)."""
        self.dispatch_keys[row] = key
        rows = self.dispatch_rows
        if rows is not None and row < self.dispatch_rows_upto and rows.get(key, row + 1) > row:
            rows[key] = row

    # -- a worker's batch ----------------------------------------------------------

    def export(self) -> LocalOps:
        """What a local pass folded, for the fold to merge (`_merge`)."""
        cols, call_pos, flags, artifacts = self.ops.raw_columns()
        a = self.analysis
        # A call's id is asked by its dispatch and its answer alike: each is keyed once.
        key_of = self.id_keys
        keys = {call_id: key_of(call_id) for call_id in {*self.taken_calls, *self.asked_answers}}
        return LocalOps(
            columns=cols,
            call_pos=call_pos,
            flags=flags,
            artifacts=artifacts,
            dispatch_keys=self.dispatch_keys,
            undispatched=self.undispatched,
            unanswered=self.unanswered,
            pending=self.pending,
            message_digest=self.message_digest,
            site_rows=self.site_rows,
            sites=a.sites,
            ambiguous=self.ambiguous,
            findings=a.findings,
            deferred=self.deferred,
            taken_calls=array(KEY_CODE, sorted({keys[c] for c in self.taken_calls})),
            asked_answers=array(KEY_CODE, sorted({keys[c] for c in self.asked_answers})),
        )

    def _collides(self, local: LocalOps) -> bool:
        """Whether a worker matched a call id that an operation from before its batch awaited.

        A queue's first entry is taken first, so the earlier operation, not
        the worker's, would have been matched. (Entries leave the queues once
        matched, so these are the few operations in flight, or lost.)
        """
        for queue, asked in (
            (self.undispatched, local.taken_calls),
            (self.unanswered, local.asked_answers),
        ):
            if queue and asked:
                for call_id in queue:
                    key = self.id_keys(call_id)
                    i = bisect_left(asked, key)
                    if i < len(asked) and asked[i] == key:
                        return True
        return False

    def _merge(self, local: LocalOps) -> None:
        """Merge a worker's folded operations: resolve what it left, renumber its rows.

        The deferred lookups are made here, in line order, against the
        operations from before the batch (they cannot touch the batch's own:
        a lookup is deferred only when the batch had nothing for it). A
        dispatch the worker could not match, matched here to an earlier call,
        is that call's row, not a new one; every other row follows the rows
        already here, in order.
        """
        owned = [site for site in local.sites if site.op_index >= 0]
        alias: dict[int, int] = {}
        for item in local.deferred:
            kind = item[0]
            if kind == _DISPATCH:
                row = _take(self.undispatched, item[2])
                if row >= 0:
                    alias[item[3]] = row
            elif kind == _ANSWER:
                _, line, call_id, is_error, digest, sites = item
                row = self._answer(line, call_id, is_error, digest)
                for site in sites or ():
                    site.op_index = row
                    if not site.quoted and row >= 0:
                        self.site_rows.add(row)
            else:
                self._settled(*item[1:])
        ops = self.ops
        base = len(ops)
        cols = local.columns
        if not alias:
            ops.extend_rows(
                cols,
                local.call_pos,
                local.flags,
                {base + r: art for r, art in local.artifacts.items()},
            )
            self.dispatch_keys.extend(local.dispatch_keys)

            def remap(row: int) -> int:
                return base + row

        else:
            gone = sorted(alias)
            for r, row in alias.items():
                ops.continue_row(
                    row, cols[1][r], cols[2][r], cols[3][r], local.flags[r], local.artifacts.get(r)
                )
                self._set_dispatch_key(row, local.dispatch_keys[r])

            def remap(row: int) -> int:
                known = alias.get(row)
                return known if known is not None else base + row - bisect_left(gone, row)

            bounds = [-1, *gone, len(local.call_pos)]
            pieces = list(pairwise(bounds))

            def keep(col: array[int]) -> array[int]:
                out = array(col.typecode)
                for lo, hi in pieces:
                    out.extend(col[lo + 1 : hi])
                return out

            ops.extend_rows(
                [keep(c) for c in cols],
                keep(local.call_pos),
                keep(local.flags),
                {remap(r): art for r, art in local.artifacts.items() if r not in alias},
            )
            self.dispatch_keys.extend(keep(local.dispatch_keys))
        for site in owned:
            site.op_index = remap(site.op_index)
        for queues, theirs in (
            (self.undispatched, local.undispatched),
            (self.unanswered, local.unanswered),
        ):
            for call_id, rows in theirs.items():
                queue = queues.get(call_id)
                mapped = [remap(r) for r in rows]
                if queue is None:
                    queues[call_id] = mapped
                else:
                    queue.extend(mapped)
        for op_id, row in local.pending.items():
            self.pending[op_id] = remap(row)
        for row, digest in local.message_digest.items():
            self.message_digest[remap(row)] = digest
        self.site_rows.update(remap(r) for r in local.site_rows)
        a = self.analysis
        a.sites.extend(local.sites)
        a.findings.extend(local.findings)
        self.ambiguous.extend(local.ambiguous)

    # -- per event ---------------------------------------------------------------

    def _message(
        self,
        line: int,
        call_ids: Sequence[str],
        call_id: str | None,
        is_error: bool,
        digest: str | None,
        sites: list[MarkerSite] | None,
        ambiguous: tuple[MarkerSite, list[MarkerSite], str] | None,
    ) -> None:
        row = -1
        if call_ids:
            self._calls(line, call_ids)
        elif call_id is not None:
            row = self._answer(line, call_id, is_error, cast(str, digest), sites)
        if sites:
            for site in sites:
                site.op_index = row
                if not site.quoted and row >= 0:
                    self.site_rows.add(row)
            self.analysis.sites.extend(sites)
            if ambiguous is not None:
                self.ambiguous.append(ambiguous)

    def _calls(self, line: int, call_ids: Sequence[str]) -> None:
        """An assistant message's tool calls (on `line`): a row each, awaiting its dispatch."""
        add_call, undispatched = self.ops.add_call, self.undispatched
        add_key = self.dispatch_keys.append
        for pos, call in enumerate(call_ids):
            new = add_call(line, pos)
            add_key(0)
            queue = undispatched.get(call)
            if queue is None:
                undispatched[call] = [new]
            else:
                queue.append(new)

    def _answer(
        self,
        line: int,
        call_id: str,
        is_error: bool,
        digest: str,
        sites: list[MarkerSite] | None = None,
    ) -> int:
        """The row a tool message on `line` answers, or -1 (none, or not known here: a local
        pass leaves the lookup to the fold, with the message's `sites`)."""
        row = _take(self.unanswered, call_id)
        if row < 0:
            # A transcript written before dispatch lines existed answers calls directly.
            row = _take(self.undispatched, call_id)
            if self.local:
                if row < 0:
                    self.deferred.append((_ANSWER, line, call_id, is_error, digest, sites))
                    return -1
                self.taken_calls.append(call_id)
        if self.local:
            self.asked_answers.append(call_id)
        if row < 0:
            return -1
        ops = self.ops
        ops.set_message(row, line, is_error=is_error)
        if ops.awaits_settle(row):
            self.message_digest[row] = digest
        return row

    def _dispatched(
        self, line: int, call_id: str, op_id: str | None, key: int, mismatch: str | None
    ) -> None:
        row = _take(self.undispatched, call_id)
        if row < 0:
            row = self.ops.add_dispatch(line)
            self.dispatch_keys.append(0)
            if self.local:
                self.deferred.append((_DISPATCH, line, call_id, row))
        else:
            self.ops.set_dispatch(row, line)
            if self.local:
                self.taken_calls.append(call_id)
        if op_id is not None:
            if not self.exact_ids:
                # Every id is unique (or this pass is thrown away): a new operation.
                self.pending[op_id] = row
                self._set_dispatch_key(row, key)
            else:
                earlier = self.op_ids.setdefault(key, row)
                if earlier >= 0 and not self._holds(self.ops.line("dispatch", earlier), op_id):
                    earlier = self.ops_collided.setdefault(op_id, row)  # another id's key
                    earlier = -1 if earlier == row else earlier
                if earlier < 0:
                    self.pending[op_id] = row
        queue = self.unanswered.get(call_id)
        if queue is None:
            self.unanswered[call_id] = [row]
        else:
            queue.append(row)
        if mismatch is not None:
            self.analysis.findings.append(Finding("metadata-mismatch", line, None, mismatch))

    def _settled(
        self,
        line: int,
        op_id: str | None,
        artifact: Mapping[str, Any] | None,
        want: str | None,
    ) -> None:
        row = self.pending.pop(op_id, -1) if op_id is not None else -1
        if row < 0:
            # The operation's key only now: a settle its pending dispatch answers needs none.
            earlier = self._dispatch_row(op_id, self.id_keys(op_id)) if op_id is not None else -1
            if self.local and op_id is not None and earlier < 0:
                # Dispatched before this batch, perhaps: only the fold knows.
                self.deferred.append((_SETTLE, line, op_id, artifact, want))
                return
            done = earlier >= 0 and self.ops.line("settle", earlier) >= 0
            if done and id_at(self.t, self.ops.line("dispatch", earlier)) == op_id:
                message = (
                    f"operation {op_id!r} was already settled on line "
                    f"{self.ops.line('settle', earlier)}; one operation has one outcome"
                )
            else:
                message = (
                    f"tool-settled names operation {str(op_id)[:80]!r}, "
                    "which no earlier line dispatched"
                )
            self.analysis.findings.append(Finding("malformed-line", line, None, message))
            return
        self.ops.set_settle(row, line, artifact)
        digest = self.message_digest.pop(row, None)
        if want is not None and digest is not None and want != digest:
            self.analysis.findings.append(
                Finding(
                    "result-digest-mismatch",
                    line,
                    None,
                    f"result-digest {want[:64]} does not match the tool message on line "
                    f"{self.ops.line('message', row)} (which digests to {digest})",
                )
            )

    # -- replay (the reference's `load`, in file order) ----------------------------

    def _compaction(self, event: tuple[Any, ...]) -> None:
        _, line, through, env_id, summary_chars, _ = event
        cut = self.replay.find(through) if through is not None else -1
        if cut < 0:
            self.analysis.replay_problems.append(f"line {line}: {self._not_found(through, line)}")
            return
        replay = self.replay
        # The first message the cut drops (sticky ones are kept): usually the
        # first or second entry, so this reads a line or two, not the conversation.
        first = next((replay[i].line for i in range(cut + 1) if not replay[i].sticky), -1)
        self.analysis.compactions[line] = (first, replay[cut].line)
        replay.compact(cut, line, env_id or f"line-{line}", summary_chars)

    def _not_found(self, through: str | None, line: int) -> str:
        """Why the compaction on `line` cut nothing, placing its `replaces-through-id` by line.

        An id is not a place a person can find; the line it was first seen on
        is, and what that line is says why the conversation no longer has it:
        a message an earlier compaction already replaced, or no message at all.
        """
        if through is None:
            return "the compaction names no message to replace through (no replaces-through-id)"
        quoted = repr(through[:80])
        earlier = self._first_line(through, line)
        if earlier < 0 or id_at(self.t, earlier) != through:
            return f"the compaction replaces through {quoted}, an id no earlier line has"
        env = read_envelope(self.t, earlier)
        head = f"the compaction replaces through line {earlier} ({quoted}), "
        if isinstance(env, Message):
            return head + "which an earlier compaction already replaced"
        what = f"a {env.type} line" if env is not None else "a line that is no envelope"
        return head + f"{what}, not a message"

    def _elision(self, event: tuple[Any, ...]) -> None:
        _, line, items, _ = event
        for target, stub in items:
            index = self.replay.find(target)
            if index < 0:
                self.analysis.replay_problems.append(
                    f"line {line}: the elision stubs {target[:80]!r}, "
                    "which is not a message the conversation still has"
                )
                continue
            self.replay.set_stub(index, stub)

    # -- after the last line ---------------------------------------------------------

    def finish(self, lines: int, *, live: bool = False) -> Analysis:
        """Join markers to their operations, resolve them, add the whole-file findings.

        Args:
            lines: the transcript's line count, as the caller last read it.
            live: the file is still being written (see `Analysis.live`).

        Returns:
            The analysis, complete. Feed nothing to this pass after.
        """
        a = self.analysis
        a.lines = lines
        a.calls = self.calls.calls
        if live:
            a.live = True
            self.ops.set_live(self.last_turn)
        for site in a.sites:
            if site.op_index >= 0:
                site.op = self.ops[site.op_index]
        for chosen, candidates, content in self.ambiguous:
            self._resolve(chosen, candidates, content)
        a.findings.extend(
            end_of_pass_findings(
                problems=a.problems,
                envelopes=a.envelopes,
                first=self.first,
                operations=self.ops,
                site_rows=self.site_rows,
                excerpt_sites=a.excerpt_sites,
            )
        )
        a.findings.sort(key=lambda f: f.line if f.line is not None else 0)
        return a

    def _resolve(self, chosen: MarkerSite, candidates: list[MarkerSite], content: str) -> None:
        """Pick the excerpt's own marker among several line-isolated ones."""
        art = self.ops.artifact(chosen.op_index) if chosen.op_index >= 0 else None
        best = chosen
        if art is not None:
            chars, elided = art.get("chars"), art.get("elided-chars")
            head_n = None
            if isinstance(chars, int) and isinstance(elided, int):
                head_n = head_tail_sizes(chars - elided)[0]
            for cand in candidates:
                m = cand.marker
                same = m.file == art.get("file") and m.digest == art.get("digest")
                if same and (head_n is None or graphemes.count(content[: m.start - 1]) == head_n):
                    best = cand
                    break
        if best is not chosen:
            chosen.quoted, chosen.shape = True, None
            best.quoted = False
            best.shape = _shape(content, best.marker)


def analyse(
    transcript: Transcript,
    progress: Callable[[int, int], None] | None = None,
    *,
    workers: int | None = None,
    found: Found | None = None,
    measure: Measure | None = None,
    measured: Measured | None = None,
) -> Analysis:
    """One streaming pass over an indexed transcript.

    The result keeps a reference to `transcript`: operations and replay entries
    are read back from it on access (a closed transcript reopens read-only for
    that). Ids are checked for repeats at the end (`AnalysisPass`); in the rare
    file where one repeats, the pass runs again with exact ids (and `progress`
    starts over).

    Args:
        transcript: an indexed transcript (`Transcript.open` or `build_index` done).
        progress: called as `(lines_done, lines_total)` every few thousand lines.
        workers: processes to parse in; default `parse_workers` (one, unless the
            file is big and this process runs no other thread).
        found: told the lines of markers and line problems as batches are read
            (a line may be told twice, if the pass has to start over).
        measure: the caller's number for each envelope line (`Measure`), taken
            while the line is decoded; `measured` is told them batch by batch,
            once (a pass that starts over does not measure again).
    """
    total = transcript.line_count
    p = AnalysisPass(transcript, exact_ids=False)
    p.read(progress, workers, found, measure, measured)
    if not p.ids_unique():
        p = AnalysisPass(transcript)
        p.read(progress, workers, found)
    a = p.finish(total)
    if progress is not None:
        progress(total, total)
    return a

"""One pass over a transcript: tool operations, excerpt markers, replay, line problems.

Everything a viewer header, `--check` and the model view need is collected in a
single streaming pass that keeps no message content and no per-envelope Python
objects: a gigabyte transcript has millions of lines, and a few hundred bytes
each would be gigabytes. Operations and the replayed conversation are columns of
line numbers (`core.compact`); the `ToolOperation` and `ReplayEntry` objects a
caller sees are made on access, by re-reading the few lines they come from.
"""

from __future__ import annotations

import copy
import hashlib
import re
import threading
from array import array
from bisect import bisect_left
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar, overload

from transcript_view.core import graphemes
from transcript_view.core.artifacts import head_tail_sizes, to_bytes
from transcript_view.core.canonical import canonical_string, data_digest
from transcript_view.core.compact import IdTable, LineColumns, key_of
from transcript_view.core.envelopes import (
    Compaction,
    Elision,
    Envelope,
    Message,
    SessionMeta,
    ToolDispatched,
    ToolSettled,
)
from transcript_view.core.findings import Finding
from transcript_view.core.markers import Marker, MarkerKind, parse_markers
from transcript_view.core.transcript import LineProblem, Transcript, as_last, parse_line_bytes

#: Lines longer than this are never parsed just to *describe* an operation (a
#: 50 MB tool message would stall whoever asked); their fields stay unknown.
DESCRIBE_LIMIT = 1 << 20


class OpState(StrEnum):
    """What the lines present say about one tool call (FORMAT.md's crash table)."""

    NEVER_DISPATCHED = "never-dispatched"
    RUNNING = "running-when-died"
    SETTLE_NEVER_LANDED = "settle-never-landed"
    SETTLED = "settled"


def _state(call: int, dispatch: int, message: int, settle: int) -> OpState:
    if settle >= 0:
        return OpState.SETTLED
    if dispatch < 0:
        return OpState.NEVER_DISPATCHED
    if message < 0:
        return OpState.RUNNING
    return OpState.SETTLE_NEVER_LANDED


@dataclass(slots=True)
class ToolOperation:
    """One tool call joined across its assistant turn, dispatch, tool message and settle."""

    call_id: str
    tool: str
    index: int = -1
    """Its row in `Analysis.operations` (identity: two views of one operation share it)."""
    op_id: str | None = None
    call_line: int | None = None
    dispatch_line: int | None = None
    dispatch_ts: str | None = None
    message_line: int | None = None
    message_id: str | None = None
    settle_line: int | None = None
    settle_ts: str | None = None
    outcome: str | None = None
    duration: float | None = None
    error: str | None = None
    reason: str | None = None
    result_digest: str | None = None
    artifact: Mapping[str, Any] | None = None
    is_error: bool = False

    @property
    def state(self) -> OpState:
        """Where the call got to, read off which lines exist."""
        return _state(
            -1,
            -1 if self.dispatch_line is None else self.dispatch_line,
            -1 if self.message_line is None else self.message_line,
            -1 if self.settle_line is None else self.settle_line,
        )

    def describe_state(self) -> str:
        """The state in words a person reads in a viewer."""
        state = self.state
        if state is OpState.SETTLED:
            return self.outcome or "settled"
        if state is OpState.NEVER_DISPATCHED:
            return "never dispatched"
        if state is OpState.RUNNING:
            return "running when the process died"
        return "completed; the settle never landed"


@dataclass(frozen=True, slots=True)
class ExcerptShape:
    """The parts of an excerpt around its marker, kept as lengths and digests only."""

    head_bytes: int
    head_sha256: str
    head_chars: int
    tail_bytes: int
    tail_sha256: str


@dataclass(slots=True)
class MarkerSite:
    """A marker found in a message, with the operation it belongs to (if any)."""

    line: int
    message_id: str | None
    role: str
    marker: Marker
    quoted: bool
    """True when the marker is text *about* a marker (in a user or assistant message, or
    a second marker-shaped line inside a tool result) rather than the excerpt's own."""
    op: ToolOperation | None = None
    shape: ExcerptShape | None = None
    op_index: int = -1

    @property
    def file(self) -> str | None:
        """The artifact basename the marker names, if it is a stored marker."""
        return self.marker.file


@dataclass(frozen=True, slots=True)
class ReplayEntry:
    """One message of what the model is sent next: its id, source line and any stub."""

    id: str
    line: int
    role: str
    sticky: bool
    summary: bool = False
    """A compaction's summary turn (content is the compaction line's `summary`)."""
    stub: str | None = None
    """Content replaced by an elision stub."""


# -- reading a few fields back from a line -------------------------------------------------

_ID_PREFIX = re.compile(rb'\{"id":"([^"\\]{1,200})"')


def _read(t: Transcript, line: int, *, limit: int | None = DESCRIBE_LIMIT) -> Envelope | None:
    """The envelope on `line`, or None (blank, bad, or longer than `limit`)."""
    if limit is not None and t.line_length(line) > limit:
        return None
    parsed = parse_line_bytes(t.raw_line(line), line, 0)
    return parsed if isinstance(parsed, Envelope) else None


def _id_at(t: Transcript, line: int) -> str:
    """The envelope id on `line`, cheaply for a canonical line (its first key is `id`)."""
    m = _ID_PREFIX.match(t.raw_line(line, 256))
    if m is not None:
        try:
            return m.group(1).decode("utf-8")
        except UnicodeDecodeError:
            pass
    env = _read(t, line, limit=None)
    return (env.id if env is not None else None) or f"line-{line}"


# -- the operations table ----------------------------------------------------------------------

T = TypeVar("T")


class _Rows(Sequence[T]):
    """A sequence whose items are made on access from row `i` (see `_item`)."""

    def __len__(self) -> int:
        raise NotImplementedError

    def _item(self, index: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._item(index)

    def __iter__(self) -> Iterator[T]:
        for i in range(len(self)):
            yield self._item(i)


_ROLES = ("system", "user", "assistant", "tool")
_ERROR, _HAS_ARTIFACT = 1, 2


class Operations(_Rows[ToolOperation]):
    """Every tool operation, as columns of line numbers; items are made on access.

    Lookups by line (`at("message", 12)`) bisect a sorted copy of the column, so
    a viewer drawing one block never scans the table.
    """

    def __init__(self, transcript: Transcript) -> None:
        self._t = transcript
        self._cols = LineColumns("call", "dispatch", "message", "settle")
        self._call_pos = array("i")
        self._flags = array("b")
        self._artifacts: dict[int, Mapping[str, Any]] = {}
        self._sorted: dict[str, tuple[array[int], array[int]]] = {}
        self._cache: OrderedDict[int, ToolOperation] = OrderedDict()
        # A viewer reads operations from its UI thread and its layout workers at once.
        self._lock = threading.Lock()

    def __deepcopy__(self, memo: dict[int, Any]) -> Operations:
        """A copy for `Analyser` snapshots: the columns copied, the transcript shared.

        The lock and the caches are per copy; the artifact keys are shared, as
        nothing changes one after the pass put it in.
        """
        new = Operations.__new__(Operations)
        memo[id(self)] = new
        new._t = self._t
        new._cols = copy.deepcopy(self._cols, memo)
        new._call_pos = array("i", self._call_pos)
        new._flags = array("b", self._flags)
        new._artifacts = dict(self._artifacts)
        new._sorted = {}
        new._cache = OrderedDict()
        new._lock = threading.Lock()
        return new

    # -- building (the pass) ---------------------------------------------------

    def _add(self, *, call: int = -1, pos: int = -1, dispatch: int = -1) -> int:
        self._sorted.clear()
        self._call_pos.append(pos)
        self._flags.append(0)
        return self._cols.append(call=call, dispatch=dispatch)

    def _set(self, name: str, row: int, line: int) -> None:
        self._sorted.clear()
        self._cache.pop(row, None)
        self._cols.set(name, row, line)

    # -- reading -------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._cols)

    def _item(self, index: int) -> ToolOperation:
        with self._lock:
            cached = self._cache.get(index)
            if cached is not None:
                self._cache.move_to_end(index)
                return cached
        op = self._make(index)
        with self._lock:
            self._cache[index] = op
            if len(self._cache) > 512:
                self._cache.popitem(last=False)
        return op

    def state(self, row: int) -> OpState:
        """A row's state without reading anything."""
        g = self._cols.get
        return _state(g("call", row), g("dispatch", row), g("message", row), g("settle", row))

    def line(self, name: str, row: int) -> int:
        """A row's line in one column (`call`, `dispatch`, `message`, `settle`), -1 if none."""
        return self._cols.get(name, row)

    def artifact(self, row: int) -> Mapping[str, Any] | None:
        """The settle's artifact key for a row, kept in memory (oversized results only)."""
        return self._artifacts.get(row)

    def with_artifacts(self) -> dict[int, Mapping[str, Any]]:
        """Rows whose settle records an artifact, with the key."""
        return dict(self._artifacts)

    def rows_at(self, name: str, line: int) -> list[int]:
        """The rows whose `name` column is `line` (several for one assistant turn)."""
        with self._lock:
            if name not in self._sorted:
                self._sorted[name] = self._cols.sorted_by(name)
            values, rows = self._sorted[name]
        i = bisect_left(values, line)
        out = []
        while i < len(values) and values[i] == line:
            out.append(rows[i])
            i += 1
        return out

    def at(self, name: str, line: int) -> ToolOperation | None:
        """The operation whose `name` line is `line`, if any."""
        rows = self.rows_at(name, line)
        return self[rows[0]] if rows else None

    def at_call(self, line: int, call_id: str) -> ToolOperation | None:
        """The operation an assistant turn on `line` started for `call_id`."""
        for row in self.rows_at("call", line):
            op = self[row]
            if op.call_id == call_id:
                return op
        return None

    def _make(self, row: int) -> ToolOperation:
        t, g = self._t, self._cols.get
        call, dispatch = g("call", row), g("dispatch", row)
        message, settle = g("message", row), g("settle", row)
        op = ToolOperation(
            call_id="",
            tool="",
            index=row,
            call_line=call if call >= 0 else None,
            dispatch_line=dispatch if dispatch >= 0 else None,
            message_line=message if message >= 0 else None,
            settle_line=settle if settle >= 0 else None,
            is_error=bool(self._flags[row] & _ERROR),
            artifact=self._artifacts.get(row),
        )
        if call >= 0:
            env = _read(t, call)
            pos = self._call_pos[row]
            if isinstance(env, Message) and 0 <= pos < len(env.tool_calls):
                op.call_id, op.tool = env.tool_calls[pos].id, env.tool_calls[pos].name
        if dispatch >= 0:
            d = _read(t, dispatch)
            if isinstance(d, ToolDispatched):
                op.op_id, op.call_id = d.op_id, d.call_id
                op.tool = d.tool or op.tool
                op.dispatch_ts = d.ts
        if message >= 0:
            op.message_id = _id_at(t, message)
        if settle >= 0:
            s = _read(t, settle)
            if isinstance(s, ToolSettled):
                op.outcome, op.duration, op.error = s.outcome, s.duration, s.error
                op.reason, op.result_digest, op.settle_ts = s.reason, s.result_digest, s.ts
        return op


# -- the replayed conversation -------------------------------------------------------------------

_STICKY, _SUMMARY = 8, 16


class Replay(_Rows[ReplayEntry]):
    """The conversation the model is sent next, as columns; entries are made on access."""

    def __init__(self, transcript: Transcript) -> None:
        self._t = transcript
        self._lines = array("i")
        self._keys = array("q")
        self._flags = array("b")
        self._other_roles: dict[int, str] = {}
        self._stubs: dict[tuple[int, bool], str] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def _item(self, index: int) -> ReplayEntry:
        line, flags = self._lines[index], self._flags[index]
        code = flags & 7
        role = _ROLES[code] if code < len(_ROLES) else self._other_roles.get(line, "user")
        summary = bool(flags & _SUMMARY)
        return ReplayEntry(
            id=_id_at(self._t, line),
            line=line,
            role=role,
            sticky=bool(flags & _STICKY),
            summary=summary,
            stub=self._stubs.get((line, summary)),
        )

    def _append(self, line: int, id_: str, role: str, *, sticky: bool, summary: bool) -> None:
        code = _ROLES.index(role) if role in _ROLES else 7
        if code == 7:
            self._other_roles[line] = role
        self._lines.append(line)
        self._keys.append(key_of(id_))
        self._flags.append(code | (_STICKY if sticky else 0) | (_SUMMARY if summary else 0))

    def _find(self, id_: str) -> int:
        """Index of the first entry with this id (confirmed against the line), or -1."""
        key = key_of(id_)
        start = 0
        while True:
            try:
                i = self._keys.index(key, start)
            except ValueError:
                return -1
            if _id_at(self._t, self._lines[i]) == id_:
                return i
            start = i + 1

    def _compact(self, cut: int, line: int, id_: str) -> None:
        """Keep sticky entries up to `cut`, splice the summary in, keep the rest."""
        keep = [i for i in range(cut + 1) if self._flags[i] & _STICKY]
        lines = array("i", (self._lines[i] for i in keep))
        keys = array("q", (self._keys[i] for i in keep))
        flags = array("b", (self._flags[i] for i in keep))
        lines.append(line)
        keys.append(key_of(id_))
        flags.append(_ROLES.index("user") | _SUMMARY)
        lines.extend(self._lines[cut + 1 :])
        keys.extend(self._keys[cut + 1 :])
        flags.extend(self._flags[cut + 1 :])
        self._lines, self._keys, self._flags = lines, keys, flags

    def _stub(self, index: int, stub: str) -> None:
        self._stubs[(self._lines[index], bool(self._flags[index] & _SUMMARY))] = stub


# -- the result ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Analysis:
    """What one pass over a transcript found."""

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


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _shape(content: str, marker: Marker) -> ExcerptShape:
    head = content[: max(marker.start - 1, 0)]
    tail = content[marker.end + 1 :]
    hb, tb = to_bytes(head), to_bytes(tail)
    return ExcerptShape(len(hb), _sha(hb), graphemes.count(head), len(tb), _sha(tb))


def _choose_excerpt_marker(content: str, markers: list[Marker]) -> list[bool]:
    """Which markers in a tool result are quoted (True) rather than the excerpt's own.

    The excerpt's own marker stands on a line of its own. When several do (a tool
    that printed a transcript), the one the settle's artifact key describes is
    resolved later; here the first line-isolated one is provisionally chosen.
    """
    quoted = [True] * len(markers)
    for i, m in enumerate(markers):
        if m.on_own_line(content):
            quoted[i] = False
            break
    return quoted


class _IdOverlay:
    """An `IdTable` as a snapshot sees it: the original's keys plus its own additions."""

    def __init__(self, base: IdTable | _IdOverlay) -> None:
        self._base = base
        self._added: dict[int, int] = {}

    def get(self, key: int) -> int:
        """The value under `key` here or in the original, or -1."""
        value = self._added.get(key)
        return self._base.get(key) if value is None else value

    def setdefault(self, key: int, value: int) -> int:
        """Store `value` under `key` here unless present anywhere; return the earlier or -1."""
        earlier = self.get(key)
        if earlier < 0:
            self._added[key] = value
        return earlier


class _Pass:
    def __init__(self, transcript: Transcript) -> None:
        self.t = transcript
        self.ops = Operations(transcript)
        self.replay = Replay(transcript)
        self.a = Analysis(transcript=transcript, operations=self.ops, replay=self.replay)
        # Pending work only: entries leave these maps as soon as they are matched,
        # so their size is what is in flight, not what the file holds.
        self.undispatched: dict[str, list[int]] = {}
        self.unanswered: dict[str, list[int]] = {}
        self.pending: dict[str, int] = {}
        self.message_digest: dict[int, str] = {}
        self.op_ids: IdTable | _IdOverlay = IdTable()
        self.ids_seen: IdTable | _IdOverlay = IdTable(expected=transcript.line_count)
        self.first: Envelope | None = None
        self.site_rows: set[int] = set()
        # Multi-candidate tool results, resolved once settles are known.
        self.ambiguous: list[tuple[MarkerSite, list[MarkerSite], str]] = []

    def run(self, progress: Callable[[int, int], None] | None) -> Analysis:
        a = self.a
        a.lines = self.t.line_count
        total = a.lines
        for n, parsed in enumerate(self.t, start=1):
            self.feed(parsed)
            if progress is not None and n % 2048 == 0:
                progress(parsed.line, total)
        self.finish()
        if progress is not None:
            progress(total, total)
        return a

    def feed(self, parsed: Envelope | LineProblem) -> None:
        """Take one parsed line, in file order."""
        if isinstance(parsed, LineProblem):
            self.a.problems.append(parsed)
        else:
            self.envelope(parsed)

    def snapshot(self) -> _Pass:
        """A copy of the pass so far that can be fed and finished on its own.

        `finish` changes what it finishes (it resolves markers, adds findings),
        so an `Analyser` finishes a copy and keeps feeding the original. The
        transcript is shared, and the two id tables (the biggest part of the
        state, 48 MB for 2.6 M lines) are seen through overlays that keep the
        copy's few additions apart instead of being copied.
        """
        memo: dict[int, Any] = {
            id(self.t): self.t,
            id(self.op_ids): _IdOverlay(self.op_ids),
            id(self.ids_seen): _IdOverlay(self.ids_seen),
        }
        # Frozen objects are shared, not copied: deepcopy costs microseconds an
        # object, and a long run has many problems, findings and markers. Only
        # the sites themselves (which `finish` resolves) are copied.
        a = self.a
        frozen: list[object] = [*a.problems, *a.findings, self.first]
        for site in a.sites:
            frozen.append(site.marker)
            frozen.append(site.shape)
        for obj in frozen:
            memo[id(obj)] = obj
        return copy.deepcopy(self, memo)

    # -- per envelope ----------------------------------------------------------

    def envelope(self, env: Envelope) -> None:
        a = self.a
        if self.first is None:
            self.first = env
        a.envelopes += 1
        a.type_counts[env.type] += 1
        env_id = env.id
        if env_id is not None:
            earlier = self.ids_seen.setdefault(key_of(env_id), env.line)
            if earlier >= 0 and _id_at(self.t, earlier) == env_id:
                a.findings.append(
                    Finding(
                        "malformed-line",
                        env.line,
                        None,
                        f"envelope id {env_id[:80]!r} was already used on line {earlier}",
                    )
                )
        if isinstance(env, SessionMeta):
            if a.meta_line is None:
                a.meta_line = env.line
        elif isinstance(env, Message):
            self.message(env)
        elif isinstance(env, ToolDispatched):
            self.dispatched(env)
        elif isinstance(env, ToolSettled):
            self.settled(env)
        elif isinstance(env, Compaction):
            self.compaction(env)
        elif isinstance(env, Elision):
            self.elision(env)

    def message(self, env: Message) -> None:
        role = env.role
        self.replay._append(
            env.line, env.id or f"line-{env.line}", role, sticky=env.is_sticky, summary=False
        )
        if role == "assistant":
            for pos, call in enumerate(env.tool_calls):
                row = self.ops._add(call=env.line, pos=pos)
                self.undispatched.setdefault(call.id, []).append(row)
        content = env.content
        row = self.answer(env, content) if role == "tool" else -1
        markers = parse_markers(content)
        if not markers:
            return
        quoted = (
            _choose_excerpt_marker(content, markers) if role == "tool" else [True] * len(markers)
        )
        sites = []
        for marker, q in zip(markers, quoted, strict=True):
            site = MarkerSite(
                line=env.line, message_id=env.id, role=role, marker=marker, quoted=q, op_index=row
            )
            if not q:
                site.shape = _shape(content, marker)
                if row >= 0:
                    self.site_rows.add(row)
            sites.append(site)
            self.a.sites.append(site)
        candidates = [s for s in sites if s.marker.on_own_line(content)]
        if role == "tool" and len(candidates) > 1:
            self.ambiguous.append((candidates[0], candidates, content))

    @staticmethod
    def _take(queues: dict[str, list[int]], key: str) -> int:
        queue = queues.get(key)
        if not queue:
            return -1
        row = queue.pop(0)
        if not queue:
            del queues[key]
        return row

    def answer(self, env: Message, content: str) -> int:
        call_id = env.tool_call_id
        if call_id is None:
            return -1
        row = self._take(self.unanswered, call_id)
        if row < 0:
            # A transcript written before dispatch lines existed answers calls directly.
            row = self._take(self.undispatched, call_id)
        if row < 0:
            return -1
        self.ops._set("message", row, env.line)
        if env.is_error:
            self.ops._flags[row] |= _ERROR
        if self.ops.line("dispatch", row) >= 0 and self.ops.line("settle", row) < 0:
            self.message_digest[row] = _sha(canonical_string(content).encode("utf-8"))
        return row

    def dispatched(self, env: ToolDispatched) -> None:
        call_id = env.call_id
        row = self._take(self.undispatched, call_id)
        if row < 0:
            row = self.ops._add(dispatch=env.line)
        else:
            self.ops._set("dispatch", row, env.line)
        op_id = env.op_id
        if op_id is not None and self.op_ids.setdefault(key_of(op_id), row) < 0:
            self.pending[op_id] = row
        self.unanswered.setdefault(call_id, []).append(row)
        want = env.arguments_digest
        if want is not None and env.arguments is not None:
            got = data_digest(env.arguments)
            if got != want:
                self.a.findings.append(
                    Finding(
                        "metadata-mismatch",
                        env.line,
                        None,
                        f"arguments-digest {want[:64]} does not match the arguments "
                        f"(their canonical JSON digests to {got})",
                    )
                )

    def settled(self, env: ToolSettled) -> None:
        op_id = env.op_id
        row = self.pending.pop(op_id, -1) if op_id is not None else -1
        if row < 0:
            earlier = self.op_ids.get(key_of(op_id)) if op_id is not None else -1
            done = earlier >= 0 and self.ops.line("settle", earlier) >= 0
            if done and _id_at(self.t, self.ops.line("dispatch", earlier)) == op_id:
                message = (
                    f"operation {op_id!r} was already settled on line "
                    f"{self.ops.line('settle', earlier)}; one operation has one outcome"
                )
            else:
                message = (
                    f"tool-settled names operation {str(op_id)[:80]!r}, "
                    "which no earlier line dispatched"
                )
            self.a.findings.append(Finding("malformed-line", env.line, None, message))
            return
        self.ops._set("settle", row, env.line)
        artifact = env.artifact
        if artifact is not None:
            self.ops._artifacts[row] = artifact
            self.ops._flags[row] |= _HAS_ARTIFACT
        digest = self.message_digest.pop(row, None)
        want = env.result_digest
        if want is not None and digest is not None and want != digest:
            self.a.findings.append(
                Finding(
                    "result-digest-mismatch",
                    env.line,
                    None,
                    f"result-digest {want[:64]} does not match the tool message on line "
                    f"{self.ops.line('message', row)} (which digests to {digest})",
                )
            )

    # -- replay (the reference's `load`, in file order) ----------------------------

    def compaction(self, env: Compaction) -> None:
        through = env.replaces_through_id
        cut = self.replay._find(through) if through is not None else -1
        if cut < 0:
            self.a.replay_problems.append(
                f"line {env.line}: the compaction replaces through {str(through)[:80]!r}, "
                "which is not a message the conversation still has"
            )
            return
        self.replay._compact(cut, env.line, env.id or f"line-{env.line}")

    def elision(self, env: Elision) -> None:
        for target, stub in env.items:
            index = self.replay._find(target)
            if index < 0:
                self.a.replay_problems.append(
                    f"line {env.line}: the elision stubs {target[:80]!r}, "
                    "which is not a message the conversation still has"
                )
                continue
            self.replay._stub(index, stub)

    # -- after the last line ---------------------------------------------------------

    def finish(self) -> None:
        a = self.a
        for site in a.sites:
            if site.op_index >= 0:
                site.op = self.ops[site.op_index]
        for chosen, candidates, content in self.ambiguous:
            self.resolve(chosen, candidates, content)
        # A file in which nothing parses is not a transcript a crash tore: every
        # bad line, the last one included, is an error.
        nothing_parsed = a.envelopes == 0
        for problem in a.problems:
            torn = problem.kind == "torn-tail" and not nothing_parsed
            kind = "torn-tail" if torn else "malformed-line"
            a.findings.append(Finding(kind, problem.line, None, problem.message))
        if self.first is not None and not isinstance(self.first, SessionMeta):
            a.findings.append(
                Finding(
                    "malformed-line",
                    self.first.line,
                    None,
                    f"the first envelope is a {self.first.type[:40]!r} line; "
                    "a transcript starts with session-meta",
                )
            )
        for row in range(len(self.ops)):
            if self.ops.state(row) in (OpState.RUNNING, OpState.SETTLE_NEVER_LANDED):
                op = self.ops[row]
                a.findings.append(
                    Finding(
                        "unsettled-operation",
                        op.dispatch_line,
                        None,
                        f"{op.tool or 'tool'} call {op.call_id!r}: {op.describe_state()}",
                    )
                )
        for row, art in self.ops.with_artifacts().items():
            if row not in self.site_rows:
                name = art.get("file")
                message_line = self.ops.line("message", row)
                a.findings.append(
                    Finding(
                        "metadata-mismatch",
                        self.ops.line("settle", row),
                        name if isinstance(name, str) else None,
                        "the settle records an artifact, but the tool message"
                        + (f" on line {message_line}" if message_line >= 0 else "")
                        + " carries no excerpt marker",
                    )
                )
        for site in a.excerpt_sites:
            self.check_site(site)
        a.findings.sort(key=lambda f: f.line if f.line is not None else 0)

    def resolve(self, chosen: MarkerSite, candidates: list[MarkerSite], content: str) -> None:
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

    def check_site(self, site: MarkerSite) -> None:
        a = self.a
        m = site.marker
        art = self.ops.artifact(site.op_index) if site.op_index >= 0 else None
        if m.kind is not MarkerKind.STORED:
            a.findings.append(
                Finding(
                    "not-stored",
                    site.line,
                    None,
                    f"full result {m.why} ({m.bytes:,} bytes, sha256 {m.digest[:12]}…)",
                )
            )
            if art is not None:
                a.findings.append(
                    Finding(
                        "metadata-mismatch",
                        site.line,
                        None,
                        "the marker says the result was not stored, "
                        "but the settle records an artifact",
                    )
                )
            return
        if not m.safe_name:
            a.findings.append(
                Finding(
                    "unsafe-name",
                    site.line,
                    None,
                    f"the marker names {_show(m.file or '')}, which is not a plain basename; "
                    "it was not opened",
                )
            )
        if art is None:
            return
        diffs = []
        for key, mine in (
            ("file", m.file),
            ("bytes", m.bytes),
            ("digest", m.digest),
            ("elided-chars", m.elided),
        ):
            theirs = art.get(key)
            if theirs != mine:
                diffs.append(f"{key}: marker {_show(str(mine))}, artifact key {_show(str(theirs))}")
        if diffs:
            a.findings.append(
                Finding(
                    "metadata-mismatch",
                    site.line,
                    m.file if m.safe_name else None,
                    "marker and settle disagree (" + "; ".join(diffs) + ")",
                )
            )


def _show(text: str, limit: int = 80) -> str:
    """A value for a message: repr'd (so controls are escaped) and bounded."""
    shown = repr(text[:limit])
    return shown + ("…" if len(text) > limit else "")


class Analyser:
    """An analysis kept up to date as its transcript grows (the viewer's follow mode).

    Re-reading a gigabyte transcript after every appended line would take a
    minute each time; this keeps the pass's state and reads only the new
    lines. Every line but the last non-blank one is fed to the pass for good;
    that last one may still be being written (or is a torn tail only while it
    is last), so it is read again by the next `update` and, until then, fed
    only to the snapshot that `update` finishes. The result of every `update`
    equals `analyse` of the file as it is then (the tests hold it to that).

    Not thread-safe: one `update` at a time. The `Analysis` objects it returns
    are independent of it and of each other.
    """

    def __init__(self, transcript: Transcript) -> None:
        """Nothing is read until the first `update`."""
        self.transcript = transcript
        self._start()

    def _start(self) -> None:
        self._pass = _Pass(self.transcript)
        self._resume = 1  # the first line not yet fed for good
        self._resets = self.transcript.resets

    def update(self, progress: Callable[[int, int], None] | None = None) -> Analysis:
        """Read the lines indexed since the last update; return the whole analysis.

        Call `Transcript.refresh` (or `build_index`) first. A transcript that
        was truncated or replaced since (`Transcript.resets`) is read again
        from its start.

        Args:
            progress: called as `(line, lines_total)` every few thousand lines.
        """
        t = self.transcript
        if t.resets != self._resets:
            self._start()
        total = t.line_count  # read once: a refresh may index more meanwhile
        last: Envelope | LineProblem | None = None
        for n, parsed in enumerate(t.parsed_lines(self._resume, total), start=1):
            if last is not None:
                self._pass.feed(last)
                self._resume = parsed.line
            last = parsed
            if progress is not None and n % 2048 == 0:
                progress(parsed.line, total)
        snap = self._pass.snapshot()
        if last is not None:
            snap.feed(as_last(last))
        snap.a.lines = total
        snap.finish()
        if progress is not None:
            progress(total, total)
        return snap.a


def analyse(transcript: Transcript, progress: Callable[[int, int], None] | None = None) -> Analysis:
    """One streaming pass over an indexed transcript.

    The result keeps a reference to `transcript`: operations and replay entries
    are read back from it on access (a closed transcript reopens read-only for
    that).

    Args:
        transcript: an indexed transcript (`Transcript.open` or `build_index` done).
        progress: called as `(lines_done, lines_total)` every few thousand lines.
    """
    return _Pass(transcript).run(progress)

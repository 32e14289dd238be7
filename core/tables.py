"""The operations and the replayed conversation of a transcript, as columns of line numbers.

A gigabyte transcript has millions of tool calls and messages; a Python object
each would be gigabytes. These tables keep a few machine integers a row
(`core.compact`) and make the `ToolOperation` and `ReplayEntry` a caller sees on
access, by re-reading the few lines a row points at. The analysis pass fills
them through the public build methods below, in file order; every other reader
only looks.
"""

from __future__ import annotations

import copy
import re
import threading
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Container, Iterator, Mapping, Sequence
from itertools import compress, islice, repeat
from operator import and_, le
from typing import Any, NamedTuple, TypeVar, overload

from transcript_view.core.compact import LineColumns
from transcript_view.core.envelopes import (
    Envelope,
    Message,
    ToolDispatched,
    ToolSettled,
    field_text,
)
from transcript_view.core.keys import KEY_CODE, IdKeys
from transcript_view.core.records import OpState, ReplayEntry, ToolOperation, op_state
from transcript_view.core.transcript import Transcript, parse_line_bytes

#: Lines longer than this are never parsed just to *describe* an operation (a
#: 50 MB tool message would stall whoever asked); their fields stay unknown.
DESCRIBE_LIMIT = 1 << 20

# -- reading a few fields back from a line -------------------------------------------------

_ID_PREFIX = re.compile(rb'\{"id":"([^"\\]{1,200})"')


def read_envelope(
    t: Transcript, line: int, *, limit: int | None = DESCRIBE_LIMIT
) -> Envelope | None:
    """The envelope on `line`, or None (blank, bad, or longer than `limit`).

    Tables keep line numbers, not envelopes; this is how a row gets its fields
    back when someone looks at it.
    """
    if limit is not None and t.line_length(line) > limit:
        return None
    parsed = parse_line_bytes(t.raw_line(line), line, 0)
    return parsed if isinstance(parsed, Envelope) else None


def id_at(t: Transcript, line: int) -> str:
    """The envelope id on `line`, cheaply for a canonical line (its first key is `id`).

    Tables and the pass keep only 64-bit keys of ids; a key match is a candidate
    that this confirms against the line itself.
    """
    m = _ID_PREFIX.match(t.raw_line(line, 256))
    if m is not None:
        try:
            return m.group(1).decode("utf-8")
        except UnicodeDecodeError:
            pass
    env = read_envelope(t, line, limit=None)
    return (env.id if env is not None else None) or f"line-{line}"


# -- rows made on access ---------------------------------------------------------------------

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
#: A replayed message's role as the low bits of its flags (7: another role, kept aside).
ROLE_CODES = {role: code for code, role in enumerate(_ROLES)}
_ERROR, _HAS_ARTIFACT = 1, 2

# -- the operations table ----------------------------------------------------------------------


class Operations(_Rows[ToolOperation]):
    """Every tool operation, as columns of line numbers; items are made on access.

    Lookups by line (`at("message", 12)`) bisect a sorted copy of the column, so
    a viewer drawing one block never scans the table.
    """

    def __init__(self, transcript: Transcript) -> None:
        """An empty table whose rows will be read back from `transcript`."""
        self._t = transcript
        self._cols = LineColumns("call", "dispatch", "message", "settle")
        self._bind()
        self._call_pos = array("i")
        self._flags = array("b")
        self._artifacts: dict[int, Mapping[str, Any]] = {}
        self._sorted: dict[str, tuple[array[int], array[int]]] = {}
        self._cache: OrderedDict[int, ToolOperation] = OrderedDict()
        # A viewer reads operations from its UI thread and its layout workers at once.
        self._lock = threading.Lock()
        self._live_turn = -1

    def __deepcopy__(self, memo: dict[int, Any]) -> Operations:
        """A copy for `Analyser` snapshots: the columns copied, the transcript shared.

        The lock and the caches are per copy; the artifact keys are shared, as
        nothing changes one after the pass put it in.
        """
        new = Operations.__new__(Operations)
        memo[id(self)] = new
        new._t = self._t
        new._cols = copy.deepcopy(self._cols, memo)
        new._bind()
        new._call_pos = array("i", self._call_pos)
        new._flags = array("b", self._flags)
        new._artifacts = dict(self._artifacts)
        new._sorted = {}
        new._cache = OrderedDict()
        new._lock = threading.Lock()
        new._live_turn = self._live_turn
        return new

    def __getstate__(self) -> dict[str, Any]:
        """What a pass server sends back (`core.parallel`): the columns and their sorted
        indexes (`index_lines`), not the lock or the cache of made operations."""
        state = dict(self.__dict__)
        for per_process in ("_lock", "_cache"):
            state.pop(per_process, None)
        with self._lock:
            state["_sorted"] = dict(self._sorted)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._cache = OrderedDict()
        self._lock = threading.Lock()

    def index_lines(self) -> None:
        """Sort every line column now (what `rows_at` sorts on first use).

        A viewer looks operations up by line as soon as it draws one: the first
        look sorted a column of every operation on its UI thread (0.4 s at
        256 MiB). The pass server calls this before it sends the analysis
        back, so the sorted indexes travel with it.
        """
        for name in ("call", "dispatch", "message", "settle"):
            with self._lock:
                if name not in self._sorted:
                    self._sorted[name] = self._cols.sorted_by(name)

    def _bind(self) -> None:
        """Name the columns the pass writes (one attribute lookup, not a dict's, per write)."""
        self._call = self._cols.column("call")
        self._dispatch = self._cols.column("dispatch")
        self._message = self._cols.column("message")
        self._settle = self._cols.column("settle")

    # -- building (the pass, in file order) ------------------------------------------
    #
    # Each method does all of one line's work on the table in one call: the pass
    # calls these once per tool call, so they stay flat (no helper layers).

    def _changed(self, row: int) -> None:
        """Forget what was derived from the columns (nothing is, during a pass)."""
        if self._sorted:
            self._sorted.clear()
        if self._cache:
            self._cache.pop(row, None)

    def add_call(self, line: int, pos: int) -> int:
        """A new row for tool call number `pos` of the assistant turn on `line`; its index."""
        if self._sorted:
            self._sorted.clear()
        self._call_pos.append(pos)
        self._flags.append(0)
        self._call.append(line)
        self._dispatch.append(-1)
        self._message.append(-1)
        self._settle.append(-1)
        return len(self._flags) - 1

    def add_dispatch(self, line: int) -> int:
        """A new row for a dispatch on `line` that no assistant turn announced; its index."""
        if self._sorted:
            self._sorted.clear()
        self._call_pos.append(-1)
        self._flags.append(0)
        self._call.append(-1)
        self._dispatch.append(line)
        self._message.append(-1)
        self._settle.append(-1)
        return len(self._flags) - 1

    def set_dispatch(self, row: int, line: int) -> None:
        """Record the dispatch line of an announced call."""
        self._changed(row)
        self._dispatch[row] = line

    def set_message(self, row: int, line: int, *, is_error: bool) -> None:
        """Record the tool message that answered `row`, and whether it reports an error."""
        self._changed(row)
        self._message[row] = line
        if is_error:
            self._flags[row] |= _ERROR

    def set_settle(self, row: int, line: int, artifact: Mapping[str, Any] | None) -> None:
        """Record the settle of `row`, with its artifact key if it names one.

        The artifact key is the one field kept in memory: verification needs it
        for every stored result, and it exists only for oversized ones.
        """
        self._changed(row)
        self._settle[row] = line
        if artifact is not None:
            self._artifacts[row] = artifact
            self._flags[row] |= _HAS_ARTIFACT

    def raw_columns(
        self,
    ) -> tuple[list[array[int]], array[int], array[int], dict[int, Mapping[str, Any]]]:
        """The table as it is stored: (call, dispatch, message, settle columns), the
        call positions, the flags and the artifact keys by row.

        What a pass that built the table in a worker process sends back
        (`extend_rows` takes it).
        """
        cols = [self._cols.column(n) for n in ("call", "dispatch", "message", "settle")]
        return cols, self._call_pos, self._flags, self._artifacts

    def extend_rows(
        self,
        cols: list[array[int]],
        call_pos: array[int],
        flags: array[int],
        artifacts: Mapping[int, Mapping[str, Any]],
    ) -> None:
        """Append rows built elsewhere (`raw_columns`' shape; `artifacts` keyed by the new rows)."""
        if self._sorted:
            self._sorted.clear()
        for name, col in zip(("call", "dispatch", "message", "settle"), cols, strict=True):
            self._cols.column(name).extend(col)
        self._call_pos.extend(call_pos)
        self._flags.extend(flags)
        self._artifacts.update(artifacts)

    def continue_row(
        self,
        row: int,
        dispatch: int,
        message: int,
        settle: int,
        flags: int,
        artifact: Mapping[str, Any] | None,
    ) -> None:
        """Give an announced call the dispatch, message and settle lines a worker found for it.

        A worker that folds a run of lines cannot see the calls announced before
        its run; the dispatch it could not match made a row of its own, which
        the fold then merges into the call's row with this.
        """
        self._changed(row)
        self._dispatch[row] = dispatch
        self._message[row] = message
        self._settle[row] = settle
        self._flags[row] |= flags
        if artifact is not None:
            self._artifacts[row] = artifact

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
        return op_state(g("dispatch", row), g("message", row), g("settle", row))

    def set_live(self, last_turn: int) -> None:
        """The file is still being written: unsettled calls from `last_turn` on may still run.

        `last_turn` is the line of the last assistant turn (0 when there is none):
        the agent loop moves on only once a turn's calls are settled, so a call
        from before it is lost, not running (`in_flight`).
        """
        with self._lock:
            self._live_turn = max(last_turn, 0)
            self._cache.clear()

    def in_flight(self, row: int) -> bool:
        """Whether a row may still be running (see `set_live`; never for a finished file)."""
        g = self._cols.get
        if self._live_turn < 0 or g("settle", row) >= 0:
            return False
        return max(g("call", row), g("dispatch", row)) >= self._live_turn

    def line(self, name: str, row: int) -> int:
        """A row's line in one column (`call`, `dispatch`, `message`, `settle`), -1 if none."""
        return self._cols.get(name, row)

    def unsettled_rows(self) -> list[int]:
        """The rows with a dispatch or a tool message but no settle, in order.

        What a crash leaves; a whole-file check asks for these once, and a
        comprehension over two columns is a twentieth of asking each row's `state`.
        """
        dispatch, message = self._dispatch, self._message
        return [
            r
            for r, settle in enumerate(self._settle)
            if settle < 0 and (dispatch[r] >= 0 or message[r] >= 0)
        ]

    def awaits_settle(self, row: int) -> bool:
        """Dispatched and not settled yet (`line("dispatch") >= 0`, `line("settle") < 0`)."""
        return self._dispatch[row] >= 0 and self._settle[row] < 0

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
            in_flight=self.in_flight(row),
        )
        if call >= 0:
            env = read_envelope(t, call)
            pos = self._call_pos[row]
            if isinstance(env, Message) and 0 <= pos < len(env.tool_calls):
                op.call_id, op.tool = env.tool_calls[pos].id, env.tool_calls[pos].name
        if dispatch >= 0:
            d = read_envelope(t, dispatch)
            if isinstance(d, ToolDispatched):
                op.op_id, op.call_id = d.op_id, d.call_id
                op.tool = d.tool or op.tool
                op.dispatch_ts = d.ts
        if message >= 0:
            op.message_id = id_at(t, message)
        if settle >= 0:
            s = read_envelope(t, settle)
            if isinstance(s, ToolSettled):
                op.outcome, op.duration, op.error = s.outcome, s.duration, s.error
                op.reason, op.result_digest, op.settle_ts = s.reason, s.result_digest, s.ts
        return op


# -- the replayed conversation -------------------------------------------------------------------

_STICKY, _SUMMARY = 8, 16
#: The flag bit of a message compaction keeps (`Replay.extend`'s `flags`).
STICKY = _STICKY


class ReplaySlot(NamedTuple):
    """A replay entry's fields but its id (`Replay.slot`): the id is read back from its line."""

    line: int
    role: str
    sticky: bool
    summary: bool
    stub: str | None


def message_chars(env: Envelope | None) -> int:
    """A message's characters as an estimate of the context counts them (`core.calls`): its
    content, and an assistant message's tool calls' arguments (their JSON text). The pass
    counts each line as it maps it, by the same rule (`core.analysis._map_into`)."""
    if not isinstance(env, Message):
        return 0
    chars = len(env.content)
    calls = env.payload.get("tool-calls")
    if env.payload.get("role") == "assistant" and isinstance(calls, list):
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            arguments = function.get("arguments") if isinstance(function, dict) else None
            if isinstance(arguments, str):
                chars += len(arguments)
    return chars


class Replay(_Rows[ReplayEntry]):
    """The conversation the model is sent next, as columns; entries are made on access."""

    def __init__(self, transcript: Transcript, keys: IdKeys) -> None:
        """An empty conversation whose entries will be read back from `transcript`.

        `keys` are the pass's (the replay's keys are made where its lines are mapped).
        """
        self._t = transcript
        self._id_keys = keys
        self._lines = array("i")
        self._keys = array(KEY_CODE)
        self._flags = array("b")
        self.chars_total = 0
        """The characters of the whole conversation as it stands (an estimate's basis):
        kept as a sum, each entry's read back from its line only where a compaction or an
        elision changes it (`entry_chars`), not a column of every message's."""
        self._other_roles: dict[int, str] = {}
        self._stubs: dict[tuple[int, bool], str] = {}
        self._ascending: bool | None = None
        """Whether the entries' lines ascend (no summary out of place): then an entry is
        found by line by bisection. None: not known since the last change."""
        self._by_line: dict[int, int] | None = None
        """Entry by line, for a conversation whose lines do not ascend (made on first use)."""

    def __len__(self) -> int:
        return len(self._lines)

    def _changed(self) -> None:
        self._ascending = self._by_line = None

    def index_entries(self) -> None:
        """Learn now whether the entries' lines ascend (what `index_of_line` needs first).

        The pass server calls this before it sends an analysis back: the check
        reads every entry (0.1 s a gigabyte), which the screen would otherwise
        do on its UI thread the first time a badge changes.
        """
        if self._ascending is None:
            lines = self._lines
            self._ascending = all(map(le, lines, islice(lines, 1, None)))

    def index_of_line(self, line: int) -> int | None:
        """The index of the (first) entry from `line`, or None if it is not in the conversation.

        By bisection when the lines ascend, which is every conversation no
        compaction reordered; otherwise through a table made once. (A table
        of every entry was what the model view kept, ~80 bytes an entry: 200 MB
        for a gigabyte's 2.6 M, made on the UI thread.)
        """
        self.index_entries()
        lines = self._lines
        if self._ascending:
            i = bisect_left(lines, line)
            return i if i < len(lines) and lines[i] == line else None
        if self._by_line is None:
            by_line: dict[int, int] = {}
            for i, n in enumerate(lines):
                by_line.setdefault(n, i)
            self._by_line = by_line
        return self._by_line.get(line)

    def _item(self, index: int) -> ReplayEntry:
        line, role, sticky, summary, stub = self.slot(index)
        return ReplayEntry(
            id=id_at(self._t, line), line=line, role=role, sticky=sticky, summary=summary, stub=stub
        )

    def slot(self, index: int) -> ReplaySlot:
        """Entry `index` without its id: what drawing it needs, and no line read back."""
        line, flags = self._lines[index], self._flags[index]
        code = flags & 7
        role = _ROLES[code] if code < len(_ROLES) else self._other_roles.get(line, "user")
        summary = bool(flags & _SUMMARY)
        return ReplaySlot(
            line, role, bool(flags & _STICKY), summary, self._stubs.get((line, summary))
        )

    def first_of_role(self, role: str) -> int | None:
        """The index of the first entry of `role` (a `system` prompt, say), or None.

        One pass over the flags column in C (`bytes.translate` then `find`): the
        context of a call asks it of a replay of millions of entries.
        """
        if role not in ROLE_CODES:
            return None
        code = ROLE_CODES[role]
        table = bytes(1 if b & 7 == code else 0 for b in range(256))
        at = self._flags.tobytes().translate(table).find(1)
        return None if at < 0 else at

    def line_at(self, index: int) -> int:
        """The source line of entry `index`."""
        return self._lines[index]

    def entry_lines(self) -> Sequence[int]:
        """Every entry's source line, in order (the column itself: read, never write)."""
        return self._lines

    def is_plain(self, index: int) -> bool:
        """Whether entry `index` is its line's message as written (no summary, no stub)."""
        flags = self._flags[index]
        return not flags & _SUMMARY and (self._lines[index], False) not in self._stubs

    def unplain(self, lo: int, hi: int, lines: Container[int] = ()) -> list[int]:
        """Offsets `j` of entries `lo + j` (up to `hi`) not plain (`is_plain`) or on `lines`.

        What a model view cannot take from its line's file block, found at C
        speed (`compress` over the flags and the lines): a big transcript's
        model view is 2.6 M entries, and a Python test each was a second.
        """
        n = max(hi - lo, 0)
        out = set(compress(range(n), map(and_, self._flags[lo:hi], repeat(_SUMMARY))))
        stubbed = {line for line, summary in self._stubs if not summary}
        seg = self._lines[lo:hi]
        for test in (stubbed, lines):
            if test:
                out.update(compress(range(n), map(test.__contains__, seg)))
        return sorted(out)

    def summary_count(self) -> int:
        """How many entries are compaction summaries (from the flags; nothing read back)."""
        return sum(1 for flags in self._flags if flags & _SUMMARY)

    def stub_count(self) -> int:
        """How many entries an elision stub replaced (nothing read back)."""
        stubs = self._stubs
        if not stubs:
            return 0
        return sum(
            1
            for line, flags in zip(self._lines, self._flags, strict=True)
            if (line, bool(flags & _SUMMARY)) in stubs
        )

    # -- building (the reference's `load`, in file order) ------------------------------

    def append(
        self, line: int, id_: str, role: str, *, sticky: bool, summary: bool, chars: int = 0
    ) -> None:
        """Add the message on `line` (its id `id_`, `chars` characters long) to the end of
        the conversation."""
        code = _ROLES.index(role) if role in _ROLES else 7
        if code == 7:
            self._other_roles[line] = role
        self._lines.append(line)
        self._keys.append(self._id_keys(id_))
        self._flags.append(code | (_STICKY if sticky else 0) | (_SUMMARY if summary else 0))
        self.chars_total += chars
        self._changed()

    def extend(
        self,
        lines: array[int],
        keys: array[int],
        flags: array[int],
        roles: Mapping[int, str],
        chars: int = 0,
    ) -> None:
        """Add many messages at once, as `append` would one by one.

        `keys` are the pass's `IdKeys` of each message's id (or `line-N`), `flags` a
        `ROLE_CODES` code (7 for any other role, named in `roles` by line)
        plus `STICKY`, `chars` their characters together (`message_chars`). The
        pass adds a batch of lines' messages this way.
        """
        self._lines.extend(lines)
        self._keys.extend(keys)
        self._flags.extend(flags)
        self.chars_total += chars
        self._other_roles.update(roles)
        self._changed()

    def entry_chars(self, index: int) -> int:
        """Entry `index`'s characters as the model is sent it: its stub, its compaction's
        summary, or its message (`message_chars`), read back from its line."""
        line, _, _, summary, stub = self.slot(index)
        if stub is not None:
            return len(stub)
        env = read_envelope(self._t, line, limit=None)
        if summary:
            return len(field_text(env.payload.get("summary"))) if env is not None else 0
        return message_chars(env)

    def find(self, id_: str) -> int:
        """Index of the first entry with this id (confirmed against the line), or -1."""
        key = self._id_keys(id_)
        start = 0
        while True:
            try:
                i = self._keys.index(key, start)
            except ValueError:
                return -1
            if id_at(self._t, self._lines[i]) == id_:
                return i
            start = i + 1

    def compact(self, cut: int, line: int, id_: str, summary_chars: int = 0) -> None:
        """Apply the compaction on `line`: keep sticky entries up to `cut`, splice its
        summary in (as a user turn with id `id_`, `summary_chars` long), keep the rest.

        The characters it holds then are counted from what it keeps: the few sticky
        entries and those after the cut (a compaction replaces the turns before its
        recent ones), read back from their lines.
        """
        keep = [i for i in range(cut + 1) if self._flags[i] & _STICKY]
        chars = summary_chars + sum(map(self.entry_chars, keep))
        chars += sum(map(self.entry_chars, range(cut + 1, len(self._lines))))
        lines = array("i", (self._lines[i] for i in keep))
        keys = array(KEY_CODE, (self._keys[i] for i in keep))
        flags = array("b", (self._flags[i] for i in keep))
        lines.append(line)
        keys.append(self._id_keys(id_))
        flags.append(_ROLES.index("user") | _SUMMARY)
        lines.extend(self._lines[cut + 1 :])
        keys.extend(self._keys[cut + 1 :])
        flags.extend(self._flags[cut + 1 :])
        self._lines, self._keys, self._flags = lines, keys, flags
        self.chars_total = chars
        self._changed()

    def prefix(self, count: int, chars: int) -> Replay:
        """A copy holding the first `count` entries, `chars` characters in all: the
        conversation as it was before a later message, when no edit came after it
        (`core.call_context.replay_at`). Its columns are cut at C speed."""
        out = Replay(self._t, self._id_keys)
        out._lines, out._keys, out._flags = (
            self._lines[:count],
            self._keys[:count],
            self._flags[:count],
        )
        out._other_roles = dict(self._other_roles)
        out._stubs = dict(self._stubs)
        out.chars_total = chars
        return out

    def set_stub(self, index: int, stub: str) -> None:
        """Replace the content of entry `index` with an elision's stub."""
        self.chars_total += len(stub) - self.entry_chars(index)
        self._stubs[(self._lines[index], bool(self._flags[index] & _SUMMARY))] = stub

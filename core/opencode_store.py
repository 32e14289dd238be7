"""An OpenCode session, read where OpenCode keeps it, as JSON lines everything here can read.

OpenCode keeps its sessions in a SQLite database (`<data>/opencode.db`, `<data>` being
`$XDG_DATA_HOME/opencode` or `~/.local/share/opencode`, or `$OPENCODE_DB`), its
rows `session`, `message` and `part`, each message's and part's object in a `data`
column of JSON; before that, in a tree of JSON files (`<data>/storage/session/
<projectID>/<sessionID>.json`, `storage/message/<sessionID>/<messageID>.json`,
`storage/part/<messageID>/<partID>.json`; OTHER_AGENTS.md, "OpenCode").

Everything here reads lines at byte offsets (`core.transcript`), so a session is
read the way a compressed rollout is (`core.compressed.Inflated`): through a
private copy, never beside the session, of this module's JSON lines:

    {"opencode":"session", "id":…, "title":…, "directory":…, …}      the session
    {"opencode":"message", "id":"msg_…", "data":{"role":…, …}}        each message
    {"opencode":"part", "id":"prt_…", "message":"msg_…", "data":{…}}  its parts, after it

in OpenCode's order (messages by `time_created` then id, each one's parts by id).
Line N of what the viewer and `--check` show is the copy's. A part's
`data` is copied as the database holds it, byte for byte (a line that does not
parse is a finding on that line, as in any transcript), with a raw line break
(only whitespace, in JSON that parses) made a space.

A session in a database is named by a path below the database file:
`~/.local/share/opencode/opencode.db/ses_…`. No file can be there (the database
is a file), so such a path is never another file's (`address`).

The database is never written, and never locked against OpenCode (which may be
writing to it): it is opened read-only (a `mode=ro` URI), in one read transaction
per export (per process, when processes share the export of a database no one is
writing to: `DatabaseExport`). SQLite makes a `-wal` and a `-shm` file beside a database in WAL mode
for a reader when they are not there, and leaves them; OpenCode keeps them while it
runs, so when there is no `-wal` file no one is writing, and the database is opened
`immutable` (no lock, no file made); should OpenCode start and checkpoint while it is
read so, what SQLite then says is one finding, not a wrong line. A database that stays
busy (`BUSY_SECONDS`) is said to be so.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import tempfile
import time
import urllib.parse
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transcript_view.core import parallel
from transcript_view.core.compressed import CompressedError

#: The first bytes of every SQLite database file.
SQLITE_MAGIC = b"SQLite format 3\x00"
#: How long a busy or locked database is waited for (SQLite's busy handler), and how
#: many times an open that finds it busy is tried again, before it is said to be busy.
BUSY_SECONDS = 1.0
BUSY_TRIES = 3
#: What a line of the copy is, by its first key.
KIND = "opencode"
#: Rows fetched from a cursor at a time (what an export holds in memory at most, with a step).
FETCH_ROWS = 256
#: The tables a database must have to be OpenCode's.
TABLES = ("session", "message", "part")


#: How a file is opened to be looked at: never blocking on a fifo, never through a symlink.
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOFOLLOW", 0)
)


class StoreError(Exception):
    """Why an OpenCode database or storage tree cannot be read (the words shown for it)."""


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """OpenCode's data folder: `$XDG_DATA_HOME/opencode`, or `~/.local/share/opencode`."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "opencode"


def is_sqlite(head: bytes) -> bool:
    """Whether a file starting with `head` is a SQLite database."""
    return head[: len(SQLITE_MAGIC)] == SQLITE_MAGIC


def _head(path: Path, n: int = len(SQLITE_MAGIC)) -> bytes:
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.pread(fd, n, 0)
    except OSError:
        return b""
    finally:
        os.close(fd)


def address(path: Path) -> tuple[Path, str] | None:
    """The database and session id a path below a database file names (`<db>/<session id>`),
    or None when it names no such thing."""
    parent = path.parent
    if not path.name or parent == path:
        return None
    try:
        st = os.stat(parent)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (parent, path.name) if is_sqlite(_head(parent)) else None


def session_path(db: Path, session_id: str) -> Path:
    """The path a session in a database goes by (`address`'s inverse)."""
    return db / session_id


def tool_output_dir(db_or_storage: Path) -> Path:
    """Where OpenCode put the whole of a cut tool output: `<data>/tool-output/`, the data folder
    being the database's folder (or the storage tree's parent). A database moved elsewhere
    with `$OPENCODE_DB` still has its files in the data folder: not looked for there."""
    return db_or_storage.parent / "tool-output"


# -- the database ----------------------------------------------------------------------------


def _uri(db: Path, *, immutable: bool) -> str:
    quoted = urllib.parse.quote(str(db.absolute()), safe="/")
    return f"file:{quoted}?mode=ro" + ("&immutable=1" if immutable else "")


def _words(exc: sqlite3.Error) -> str:
    return str(exc).strip() or type(exc).__name__


def _busy(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def connect(db: Path) -> sqlite3.Connection:
    """A read-only connection to an OpenCode database, its tables checked.

    Raises:
        StoreError: it is not there, not a SQLite database, not OpenCode's, or stayed
            busy (`BUSY_SECONDS`, `BUSY_TRIES` times).
    """
    head = _head(db)
    if not head:
        raise StoreError(f"{db}: not a readable regular file")
    if not is_sqlite(head):
        raise StoreError(f"{db}: not a SQLite database, so not OpenCode's")
    wal = os.path.lexists(f"{db}-wal")
    for attempt in range(BUSY_TRIES):
        try:
            conn = sqlite3.connect(
                _uri(db, immutable=not wal),
                uri=True,
                timeout=BUSY_SECONDS,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise StoreError(f"{db}: cannot be opened read-only ({_words(exc)})") from None
        try:
            conn.text_factory = bytes
            names = {
                r[0].decode("utf-8", "replace")
                for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        except sqlite3.Error as exc:
            conn.close()
            if _busy(exc) and attempt + 1 < BUSY_TRIES:
                time.sleep(0.05 * (attempt + 1))
                continue
            if _busy(exc):
                raise StoreError(
                    f"{db}: the database is busy (locked by another program for "
                    f"{BUSY_SECONDS * BUSY_TRIES:g} s); try again when OpenCode is idle"
                ) from None
            raise StoreError(f"{db}: not a database that can be read ({_words(exc)})") from None
        missing = [t for t in TABLES if t not in names]
        if missing:
            conn.close()
            raise StoreError(
                f"{db}: a SQLite database without OpenCode's {', '.join(missing)} "
                f"table{'s' if len(missing) > 1 else ''}"
            )
        return conn
    raise AssertionError("unreachable")  # pragma: no cover


def has_session(db: Path, session_id: str) -> bool:
    """Whether an OpenCode database has a session of this id.

    Raises:
        StoreError: as `connect`.
    """
    conn = connect(db)
    try:
        row = conn.execute("SELECT 1 FROM session WHERE id = ?", (session_id,)).fetchone()
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: cannot be read ({_words(exc)})") from None
    finally:
        conn.close()
    return row is not None


def _text(value: object) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def _json(value: object) -> object:
    text = _text(value)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _int(value: object) -> int | None:
    return value if type(value) is int else None


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One OpenCode session, as a listing shows it."""

    path: Path
    """What it is opened by: `<database>/<id>`, or its file in the older storage tree."""
    id: str
    title: str | None
    directory: str | None
    parent: str | None
    """The session that started this one (a subagent's), if any."""
    created: int | None
    """Epoch milliseconds."""
    updated: int | None
    size: int
    """The bytes of its messages' and parts' data."""
    first_prompt: str | None


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {
        r[1].decode("utf-8", "replace") if isinstance(r[1], bytes) else str(r[1])
        for r in conn.execute(f"PRAGMA table_info({table})")
    }


def list_database(db: Path) -> list[SessionRow]:
    """Every session in a database, newest first (by when it was last updated).

    Raises:
        StoreError: as `connect`, or a query fails.
    """
    conn = connect(db)
    try:
        return _list(conn, db)
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: cannot be read ({_words(exc)})") from None
    finally:
        conn.close()


def _list(conn: sqlite3.Connection, db: Path) -> list[SessionRow]:
    have = _columns(conn, "session")
    pick = [c for c in ("title", "directory", "parent_id", "time_created", "time_updated")
            if c in have]  # fmt: skip
    conn.execute("BEGIN")
    try:
        rows = conn.execute(f"SELECT id, {', '.join(pick) or 'NULL'} FROM session").fetchall()
        sizes: dict[Any, int] = {}
        for table in ("message", "part"):
            for sid, n in conn.execute(
                f"SELECT session_id, sum(length(data)) FROM {table} GROUP BY session_id"
            ):
                sizes[sid] = sizes.get(sid, 0) + (n or 0)
        prompts = _first_prompts(conn)
    finally:
        conn.execute("COMMIT")
    out = []
    for row in rows:
        got = dict(zip(pick, row[1:], strict=False))
        sid = _text(row[0]) or ""
        out.append(
            SessionRow(
                path=session_path(db, sid),
                id=sid,
                title=_text(got.get("title")),
                directory=_text(got.get("directory")),
                parent=_text(got.get("parent_id")),
                created=_int(got.get("time_created")),
                updated=_int(got.get("time_updated")),
                size=sizes.get(row[0], 0),
                first_prompt=prompts.get(sid),
            )
        )
    out.sort(key=lambda s: (s.updated or s.created or 0, s.id), reverse=True)
    return out


def _first_prompts(conn: sqlite3.Connection) -> dict[str, str]:
    """Each session's first user message's text parts, cut to 200 characters."""
    firsts: dict[str, bytes] = {}
    for sid, mid, data in conn.execute(
        "SELECT session_id, id, data FROM message ORDER BY session_id, id"
    ):
        key = _text(sid) or ""
        if key in firsts:
            continue
        obj = _json(data)
        if isinstance(obj, dict) and obj.get("role") == "user":
            firsts[key] = mid
    out = {}
    for sid, mid in firsts.items():
        texts = []
        key = mid.decode("utf-8", "surrogateescape") if isinstance(mid, bytes) else mid
        for (data,) in conn.execute(
            "SELECT data FROM part WHERE message_id = ? ORDER BY id", (key,)
        ):
            obj = _json(data)
            if (
                isinstance(obj, dict)
                and obj.get("type") == "text"
                and not obj.get("synthetic")
                and isinstance(obj.get("text"), str)
            ):
                texts.append(obj["text"])
        text = "\n".join(texts).strip()[:200]
        if text:
            out[sid] = text
    return out


def _dumps(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def _raw(value: object) -> bytes:
    """A `data` column as the line's JSON: its bytes, or `null`."""
    if value is None:
        return b"null"
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogatepass")
    if isinstance(value, bytes):
        return _one_line_data(value) if value.strip() else b"null"
    return _dumps(value)


def session_line(obj: Mapping[str, object]) -> bytes:
    """The copy's first line: the session's columns (or its storage file's keys)."""
    return _dumps({KIND: "session", **obj}) + b"\n"


def message_line(mid: object, created: object, data: object) -> bytes:
    """A message's line of the copy."""
    head = {KIND: "message", "id": _text(mid), "created": _int(created)}
    return _dumps(head)[:-1] + b',"data":' + _raw(data) + b"}\n"


def part_line(pid: object, mid: object, data: object) -> bytes:
    """A part's line of the copy."""
    head = {KIND: "part", "id": _text(pid), "message": _text(mid)}
    return _dumps(head)[:-1] + b',"data":' + _raw(data) + b"}\n"


def _session_columns(conn: sqlite3.Connection, session_id: str) -> dict[str, object]:
    have = sorted(_columns(conn, "session"))
    row = conn.execute(
        f"SELECT {', '.join(have)} FROM session WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        raise CompressedError(f"the database has no session {session_id}")
    out: dict[str, object] = {}
    for name, value in zip(have, row, strict=True):
        if isinstance(value, bytes):
            text = value.decode("utf-8", "replace")
            parsed = _json(value) if text[:1] in "{[" else None
            out[name] = parsed if parsed is not None else text
        else:
            out[name] = value
    out["source"] = "database"
    return out


#: Each message with its id quoted as JSON by SQLite (`json_quote`: what is slow to do per row
#: in Python; the lines are put together in Python, where SQLite's `||` would copy each
#: row's data once per operator).
#: A row's `data` as text, or `null` (JSON) where there is none (a number stays a number).
_DATA_SQL = "CASE WHEN data IS NULL OR data = '' THEN 'null' ELSE CAST(data AS TEXT) END"
#: A run of a session's messages in OpenCode's order: `LIMIT ? OFFSET ?` (-1, 0: all of
#: them), so that an export can be shared between processes (`DatabaseExport`).
_IN_ORDER = "FROM message WHERE session_id = ? ORDER BY time_created, id LIMIT ? OFFSET ?"
_MESSAGE_SQL = (
    "SELECT CAST(id AS TEXT), json_quote(CAST(id AS TEXT)), "
    "CASE WHEN typeof(time_created) = 'integer' THEN CAST(time_created AS TEXT) ELSE 'null' END, "
    f"{_DATA_SQL} {_IN_ORDER}"
)
#: Every part of a run's messages, in message id order (the `part (message_id, id)`
#: index walked once): merged with the messages when their order is their ids' order.
_PARTS_SQL = (
    f"SELECT message_id, json_quote(CAST(id AS TEXT)), {_DATA_SQL} FROM part WHERE message_id "
    f"IN (SELECT id {_IN_ORDER}) ORDER BY message_id, id"
)
#: Each part, by message (the `part (message_id, id)` index).
_PART_SQL = (
    f"SELECT json_quote(CAST(id AS TEXT)), {_DATA_SQL} FROM part WHERE message_id = ? ORDER BY id"
)
_STRAY_SQL = (
    f"SELECT json_quote(CAST(message_id AS TEXT)), json_quote(CAST(id AS TEXT)), {_DATA_SQL} "
    "FROM part WHERE session_id = ? AND message_id NOT IN "
    "(SELECT id FROM message WHERE session_id = ?) ORDER BY message_id, id"
)
_MESSAGE_HEAD, _CREATED = b'{"opencode":"message","id":', b',"created":'
_PART_HEAD, _MESSAGE_KEY = b'{"opencode":"part","id":', b',"message":'
_DATA_KEY, _END = b',"data":', b"}\n"


def _one_line_data(value: bytes) -> bytes:
    """A `data` text on one line: a raw line break in JSON that parses is whitespace."""
    return value.replace(b"\r", b" ").replace(b"\n", b" ")


def _database_lines(conn: sqlite3.Connection, session_id: str) -> Iterator[bytes]:
    """The copy's lines of one session, a message and its parts at a time.

    Messages in OpenCode's order (`time_created`, then id: an id's time wraps every
    795 days), each followed by its parts by id (the `part (message_id, id)` index);
    then any part whose message is not the session's, so that nothing is left out.
    Without SQLite's JSON functions (a build without them) the lines are made by
    `message_line` and `part_line` alone.
    """
    conn.execute("BEGIN")  # one snapshot: the rows as they were at one moment
    try:
        yield session_line(_session_columns(conn, session_id))
        try:
            conn.execute(_MESSAGE_SQL, (session_id, 0, 0)).fetchall()
        except sqlite3.OperationalError as exc:
            if "json_quote" not in str(exc):
                raise
            yield from _python_lines(conn, session_id)
            return
        yield from _run_lines(conn, session_id, _in_id_order(conn, session_id))
        yield from _strays(conn, session_id)
    finally:
        conn.execute("COMMIT")


def _run_lines(
    conn: sqlite3.Connection, session_id: str, in_order: bool, run: tuple[int, int] = (-1, 0)
) -> Iterator[bytes]:
    """The lines of a run of the session's messages (`(count, first)`; -1: to the end),
    each message's followed by its parts'."""
    messages = conn.execute(_MESSAGE_SQL, (session_id, *run))
    if in_order:
        return _merged(messages, conn.execute(_PARTS_SQL, (session_id, *run)))
    return _by_message(messages, conn.cursor())


def _strays(conn: sqlite3.Connection, session_id: str) -> Iterator[bytes]:
    """The lines of the session's parts whose message is not the session's (last)."""
    fix = _one_line_data
    part_head, message_key, data_key, end = _PART_HEAD, _MESSAGE_KEY, _DATA_KEY, _END
    for qmid, qid, pdata in _rows(conn.execute(_STRAY_SQL, (session_id, session_id))):
        yield b"".join((part_head, qid, message_key, qmid, data_key, fix(pdata), end))


def _in_id_order(conn: sqlite3.Connection, session_id: str) -> bool:
    """Whether a session's messages in OpenCode's order are in their ids' order (as ids
    ascend with time, unless the time in them wrapped: every 795 days)."""
    last = None
    for (mid,) in _rows(conn.execute(
        "SELECT CAST(id AS TEXT) FROM message WHERE session_id = ? ORDER BY time_created, id",
        (session_id,),
    )):  # fmt: skip
        if last is not None and not last < mid:
            return False
        last = mid
    return True


def _message_pieces(qmid: bytes, created: bytes, mdata: bytes) -> list[bytes]:
    """A message's line, in pieces its parts' lines are added to (`created`: SQLite's text)."""
    if b"\n" in mdata or b"\r" in mdata:
        mdata = _one_line_data(mdata)
    return [_MESSAGE_HEAD, qmid, _CREATED, created, _DATA_KEY, mdata, _END]


def _merged(messages: sqlite3.Cursor, parts: sqlite3.Cursor) -> Iterator[bytes]:
    """Each message's line and its parts', from the messages and all their parts in id
    order (one walk of each: a query a message costs more than the rows)."""
    fix = _one_line_data
    part_head, message_key, data_key, end = _PART_HEAD, _MESSAGE_KEY, _DATA_KEY, _END
    pending: list[Any] = parts.fetchmany(FETCH_ROWS)
    at = 0
    for mid, qmid, created, mdata in _rows(messages):
        pieces = _message_pieces(qmid, created, mdata)
        add = pieces.extend
        while True:
            if at >= len(pending):
                pending, at = parts.fetchmany(FETCH_ROWS), 0
                if not pending:
                    break
            row = pending[at]
            if row[0] != mid:
                break
            at += 1
            pdata = row[2]
            if b"\n" in pdata or b"\r" in pdata:
                pdata = fix(pdata)
            add((part_head, row[1], message_key, qmid, data_key, pdata, end))
        yield b"".join(pieces)
    # A part no message took (its message id of another type than the message's): after them.
    while pending[at:]:
        for mid, qid, pdata in pending[at:]:
            qmid = _dumps(_text(mid))
            yield b"".join((part_head, qid, message_key, qmid, data_key, fix(pdata), end))
        pending, at = parts.fetchmany(FETCH_ROWS), 0


def _by_message(messages: sqlite3.Cursor, cursor: sqlite3.Cursor) -> Iterator[bytes]:
    """Each message's line and its parts', a query a message (messages not in id order)."""
    run = cursor.execute
    fix = _one_line_data
    part_head, message_key, data_key, end = _PART_HEAD, _MESSAGE_KEY, _DATA_KEY, _END
    for mid, qmid, created, mdata in _rows(messages):
        key = mid.decode("utf-8", "surrogateescape") if type(mid) is bytes else mid
        pieces = _message_pieces(qmid, created, mdata)
        add = pieces.extend
        for qid, pdata in run(_PART_SQL, (key,)).fetchall():
            if b"\n" in pdata or b"\r" in pdata:
                pdata = fix(pdata)
            add((part_head, qid, message_key, qmid, data_key, pdata, end))
        yield b"".join(pieces)


def _python_lines(conn: sqlite3.Connection, session_id: str) -> Iterator[bytes]:
    """`_database_lines`' messages and parts, made in Python (no JSON functions in SQLite)."""
    messages = conn.execute(
        "SELECT id, time_created, data FROM message WHERE session_id = ? "
        "ORDER BY time_created, id",
        (session_id,),
    )
    parts = conn.cursor()
    for mid, created, data in _rows(messages):
        out = [message_line(mid, created, data)]
        key = mid.decode("utf-8", "surrogateescape") if isinstance(mid, bytes) else mid
        parts.execute("SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (key,))
        out.extend(part_line(pid, mid, pdata) for pid, pdata in parts.fetchall())
        yield b"".join(out)
    strays = conn.execute(
        "SELECT id, message_id, data FROM part WHERE session_id = ? AND message_id NOT IN "
        "(SELECT id FROM message WHERE session_id = ?) ORDER BY message_id, id",
        (session_id, session_id),
    )
    for pid, mid, pdata in _rows(strays):
        yield part_line(pid, mid, pdata)


def _rows(cursor: sqlite3.Cursor) -> Iterator[Any]:
    while rows := cursor.fetchmany(FETCH_ROWS):
        yield from rows


#: Runs a session's export is cut into, for each process that shares it: more than one
#: each, so that the first is copied while the others are still made.
RUNS_PER_WORKER = 2
#: Bytes read from a run's file at a time, once its process has made it.
RUN_READ = 1 << 20


@dataclass(frozen=True, slots=True)
class _Shared:
    """What every process sharing an export is given once (`parallel.ordered`): the
    database, the session, its walk, each run's `(count, first)` and the file it goes to
    (a descriptor the process inherited when it was forked)."""

    db: str
    session_id: str
    in_order: bool
    runs: tuple[tuple[int, int], ...]
    fds: tuple[int, ...]


def _export_run(shared: _Shared, index: int) -> int:
    """Write run `index` of a session's lines to its file, on a connection of this
    process's own; the bytes written."""
    conn = connect(Path(shared.db))
    try:
        conn.execute("BEGIN")
        fd, written, pending, size = shared.fds[index], 0, [], 0
        for chunk in _run_lines(conn, shared.session_id, shared.in_order, shared.runs[index]):
            pending.append(chunk)
            size += len(chunk)
            if size >= RUN_READ:
                written += _write_all(fd, b"".join(pending))
                pending, size = [], 0
        written += _write_all(fd, b"".join(pending))
        conn.execute("COMMIT")
        return written
    finally:
        conn.close()


def _write_all(fd: int, data: bytes) -> int:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return len(data)


def _shared_runs(
    conn: sqlite3.Connection, db: Path, session_id: str
) -> tuple[list[tuple[int, int]], int]:
    """How one session's export is shared: its runs of messages and how many processes
    make them (`([], 1)`: here, in one walk).

    Only a database no one is writing to (opened `immutable`: each process's
    connection sees the same rows, with no transaction to share), with SQLite's
    JSON functions, in a process that may fork workers (`parallel.worker_count`),
    and a session big enough for that to pay (`parallel.workers_for` of its share
    of the file, by its messages).
    """
    if os.path.lexists(f"{db}-wal"):
        return [], 1
    workers = parallel.worker_count()
    if workers <= 1 or parallel.START_METHOD != "fork":  # the runs' files are inherited
        return [], 1
    try:
        (mine,) = conn.execute(
            "SELECT count(*) FROM message WHERE session_id = ?", (session_id,)
        ).fetchone()
        (everyone,) = conn.execute("SELECT count(*) FROM message").fetchone()
        conn.execute(_MESSAGE_SQL, (session_id, 0, 0)).fetchall()  # JSON functions
    except sqlite3.Error:
        return [], 1
    size = os.stat(db).st_size * mine // max(everyone, 1)
    workers = min(workers, parallel.workers_for(size))
    count = workers * RUNS_PER_WORKER
    if workers <= 1 or mine < count:
        return [], 1
    bounds = [mine * i // count for i in range(count + 1)]
    runs = [(bounds[i + 1] - bounds[i], bounds[i]) for i in range(count)]
    runs[-1] = (-1, runs[-1][1])  # to the end, whatever was counted
    return runs, workers


class DatabaseExport:
    """A `core.compressed.Decoder` of one session of a database: its JSON lines.

    The database is opened when the first bytes are asked for, and closed at the end.
    `consumed` counts the lines' bytes (what the database gave, near enough). A big
    session of a database no one is writing to is exported by several processes at
    once (`_shared_runs`), each run of its messages into an unnamed temporary file
    (gone when closed), read back in order: the same bytes as one walk
    (`tests/formats/test_opencode.py`), in a fraction of the time.
    """

    def __init__(self, db: Path, session_id: str) -> None:
        self.db = db
        self.session_id = session_id
        self.consumed = 0
        self.workers = 1
        """How many processes made the lines (1: this one)."""
        self._lines: Generator[bytes, None, None] | None = None
        self._conn: sqlite3.Connection | None = None
        self._carry = b""
        self._done = False
        self._files: list[Any] = []

    def read(self, n: int) -> bytes:
        """Up to `n` bytes of the lines (whole messages where they fit); `b""` at their end.

        Raises:
            CompressedError: the database cannot be read, or has no such session.
        """
        if self._lines is None:
            try:
                self._conn = connect(self.db)
            except StoreError as exc:
                raise CompressedError(str(exc).removeprefix(f"{self.db}: ")) from None
            self._lines = self._made(self._conn)
        chunks, size = [self._carry], len(self._carry)
        self._carry = b""
        lines = self._lines
        while size < n and not self._done:
            try:
                chunk = next(lines, None)
            except sqlite3.Error as exc:
                self._close()
                raise CompressedError(f"the database cannot be read ({_words(exc)})") from None
            except StoreError as exc:  # a process sharing the export could not open it
                self._close()
                raise CompressedError(str(exc).removeprefix(f"{self.db}: ")) from None
            except OSError as exc:
                self._close()
                raise CompressedError(
                    f"its rows cannot be copied ({exc.strerror or exc})"
                ) from None
            if chunk is None:
                self._close()
                break
            self.consumed += len(chunk)
            if size + len(chunk) > n:  # kept for the next read
                self._carry = chunk
                break
            chunks.append(chunk)
            size += len(chunk)
        piece = b"".join(chunks)
        if not piece and self._carry:  # one message bigger than `n`: given a piece at a time
            piece, self._carry = self._carry[:n], self._carry[n:]
        elif len(piece) > n:
            piece, self._carry = piece[:n], piece[n:] + self._carry
        return piece

    def _made(self, conn: sqlite3.Connection) -> Generator[bytes, None, None]:
        """The lines: made here (`_database_lines`), or by the processes sharing them."""
        try:
            runs, workers = _shared_runs(conn, self.db, self.session_id)
        except OSError:
            runs, workers = [], 1
        if workers <= 1:
            yield from _database_lines(conn, self.session_id)
            return
        self.workers = workers
        conn.execute("BEGIN")
        try:
            yield session_line(_session_columns(conn, self.session_id))
            self._files = [tempfile.TemporaryFile() for _ in runs]  # noqa: SIM115 (closed in _close)
            shared = _Shared(
                str(self.db),
                self.session_id,
                _in_id_order(conn, self.session_id),
                tuple(runs),
                tuple(f.fileno() for f in self._files),
            )
            made = parallel.ordered(_export_run, shared, range(len(runs)), workers)
            try:
                for index, size in enumerate(made):
                    fd, at = shared.fds[index], 0
                    while at < size:
                        chunk = os.pread(fd, min(RUN_READ, size - at), at)
                        if not chunk:
                            raise OSError(0, "a run's file is shorter than was written")
                        at += len(chunk)
                        yield chunk
                    self._files[index].close()
            finally:
                made.close()
            yield from _strays(conn, self.session_id)
        finally:
            conn.execute("COMMIT")

    def _close(self) -> None:
        self._done = True
        if self._lines is not None:
            self._lines.close()  # stops the processes that share it, if any
        for f in self._files:
            f.close()
        self._files = []
        if self._conn is not None:
            self._conn.close()
            self._conn = None


# -- the older storage tree ------------------------------------------------------------------


def storage_root(session_file: Path) -> Path | None:
    """The `storage/` folder a session file of the older tree is in
    (`storage/session/<projectID>/<sessionID>.json`), or None when it is not in one."""
    parents = session_file.parents
    if len(parents) < 3 or parents[1].name != "session":
        return None
    return parents[2]


def is_storage_session(path: Path, head: bytes) -> bool:
    """Whether a file is a session of OpenCode's older storage tree: a JSON object with a
    `ses_` id and a `projectID`, at `storage/session/<projectID>/<id>.json`."""
    root = storage_root(path)
    if root is None or not path.name.startswith("ses_") or not path.name.endswith(".json"):
        return False
    if head.lstrip()[:1] != b"{":
        return False
    return b'"projectID"' in head and b'"ses_' in head


def _read_json_file(path: Path) -> tuple[object, int]:
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None, 0
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, 0
        chunks = []
        size = 0
        while piece := os.pread(fd, 1 << 20, size):
            chunks.append(piece)
            size += len(piece)
    except OSError:
        return None, 0
    finally:
        os.close(fd)
    data = b"".join(chunks)
    try:
        return json.loads(data), size
    except (ValueError, RecursionError):
        return data, size  # kept as bytes: its line will not parse, and says so


def _json_files(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return sorted(
                Path(e.path)
                for e in it
                if e.name.endswith(".json") and e.is_file(follow_symlinks=False)
            )
    except OSError:
        return []


_ID_KEYS = ("id", "sessionID", "messageID")


def _storage_lines(session_file: Path) -> Iterator[tuple[bytes, int]]:
    """The copy's lines of a session of the older tree. Ids come from the files' names, as
    OpenCode's import into its database takes them (never a path from a file's JSON)."""
    root = storage_root(session_file)
    obj, size = _read_json_file(session_file)
    if not isinstance(obj, dict) or root is None:
        raise CompressedError("the session file does not parse as a JSON object")
    sid = session_file.stem
    yield session_line({**obj, "source": "storage"}), size
    for path in _json_files(root / "message" / sid):
        msg, used = _read_json_file(path)
        mid = path.stem
        times = msg.get("time") if isinstance(msg, dict) else None
        created = times.get("created") if isinstance(times, dict) else None
        yield message_line(mid, created, _strip(msg)), used
        for ppath in _json_files(root / "part" / mid):
            part, pused = _read_json_file(ppath)
            yield part_line(ppath.stem, mid, _strip(part)), pused


def _strip(obj: object) -> object:
    """A storage file's object as the database keeps it: without the ids that are columns there."""
    if isinstance(obj, dict):
        return _dumps({k: v for k, v in obj.items() if k not in _ID_KEYS})
    return obj


class StorageExport:
    """A `core.compressed.Decoder` of one session of the older storage tree: its JSON lines."""

    def __init__(self, session_file: Path) -> None:
        self.session_file = session_file
        self.consumed = 0
        self._lines = _storage_lines(session_file)
        self._buffer = bytearray()
        self._done = False

    def read(self, n: int) -> bytes:
        """Up to `n` bytes of the lines; `b""` at their end.

        Raises:
            CompressedError: the session file is not a JSON object.
        """
        while len(self._buffer) < n and not self._done:
            item = next(self._lines, None)
            if item is None:
                self._done = True
                break
            line, used = item
            self._buffer += line
            self.consumed += used
        piece = bytes(self._buffer[:n])
        del self._buffer[:n]
        return piece


def list_storage(storage: Path) -> list[SessionRow]:
    """Every session of an older storage tree (`<data>/storage`), newest first."""
    out = []
    for project in sorted((storage / "session").glob("*")):
        for path in _json_files(project):
            obj, size = _read_json_file(path)
            if not isinstance(obj, dict):
                continue
            times = obj.get("time")
            times = times if isinstance(times, dict) else {}
            out.append(
                SessionRow(
                    path=path,
                    id=path.stem,
                    title=_text(obj.get("title")),
                    directory=_text(obj.get("directory")),
                    parent=_text(obj.get("parentID")),
                    created=_int(times.get("created")),
                    updated=_int(times.get("updated")),
                    size=size,
                    first_prompt=_storage_prompt(storage, path.stem),
                )
            )
    out.sort(key=lambda s: (s.updated or s.created or 0, s.id), reverse=True)
    return out


#: How many of a session's first messages are read for its first prompt (a listing's).
PROMPT_MESSAGES = 8


def _storage_prompt(storage: Path, session_id: str) -> str | None:
    """The text parts of an older session's first user message, cut to 200 characters."""
    for path in _json_files(storage / "message" / session_id)[:PROMPT_MESSAGES]:
        msg, _ = _read_json_file(path)
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        texts = []
        for ppath in _json_files(storage / "part" / path.stem):
            part, _ = _read_json_file(ppath)
            if (
                isinstance(part, dict)
                and part.get("type") == "text"
                and not part.get("synthetic")
                and isinstance(part.get("text"), str)
            ):
                texts.append(part["text"])
        return "\n".join(texts).strip()[:200] or None
    return None


def is_database_file(path: Path) -> bool:
    """Whether a path is a SQLite database file (what `--check` and the viewer open as the list
    of its OpenCode sessions)."""
    return is_sqlite(_head(path))


def is_database_name(name: str) -> bool:
    """Whether a file name is one OpenCode gives a database: `opencode.db`, or a build
    channel's `opencode-<channel>.db` (which one a build uses, a reader cannot know)."""
    return name == "opencode.db" or (name.startswith("opencode-") and name.endswith(".db"))


def data_sessions(data: Path) -> tuple[list[SessionRow], list[tuple[Path, str]]]:
    """Every session in an OpenCode data folder: each database's, and the older storage tree's
    that no database has (OpenCode imported that tree into its database once: the rows are
    the session then), newest first; with each database that cannot be read, and why."""
    rows: list[SessionRow] = []
    problems: list[tuple[Path, str]] = []
    try:
        with os.scandir(data) as it:
            names = sorted(
                e.name for e in it if is_database_name(e.name) and e.is_file(follow_symlinks=False)
            )
    except OSError:
        names = []
    for name in names:
        try:
            rows.extend(list_database(data / name))
        except StoreError as exc:
            problems.append((data / name, str(exc)))
    if (data / "storage" / "session").is_dir():
        have = {r.id for r in rows}
        rows.extend(r for r in list_storage(data / "storage") if r.id not in have)
    rows.sort(key=lambda s: (s.updated or s.created or 0, s.id), reverse=True)
    return rows, problems

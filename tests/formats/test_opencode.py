"""Reading an OpenCode session (`core.opencode_store`, `core.formats.opencode`) from a real
SQLite database built with OpenCode's schema (`tests/_opencode.py`), never a mock.

Each test builds the case it needs: a data folder with `opencode.db` and `tool-output/`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path

import pytest
from _opencode import GREP, SAVED, OpenCodeSession, truncate, write_storage

from transcript_view.core import parallel
from transcript_view.core.calls import OPENCODE_TOKENS
from transcript_view.core.formats.detect import Format, detect
from transcript_view.core.formats.model import SpillForm
from transcript_view.core.formats.opencode_markers import find_cut
from transcript_view.core.formats.rules import opencode_state
from transcript_view.core.formats.sessions import list_sessions, opencode_sessions, tree_format
from transcript_view.core.opencode_store import (
    StoreError,
    address,
    connect,
    data_sessions,
    list_database,
)
from transcript_view.core.report import Report, verify
from transcript_view.core.transcript import Transcript, TranscriptError

LOG = "\n".join(f"PASS t{i:04d}" for i in range(3000))  # 30 KB: cut by lines
NOW_MS = int(time.time() * 1000)


def _session(tmp_path: Path, **kw: object) -> OpenCodeSession:
    s = OpenCodeSession(tmp_path / "opencode", **kw)  # type: ignore[arg-type]
    s.user("Why does checkout fail?")
    s.message("assistant")
    s.step(input_tokens=1_200, cache_read=300, cache_write=50)
    s.text("Running the tests.")
    return s


def _states(report: Report) -> list[str]:
    return [b.state.value for b in report.badges]


def _kinds(report: Report) -> list[str]:
    return [f.kind for f in report.findings]


def _tree(folder: Path) -> dict[str, tuple[int, str]]:
    """Every file under a folder: its size and sha256 (what "nothing written" compares)."""
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            data = path.read_bytes()
            out[str(path.relative_to(folder))] = (len(data), hashlib.sha256(data).hexdigest())
    return out


# -- the database, read-only ----------------------------------------------------------------


def test_a_session_is_named_by_a_path_below_its_database(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.finish()
    path = s.write()
    assert path == s.db / s.session_id
    assert address(path) == (s.db, s.session_id)
    assert address(s.db) is None  # the database itself names no session
    assert detect(path).format is Format.OPENCODE


def test_the_session_reads_as_its_messages_each_followed_by_its_parts(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.finish()
    t = Transcript.open(s.write())
    try:
        objs = [json.loads(t.raw_line(n)) for n in range(1, t.line_count + 1)]
    finally:
        t.close()
    kinds = [(o["opencode"], o["data"].get("type") if o["opencode"] == "part" else None)
             for o in objs[1:]]  # fmt: skip
    assert objs[0]["opencode"] == "session"
    assert objs[0]["id"] == s.session_id and objs[0]["title"] == s.title
    assert objs[0]["source"] == "database"
    assert kinds == [
        ("message", None),
        ("part", "text"),
        ("message", None),
        ("part", "step-start"),
        ("part", "text"),
        ("part", "step-finish"),
    ]
    # A part's data is the database's, byte for byte (a line that parses as it did there).
    stored = dict(sqlite3.connect(s.db).execute("SELECT id, data FROM part").fetchall())
    for o in objs:
        if o["opencode"] == "part":
            assert json.loads(stored[o["id"]]) == o["data"]


def test_nothing_is_written_beside_the_database_or_to_it(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.tool("bash", {"command": "pytest"}, LOG)
    s.finish()
    s.write()
    before = _tree(s.data)
    assert not (s.data / "opencode.db-wal").exists()  # OpenCode is not running
    report = verify(s.path)
    assert _states(report) == ["excerpt matches"]
    list_database(s.db)
    assert _tree(s.data) == before  # no -wal, no -shm, not a byte changed


def test_a_database_opencode_is_writing_to_is_read_and_never_locks_it(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.finish()
    s.write()
    writer = sqlite3.connect(s.db)  # OpenCode, running: its WAL is there
    try:
        writer.execute("UPDATE session SET title = 'renamed while open' WHERE id = ?",
                       (s.session_id,))  # fmt: skip
        writer.commit()
        assert (s.data / "opencode.db-wal").exists()
        t = Transcript.open(s.path)
        try:
            assert json.loads(t.raw_line(1))["title"] == "renamed while open"
            # The agent writes on while the session is open here: nothing blocks it.
            writer.execute("UPDATE session SET title = 'again' WHERE id = ?", (s.session_id,))
            writer.commit()
        finally:
            t.close()
    finally:
        writer.close()


def test_a_database_that_stays_locked_is_said_to_be_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("transcript_view.core.opencode_store.BUSY_SECONDS", 0.05)
    s = _session(tmp_path)
    s.finish()
    s.write(wal=False)  # a rollback journal: a writer's exclusive lock keeps readers out
    holder = sqlite3.connect(s.db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    (s.data / "opencode.db-wal").touch()  # as if OpenCode were running: no immutable read
    try:
        with pytest.raises(StoreError, match="busy"):
            connect(s.db)
        with pytest.raises(TranscriptError, match="busy"):
            detect(s.path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_file_that_is_not_sqlite_or_not_opencodes_is_one_clear_line(tmp_path: Path) -> None:
    fake = tmp_path / "opencode.db"
    fake.write_text("not a database\n")
    with pytest.raises(StoreError, match="not a SQLite database"):
        connect(fake)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE notes (x)").connection.commit()
    with pytest.raises(StoreError, match="without OpenCode's session, message, part tables"):
        list_database(other)
    with pytest.raises(TranscriptError, match="without OpenCode's"):
        detect(other)
    with pytest.raises(TranscriptError, match="Not a directory"):
        detect(fake / "ses_nope")  # below a file that is no database: no session at all


def test_a_session_the_database_does_not_have_is_refused(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.finish()
    s.write()
    with pytest.raises(TranscriptError, match="has no session 'ses_gone'"):
        detect(s.db / "ses_gone")


def test_a_part_whose_data_is_not_json_is_a_finding_on_its_line(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.finish()
    s.write()
    conn = sqlite3.connect(s.db)
    conn.execute("UPDATE part SET data = '{\"type\": \"text\",\n  \"text\": \"pretty\"}' "
                 "WHERE data LIKE '%Running the tests%'")  # fmt: skip
    conn.execute("UPDATE part SET data = '{not json' WHERE data LIKE '%step-finish%'")
    conn.commit()
    conn.close()
    report = verify(s.path)
    assert report.lines == 7
    bad = [f for f in report.findings if f.kind not in ("not-stored",)]
    assert [f.line for f in bad] == [7]  # the pretty-printed one is read; the broken one said


# -- markers and their files ----------------------------------------------------------------


def test_a_head_cut_by_lines_matches_its_file_by_start_and_count(tmp_path: Path) -> None:
    s = _session(tmp_path)
    name = s.tool("bash", {"command": "pytest"}, LOG)
    s.finish()
    report = verify(s.write())
    assert report.format is Format.OPENCODE
    assert report.artifact_dir == s.outputs
    assert (report.markers, report.matched, _states(report)) == (1, 1, ["excerpt matches"])
    assert report.findings == []
    (site,) = report.analysis.sites  # type: ignore[union-attr]
    assert (site.form, site.file, site.tool) == (SpillForm.OPENCODE_TRUNCATED, name, "bash")
    assert site.file_lines == 3000 and site.file_bytes is None


def test_a_cut_by_bytes_and_a_tail_cut_match_too(tmp_path: Path) -> None:
    s = _session(tmp_path)
    wide = "\n".join("x" * 400 + f" {i}" for i in range(300))  # 120 KB in 300 lines
    s.tool("read", {"filePath": "a"}, wide)
    s.tool("bash", {"command": "make"}, wide, direction="tail", task=True)
    s.finish()
    report = verify(s.write())
    assert _states(report) == ["excerpt matches", "excerpt matches"]
    head, tail = report.analysis.sites  # type: ignore[union-attr]
    assert head.file_bytes == len(wide.encode()) and head.preview and not head.tail
    assert tail.file_bytes == len(wide.encode()) and tail.tail and tail.preview is None


def test_a_file_whose_size_disagrees_with_the_counts_is_a_size_mismatch(tmp_path: Path) -> None:
    s = _session(tmp_path)
    name = s.tool("bash", {"command": "pytest"}, LOG)
    s.finish()
    s.write()
    (s.outputs / name).write_text(LOG + "\nPASS one more line")
    report = verify(s.path)
    assert _states(report) == ["size mismatch"]
    assert "3,000 lines; the file has 3,001" in report.findings[0].message


def test_a_file_that_does_not_start_with_what_the_model_saw_is_a_mismatch(
    tmp_path: Path,
) -> None:
    s = _session(tmp_path)
    name = s.tool("bash", {"command": "pytest"}, LOG)
    s.finish()
    s.write()
    (s.outputs / name).write_text("FAIL" + LOG[4:])
    report = verify(s.path)
    assert _states(report) == ["excerpt mismatch"]
    assert _kinds(report) == ["excerpt-mismatch"]


def test_a_file_gone_after_seven_days_expired_and_one_gone_sooner_is_missing(
    tmp_path: Path,
) -> None:
    old = _session(tmp_path / "old", start_ms=NOW_MS - 9 * 86_400_000)
    old.tool("bash", {"command": "pytest"}, LOG, save=False)
    old.finish()
    report = verify(old.write())
    assert _states(report) == ["expired"]
    (f,) = report.findings
    assert (f.kind, f.severity.value) == ("expired-artifact", "note")
    assert "over 7 days ago" in f.message and "after 7 days" in f.message
    assert report.errors == 0

    new = _session(tmp_path / "new", start_ms=NOW_MS - 3_600_000)
    new.tool("bash", {"command": "pytest"}, LOG, save=False)
    new.finish()
    report = verify(new.write())
    assert _states(report) == ["missing"]
    assert _kinds(report) == ["missing-artifact"] and report.errors == 1


def test_the_age_rule_takes_the_time_it_is_given() -> None:
    from transcript_view.core.formats.model import SpillSite
    from transcript_view.core.verification import FileCheck, FileState

    site = SpillSite(1, 0, Format.OPENCODE, SpillForm.OPENCODE_TRUNCATED, -1, 0, 1,
                     file="tool_x", written_ms=1_000)  # fmt: skip
    gone = FileCheck("tool_x", FileState.MISSING, "no such file in the artifact directory")
    week = 7 * 86_400_000
    assert opencode_state(site, gone, now_ms=1_000 + week - 1)[0].value == "missing"
    assert opencode_state(site, gone, now_ms=1_000 + week)[0].value == "expired"


def test_a_path_of_another_machine_is_found_by_its_name_and_never_opened(tmp_path: Path) -> None:
    s = _session(tmp_path)
    windows = "C:\\Users\\dev\\.local\\share\\opencode\\tool-output\\tool_1ee5aa0000"
    s.tool("bash", {"command": "dir"}, LOG, at=windows)
    s.finish()
    s.write()
    (s.outputs / "tool_1ee5aa0000").write_text(LOG)
    report = verify(s.path)
    assert _states(report) == ["excerpt matches"]


def test_a_path_ending_in_dot_dot_is_unsafe_and_nothing_is_read(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.tool("bash", {"command": "pytest"}, LOG, at=f"{tmp_path}/opencode/tool-output/..")
    s.finish()
    report = verify(s.write())
    assert _states(report) == ["unsafe name"]
    assert _kinds(report) == ["unsafe-name"]


def test_the_records_path_naming_another_file_is_a_note(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.tool("bash", {"command": "pytest"}, LOG)
    s.finish()
    s.write()
    conn = sqlite3.connect(s.db)
    query = "SELECT id, data FROM part WHERE data LIKE '%outputPath%'"
    (pid, data) = conn.execute(query).fetchone()
    obj = json.loads(data)
    obj["state"]["metadata"]["outputPath"] = "/elsewhere/tool-output/tool_other"
    conn.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps(obj), pid))
    conn.commit()
    conn.close()
    report = verify(s.path)
    (f,) = report.findings
    assert f.kind == "path-mismatch" and "state.metadata.outputPath" in f.message


def test_a_marker_quoted_inside_other_output_is_text(tmp_path: Path) -> None:
    s = _session(tmp_path)
    quoted = truncate(LOG, "/x/tool-output/tool_1")
    assert quoted is not None
    s.raw_tool("bash", "the last run said:\n" + quoted + "\nand then it passed")
    s.finish()
    report = verify(s.write())
    assert report.markers == 0


def test_the_shells_own_cut_is_present_when_its_file_is(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.data.joinpath("tool-output").mkdir(parents=True)
    s.data.joinpath("tool-output", "tool_1ee5bb").write_text(LOG)
    tail = "\n".join(LOG.split("\n")[-20:])
    s.raw_tool("bash", f"...output truncated...\n\nFull output saved to: "
               f"{s.outputs}/tool_1ee5bb\n\n{tail}")  # fmt: skip
    s.finish()
    report = verify(s.write())
    assert _states(report) == ["present"]
    (site,) = report.analysis.sites  # type: ignore[union-attr]
    assert site.form is SpillForm.OPENCODE_SHELL


@pytest.mark.parametrize("direction", ["head", "tail"])
@pytest.mark.parametrize("task", [False, True])
@pytest.mark.parametrize(
    "text",
    [
        LOG,
        "\n".join("é" * 300 for _ in range(400)),  # cut by bytes, two bytes a character
        "one line of " + "z" * 60_000,  # nothing kept
        "\n" * 2500,  # blank lines only
        "a\r\nb\r\n" * 1500,
    ],
    ids=["lines", "bytes", "none-kept", "blank", "crlf"],
)
def test_every_cut_truncate_makes_is_found_with_counts_that_fit_its_file(
    text: str, direction: str, task: bool
) -> None:
    made = truncate(text, "/d/tool-output/tool_1", direction=direction, task=task)
    assert made is not None
    cut = find_cut(made)
    assert cut is not None and cut.path == "/d/tool-output/tool_1"
    assert cut.tail is (direction == "tail")
    data = text.encode()
    kept = cut.kept.encode()
    assert data.endswith(kept) if cut.tail else data.startswith(kept)
    if cut.unit == "bytes":
        assert cut.file_bytes == len(data)
    else:
        assert cut.file_lines == text.count("\n") + 1


def test_texts_that_only_look_like_cuts_are_not(tmp_path: Path) -> None:
    assert find_cut("...3 lines truncated...") is None
    assert find_cut(f"kept\n\n...3 lines truncated...\n\n{SAVED}/a/b\nnot the hint") is None
    assert find_cut(f"kept\n\n...3 lines truncated...\n\n{SAVED}/a\n/b\n{GREP}") is None
    assert find_cut(f"kept\n\n{SAVED}/a/b\n{GREP}") is None  # no count


# -- calls and compactions ------------------------------------------------------------------


def test_each_step_is_a_call_sized_by_its_step_finish(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.finish()
    s.step(input_tokens=4_000, cache_read=10_000)
    s.text("Found it.")
    s.finish()
    report = verify(s.write())
    calls = report.analysis.calls  # type: ignore[union-attr]
    assert list(calls.tokens) == [1_550, 14_000]
    assert list(calls.fields) == [OPENCODE_TOKENS, OPENCODE_TOKENS]
    assert calls.model_names == ["claude-sonnet-4-5"]
    assert list(calls.windows) == [-1, -1]  # OpenCode records none


def test_a_compaction_starts_the_context_over(tmp_path: Path) -> None:
    from transcript_view.core.call_context import context_of_call

    s = _session(tmp_path)
    s.tool("bash", {"command": "pytest"}, "ok\n" * 10)
    s.finish()
    s.compaction("We ran the tests; checkout fails on rounding.")
    s.user("Fix it.")
    s.message("assistant")
    s.step(input_tokens=2_000)
    s.text("Fixed.")
    s.finish()
    path = s.write()
    report = verify(path)
    analysis = report.analysis
    calls = analysis.calls  # type: ignore[union-attr]
    assert len(calls) == 3
    (c,) = calls.compactions
    assert (c.kind, c.trigger) == ("compaction", "auto")
    t = Transcript.open(path)
    try:
        ctx = context_of_call(t, analysis, 2)  # type: ignore[arg-type]
    finally:
        t.close()
    lines = [e.line for e in ctx.entries]
    assert lines[0] == c.line  # what came before the compaction is not in it
    assert ctx.compaction is not None and ctx.compaction.line == c.line
    assert "summarised" in " ".join(analysis.notes(c.line))  # type: ignore[union-attr]


# -- the older storage tree, and listings ---------------------------------------------------


def test_a_session_of_the_older_storage_tree_reads_as_the_database_one(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.tool("bash", {"command": "pytest"}, LOG)
    s.finish()
    in_database = s.write()
    s.data = tmp_path / "legacy"
    legacy = write_storage(s)
    assert detect(legacy).format is Format.OPENCODE
    a, b = verify(in_database), verify(legacy)
    assert b.artifact_dir == tmp_path / "legacy" / "tool-output"
    assert (a.lines, _states(a), _kinds(a)) == (b.lines, _states(b), _kinds(b))


def test_a_data_folder_lists_every_session_once_newest_first(tmp_path: Path) -> None:
    s = _session(tmp_path, start_ms=1_795_000_000_000)
    s.finish()
    s.write()
    later = OpenCodeSession(s.data, session_id="ses_4f00aa", title="Later",
                            start_ms=1_796_000_000_000)  # fmt: skip
    later.user("And the refund path?")
    later.write()
    write_storage(s)  # imported into the database: listed once
    rows, problems = data_sessions(s.data)
    assert [r.id for r in rows] == ["ses_4f00aa", s.session_id] and problems == []
    assert rows[0].first_prompt == "And the refund path?"
    assert tree_format(s.data) is Format.OPENCODE
    listed = list_sessions(s.data, Format.OPENCODE)
    assert [x.path for x in listed] == [later.path, s.path]
    assert listed[1].started == "2026-11-18T11:06:40.000Z"
    assert opencode_sessions(s.db)[0] == listed


def test_a_database_that_cannot_be_read_is_one_line_in_the_listing(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    data.mkdir()
    (data / "opencode.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 80)
    sessions, problems = opencode_sessions(data)
    assert sessions == [] and len(problems) == 1
    assert problems[0].startswith(f"{data / 'opencode.db'}: ")


def test_the_export_read_in_small_pieces_is_the_same_bytes(tmp_path: Path) -> None:
    """A message bigger than what is asked for is given a piece at a time, never lost."""
    from transcript_view.core.opencode_store import DatabaseExport

    s = _session(tmp_path)
    s.tool("bash", {"command": "pytest"}, LOG)
    s.finish()
    path = s.write()
    whole = DatabaseExport(s.db, s.session_id)
    expected = whole.read(1 << 30)
    assert whole.read(1 << 30) == b"" and expected.count(b"\n") == 8
    pieces = DatabaseExport(s.db, s.session_id)
    got = b""
    while piece := pieces.read(97):
        assert len(piece) <= 97
        got += piece
    assert got == expected
    t = Transcript.open(path)
    try:
        assert t.copy_path is not None and t.copy_path.read_bytes() == expected
    finally:
        t.close()


def test_without_sqlites_json_functions_the_lines_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite built without JSON functions: the lines are made in Python, byte for byte."""
    from transcript_view.core import opencode_store as store

    s = _session(tmp_path)
    s.tool("bash", {"command": "pytest"}, LOG)
    s.finish()
    s.write()
    expected = store.DatabaseExport(s.db, s.session_id).read(1 << 30)
    missing = store._MESSAGE_SQL.replace("json_quote(", "json_quote_absent(")
    monkeypatch.setattr(store, "_MESSAGE_SQL", missing)
    assert store.DatabaseExport(s.db, s.session_id).read(1 << 30) == expected


#: The id the first message gets after its id's time wrapped (`_wrap_first_message_id`).
WRAPPED = "msg_ffffffffffffWrapped000001"


def _wrap_first_message_id(db: Path) -> None:
    """Give the first message by time an id that sorts last (its time wrapped), its parts
    following it."""
    conn = sqlite3.connect(db)
    (first,) = conn.execute("SELECT id FROM message ORDER BY time_created LIMIT 1").fetchone()
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("UPDATE message SET id = ? WHERE id = ?", (WRAPPED, first))
    conn.execute("UPDATE part SET message_id = ? WHERE message_id = ?", (WRAPPED, first))
    conn.commit()
    conn.close()


def test_messages_out_of_id_order_keep_opencodes_order_and_their_parts(tmp_path: Path) -> None:
    """Ids carry the time modulo 2^36 ms: after a wrap a later message's id sorts first.
    OpenCode orders by `time_created`; each message keeps its own parts."""
    s = _session(tmp_path)
    s.finish()
    s.write()
    _wrap_first_message_id(s.db)
    t = Transcript.open(s.path)
    try:
        objs = [json.loads(t.raw_line(n)) for n in range(2, t.line_count + 1)]
    finally:
        t.close()
    assert objs[0]["id"] == "msg_ffffffffffffWrapped000001"  # first by time, last by id
    assert objs[1]["message"] == objs[0]["id"] and objs[1]["data"]["type"] == "text"
    assert [o["opencode"] for o in objs] == ["message", "part", "message", "part", "part",
                                            "part"]  # fmt: skip


def test_a_session_sent_to_a_worker_process_is_still_read_from_its_copy(tmp_path: Path) -> None:
    import pickle

    s = _session(tmp_path)
    s.finish()
    t = Transcript.open(s.write())
    try:
        again = pickle.loads(pickle.dumps(t))
        try:
            assert again.exported and again.copy_path == t.copy_path
            assert again.raw_line(1) == t.raw_line(1)
        finally:
            again.close()
        assert t.exported and t.compressed
    finally:
        t.close()


# -- an export shared between processes ------------------------------------------------------

needs_cores = pytest.mark.skipif(
    parallel.worker_count() < 2 or parallel.START_METHOD != "fork",
    reason="an export is shared only where workers may be forked",
)


def _many_messages(tmp_path: Path, rounds: int = 9) -> OpenCodeSession:
    s = _session(tmp_path)
    s.finish()
    for i in range(rounds):
        s.user(f"And case {i}?")
        s.message("assistant")
        s.step(input_tokens=1_300 + i)
        s.tool("bash", {"command": f"pytest -k case{i}"}, LOG if i % 3 == 0 else f"ok {i}")
        s.text(f"Case {i} passes.")
        s.finish()
    return s


def _serial_lines(s: OpenCodeSession) -> bytes:
    from transcript_view.core.opencode_store import _database_lines, connect

    conn = connect(s.db)
    try:
        return b"".join(_database_lines(conn, s.session_id))
    finally:
        conn.close()


def _exported(s: OpenCodeSession, step: int = 1 << 16) -> tuple[bytes, int]:
    from transcript_view.core.opencode_store import DatabaseExport

    export = DatabaseExport(s.db, s.session_id)
    got = []
    while piece := export.read(step):
        got.append(piece)
    return b"".join(got), export.workers


@needs_cores
def test_a_big_session_exported_by_several_processes_is_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each process makes a run of the messages (with a part of no message of the session
    last): read back in order, the bytes of one walk, whatever the piece asked for."""
    s = _many_messages(tmp_path)
    s.rows.append(("part", ("prt_stray", "msg_elsewhere", s.session_id, 1, 1, '{"type":"text"}')))
    s.write()
    expected = _serial_lines(s)
    assert expected.count(b'"opencode":"message"') == 20 and b"prt_stray" in expected
    assert _exported(s) == (expected, 1)  # a small session stays here
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    for step in (97, 1 << 16, 1 << 30):
        got, workers = _exported(s, step)
        assert workers == parallel.worker_count() and got == expected


@needs_cores
def test_messages_out_of_id_order_exported_by_several_processes_keep_their_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = _many_messages(tmp_path)
    s.write()
    _wrap_first_message_id(s.db)
    expected = _serial_lines(s)
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    got, workers = _exported(s)
    assert workers > 1 and got == expected
    assert expected.index(b"Wrapped000001") < expected.index(b"And case 0?")


@needs_cores
def test_a_database_being_written_is_exported_in_one_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `-wal` beside the database: OpenCode is running, and each process would see the
    rows of another moment; one transaction reads them all."""
    s = _many_messages(tmp_path)
    s.write()
    writer = sqlite3.connect(s.db)  # keeps the -wal while open
    try:
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("UPDATE session SET title = 'live' WHERE id = ?", (s.session_id,))
        writer.commit()
        assert Path(f"{s.db}-wal").exists()
        monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
        got, workers = _exported(s)
    finally:
        writer.close()
    assert workers == 1 and b'"title":"live"' in got


def _broken_run(shared: object, index: int) -> int:
    raise sqlite3.DatabaseError("database disk image is malformed")


@needs_cores
def test_a_run_that_cannot_be_read_is_the_exports_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transcript_view.core import opencode_store
    from transcript_view.core.compressed import CompressedError

    s = _many_messages(tmp_path)
    s.write()
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(opencode_store, "_export_run", _broken_run)
    with pytest.raises(CompressedError, match=r"^the database cannot be read \(database disk"):
        _exported(s)

"""Claude Code sessions read as the conversations they were: the smaller points of it."""

from __future__ import annotations

import json
from pathlib import Path

from _pilot import settle, sync
from _real_shapes import microcompacted_session
from _screen import SIZE, assert_counting_matches_building
from _sessions import ClaudeSession
from _support import CLAUDE_EXAMPLE, CODEX_EXAMPLE
from textual.widgets import Static

from transcript_view.core.formats.claude_code import subagent_of
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.blocks import RowBuilder, build_line
from transcript_view.viewer.context import AnalysisState, BlockContext, Expansion
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.measure import BlockRows
from transcript_view.viewer.screens.orphans import OrphansScreen
from transcript_view.viewer.session_blocks import (
    REASONING_ENCRYPTED,
    THINKING_NOT_KEPT,
    api_error_words,
    tool_use_summary,
)


def _text(screen: TranscriptScreen) -> str:
    source = screen.view.doc.source
    return "\n".join(
        r.text.plain for i in range(source.available()) for r in source.build(i).text_rows()
    )


def _session_with_subagent(root: Path) -> tuple[Path, Path]:
    s = ClaudeSession(root)
    s.user("Scan the tests.")
    s.tool_use("toolu_T", "Task", {"description": "scan", "prompt": "List tests"})
    s.tool_result("toolu_T", "Found 3 tests.", {"agentId": "a1", "status": "completed"})
    sub = s.subagent("a1")
    sub.user("List tests")
    sub.assistant({"type": "text", "text": "test_a, test_b, test_c"})
    return s.write(), sub.write()


def test_a_subagent_file_is_known_by_where_claude_code_writes_it(tmp_path: Path) -> None:
    main, sub = _session_with_subagent(tmp_path)
    assert subagent_of(main) is None
    assert subagent_of(sub) == main.stem
    deep = main.with_suffix("") / "subagents" / "workflows" / "w1" / "agent-x.jsonl"
    assert subagent_of(deep) == main.stem
    assert subagent_of(tmp_path / "agent-old.jsonl") == ""  # the old layout: beside sessions


@sync
async def test_sidechain_is_said_once_in_a_subagent_files_header(tmp_path: Path) -> None:
    _, sub = _session_with_subagent(tmp_path)
    app = TranscriptApp(sub)
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert "a subagent's transcript of session" in screen.header.about
        assert "every line is its sidechain" in screen.header.render().plain
        text = _text(screen)
        assert "test_a, test_b" in text and "sidechain" not in text


def test_a_structured_record_is_cut_visibly_saying_how_much_was_left_out() -> None:
    files = [f"src/utils/file_{i:02d}.ts" for i in range(30)]
    said = tool_use_summary(
        {"filenames": files, "numFiles": 30, "mode": "files_with_matches",
         "patch": {"hunks": [{"lines": ["+x" * 50] * 40}]}, "stdout": "y" * 5000}
    )
    assert '"src/utils/file_00.ts","src/utils/file_01.ts"' in said
    assert ", …] (3 of 30 items)" in said
    assert "numFiles 30" in said and "mode 'files_with_matches'" in said
    patch = said.split("patch ", 1)[1]
    assert patch.startswith('{"hunks":[{"lines":') and "… (" in patch and " in all)" in patch
    assert "stdout (5,000 characters, 4.9 KiB as UTF-8)" in said
    # Short values are whole, with no mark.
    assert tool_use_summary({"a": [1, 2], "b": {"c": 1}}) == 'a [1,2], b {"c":1}'


def test_an_api_error_says_the_error_the_attempt_and_the_wait() -> None:
    line = {
        "type": "system", "subtype": "api_error", "level": "error",
        "error": {"status": 529, "headers": {}, "requestID": None,
                  "error": {"type": "error",
                            "error": {"type": "overloaded_error", "message": "Overloaded"}}},
        "retryInMs": 1150.5, "retryAttempt": 2, "maxRetries": 10,
    }
    assert api_error_words(line) == (
        "API error HTTP 529 overloaded_error: Overloaded; retry 2 of 10 after 1.2 s"
    )
    socket = {"subtype": "api_error", "error": {"cause": {"code": "FailedToOpenSocket"}}}
    assert api_error_words(socket) == "API error: FailedToOpenSocket"
    assert api_error_words({"subtype": "api_error"}) == "API error"
    # A wait no float holds (JSON has no limit on an integer) is said as written.
    huge = api_error_words({"subtype": "api_error", "retryAttempt": 1, "retryInMs": 10**400})
    assert huge.startswith("API error; retry 1 after ") and huge.endswith(" ms")


@sync
async def test_an_api_error_row_is_not_empty(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path)
    s.user("Go.")
    s.raw({**s._base("system"), "subtype": "api_error", "level": "error",
           "error": {"status": 503, "error": {"type": "api_error", "message": "down"}},
           "retryInMs": 558.94, "retryAttempt": 1, "maxRetries": 10})
    app = TranscriptApp(s.write())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert "API error HTTP 503 api_error: down; retry 1 of 10 after 0.6 s" in _text(screen)


@sync
async def test_an_api_error_with_a_wait_no_float_holds_is_drawn(tmp_path: Path) -> None:
    """`retryInMs` of 400 digits parses (JSON integers have no limit); dividing it for
    seconds overflowed, and the file view failed to build the line (found in review)."""
    s = ClaudeSession(tmp_path)
    s.user("Go.")
    s.raw({**s._base("system"), "subtype": "api_error", "retryInMs": 10**400,
           "retryAttempt": 1})
    app = TranscriptApp(s.write())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert "API error; retry 1 after 10,000,000" in _text(screen)
        assert_counting_matches_building(screen)


async def _orphans_words(app: TranscriptApp, pilot: object) -> str:
    await settle(pilot)
    await pilot.press("o")  # type: ignore[attr-defined]
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, OrphansScreen)
    return str(screen.query_one("#orphans-empty", Static).render())


@sync
async def test_an_empty_orphans_screen_says_why_it_is_empty(tmp_path: Path) -> None:
    main, sub = _session_with_subagent(tmp_path)
    (main.with_suffix("") / "tool-results").mkdir(parents=True)
    (main.with_suffix("") / "tool-results" / "lost.txt").write_text("x")
    app = TranscriptApp(sub)
    async with app.run_test(size=SIZE) as pilot:
        words = await _orphans_words(app, pilot)
        assert "a subagent's transcript" in words and main.name in words
    (main.with_suffix("") / "tool-results" / "lost.txt").unlink()
    app = TranscriptApp(main)
    async with app.run_test(size=SIZE) as pilot:
        assert "a line names every file in tool-results/" in await _orphans_words(app, pilot)
    app = TranscriptApp(CODEX_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        words = await _orphans_words(app, pilot)
        assert "keeps no files beside it" in words and "Codex rollout" in words


def _build(fmt: Format, obj: dict[str, object], width: int = 100) -> list[str]:
    """The rows one line draws (and the count its measure gives, held equal)."""
    raw = json.dumps(obj).encode()
    ctx = BlockContext(AnalysisState(), {}, Expansion(), width=width, format=fmt)
    b = RowBuilder("file", 0, 1, ctx)
    build_line(b, fmt, raw, 0)
    rows = [r.text.plain for r in b.rows]
    assert BlockRows(width, fmt)(raw) == len(rows)
    return rows


def test_newer_record_shapes_say_what_they_are() -> None:
    signed = {"type": "assistant", "uuid": "u", "message": {"id": "m", "content": [
        {"type": "thinking", "thinking": "", "signature": "EqQBCkYIBxgCKkB..."}]}}
    assert any(THINKING_NOT_KEPT in r for r in _build(Format.CLAUDE_CODE, signed))
    compaction = {"type": "response_item",
                  "payload": {"type": "compaction", "encrypted_content": "gAAAAB..."}}
    text = "\n".join(_build(Format.CODEX, compaction))
    assert "compaction" in text and "summary not readable: encrypted by the provider" in text
    reasoning = {"type": "response_item",
                 "payload": {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}}
    assert any(REASONING_ENCRYPTED in r for r in _build(Format.CODEX, reasoning))
    compacted = {"type": "compacted", "payload": {
        "message": "", "replacement_history": [{"type": "message"}] * 3}}
    assert any("continued from 3 items of replacement history" in r
               for r in _build(Format.CODEX, compacted))
    world = {"type": "world_state", "payload": {"cwd": "/x"}}
    assert "world_state  the environment's state" in _build(Format.CODEX, world)[0]


@sync
async def test_claude_codes_size_says_what_it_counts_beside_a_byte_size() -> None:
    """"86.2KB" on a marker is characters ÷ 1024 (bytes for Bash), a record's is UTF-8."""
    app = TranscriptApp(CLAUDE_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        text = _text(screen)
        assert "output too large (17.8KB as Claude Code counts it, in characters)" in text
        assert "output too large (26.4KB as Claude Code counts it, in bytes)" in text  # Bash
        assert "1.9 KiB as UTF-8" in text


@sync
async def test_a_microcompaction_row_names_each_cleared_result_and_goes_to_it(
    tmp_path: Path,
) -> None:
    app = TranscriptApp(microcompacted_session(tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        text = _text(screen)
        assert "microcompaction: 3 results cleared, 71,221 tokens in context before" in text
        assert "Read result toolu_M0 (line 3) cleared from what the model saw" in text
        assert text.count("its full output") == 2 and "toolu_M0.txt" in text
        assert "○ not stored" in text and "cleared-result: no such file" in text
        assert "cleared from what the model saw by the microcompaction on line 8" in text
        view = screen.view
        jumps = [i for i in range(view.doc.total_rows)
                 if (r := view.doc.row(i)) is not None and r.kind == "jump"]
        assert len(jumps) == 3
        view.set_cursor(jumps[1])
        await pilot.press("enter")
        await settle(pilot)
        assert view.current_row is not None and view.current_row.line == 5
        assert_counting_matches_building(screen)
        # Enter on a cleared result's marker opens its full output.
        await pilot.press("n")
        await settle(pilot)
        key = view.current_site()
        assert key is not None and key.line == 8
        await pilot.press("enter")
        await settle(pilot)
        art = screen.artifacts.get(key)
        assert art is not None and art.lines.path.name == "toolu_M0.txt"
        # The model saw that result whole (line 3) until the boundary: never "never saw".
        legend = [r for r in _art_heads(screen) if "saw" in r]
        assert legend == [
            "┃ the model saw it whole (line 3) until the microcompaction on line 8; "
            "not after it"
        ], legend


def _art_heads(screen: TranscriptScreen) -> list[str]:
    doc = screen.view.doc
    rows = [doc.row(i) for i in range(doc.total_rows)]
    return [r.text.plain.strip(" │") for r in rows if r is not None and r.kind == "art-head"]


@sync
async def test_the_model_view_says_what_even_the_file_view_cannot_show(tmp_path: Path) -> None:
    for record, words in ((True, "marked where it happened"),
                          (False, "before Claude Code 2.1.9")):
        app = TranscriptApp(microcompacted_session(tmp_path / str(record), record=record))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("m")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, TranscriptScreen)
            assert words in _text(screen)


@sync
async def test_a_replacement_without_a_marker_still_says_the_result_was_replaced(
    tmp_path: Path,
) -> None:
    """The model saw the replacement's text: the result's own marker is not what it saw,
    even when the replacement holds no marker of its own."""
    s = ClaudeSession(tmp_path)
    s.user("Read it.")
    marker = s.spill("toolu_01", "".join(f"row {i}\n" for i in range(3000)))
    assert marker.startswith("<persisted-output>")
    s.raw({"type": "content-replacement", "sessionId": "s", "replacements": [
        {"kind": "tool-result", "toolUseId": "toolu_01", "replacement": "[too long: dropped]"}]})
    app = TranscriptApp(s.write())
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        assert isinstance(screen.analysis, SessionAnalysis)
        assert screen.analysis.replaced == {3: {"toolu_01": 4}}
        text = _text(screen)
        assert "replaced at request time (line 4)" in text
        assert "preview matches" not in text and screen.header.markers == 0
        assert_counting_matches_building(screen)


@sync
async def test_a_line_nested_to_the_parsers_limit_is_drawn(tmp_path: Path) -> None:
    """An attachment (shown, not folded) nested 985 deep parses; encoding it for its
    row in a layout worker's stack raised RecursionError and failed the app (review)."""
    s = ClaudeSession(tmp_path)
    s.user("Go.")
    path = s.write()
    deep = '{"type":"attachment","attachment":' + "[" * 985 + "]" * 985 + "}"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(deep + "\n")
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert '{"attachment":[[[[' in _text(screen)
        assert_counting_matches_building(screen)

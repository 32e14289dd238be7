"""The viewer on a Claude Code session, a Codex rollout and their sessions folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _pilot import settle, sync
from _screen import SIZE, assert_counting_matches_building, assert_layout_consistent
from _support import (
    CLAUDE_EXAMPLE,
    CODEX_EXAMPLE,
    EXAMPLES,
    OPENCODE_DATA,
    OPENCODE_EXAMPLE,
    QWEN_EXAMPLE,
    ROOT,
    every_agent_home,
)

from transcript_view.core.formats import Format
from transcript_view.core.formats.model import SpillForm, SpillSite
from transcript_view.core.verification import MarkerState
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.screens.sessions import SessionsScreen
from transcript_view.viewer.session_blocks import preview_bytes
from transcript_view.viewer.transcript_view import TranscriptView


def _text(screen: TranscriptScreen) -> str:
    """Every row of the current view, every block built (not only what is on screen)."""
    source = screen.view.doc.source
    rows = []
    for i in range(source.available()):
        rows.extend(r.text.plain for r in source.build(i).text_rows())
    return "\n".join(rows)


@sync
async def test_a_claude_code_session_reads_as_the_conversation_the_model_saw() -> None:
    app = TranscriptApp(CLAUDE_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.format is Format.CLAUDE_CODE
        header = screen.header
        assert (header.markers, header.verified, header.problems, header.orphans) == (13, 5, 2, 1)
        rendered = header.render().plain
        assert "records 59" in rendered and "preview ok 5" in rendered
        assert "verified" not in rendered and "no digests in this format" in rendered
        text = _text(screen)
        for words in (
            "≈ preview matches",
            "✗ excerpt mismatch",
            "✗ missing",
            "Claude Code's own record, not sent to the model",
            "continues the response that starts on line 2",
            "branches from line",
            "compaction (manual); the conversation through line",
            "the compaction's summary: what the model continued from",
            "subagent transcript: subagents/agent-a1b2c3.jsonl",
            "thinking: Grep first",
            "⚙ Grep",
            "▸ 2 records: 1 file-history snapshot, 1 title — not sent to the model",
            "▸ 4 progress records: 3 hooks, 1 Bash — not sent to the model",
            "API error HTTP 529 overloaded_error: Overloaded; retry 1 of 10 after 1.2 s",
            "microcompaction: 2 results cleared, 21,349 tokens in context before",
            "(a prompt sent again after a rewind)",
        ):
            assert words in text, words
        assert text.count("branches from line") == 1  # the rewind; never the parallel batch
        assert "custom-title" not in text
        assert_layout_consistent(screen)
        assert_counting_matches_building(screen)
        await pilot.press("a")  # every record, each on its own rows
        await settle(pilot)
        text = _text(screen)
        assert "custom-title  the session's title, as the user set it" in text
        assert "handlers and build" in text and "file-history-snapshot" in text
        assert "▸ " not in text
        assert_layout_consistent(screen)
        assert_counting_matches_building(screen)


@sync
async def test_enter_on_a_spill_marker_opens_the_sidecar_with_the_preview_marked_seen() -> None:
    app = TranscriptApp(CLAUDE_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        site = screen.analysis.excerpt_sites[0]
        assert isinstance(site, SpillSite) and site.file == "toolu_01GREP.txt"
        screen.post_message(TranscriptView.ArtifactRequested(site.key))
        await settle(pilot)
        art = screen.artifacts.get(site.key)
        assert art is not None and art.state is MarkerState.MATCHES
        assert site.preview is not None
        assert art.head_bytes == len(site.preview.encode()) and art.tail_bytes == 0
        # The sidecar was found by basename in the local tool-results/, not at the
        # marker's absolute path of another machine.
        assert site.path is not None and site.path.startswith("/Users/someone/")
        assert art.lines.path.parent == CLAUDE_EXAMPLE.with_suffix("") / "tool-results"
        assert_counting_matches_building(screen)


def test_a_bash_preview_counts_the_blank_lines_bash_dropped_as_seen() -> None:
    site = SpillSite(
        1, 0, Format.CLAUDE_CODE, SpillForm.PERSISTED, -1, 0, 0, preview="row 1", bash=True
    )
    assert preview_bytes(site, b"\n\n  \nrow 1\nrow 2\n") == len(b"\n\n  \n") + 5


@sync
async def test_copy_on_a_spill_marker_copies_the_local_sidecar_path() -> None:
    app = TranscriptApp(CLAUDE_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        local = CLAUDE_EXAMPLE.with_suffix("") / "tool-results" / "toolu_01GREP.txt"
        assert copied == [str(local)]


@sync
async def test_a_codex_rollout_shows_the_model_side_and_the_ui_record_apart() -> None:
    app = TranscriptApp(CODEX_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.format is Format.CODEX
        header = screen.header
        assert (header.markers, header.problems) == (5, 0)
        rendered = header.render().plain
        assert "verified" not in rendered and "this format stores nothing to check" in rendered
        text = _text(screen)
        assert "○ not stored" in text and "947 of 1,200 lines cut" in text
        assert "▸ 1 UI record: user_message — not sent to the model" in text
        assert "▸ 1 UI record: token_count — not sent to the model" in text
        assert "⚙ shell" in text and "reasoning" in text
        assert_counting_matches_building(screen)
        # Nothing was stored: enter says so instead of opening anything.
        site = screen.analysis.excerpt_sites[0] if screen.analysis is not None else None
        assert site is not None
        screen.post_message(TranscriptView.ArtifactRequested(site.key))
        await settle(pilot)
        assert screen.artifacts.get(site.key) is None


@sync
async def test_the_model_view_of_another_format_is_the_next_calls_context() -> None:
    app = TranscriptApp(CLAUDE_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("m")
        await settle(pilot)
        text = _text(screen)
        assert "the model is sent next" in text and "not replayed" not in text
        assert "system prompt and tool definitions are not in the file" in text


@pytest.mark.parametrize(
    ("folder", "fmt", "prompt"),
    [
        (EXAMPLES / "claude", Format.CLAUDE_CODE, "Find every event handler"),
        (EXAMPLES / "claude" / "projects", Format.CLAUDE_CODE, "Find every event handler"),
        (EXAMPLES / "codex" / "sessions", Format.CODEX, "build it"),
        (EXAMPLES / "qwen", Format.QWEN, "The test suite is slow"),
        (EXAMPLES / "qwen" / "projects", Format.QWEN, "The test suite is slow"),
        (QWEN_EXAMPLE.parent, Format.QWEN, "The test suite is slow"),
        (EXAMPLES / "gemini", Format.GEMINI, "The test suite is slow"),
        (EXAMPLES / "gemini" / "tmp" / "proj", Format.GEMINI, "The test suite is slow"),
        (EXAMPLES / "copilot", Format.COPILOT, "The test suite is slow"),
        (EXAMPLES / "copilot" / "session-state", Format.COPILOT, "The test suite is slow"),
    ],
)
@sync
async def test_a_sessions_folder_lists_sessions_and_opens_the_one_chosen(
    folder: Path, fmt: Format, prompt: str
) -> None:
    app = TranscriptApp(folder)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionsScreen) and screen.format is fmt
        (session,) = screen.sessions
        assert session.first_prompt is not None and session.first_prompt.startswith(prompt)
        result = screen.results[str(session.path)]
        assert result.counts is not None
        await pilot.press("enter")
        await settle(pilot)
        opened = app.screen
        assert isinstance(opened, TranscriptScreen) and opened.path == session.path
        assert opened.format is fmt


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "transcript_view", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=ROOT,
        timeout=120,
    )


def test_claude_checks_the_default_sessions_folder(tmp_path: Path) -> None:
    home = tmp_path / "claude-home"
    (home / "projects").mkdir(parents=True)
    import shutil

    shutil.copytree(EXAMPLES / "claude" / "projects", home / "projects", dirs_exist_ok=True)
    out = _cli(["--check", "--claude"], {"CLAUDE_CONFIG_DIR": str(home)})
    assert out.returncode == 1, out.stderr  # the example has problems on purpose
    assert out.stdout.count("(Claude Code session)") == 2  # the session and its subagent
    missing = _cli(["--claude"], {"CLAUDE_CONFIG_DIR": str(tmp_path / "nowhere")})
    assert missing.returncode == 2 and "no such directory" in missing.stderr
    both = _cli(["--claude", "x.jsonl"], {})
    assert both.returncode == 2 and "takes no PATH" in both.stderr


def test_the_viewer_refuses_a_file_that_is_no_transcript_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text('{"name": "x"}\n')
    out = _cli([str(path)], {})
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "not a transcript" in out.stderr and "OpenCode or Copilot CLI session" in out.stderr


@sync
async def test_a_listing_dims_a_file_that_is_no_transcript(tmp_path: Path) -> None:
    from _runs import write_run

    from transcript_view.viewer.screens.listing import ListingScreen

    write_run(tmp_path)
    (tmp_path / "vectors.jsonl").write_text('{"input": 1}\n')
    app = TranscriptApp(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ListingScreen)
        result = screen.results["vectors.jsonl"]
        assert result.not_transcript and result.error == "not a transcript"
        status = str(screen.query_one("#listing-status").render())
        assert "1 transcript · 1 other .jsonl file (not a transcript)" in status


@sync
async def test_enter_on_a_task_result_opens_its_subagent_and_escape_comes_back() -> None:
    from _support import CLAUDE_SUBAGENT_EXAMPLE

    app = TranscriptApp(CLAUDE_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        doc = screen.view.doc
        link = next(
            i for i in range(doc.total_rows) if (r := doc.row(i)) is not None and r.kind == "link"
        )
        screen.view.set_cursor(link)
        await pilot.press("enter")
        await settle(pilot)
        sub = app.screen
        assert isinstance(sub, TranscriptScreen) and sub.path == CLAUDE_SUBAGENT_EXAMPLE
        assert sub.format is Format.CLAUDE_CODE and sub.header.verified == 1
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen


def _odd_session(root: Path) -> Path:
    """Markers where only one side might look: the analysis and the viewer must agree."""
    from _sessions import ClaudeSession, claude_preview, numbered, persisted_marker

    s = ClaudeSession(root)
    s.user("go")
    full = numbered(120)
    preview, more = claude_preview(full)
    s.tool_results.mkdir(parents=True)
    (s.tool_results / "toolu_R.txt").write_text(full)
    marker = persisted_marker("7KB", "/x/tool-results/toolu_R.txt", preview, more)
    # A result holding a marker, then replaced at request time by another marker.
    s.tool_use("toolu_R", "Read", {})
    s.tool_result("toolu_R", "whole output " + marker)
    s.raw(
        {
            "type": "content-replacement",
            "sessionId": "s",
            "replacements": [
                {"kind": "tool-result", "toolUseId": "toolu_R", "replacement": marker},
                # and one for a result that is not in this file (a subagent's, say)
                {"kind": "tool-result", "toolUseId": "toolu_ELSEWHERE", "replacement": marker},
            ],
        }
    )
    # A marker-shaped text in an assistant line's "tool_result" (not looked at).
    s.assistant({"type": "tool_result", "tool_use_id": "toolu_A", "content": marker})
    # A text part whose text is not a string.
    s.tool_use("toolu_N", "Read", {})
    line = s.tool_result(
        "toolu_N", [{"type": "text", "text": 12}, {"type": "text", "text": marker}]
    )
    assert line
    return s.write()


@sync
async def test_every_marker_row_is_a_marker_the_analysis_knows(tmp_path: Path) -> None:
    app = TranscriptApp(_odd_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.state.ledger is not None
        index = screen.state.index
        source = screen.view.doc.source
        drawn = []
        for i in range(source.available()):
            for row in source.build(i, expand=True).text_rows():
                if row.kind == "marker" and not row.cont:
                    drawn.append(row.site)
        assert sorted(drawn) == sorted(index.site_by_key), "each site drawn once, nothing else"
        ledger = screen.state.ledger
        assert ledger.complete
        assert MarkerState.CHECKING not in ledger.states()


@sync
async def test_at_80_columns_a_long_name_gives_way_to_the_counts() -> None:
    app = TranscriptApp(CLAUDE_EXAMPLE)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        first = screen.header.render().plain.split("\n")[0]
        assert first.startswith("5f0c2a") and "…" in first
        shown = first[:78]  # what fits at 80 columns
        assert "problems 2" in shown and "orphans 1" in shown and len(first.rstrip()) <= 78


@sync
async def test_copy_on_a_codex_cut_copies_the_notice_the_model_saw() -> None:
    app = TranscriptApp(CODEX_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("n", "c")
        await settle(pilot)
        assert copied == ["[... omitted 947 of 1200 lines ...]"]


@sync
async def test_question_mark_on_the_sessions_screen_lists_its_keys() -> None:
    from transcript_view.viewer.screens import HelpScreen

    app = TranscriptApp(EXAMPLES / "claude")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)


@sync
async def test_grep_omitted_lines_are_not_stored_marker_rows_counted_as_check_counts(
    tmp_path: Path,
) -> None:
    """Issue 26, item 9: the viewer draws and counts each `[Omitted long matching line]`
    as `--check` does, with its "not stored" badge; the line's prefix stays text."""
    from _sessions import ClaudeSession

    from transcript_view.core.report import verify

    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("find it")
    s.tool_use("toolu_G", "Grep", {"pattern": "init", "output_mode": "content"})
    s.tool_result(
        "toolu_G",
        "src/a.ts:3:init()\ndist/a.min.js:1:[Omitted long matching line]\n"
        "dist/b.min.js:7:[Omitted long matching line]",
    )
    path = s.write()
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.state.ledger is not None
        assert screen.header.markers == verify(path).markers == 2
        assert screen.state.ledger.states() == [MarkerState.NOT_STORED] * 2
        source = screen.view.doc.source
        rows = [r for i in range(source.available()) for r in source.build(i).text_rows()]
        markers = [r.text.plain for r in rows if r.kind == "marker" and not r.cont]
        assert len(markers) == 2
        for marker in markers:
            assert "○ not stored" in marker and "one matching line too long for Grep" in marker
        assert "dist/a.min.js:1:" in _text(screen)


@sync
async def test_enter_on_a_missing_sidecar_opens_claude_codes_own_record_of_the_output(
    tmp_path: Path,
) -> None:
    """Issue 26, item 5: a missing sidecar whose output Claude Code also wrote in its own
    record does not promise the sidecar: its marker says the file is missing and which
    field holds the output, and enter opens that field, labelled as the agent's record.
    One with no such copy says the file is missing and promises nothing."""
    from _sessions import ClaudeSession, numbered

    from transcript_view.core.report import verify
    from transcript_view.viewer.inline import RecordCopy

    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("go")
    full = numbered(1500)
    s.spill("toolu_GONE", full, write_file=False, inline="content")
    s.spill("toolu_LOST", numbered(300), write_file=False)
    path = s.write()
    report = verify(path)
    assert [f.message for f in report.findings if f.kind == "missing-artifact"] == [
        "the session has no tool-results/ directory; Claude Code's own record "
        "(toolUseResult.content) holds the full output",
        "the session has no tool-results/ directory",
    ]
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.state.ledger is not None
        assert screen.state.ledger.states() == [MarkerState.MISSING] * 2
        source = screen.view.doc.source
        rows = [r for i in range(source.available()) for r in source.build(i).text_rows()]
        said: dict[object, str] = {}  # each marker's words, white space aside (rows wrap)
        for r in rows:
            if r.kind == "marker":
                said[r.site] = said.get(r.site, "") + "".join(r.text.plain.split())
        gone, lost = said.values()
        expected = (
            "the rest was saved to tool-results/toolu_GONE.txt, which is missing; "
            "Claude Code's own record (toolUseResult.content) holds the full output "
            "(enter opens that copy)"
        )
        assert gone.endswith("".join(expected.split()))
        assert lost.endswith("tool-results/toolu_LOST.txt,whichismissing")
        assert_counting_matches_building(screen)
        await pilot.press("n", "enter")
        await settle(pilot)
        (key,) = list(screen.artifacts)
        art = screen.artifacts[key]
        assert isinstance(art, RecordCopy) and art.complete
        assert b"\n".join(art.lines.row_bytes_of(i) for i in range(art.lines.row_count)) == (
            full.rstrip("\n").encode()
        )
        doc = screen.view.doc
        shown = "\n".join(r.text.plain for i in range(doc.total_rows) if (r := doc.row(i)))
        assert "┌ Claude Code's own record toolUseResult.content  not the sidecar (missing), " \
            "not what the model saw" in shown
        assert "the model saw only the marker's preview, not this copy" in shown
        assert "row 01499" in shown and "└ end of Claude Code's record" in shown
        assert_counting_matches_building(screen)
        await pilot.press("enter")  # closes it
        await settle(pilot)
        assert list(screen.artifacts) == []


@sync
async def test_e_and_c_on_a_missing_sidecar_say_it_is_missing(tmp_path: Path) -> None:
    """The pager is not sent to a file that is not there; a copied path says it is gone."""
    from _sessions import ClaudeSession, numbered

    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("go")
    s.spill("toolu_GONE", numbered(1500), write_file=False, inline="content")
    app = TranscriptApp(s.write())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        said: list[str] = []
        screen._say = lambda message, **kw: said.append(message)  # type: ignore[method-assign]
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("n", "e")
        await settle(pilot)
        assert said == [
            "toolu_GONE.txt is missing; Claude Code's own record (toolUseResult.content) "
            "holds the full output: enter opens it here."
        ]
        await pilot.press("c")
        await settle(pilot)
        assert copied and copied[0].endswith("toolu_GONE.txt")


@sync
async def test_enter_on_a_qwen_stub_opens_the_projects_file_with_its_preview_seen() -> None:
    app = TranscriptApp(QWEN_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        assert screen.header.verified == 3  # verified, and matched: a preview or head and tail
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        ((key, art),) = screen.artifacts.items()
        site = screen.analysis.excerpt_sites[0]
        assert isinstance(site, SpillSite) and key == site.key
        assert art.state is MarkerState.VERIFIED
        # Found by basename in the project's tool-results/, not at the stub's path.
        assert site.path is not None and site.path.startswith("/Users/someone/.qwen/tmp/")
        runtime = EXAMPLES / "qwen"
        assert art.lines.path.parent.parent.parent == runtime / "tmp"
        assert art.lines.path.name == "call_01test.txt"
        assert_counting_matches_building(screen)


def test_qwen_checks_the_default_sessions_folder(tmp_path: Path) -> None:
    import shutil

    home = tmp_path / "qwen-home"
    shutil.copytree(EXAMPLES / "qwen", home)
    for env in ({"QWEN_HOME": str(home)}, {"QWEN_RUNTIME_DIR": str(home), "QWEN_HOME": "/x"}):
        out = _cli(["--check", "--qwen"], env)
        assert out.returncode == 1, out.stderr  # the example has a digest mismatch on purpose
        assert out.stdout.count("(Qwen Code session)") == 1
        assert "1 verified (size, sha256 and preview)" in out.stdout
    missing = _cli(["--qwen"], {"QWEN_HOME": str(tmp_path / "nowhere")})
    assert missing.returncode == 2 and "no such directory" in missing.stderr


def test_gemini_checks_the_default_sessions_folder(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(EXAMPLES / "gemini", tmp_path / ".gemini")
    out = _cli(["--check", "--gemini"], {"GEMINI_CLI_HOME": str(tmp_path)})
    assert out.returncode == 1, out.stderr  # the example has a missing file on purpose
    assert out.stdout.count("(Gemini CLI session)") == 1
    assert "2 match their files (head, tail and length" in out.stdout


@sync
async def test_enter_on_an_opencode_cut_opens_its_tool_output_file_with_its_head_seen() -> None:
    app = TranscriptApp(OPENCODE_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        assert screen.header.verified == 2  # matched: kept lines and counts (no digest)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        ((key, art),) = screen.artifacts.items()
        site = screen.analysis.excerpt_sites[0]
        assert isinstance(site, SpillSite) and key == site.key
        assert site.form is SpillForm.OPENCODE_TRUNCATED
        assert art.state is MarkerState.EXCERPT_MATCHES
        # Found by basename in tool-output/ beside the database, not at the marker's path.
        assert art.lines.path.parent == OPENCODE_DATA / "tool-output"
        assert site.preview and preview_bytes(site, site.preview.encode()) > 0
        assert_counting_matches_building(screen)


@sync
async def test_an_opencode_data_folder_lists_its_sessions_and_a_click_opens_one() -> None:
    from textual.widgets import DataTable

    app = TranscriptApp(OPENCODE_DATA)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionsScreen) and screen.format is Format.OPENCODE
        titles = [s.first_prompt for s in screen.sessions]
        assert titles == [
            "List the ten slowest tests.",
            "The test suite is slow and something fails; find out what.",
            "Install the dependencies.",
        ]
        assert "subagent of ses_5b1d" in screen.sessions[0].project
        assert all(r.counts is not None for r in screen.results.values())
        table = screen.query_one("#sessions-table", DataTable)
        await pilot.click(table, offset=(8, 2))  # the header, then the second session
        await settle(pilot)
        assert table.cursor_row == 1 and app.screen is screen  # a click moves the cursor
        await pilot.click(table, offset=(8, 2))  # and one on the cursor's row opens it
        await settle(pilot)
        opened = app.screen
        assert isinstance(opened, TranscriptScreen) and opened.path == OPENCODE_EXAMPLE
        assert opened.format is Format.OPENCODE


def test_opencode_checks_its_default_data_folder_and_its_database(tmp_path: Path) -> None:
    import shutil

    data = tmp_path / "share" / "opencode"
    shutil.copytree(OPENCODE_DATA, data)
    out = _cli(["--check", "--opencode"], {"XDG_DATA_HOME": str(tmp_path / "share")})
    assert out.returncode == 1, out.stderr  # the example has an edited file on purpose
    assert out.stdout.count("(OpenCode session)") == 3  # two in the database, one older
    assert "2 match their files (kept lines and counts" in out.stdout
    moved = tmp_path / "elsewhere.db"
    shutil.copy(data / "opencode.db", moved)
    out = _cli(["--check", "--opencode"], {"OPENCODE_DB": str(moved)})
    assert out.stdout.count("(OpenCode session)") == 2, out.stderr
    missing = _cli(["--opencode"], {"XDG_DATA_HOME": str(tmp_path / "nowhere")})
    assert missing.returncode == 2 and "no such directory" in missing.stderr
    before = {p: p.stat().st_mtime_ns for p in data.rglob("*")}
    assert _cli(["--check", str(data / "opencode.db")], {}).returncode == 1
    assert {p: p.stat().st_mtime_ns for p in data.rglob("*")} == before  # nothing written


@sync
async def test_an_opencode_session_has_nothing_to_follow_and_leaves_no_copy(tmp_path: Path) -> None:
    import shutil
    import tempfile

    from transcript_view.viewer.load import LoadState, Phase

    def copies() -> set[str]:
        return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("transcript-view-")}

    data = tmp_path / "opencode"
    shutil.copytree(OPENCODE_DATA, data)
    before = copies()
    app = TranscriptApp(data / OPENCODE_EXAMPLE.relative_to(OPENCODE_DATA))
    toasts: list[str] = []
    app.notify = lambda message, **k: toasts.append(message)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and not screen.following
        assert any("An OpenCode session is read from its database" in t for t in toasts)
    assert copies() == before  # the private copy went with the screen
    assert sorted(p.name for p in data.iterdir()) == ["opencode.db", "storage", "tool-output"]
    load = LoadState()
    load.index_grew(decompressing=True, exported=True)
    assert load.phase is Phase.EXPORTING and load.phase.label == "reading its rows"


def test_copilot_checks_the_default_sessions_folder(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(EXAMPLES / "copilot", tmp_path / ".copilot")
    out = _cli(["--check", "--copilot"], {"COPILOT_HOME": str(tmp_path / ".copilot")})
    assert out.returncode == 1, out.stderr  # the example has an event cut short on purpose
    assert out.stdout.count("(Copilot CLI session)") == 1
    assert "nothing stored to check (its large outputs went to the OS temp folder" in out.stdout
    assert "NUL bytes where events should be" in out.stdout
    missing = _cli(["--copilot"], {"COPILOT_HOME": str(tmp_path / "nowhere")})
    assert missing.returncode == 2 and "no such directory" in missing.stderr


@sync
async def test_every_agents_listing_keeps_its_counts_on_an_80_column_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the check found (markers, problems, status) is on screen at 80 columns; the
    texts of no fixed width (project, first prompt) come last and are what is cut."""
    from textual.widgets import DataTable

    for name, value in every_agent_home(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("QWEN_HOME", raising=False)
    app = TranscriptApp(None, every_agent=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        assert all(r.counts is not None for r in screen.results.values())
        table = screen.query_one("#sessions-table", DataTable)
        header = table.render_line(0).text
        for label in ("Agent", "Started", "Size", "Markers", "Problems", "Status"):
            assert label in header, header
        assert "First prompt" not in header  # off to the right: it scrolls
        first = table.render_line(1).text
        assert "0/0" in first and "ok" in first, first
        title = screen.query_one("#sessions-title")
        assert title.size.height == 2  # the agents' names wrap, none cut off


@sync
async def test_the_screen_keeps_its_calls_narrowed() -> None:
    """What the screen holds for as long as it is open: each call column in the narrowest
    array its numbers fit (`ModelCalls.narrow`), the calls read as the pass made them."""
    from transcript_view.core.formats.readers import analyse_as
    from transcript_view.core.transcript import Transcript

    app = TranscriptApp(CODEX_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen) and screen.analysis is not None
        calls = screen.analysis.calls
        assert len(calls) > 0 and calls.fields.typecode == "b" and calls.lines.typecode == "i"
        t = Transcript.open(CODEX_EXAMPLE)
        try:
            made = analyse_as(t, Format.CODEX).calls
        finally:
            t.close()
        assert made.lines.typecode == "q"  # `--check`'s, as the pass made it
        assert [calls.call(i) for i in range(len(calls))] == [
            made.call(i) for i in range(len(made))
        ]

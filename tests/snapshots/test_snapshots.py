"""Snapshots: what a person sees, pinned as SVG and grouped by feature.

Every snapshot waits for all workers (index, analysis, hashing) before the
picture is taken, shows no clock and no absolute path, and is taken at a fixed
size (120x40 for the transcript screen, 100x30 for a screen on its own), so it
is the same on every machine. Update with
`python3 dev.py test tests/snapshots --snapshot-update`, then look at every SVG
that changed before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from _pilot import settle
from _real_shapes import context_session, filling_session, parallel_session
from _runs import BADGE_CASES, line
from _screen_apps import SCREEN_SIZE, T0, ScreenApp, orphans_app
from _sessions import ClaudeSession
from _support import (
    CLAUDE_EXAMPLE,
    CODEX_EXAMPLE,
    COPILOT_EXAMPLE,
    EXAMPLES,
    GEMINI_EXAMPLE,
    OPENCODE_DATA,
    OPENCODE_EXAMPLE,
    QWEN_EXAMPLE,
    REFERENCE,
    every_agent_home,
)
from textual.pilot import Pilot

from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.fileview import SEEN, UNSEEN, ArtifactScreen
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.screens import HelpScreen, ListingScreen, OrphansScreen

SIZE = (120, 40)


def screen_of(pilot: Pilot[Any]) -> TranscriptScreen:
    screen = pilot.app.screen
    assert isinstance(screen, TranscriptScreen)
    return screen


async def settled(pilot: Pilot[Any]) -> None:
    await settle(pilot)


async def _open_demo_artifact(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("n", "enter")
    await settle(pilot)


class TestTranscript:
    """The transcript screen as it opens, and at its first problem."""

    def test_demo_opened(self, snap_compare: Any) -> None:
        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=settled)

    def test_laying_out_half_way(self, snap_compare: Any) -> None:
        """Issue 25: while a big transcript is laid out, the row after the last one
        laid out says how far it got, and the scrollbar is the whole file's (estimated)."""

        async def half_way(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            view = screen_of(pilot).view
            doc = view.file_doc
            doc.truncate(doc.blocks // 2)  # as if the layout were half way through
            doc.laying_out = True
            view._update_size()
            view.scroll_to(y=max(doc.total_rows - 20, 0), animate=False, immediate=True)
            await pilot.pause()

        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=half_way)

    def test_broken_example_at_its_first_problem(self, snap_compare: Any) -> None:
        async def first_problem(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("p")

        app = TranscriptApp(EXAMPLES / "broken.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=first_problem)


class TestBadges:
    """Every badge a marker can wear, and the one it wears while its file is hashed."""

    @pytest.mark.parametrize("state", BADGE_CASES)
    def test_badge(self, snap_compare: Any, run_factory: Any, state: str) -> None:
        run = run_factory(state)

        async def at_marker(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("n")

        assert snap_compare(TranscriptApp(run.path), terminal_size=SIZE, run_before=at_marker)

    def test_checking(
        self, snap_compare: Any, run_factory: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        run = run_factory("verified")
        monkeypatch.setattr(TranscriptScreen, "_verify", lambda self, *a: None)
        assert snap_compare(TranscriptApp(run.path), terminal_size=SIZE, run_before=settled)


class TestInlineArtifacts:
    """Enter on a marker: the full artifact under it, with what the model saw marked."""

    def test_top(self, snap_compare: Any) -> None:
        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=_open_demo_artifact)

    def test_end(self, snap_compare: Any) -> None:
        async def to_artifact_end(pilot: Pilot[Any]) -> None:
            await _open_demo_artifact(pilot)
            view = screen_of(pilot).view
            doc = view.doc
            kinds = [(r.kind if (r := doc.row(i)) is not None else "")
                     for i in range(doc.total_rows)]  # fmt: skip
            end = kinds.index("art-end")
            view.set_cursor(end, scroll=False)
            view.scroll_cursor_visible(center=True)
            await pilot.pause()

        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=to_artifact_end)

    def test_seen_and_unseen(self, snap_compare: Any, run_factory: Any) -> None:
        """A small artifact whole on screen: the head and tail the model saw, the middle not."""
        run = run_factory("verified")
        assert snap_compare(
            TranscriptApp(run.path), terminal_size=SIZE, run_before=_open_demo_artifact
        )


class TestModelView:
    """`m`: the conversation the model is sent next, compaction and elision applied."""

    @pytest.mark.parametrize("stem", ["compaction", "aging"])
    def test_model_view(self, snap_compare: Any, stem: str) -> None:
        async def model_view(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("m")
            await settle(pilot)

        app = TranscriptApp(REFERENCE / f"{stem}.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=model_view)


class TestSearch:
    """`/`: hits highlighted, the cursor on the first."""

    def test_search(self, snap_compare: Any) -> None:
        async def search(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("slash", *"offset", "enter")
            await settle(pilot)
            await pilot.press("n")

        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=search)


class TestOrphans:
    """`o`: files no line names, each with a preview; nothing can be deleted."""

    def test_orphans(self, snap_compare: Any, artifact_dir: Any) -> None:
        app = orphans_app(artifact_dir)
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=settled)

    def test_none(self, snap_compare: Any, tmp_path: Any) -> None:
        d = tmp_path / "empty.artifacts"
        d.mkdir()
        app = ScreenApp(lambda: OrphansScreen(d, []))
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=settled)

    @staticmethod
    async def _open_orphan(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("down", "enter")  # row 1: the regular orphan (".tmp-" sorts first)
        await settle(pilot)

    def test_opened(self, snap_compare: Any, artifact_dir: Any) -> None:
        app = orphans_app(artifact_dir)
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=self._open_orphan)

    def test_opened_at_its_end(self, snap_compare: Any, artifact_dir: Any) -> None:
        async def open_and_end(pilot: Pilot[Any]) -> None:
            await self._open_orphan(pilot)
            await pilot.press("end")
            await settle(pilot)

        app = orphans_app(artifact_dir)
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=open_and_end)


class TestArtifactScreen:
    """A file on its own screen, with the regions the model saw and never saw."""

    def test_regions(self, snap_compare: Any, tmp_path: Any) -> None:
        body = b"".join(b"line %02d of the full result\n" % i for i in range(40))
        p = tmp_path / "result.txt"
        p.write_bytes(body)
        head, tail = 8 * 28 + 10, 5 * 28
        end = len(body)
        regions = [(0, head, SEEN), (head, end - tail, UNSEEN), (end - tail, end, SEEN)]
        app = ScreenApp(lambda: ArtifactScreen(p, "result.txt", regions=regions))
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=settled)


class TestListing:
    """A directory: its transcripts with counts, and artifact directories whose transcript
    is gone."""

    def test_listing(self, snap_compare: Any, transcripts_dir: Any) -> None:
        app = ScreenApp(lambda: ListingScreen(transcripts_dir))
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=settled)


class TestHelp:
    """`?`: every key of the one key table and what each badge means."""

    def test_help(self, snap_compare: Any) -> None:
        app = ScreenApp(lambda: HelpScreen())
        assert snap_compare(app, terminal_size=SIZE, run_before=settled)


class TestNewcomer:
    """What a newcomer meets first: an 80-column terminal, enter on a marker, `m` after it."""

    NARROW = (80, 24)

    def test_footer_at_80_columns(self, snap_compare: Any) -> None:
        """`? Help` and `q Quit` first in the footer: visible however narrow the terminal."""
        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=self.NARROW, run_before=settled)

    def test_enter_lands_on_what_the_model_never_saw(self, snap_compare: Any) -> None:
        """The first unseen row at the top, the seen head one `k` above it."""
        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=self.NARROW, run_before=_open_demo_artifact)

    def test_model_view_keeps_an_opened_artifact_collapsed(self, snap_compare: Any) -> None:
        """Opened in the file view, the artifact is not what the model is sent: not shown."""

        async def open_then_model(pilot: Pilot[Any]) -> None:
            await _open_demo_artifact(pilot)
            await pilot.press("m")
            await settle(pilot)
            await pilot.press("n")

        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=open_then_model)


class TestCountsAndWords:
    """Counts and words that tell the truth: problems `p` reaches with orphans apart,
    findings wrapped instead of cut, a note's own mark, each orphan its own reason, and
    a compaction that says which lines it replaced."""

    def test_broken_example_at_its_digest_mismatch(self, snap_compare: Any) -> None:
        """`problems 2   orphans 1`; the second problem's finding wrapped, both digests whole."""

        async def second_problem(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("p", "p")

        app = TranscriptApp(EXAMPLES / "broken.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=second_problem)

    def test_a_note_wears_its_own_mark(self, snap_compare: Any) -> None:
        """basic's `chars-differ` note under a verified marker: ℹ, not a warning's ⚠."""

        async def at_marker(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("n")

        app = TranscriptApp(REFERENCE / "basic.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=at_marker)

    @staticmethod
    def _orphaned_run(directory: Path) -> Path:
        """Two operations (settled, never settled) and three orphans, each for its reason."""

        def dispatch(n: int, op_id: str, call: str) -> str:
            payload = {"arguments": "{}", "call-id": call, "tool": "sh_run"}
            return line(n, "tool-dispatched", payload, op_id)

        done = "66613832-6465-4236-b962-383635383133"
        lost = "37333934-6262-4965-b532-383131653338"
        path = directory / "run.jsonl"
        path.write_text(
            line(1, "session-meta", {"scenario": "orphans"})
            + dispatch(2, done, "call_1")
            + line(3, "message", {"content": "ok", "role": "tool", "tool-call-id": "call_1"})
            + line(4, "tool-settled", {"op-id": done, "outcome": "completed"})
            + dispatch(5, lost, "call_2"),
            encoding="utf-8",
        )
        art = directory / "run.artifacts"
        art.mkdir()
        names = [f"{done}.txt", f"{lost}.txt", "00000000-dead-4bad-8000-000000000000.txt"]
        for i, name in enumerate(names):
            (art / name).write_text(f"the full result of {name}\nits second line\n")
            os.utime(art / name, (T0 + i * 3600, T0 + i * 3600))
        return path

    def test_each_orphan_has_its_own_reason(self, snap_compare: Any, tmp_path: Path) -> None:
        """`o` from a transcript: the reason of the one under the cursor, above its lines."""

        async def orphans(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("o")
            await settle(pilot)
            await pilot.press("down")  # the one whose operation never settled
            await pilot.pause()

        app = TranscriptApp(self._orphaned_run(tmp_path))
        assert snap_compare(app, terminal_size=SIZE, run_before=orphans)

    def test_a_compaction_says_which_lines_it_replaces(self, snap_compare: Any) -> None:
        """It says "replaces lines 3–5", not "replaces through 38393639…"."""

        async def to_end(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("G")
            await pilot.pause()

        app = TranscriptApp(REFERENCE / "compaction.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=to_end)

    def test_help_explains_the_finding_marks(self, snap_compare: Any) -> None:
        """The end of `?`: the three marks a finding can wear, and what each means."""

        async def to_end(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("end")
            await pilot.pause()

        app = ScreenApp(lambda: HelpScreen())
        assert snap_compare(app, terminal_size=SIZE, run_before=to_end)


class TestAgentFormats:
    """A Claude Code session and a Codex rollout (the synthetic examples), and a sessions folder."""

    def test_claude_session_opened(self, snap_compare: Any) -> None:
        app = TranscriptApp(CLAUDE_EXAMPLE)
        assert snap_compare(app, terminal_size=SIZE, run_before=settled)

    def test_claude_session_at_its_first_problem(self, snap_compare: Any) -> None:
        async def first_problem(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("p")

        app = TranscriptApp(CLAUDE_EXAMPLE)
        assert snap_compare(app, terminal_size=SIZE, run_before=first_problem)

    def test_claude_sidecar_opened_at_what_the_model_never_saw(self, snap_compare: Any) -> None:
        app = TranscriptApp(CLAUDE_EXAMPLE)
        assert snap_compare(app, terminal_size=SIZE, run_before=_open_demo_artifact)

    def test_codex_rollout_at_its_first_cut(self, snap_compare: Any) -> None:
        async def first_marker(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("n")

        app = TranscriptApp(CODEX_EXAMPLE)
        assert snap_compare(app, terminal_size=SIZE, run_before=first_marker)

    def test_qwen_session_at_its_first_problem(self, snap_compare: Any) -> None:
        """A verified stub, an expired file, a stub before the digest line, then the edited
        file's digest mismatch under the cursor."""

        async def first_problem(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("p")

        app = TranscriptApp(QWEN_EXAMPLE)
        assert snap_compare(app, terminal_size=SIZE, run_before=first_problem)

    def test_gemini_session_at_its_masked_result(self, snap_compare: Any) -> None:
        """The `$set` that rewrote the history: the masked result, its file matched."""

        async def last_marker(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("end")
            await pilot.press("N")

        app = TranscriptApp(GEMINI_EXAMPLE)
        assert snap_compare(app, terminal_size=SIZE, run_before=last_marker)

    def test_opencode_session_at_its_first_problem(self, snap_compare: Any) -> None:
        """A session read from OpenCode's SQLite database: a cut by lines matched by its
        file, a tail cut by bytes, an expired file, then the edited file under the cursor."""

        async def first_problem(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("p")

        app = TranscriptApp(OPENCODE_EXAMPLE)
        assert snap_compare(app, terminal_size=SIZE, run_before=first_problem)

    def test_copilot_session_at_its_first_marker(self, snap_compare: Any) -> None:
        """A large output whose file was in the OS temp folder: said, never looked for."""

        async def first_marker(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("n")

        app = TranscriptApp(COPILOT_EXAMPLE)
        assert snap_compare(app, terminal_size=SIZE, run_before=first_marker)

    def test_opencode_data_folder(self, snap_compare: Any) -> None:
        """`--opencode`: the database's sessions (a subagent's among them) and the older
        storage tree's, newest first."""
        app = TranscriptApp(OPENCODE_DATA)
        assert snap_compare(app, terminal_size=SIZE, run_before=settled)

    def test_every_agents_sessions(
        self, snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`--sessions`: the examples as one machine's four agents, newest first."""
        for name, value in every_agent_home(tmp_path).items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("QWEN_HOME", raising=False)
        app = TranscriptApp(None, every_agent=True)
        assert snap_compare(app, terminal_size=SIZE, run_before=settled)

    def test_claude_sessions_folder(self, snap_compare: Any) -> None:
        app = TranscriptApp(EXAMPLES / "claude")
        assert snap_compare(app, terminal_size=SIZE, run_before=settled)


def _sgr(on: str, text: str, off: str) -> str:
    """`text` between the SGR that sets a style and the one that ends it, as colour libraries
    write them (`picocolors`: bold is `1`...`22`, cyan `36`...`39`)."""
    return f"\x1b[{on}m{text}\x1b[{off}m"


def _dim(text: str) -> str:
    return _sgr("2", text, "22")


def _bold(text: str) -> str:
    return _sgr("1", text, "22")


def _fg(colour: int, text: str) -> str:
    return _sgr(str(colour), text, "39")


def _timing(ms: int, colour: int = 32) -> str:
    return _fg(colour, f" {ms}{_dim('ms')}")


#: What vitest prints for a run with one failure, colours and all (issue 26, item 7): made up
#: in its shape, not copied from anyone's session.
VITEST_OUTPUT = "\n".join(
    [
        f"{_bold(_sgr('46', ' RUN ', '49'))} {_fg(36, 'v4.0.18 ')}{_fg(90, '/Users/someone/proj')}",
        "",
        f" {_fg(32, '✓')} src/utils/paths.test.ts {_dim('(12 tests)')}{_timing(8)}",
        f" {_fg(32, '✓')} src/utils/config.test.ts {_dim('(7 tests)')}{_timing(5)}",
        f" {_fg(31, '❯')} src/parser.test.ts {_dim('(9 tests | ')}{_fg(31, '1 failed')}"
        f"{_dim(')')}{_timing(312, 33)}",
        f"   {_fg(31, '×')} parses a quoted key{_timing(301, 33)}",
        "",
        _fg(31, f"⎯⎯⎯⎯⎯⎯⎯ {_bold(_sgr('7', ' Failed Tests 1 ', '27'))} ⎯⎯⎯⎯⎯⎯⎯"),
        "",
        f"{_bold(_sgr('7', _fg(31, ' FAIL '), '27'))} src/parser.test.ts{_dim(' > ')}"
        "parses a quoted key",
        _fg(31, f"{_bold('AssertionError')}: expected \x1b[32m'b'\x1b[31m to be \x1b[32m'a'"),
        "",
        f"{_dim(' Test Files ')} {_bold(_fg(31, '1 failed'))}{_dim(' | ')}"
        f"{_bold(_fg(32, '2 passed'))}{_fg(90, ' (3)')}",
        f"{_dim('      Tests ')} {_bold(_fg(31, '1 failed'))}{_dim(' | ')}"
        f"{_bold(_fg(32, '27 passed'))}{_fg(90, ' (28)')}",
        # A program's other sequences stay visible: a title change, then a true colour.
        "\x1b]0;vitest\x07" + _sgr("38;2;255;135;0", "watching for file changes…", "0"),
    ]
)


class TestToolOutputColours:
    """Issue 26: a tool's colours (SGR) are drawn as colours, every other escape as glyphs."""

    def test_a_colour_run(self, snap_compare: Any, tmp_path: Path) -> None:
        """A test runner's coloured output in a Claude Code result, expanded: its colours,
        bold, dim and reverse drawn; the OSC title change shown as glyphs."""
        s = ClaudeSession(tmp_path / "projects" / "-Users-someone-proj")
        s.user("Run the tests.")
        s.tool_use("toolu_01VITEST", "Bash", {"command": "npx vitest run"})
        s.tool_result("toolu_01VITEST", VITEST_OUTPUT)
        s.assistant({"type": "text", "text": "One test fails: parses a quoted key."})
        path = s.write()

        async def expanded(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            view = screen_of(pilot).view
            doc = view.doc
            more = next(i for i in range(doc.total_rows) if (r := doc.row(i)) and r.kind == "more")
            view.set_cursor(more)
            await pilot.press("enter")
            await settle(pilot)

        assert snap_compare(TranscriptApp(path), terminal_size=SIZE, run_before=expanded)


class TestRealSessionShapes:
    """Issue 26: real Claude Code sessions read as the conversations they were."""

    def test_a_parallel_batch_with_its_progress_folded(
        self, snap_compare: Any, tmp_path: Path
    ) -> None:
        """Three calls of one response, each result after its own progress records: no
        branch note anywhere, each run of records one dim row."""
        path = parallel_session(tmp_path / "projects" / "-Users-someone-proj")
        assert snap_compare(TranscriptApp(path), terminal_size=SIZE, run_before=settled)

    def test_the_same_batch_with_every_record(self, snap_compare: Any, tmp_path: Path) -> None:
        """`a`: every record on its own rows, each saying it was not sent to the model."""
        path = parallel_session(tmp_path / "projects" / "-Users-someone-proj")

        async def everything(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("a")
            await settle(pilot)
            pilot.app.clear_notifications()
            await settle(pilot)

        assert snap_compare(TranscriptApp(path), terminal_size=SIZE, run_before=everything)

    def test_a_subagent_file_says_sidechain_once(self, snap_compare: Any) -> None:
        """A subagent's own file: its header says it is one, its lines do not repeat it."""
        sub = CLAUDE_EXAMPLE.with_suffix("") / "subagents" / "agent-a1b2c3.jsonl"
        assert snap_compare(TranscriptApp(sub), terminal_size=SIZE, run_before=settled)


class TestCallContext:
    """Issue 27: `M` on an assistant turn: what the model was sent for that call."""

    def test_the_context_of_a_call_after_a_compaction(
        self, snap_compare: Any, tmp_path: Path
    ) -> None:
        """The header names the call; the preamble gives its recorded size and field, its
        window and fill, the compaction it starts after and what the file never holds;
        then the summary first, and each entry as the file has it."""
        s = ClaudeSession(tmp_path / "projects" / "-Users-someone-proj")

        def usage(obj: dict[str, Any], size: int) -> None:
            parts = {"input_tokens": 4, "cache_read_input_tokens": size - 4}
            obj["message"]["usage"] = {**parts, "cache_creation_input_tokens": 0,
                                       "output_tokens": 7}  # fmt: skip

        s.user("Fix the failing build.")
        usage(s.tool_use("toolu_01MAKE", "Bash", {"command": "make"}), 14_210)
        s.tool_result("toolu_01MAKE", "cc -c parse.c\nparse.c:41: error: expected ';'")
        boundary = s._base("system")
        boundary.update(subtype="compact_boundary", content="Conversation compacted",
                        compactMetadata={"trigger": "auto", "preTokens": 171_004},
                        logicalParentUuid=s.lines[-1]["uuid"], parentUuid=None)  # fmt: skip
        s.raw(boundary)
        summary = s.user("This session is being continued from a previous conversation. "
                         "The build failed: parse.c line 41 lacks a semicolon.")  # fmt: skip
        summary["isCompactSummary"] = True
        usage(s.tool_use("toolu_02EDIT", "Edit", {"file_path": "parse.c", "old_string": "x)",
                                                  "new_string": "x);"}), 19_873)  # fmt: skip
        s.tool_result("toolu_02EDIT", "The file parse.c has been updated.")
        answer = s.assistant({"type": "text", "text": "Fixed: the build passes."},
                             msg_id="msg_03", request="req_03")  # fmt: skip
        usage(answer, 20_112)
        path = s.write()
        last = len(s.lines)

        async def at_the_call(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            view = screen_of(pilot).view
            index = view.doc.source.index_of_line(last)
            assert index is not None
            view.set_cursor(view.doc.block_start(index))
            await pilot.press("M")
            await settle(pilot)

        assert snap_compare(TranscriptApp(path), terminal_size=SIZE, run_before=at_the_call)
class TestWhereEachMessageLived:
    """Issue 27 in the file view: a session whose calls record their sizes."""

    def test_a_spilled_result_expanded_and_a_compaction_in_place(
        self, snap_compare: Any, tmp_path: Path
    ) -> None:
        """Enter on the spilled Grep result (line 7): which calls had it and what it cost
        against its whole output; the compaction (line 11) with its trigger and the context
        before and after; its summary one folded row."""
        path = context_session(tmp_path / "projects" / "-Users-someone-proj")

        async def expanded(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            view = screen_of(pilot).view
            index = view.doc.source.index_of_line(7)
            assert index is not None
            view.set_cursor(view.doc.block_start(index))
            await pilot.press("enter")
            await settle(pilot)
            view.scroll_to(y=0, animate=False, immediate=True)
            await settle(pilot)

        # Tall enough for the expanded result (its 2 KB preview whole) and the compaction.
        assert snap_compare(TranscriptApp(path), terminal_size=(120, 84), run_before=expanded)


class TestContextWindow:
    """Issue 27: `w`, the fill of every model call's window (a synthetic session that fills
    its window until an auto compaction, usage on every response, six spilled reads)."""

    @pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80", "120"])
    def test_the_chart_at_the_call_after_the_compaction(
        self, snap_compare: Any, tmp_path: Path, size: tuple[int, int]
    ) -> None:
        """The chart, its ruler (the compaction, the spills, the selection), the call after
        the compaction with its figures, and its biggest items."""
        path = filling_session(tmp_path / "projects" / "-Users-someone-proj")

        async def context(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("w")
            await settle(pilot)
            await pilot.press("right")  # from the fullest call to the one after the compaction
            await settle(pilot)

        assert snap_compare(TranscriptApp(path), terminal_size=size, run_before=context)

"""Claude Code sessions: every spill marker form found, resolved by basename, checked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _sessions import (
    ClaudeSession,
    claude_preview,
    mcp_marker,
    numbered,
    persisted_marker,
    saved_marker,
)

from transcript_view.core.formats import Format
from transcript_view.core.formats.claude_code import session_dir, session_files, sidecar_dir
from transcript_view.core.formats.claude_markers import (
    basename,
    find_spills,
    format_file_size,
    utf16_units,
)
from transcript_view.core.formats.model import SessionAnalysis, SpillForm
from transcript_view.core.formats.rules import BASH_FILE_CAP
from transcript_view.core.report import Report, verify
from transcript_view.core.verification import MarkerState


def _kinds(report: Report) -> list[tuple[str, int | None]]:
    return [(f.kind, f.line) for f in report.findings]


def _states(report: Report) -> list[str]:
    return [b.state.value for b in report.badges]


@pytest.fixture
def session(tmp_path: Path) -> ClaudeSession:
    s = ClaudeSession(tmp_path / "projects" / "-Users-someone-proj")
    s.user("find the things")
    return s


# -- the texts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1KB"),
        (37683, "36.8KB"),
        (37120, "36.3KB"),  # 36.25 exactly: JavaScript's toFixed rounds half up
        (5033165, "4.8MB"),
        (3 << 30, "3GB"),
    ],
)
def test_format_file_size_is_claude_codes(n: int, text: str) -> None:
    assert format_file_size(n) == text


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/Users/a/.claude/projects/-x/s/tool-results/toolu_01.txt", "toolu_01.txt"),
        ("C:\\Users\\a\\.claude\\projects\\C--x\\s\\tool-results\\b1.txt", "b1.txt"),
        ("/home/a/x/../../etc/passwd", "passwd"),
        ("/home/a/..", ".."),
        ("/", ""),
    ],
)
def test_a_marker_path_of_any_machine_gives_its_basename(path: str, name: str) -> None:
    assert basename(path) == name


def test_every_marker_form_is_found_with_what_it_claims() -> None:
    full = numbered(100)
    preview, more = claude_preview(full)
    # Claude Code replaces a whole result with its marker: one marker per text.
    texts = [
        persisted_marker("5.9KB", "/u/x/tool-results/t1.txt", preview, more),
        saved_marker("/u/x/tool-results/t2.txt"),
        mcp_marker(123456, "/u/x/tool-results/t3.json"),
        "a\n... [31,234 characters truncated] ...\nb",
        "[Old tool result content cleared]",
    ]
    found = [f for text in texts for f in find_spills(text)]
    assert [f.form for f in found] == [
        SpillForm.PERSISTED,
        SpillForm.SAVED,
        SpillForm.MCP_SAVED,
        SpillForm.CHARS_TRUNCATED,
        SpillForm.CLEARED,
    ]
    persisted = found[0]
    assert persisted.file == "t1.txt" and persisted.size_text == "5.9KB"
    assert persisted.preview == preview and persisted.has_more
    assert [f.file for f in found[1:3]] == ["t2.txt", "t3.json"]
    assert found[2].cut == 123456 and found[3].cut == 31234


def test_a_short_result_has_its_whole_content_as_preview_and_no_ellipsis() -> None:
    marker = persisted_marker("45 bytes", "/x/t.txt", "all of it", False)
    (found,) = find_spills(marker)
    assert found.preview == "all of it" and not found.has_more


# -- layout -----------------------------------------------------------------------------------


def test_a_subagent_file_finds_the_parent_sessions_tool_results(session: ClaudeSession) -> None:
    main = session.write()
    sub = session.subagent("a1").write()
    deep = session.session_dir / "subagents" / "workflows" / "wf1" / "agent-b.jsonl"
    assert sidecar_dir(main) == session.tool_results
    assert sidecar_dir(sub) == session.tool_results
    assert sidecar_dir(deep) == session.tool_results
    assert session_dir(deep) == session.session_dir
    assert session_files(sub) == [main, sub]


# -- checks -----------------------------------------------------------------------------------


def test_spilled_results_whose_preview_and_size_match_say_so_never_verified(
    session: ClaudeSession,
) -> None:
    session.spill("toolu_01", numbered(200))
    session.spill("toolu_02", numbered(10))  # shorter than a preview
    session.spill("toolu_03", "é😀 wide text\n" * 400)  # UTF-16 sizes, not bytes
    report = verify(session.write())
    assert report.format is Format.CLAUDE_CODE
    assert _states(report) == ["preview matches"] * 3
    assert report.verified == 0 and report.matched == 3
    assert report.errors == 0 and report.warnings == 0
    assert report.as_dict()["format"] == "claude-code"


def test_a_windows_path_resolves_by_basename_in_the_local_tool_results(
    session: ClaudeSession,
) -> None:
    session.spill("toolu_01", numbered(200), path_style="windows")
    report = verify(session.write())
    assert _states(report) == ["preview matches"]


def test_a_missing_sidecar_is_missing_artifact(session: ClaudeSession) -> None:
    session.spill("toolu_01", numbered(200), write_file=False)
    report = verify(session.write())
    assert _states(report) == ["missing"]
    assert _kinds(report) == [("missing-artifact", 3)]
    assert "tool-results/" in report.findings[0].message


def test_a_stale_preview_is_an_excerpt_mismatch(session: ClaudeSession) -> None:
    session.spill("toolu_01", numbered(200))
    path = session.write()
    (session.tool_results / "toolu_01.txt").write_text("something else entirely\n" * 300)
    report = verify(path)
    assert _states(report) == ["excerpt mismatch"]
    assert _kinds(report) == [("excerpt-mismatch", 3)]


def test_a_size_that_disagrees_with_the_file_is_a_size_mismatch(session: ClaudeSession) -> None:
    full = numbered(200)
    session.spill("toolu_01", full)
    path = session.write()
    (session.tool_results / "toolu_01.txt").write_text(full + numbered(100))
    report = verify(path)
    assert _states(report) == ["size mismatch"]
    assert "the marker says 11.7KB; the file is 17.6KB" in report.findings[0].message


def test_a_preview_cut_inside_a_surrogate_pair_still_matches(session: ClaudeSession) -> None:
    full = "a" * 1999 + "😀" + "b" * 3000  # unit 2000 is the first half of the emoji
    preview, _ = claude_preview(full)
    assert utf16_units(preview) == 1999  # the cut lands before the pair (no lone half)
    session.tool_use("toolu_01", "Read", {})
    session.tool_results.mkdir(parents=True)
    (session.tool_results / "toolu_01.txt").write_text(full)
    half = full[:1999] + "\ud83d"  # what JavaScript's substring leaves
    marker = persisted_marker(format_file_size(utf16_units(full)), "/x/toolu_01.txt", half, True)
    session.tool_result("toolu_01", marker)
    report = verify(session.write())
    assert _states(report) == ["preview matches"]


def test_bash_previews_drop_leading_blank_lines_and_sizes_are_bytes(
    session: ClaudeSession,
) -> None:
    session.bash_spill("toolu_01", "bqqw0ykde", "\n\n\n" + "é" * 3000 + "\n" + numbered(50))
    report = verify(session.write())
    assert _states(report) == ["preview matches"]
    assert report.badges[0].file == "bqqw0ykde.txt"


def test_bash_persisted_output_size_must_be_the_files(session: ClaudeSession) -> None:
    session.bash_spill("toolu_01", "bq1", numbered(200), size=999)
    report = verify(session.write())
    assert _states(report) == ["size mismatch"]
    assert "persistedOutputSize says 999 bytes" in report.findings[0].message


def test_a_bash_file_cut_at_64_mib_by_claude_code_is_a_note(session: ClaudeSession) -> None:
    # The marker prints the original size, as does persistedOutputSize.
    real = BASH_FILE_CAP + 5000
    session.bash_spill("toolu_01", "bq1", numbered(200), size=real, printed=real)
    path = session.write()
    sidecar = session.tool_results / "bq1.txt"
    with open(sidecar, "r+b") as fh:
        fh.truncate(BASH_FILE_CAP)  # sparse: the head stays, the size is the cap
    report = verify(path)
    assert ("output-capped", 3) in _kinds(report)
    assert report.errors == 0


def test_a_json_sidecar_is_the_pretty_printed_blocks(session: ClaudeSession) -> None:
    blocks = [{"type": "text", "text": numbered(80)}, {"type": "text", "text": "second"}]
    session.spill("toolu_01", json.dumps(blocks, indent=2), sidecar="toolu_01.json")
    report = verify(session.write())
    assert _states(report) == ["preview matches"] and report.warnings == 0


def test_a_json_sidecar_that_is_not_json_is_a_warning(session: ClaudeSession) -> None:
    session.spill("toolu_01", "[not json " + numbered(80), sidecar="toolu_01.json")
    report = verify(session.write())
    assert ("sidecar-not-json", 3) in _kinds(report)


def test_older_forms_can_only_say_the_sidecar_is_there(session: ClaudeSession) -> None:
    session.tool_results.mkdir(parents=True)
    (session.tool_results / "toolu_01.txt").write_text(numbered(100))
    (session.tool_results / "toolu_02.json").write_text("[]")
    session.tool_use("toolu_01", "Read", {})
    session.tool_result("toolu_01", saved_marker(session.foreign_path("toolu_01.txt")))
    session.tool_use("toolu_02", "mcp__db__query", {})
    session.tool_result("toolu_02", mcp_marker(99999, session.foreign_path("toolu_02.json")))
    report = verify(session.write())
    assert _states(report) == ["present", "present"]
    assert (report.matched, report.present) == (0, 2)
    assert report.errors == 0


def test_cuts_with_nothing_stored_are_markers_with_notes(session: ClaudeSession) -> None:
    session.tool_use("toolu_01", "Bash", {})
    session.tool_result("toolu_01", "a\n... [31,234 characters truncated] ...\nb")
    session.tool_use("toolu_02", "Read", {})
    session.tool_result("toolu_02", [{"type": "text", "text": "[Old tool result content cleared]"}])
    report = verify(session.write())
    assert _states(report) == ["not stored", "not stored"]
    assert _kinds(report) == [("not-stored", 3), ("not-stored", 5)]
    assert "31,234 characters" in report.findings[0].message
    assert report.errors == 0 and report.warnings == 0


#: Grep's output (ripgrep, `--max-columns`): each too-long line replaced after its prefix.
GREP_OUTPUT = "\n".join(
    [
        "src/app.ts:12:const x = 1;",
        "dist/app.min.js:1:[Omitted long matching line]",
        "dist/app.min.js-2-[Omitted long context line]",
        "C:\\proj\\data\\index.json:1:[Omitted long matching line]",
        "notes.md:3:see [Omitted long matching line] above",
        "notes.md:4-[Omitted long matching line]",
    ]
)


def test_grep_omitted_lines_are_found_after_ripgreps_prefix_each_one_a_marker() -> None:
    """ripgrep writes the bracket in place of the line's content, after its `path:lineno:`
    prefix (`-` for a context line); in a sentence, or after the wrong separator, it is
    text."""
    found = find_spills(GREP_OUTPUT)
    assert [(f.form, GREP_OUTPUT[f.start : f.end]) for f in found] == [
        (SpillForm.OMITTED_MATCH, "[Omitted long matching line]"),
        (SpillForm.OMITTED_CONTEXT, "[Omitted long context line]"),
        (SpillForm.OMITTED_MATCH, "[Omitted long matching line]"),
    ]
    assert GREP_OUTPUT[found[0].start - len("dist/app.min.js:1:") : found[0].start] == (
        "dist/app.min.js:1:"
    )
    assert [f.form for f in find_spills("42:[Omitted long matching line]")] == [
        SpillForm.OMITTED_MATCH
    ]
    assert [f.form for f in find_spills("[Omitted long matching line]")] == [
        SpillForm.OMITTED_MATCH
    ]


def test_grep_omitted_lines_are_not_stored_cuts_counted_one_each(session: ClaudeSession) -> None:
    session.tool_use("toolu_01", "Grep", {"pattern": "x", "output_mode": "content"})
    session.tool_result("toolu_01", GREP_OUTPUT)
    report = verify(session.write())
    assert report.markers == 3
    assert _states(report) == ["not stored"] * 3
    assert _kinds(report) == [("not-stored", 3)] * 3
    messages = [f.message for f in report.findings]
    assert messages[0] == (
        "one matching line too long for Grep cut from what the model saw, "
        "and not stored anywhere"
    )
    assert "one context line too long for Grep" in messages[1]
    assert report.errors == 0 and report.warnings == 0


def test_the_full_output_also_inline_is_a_note_saying_the_model_saw_the_preview(
    session: ClaudeSession,
) -> None:
    session.spill("toolu_01", numbered(300), inline=True)
    report = verify(session.write())
    assert _kinds(report) == [("inline-duplicate", 3)]
    assert "the model saw only the preview" in report.findings[0].message


@pytest.mark.parametrize(
    ("inline", "field"),
    [
        (True, "toolUseResult.stdout"),
        ("content", "toolUseResult.content"),
        ("blocks", "toolUseResult.content"),
        ("result", "toolUseResult.result"),
        ("record", "toolUseResult"),
    ],
)
def test_an_inline_copy_is_noted_wherever_claude_codes_record_holds_it(
    session: ClaudeSession, inline: bool | str, field: str
) -> None:
    """Issue 26, item 14: not only Bash's `stdout`; the note says which field holds it."""
    full = numbered(1500)  # 90,000 characters
    session.spill("toolu_01", full, inline=inline)
    report = verify(session.write())
    assert _kinds(report) == [("inline-duplicate", 3)]
    assert report.findings[0].message == (
        f"the full output ({len(full):,} chars) is also written inline in {field}; "
        "the model saw only the preview"
    )
    (site,) = report.analysis.excerpt_sites
    assert (site.inline_field, site.inline_chars) == (field, len(full))


def test_a_record_holding_only_the_preview_or_other_big_fields_is_no_inline_copy(
    session: ClaudeSession,
) -> None:
    """Bash's `stdout` as the preview (2.1.2+), an Edit-like `originalFile`, a big `stderr`:
    none is the output the model was given the preview of."""
    full = numbered(1500)
    session.bash_spill("toolu_01", "bq1", full)  # stdout: the preview only
    session.spill("toolu_02", full)
    session.lines[-1]["toolUseResult"] = {"originalFile": full, "stderr": full, "content": 7}
    report = verify(session.write())
    assert [k for k, _ in _kinds(report)] == []


def test_a_content_replacement_is_what_the_model_saw(session: ClaudeSession) -> None:
    session.tool_use("toolu_01", "Read", {})
    session.tool_result("toolu_01", numbered(30))  # the transcript has it whole
    full = numbered(30)
    session.tool_results.mkdir(parents=True)
    (session.tool_results / "toolu_01.txt").write_text(full)
    preview, more = claude_preview(full)
    marker = persisted_marker(format_file_size(len(full)), "/x/toolu_01.txt", preview, more)
    session.raw(
        {
            "type": "content-replacement",
            "sessionId": "s",
            "replacements": [
                {"kind": "tool-result", "toolUseId": "toolu_01", "replacement": marker}
            ],
        }
    )
    report = verify(session.write())
    assert _states(report) == ["preview matches"]
    assert report.badges[0].line == 3  # shown at the result it replaced
    site = report.analysis.excerpt_sites[0] if report.analysis is not None else None
    assert site is not None and getattr(site, "replaced_at", None) == 4


# -- orphans ----------------------------------------------------------------------------------


def test_orphans_are_session_wide(session: ClaudeSession) -> None:
    session.spill("toolu_01", numbered(200))
    session.tool_use("toolu_small", "Read", {})
    session.tool_result("toolu_small", "short")
    main = session.write()
    sub = session.subagent("a1")
    sub.spill("toolu_sub", numbered(200))
    sub.write()
    (session.tool_results / "hook-1234.txt").write_text("hook output")
    (session.tool_results / "toolu_small.txt").write_text("short")  # a mirrored small result
    (session.tool_results / "stray.txt").write_text("nobody")
    report = verify(main)
    assert [o.name for o in report.orphans] == ["stray.txt"]
    assert _kinds(report) == [("orphan-artifact", None)]
    # The folder is the session's: its main transcript reports the orphans, so a
    # tree check lists each once; a subagent reports them only without its main file.
    assert verify(sub.path).orphans == []
    main.rename(main.with_suffix(".gone"))  # and what only the main file named is orphaned
    orphans = [o.name for o in verify(sub.path).orphans]
    assert orphans == ["stray.txt", "toolu_01.txt", "toolu_small.txt"]


# -- hostile ----------------------------------------------------------------------------------


def test_a_marker_path_is_never_followed(session: ClaudeSession, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(numbered(200))
    full = numbered(200)
    preview, more = claude_preview(full)
    session.tool_use("toolu_01", "Read", {})
    session.tool_result(
        "toolu_01", persisted_marker("11.7KB", str(outside / "secret.txt"), preview, more)
    )
    session.tool_use("toolu_02", "Read", {})
    session.tool_result("toolu_02", persisted_marker("1KB", "/a/b/..", preview, more))
    report = verify(session.write())
    assert _states(report) == ["missing", "unsafe name"]


def test_a_sidecar_symlink_out_and_a_fifo_are_unreadable(
    session: ClaudeSession, tmp_path: Path
) -> None:
    full = numbered(200)
    session.spill("toolu_01", full, write_file=False)
    session.spill("toolu_02", full, write_file=False)
    session.tool_results.mkdir(parents=True)
    (tmp_path / "elsewhere.txt").write_text(full)
    (session.tool_results / "toolu_01.txt").symlink_to(tmp_path / "elsewhere.txt")
    os.mkfifo(session.tool_results / "toolu_02.txt")
    before = sorted(p.name for p in session.tool_results.iterdir())
    report = verify(session.write())
    assert _states(report) == ["unreadable", "unreadable"]
    assert sorted(p.name for p in session.tool_results.iterdir()) == before


def test_the_state_vocabulary_has_the_new_badges() -> None:
    assert MarkerState.MATCHES.value == "preview matches"
    assert not MarkerState.MATCHES.is_bad and not MarkerState.PRESENT.is_bad


# -- what only the whole file says ------------------------------------------------------------


def test_the_pass_tags_continued_responses_branches_compactions_and_subagents() -> None:
    from _support import CLAUDE_EXAMPLE, CLAUDE_SUBAGENT_EXAMPLE

    report = verify(CLAUDE_EXAMPLE)
    analysis = report.analysis
    assert isinstance(analysis, SessionAnalysis)
    tags = {line: " | ".join(words) for line, words in analysis.tags.items()}
    said = "\n".join(tags.values())
    assert "continues the response that starts on line 2" in tags[3]
    assert "branches from line" in said and "(a prompt sent again after a rewind)" in said
    assert "compaction (manual); the conversation through line" in said
    assert "the compaction's summary" in said
    links = analysis.links
    assert list(links.values()) == [CLAUDE_SUBAGENT_EXAMPLE]
    assert "enter opens it" in tags[next(iter(links))]
    from transcript_view.core.formats.sessions import list_sessions

    (listed,) = list_sessions(CLAUDE_EXAMPLE.parent, Format.CLAUDE_CODE)
    assert listed.first_prompt == "Find every event handler and build the project."


def test_a_task_whose_subagent_file_is_gone_says_so(session: ClaudeSession) -> None:
    session.tool_use("toolu_T", "Task", {"prompt": "x"})
    session.tool_result("toolu_T", "done", {"agentId": "zz9", "status": "completed"})
    report = verify(session.write())
    analysis = report.analysis
    assert isinstance(analysis, SessionAnalysis)
    assert analysis.links == {}
    assert "agent-zz9.jsonl (not found)" in analysis.tags[3][0]


def test_markers_quoted_inside_a_preview_are_part_of_it_not_markers() -> None:
    quoted = "\n".join(
        [
            "the tool printed an old session:",
            saved_marker("/x/tool-results/old.txt"),
            persisted_marker("1KB", "/x/tool-results/older.txt", "nested", False),
            "... [12 characters truncated] ...",
        ]
    )
    outer = persisted_marker("5KB", "/x/tool-results/t1.txt", quoted, True)
    (found,) = find_spills(outer)
    assert found.file == "t1.txt" and found.preview == quoted


def test_a_new_ledger_keeps_the_sidecar_checks_it_is_given(session: ClaudeSession) -> None:
    """Bug: follow mode re-hashed every sidecar on every update (checks carried over were
    dropped for lacking a grapheme count, which a sidecar never needs)."""
    from transcript_view.core.formats.readers import analyse_as
    from transcript_view.core.ledger import VerificationLedger
    from transcript_view.core.transcript import Transcript
    from transcript_view.core.verification import check_file

    session.spill("toolu_01", numbered(200))
    session.bash_spill("toolu_02", "bq1", numbered(100))
    path = session.write()
    with Transcript(path) as t:
        t.build_index()
        first = VerificationLedger(analyse_as(t, Format.CLAUDE_CODE))
        for name in first.wanted():
            first.record(
                check_file(
                    session.tool_results,
                    name,
                    count_chars=False,
                    count_utf16=first.counts_utf16(name),
                )
            )
        second = VerificationLedger(analyse_as(t, Format.CLAUDE_CODE), checks=first.checks)
    assert second.wanted() == []
    assert second.states() == [MarkerState.MATCHES, MarkerState.MATCHES]


def test_the_pass_keeps_no_inline_output(session: ClaudeSession) -> None:
    """Bug: each result's toolUseResult.stdout (megabytes, in real sessions) stayed alive
    for the whole pass: a 500 MB session's --check peaked at 544 MB."""
    import gc
    import tracemalloc

    from transcript_view.core.formats.readers import analyse_as
    from transcript_view.core.transcript import Transcript

    for i in range(24):  # ~1.2 MB each, in every place Claude Code's record holds it
        inline = [True, "content", "blocks", "result", "record"][i % 5]
        session.spill(f"toolu_{i:02d}", numbered(20000), inline=inline)
    path = session.write()
    with Transcript(path) as t:
        t.build_index()
        gc.collect()
        tracemalloc.start()
        analysis = analyse_as(t, Format.CLAUDE_CODE)
        gc.collect()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert len(analysis.sites) == 24
    # One read's worth of lines at a time (~11 MB here), not all 29 MB of inline output.
    assert peak < 20 << 20, f"{peak:,} bytes at the peak of the pass"

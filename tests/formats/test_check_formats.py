"""`--check` across formats and directory trees: one line per transcript, exit codes, progress."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from _runs import write_run
from _sessions import ClaudeSession, codex_lines_omitted, numbered, write_codex_rollout

from transcript_view.cli import main
from transcript_view.core.check import run_check, transcripts_in


def _tree(root: Path) -> dict[str, Path]:
    ref = write_run(root / "ref", "verified")
    s = ClaudeSession(root / "claude" / "projects" / "-proj")
    s.user("go")
    s.spill("toolu_01", numbered(200))
    main_path = s.write()
    sub = s.subagent("a1")
    sub.user("sub")
    sub_path = sub.write()
    day = root / "codex" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    codex = write_codex_rollout(day / "rollout-x.jsonl", [codex_lines_omitted(300)])
    other = root / "vectors.jsonl"
    other.write_text('{"input": "a", "expected": "b"}\n')
    return {"ref": ref.path, "claude": main_path, "sub": sub_path, "codex": codex, "other": other}


def test_a_directory_tree_is_every_transcript_in_it(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    found = transcripts_in(tmp_path)
    assert set(found) == set(paths.values())
    out = io.StringIO()
    assert run_check([tmp_path], as_json=True, strict=False, out=out, jobs=1) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    by_format = {Path(r["transcript"]).name: r["format"] for r in rows}
    assert by_format == {
        paths["ref"].name: "reference",
        paths["claude"].name: "claude-code",
        paths["sub"].name: "claude-code",
        paths["codex"].name: "codex",
    }


def test_a_claude_session_is_followed_by_its_subagents_in_a_tree(tmp_path: Path) -> None:
    """A session's subagent files come right after its main file, not after every other
    session of the project: the session is one unit (the fleet checks it as one task)."""
    project = tmp_path / "projects" / "-proj"
    sessions = []
    for sid in ("aaaa", "bbbb"):
        s = ClaudeSession(project, name=sid)
        s.user("go")
        main_path = s.write()
        subs = []
        for agent in ("a2", "a1"):
            sub = s.subagent(agent)
            sub.user("sub")
            subs.append(sub.write())
        sessions.append([main_path, *sorted(subs)])
    (project / "zzzz.jsonl").write_text(json.dumps({"type": "user"}) + "\n")
    assert transcripts_in(tmp_path) == [*sessions[0], *sessions[1], project / "zzzz.jsonl"]


def test_a_file_that_is_no_transcript_is_skipped_in_a_tree_but_refused_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _tree(tmp_path)
    assert main(["--check", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "skipped 1 file that is not a transcript" in err and "vectors.jsonl" in err
    assert main(["--check", str(paths["other"])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a transcript" in err


def test_several_processes_print_exactly_what_one_does(tmp_path: Path) -> None:
    _tree(tmp_path)
    one, two = io.StringIO(), io.StringIO()
    assert run_check([tmp_path], as_json=False, strict=False, out=one, jobs=1) == 0
    assert run_check([tmp_path], as_json=False, strict=False, out=two, jobs=2) == 0
    assert one.getvalue() == two.getvalue() and one.getvalue().count("\n") >= 4


def test_progress_counts_transcripts_and_is_cleared(tmp_path: Path) -> None:
    _tree(tmp_path)
    progress = io.StringIO()
    run_check([tmp_path], as_json=False, strict=False, out=io.StringIO(), jobs=1, progress=progress)
    text = progress.getvalue()
    assert "checked 5 of 5 transcripts" in text and text.endswith("\r\x1b[K")


def test_no_progress_when_piped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _tree(tmp_path)
    main(["--check", str(tmp_path)])
    assert "checked" not in capsys.readouterr().err


def test_the_summary_says_what_each_format_lets_us_check(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    out = io.StringIO()
    run_check([paths["claude"], paths["codex"]], as_json=False, strict=False, out=out, jobs=1)
    claude, codex = (line for line in out.getvalue().splitlines() if not line.startswith("  "))
    assert "(Claude Code session)" in claude and "this format records no digest" in claude
    assert "verified" not in claude
    assert "(Codex rollout)" in codex and "nothing stored" in codex


def test_format_forces_a_reader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"name": "x"}\n')
    assert main(["--check", "--format", "codex", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "codex"

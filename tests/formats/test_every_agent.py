"""`--sessions`: every agent's sessions on this machine, at each agent's default root."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _support import ROOT, every_agent_home

from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.sessions import AGENTS, all_sessions, default_root


def test_each_agents_root_is_overridden_by_its_variable(tmp_path: Path) -> None:
    env = {
        "CLAUDE_CONFIG_DIR": "/c",
        "CODEX_HOME": "/x",
        "QWEN_HOME": "/q",
        "GEMINI_CLI_HOME": "/g",
        "XDG_DATA_HOME": "/d",
        "COPILOT_HOME": "/p",
    }
    assert [default_root(f, env) for f in AGENTS] == [
        Path("/c/projects"),
        Path("/x/sessions"),
        Path("/g/.gemini/tmp"),
        Path("/q/projects"),
        Path("/d/opencode"),
        Path("/p/session-state"),
    ]
    # OpenCode's database named by its variable is its root (a relative one: in the folder).
    assert default_root(Format.OPENCODE, {**env, "OPENCODE_DB": "/db/oc.db"}) == Path("/db/oc.db")
    assert default_root(Format.OPENCODE, {**env, "OPENCODE_DB": "x.db"}) == Path("/d/opencode")
    # Qwen Code's own order: its runtime folder first, then its home.
    assert default_root(Format.QWEN, {**env, "QWEN_RUNTIME_DIR": "/r"}) == Path("/r/projects")


def test_every_agents_sessions_are_listed_newest_first(tmp_path: Path) -> None:
    found = all_sessions(every_agent_home(tmp_path))
    assert {s.format for s in found.sessions} == set(AGENTS)
    times = [s.mtime for s in found.sessions]
    assert times == sorted(times, reverse=True)
    # OpenCode's two newest (its database's, from 2026-11-24), Copilot CLI's (11-22), then
    # Qwen Code's and Gemini CLI's, which both began at 10:00:01: the same time, by path.
    assert [s.format for s in found.sessions][:5] == [
        Format.OPENCODE,
        Format.OPENCODE,
        Format.COPILOT,
        Format.QWEN,
        Format.GEMINI,
    ]
    assert [f for f, _ in found.roots] == list(AGENTS)
    assert found.unreadable == [] and found.absent == []
    assert all(s.first_prompt for s in found.sessions)


def test_an_absent_root_is_skipped_and_an_unreadable_one_is_one_line(tmp_path: Path) -> None:
    env = every_agent_home(tmp_path)
    not_a_folder = tmp_path / "codex-home"
    not_a_folder.mkdir()
    (not_a_folder / "sessions").write_text("a file where a folder should be")
    env["CODEX_HOME"] = str(not_a_folder)
    env["QWEN_RUNTIME_DIR"] = str(tmp_path / "nowhere")
    found = all_sessions(env)
    assert {s.format for s in found.sessions} == {
        Format.CLAUDE_CODE,
        Format.GEMINI,
        Format.OPENCODE,
        Format.COPILOT,
    }
    assert [f for f, _ in found.absent] == [Format.QWEN]
    (line,) = found.unreadable
    assert line.startswith(str(not_a_folder / "sessions")) and "Codex" in line


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    agents = ("CLAUDE", "CODEX", "QWEN", "GEMINI", "OPENCODE", "XDG_DATA_HOME", "COPILOT")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(agents)}
    return subprocess.run(
        [sys.executable, "-m", "transcript_view", *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        cwd=ROOT,
        timeout=120,
    )


def test_check_sessions_checks_every_agents_transcripts(tmp_path: Path) -> None:
    out = _cli(["--check", "--sessions"], every_agent_home(tmp_path))
    assert out.returncode == 1, out.stderr  # the examples have problems on purpose
    for label in ("Claude Code session", "Codex rollout", "Qwen Code session",
                  "Gemini CLI session", "OpenCode session", "Copilot CLI session"):  # fmt: skip
        assert f"({label})" in out.stdout
    assert out.stdout.count("(Claude Code session)") == 2  # its subagent's file too


def test_check_sessions_on_a_machine_with_none_says_where_it_looked(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "GEMINI_CLI_HOME": str(tmp_path)}
    out = _cli(["--check", "--sessions"], env)
    assert out.returncode == 2 and "no agent's sessions on this machine" in out.stderr
    assert str(tmp_path / ".claude" / "projects") in out.stderr
    assert _cli(["--sessions", "x.jsonl"], env).returncode == 2

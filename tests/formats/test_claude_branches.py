"""Branches of a Claude Code session's uuid tree are real branches (issue 26, item 1).

Claude Code writes each `tool_use` of one response on its own assistant line and
parents each `tool_result` on the line holding its own `tool_use`, with `progress`
lines between (CLAUDE_CODE.md, "Parallel tool calls"): the normal shape of every
parallel batch. Only a parent that is neither the line before, nor the line holding
the `tool_use` a result answers, nor a line of the same response starts a branch;
its note says which kind where the file tells. Every session here is also read cut
into one-line batches (the parent in an earlier batch: the fold's), and held to the
plain pass, the definition.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _plain_passes import plain_claude
from _sessions import ClaudeSession

import transcript_view.core.transcript as transcript_module
from transcript_view.core.formats.claude_code import analyse_claude
from transcript_view.core.transcript import Transcript


def _tags(path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[int, list[str]]:
    """The notes of every line: the same whole, cut into one-line batches, and plain."""
    seen = []
    for chunk in (1, 1 << 20):
        monkeypatch.setattr(transcript_module, "READ_CHUNK", chunk)
        for workers in (1, 2):
            with Transcript.open(path) as t:
                seen.append(dict(analyse_claude(t, workers=workers).tags))
    with Transcript.open(path) as t:
        seen.append(dict(plain_claude(t)[0].tags))
    assert all(tags == seen[0] for tags in seen)
    return seen[0]


def _branches(tags: dict[int, list[str]]) -> dict[int, str]:
    return {line: w for line, words in tags.items() for w in words if w.startswith("branches")}


def _call(tid: str) -> dict[str, object]:
    return {"type": "tool_use", "id": tid, "name": "Read", "input": {}}


@pytest.fixture
def session(tmp_path: Path) -> ClaudeSession:
    s = ClaudeSession(tmp_path / "projects" / "-Users-someone-proj")
    s.user("read the three files")
    return s


@pytest.mark.parametrize("size", [2, 3, 7])
@pytest.mark.parametrize("order", ["in order", "reversed"])
@pytest.mark.parametrize("source", [True, False])
def test_a_parallel_batch_with_progress_between_draws_no_branch(
    session: ClaudeSession, monkeypatch: pytest.MonkeyPatch, size: int, order: str, source: bool
) -> None:
    """Results parented on their own calls, `progress` lines between, any order, with or
    without `sourceToolAssistantUUID`: no note, across any batch boundary."""
    calls = [(f"toolu_{k:02d}", "Read", f"file {k}") for k in range(size)]
    turn = list(range(size))
    session.parallel(calls, order=turn[::-1] if order == "reversed" else turn, source=source)
    session.assistant({"type": "text", "text": "all three read"}, msg_id="msg_after")
    session.user("now the next batch")
    session.parallel(calls[:2], msg_id="msg_second")
    tags = _tags(session.write(), monkeypatch)
    assert _branches(tags) == {}
    # The calls after the first are one response, as before.
    assert tags[3] == ["continues the response that starts on line 2"]


def test_lines_of_one_response_parented_on_each_other_are_no_branch(
    session: ClaudeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call written after another's result, parented on the response's first line; a
    result parented on another line of the response that called it: no note."""
    first = session.assistant(_call("toolu_a"), msg_id="msg_x")  # 2
    session.tool_result("toolu_a", "a")["parentUuid"] = first["uuid"]  # 3
    session.assistant(_call("toolu_b"), msg_id="msg_x")["parentUuid"] = first["uuid"]  # 4
    session.tool_result("toolu_b", "b")["parentUuid"] = first["uuid"]  # 5
    tags = _tags(session.write(), monkeypatch)
    assert _branches(tags) == {}


def test_a_prompt_sent_again_after_a_rewind_says_so(
    session: ClaudeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompt = session.lines[0]
    session.assistant({"type": "text", "text": "reading"}, msg_id="msg_1")  # 2
    session.user("no, only the first one")["parentUuid"] = prompt["uuid"]  # 3
    tags = _tags(session.write(), monkeypatch)
    assert _branches(tags) == {
        3: "branches from line 1, not the line before it (a prompt sent again after a rewind)"
    }


def test_a_retry_after_a_failed_api_call_says_so(
    session: ClaudeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompt = session.lines[0]
    session.api_error(1)  # 2
    session.api_error(2)  # 3
    session.assistant({"type": "text", "text": "reading"}, msg_id="msg_1")["parentUuid"] = prompt[
        "uuid"
    ]  # 4
    tags = _tags(session.write(), monkeypatch)
    assert _branches(tags) == {
        4: "branches from line 1, not the line before it "
        "(a retry after the failed API call on line 3)"
    }


def test_a_parent_of_another_turn_is_a_branch_whatever_the_line(
    session: ClaudeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new response parented past the line before; a result parented on a line that is
    neither its call's nor of the response that called it: each a branch."""
    prompt = session.lines[0]
    old = session.tool_use("toolu_old", "Read", {}, msg_id="msg_old")  # 2
    session.tool_result("toolu_old", "old")  # 3
    session.tool_use("toolu_new", "Read", {}, msg_id="msg_new")  # 4
    session.tool_result("toolu_new", "new")["parentUuid"] = old["uuid"]  # 5
    session.assistant({"type": "text", "text": "x"}, msg_id="msg_z")["parentUuid"] = prompt[
        "uuid"
    ]  # 6
    tags = _tags(session.write(), monkeypatch)
    fork = "not the line before it (a rewind, retry or fork)"
    assert _branches(tags) == {
        5: f"branches from line 2, {fork}",
        6: f"branches from line 1, {fork}",
    }

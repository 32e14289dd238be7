"""Which format a file is in, from its first lines; and one clear line when it is none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _sessions import ClaudeSession, numbered, write_codex_rollout
from _support import REFERENCE

from transcript_view.core.formats import Format, NotATranscript, detect
from transcript_view.core.formats.detect import SNIFF_BYTES
from transcript_view.core.report import verify


def test_reference_fixtures_are_reference() -> None:
    path = REFERENCE / "aging.jsonl"
    assert detect(path).format is Format.REFERENCE


def test_a_claude_code_session_and_its_subagent_are_claude_code(tmp_path: Path) -> None:
    s = ClaudeSession(tmp_path)
    s.user("hello")
    s.spill("toolu_01", numbered(100))
    sub = s.subagent("a1b2")
    sub.user("sub task")
    assert detect(s.write()).format is Format.CLAUDE_CODE
    assert detect(sub.write()).format is Format.CLAUDE_CODE


def test_a_session_starting_with_a_summary_line_is_claude_code(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"type": "summary", "summary": "Fix", "leafUuid": "u1"}) + "\n")
    assert detect(path).format is Format.CLAUDE_CODE


def test_a_codex_rollout_is_codex(tmp_path: Path) -> None:
    path = write_codex_rollout(tmp_path / "rollout.jsonl", ["ok"])
    assert detect(path).format is Format.CODEX


def test_an_empty_file_is_an_empty_reference_transcript(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"\n\n")
    assert detect(path).format is Format.REFERENCE


def test_a_first_line_longer_than_what_is_read_is_known_by_its_keys(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    big = {"parentUuid": None, "sessionId": "s", "type": "user", "pad": "x" * (SNIFF_BYTES + 10)}
    path.write_text(json.dumps(big) + "\n")
    assert detect(path).format is Format.CLAUDE_CODE


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("# A README\n\nNot JSON at all.\n", "its first line is not JSON"),
        ('{"name": "x", "value": 1}\n{"name": "y"}\n', "keys name, value"),
        ("[1, 2, 3]\n", "a JSON list"),
    ],
)
def test_a_file_that_is_no_format_is_one_clear_message(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text(text)
    detection = detect(path)
    assert detection.format is None and says in detection.reason
    with pytest.raises(NotATranscript) as info:
        verify(path)
    message = str(info.value)
    assert "not a transcript" in message and "OpenCode or Copilot CLI session" in message
    assert "\n" not in message


def test_forcing_a_format_skips_the_sniffing(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text('{"name": "x"}\n')
    report = verify(path, format=Format.CODEX)
    assert report.format is Format.CODEX and report.markers == 0 and report.errors == 0


def _gemini_chat(messages: int) -> dict[str, object]:
    """An older Gemini CLI chat, `session-*.json` (OTHER_AGENTS.md): one JSON document."""
    return {
        "sessionId": "8d1f6c2a-0000-4000-8000-000000000001",
        "projectHash": "3f" * 32,
        "startTime": "2025-11-02T10:00:00.000Z",
        "lastUpdated": "2025-11-02T10:05:00.000Z",
        "messages": [
            {"id": f"m{i}", "timestamp": "2025-11-02T10:00:00.000Z", "type": "user",
             "content": f"question {i} " + "x" * 200}
            for i in range(messages)
        ],
    }  # fmt: skip


def _refusals(path: Path) -> tuple[str, str]:
    """The one line `--check --json` and the viewer each refuse `path` with (exit 2)."""
    import contextlib
    import io

    from transcript_view.cli import main

    said = []
    for argv in (["--check", "--json", str(path)], [str(path)]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert main(argv) == 2
        assert err.getvalue().count("\n") == 1, err.getvalue()
        said.append(err.getvalue())
        if argv[0] == "--check":
            (row,) = [json.loads(line) for line in out.getvalue().splitlines()]
            assert row == {"transcript": str(path), "error": err.getvalue()[17:-1]}
    return said[0], said[1]


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"name": "x", "items": [1, 2]}, "it is one JSON document, not JSON lines;"),
        ([{"a": 1}, {"b": 2}], "it is one JSON document, not JSON lines;"),
        (
            {"sessionId": "s", "notes": ["x" * 80] * 20_000},  # past the sniff budget
            "it starts like one JSON document written over many lines, not JSON lines",
        ),
    ],
)
def test_a_json_document_is_refused_as_one_not_as_bad_json_lines(
    tmp_path: Path, document: object, says: str
) -> None:
    """Issue 26, item 11: a pretty-printed JSON document is JSON, not JSON lines; say so
    (an older Gemini CLI chat is the one document read: below)."""
    path = tmp_path / "session-2025-11-02T10-00-8d1f6c2a.json"
    path.write_text(json.dumps(document, indent=2))
    assert (path.stat().st_size > SNIFF_BYTES) == ("starts like" in says)
    detection = detect(path)
    assert detection.format is None and says.rstrip(";") in detection.reason
    check, viewer = _refusals(path)
    assert check == viewer and says in check and "its first line is not JSON" not in check


def test_a_file_of_json_lines_whose_first_line_is_bad_is_still_said_so(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{\n"a": 1\n')  # opens like a document, is none
    assert detect(path).reason == "its first line is not JSON"


@pytest.mark.parametrize("kind", ['{"a": 1}', "[1]", "null", "7"])
def test_a_line_whose_type_is_no_string_is_no_crash(tmp_path: Path, kind: str) -> None:
    """A first line whose `type` is an object (unhashable) once crashed the sniffing, and so
    `--check` and `--context`; it is a line of no format, and the next line decides."""
    path = tmp_path / "s.jsonl"
    first = f'{{"payload": {{"type": ["y"]}}, "type": {kind}, "uuid": "u", "v": 1, "timestamp": 1}}'
    path.write_text(first + "\n" + json.dumps({"type": "user", "uuid": "u1", "message": {}}) + "\n")
    assert detect(path).format is Format.CLAUDE_CODE


@pytest.mark.parametrize("messages", [3, 6000], ids=["small", "past-the-sniff-budget"])
def test_an_older_gemini_chat_opens_as_its_messages(tmp_path: Path, messages: int) -> None:
    """Issue 28: the older `session-*.json` chats open, read through a private copy of the
    JSON lines Gemini CLI converts them to (the metadata, then a message a line)."""
    path = tmp_path / "session-2025-11-02T10-00-8d1f6c2a.json"
    path.write_text(json.dumps(_gemini_chat(messages), indent=2))
    assert (path.stat().st_size > SNIFF_BYTES) == (messages > 3)
    detection = detect(path)
    assert detection.format is Format.GEMINI and "older Gemini CLI chat" in detection.reason
    before = sorted(p.name for p in tmp_path.iterdir())
    report = verify(path)
    assert (report.format, report.lines, report.envelopes, report.errors) == (
        Format.GEMINI, messages + 1, messages + 1, 0
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written beside it


def test_an_older_gemini_chat_that_is_cut_short_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "session-2025-11-02T10-00-8d1f6c2a.json"
    path.write_text(json.dumps(_gemini_chat(3), indent=2)[:-40])
    check, viewer = _refusals(path)
    assert check == viewer and "does not parse as JSON" in check

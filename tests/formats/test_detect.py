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
    assert "not a transcript" in message and "Claude Code session" in message
    assert "\n" not in message


def test_forcing_a_format_skips_the_sniffing(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text('{"name": "x"}\n')
    report = verify(path, format=Format.CODEX)
    assert report.format is Format.CODEX and report.markers == 0 and report.errors == 0

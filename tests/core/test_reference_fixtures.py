"""Everything the Raku reference wrote reads, re-encodes, replays and verifies here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _support import REFERENCE, REFERENCE_TRANSCRIPTS

from transcript_view.core.analysis import analyse
from transcript_view.core.artifacts import COULD_NOT_BE_STORED, content_digest
from transcript_view.core.canonical import canonical_json, canonical_string, data_digest
from transcript_view.core.envelopes import Message, ToolDispatched, ToolSettled
from transcript_view.core.markers import MarkerKind, parse_markers
from transcript_view.core.records import OpState
from transcript_view.core.report import verify
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import MarkerState

ALL_JSONL = sorted(p.name for p in REFERENCE.glob("*.jsonl"))


@pytest.mark.parametrize("name", ALL_JSONL)
def test_every_line_reencodes_to_its_original_bytes(name: str) -> None:
    raw_lines = (REFERENCE / name).read_bytes().split(b"\n")
    assert raw_lines[-1] == b"", "every line ends with LF"
    for number, raw in enumerate(raw_lines[:-1], start=1):
        value = json.loads(raw)
        assert canonical_json(value).encode("utf-8") == raw, f"{name} line {number}"


@pytest.mark.parametrize("name", REFERENCE_TRANSCRIPTS)
def test_every_digest_in_the_transcript_verifies(name: str) -> None:
    with Transcript.open(REFERENCE / f"{name}.jsonl") as t:
        envelopes = [e for e in t if not hasattr(e, "kind")]
    tool_contents: dict[str, str] = {}
    checked = 0
    for env in envelopes:
        if isinstance(env, ToolDispatched):
            assert data_digest(env.arguments) == env.arguments_digest
            checked += 1
        elif isinstance(env, Message) and env.role == "tool":
            tool_contents[env.tool_call_id or ""] = env.content
    for env in envelopes:
        if isinstance(env, ToolSettled) and env.result_digest is not None:
            assert env.result_digest in {data_digest(c) for c in tool_contents.values()}
            checked += 1
    assert checked >= 2


def _line(lines: list[str], prefix: str) -> str:
    return next(line for line in lines if line.startswith(prefix))


def test_jsonfast_escapes_table() -> None:
    rows = (REFERENCE / "jsonfast-escapes.txt").read_text(encoding="utf-8").rstrip("\n").split("\n")
    assert len(rows) == 13
    for row in rows:
        case, codepoints, rendering = row.split("\t")
        text = "".join(chr(int(cp[2:], 16)) for cp in codepoints.split())
        if case.startswith("hazard-ctrl+mark"):
            # The reference NFC-composes after escaping: `\u000c` + U+0327 became
            # `\u000ç`, which is not JSON. We render the code points as given,
            # and a reader meets the reference's rendering as a malformed line.
            assert canonical_string(text) != rendering
            with pytest.raises(json.JSONDecodeError):
                json.loads(rendering)
            continue
        if case == "nfd-input-composed":
            continue  # the reference composed the input; Python keeps what it is given
        assert canonical_string(text) == rendering, case


def test_basic_verifies_with_a_chars_differ_note_only() -> None:
    report = verify(REFERENCE / "basic.jsonl")
    assert (report.lines, report.envelopes, report.markers, report.verified) == (11, 11, 1, 1)
    assert [f.kind for f in report.findings] == ["chars-differ"]
    note = report.findings[0]
    assert note.line == 6 and note.file == "66613832-6465-4236-b962-383635383133.txt"
    assert "264,170" in note.message


def test_many_verifies_clean_and_agrees_with_its_inputs() -> None:
    report = verify(REFERENCE / "many.jsonl")
    assert report.findings == []
    assert (report.markers, report.verified) == (6, 6)
    inputs = [
        json.loads(line)
        for line in (REFERENCE / "many.inputs.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert report.analysis is not None
    by_call = {op.call_id: op for op in report.analysis.operations}
    for item in inputs:
        text = (REFERENCE / f"many.input.{item['name']}.txt").read_bytes().decode("utf-8")
        assert content_digest(text) == item["digest"]
        op = by_call[item["call-id"]]
        if item["chars"] > 16384:
            assert op.artifact is not None
            assert op.artifact["digest"] == item["digest"]
            assert op.artifact["bytes"] == item["bytes"]
        else:
            assert op.artifact is None, "exactly 16,384 graphemes is left alone"


def test_writefail_gives_not_stored_notes_and_no_error() -> None:
    report = verify(REFERENCE / "writefail.jsonl")
    assert [f.kind for f in report.findings] == ["not-stored"]
    assert report.errors == 0
    assert report.states == {0: MarkerState.COULD_NOT_BE_STORED}
    # The FILE standing where the directory would be is not an orphan, not an error.
    assert (REFERENCE / "writefail.artifacts").is_file()
    assert report.orphans == []


def test_writefail_marker_is_the_could_not_be_stored_form() -> None:
    text = (REFERENCE / "writefail-marker.txt").read_bytes().decode("utf-8")
    (marker,) = parse_markers(text)
    assert marker.kind is MarkerKind.COULD_NOT_BE_STORED
    assert marker.why == COULD_NOT_BE_STORED
    source = (REFERENCE / "writefail.input.txt").read_bytes().decode("utf-8")
    assert marker.digest == content_digest(source)
    assert marker.bytes == len(source.encode("utf-8")) == 60308


def test_nosession_marker_is_the_nowhere_to_put_it_form() -> None:
    text = (REFERENCE / "nosession-marker.txt").read_bytes().decode("utf-8")
    (marker,) = parse_markers(text)
    assert marker.kind is MarkerKind.NOT_STORED
    assert marker.file is None and marker.elided == 23060


@pytest.mark.parametrize("name", ["aging", "compaction"])
def test_reference_transcripts_verify_without_errors(name: str) -> None:
    report = verify(REFERENCE / f"{name}.jsonl")
    assert report.errors == 0 and report.warnings == 0


def test_every_operation_in_the_references_is_settled() -> None:
    for name in REFERENCE_TRANSCRIPTS:
        with Transcript.open(REFERENCE / f"{name}.jsonl") as t:
            analysis = analyse(t)
        assert analysis.operations, name
        assert {op.state for op in analysis.operations} == {OpState.SETTLED}, name
        assert all(op.message_line is not None for op in analysis.operations)


def _replayed_contents(path: Path) -> list[tuple[str, str]]:
    with Transcript.open(path) as t:
        analysis = analyse(t)
        out = []
        for entry in analysis.replay:
            env = t.parse(entry.line)
            if entry.stub is not None:
                content = entry.stub
            elif entry.summary:
                content = env.payload["summary"]  # type: ignore[union-attr]
            else:
                content = env.content  # type: ignore[union-attr]
            out.append((entry.role, content))
        return out


def test_replay_of_basic_carries_what_the_second_request_carried() -> None:
    round2 = json.loads((REFERENCE / "basic.round2-tool-contents.json").read_text("utf-8"))
    tools = [c for role, c in _replayed_contents(REFERENCE / "basic.jsonl") if role == "tool"]
    assert tools == round2


def test_replay_of_compaction_keeps_the_sysprompt_and_splices_the_summary() -> None:
    replay = _replayed_contents(REFERENCE / "compaction.jsonl")
    roles = [role for role, _ in replay]
    assert roles[0] == "system" and replay[0][1] == "SYSPROMPT"
    assert replay[1][0] == "user" and replay[1][1].startswith("[Conversation summary")
    assert len(replay) < 10


def test_replay_of_aging_replaces_the_elided_result_with_its_stub() -> None:
    replay = _replayed_contents(REFERENCE / "aging.jsonl")
    stubs = [c for role, c in replay if c.startswith("[elided by the harness")]
    assert len(stubs) == 1

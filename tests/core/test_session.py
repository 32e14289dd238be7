"""Writing transcripts: layout, the settle path, and a round trip through verification."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _support import REFERENCE, graphemes_without_gb9c

from transcript_view.core import graphemes
from transcript_view.core.artifacts import NOWHERE_TO_PUT_IT, Store, artifact_dir_for
from transcript_view.core.canonical import canonical_json, data_digest
from transcript_view.core.report import verify
from transcript_view.core.session import Session, error_summary, observe_result

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


def test_create_writes_a_canonical_session_meta_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with Session.create(path, {"app": "test", "z": [1, {"b": 2, "a": "é😀"}]}):
        pass
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    (env,) = _lines(path)
    assert canonical_json(env).encode() + b"\n" == raw, "sorted keys, reference escaping"
    assert env["type"] == "session-meta" and env["v"] == 1
    assert TS.match(str(env["ts"])) and UUID4.match(str(env["id"]))
    assert b"\\uD83D\\uDE00" in raw


def test_create_refuses_a_transcript_that_has_content(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("{}\n")
    with pytest.raises(FileExistsError):
        Session.create(path)
    assert path.read_text() == "{}\n"


def test_settle_of_an_oversized_result_follows_the_reference_order(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    content = "".join(f"line {i}: 日本語 e\u0301 👩\u200d💻\r\n" for i in range(3000))
    with Session.create(path, {"t": 1}) as s:
        op = s.append_tool_dispatched("c1", "fs_read", '{"path":"x"}', run_id="r", round=1)
        result = s.settle(op, "c1", content, duration=0.1234567)
    envs = _lines(path)
    assert [e["type"] for e in envs] == [
        "session-meta",
        "tool-dispatched",
        "message",
        "tool-settled",
    ]
    message, settle = envs[2]["payload"], envs[3]["payload"]
    assert isinstance(message, dict) and isinstance(settle, dict)
    # One string, four places: returned, written, digested.
    assert message["content"] == result.content
    assert settle["result-digest"] == data_digest(result.content) == result.result_digest
    assert settle["duration"] == 0.123457
    artifact = settle["artifact"]
    stored = artifact_dir_for(path) / artifact["file"]
    assert stored.read_bytes() == content.encode()
    assert artifact["chars"] == graphemes.count(content)
    assert artifact["elided-chars"] == artifact["chars"] - 16384
    assert artifact["bytes"] == len(content.encode())
    assert f"full result: {op}.txt sha256 {artifact['digest']}" in result.content
    report = verify(path)
    assert report.findings == [] and report.verified == 1


def test_a_result_exactly_at_the_limit_is_left_alone_and_writes_no_directory(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    with Session.create(path, limit=10) as s:
        op = s.append_tool_dispatched("c", "t", "{}")
        result = s.settle(op, "c", "x" * 10)
    assert result.content == "x" * 10 and result.artifact == {}
    assert not artifact_dir_for(path).exists()
    with Session.create(tmp_path / "over.jsonl", limit=10) as s:
        op = s.append_tool_dispatched("c", "t", "{}")
        result = s.settle(op, "c", "x" * 11)
    assert result.artifact["elided-chars"] == 1


def test_a_failed_write_is_shielded(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "run.jsonl"
    artifact_dir_for(path).write_text("a file where the directory should be\n")
    with Session.create(path, limit=100) as s:
        op = s.append_tool_dispatched("c", "t", "{}")
        result = s.settle(op, "c", "y" * 500)
    assert "full result could not be stored, sha256" in result.content
    assert result.warning is not None and result.artifact == {}
    assert any("could not be written" in r.message for r in caplog.records)
    settle = _lines(path)[-1]["payload"]
    assert isinstance(settle, dict)
    assert settle["outcome"] == "completed" and "artifact" not in settle
    report = verify(path)
    assert [f.kind for f in report.findings] == ["not-stored"]


def test_an_error_result_settles_failed_with_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with Session.create(path, limit=100) as s:
        op = s.append_tool_dispatched("c", "sh", "{}")
        s.settle(op, "c", "\n  error: boom  \n" + "z" * 300, is_error=True)
    message, settle = _lines(path)[-2]["payload"], _lines(path)[-1]["payload"]
    assert isinstance(message, dict) and isinstance(settle, dict)
    assert message["is-error"] is True
    assert settle["outcome"] == "failed" and settle["error"] == "error: boom"
    assert error_summary("x" * 300) == "x" * 200 + "…"


def _cut_without_gb9c(text: str, head_n: int, tail_n: int) -> tuple[int, str, str]:
    clusters = graphemes_without_gb9c(text)
    tail = "".join(clusters[len(clusters) - tail_n :]) if tail_n > 0 else ""
    return len(clusters), "".join(clusters[:head_n]), tail


class _Broken(Store):
    def store(self, op_id: str, content: str, *, chars: int | None = None) -> object:  # type: ignore[override]
        raise OSError("disk full")


@pytest.mark.parametrize(
    ("name", "store"),
    [("nosession", None), ("writefail", _Broken("/nonexistent"))],
)
def test_unstored_excerpts_equal_the_references_byte_for_byte(
    name: str, store: Store | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the reference's segmentation (no GB9c), our settle seam writes the reference's bytes."""
    source = (REFERENCE / f"{name}.input.txt").read_bytes().decode("utf-8")
    expected = (REFERENCE / f"{name}-marker.txt").read_bytes().decode("utf-8")
    monkeypatch.setattr(graphemes, "cut", _cut_without_gb9c)
    observed = observe_result(source, 16384, "op", store)
    assert observed.content == expected
    if store is None:
        assert NOWHERE_TO_PUT_IT in observed.content


def test_appending_after_close_raises(tmp_path: Path) -> None:
    s = Session.create(tmp_path / "r.jsonl")
    s.close()
    with pytest.raises(ValueError):
        s.append_message("user", "late")


def test_a_session_round_trip_reads_back_and_verifies_clean(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with Session.create(path, {"app": "rt"}, limit=64) as s:
        s.append_message("system", "sys", sticky=True, sysprompt=True)
        first = s.append_message("user", "hi")
        calls = [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]
        s.append_message("assistant", "calling", tool_calls=calls)
        op = s.append_tool_dispatched("c1", "t", "{}")
        s.settle(op, "c1", "big " * 100)
        s.append_compaction("summary", first, tokens_before=10, tokens_after=2)
        s.append_message("assistant", "done")
    report = verify(path)
    assert report.findings == []
    assert (report.envelopes, report.markers, report.verified) == (9, 1, 1)
    assert report.analysis is not None
    assert [e.role for e in report.analysis.replay] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]


@pytest.mark.parametrize(
    ("content", "limit", "stored", "elided"),
    [
        ("e\u0301" * 4, 4, False, 0),
        ("e\u0301" * 5, 4, True, 1),
        ("e\u0301", 1, False, 0),
        ("ab", 1, True, 1),
        ("a\r\nb", 3, False, 0),
        ("a\r\nb", 2, True, 1),
    ],
)
def test_the_threshold_counts_graphemes_on_the_store_path(
    tmp_path: Path, content: str, limit: int, stored: bool, elided: int
) -> None:
    observed = observe_result(content, limit, "op", Store(tmp_path / "s.artifacts"))
    assert bool(observed.artifact) is stored
    if stored:
        assert observed.artifact["elided-chars"] == elided
        assert observed.artifact["chars"] == graphemes.count(content)
    else:
        assert observed.content == content
        assert not (tmp_path / "s.artifacts").exists()

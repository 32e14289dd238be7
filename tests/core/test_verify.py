"""Verification findings: one test per kind, and the `--check` contract."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from transcript_view.cli import main
from transcript_view.core.artifacts import artifact_dir_for
from transcript_view.core.check import run_check
from transcript_view.core.findings import KINDS
from transcript_view.core.report import verify
from transcript_view.core.session import Session
from transcript_view.core.verification import MarkerState

CONTENT = "".join(f"{i:05d}: the quick brown fox 日本語\n" for i in range(400))


def make(tmp_path: Path, results: int = 1, name: str = "run.jsonl") -> tuple[Path, list[Path]]:
    """A transcript with `results` stored artifacts (limit 100)."""
    path = tmp_path / name
    files = []
    with Session.create(path, {"t": 1}, limit=100) as s:
        for i in range(results):
            calls = [
                {"id": f"c{i}", "type": "function", "function": {"name": "t", "arguments": "{}"}}
            ]
            s.append_message("assistant", "", tool_calls=calls)
            op = s.append_tool_dispatched(f"c{i}", "t", "{}")
            settled = s.settle(op, f"c{i}", CONTENT + str(i))
            files.append(artifact_dir_for(path) / settled.artifact["file"])
    return path, files


def kinds(path: Path) -> list[str]:
    return [f.kind for f in verify(path).findings]


def test_clean(tmp_path: Path) -> None:
    path, _ = make(tmp_path, 2)
    report = verify(path)
    assert report.findings == [] and (report.markers, report.verified) == (2, 2)


def test_missing_artifact(tmp_path: Path) -> None:
    path, files = make(tmp_path)
    files[0].unlink()
    report = verify(path)
    assert [f.kind for f in report.findings] == ["missing-artifact"]
    assert report.findings[0].file == files[0].name and report.states[0] is MarkerState.MISSING


def test_missing_directory(tmp_path: Path) -> None:
    path, files = make(tmp_path)
    files[0].unlink()
    files[0].parent.rmdir()
    assert kinds(path) == ["missing-artifact"]


def test_size_mismatch_of_a_truncated_artifact(tmp_path: Path) -> None:
    path, files = make(tmp_path)
    data = files[0].read_bytes()
    files[0].write_bytes(data[: len(data) // 2])
    assert kinds(path) == ["size-mismatch"]


def test_digest_mismatch(tmp_path: Path) -> None:
    path, files = make(tmp_path)
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 1
    files[0].write_bytes(bytes(data))
    report = verify(path)
    assert [f.kind for f in report.findings] == ["digest-mismatch"]
    assert report.states[0] is MarkerState.DIGEST_MISMATCH


def _rewrite_line(path: Path, number: int, change: Callable[[dict], None]) -> None:  # type: ignore[type-arg]
    from transcript_view.core.canonical import canonical_json

    lines = path.read_bytes().split(b"\n")
    obj = json.loads(lines[number - 1])
    change(obj)
    lines[number - 1] = canonical_json(obj).encode()
    path.write_bytes(b"\n".join(lines))


def test_excerpt_mismatch_when_the_head_the_model_saw_is_not_the_file(tmp_path: Path) -> None:
    path, files = make(tmp_path)
    # Rewrite the artifact with the same size and a matching digest in the marker and
    # key, but other first bytes: only the excerpt comparison can notice.
    import hashlib

    data = bytearray(files[0].read_bytes())
    data[0:5] = b"XXXXX"
    files[0].write_bytes(bytes(data))
    new = hashlib.sha256(bytes(data)).hexdigest()
    text = path.read_text(encoding="utf-8")
    old = next(line for line in text.split("\n") if '"artifact"' in line)
    old_digest = json.loads(old)["payload"]["artifact"]["digest"]
    path.write_text(text.replace(old_digest, new), encoding="utf-8")
    found = kinds(path)
    assert "excerpt-mismatch" in found and "digest-mismatch" not in found


def test_metadata_mismatch_between_marker_and_key(tmp_path: Path) -> None:
    path, _ = make(tmp_path)
    _rewrite_line(path, 5, lambda o: o["payload"]["artifact"].__setitem__("bytes", 1))
    assert kinds(path) == ["metadata-mismatch"]


def test_result_digest_mismatch(tmp_path: Path) -> None:
    path, _ = make(tmp_path)
    _rewrite_line(path, 5, lambda o: o["payload"].__setitem__("result-digest", "0" * 64))
    assert kinds(path) == ["result-digest-mismatch"]


@pytest.mark.parametrize("bad", ["../etc/passwd", "/etc/passwd", "a\\b.txt", "..", "x" * 300])
def test_unsafe_names_are_reported_and_never_opened(tmp_path: Path, bad: str) -> None:
    path, files = make(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f"full result: {files[0].name}", f"full result: {bad}"), "utf-8")
    report = verify(path)
    found = [f.kind for f in report.findings]
    assert "unsafe-name" in found
    assert report.states[0] is MarkerState.UNSAFE_NAME
    assert "missing-artifact" not in found


@pytest.mark.parametrize("what", ["directory", "fifo", "symlink-out", "device"])
def test_unreadable_artifacts(tmp_path: Path, what: str) -> None:
    path, files = make(tmp_path)
    target = files[0]
    target.unlink()
    if what == "directory":
        target.mkdir()
    elif what == "fifo":
        os.mkfifo(target)
    elif what == "device":
        os.symlink("/dev/null", target)
    else:
        (tmp_path / "outside.txt").write_text(CONTENT)
        os.symlink(tmp_path / "outside.txt", target)
    report = verify(path)
    assert [f.kind for f in report.findings] == ["unreadable-artifact"]
    assert report.states[0] is MarkerState.UNREADABLE


def test_a_symlink_inside_the_directory_is_followed(tmp_path: Path) -> None:
    path, files = make(tmp_path)
    real = files[0].with_name("real.bin")
    files[0].rename(real)
    os.symlink(real.name, files[0])
    found = kinds(path)
    assert found == ["orphan-artifact"]  # real.bin itself is named by nothing


def test_orphans_and_partial_writes(tmp_path: Path) -> None:
    path, files = make(tmp_path)
    (files[0].parent / "deadbeef.txt").write_text("orphan")
    (files[0].parent / ".tmp-x.txt.1.ab.partial").write_text("half")
    assert sorted(kinds(path)) == ["orphan-artifact", "partial-write"]


def test_quoted_markers_in_user_messages_are_not_verified(tmp_path: Path) -> None:
    path, files = make(tmp_path)
    tool_line = json.loads(path.read_bytes().split(b"\n")[3])
    from transcript_view.core.markers import parse_markers

    (found,) = parse_markers(tool_line["payload"]["content"])
    marker = found.text
    with open(path, "a", encoding="utf-8") as fh:
        from transcript_view.core.canonical import canonical_json

        fh.write(
            canonical_json(
                {
                    "id": "q",
                    "payload": {
                        "role": "user",
                        "content": "look:\n" + marker.replace(files[0].stem, "nope"),
                    },
                    "ts": "t",
                    "type": "message",
                    "v": 1,
                }
            )
            + "\n"
        )
    report = verify(path)
    assert report.findings == [] and report.markers == 1
    assert report.analysis is not None
    assert [s.quoted for s in report.analysis.sites] == [False, True]


def test_two_markers_naming_one_file_hash_it_once_and_both_verify(tmp_path: Path) -> None:
    path, _ = make(tmp_path, 1)
    lines = path.read_bytes().split(b"\n")
    # Append a second tool exchange that quotes the very same artifact (a replay of it).
    with Session(path, open(path, "ab"), limit=100) as s:
        calls = [{"id": "cz", "type": "function", "function": {"name": "t", "arguments": "{}"}}]
        s.append_message("assistant", "", tool_calls=calls)
        op = s.append_tool_dispatched("cz", "t", "{}")
        content = json.loads(lines[3])["payload"]["content"]
        s.append_message("tool", content, tool_call_id="cz")
        from transcript_view.core.canonical import data_digest

        s.append_tool_settled(op, "completed", result_digest=data_digest(content))
    report = verify(path)
    assert report.verified == 2 and report.errors == 0


def test_every_kind_in_the_vocabulary_has_a_severity() -> None:
    assert set(KINDS) == {
        "missing-artifact",
        "digest-mismatch",
        "size-mismatch",
        "excerpt-mismatch",
        "metadata-mismatch",
        "result-digest-mismatch",
        "unsafe-name",
        "unreadable-artifact",
        "malformed-line",
        "unreadable-compressed",
        "torn-tail",
        "orphan-artifact",
        "partial-write",
        "unsettled-operation",
        "not-stored",
        "chars-differ",
        "path-mismatch",
        "sidecar-not-json",
        "output-capped",
        "inline-duplicate",
        "cleared-result",
        "expired-artifact",
    }


# -- the --check contract ------------------------------------------------------------


def test_check_exit_codes(tmp_path: Path) -> None:
    clean, _ = make(tmp_path / "a", 1) if (tmp_path / "a").mkdir() is None else (None, None)
    broken, files = make(tmp_path / "b", 1) if (tmp_path / "b").mkdir() is None else (None, [])
    files[0].unlink()
    assert run_check([clean], as_json=False, strict=False, out=io.StringIO()) == 0
    assert run_check([broken], as_json=False, strict=False, out=io.StringIO()) == 1
    assert run_check([clean, broken], as_json=False, strict=False, out=io.StringIO()) == 1
    (clean.parent / "run.artifacts" / "orphan.txt").write_text("x")
    assert run_check([clean], as_json=False, strict=False, out=io.StringIO()) == 0
    assert run_check([clean], as_json=False, strict=True, out=io.StringIO()) == 1
    assert main(["--check", str(tmp_path / "nope.jsonl")]) == 2
    assert main(["--check", str(tmp_path)]) == 1  # the tree: a/run.jsonl and b/run.jsonl
    (tmp_path / "empty").mkdir()
    assert main(["--check", str(tmp_path / "empty")]) == 2
    assert main(["--json", str(clean)]) == 2


def test_check_json_shape(tmp_path: Path) -> None:
    path, files = make(tmp_path)
    files[0].unlink()
    out = io.StringIO()
    run_check([path, path], as_json=True, strict=False, out=out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(rows) == 2
    row = rows[0]
    assert set(row) == {
        "transcript",
        "format",
        "artifact_dir",
        "lines",
        "envelopes",
        "markers",
        "verified",
        "matched",
        "present",
        "expired",
        "badges",
        "findings",
    }
    assert [(b["line"], b["file"], b["state"]) for b in row["badges"]] == [
        (4, files[0].name, "missing"),
        *[(b["line"], b["file"], "verified") for b in row["badges"][1:]],
    ]
    assert row["markers"] == len(row["badges"])
    assert row["findings"] == [
        {
            "kind": "missing-artifact",
            "severity": "error",
            "line": 4,
            "file": files[0].name,
            "message": row["findings"][0]["message"],
        }
    ]


def _json_check(paths: list[Path], jobs: int = 1) -> tuple[int, list[dict[str, object]]]:
    out = io.StringIO()
    status = run_check(paths, as_json=True, strict=False, out=out, jobs=jobs)
    return status, [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("jobs", [1, 2])
def test_check_json_has_one_object_per_path_in_order_a_refusal_included(
    tmp_path: Path, jobs: int
) -> None:
    """Issue 26: a PATH that is no transcript had no object, so a script could not match
    objects to PATHs. Each has one now, in PATH order, with the exit status as before."""
    path, _ = make(tmp_path)
    other = tmp_path / "notes.jsonl"
    other.write_text("hello\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    paths = [empty, path, other, tmp_path / "gone.jsonl", path]
    status, rows = _json_check(paths, jobs)
    assert status == 2
    assert [row["transcript"] for row in rows] == [str(p) for p in paths]
    refusals = [row for row in rows if "error" in row]
    assert [set(row) for row in refusals] == [{"transcript", "error"}] * 3
    assert "no .jsonl files" in str(refusals[0]["error"])
    assert "not a transcript" in str(refusals[1]["error"])
    assert "no such file" in str(refusals[2]["error"])
    assert _json_check([path])[0] == 0


def test_every_json_key_is_in_the_readmes_schema(tmp_path: Path) -> None:
    """What a script reads is documented: every key `--check --json` writes, nested ones
    and a refusal's included, is named in the README's schema of it."""
    path, files = make(tmp_path)
    files[0].unlink()
    _, rows = _json_check([path, tmp_path / "gone.jsonl"])
    keys: set[str] = set()
    for row in rows:
        keys.update(row)
        for nested in ("badges", "findings"):
            for item in row.get(nested, []):  # type: ignore[attr-defined]
                keys.update(item)
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    schema = readme[readme.index("- `--json`: one object per line") :]
    schema = schema[: schema.index("\n- Nothing is ever written")]
    assert {"present", "error", "start", "state"} <= keys
    assert [k for k in sorted(keys) if f'"{k}"' not in schema] == []


def test_check_plain_output(tmp_path: Path) -> None:
    path, files = make(tmp_path)
    files[0].unlink()
    out = io.StringIO()
    run_check([path], as_json=False, strict=False, out=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"{path}: 5 envelopes on 5 lines, 1 marker, 0 verified; 1 error,")
    assert lines[1].startswith(f"  error   missing-artifact line 4, {files[0].name}: ")


def test_check_never_writes(tmp_path: Path) -> None:
    path, files = make(tmp_path, 2)
    files[0].unlink()
    (files[1].parent / ".tmp-z.txt.1.a.partial").write_text("half")

    def snapshot() -> dict[str, tuple[bytes, int]]:
        return {
            str(p): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(tmp_path.rglob("*"))
            if p.is_file()
        }

    before = snapshot()
    run_check([path], as_json=True, strict=True, out=io.StringIO())
    assert snapshot() == before


def test_checking_artifacts_in_worker_processes_finds_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import transcript_view.core.verification as verify_module
    path, files = make(tmp_path, 3)
    data = bytearray(files[1].read_bytes())
    data[7] ^= 1
    files[1].write_bytes(bytes(data))
    serial = verify(path)
    monkeypatch.setattr(verify_module, "PARALLEL_CHECK_BYTES", 0)
    parallel = verify(path, workers=2)
    assert parallel.findings == serial.findings
    assert parallel.states == serial.states and parallel.verified == serial.verified == 2

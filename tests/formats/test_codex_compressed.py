"""Codex's compressed rollouts (`rollout-*.jsonl.zst`): read, checked and listed as plain ones.

Every file here is compressed by the test with `zstandard`, as Codex writes it
(`_zstd`); nothing is mocked: the reader decompresses into its private copy,
`--check` runs as a user runs it, and the session folder is compared before
and after to see that nothing was written beside the session.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from _sessions import codex_chars_truncated, codex_lines_omitted, numbered, write_codex_rollout
from _zstd import bomb, compress, compress_file, snapshot

from transcript_view.cli import main
from transcript_view.core import compressed
from transcript_view.core.check import run_check, transcripts_in
from transcript_view.core.compressed import CompressedError, Inflated, decoder, read_head
from transcript_view.core.formats.detect import Format, detect
from transcript_view.core.formats.sessions import list_sessions, tree_format
from transcript_view.core.report import verify
from transcript_view.core.transcript import Transcript, TranscriptError

NAME = "rollout-2026-01-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl"
#: Lines of `_rollout`: four to start, a call and its output each, the answer.
LINES = 21


def _backports() -> ModuleType | None:
    try:
        from backports import zstd  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return None
    return zstd  # type: ignore[no-any-return, unused-ignore]


#: Each binding the reader can use: zstandard's, and the standard library's interface
#: (`compression.zstd` on 3.14+, its backport before), which 3.14+ prefers.
BINDINGS = [
    pytest.param(None, id="default"),
    pytest.param("zstandard", id="zstandard"),
    pytest.param(
        "stdlib",
        id="stdlib-interface",
        marks=pytest.mark.skipif(
            compressed.stdlib_zstd() is None and _backports() is None,
            reason="neither compression.zstd nor its backport is installed",
        ),
    ),
]


def _module(binding: str | None) -> ModuleType | None:
    if binding == "stdlib":
        return compressed.stdlib_zstd() or _backports()
    return None


@pytest.fixture(params=BINDINGS)
def binding(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Run the test with each binding as the one `core.compressed` picks."""
    name: str | None = request.param
    if name == "zstandard":
        monkeypatch.setattr(compressed, "stdlib_zstd", lambda: None)
    elif name == "stdlib":
        module = _module(name)
        monkeypatch.setattr(compressed, "stdlib_zstd", lambda: module)
    return name


def _day(root: Path) -> Path:
    day = root / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    return day


def _rollout(day: Path, name: str = NAME) -> Path:
    """A rollout of about 1.5 MB (many zstd blocks), with cuts of both kinds."""
    outputs = [numbered(3000, 60 + i) for i in range(8)]
    outputs[2] = codex_lines_omitted(300)
    outputs[5] = codex_chars_truncated(4321)
    return write_codex_rollout(day / name, outputs)


def _check(path: Path, *, as_json: bool) -> tuple[int, str]:
    out = io.StringIO()
    status = run_check([path], as_json=as_json, strict=False, out=out, jobs=1)
    return status, out.getvalue()


def _temp_copies() -> set[str]:
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("transcript-view-")}


# -- the decoder ---------------------------------------------------------------------------------


def _decode(blob: bytes, tmp_path: Path, module: ModuleType | None, step: int = 1 << 16) -> bytes:
    path = tmp_path / "blob.zst"
    path.write_bytes(blob)
    fd = os.open(path, os.O_RDONLY)
    try:
        stream = decoder(fd, module)
        out = bytearray()
        while piece := stream.read(step):
            assert len(piece) <= step
            out += piece
        return bytes(out)
    finally:
        os.close(fd)


@pytest.mark.parametrize("binding", ["zstandard", "stdlib"])
def test_each_binding_reads_frames_skippable_frames_and_empty_frames_alike(
    binding: str, tmp_path: Path
) -> None:
    if binding == "stdlib" and _module(binding) is None:
        pytest.skip("neither compression.zstd nor its backport is installed")
    module = _module(binding)
    data = numbered(20000)  # 1.2 MB: blocks and frames of every size
    raw = data.encode()
    skippable = b"\x50\x2a\x4d\x18" + (5).to_bytes(4, "little") + b"hello"
    for blob in (
        compress(raw),
        compress(raw, frames=7),
        skippable + compress(raw, frames=2),
        compress(raw) + compress(b""),
    ):
        assert compressed.is_zstd(blob)
        assert _decode(blob, tmp_path, module) == raw
        assert _decode(blob, tmp_path, module, step=1000) == raw
    assert _decode(compress(b""), tmp_path, module) == b""


@pytest.mark.parametrize("binding", ["zstandard", "stdlib"])
@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda b: b[: len(b) // 2], "cut short"),
        (lambda b: b[:-1], "cut short"),
        (lambda b: b[:4], "cut short"),
        (lambda b: b + b"trailing bytes", "corrupt"),
        (lambda b: b[:4] + b"\xff" * 32, "corrupt"),
    ],
    ids=["half", "last-byte", "magic-only", "trailing-garbage", "bad-header"],
)
def test_each_binding_says_when_a_stream_is_cut_short_or_corrupt(
    binding: str, damage: Callable[[bytes], bytes], words: str, tmp_path: Path
) -> None:
    if binding == "stdlib" and _module(binding) is None:
        pytest.skip("neither compression.zstd nor its backport is installed")
    raw = numbered(20000).encode()
    with pytest.raises(CompressedError, match=words):
        _decode(damage(compress(raw)), tmp_path, _module(binding))


def test_a_head_is_read_without_decompressing_the_rest(tmp_path: Path) -> None:
    raw = numbered(20000).encode()
    path = tmp_path / "x.zst"
    path.write_bytes(compress(raw))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_head(fd, 1000) == (raw[:1000], False)
        assert read_head(fd, len(raw)) == (raw, True)
    finally:
        os.close(fd)
    path.write_bytes(compress(raw)[: len(compress(raw)) // 2])
    fd = os.open(path, os.O_RDONLY)
    try:
        head, complete = read_head(fd, len(raw))
    finally:
        os.close(fd)
    assert complete and head and head.endswith(b"\n") and raw.startswith(head)


# -- a compressed rollout is the rollout -----------------------------------------------------------


def test_a_compressed_rollout_checks_exactly_as_its_plain_file(
    binding: str | None, tmp_path: Path
) -> None:
    plain = _rollout(_day(tmp_path / "plain"))
    packed = compress_file(_rollout(_day(tmp_path / "packed")))
    assert detect(packed).format is Format.CODEX
    for as_json in (False, True):
        status, want = _check(plain, as_json=as_json)
        got_status, got = _check(packed, as_json=as_json)
        assert (got_status, got.replace(str(packed), str(plain))) == (status, want)
    row = json.loads(_check(packed, as_json=True)[1])
    assert row["transcript"] == str(packed) and row["format"] == "codex"
    assert row["markers"] == 2 and row["artifact_dir"] is None


def test_a_compressed_rollout_reads_line_for_line_as_the_plain_one(tmp_path: Path) -> None:
    plain = _rollout(tmp_path)
    packed = compress_file(plain, keep=True, frames=3)
    with Transcript.open(plain) as a, Transcript.open(packed) as b:
        assert b.compressed and not a.compressed
        assert b.line_count == a.line_count and b.file_size() == a.file_size()
        assert list(b.raw_lines()) == list(a.raw_lines())
        assert b.source_findings() == []


def test_the_copy_is_private_never_beside_the_session_and_gone_after_close(tmp_path: Path) -> None:
    day = _day(tmp_path)
    packed = compress_file(_rollout(day))
    before, temps = snapshot(tmp_path), _temp_copies()
    t = Transcript(packed)
    copy = t.copy_path
    assert copy is not None and copy.exists()
    assert copy.parent.parent == Path(tempfile.gettempdir()).resolve() or (
        copy.parent.parent == Path(tempfile.gettempdir())
    )
    assert stat.S_IMODE(copy.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert tmp_path not in copy.parents
    t.build_index()
    assert t.line_count == LINES
    t.close()
    assert not copy.exists() and not copy.parent.exists()
    assert _temp_copies() <= temps  # (a killed process's stale copy may be swept)
    # --check, the listing and the JSON answer write nothing anywhere either.
    _check(packed, as_json=True)
    list_sessions(tmp_path / "sessions", Format.CODEX)
    assert snapshot(tmp_path) == before
    assert _temp_copies() <= temps  # (a killed process's stale copy may be swept)


def test_a_copy_left_by_a_killed_process_is_removed_by_the_next_open(tmp_path: Path) -> None:
    packed = compress_file(_rollout(tmp_path))
    code = (
        "import os, signal, sys; from transcript_view.core.transcript import Transcript; "
        "t = Transcript(sys.argv[1]); t.build_index(); print(t.copy_path, flush=True); "
        "os.kill(os.getpid(), signal.SIGKILL)"
    )
    killed = subprocess.run(
        [sys.executable, "-c", code, str(packed)], capture_output=True, text=True, timeout=60
    )
    assert killed.returncode == -signal.SIGKILL
    left = Path(killed.stdout.strip())
    assert left.exists()  # SIGKILL: nothing could remove it then
    alive = Path(tempfile.mkdtemp(prefix=f"{compressed.PREFIX}{os.getppid()}-"))
    try:
        with Transcript(packed):
            assert not left.parent.exists()
            assert alive.exists()  # its process is alive: kept
    finally:
        alive.rmdir()


def test_a_closed_compressed_transcript_refuses_to_read_instead_of_failing_oddly(
    tmp_path: Path,
) -> None:
    t = Transcript.open(compress_file(_rollout(tmp_path)))
    t.close()
    with pytest.raises(TranscriptError, match="decompressed copy removed"):
        t.raw_line(1)


def test_a_compressed_transcript_sent_to_another_process_reads_its_copy_and_leaves_it(
    tmp_path: Path,
) -> None:
    with Transcript.open(compress_file(_rollout(tmp_path))) as t:
        other = pickle.loads(pickle.dumps(t))
        assert other.path == t.path and other.compressed
        assert list(other.raw_lines()) == list(t.raw_lines())
        other.close()
        assert t.copy_path is not None and t.copy_path.exists()  # still its owner's
        assert t.raw_line(LINES)


def test_the_index_grows_with_the_decompression_a_step_at_a_time(tmp_path: Path) -> None:
    packed = compress_file(_rollout(tmp_path))
    with Transcript(packed) as t:
        seen: list[tuple[int, int]] = []
        assert not t.build_index(max_bytes=1)
        assert t.decompressing and 0 < t.line_count < LINES
        assert t.loading()[1] == packed.stat().st_size  # compressed bytes, while decompressing
        while not t.build_index(max_bytes=64 << 10, progress=lambda d, n: seen.append((d, n))):
            pass
        assert not t.decompressing and t.line_count == LINES and t.index_complete
        assert t.loading() == (t.file_size(), t.file_size())


def test_a_plain_file_named_zst_is_read_as_what_it_is(tmp_path: Path) -> None:
    plain = _rollout(tmp_path)
    odd = plain.rename(plain.with_name(plain.name + ".zst"))
    with Transcript.open(odd) as t:
        assert not t.compressed and t.line_count == LINES
    assert detect(odd).format is Format.CODEX


# -- what cannot be read is one finding ------------------------------------------------------------


@pytest.mark.parametrize(
    ("damage", "truncated"),
    [
        (lambda b: b[: len(b) // 2], True),
        (lambda b: b[: len(b) // 2] + b"\x00" * 64 + b[len(b) // 2 + 64 :], False),
    ],
    ids=["truncated", "corrupt"],
)
def test_a_damaged_rollout_is_one_finding_with_the_lines_before_it_read(
    binding: str | None,
    damage: Callable[[bytes], bytes],
    truncated: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    day = _day(tmp_path)
    packed = compress_file(_rollout(day))
    packed.write_bytes(damage(packed.read_bytes()))
    status, text = _check(packed, as_json=False)
    assert status == 1
    findings = [line for line in text.splitlines() if line.startswith("  ")]
    assert len(findings) >= 1
    (unreadable,) = [f for f in findings if "unreadable-compressed" in f]
    row = json.loads(_check(packed, as_json=True)[1])
    (finding,) = [f for f in row["findings"] if f["kind"] == "unreadable-compressed"]
    assert finding["severity"] == "error"
    assert row["lines"] >= 1 and finding["line"] == row["lines"]
    assert f"{row['lines']} lines" in finding["message"] and "cannot be read" in finding["message"]
    if truncated:
        # Nothing else is blamed on the cut: no torn tail, no malformed line.
        assert {f["kind"] for f in row["findings"]} <= {"unreadable-compressed", "not-stored"}
    # (Codex writes no checksum: corrupt data may decode to garbage before zstd notices,
    # and those lines are reported for what they are, as in a plain file.)
    assert f"line {row['lines']}" in unreadable
    # The command line: exit 1, no traceback.
    assert main(["--check", str(packed)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "damage",
    [lambda b: b[:4] + b"\xff" * 40, lambda b: b[:4], lambda b: b[:40]],
    ids=["bad-header", "magic-only", "first-block-cut"],
)
def test_a_rollout_of_which_not_one_line_can_be_read_is_refused_in_one_line(
    damage: Callable[[bytes], bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packed = compress_file(_rollout(_day(tmp_path)))
    packed.write_bytes(damage(packed.read_bytes()))
    status, out = _check(packed, as_json=True)
    assert status == 2
    row = json.loads(out)
    assert row["transcript"] == str(packed) and "not one line of it could be read" in row["error"]
    capsys.readouterr()
    assert main(["--check", str(packed)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be decompressed" in err and "Traceback" not in err
    # Forced to a format, it is refused all the same (no finding that no line could show).
    assert main(["--check", "--format", "codex", str(packed)]) == 2
    # In a directory it is not passed over as "not a transcript": it is said.
    assert run_check([tmp_path], as_json=False, strict=False, out=io.StringIO(), jobs=1) == 2
    assert "cannot be decompressed" in capsys.readouterr().err
    # The viewer refuses it in one line too.
    assert main([str(packed)]) == 2
    assert "cannot be decompressed" in capsys.readouterr().err


def test_a_zstd_bomb_stops_at_the_documented_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compressed, "MIN_LIMIT", 8 << 20)
    first = _rollout(tmp_path).read_bytes().split(b"\n")[0] + b"\n"
    packed = tmp_path / (NAME + ".zst")
    packed.write_bytes(bomb(64 << 20, first))  # a few kilobytes
    assert packed.stat().st_size * compressed.MAX_RATIO < 8 << 20
    temps = _temp_copies()
    with Transcript(packed) as t:
        copy = t.copy_path
        assert copy is not None
        t.build_index()
        problem = t.decompression_problem
        assert problem is not None
        assert f"more than {compressed.MAX_RATIO:,} times its size" in problem
        assert copy.read_bytes() == first  # the complete lines before the limit
    row = json.loads(_check(packed, as_json=True)[1])
    assert row["format"] == "codex" and row["lines"] == 1
    assert [(f["kind"], f["line"]) for f in row["findings"]] == [("unreadable-compressed", 1)]
    assert _temp_copies() <= temps  # (a killed process's stale copy may be swept)


def test_the_limit_is_a_thousand_times_the_file_and_never_below_64_mib() -> None:
    assert compressed.output_limit(1000) == 64 << 20
    assert compressed.output_limit(1 << 30) == 1000 << 30


def test_a_full_disk_is_the_same_one_finding(tmp_path: Path) -> None:
    packed = compress_file(_rollout(tmp_path))
    fd = os.open(packed, os.O_RDONLY)
    try:
        inflated = Inflated(packed, fd)
        os.close(inflated._wfd)  # the copy can no longer be written: as a full disk
        inflated.fill()
        assert inflated.finished and inflated.problem is not None
        assert "cannot write its decompressed copy" in inflated.problem
        inflated.remove()
    finally:
        os.close(fd)


# -- directories and listings ----------------------------------------------------------------------


def test_check_of_a_directory_takes_compressed_rollouts_and_the_plain_file_wins(
    tmp_path: Path,
) -> None:
    day = _day(tmp_path)
    only_packed = compress_file(_rollout(day, NAME.replace("09-00-00", "08-00-00")))
    both_plain = _rollout(day)
    both_packed = compress_file(both_plain, keep=True)
    found = transcripts_in(tmp_path)
    assert found == [only_packed, both_plain]
    assert both_packed not in found  # passed over without a word, as Codex does
    out = io.StringIO()
    assert run_check([tmp_path], as_json=True, strict=False, out=out, jobs=2) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["transcript"] for r in rows] == [str(only_packed), str(both_plain)]
    assert all(r["format"] == "codex" and r["lines"] == LINES for r in rows)


def test_the_codex_listing_shows_compressed_rollouts_and_the_plain_file_wins(
    tmp_path: Path,
) -> None:
    day = _day(tmp_path)
    only_packed = compress_file(_rollout(day, NAME.replace("09-00-00", "08-00-00")))
    both_plain = _rollout(day)
    compress_file(both_plain, keep=True)
    assert tree_format(tmp_path / "sessions") is Format.CODEX
    sessions = list_sessions(tmp_path / "sessions", Format.CODEX)
    assert sorted(s.path for s in sessions) == sorted([only_packed, both_plain])
    packed = next(s for s in sessions if s.path == only_packed)
    assert packed.first_prompt == "build it" and packed.started == "2026-01-01T00:00:00.000Z"
    assert packed.size == only_packed.stat().st_size


def test_a_compressed_tree_alone_is_still_a_codex_tree(tmp_path: Path) -> None:
    compress_file(_rollout(_day(tmp_path)))
    assert tree_format(tmp_path) is Format.CODEX
    assert tree_format(tmp_path / "sessions") is Format.CODEX


def test_verify_of_a_compressed_rollout_is_its_report(tmp_path: Path) -> None:
    packed = compress_file(_rollout(tmp_path))
    report = verify(packed)
    assert report.transcript == packed and report.format is Format.CODEX
    assert report.lines == LINES and report.markers == 2 and report.errors == 0

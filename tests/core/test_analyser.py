"""`Analyser`: an analysis brought up to date line by line equals one pass over the file.

Follow mode reads a growing transcript in steps. Each test writes a transcript
in pieces (cut anywhere, mid-line included, the way a writer's buffered
appends land), calls `Analyser.update` after every piece, and compares the
result with `analyse` of the file as it is at that moment: every count,
problem, finding, marker site, operation and replay entry.
"""

from __future__ import annotations

import random
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from _support import EXAMPLES, REFERENCE, REFERENCE_TRANSCRIPTS, spy_parsed_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_view.core.analyser import Analyser
from transcript_view.core.analysis import Analysis, analyse
from transcript_view.core.session import Session
from transcript_view.core.transcript import Transcript


def fingerprint(a: Analysis) -> dict[str, Any]:
    """Everything an analysis says, as plain data that compares by value."""
    return {
        "lines": a.lines,
        "envelopes": a.envelopes,
        "types": dict(a.type_counts),
        "meta": a.meta_line,
        "problems": [(p.line, p.kind, p.message) for p in a.problems],
        "sites": [
            (s.line, s.message_id, s.role, s.marker.start, s.marker.text, s.quoted, s.op_index,
             s.shape, s.op.index if s.op is not None else None)
            for s in a.sites
        ],
        "findings": [(f.kind, f.line, f.file, f.message) for f in a.findings],
        "replay_problems": list(a.replay_problems),
        "operations": [asdict(op) for op in a.operations],
        "replay": list(a.replay),
    }


def grow(path: Path, data: bytes, cuts: list[int]) -> None:
    """Write `data` to `path` in pieces ending at `cuts`; after each, update and compare."""
    path.write_bytes(b"")
    transcript = Transcript(path)
    analyser = Analyser(transcript)
    earlier: list[tuple[Analysis, dict[str, Any]]] = []
    written = 0
    for cut in [*sorted(set(cuts)), len(data)]:
        if cut <= written:
            continue
        with open(path, "ab") as fh:
            fh.write(data[written:cut])
        written = cut
        transcript.refresh()
        got = analyser.update()
        want = analyse(transcript)
        assert fingerprint(got) == fingerprint(want), f"after {cut} of {len(data)} bytes"
        earlier.append((got, fingerprint(got)))
    # What an update returned is not changed by later ones.
    for old, print_then in earlier:
        assert fingerprint(old) == print_then
    transcript.close()


def line_ends(data: bytes) -> list[int]:
    return [i + 1 for i, b in enumerate(data) if b == 0x0A]


TRANSCRIPTS = [REFERENCE / f"{stem}.jsonl" for stem in REFERENCE_TRANSCRIPTS] + [
    EXAMPLES / "demo.jsonl",
    EXAMPLES / "broken.jsonl",
]


@pytest.mark.parametrize("source", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_line_by_line_equals_one_pass(tmp_path: Path, source: Path) -> None:
    data = source.read_bytes()
    grow(tmp_path / "t.jsonl", data, line_ends(data))


@pytest.mark.parametrize("source", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_pieces_cut_mid_line_equal_one_pass(tmp_path: Path, source: Path) -> None:
    data = source.read_bytes()
    rng = random.Random(source.stem)
    cuts = sorted(rng.randrange(1, len(data)) for _ in range(25))
    grow(tmp_path / "t.jsonl", data, cuts)


def session_bytes(tmp_path: Path) -> bytes:
    """A run with every kind of line the pass joins, written by our own Session."""
    path = tmp_path / "source.jsonl"
    with Session.create(path, {"app": "tests"}, limit=120) as s:
        s.append_message("system", "be brief", sticky=True)
        s.append_message("user", "go")
        for i in range(3):
            call = {"id": f"c{i}", "type": "function",
                    "function": {"name": "sh", "arguments": "{}"}}  # fmt: skip
            s.append_message("assistant", f"turn {i}", tool_calls=[call])
            op = s.append_tool_dispatched(f"c{i}", "sh", "{}", round=i)
            s.settle(op, f"c{i}", f"result {i} " + "x" * 400 * i, is_error=i == 2)
        s.append_message("assistant", "quoting [... elided 1 chars (2 bytes total); "
                         "full result: nope.txt sha256 " + "0" * 64 + " ...]")  # fmt: skip
    return path.read_bytes()


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_any_pieces_of_a_run_with_bad_lines_equal_one_pass(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Malformed lines, blank lines and a torn tail anywhere, cut anywhere."""
    tmp = tmp_path_factory.mktemp("grow")
    lines = session_bytes(tmp).splitlines(keepends=True)
    extras = [b"\n", b"{not json\n", b'{"id":"x","type":"message"}\n', b"\n\n", b"[1,2",
              lines[3], lines[-1]]  # fmt: skip  (the last two: an id seen before)
    for _ in range(data.draw(st.integers(0, 4))):
        at = data.draw(st.integers(0, len(lines)))
        lines.insert(at, data.draw(st.sampled_from(extras)))
    text = b"".join(lines)
    cuts = data.draw(st.lists(st.integers(1, max(len(text) - 1, 1)), max_size=12))
    grow(tmp / "t.jsonl", text, cuts)


def test_a_truncated_or_replaced_file_is_read_again(tmp_path: Path) -> None:
    demo = (EXAMPLES / "demo.jsonl").read_bytes()
    broken = (EXAMPLES / "broken.jsonl").read_bytes()
    path = tmp_path / "t.jsonl"
    path.write_bytes(demo)
    transcript = Transcript.open(path)
    analyser = Analyser(transcript)
    analyser.update()
    path.write_bytes(broken[: len(demo) // 2])  # shorter: a different file now
    transcript.refresh()
    assert transcript.resets == 1
    assert fingerprint(analyser.update()) == fingerprint(analyse(transcript))
    with open(path, "ab") as fh:
        fh.write(broken[len(demo) // 2 :])
    transcript.refresh()
    assert fingerprint(analyser.update()) == fingerprint(analyse(transcript))
    transcript.close()


def test_an_update_with_nothing_new_reads_no_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the last content line is read again: that is what makes following cheap."""
    path = tmp_path / "t.jsonl"
    path.write_bytes((EXAMPLES / "demo.jsonl").read_bytes())
    transcript = Transcript.open(path)
    analyser = Analyser(transcript)
    analyser.update()
    starts = spy_parsed_lines(monkeypatch)
    analyser.update()
    assert starts == [transcript.line_count]
    transcript.close()

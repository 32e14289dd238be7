"""The fast Claude Code and Codex passes read exactly what the plain ones read.

`--check` decodes each line into a msgspec shape that declares only the
fields the pass reads, maps runs of lines in worker processes, and folds the
batches in file order. The plain passes (`_plain_passes`) are the definition:
every line by `pread`, the standard library's parser, one line at a time.
These tests hold the first to the second on random and mutated sessions,
with batches cut everywhere; and hold an analysis to pickling.
"""

from __future__ import annotations

import io
import json
import pickle
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

import msgspec
import pytest
from _analysis_dump import dump_session as dump
from _plain_passes import plain_claude, plain_codex, plain_exempt
from _random_transcripts import mutate
from _sessions import (
    JUNK_LINES,
    ClaudeSession,
    random_claude_session,
    random_codex_rollout,
)
from _support import CLAUDE_EXAMPLE, CODEX_EXAMPLE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transcript_view.core.formats.claude_code as claude_code
import transcript_view.core.formats.codex as codex_module
import transcript_view.core.report as report_module
import transcript_view.core.transcript as transcript_module
from transcript_view.core import envelope_shape
from transcript_view.core.check import run_check
from transcript_view.core.decoding import decode_line
from transcript_view.core.formats import Format, claude_lines, codex
from transcript_view.core.formats.claude_code import analyse_claude
from transcript_view.core.formats.codex import analyse_codex
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.formats.readers import READERS
from transcript_view.core.transcript import Transcript, parse_json_line_plain

# -- comparing analyses ---------------------------------------------------------------------------


def _names(path: Path) -> list[str]:
    """File names to ask an exemption about: every id-ish word of the file, and hooks."""
    words = set(path.read_bytes().decode("utf-8", "replace").replace('"', " ").split())
    return sorted({f"{w}.txt" for w in words} | {"hook-1.txt", "other.txt", "noext"})


def _fresh(tmp_path: Path) -> Path:
    return Path(tempfile.mkdtemp(dir=tmp_path))


def _compare_claude(path: Path, workers: int = 1) -> None:
    with Transcript.open(path) as t:
        want, ids = plain_claude(t)
    with Transcript.open(path) as t:
        got = analyse_claude(t, workers=workers)
    assert dump(got) == dump(want)
    names = _names(path)
    assert [got.exempt(n) for n in names] == [plain_exempt(ids, n) for n in names]


def _compare_codex(path: Path, workers: int = 1) -> None:
    with Transcript.open(path) as t:
        want = plain_codex(t)
    with Transcript.open(path) as t:
        got = analyse_codex(t, workers=workers)
    assert dump(got) == dump(want)
    assert not got.exempt("anything.txt")


_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# -- the passes -----------------------------------------------------------------------------------


@_SETTINGS
@given(seed=st.integers(0, 10**6), steps=st.integers(1, 90), mutated=st.booleans(),
       chunk=st.integers(40, 5000))  # fmt: skip
def test_the_fast_claude_pass_is_the_plain_pass(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    steps: int,
    mutated: bool,
    chunk: int,
) -> None:
    """Random and mutated sessions, cut into batches of any size (a response, a branch,
    a tool call and its result, a compaction and its parent on either side of a cut),
    give the plain pass's analysis, and its exemptions."""
    monkeypatch.setattr(transcript_module, "READ_CHUNK", chunk)
    root = _fresh(tmp_path) / "projects" / "p"
    path = random_claude_session(root, seed, steps)
    if mutated:
        path.write_bytes(mutate(path.read_bytes(), seed))
    _compare_claude(path)


@_SETTINGS
@given(seed=st.integers(0, 10**6), steps=st.integers(1, 90), mutated=st.booleans(),
       chunk=st.integers(40, 5000))  # fmt: skip
def test_the_fast_codex_pass_is_the_plain_pass(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    steps: int,
    mutated: bool,
    chunk: int,
) -> None:
    """Random and mutated rollouts, cut anywhere (an output's call in an earlier batch),
    give the plain pass's analysis."""
    monkeypatch.setattr(transcript_module, "READ_CHUNK", chunk)
    path = random_codex_rollout(_fresh(tmp_path) / "rollout.jsonl", seed, steps)
    if mutated:
        path.write_bytes(mutate(path.read_bytes(), seed))
    _compare_codex(path)


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_batches_mapped_in_worker_processes_give_the_same_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 700)
    path = random_claude_session(tmp_path / "projects" / "p", seed, 150)
    _compare_claude(path, workers=2)
    _compare_codex(random_codex_rollout(tmp_path / "r.jsonl", seed, 200), workers=2)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("seed", [3, 11, 29])
def test_the_markers_and_bad_lines_are_told_batch_by_batch_as_they_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, workers: int
) -> None:
    """Issue 11: `n`/`p` work on the part read so far, in every format. What the passes
    tell as they read is, in the end, every marker's and every bad line's line."""
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 700)
    read_so_far: list[list[int]] = []  # the sites' lines when the last batch is in

    def before_finish(cls: Any) -> None:
        finish = cls.finish

        def spy(self: Any, *args: Any) -> Any:
            read_so_far.append([s.line for s in self.analysis.sites])
            return finish(self, *args)

        monkeypatch.setattr(cls, "finish", spy)

    before_finish(claude_code.ClaudePass)
    before_finish(codex_module.CodexPass)
    claude = random_claude_session(tmp_path / "projects" / "p", seed, 150)
    codex = random_codex_rollout(tmp_path / "r.jsonl", seed, 200)
    for path, read in ((claude, analyse_claude), (codex, analyse_codex)):
        path.write_bytes(mutate(path.read_bytes(), seed))  # bad lines too
        told: list[tuple[list[int], list[int]]] = []
        read_so_far.clear()
        with Transcript.open(path) as t:
            got = read(t, workers=workers, found=lambda m, p, told=told: told.append((m, p)))
        assert len(told) > 1, "told once, at the end"
        markers = [line for m, _ in told for line in m]
        problems = [line for _, p in told for line in p]
        # What was read (the first pass to finish is this transcript's; a session's
        # others are read after it); the end may still move a replacement's markers.
        assert markers == read_so_far[0] and markers
        assert problems == [p.line for p in got.problems] and problems


def test_what_a_batch_leaves_to_earlier_lines_is_decided_by_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each thing a line needs an earlier line for, with a batch boundary between the two:
    one line a batch."""
    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("go")  # 1
    s.tool_use("toolu_a", "Bash", {})  # 2
    s.assistant({"type": "text", "text": "more"}, msg_id="msg_toolu_a", request="req_toolu_a")
    s.assistant({"type": "text", "text": "and"}, msg_id="msg_toolu_a", request="req_toolu_a")
    s.tool_result("toolu_a", "head\n... [1,234 characters truncated] ...\ntail")  # 5
    s.lines.append(dict(s.lines[0], uuid="u-retry", parentUuid=s.lines[1]["uuid"]))  # 6: branch
    line = s._base("system")
    line.update(subtype="compact_boundary", logicalParentUuid=s.lines[2]["uuid"])
    s.raw(line)  # 7
    cleared = {"toolUseId": "toolu_a", "replacement": "[Old tool result content cleared]"}
    s.raw({"type": "content-replacement", "replacements": [cleared]})
    path = s.write()
    for chunk in (1, 10_000):
        monkeypatch.setattr(transcript_module, "READ_CHUNK", chunk)
        _compare_claude(path)
    with Transcript.open(path) as t:
        a = analyse_claude(t)
    assert a.tags[3] == ["continues the response that starts on line 2"]
    assert a.tags[4] == ["continues the response that starts on line 2"]
    assert a.tags[6][0].startswith("branches from line 2")
    summarised = "the conversation through line 3 was summarised"
    assert a.tags[7] == [f"compaction (trigger not recorded); {summarised}"]
    (site,) = a.sites
    assert (site.line, site.tool, site.bash, site.replaced_at) == (5, "Bash", True, 8)


@pytest.mark.parametrize("line", JUNK_LINES)
def test_a_line_of_any_shape_is_read_as_the_standard_parser_reads_it(
    tmp_path: Path, line: str
) -> None:
    """Each junk line, between two good ones and last: no crash, the plain pass's answer
    (a `type` that is a list once crashed both passes)."""
    s = ClaudeSession(tmp_path / "projects" / "p")
    s.user("go")
    path = s.write()
    data = line.encode("utf-8").replace(b"\xc3\xbf", b"\xff")
    for body in (path.read_bytes() + data + b"\n" + path.read_bytes(), path.read_bytes() + data):
        path.write_bytes(body)
        _compare_claude(path)
        _compare_codex(path)


# -- one line: the shapes are the dicts ------------------------------------------------------------


#: Keys of the nested shapes (and one of none), so that every Struct is decoded into.
_NESTED_KEYS = [
    *{f.encode_name for shape in (claude_lines.Block, claude_lines.Message,
                                  claude_lines.ToolUseResult, claude_lines.Replacement,
                                  claude_lines.CompactMetadata, claude_lines.Part,
                                  claude_lines.Usage, claude_lines.MicrocompactMetadata,
                                  codex.Payload, codex.Part, codex.TokenInfo, codex.TokenUsage,
                                  codex.CompactedPayload, envelope_shape.Payload,
                                  envelope_shape.ToolCall, envelope_shape.Function)
      for f in msgspec.structs.fields(shape)},
    "x",
]  # fmt: skip


def _value(draw: st.DrawFn) -> Any:
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**30), 10**30),
        st.floats(allow_nan=False),
        st.text(max_size=8),
    )
    return draw(
        st.recursive(
            leaves,
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.sampled_from(_NESTED_KEYS), inner, max_size=3)
            ),
            max_leaves=12,
        )
    )


_FIELDS = {
    shape: [f.encode_name for f in msgspec.structs.fields(shape)]
    for shape in (claude_lines.Line, codex.Line, codex.CompactedLine, envelope_shape.Line)
}


@st.composite
def _lines(draw: st.DrawFn) -> tuple[type[msgspec.Struct], bytes]:
    shape = draw(st.sampled_from(list(_FIELDS)))
    keys = st.sampled_from([*_FIELDS[shape], "agentId", "persistedOutputPath", "tool_use_id"])
    obj: dict[str, Any] = {k: _value(draw) for k in draw(st.lists(keys, unique=True, max_size=6))}
    if draw(st.booleans()):
        result = {"type": "tool_result", "tool_use_id": _value(draw), "content": _value(draw)}
        obj["message"] = {"id": _value(draw), "content": [_value(draw), result]}
    raw = json.dumps(obj, ensure_ascii=draw(st.booleans())).encode("utf-8")
    for _ in range(draw(st.integers(0, 2))):  # byte edits: what msgspec must refuse alike
        i = draw(st.integers(0, max(len(raw) - 1, 0)))
        edit = draw(st.sampled_from([b"\xff", b"\\", b'"', b"{", b"]", b"\\ud800", b"", b"1"]))
        raw = raw[:i] + edit + raw[i + 1 :]
    return shape, raw


@settings(max_examples=600, deadline=None)
@given(case=_lines(), is_last=st.booleans())
def test_a_lines_shape_is_its_dict_as_the_standard_parser_reads_it(
    case: tuple[type[msgspec.Struct], bytes], is_last: bool
) -> None:
    """Every field of a line's shape (Claude Code's, Codex's, the reference format's) holds
    what the standard parser's dict has under its name (its default where the key is
    missing), however the line was decoded; a line the standard parser refuses is its
    problem."""
    shape, raw = case
    decode = msgspec.json.Decoder(shape).decode
    got = decode_line(decode, shape, raw, 3, 30, is_last=is_last)
    plain = parse_json_line_plain(raw, 3, 30, is_last=is_last)
    if plain is None or not isinstance(plain, dict):
        assert got == plain
        return
    assert _normal(got) == _expected(plain, shape)


def _normal(o: object) -> object:
    """A value as comparable data: types kept all the way down (1 is not 1.0 nor True)."""
    if isinstance(o, msgspec.Struct):
        fields = tuple((f, _normal(getattr(o, f))) for f in o.__struct_fields__)
        return ("struct", type(o).__name__, fields)
    if isinstance(o, dict):
        return ("dict", tuple((k, _normal(v)) for k, v in o.items()))
    if isinstance(o, list):
        return ("list", tuple(_normal(v) for v in o))
    if isinstance(o, float):
        return ("float", repr(o))
    return (type(o).__name__, o)


def _expected(value: object, kind: object) -> object:
    """What a shape of `kind` must hold for a parsed value: `dict.get` of each field."""
    members = get_args(kind) if get_origin(kind) in (Union, UnionType) else (kind,)
    shape = next(
        (m for m in members if isinstance(m, type) and issubclass(m, msgspec.Struct)), None
    )
    if isinstance(value, dict) and shape is not None:
        fields = tuple(
            (
                f.name,
                _expected(value[f.encode_name], f.type)
                if f.encode_name in value
                else _normal(f.default),
            )
            for f in msgspec.structs.fields(shape)
        )
        return ("struct", shape.__name__, fields)
    item = next((get_args(m)[0] for m in members if get_origin(m) is list), None)
    if isinstance(value, list) and item is not None:
        return ("list", tuple(_expected(v, item) for v in value))
    return _normal(value)


# -- an analysis pickles -------------------------------------------------------------------------


def _check_output(path: Path, monkeypatch: pytest.MonkeyPatch, through: Callable[..., Any]) -> str:
    """`--check --json` and the text report of `path`, its analysis passed through `through`."""
    real = report_module.analyse_as
    monkeypatch.setattr(report_module, "analyse_as", lambda *a: through(real(*a)))
    out = io.StringIO()
    run_check([path], as_json=True, strict=False, out=out, jobs=1)
    run_check([path], as_json=False, strict=False, out=out, jobs=1)
    return out.getvalue()


@pytest.mark.parametrize(("example", "fmt"), [(CLAUDE_EXAMPLE, "claude"), (CODEX_EXAMPLE, "codex")])
def test_an_analysis_pickles_and_checks_the_same(
    example: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass server sends analyses back pickled: one that went through pickle gives
    `--check` the same report (its exemptions included)."""
    with Transcript.open(example) as t:
        analysis = READERS[Format.CLAUDE_CODE if fmt == "claude" else Format.CODEX](t, None)
        back = pickle.loads(pickle.dumps(analysis))
        assert isinstance(back, SessionAnalysis)
        assert dump(back) == dump(analysis)
        names = _names(example) + [p.name for p in example.parent.rglob("*")]
        assert [back.exempt(n) for n in names] == [analysis.exempt(n) for n in names]
    same = _check_output(example, monkeypatch, lambda a: a)
    assert _check_output(example, monkeypatch, lambda a: pickle.loads(pickle.dumps(a))) == same
    assert json.loads(same.splitlines()[0])["format"] == Format(
        "claude-code" if fmt == "claude" else "codex"
    )


class _Sizes:
    """A line measure anyone can check: the line's byte count and its first byte."""

    def __call__(self, raw: bytes) -> int:
        return len(raw) * 1000 + (raw[0] if raw else 0)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("seed", [2, 17])
def test_each_line_is_measured_once_in_order_and_the_pass_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, workers: int
) -> None:
    """Issue 11: the viewer counts a session's rows where the pass maps its lines
    (`core.decoding.Measure`). Every line, blank and bad ones included, is measured
    once; the batches' measures are told in file order; the analysis does not move."""
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 700)
    claude = random_claude_session(tmp_path / "projects" / "p", seed, 120)
    codex = random_codex_rollout(tmp_path / "r.jsonl", seed, 150)
    measure = _Sizes()
    for path, read in ((claude, analyse_claude), (codex, analyse_codex)):
        path.write_bytes(mutate(path.read_bytes(), seed))
        told: list[tuple[int, list[int]]] = []
        with Transcript.open(path) as t:
            plain = read(t, workers=workers)
            got = read(
                t,
                workers=workers,
                measure=measure,
                measured=lambda first, rows, told=told: told.append((first, list(rows))),
            )
            want = [measure(t.raw_line(n)) for n in range(1, t.line_count + 1)]
        assert dump(got) == dump(plain)
        assert len(told) > 1, "told once, at the end"
        firsts = [first for first, _ in told]
        assert firsts[0] == 1 and firsts == sorted(firsts)
        assert [n for _, rows in told for n in rows] == want

"""The native map (`core/_map.c`) makes the batches the Python loop makes.

`core.analysis._map_into` is the definition of what the pass keeps of each
line; `_map_raw` runs the same loop in C where it was built. These tests give
both the same lines (every fixture and example, hand-made odd envelopes,
random and mutated transcripts) and compare every field of the batch, with
and without a worker's fold, with and without a measure. The analysis-level
comparison with the plain pass is `test_fast_path.py`'s.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from _analysis_dump import dump
from _random_transcripts import mutate, random_transcript
from _support import EXAMPLES, REFERENCE, REFERENCE_TRANSCRIPTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transcript_view.core.analysis as A
import transcript_view.core.transcript as transcript_module
from transcript_view.core.analysis import AnalysisPass, LineBatch
from transcript_view.core.canonical import data_digest
from transcript_view.core.transcript import Transcript

native = pytest.mark.skipif(A._map is None, reason="core._map was not built here")


def _plain(value: Any) -> Any:
    """A batch's value as plain data: arrays as lists, dataclasses by their slots, and
    a bool apart from the int it equals."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, array):
        return (value.typecode, value.tolist())
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, A.LocalOps):
        return {name: _plain(getattr(value, name)) for name in value.__slots__}
    return value


def _state(batch: LineBatch) -> dict[str, Any]:
    return {name: _plain(getattr(batch, name)) for name in batch.__slots__}


class Sizes:
    """A measure anyone can check (see `test_measure.py`)."""

    def __call__(self, kind: str, payload: Mapping[str, Any], raw: bytes) -> int:
        return len(raw) * 100 + len(payload) + len(kind)


#: How a batch's operations are folded: not at all (its events), by a worker's own
#: pass (`fold_lines`), or straight into the pass that reads the file.
FOLDS = ("none", "local", "pass")


def _batch(t: Transcript, *, use_native: bool, fold: str, measure: bool) -> LineBatch:
    """The batch of every line (`fold` one of `FOLDS`); a folding pass's state goes in
    `folded` (`export`)."""
    batch = LineBatch(1, t.line_count)
    into = None if fold == "none" else AnalysisPass(t, exact_ids=False, local=fold == "local")
    chunks = t.raw_chunks(1, t.line_count)
    count = Sizes() if measure else None
    if use_native:
        A._map_raw(batch, chunks, into, count)
    else:
        A._map_into(batch, chunks, into, count)
    if into is not None:
        batch.folded = into.export()
    return batch.seal()


def _assert_same(path: Path) -> None:
    with Transcript.open(path) as t:
        for fold in FOLDS:
            for measure in (False, True):
                want = _state(_batch(t, use_native=False, fold=fold, measure=measure))
                got = _state(_batch(t, use_native=True, fold=fold, measure=measure))
                for name in want:
                    assert got[name] == want[name], (path.name, fold, measure, name)


def _fixtures() -> list[Path]:
    found = [REFERENCE / f"{name}.jsonl" for name in REFERENCE_TRANSCRIPTS]
    found += sorted(EXAMPLES.glob("*.jsonl"))
    return [p for p in found if p.exists()]


@native
@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: p.name)
def test_every_fixture_and_example_maps_alike(path: Path) -> None:
    _assert_same(path)


def _line(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _env(kind: Any, payload: Any, **extra: Any) -> str:
    return _line({"id": extra.pop("id", "e"), "payload": payload, "type": kind, "v": 1, **extra})


#: Envelopes whose fields are anything but what a writer writes: each is read as
#: the accessors read it (a role that is no string is "user", a call id that is
#: no string is its JSON, ...), and the C loop must read each the same way.
ODD_LINES = [
    _env("session-meta", {}),
    _env("session-meta", {}, id="second meta"),
    _env("message", {"role": "user", "content": "hi"}),
    _env("message", {"role": 7, "content": "a role that is no string"}),
    _env("message", {"role": "narrator", "content": "a role without a code"}),
    _env("message", {"role": "user", "content": {"parts": [1, 2]}}),
    _env("message", {"role": "user", "content": None}),
    _env("message", {"role": "system", "content": "s", "sticky": True}),
    _env("message", {"role": "system", "content": "s", "sticky": 0, "sysprompt": "yes"}),
    _env("message", {"role": "system", "content": "s", "depth": 0}),
    _env("message", {"role": "system", "content": "s", "depth": None}),
    _env("message", {"role": "user", "content": ""}, id=""),
    _env("message", {"role": "user", "content": "no id"}, id=None),
    _env("message", {"role": "user", "content": "id 5"}, id=5),
    _env("message", "a payload that is a string"),
    _env("message", ["a", "list"]),
    _env("message", {"role": "assistant", "content": "c", "tool-calls": []}),
    _env("message", {"role": "assistant", "content": "c", "tool-calls": "no list"}),
    _env(
        "message",
        {
            "role": "assistant",
            "content": "c",
            "tool-calls": [{"id": "call_1"}, 5, {"id": 9}, {"no": "id"}, {"id": None}],
        },
    ),
    _env("message", {"role": "assistant", "content": "c", "tool-calls": [3, "x"]}),
    _env("tool-dispatched", {"call-id": "call_1", "arguments": {"n": 1}}, id="op1"),
    _env(
        "tool-dispatched",
        {"call-id": "call_1", "arguments": "{}", "arguments-digest": "0" * 64},
        id="op2",
    ),
    _env("tool-dispatched", {"call-id": 12, "arguments": [1], "arguments-digest": 5}, id=3),
    _env("tool-dispatched", {"arguments-digest": "ab", "arguments": None}),
    _env("message", {"role": "tool", "content": "ok", "tool-call-id": "call_1"}),
    _env("message", {"role": "tool", "content": "ok", "tool-call-id": 1, "is-error": True}),
    _env("message", {"role": "tool", "content": "bad", "tool-call-id": "call_9", "is-error": 1}),
    _env("message", {"role": "tool", "content": "\b\f astral \U0001f600", "tool-call-id": "x"}),
    # The native digest takes msgspec's bytes only where the rule would: each of the
    # rule's exceptions alone, in a one- and a two-byte string, goes to the rule.
    *(
        _env("message", {"role": "tool", "content": text, "tool-call-id": "x"})
        for text in ("\b alone é", "\f alone 日本", "é plain", "日本 plain", "ascii")
    ),
    *(
        _env(
            "tool-dispatched",
            {"call-id": "x", "arguments": text, "arguments-digest": digest},
            id=f"d{i}-{n}",
        )
        for i, text in enumerate(("\b é", "\f 日本", "é", "日本", "{}", "\U0001f600"))
        for n, digest in enumerate((data_digest(text), "0" * 64))
    ),
    '{"id": "ls", "payload": {"role": "tool", "content": "lone \\udc00 in a tool result", '
    '"tool-call-id": "x"}, "type": "message", "v": 1}',
    '{"id": "la", "payload": {"call-id": "x", "arguments": "lone \\ud800", '
    '"arguments-digest": "' + "0" * 64 + '"}, "type": "tool-dispatched", "v": 1}',
    _env("tool-settled", {"op-id": "op1", "result-digest": "1" * 64}),
    _env("tool-settled", {"op-id": "op2", "artifact": {"path": "a"}, "result-digest": 3}),
    _env("tool-settled", {"op-id": 4, "artifact": ["no", "mapping"]}),
    _env("tool-settled", {"artifact": None}),
    _env("compaction", {"replaces-through-id": "e", "summary": "s"}),
    _env("compaction", {"replaces-through-id": 3}),
    _env("elision", {"items": [{"id": "e", "stub": "gone"}, {"id": 3}, "x"]}),
    _env("elision", {"items": "none"}),
    _env("some-future-type", {"x": 1}),
    _env(
        "message",
        {
            "role": "tool",
            "content": "head\n[... elided 10 bytes; sha256 "
            + "a" * 64
            + " ...]\ntail [... elided ",
            "tool-call-id": "call_1",
        },
    ),
    '{"id": "v2", "payload": {}, "type": "message", "v": 2}',
    '{"id": "vb", "payload": {}, "type": "message", "v": true}',
    '{"id": "vf", "payload": {}, "type": "message", "v": 1.0}',
    '{"id": "nt", "payload": {}, "type": 5, "v": 1}',
    '{"id": "dup", "payload": {"role": "user"}, "payload": {"role": "tool"}, '
    '"type": "message", "v": 1}',
    '{"id": "surrogate \\ud800", "payload": {"role": "user", "content": "\\udfff"}, '
    '"type": "message", "v": 1}',
    '{"id": "torn", "payload": {"role": "user"',
    "[1, 2, 3]",
    '"a string"',
    "",
    "   ",
    "\r",
    '{"id": "cr", "payload": {}, "type": "session-meta", "v": 1}\r',
    '{"id": "deep", "payload": {"x": ' + "[" * 950 + "]" * 950 + '}, "type": "message", "v": 1}',
    '{"id": "deepish", "payload": {"x": ' + "[" * 600 + "]" * 600 + '}, "type": "message", "v": 1}',
    "\xff not utf-8".encode("latin-1").decode("latin-1"),
]


@native
def test_odd_envelopes_map_alike(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_bytes("\n".join(ODD_LINES).encode("utf-8", "surrogatepass") + b"\n")
    _assert_same(path)


@native
def test_a_line_that_is_not_utf8_maps_alike(tmp_path: Path) -> None:
    path = tmp_path / "bytes.jsonl"
    path.write_bytes(b'{"id": "x\xff", "payload": {}, "type": "session-meta", "v": 1}\n\xc3\n')
    _assert_same(path)


@native
@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6), size=st.integers(5, 150), mutated=st.booleans(),
       chunk=st.sampled_from([60, 700, 1 << 20]))  # fmt: skip
def test_random_and_mutated_transcripts_map_alike(
    tmp_path: Path, seed: int, size: int, mutated: bool, chunk: int
) -> None:
    """Read in runs of any size: the native fold keeps a run's new rows until it ends,
    and writes the rows of earlier runs in place."""
    data = random_transcript(seed, size)
    if mutated:
        data = mutate(data, seed)
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(transcript_module, "READ_CHUNK", chunk)
        _assert_same(path)


# -- the C entry points themselves --------------------------------------------------------


def _out(batch: LineBatch, measure: Any = None) -> tuple[Any, ...]:
    return A._native_out(batch, None, measure)


def _state_list() -> list[Any]:
    return [0, 0, 0, None, None]


@native
def test_what_the_decoder_refuses_goes_to_the_standard_parser_but_an_interrupt_does_not() -> None:
    assert A._map is not None
    line = b'{"id": "a", "payload": {}, "type": "session-meta", "v": 1}'

    def refuses(raw: bytes) -> Any:
        raise ValueError("not vouched for")

    env = (refuses, *A._native_env()[1:])
    batch = LineBatch(1, 1)
    A._map.map_run([line], 1, 0, env, _out(batch), state := _state_list())
    assert batch.types == {"session-meta": 1} and state[:2] == [1, 1]

    def interrupted(raw: bytes) -> Any:
        raise KeyboardInterrupt

    env = (interrupted, *A._native_env()[1:])
    with pytest.raises(KeyboardInterrupt):
        A._map.map_run([line], 1, 0, env, _out(LineBatch(1, 1)), _state_list())


@native
def test_what_the_encoder_refuses_goes_to_the_digest_rule_but_an_interrupt_does_not() -> None:
    """The native digest hands a str msgspec refuses to `string_digest`, which encodes
    it its own way; anything else the encoder raises is raised, not retried."""
    assert A._map is not None
    line = _env("message", {"role": "tool", "content": "ok", "tool-call-id": "c"}).encode()
    calls: list[str] = []

    def refuses(text: str) -> bytes:
        calls.append(text)
        raise UnicodeEncodeError("utf-8", text, 0, 1, "refused")

    names = A._native_env()
    at = names.index(A._encode)
    env = (*names[:at], refuses, *names[at + 1 :])
    batch = LineBatch(1, 1)
    A._map.map_run([line], 1, 0, env, _out(batch), _state_list())
    assert calls == ["ok"]  # then the rule (with the module's own encoder) answered
    assert batch.events[0][5] == A.string_digest("ok")

    def interrupted(text: str) -> bytes:
        raise KeyboardInterrupt

    env = (*names[:at], interrupted, *names[at + 1 :])
    with pytest.raises(KeyboardInterrupt):
        A._map.map_run([line], 1, 0, env, _out(LineBatch(1, 1)), _state_list())


@native
def test_a_measure_that_fails_fails_the_map_as_in_python() -> None:
    assert A._map is not None
    line = b'{"id": "a", "payload": {}, "type": "session-meta", "v": 1}'

    def broken(kind: str, payload: Mapping[str, Any], raw: bytes) -> int:
        raise RuntimeError("the measure broke")

    batch = LineBatch(1, 1)
    batch.measures = array("i", [-1])
    with pytest.raises(RuntimeError, match="the measure broke"):
        A._map.map_run([line], 1, 0, A._native_env(), _out(batch, broken), _state_list())


@native
def test_the_native_map_takes_only_bytes_and_its_own_shapes() -> None:
    assert A._map is not None
    batch = LineBatch(1, 1)
    with pytest.raises(TypeError, match="bytes"):
        A._map.map_run(["text"], 1, 0, A._native_env(), _out(batch), _state_list())
    with pytest.raises(TypeError):
        A._map.map_run([b""], 1, 0, A._native_env()[:-1], _out(batch), _state_list())
    with pytest.raises(TypeError):
        A._map.map_run([b""], 1, 0, A._native_env(), _out(batch), [0, 0])


@native
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=300))
def test_sorted_keys_sorts_as_sorted_does(keys: list[int]) -> None:
    assert A._map is not None
    got = array("q")
    got.frombytes(A._map.sorted_keys(array("q", keys)))
    assert got.tolist() == sorted(keys)


def test_without_the_native_map_the_python_loop_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine without a C compiler gets the same batch from `_map_into` itself."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(3, 60))
    with Transcript.open(path) as t:
        want = _state(_batch(t, use_native=False, fold="local", measure=True))
        monkeypatch.setattr(A, "_map", None)
        got = _state(_batch(t, use_native=True, fold="local", measure=True))
    assert got == want


_keys = st.integers(-(2**63), 2**63 - 1)


@native
@given(st.lists(st.lists(st.one_of(_keys, st.integers(-3, 3)), max_size=40), max_size=12))
def test_has_repeats_answers_whether_any_key_occurs_twice(runs: list[list[int]]) -> None:
    """Small numbers too, so that repeats within a run and across runs both occur."""
    assert A._map is not None
    flat = [k for run in runs for k in run]
    assert A._map.has_repeats([array("q", sorted(run)) for run in runs]) is (
        len(set(flat)) != len(flat)
    )


@native
def test_has_repeats_refuses_runs_that_are_not_sorted_int64s() -> None:
    assert A._map is not None
    with pytest.raises(ValueError, match="sorted"):
        A._map.has_repeats([array("q", [1, 2]), array("q", [3, 1])])
    with pytest.raises(ValueError, match="int64"):
        A._map.has_repeats([b"12345"])
    with pytest.raises(TypeError):
        A._map.has_repeats((array("q"),))


@pytest.mark.parametrize("seed", range(6))
def test_the_pass_finds_repeated_ids_with_and_without_the_native_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Odd seeds repeat ids (`random_transcript`); read in small batches, so the
    repeats fall across batches as well as within one."""
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 300)
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(seed, 120))
    with Transcript.open(path) as t:
        p = AnalysisPass(t, exact_ids=False)
        p.read(None, 1)
        unique = p.ids_unique()
        with_native = dump(A.analyse(t, workers=1))
        monkeypatch.setattr(A, "_map", None)
        assert p.ids_unique() is unique
        assert dump(A.analyse(t, workers=1)) == with_native
    ids = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            ids.append(value["id"])
    assert unique is (len(set(ids)) == len(ids))


# -- found by a review of the C: what Python raises, the C raises too ------------------------


@native
def test_a_line_number_past_a_32_bit_column_raises_as_the_python_loop_does() -> None:
    """A file of 2**31 lines (blank ones, say) numbers its lines past the replay's
    array('i'): Python's `append` raises OverflowError, and the C must not wrap."""
    line = b'{"id": "a", "payload": {"role": "user"}, "type": "message", "v": 1}'
    for run in (A._map_into, A._map_raw):
        batch = LineBatch(2**31, 2**31)
        with pytest.raises(OverflowError, match="greater than maximum"):
            run(batch, [(2**31, 0, [line])])


@native
@pytest.mark.parametrize("rows", [2**32 + 5, -(2**31) - 1])
def test_a_measure_past_32_bits_raises_as_the_python_loop_does(rows: int) -> None:
    line = b'{"id": "a", "payload": {}, "type": "session-meta", "v": 1}'

    def huge(kind: str, payload: Mapping[str, Any], raw: bytes) -> int:
        return rows

    for run in (A._map_into, A._map_raw):
        with pytest.raises(OverflowError):
            run(LineBatch(1, 1), [(1, 0, [line])], None, huge)


@native
def test_a_measure_that_is_falsy_is_still_called() -> None:
    """A callable with `__len__` 0 is a measure all the same (Python had read it
    as 'no measure' through `measure or ...`; the C called it)."""
    line = b'{"id": "a", "payload": {}, "type": "session-meta", "v": 1}'

    class Falsy:
        def __len__(self) -> int:
            return 0

        def __call__(self, kind: str, payload: Mapping[str, Any], raw: bytes) -> int:
            return 42

    for run in (A._map_into, A._map_raw):
        batch = LineBatch(1, 1)
        run(batch, [(1, 0, [line])], None, Falsy())
        assert batch.measures is not None and batch.measures.tolist() == [42]


@native
def test_a_fallback_that_gives_no_string_type_is_refused_not_misread() -> None:
    assert A._map is not None
    env = list(A._native_env())
    env[1] = lambda raw, line, offset: ({"payload": {}}, 12345)
    with pytest.raises(TypeError, match="string"):
        A._map.map_run([b"not json"], 1, 0, tuple(env), _out(LineBatch(1, 1)), _state_list())


@native
def test_the_native_sorts_take_only_int64_arrays() -> None:
    assert A._map is not None
    with pytest.raises(ValueError, match="int64"):
        A._map.sorted_keys(array("d", [1.0]))
    with pytest.raises(ValueError, match="int64"):
        A._map.has_repeats([array("Q", [1, 2])])


# -- the native fold (core/_fold.c) -------------------------------------------------------


def _spied(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often each of the pass's Python operation steps runs from here on."""
    calls = {"_message": 0, "_dispatched": 0, "_settled": 0}
    for name in calls:
        step = getattr(AnalysisPass, name)

        def spy(self: AnalysisPass, *args: Any, _step: Any = step, _name: str = name) -> None:
            calls[_name] += 1
            _step(self, *args)

        monkeypatch.setattr(AnalysisPass, name, spy)
    return calls


@native
def test_the_native_fold_takes_the_common_steps_and_leaves_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A generated transcript's plain operations never reach the Python steps; its
    marker's tool result does (a marker is Python's to read), and so does a settle
    the fold cannot match. Without the fold's targets, every step is Python's."""
    from _support import generate

    path = generate(tmp_path / "t.jsonl", "64K", markers=1)
    with path.open("ab") as fh:
        stray = {"id": "s-x", "payload": {"op-id": "nobody"}, "ts": "t", "type": "tool-settled"}
        fh.write(json.dumps({**stray, "v": 1}).encode() + b"\n")
    with Transcript.open(path) as t:
        first = A.analyse(t, workers=1)
        want, operations = dump(first), len(first.operations)
        calls = _spied(monkeypatch)
        got = dump(A.analyse(t, workers=1))
        assert calls == {"_message": 1, "_dispatched": 0, "_settled": 1}
        assert got == want
        monkeypatch.setattr(A.Operations, "fold_targets", lambda self: None)
        plain = dump(A.analyse(t, workers=1))
    assert plain == want
    assert operations > 10
    # The counts run on from the native pass: its one settle, then the plain pass's.
    assert calls["_dispatched"] == operations and calls["_settled"] == 1 + operations + 1


@native
def test_a_run_that_fails_leaves_the_rows_it_made_in_the_table(tmp_path: Path) -> None:
    """The queues name the rows a run added, so they reach the arrays even when the
    run stops on an error (here a measure that breaks after three operations of a
    transcript with nothing the Python steps would take)."""
    from _support import generate

    path = generate(tmp_path / "t.jsonl", "16K", markers=0)
    with Transcript.open(path) as t:
        fold = AnalysisPass(t, exact_ids=False)
        seen = 0

        def breaks(kind: str, payload: Mapping[str, Any], raw: bytes) -> int:
            nonlocal seen
            seen += kind == "tool-settled"
            if seen > 3:
                raise RuntimeError("the measure broke")
            return 0

        with pytest.raises(RuntimeError, match="the measure broke"):
            A._map_raw(LineBatch(1, t.line_count), t.raw_chunks(1, t.line_count), fold, breaks)
    cols, call_pos, flags, _ = fold.ops.raw_columns()
    rows = len(flags)
    assert rows > 0 and len(call_pos) == len(fold.dispatch_keys) == rows
    assert all(len(c) == rows for c in cols)
    waiting = [r for q in (fold.undispatched, fold.unanswered) for rs in q.values() for r in rs]
    assert all(0 <= r < rows for r in [*waiting, *fold.pending.values()])


def test_a_table_anything_was_derived_from_is_not_the_native_folds(tmp_path: Path) -> None:
    """A sorted index or a made operation would go stale under writes past the table's
    methods: such a table is folded by the Python steps."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(6, 30))
    with Transcript.open(path) as t:
        fold = AnalysisPass(t, exact_ids=False)
        assert A._native_fold(fold) is not None
        fold.ops.rows_at("settle", 1)
        assert fold.ops.fold_targets() is None and A._native_fold(fold) is None
        assert A._native_fold(AnalysisPass(t)) is None  # exact ids: its id table is Python's


@native
def test_what_was_derived_from_the_rows_mid_run_is_dropped_when_they_land(
    tmp_path: Path,
) -> None:
    """Nothing may read a table while a run writes it, but a measure that does (here, a
    lookup by line each line) leaves no stale index behind: the rows' landing empties
    it, as the table's own methods do, and a lookup after is what Python's gives (on
    a transcript with nothing the Python steps would take, which would empty it)."""
    from _support import generate

    path = generate(tmp_path / "t.jsonl", "16K", markers=0)
    answers = []
    with Transcript.open(path) as t:
        for use_native in (False, True):
            fold = AnalysisPass(t, exact_ids=False)

            def peeks(kind: str, payload: Mapping[str, Any], raw: bytes, p: Any = fold) -> int:
                p.ops.rows_at("settle", 1)
                return 0

            batch = LineBatch(1, t.line_count)
            run = A._map_raw if use_native else A._map_into
            run(batch, t.raw_chunks(1, t.line_count), fold, peeks)
            answers.append([fold.ops.rows_at("settle", n) for n in range(1, t.line_count + 1)])
    assert answers[0] == answers[1] and any(answers[1])

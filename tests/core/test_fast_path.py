"""The fast path reads exactly what the plain one reads.

`--check` parses lines with msgspec, reads them a few megabytes at a time,
scans the index and maps lines in forked processes, folds each batch of lines
on its own and merges the batches, and checks ids for repeats all at once. The
plain path is the definition: every line by `pread`, the standard library's
JSON parser, one line at a time into the exact pass. These tests hold the
first to the second, on hand-made edge cases and on random and mutated
transcripts (`_random_transcripts`).
"""

from __future__ import annotations

import concurrent.futures
import gc
import hashlib
import json
import math
import threading
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _analysis_dump import dump
from _random_transcripts import mutate, random_transcript
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transcript_view.core.analysis as analysis_module
import transcript_view.core.transcript as transcript_module
from transcript_view.core import parallel
from transcript_view.core.analysis import Analysis, AnalysisPass, analyse, string_digest
from transcript_view.core.canonical import canonical_string
from transcript_view.core.formats.claude_code import read_lines
from transcript_view.core.transcript import (
    Transcript,
    as_last,
    fast_object,
    parse_json_line,
    parse_json_line_plain,
    parse_line_bytes,
    parse_line_bytes_plain,
)

# -- one line ------------------------------------------------------------------------------


def _same(a: object, b: object) -> bool:
    """Equal, and of the same types all the way down (1 is not 1.0, -0.0 is not 0.0).

    A loop, not recursion: some of the values are nested a thousand levels deep.
    """
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            assert isinstance(y, dict)
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            assert isinstance(y, list)
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, float):
            assert isinstance(y, float)
            if not (math.isnan(x) and math.isnan(y)) and (
                x != y or math.copysign(1, x) != math.copysign(1, y)
            ):
                return False
        elif x != y:
            return False
    return True


def _agree(raw: bytes) -> None:
    fast, plain = parse_json_line(raw, 7, 70), parse_json_line_plain(raw, 7, 70)
    assert _same(fast, plain), (raw[:200], fast, plain)
    fast_env, plain_env = parse_line_bytes(raw, 7, 70), parse_line_bytes_plain(raw, 7, 70)
    assert type(fast_env) is type(plain_env)
    if plain_env is not None and hasattr(plain_env, "data"):
        assert _same(dict(fast_env.data), dict(plain_env.data))  # type: ignore[union-attr]
    else:
        assert fast_env == plain_env


@pytest.mark.parametrize(
    ("raw", "refused"),
    [
        # msgspec refuses these; the standard parser accepts them, so its answer stands.
        (b'{"type":"message","v":1,"id":"\\ud800","payload":{"content":"\\udc00 x"}}', True),
        (b'{"a":1e400,"b":-1e999}', True),
        # msgspec refuses these and so does the standard parser (the problem is its words).
        (b'{"a":NaN}', True),
        (b'{"a":Infinity}', True),
        (b'{"a":' + b"7" * 4301 + b"}", True),
        (b'{"a":"\xed\xa0\x80"}', True),
        (b'{"a":"\xc0\x80"}', True),
        (b'\xef\xbb\xbf{"a":1}', True),
        (b'{"a":"\x01"}', True),
        (b'{"a":1}\x00', True),
        (b"[1, 2]", True),
        (b"", True),
        (b"   \r", True),
        # Accepted by both, with the same value.
        (b'{"a":' + b"7" * 4300 + b"}", False),
        (b'{"a":123456789012345678901234567890,"b":-9223372036854775809}', False),
        (b'{"a":5e-324,"b":2.4e-324,"c":-0.0,"d":1E5,"e":-0}', False),
        (b'{"a":1,"a":2,"b":{"c":3,"c":[4]}}', False),
        (b'{"a":"\\u00e7\xc3\xa7\\ud83d\\ude00\xef\xbf\xbe"}\r', False),
    ],
)
def test_msgspec_accepts_only_what_the_standard_parser_accepts_alike(
    raw: bytes, refused: bool
) -> None:
    assert (fast_object(raw) is None) is refused
    _agree(raw)


@pytest.mark.parametrize("depth", [10, 899, 900, 901, 990, 991, 992, 993, 994, 995, 996, 997, 2000])
@pytest.mark.parametrize("kind", ["array", "object"])
def test_deep_nesting_is_the_standard_parsers_call(depth: int, kind: str) -> None:
    """msgspec nests a few levels deeper than `json` before it gives up; past 900 levels
    the standard parser decides, so the two never disagree there."""
    if kind == "array":
        inner = b"[" * depth + b"]" * depth
    else:
        inner = b'{"a":' * depth + b"1" + b"}" * depth
    raw = b'{"type":"message","v":1,"x":' + inner + b"}"
    if depth >= 900:
        assert fast_object(raw) is None
    _agree(raw)


def _called_from(depth: int, call: Any) -> Any:
    """`call()` from `depth` Python frames further down the stack."""
    return call() if depth == 0 else _called_from(depth - 1, call)


@pytest.mark.parametrize("depth", [850, 900, 950, 990, 996, 2000])
def test_a_deep_line_reads_the_same_from_any_depth_of_calls(depth: int) -> None:
    """The standard parser's nesting limit is the recursion limit less the caller's
    stack: a line 950 levels deep was an envelope read from a worker process and a
    malformed line read from a test. Now where it is read from does not matter."""
    raw = b'{"type":"message","v":1,"x":' + b"[" * depth + b"]" * depth + b"}"

    def answer() -> tuple[str, str]:
        parsed = parse_line_bytes_plain(raw, 1, 0)
        return type(parsed).__name__, getattr(parsed, "message", "")

    answers = {_called_from(stack, answer) for stack in (0, 150, 400, 800)}
    assert len(answers) == 1, answers
    kind, message = answers.pop()
    if depth <= 990:
        assert kind == "Message"
    if depth == 2000:
        assert (kind, message) == ("LineProblem", "JSON nested too deeply")


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.dictionaries(st.text(max_size=6), _json, max_size=5), edits=st.data())
def test_random_lines_and_their_mutations_parse_alike(value: dict[str, Any], edits: Any) -> None:
    raw = json.dumps(value, ensure_ascii=edits.draw(st.booleans())).encode("utf-8", "surrogatepass")
    _agree(raw)
    buf = bytearray(raw)
    for _ in range(edits.draw(st.integers(1, 3))):
        if not buf:
            break
        i = edits.draw(st.integers(0, len(buf) - 1))
        if edits.draw(st.booleans()):
            buf[i] = edits.draw(st.integers(0, 255))
        else:
            del buf[i]
    _agree(bytes(buf))


@settings(max_examples=600, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            ["a", " ", "\b", "\f", "\n", "\r", "\t", '"', "\\", "\x00", "\x1f", "\x7f", "é",
             "\u2028", "\ud800", "\udfff", "\U0001f600", "\U0010ffff", "日", "\uffff", "/"]
        ),
        max_size=24,
    )
)  # fmt: skip
def test_string_digest_is_the_digest_of_canonical_json(text: str) -> None:
    want = hashlib.sha256(canonical_string(text).encode("utf-8")).hexdigest()
    assert string_digest(text) == want


# -- reading ------------------------------------------------------------------------------------


def _per_line(t: Transcript) -> list[tuple[int, int, bytes]]:
    out = []
    for line in range(1, t.line_count + 1):
        begin, end = t.line_span(line)
        out.append((line, begin, t.read_at(begin, end - begin) if end > begin else b""))
    return out


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.lists(
        st.sampled_from([b"", b"a", b"  ", b"{}", b"x" * 300, b"\r", b"line\r", b"\xff"]),
        max_size=40,
    ),
    end=st.sampled_from([b"", b"\n", b"\r\n"]),
    chunk=st.integers(1, 700),
)
def test_raw_lines_read_in_chunks_are_the_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: list[bytes], end: bytes, chunk: int
) -> None:
    monkeypatch.setattr(transcript_module, "READ_CHUNK", chunk)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(data) + end)
    with Transcript.open(path) as t:
        assert list(t.raw_lines()) == _per_line(t)
        seen = []
        read_lines(t, lambda n, off, raw, last: seen.append((n, off, raw)))
        assert seen == _per_line(t)


@pytest.mark.skipif(
    transcript_module._lines is None,
    reason="the native scanner did not build, or TRANSCRIPT_VIEW_PURE is set",
)
@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=300), pos=st.integers(0, 2**40), lf=st.integers(0, 255))
def test_the_native_line_scanner_finds_the_lines_the_python_loop_does(
    data: bytes, pos: int, lf: int
) -> None:
    data = data.replace(bytes([lf]), b"\n")  # plenty of line feeds, anywhere
    native: array[int] = array("q")
    transcript_module.line_starts_into(native, data, pos)
    want = [pos + i + 1 for i, byte in enumerate(data) if byte == 10]
    assert list(native) == want


@pytest.mark.skipif(
    transcript_module._lines is None,
    reason="the native scanner did not build, or TRANSCRIPT_VIEW_PURE is set",
)
def test_the_native_scanner_never_writes_past_a_buffer_that_gains_line_feeds() -> None:
    """Found in review: it counts the LFs, then fills, the GIL released for both; a
    bytearray another thread fills with LFs in between made the fill overrun its room.
    Every start it gives is after an LF the buffer had at some point (the sanitizer
    lane runs this with ASan watching the writes)."""
    assert transcript_module._lines is not None
    scan = transcript_module._lines.line_starts
    buffer = bytearray(b"x" * (1 << 20))
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            buffer[::4096] = b"\n" * len(buffer[::4096])
            buffer[::4096] = b"x" * len(buffer[::4096])

    flipper = threading.Thread(target=flip)
    flipper.start()
    try:
        for _ in range(300):
            found = array("q")
            found.frombytes(scan(buffer, 0))
            assert all(start % 4096 == 1 for start in found)
    finally:
        stop.set()
        flipper.join()


def test_the_index_is_the_same_with_and_without_the_native_scanner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(5, 300) + b"\n\n\nlast")
    monkeypatch.setattr(transcript_module, "SCAN_CHUNK", 1000)
    with Transcript.open(path) as t:
        native = list(t._starts)
    monkeypatch.setattr(transcript_module, "_lines", None)
    with Transcript.open(path) as t:
        assert list(t._starts) == native


def test_the_index_scanned_in_pieces_by_processes_is_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(3, 400) * 30 + b"\n\nlast")
    monkeypatch.setattr(transcript_module, "SCAN_CHUNK", 4096)
    with Transcript.open(path) as plain:
        want = list(plain._starts)
    monkeypatch.setattr(parallel, "workers_for", lambda n: 2)
    monkeypatch.setattr(transcript_module, "_lines", None)  # processes only without it
    seen: list[int] = []
    with Transcript(path) as t:
        assert t.build_index(lambda done, total: seen.append(done))
        assert list(t._starts) == want
        assert t.index_complete and seen[-1] == path.stat().st_size
    path.write_bytes(b"\n")
    with Transcript(path) as t:
        t.build_index()
        assert list(t._starts) == [0]


@pytest.mark.skipif(
    transcript_module._lines is None,
    reason="the native scanner did not build, or TRANSCRIPT_VIEW_PURE is set",
)
def test_the_index_scanned_in_pieces_by_threads_is_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the native scanner, a big file's pieces are scanned on threads (its `pread`
    and `memchr` release the GIL): the same offsets, progress after every piece."""
    import threading

    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(3, 400) * 30 + b"\n\nlast")
    monkeypatch.setattr(transcript_module, "SCAN_CHUNK", 4096)
    with Transcript.open(path) as plain:
        want = list(plain._starts)
    monkeypatch.setattr(parallel, "threads_for", lambda n: 2)
    scanned_on: set[str] = set()
    real = transcript_module._scan_range

    def spy(t: Transcript, piece: tuple[int, int]) -> tuple[bytes, int]:
        scanned_on.add(threading.current_thread().name)
        return real(t, piece)

    monkeypatch.setattr(transcript_module, "_scan_range", spy)
    seen: list[int] = []
    with Transcript(path) as t:
        assert t.build_index(lambda done, total: seen.append(done))
        assert list(t._starts) == want
        assert t.index_complete and seen[-1] == path.stat().st_size
    assert seen == sorted(seen) and len(seen) == -(-path.stat().st_size // 4096)
    assert scanned_on and all(n.startswith("transcript-view-index") for n in scanned_on)
    assert threading.active_count() == 1 or not any(
        t.name.startswith("transcript-view-index") for t in threading.enumerate()
    )


# -- the pass -----------------------------------------------------------------------------------


def plain_analysis(t: Transcript) -> Analysis:
    """The definition: each line by `pread`, the standard parser, fed one at a time."""
    p = AnalysisPass(t)
    pending = None
    for line, offset, raw in _per_line(t):
        parsed = parse_line_bytes_plain(raw, line, offset)
        if parsed is None:
            continue
        if pending is not None:
            p.feed(pending)
        pending = parsed
    if pending is not None:
        p.feed(as_last(pending))
    return p.finish(t.line_count)


def _compare(path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, workers: int = 1) -> None:
    monkeypatch.setattr(transcript_module, "READ_CHUNK", chunk)
    with Transcript.open(path) as t:
        want = dump(plain_analysis(t))
        got = dump(analyse(t, workers=workers))
    assert got == want


class _PoolInThread(concurrent.futures.ThreadPoolExecutor):
    """`parallel.pool` as one thread of this process: the workers' fold of each batch
    and its merge, at a property test's pace (a fork an example would be seconds).

    `jobs` counts the batches sent to it (the pool is used only for two or more).
    """

    jobs = 0

    def __init__(
        self,
        workers: int,
        initializer: Callable[..., object] | None = None,
        initargs: tuple[Any, ...] = (),
    ) -> None:
        def start() -> None:
            if initializer is not None:
                initializer(*initargs)
            gc.enable()  # a worker's start turns it off, for its own process

        super().__init__(1, initializer=start)

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        type(self).jobs += 1
        return super().submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait, cancel_futures=cancel_futures)
        parallel._shared = None  # a worker's transcript: not this process's to keep


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6), size=st.integers(5, 120), mutated=st.booleans(),
       chunk=st.integers(40, 4000), merged=st.booleans())  # fmt: skip
def test_the_fast_pass_is_the_plain_pass(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    size: int,
    mutated: bool,
    chunk: int,
    merged: bool,
) -> None:
    """Random and mutated transcripts, read in batches of any size, give the plain
    pass's analysis: folded into the pass as they are mapped, or (`merged`) folded
    batch by batch as a worker does and merged (call ids reused while an earlier
    call waits, operations cut by a batch's end, repeated ids, ...)."""
    data = random_transcript(seed, size)
    if mutated:
        data = mutate(data, seed)
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    if merged:
        monkeypatch.setattr(parallel, "pool", _PoolInThread)
    _compare(path, monkeypatch, chunk, workers=2 if merged else 1)


@pytest.mark.parametrize("seed", [1, 2, 5, 8, 13])
def test_batches_mapped_in_worker_processes_give_the_same_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(random_transcript(seed * 7 + i, 80) for i in range(6)))
    _compare(path, monkeypatch, 600, workers=2)


def _calls(*items: tuple[str, str]) -> bytes:
    """A transcript from (kind, call id) steps: `call`, `dispatch <op>`, `answer`, `settle <op>`."""
    from transcript_view.core.canonical import canonical_json

    out = [canonical_json({"id": "m", "payload": {}, "ts": "t", "type": "session-meta", "v": 1})]
    for n, (kind, arg) in enumerate(items):
        if kind == "call":
            payload: dict[str, object] = {
                "role": "assistant",
                "content": "",
                "tool-calls": [{"id": arg, "function": {"name": "f"}}],
            }
            obj = {"id": f"a{n}", "payload": payload, "type": "message"}
        elif kind == "dispatch":
            call, op = arg.split()
            obj = {"id": op, "payload": {"call-id": call, "tool": "f"}, "type": "tool-dispatched"}
        elif kind == "answer":
            payload = {"role": "tool", "content": "ok", "tool-call-id": arg}
            obj = {"id": f"t{n}", "payload": payload, "type": "message"}
        else:
            obj = {"id": f"s{n}", "payload": {"op-id": arg}, "type": "tool-settled"}
        out.append(canonical_json({**obj, "ts": "t", "v": 1}))
    return b"\n".join(x.encode() for x in out) + b"\n"


@pytest.mark.parametrize("merged", [False, True])
@pytest.mark.parametrize("chunk", [1, 150, 300, 450, 10_000])
def test_a_call_id_reused_while_an_earlier_call_waits_is_matched_first_come(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, merged: bool
) -> None:
    """A batch folded on its own (`merged`, as a worker folds it) that matches a call
    id an earlier batch's call still waits on cannot know it: the fold sees the
    clash and folds those lines itself."""
    if merged:
        monkeypatch.setattr(parallel, "pool", _PoolInThread)
        monkeypatch.setattr(_PoolInThread, "jobs", 0)
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        _calls(
            ("call", "c"),  # never dispatched: waits for ever
            ("call", "d"),
            ("dispatch", "d o1"),
            ("call", "c"),
            ("dispatch", "c o2"),  # takes the first call c, not the second
            ("answer", "c"),
            ("settle", "o2"),
            ("answer", "d"),  # cut from its dispatch by a batch boundary
            ("settle", "o1"),
            ("settle", "o1"),  # twice
            ("settle", "o9"),  # never dispatched
        )
    )
    _compare(path, monkeypatch, chunk, workers=2 if merged else 1)
    if merged and chunk < 10_000:
        assert _PoolInThread.jobs >= 2  # the batches were folded on their own and merged
    with Transcript.open(path) as t:
        a = analyse(t)
    assert [op.dispatch_line for op in a.operations][:2] == [6, 4]
    kinds = [(f.kind, f.line) for f in a.findings]
    assert ("malformed-line", 11) in kinds and ("malformed-line", 12) in kinds


def test_a_repeated_id_sends_the_pass_back_to_exact_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_calls(("call", "c"), ("dispatch", "c o1"), ("dispatch", "c o1")))
    runs: list[bool] = []
    real = analysis_module.AnalysisPass.read

    def read(self: AnalysisPass, *args: Any, **kwargs: Any) -> None:
        runs.append(self.exact_ids)
        real(self, *args, **kwargs)

    monkeypatch.setattr(analysis_module.AnalysisPass, "read", read)
    _compare(path, monkeypatch, 100)
    assert runs[-2:] == [False, True]
    with Transcript.open(path) as t:
        a = analyse(t)
    assert any("was already used on line 3" in f.message for f in a.findings)


@pytest.mark.parametrize("ranges", [1, 2, 64])
@pytest.mark.parametrize("seed", range(6))
def test_the_whole_file_id_check_finds_repeats_within_and_across_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, ranges: int
) -> None:
    """`ids_unique` (each batch's keys cut into ranges of value) says what a set of
    every id says.

    Odd seeds repeat ids (`random_transcript`); read in small batches, so the
    repeats fall across batches as well as within one. A file this small has one
    range of keys; more are forced, as a big file has them.
    """
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 300)
    monkeypatch.setattr(analysis_module, "key_buckets", lambda lines: ranges)
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_transcript(seed, 120))
    with Transcript.open(path) as t:
        p = AnalysisPass(t, exact_ids=False)
        p.read(None, 1)
        unique = p.ids_unique()
    ids = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            ids.append(value["id"])
    assert unique is (len(set(ids)) == len(ids))


def _orphan_settles(rounds: int) -> bytes:
    """Settles that name no pending operation, among operations made before and after
    the pass first looks one up: settled twice, never dispatched, dispatched late."""

    def env(kind: str, payload: dict[str, Any], ident: str) -> str:
        return json.dumps({"id": ident, "payload": payload, "ts": "t", "type": kind, "v": 1})

    lines = [env("session-meta", {"app": "t"}, "s")]
    for n in range(rounds):
        call = {"id": f"c{n}", "function": {"name": "f", "arguments": "{}"}}
        lines += [
            env("message", {"role": "assistant", "content": "", "tool-calls": [call]}, f"a{n}"),
            env("tool-settled", {"op-id": f"x{n}", "outcome": "completed"}, f"sx{n}"),
            env("tool-dispatched", {"call-id": f"c{n}", "tool": "f", "arguments": "{}"}, f"o{n}"),
            env("tool-settled", {"op-id": f"o{n}", "outcome": "completed"}, f"s{n}"),
            env("tool-settled", {"op-id": f"o{n}", "outcome": "failed"}, f"t{n}"),
        ]
    return "\n".join(lines).encode() + b"\n"


@pytest.mark.parametrize(("chunk", "merged"), [(100_000, False), (300, False), (300, True)])
def test_settles_that_name_no_pending_operation_are_found_as_the_plain_pass_finds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, merged: bool
) -> None:
    """Each asks which row dispatched its operation. That was a scan of every dispatch
    (2,000 orphan settles: seconds, 20,000: minutes); now a table of the rows made as
    they are first asked for, which a dispatch made after it (its row already there,
    awaiting its dispatch since its call) must still reach."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(_orphan_settles(60))
    if merged:
        monkeypatch.setattr(parallel, "pool", _PoolInThread)
    _compare(path, monkeypatch, chunk, workers=2 if merged else 1)
    with Transcript.open(path) as t:
        messages = [f.message for f in analyse(t).findings]
    assert sum("was already settled on line" in m for m in messages) == 60
    assert sum("which no earlier line dispatched" in m for m in messages) == 60

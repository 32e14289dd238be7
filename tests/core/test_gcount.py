"""The native grapheme counter (core/_gcount.c) and the tables it is given.

`core.graphemes` compiles wcwidth's Unicode tables and the UAX #29 rules
(`_step`) into a class table and an automaton; the C module only runs it.
These tests check each layer on its own:

* the property of every code point against wcwidth's own per-code-point
  functions;
* the automaton, run here in Python over the same tables, against the plain
  engine on every string of up to four class representatives, and on random
  longer ones;
* the C loop against that Python run, on every string width (1, 2 and 4 bytes
  a code point);
* that bad tables are refused, that the GIL is released, and that the module
  was built on a machine that can build it (``optional=True`` in setup.py
  would otherwise hide a compile error).

Nothing here asserts on time.
"""

from __future__ import annotations

import itertools
import shutil
import sys
import sysconfig
import threading
from array import array
from pathlib import Path

import pytest
from _support import REFERENCE, plain_clusters
from hypothesis import given, settings
from hypothesis import strategies as st
from wcwidth import grapheme as wg

from transcript_view.core import graphemes
from transcript_view.core import native as native_modules

native = pytest.mark.skipif(
    not graphemes.NATIVE, reason="core._gcount was not built, or TRANSCRIPT_VIEW_PURE is set"
)


def run_tables(text: str, tables: graphemes._Automaton | None = None) -> int:
    """Run the automaton over `text` in Python, as core/_gcount.c does without its skip."""
    tables = tables or graphemes._native_tables()
    stage1 = array("H")
    stage1.frombytes(tables.stage1)
    moves = array("H")
    moves.frombytes(tables.moves)
    state = breaks = 0
    for ch in text:
        cp = ord(ch)
        move = moves[state + tables.stage2[(stage1[cp >> 7] << 7) | (cp & 127)]]
        breaks += move & 1
        state = move >> 1
    return breaks


def expected_props(cp: int) -> int:
    """The property byte of `cp` from wcwidth's own per-code-point functions."""
    if 0xD800 <= cp <= 0xDFFF:
        return graphemes._CONTROL  # our rule: a lone surrogate is a Control
    value = int(wg._grapheme_cluster_break.__wrapped__(cp))
    for flag, test in (
        (graphemes._EXT_PICT, wg._is_extended_pictographic),
        (graphemes._INCB_LINKER, wg._is_incb_linker),
        (graphemes._INCB_EXTEND, wg._is_incb_extend),
        (graphemes._INCB_CONSONANT, wg._is_incb_consonant),
    ):
        if test.__wrapped__(cp):
            value |= flag
    return value


def representatives() -> list[str]:
    """One code point per class (distinct property byte), the lowest of each."""
    props = graphemes._properties()
    first: dict[int, int] = {}
    for cp, value in enumerate(props):
        first.setdefault(value, cp)
    return [chr(cp) for cp in sorted(first.values())]


REPS = representatives()


def test_every_code_point_has_wcwidths_properties() -> None:
    """The table is piecewise constant between the edges of wcwidth's ranges.

    Checking every edge, and the code points on either side of it, checks
    every stretch of the table against wcwidth's functions, without calling
    them 1.1 million times.
    """
    from wcwidth import table_grapheme as tg

    edges = {0, 0xD800, 0xE000, 0x10FFFF}
    for name in dir(tg):
        table = getattr(tg, name)
        if name.isupper() and isinstance(table, tuple):
            for lo, hi in table:
                edges.update((lo, hi + 1))
    props = graphemes._properties()
    checked = 0
    for edge in edges:
        for cp in (edge - 1, edge, edge + 1):
            if 0 <= cp < 0x110000:
                assert props[cp] == expected_props(cp), hex(cp)
                checked += 1
    assert checked > 5_000


def test_incb_values_do_not_overlap() -> None:
    """InCB is one value per code point; `_step` relies on at most one flag."""
    props = graphemes._properties()
    both = [
        hex(cp)
        for cp, p in enumerate(props)
        if bin(p & (graphemes._INCB_LINKER | graphemes._INCB_EXTEND
                    | graphemes._INCB_CONSONANT)).count("1") > 1
    ]  # fmt: skip
    assert both == []


def test_tables_are_small() -> None:
    tables = graphemes._native_tables()
    assert len(REPS) == tables.classes <= 256
    assert len(tables.moves) // 2 // tables.classes < 64  # states
    assert len(tables.stage2) < 64 * 1024


def test_automaton_equals_engine_on_every_short_string() -> None:
    """Every string of one to four class representatives: 130,000+ of them."""
    checked = 0
    for length in range(1, 5):
        for chars in itertools.product(REPS, repeat=length):
            text = "".join(chars)
            assert run_tables(text) == len(plain_clusters(text)), [hex(ord(c)) for c in text]
            checked += 1
    assert checked == sum(len(REPS) ** n for n in range(1, 5))


@settings(max_examples=2_000, deadline=None)
@given(st.lists(st.sampled_from(REPS), min_size=5, max_size=40).map("".join))
def test_automaton_equals_engine_on_longer_strings(text: str) -> None:
    """Chains the short strings cannot hold: flag runs, ZWJ sequences, conjuncts."""
    assert run_tables(text) == len(plain_clusters(text))


@settings(max_examples=1_500, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(REPS), st.integers(1, 7)), min_size=1, max_size=8))
def test_automaton_equals_engine_on_runs_of_classes(runs: list[tuple[str, int]]) -> None:
    """Runs of one class repeated: the long chains uniform draws almost never make.

    `ExtPict Extend Extend ZWJ ExtPict`, `Linker Extend Extend Extend Consonant`,
    `Prepend RI RI RI`: every look-back rule and RI parity over several code points.
    """
    text = "".join(char * times for char, times in runs)
    assert run_tables(text) == len(plain_clusters(text))


@native
@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([*REPS, "a", "\xe9", "\u0301", "日"]), max_size=60).map("".join))
def test_native_loop_equals_tables(text: str) -> None:
    assert graphemes._automaton().count(text) == run_tables(text)


#: Printable ASCII, the runs the native loop skips (`plain_runs`), and its neighbours.
PLAIN = st.text(st.characters(min_codepoint=0x1F, max_codepoint=0x7F), min_size=1, max_size=30)


@native
def test_native_counter_skips_printable_ascii_runs() -> None:
    """The real tables allow the skip; tables where one printable differs do not."""
    from transcript_view.core import _gcount

    good = graphemes._native_tables()
    assert _gcount.Automaton(*good).plain_runs
    # Give "b" the class of U+0301 (Extend) in a copy of block 0: printable
    # ASCII no longer shares one class, so skipping it would count "abba" as 4.
    stage1 = array("H")
    stage1.frombytes(good.stage1)
    extend = good.stage2[(stage1[0x301 >> 7] << 7) | (0x301 & 127)]
    block0 = bytearray(good.stage2[stage1[0] << 7 : (stage1[0] + 1) << 7])
    block0[ord("b")] = extend
    stage1[0] = len(good.stage2) // 128
    odd = good._replace(stage1=stage1.tobytes(), stage2=good.stage2 + bytes(block0))
    automaton = _gcount.Automaton(*odd)
    assert not automaton.plain_runs
    for text in ("abba", "xab\r\nbb", "b" * 100):
        assert automaton.count(text) == run_tables(text, odd)
    assert automaton.count("abba") == 2


@native
@settings(max_examples=1_500, deadline=None)
@given(
    st.lists(st.one_of(PLAIN, st.sampled_from([*REPS, "\r\n", "\xe9", "\U0001f600"]))).map("".join)
)
def test_native_plain_runs_equal_tables(text: str) -> None:
    """Runs of printable ASCII between every class: where the skip starts and stops.

    A run after a Prepend, a CR, a ZWJ or a regional indicator, and an Extend
    or a ZWJ right after a run (the run's last character takes it), in strings
    of every width.
    """
    assert graphemes._automaton().count(text) == run_tables(text) == len(plain_clusters(text))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x85\xad\xe9\r\n\xff",  # 1 byte a code point (Latin-1, controls in it)
        "a\u0301\u0915\u094d\u0937\uac00\u11a8",  # 2 bytes
        "👩\u200d👩\u200d👧\u200d👦\U0001f1ef\U0001f1f5\U0001f1fa",  # 4 bytes
        "\udcff\u0301\ud800",  # lone surrogates: each a Control
    ],
)
def test_native_counts_every_string_width(text: str) -> None:
    """The native loop where it is loaded; `count` and the tables everywhere (the pure lane)."""
    want = len(plain_clusters(text))
    assert graphemes.count(text) == graphemes._count_pure(text) == run_tables(text) == want
    if graphemes.NATIVE:
        assert graphemes._automaton().count(text) == want


def test_native_count_of_the_mixed_fixture() -> None:
    """`count` is the native counter where it is loaded, `_count_pure` otherwise."""
    text = (REFERENCE / "basic.big-input.txt").read_text(encoding="utf-8")
    assert graphemes.count(text) == graphemes._count_pure(text) == run_tables(text)


@native
def test_native_counter_refuses_bad_tables() -> None:
    from transcript_view.core import _gcount

    good = graphemes._native_tables()
    _gcount.Automaton(*good)  # the real ones pass
    bad = [
        good._replace(stage1=good.stage1[:-2]),
        good._replace(stage2=good.stage2[:-1]),
        good._replace(moves=good.moves[:-2]),
        good._replace(classes=0),
        good._replace(classes=257),
        good._replace(stage1=b"\xff\xff" + good.stage1[2:]),  # a missing block
        good._replace(stage2=bytes([good.classes]) + good.stage2[1:]),  # no such class
        good._replace(moves=b"\xfe\xff" + good.moves[2:]),  # no such state
    ]
    for tables in bad:
        with pytest.raises(ValueError):
            _gcount.Automaton(*tables)
    # Only bytes: a bytearray or a memoryview could be changed after the check.
    for mutable in (bytearray, memoryview):
        with pytest.raises(TypeError):
            _gcount.Automaton(good.stage1, good.stage2, mutable(good.moves), good.classes)
    with pytest.raises(TypeError):
        graphemes._automaton().count(b"bytes")  # type: ignore[arg-type]


@native
def test_native_counter_releases_the_gil() -> None:
    """Another thread runs while a long count is in progress.

    With a switch interval of a minute, the counting thread would keep the GIL
    until its count returned unless the C code released it; the main thread
    gets to look at `done` only once the GIL is free.
    """
    text = "\xe9" * 200_000_000  # Latin-1: 200 MB, about a second to count
    started, done = threading.Event(), threading.Event()
    result: list[int] = []

    def work() -> None:
        started.set()
        result.append(graphemes.count(text))
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(60)
    try:
        worker = threading.Thread(target=work)
        worker.start()
        started.wait()
        seen_running = not done.is_set()
        worker.join()
    finally:
        sys.setswitchinterval(old)
    assert seen_running
    assert result == [200_000_000]


@pytest.mark.skipif(
    native_modules.PURE,
    reason="TRANSCRIPT_VIEW_PURE is set: the package loads no native module, built or not",
)
def test_native_counter_is_built_where_it_can_be() -> None:
    """setup.py marks the extensions optional, so a compile error would only warn.

    Where a C compiler and the Python headers are present (CI, dev machines),
    the counter (and the line scanner, `core/_lines.c`) must have been built;
    elsewhere the pure path is expected.
    """
    include = Path(sysconfig.get_paths()["include"]) / "Python.h"
    can_build = include.exists() and any(shutil.which(cc) for cc in ("cc", "gcc", "clang"))
    if not can_build:
        pytest.skip("no C compiler or Python headers here: the pure path is expected")
    assert graphemes.NATIVE, "core._gcount was not built: see the pip install output"
    from transcript_view.core import transcript

    assert transcript._lines is not None, "core._lines was not built: see the pip install output"


_CR_LF_TEXT = st.text(alphabet=st.sampled_from("\r\n\r\nxé中😀\x00"), max_size=300)


@native
@settings(max_examples=300, deadline=None)
@given(text=_CR_LF_TEXT, pad=st.sampled_from(["", "é", "😀"]), big=st.booleans())
def test_crlf_pairs_is_str_count(text: str, pad: str, big: bool) -> None:
    """Every string width (the pad widens it), and strings long enough to release the GIL."""
    from transcript_view.core import _gcount

    text = (text * 300 if big else text) + pad
    assert _gcount.crlf_pairs(text) == text.count("\r\n")
    with pytest.raises(TypeError):
        _gcount.crlf_pairs(b"\r\n")  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(text=_CR_LF_TEXT)
def test_an_ascii_count_with_cr_lf_is_the_same_on_both_paths(text: str) -> None:
    """`count` of ASCII is its length less its CR LF pairs, natively counted or not."""
    ascii_text = text.encode("ascii", "ignore").decode()
    want = len(ascii_text) - ascii_text.count("\r\n")
    assert graphemes.count(ascii_text) == want
    with pytest.MonkeyPatch.context() as m:
        m.setattr(graphemes, "_gcount", None)
        assert graphemes.count(ascii_text) == want

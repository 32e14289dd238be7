"""core.graphemes: UAX #29 conformance, fast paths against the plain engine, big inputs.

The reference everywhere is the plain engine: `wcwidth.iter_graphemes` over the
text, except that lone surrogates are split off first and are one grapheme each
(UAX #29 gives Cs the Control class; the engine itself would glue them to their
neighbours). `count` is checked on both of its paths, the native counter (when
it was built; `tests/test_gcount.py` tests it on its own) and `_count_pure`.
Nothing here asserts on time.
"""

from __future__ import annotations

from collections.abc import Iterator
from unittest import mock

import pytest
from _support import GRAPHEME_BREAK_TEST, REFERENCE, plain_clusters
from hypothesis import given, settings
from hypothesis import strategies as st
from wcwidth import iter_graphemes

from transcript_view.core import graphemes
from transcript_view.core.graphemes import count, cut, head, is_boundary, tail

CONFORMANCE = GRAPHEME_BREAK_TEST


def _parse_conformance() -> list[tuple[int, list[str]]]:
    """(line number, expected clusters) for every test line of the file.

    Format: ``÷ 0020 × 0308 ÷ # comment``: ÷ is a boundary, × is none.
    """
    cases: list[tuple[int, list[str]]] = []
    with open(CONFORMANCE, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            body = line.split("#", 1)[0].strip()
            if not body:
                continue
            tokens = body.split()
            assert tokens[0] == "÷" and tokens[-1] == "÷", number
            clusters: list[str] = []
            current = ""
            for token in tokens[1:]:
                if token == "÷":
                    clusters.append(current)
                    current = ""
                elif token != "×":
                    current += chr(int(token, 16))
            cases.append((number, clusters))
    return cases


CASES = _parse_conformance()


reference = plain_clusters


def boundaries(clusters: list[str]) -> set[int]:
    """Indices where a grapheme starts or the text ends."""
    out = {0}
    pos = 0
    for cluster in clusters:
        pos += len(cluster)
        out.add(pos)
    return out


def assert_matches_reference(text: str, ns: Iterator[int] | None = None) -> None:
    """count/head/tail/cut/is_boundary of `text` agree with the plain engine."""
    clusters = reference(text)
    total = len(clusters)
    assert count(text) == total
    assert graphemes._count_pure(text) == total
    for n in ns if ns is not None else range(total + 2):
        assert head(text, n) == "".join(clusters[:n]), n
        assert tail(text, n) == ("".join(clusters[max(0, total - n) :]) if n > 0 else ""), n
    bounds = boundaries(clusters)
    assert [i for i in range(len(text) + 1) if is_boundary(text, i)] == sorted(bounds)


# -- conformance -----------------------------------------------------------------


def test_conformance_file_is_complete() -> None:
    assert len(CASES) == 853


@pytest.mark.parametrize(("number", "clusters"), CASES, ids=[f"line{n}" for n, _ in CASES])
def test_conformance_line(number: int, clusters: list[str]) -> None:
    text = "".join(clusters)
    # The engine this module trusts, on its own...
    assert list(iter_graphemes(text)) == clusters
    # ...and the module's answers, for every n from 0 to count + 1.
    total = len(clusters)
    assert count(text) == total
    assert graphemes._count_pure(text) == total
    for n in range(total + 2):
        assert head(text, n) == "".join(clusters[:n])
        assert tail(text, n) == ("".join(clusters[max(0, total - n) :]) if n > 0 else "")
        if n <= total:
            assert head(text, n) + tail(text, total - n) == text
    assert cut(text, 1, 1) == (total, "".join(clusters[:1]), "".join(clusters[-1:]))
    assert {i for i in range(len(text) + 1) if is_boundary(text, i)} == boundaries(clusters)


def test_conformance_lines_inside_long_simple_runs() -> None:
    """Every conformance string between NUL-fenced ASCII and CJK runs, all in one text.

    A Control breaks on both sides, so the expected clusters are just the
    concatenation; the runs make the collapsing and windowing fast paths work
    right next to every kind of cluster.
    """
    filler = ["\x00", *"lorem ipsum", "\x00", *"日本語のテキスト", "\x00"]
    expected: list[str] = []
    for _, clusters in CASES:
        expected += filler + clusters
    expected += filler
    text = "".join(expected)
    total = len(expected)
    assert count(text) == total
    assert graphemes._count_pure(text) == total
    assert [i for i in range(len(text) + 1) if is_boundary(text, i)] == sorted(boundaries(expected))
    for n in [*range(0, total + 2, 97), total - 1, total, total + 1]:
        assert head(text, n) == "".join(expected[:n])
        assert tail(text, n) == ("".join(expected[max(0, total - n) :]) if n > 0 else "")


# -- the simple-character class against the engine --------------------------------


def test_every_simple_character_behaves_as_the_fast_paths_assume() -> None:
    """Each code point collapsed arithmetically is, to the engine, a plain base.

    Checked in bulk, one NUL-fenced probe per property (NUL is a Control, so
    probes cannot affect each other): it breaks from "a" on both sides (not
    Extend/SpacingMark/ZWJ/Prepend), a Prepend attaches to it (not a Control),
    and it does not continue Hangul, flags, emoji ZWJ sequences or conjuncts.
    """
    simple = [chr(cp) for lo, hi in graphemes._simple_ranges() for cp in range(lo, hi + 1)]
    assert len(simple) > 40_000
    probes = {
        "a{}": 2,
        "{}a": 2,
        "\u0600{}": 1,
        "\u1100{}": 2,
        "{}\u11a8": 2,
        "\U0001f1e6{}": 2,
        "\U0001f44d\u200d{}": 2,
        "\u0915\u094d{}": 2,
    }
    for probe, expected in probes.items():
        text = "\x00".join(probe.format(c) for c in simple)
        got = sum(1 for _ in iter_graphemes(text))
        assert got == len(simple) * expected + len(simple) - 1, probe
    # And they break from each other, in code point order.
    assert sum(1 for _ in iter_graphemes("".join(simple))) == len(simple)


# One character of every kind a rule tells apart (GCB class, InCB, emoji), for
# probing a character's behaviour on either side.
NEIGHBOURS = [
    "a", "\x00", "\x85", "\r", "\n", "\u0301", "\u200d", "\u0903", "\u0600",
    "\u1100", "\u1161", "\u11a8", "\uac00", "\uac01", "\U0001f1e6", "\U0001f44d",
    "\u0915", "\u094d", "\u1cf5", "\u0300", "\u00a9",
]  # fmt: skip


def _chars(ranges: list[tuple[int, int]]) -> list[str]:
    return [chr(cp) for lo, hi in ranges for cp in range(lo, hi + 1)]


def _lengths(text: str) -> list[int]:
    return [len(cluster) for cluster in iter_graphemes(text)]


def test_every_pack_end_behaves_exactly_like_a() -> None:
    """`count` replaces a run with "a"; each character that may end a run is "a" to the engine.

    NUL-fenced probes with every kind of neighbour before and after, plus the
    look-back chains (emoji ZWJ, flags, conjuncts): the clusters are the same
    with the character or with "a" in its place. This is what rules out U+1CF5
    (simple, but an InCB Linker that joins a following consonant since Unicode 18).
    """
    ends = [chr(cp) for cp in range(0x20, 0x7F)] + _chars(graphemes._base_ranges())
    assert len(ends) > 40_000
    assert "\u1cf5" not in ends and "\u1cf6" not in ends
    probes = [n + "{}" for n in NEIGHBOURS] + ["{}" + n for n in NEIGHBOURS]
    probes += [
        "\u0915\u094d{}\u0915", "{}\u094d\u0915", "\u1cf5\u0300{}\u0915",
        "\U0001f44d\u200d{}\U0001f44d", "{}\u200d\U0001f44d",
        "\U0001f1e6{}\U0001f1e6", "\u1100{}\u1161", "\u0600{}\u0301",
    ]  # fmt: skip
    for probe in probes:
        got = _lengths("\x00".join(probe.format(c) for c in ends))
        assert got == _lengths("\x00".join(probe.format("a") for _ in ends)), probe


def test_every_interior_character_breaks_from_every_run_neighbour() -> None:
    """Inside a packed run, every pair of neighbours is a boundary (CR LF aside).

    Each non-ASCII interior character (simple, controls, Hangul syllables) next
    to one representative of every interior kind, on both sides.
    """
    interior = _chars(graphemes._interior_ranges())
    assert len(interior) > 50_000
    assert {"\x85", "\u200b", "\uac00", "\ud7a3", "\u1cf5"} <= set(interior)
    assert not {"\u0301", "\u0915", "\u1100", "\u1161", "\u11a8", "\ud800"} & set(interior)
    for rep in ["a", "\x00", "\r", "\n", "\x85", "\u200b", "日", "\uac00", "\uac01", "\u1cf5"]:
        for probe in (rep + "{}", "{}" + rep):
            text = "\x00".join(probe.format(c) for c in interior)
            assert sum(1 for _ in iter_graphemes(text)) == 3 * len(interior) - 1, (rep, probe)


def test_has_surrogates() -> None:
    assert not graphemes._has_surrogates("")
    assert not graphemes._has_surrogates("abc 日本 👍\U0010ffff")
    assert graphemes._has_surrogates("abc\udcff")
    assert graphemes._has_surrogates("\ud800")


PACK_FRAGMENTS = [
    "a", "Z", " ", "\r", "\n", "\r\n", "\x00", "\x85", "\u200b", "\u00ad",
    "abcd", "lorem ipsum", "日本語の", "가나다라", "가", "각", "ab\x85cd", "x\u1cf5y",
    "\u1cf5", "\u1cf6", "\u0915", "\u094d", "\u0301", "\u0300", "\u200d", "\ufe0f",
    "\u0903", "\u0600", "\u1100", "\u1161", "\u11a8", "👍", "\U0001f1e6", "\udcff",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PACK_FRAGMENTS), max_size=60).map("".join))
def test_count_with_packed_runs_equals_plain_engine(text: str) -> None:
    """Runs of every packable kind with every kind of neighbour at their ends."""
    assert graphemes._count_pure(text) == len(reference(text))


# -- fast paths against the plain engine --------------------------------------------

FRAGMENTS = [
    "a", "Z", " ", ".", "\t", "\x00", "\x1b", "\x7f", "\r", "\n", "\r\n", "\r\n\r\n",
    "lorem ipsum dolor", "x" * 40, "é", "naïve", "日本語", "ｆｕｌｌ", "Привет", "—",
    "\u0301", "\u0308", "\u0323", "\u200d", "\u200c", "\ufe0f", "\u200b", "\u00ad",
    "👍", "🏽", "👩\u200d👩\u200d👧\u200d👦", "🏳\ufe0f\u200d🌈", "❤", "©",
    "\U0001f1ef", "\U0001f1f5", "\U0001f1fa\U0001f1f8",
    "\u1100", "\u1161", "\u11a8", "\uac00", "\uac01", "한국어",
    "क", "्", "ष", "\u093f", "\u0915\u094d\u0937", "न", "ক্ষ", "தமிழ்", "ภาษาไทย", "\u0e33",
    "\u0600", "\u06dd", "\u0d4e", "\U000110bd",
    "\udcff", "\udc80", "\ud800", "\ud83d\ude00",
    "\U00020000", "𝔸",
]  # fmt: skip

texts = st.lists(st.sampled_from(FRAGMENTS), max_size=80).map("".join)
mixed_texts = st.one_of(
    texts,
    st.text(
        alphabet=st.sampled_from("ab \r\n\u0301\u200d\u0600\udcff日👍\U0001f1e6क्"), max_size=60
    ),
)


@settings(max_examples=250, deadline=None)
@given(mixed_texts)
def test_fast_paths_equal_plain_engine(text: str) -> None:
    assert_matches_reference(text)


@settings(max_examples=150, deadline=None)
@given(mixed_texts)
def test_fast_paths_equal_plain_engine_without_the_native_counter(text: str) -> None:
    """head/tail count their windows with `count`: also right on the pure path."""
    with mock.patch.object(graphemes, "_gcount", None):
        assert_matches_reference(text)


@settings(max_examples=150, deadline=None)
@given(mixed_texts)
def test_fast_paths_equal_plain_engine_with_tiny_windows(text: str) -> None:
    """Windows of one code point: every window edge falls inside something."""
    with mock.patch.object(graphemes, "_MIN_WINDOW", 1):
        assert_matches_reference(text)


@settings(max_examples=250, deadline=None)
@given(texts, st.integers(0, 120), st.integers(0, 120))
def test_cut_and_split_properties(text: str, head_n: int, tail_n: int) -> None:
    clusters = reference(text)
    total = len(clusters)
    assert cut(text, head_n, tail_n) == (total, head(text, head_n), tail(text, tail_n))
    n = min(head_n, total)
    first, last = head(text, n), tail(text, total - n)
    assert first + last == text
    # Neither cut splits a grapheme.
    assert is_boundary(text, len(first))
    assert len(first) in boundaries(clusters)
    assert len(text) - len(tail(text, tail_n)) in boundaries(clusters)


@settings(max_examples=100, deadline=None)
@given(texts, texts, st.integers(1, 400))
def test_long_ascii_between_anything(left: str, right: str, width: int) -> None:
    """An ASCII run long enough to be collapsed, with arbitrary text at its seams."""
    text = left + ("ab\r\ncd" * width)[: width * 3] + right
    assert_matches_reference(text, iter([0, 1, 2, 3, 7, 50, 200, 10_000]))


# -- seams, one by one ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "abcdefgh\u0301",  # Extend after a run
        "abcdefgh\u093f",  # SpacingMark after a run
        "abcdefgh\u200d👍",  # ZWJ after a run
        "\u0600abcdefgh",  # Prepend before a run
        "\u0600\nabcdefgh",  # ...but not before a control
        "abcdefg\r\n\u0301",  # CR LF at the end of a run, then Extend
        "\u0301\r\nabcdefgh",  # CR LF at the start of a run
        "abcdef\r\ud800\nxyz",  # CR, surrogate, LF
        "\u0600\udcffabcdef\udcff\u0301",  # surrogates are Controls, not bases
        "👍\u200dabcdefgh",  # ZWJ then ASCII: no emoji sequence
        "\U0001f1e6abcdefg\U0001f1e6\U0001f1e6\U0001f1e6",  # flag parity after a run
        "क्abcdefghक्ष",  # a run breaks a conjunct chain
        "日本語のテキスト\u0301日本語",  # Extend after a CJK run
        "\u0600日本語のテキスト",  # Prepend before a CJK run
        "가나다라마바사아\u11a8",  # Hangul is not simple
        "\u1100가나다라마바사",  # L before a run of syllables: joins the first
        "abcd가나다라마바사\u11a8",  # ...and T after one: joins the last
        "abcdefg\u1cf5\u0915",  # a linker at the end of a run joins a consonant
        "\u0915\u094d\u1cf5abcdefg\u1cf5",  # linkers at both ends
        "abc\x85def\u200bghi\u0301",  # controls inside a run, Extend after it
        "abcdefg\x00\u0301",  # a control never ends a run: Extend after it stands alone
        "\u0600\x85abcdefg",  # ...nor starts one: a Prepend before it stands alone
    ],
)
def test_seams(text: str) -> None:
    assert_matches_reference(text)


def test_ascii_fast_path() -> None:
    assert count("a\r\nb\r\r\n\n") == 6
    assert head("a\r\nb", 2) == "a\r\n"
    assert tail("a\r\nb", 2) == "\r\nb"
    assert head("\r\n" * 5, 3) == "\r\n" * 3
    assert tail("\r\n" * 5, 3) == "\r\n" * 3
    assert head("abc", 0) == "" and tail("abc", -1) == ""
    assert head("abc", 99) == "abc" and tail("abc", 99) == "abc"


def test_lone_surrogates_do_not_crash() -> None:
    raw = b"ok \xff\xfe \xe2\x82"
    text = raw.decode("utf-8", "surrogateescape")
    assert count(text) == len(text)
    assert head(text, 4) == "ok \udcff"
    assert tail(text, 2) == "\udce2\udc82"
    assert count("\udcff\u0301") == 2
    assert count("\u0600\udcff") == 2


def test_is_boundary_out_of_range() -> None:
    assert is_boundary("", 0)
    assert is_boundary("ab", 2)
    assert not is_boundary("ab", 3)
    assert not is_boundary("ab", -1)


def test_long_grapheme_and_no_certain_boundaries() -> None:
    """One 20,000-code-point grapheme; Hangul with no certain boundary anywhere."""
    huge = "a" + "\u0301" * 20_000
    text = "x" + huge + "y"
    assert count(text) == 3
    assert head(text, 2) == "x" + huge
    assert tail(text, 2) == huge + "y"
    assert not is_boundary(text, 10_000)
    hangul = "가" * 30_000 + "\u11a8"
    assert count(hangul) == 30_000
    assert tail(hangul, 2) == "가가\u11a8"
    assert head(hangul, 2) == "가가"
    assert is_boundary(hangul, 15_000)
    assert not is_boundary(hangul, 30_000)


# -- 10 MB inputs -----------------------------------------------------------------

BIG = 10_000_000


def test_ten_megabytes_of_ascii_with_emoji_at_the_far_end() -> None:
    family = "👩\u200d👩\u200d👧\u200d👦"
    text = "x" * BIG + family
    assert count(text) == BIG + 1
    assert head(text, 3) == "xxx"
    assert tail(text, 1) == family
    assert tail(text, 3) == "xx" + family
    total, first, last = cut(text, 12_288, 4_096)
    assert (total, first, last) == (BIG + 1, "x" * 12_288, "x" * 4_095 + family)
    text = family + "\u0301" + "\r\n" * (BIG // 2)
    total, first, last = cut(text, 2, 3)
    assert (total, first, last) == (BIG // 2 + 1, family + "\u0301\r\n", "\r\n" * 3)


def test_ten_megabytes_of_mixed_script() -> None:
    sample = (REFERENCE / "basic.big-input.txt").read_text(encoding="utf-8")
    text = sample * (BIG // len(sample.encode("utf-8")) + 1)
    clusters = list(iter_graphemes(text))  # no surrogates in it: the plain engine is exact
    total, first, last = cut(text, 12_288, 4_096)
    assert total == len(clusters) == graphemes._count_pure(text)
    assert first == "".join(clusters[:12_288])
    assert last == "".join(clusters[-4_096:])

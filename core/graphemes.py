"""Extended grapheme clusters (UAX #29, Unicode 18): count, first N, last N.

Excerpts are measured in graphemes (what a reader sees as one character), and
they are cut from tool results that can be 10 MB, so this module is on the hot
path. The segmentation itself is `wcwidth`'s C engine (it passes all 853 lines
of GraphemeBreakTest-18.0.0; `tests/test_graphemes.py` keeps checking that).

`count`, the one pass over a whole result, has a native path: the UAX #29
rules, written once here (`_step`), and wcwidth's property tables are compiled
into a small automaton that `core._gcount` (C, optional, built by setup.py
where a compiler exists) runs at about 2 ns a code point with the GIL released,
so a settle's hash and write run beside it. Without it, `_count_pure` gives the
same answers with the fast paths below.

Around the engine sit fast paths that never change an answer, only how much
text the engine has to walk:

* Pure-ASCII text needs no engine at all: every code point is a grapheme
  except that CR LF is one.
* Runs of *simple* characters are counted arithmetically. A simple character
  is ASCII, or a non-ASCII character whose Grapheme_Cluster_Break is Other and
  that is neither Extended_Pictographic nor an Indic conjunct consonant. Two
  adjacent simple characters always have a boundary between them (except
  CR LF), and no rule that looks further back (emoji ZWJ, flags, conjuncts)
  can see through one, so a run of them is "length minus CR LF pairs"
  graphemes. That covers Latin, Cyrillic, Greek, CJK, kana, fullwidth forms...
  `count` packs runs whose inside may also hold precomposed Hangul syllables
  and controls (see `_interior_ranges`), which is what most Korean text is.
* Head and tail only look at a window near the cut, which starts at a
  *certain* boundary (one that the two characters around it decide on their
  own, e.g. after LF or between two simple characters). The engine may start
  at any boundary as if it were the start of the string (no rule's look-back
  chain crosses a boundary), and at a certain one we know that without
  running the engine from the start.

Lone surrogates (from ``surrogateescape``-decoded bytes) are one grapheme each,
like a control character (UAX #29 gives Cs the Control class). The engine
would glue them to neighbours, so it is never shown one.

Only `iter_graphemes` (forward) is used from wcwidth: its backward helpers
(`grapheme_boundary_before`, `iter_graphemes_reverse`) get Prepend + ASCII +
Extend wrong (``"\\u0600a\\u0301"`` is one grapheme; they report a boundary
after U+0600).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from functools import cache
from itertools import count as _counter
from typing import TYPE_CHECKING, Final, NamedTuple

from transcript_view.core import native

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from transcript_view.core import _gcount  # the optional native counter (core/_gcount.c)
else:  # None where it was not built, or under TRANSCRIPT_VIEW_PURE (core/native.py)
    _gcount = native.load("transcript_view.core._gcount")

__all__ = ["NATIVE", "count", "cut", "head", "is_boundary", "tail"]

#: Whether `count` uses the native counter (built from core/_gcount.c).
NATIVE: Final = _gcount is not None

_CRLF: Final = "\r\n"

# A run is collapsed when it has at least this many simple characters after
# its first (measured on mixed text: 2 to 4 are equally good, 8 is slower).
_MIN_RUN: Final = 3

# `count` packs a run when it has at least this many characters between its
# first and last (a match costs about as much as three engine clusters, and
# packing saves len - 1 of them: measured on mixed text, 1 to 3 are within 2%).
_MIN_PACK: Final = 2

# First window a head/tail walk looks at beyond what it must cover.
_MIN_WINDOW: Final = 4096


def _class_body(ranges: list[tuple[int, int]]) -> str:
    r"""Render code point ranges as the inside of a regex character class.

    Args:
        ranges: Sorted, non-overlapping inclusive ranges.

    Returns:
        The class body, every code point written as a ``\U`` escape so that no
        character can be taken as class syntax.
    """
    return "".join(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)


def _simple_ranges() -> list[tuple[int, int]]:
    """Non-ASCII BMP code points whose boundaries with simple neighbours are certain.

    Why this set: a break between two characters X and Y can only be vetoed by
    GB3 (CR LF), GB6-8 (Hangul L/V/T/LV/LVT), GB9/9a (Y is Extend, ZWJ or
    SpacingMark), GB9b (X is Prepend), GB9c (Y is an InCB consonant), GB11 (Y is
    Extended_Pictographic) or GB12/13 (Regional_Indicator). Characters with
    none of these properties (and not Control, CR, LF, nor a surrogate, to keep
    them plain) break from each other unconditionally and also end every
    look-back chain those rules use.

    Only the BMP: a `re` character class that reaches past U+FFFF is compiled
    to a list of ranges searched one by one, which made `count` seven times
    slower. Simple characters beyond the BMP (CJK extension B, math letters)
    just go to the engine.

    Returns:
        The complement, within U+0080..U+FFFF, of all those classes, from
        wcwidth's own Unicode 18 tables.
    """
    from wcwidth import table_grapheme as _gcb  # 20 ms to import: only when needed

    tables = (
        _gcb.GRAPHEME_CR,
        _gcb.GRAPHEME_LF,
        _gcb.GRAPHEME_CONTROL,
        _gcb.GRAPHEME_EXTEND,
        _gcb.GRAPHEME_ZWJ,
        _gcb.GRAPHEME_REGIONAL_INDICATOR,
        _gcb.GRAPHEME_PREPEND,
        _gcb.GRAPHEME_SPACINGMARK,
        _gcb.GRAPHEME_L,
        _gcb.GRAPHEME_V,
        _gcb.GRAPHEME_T,
        _gcb.GRAPHEME_LV,
        _gcb.GRAPHEME_LVT,
        _gcb.EXTENDED_PICTOGRAPHIC,
        _gcb.INCB_CONSONANT,
    )
    excluded = sorted(
        [(int(lo), int(hi)) for table in tables for lo, hi in table] + [(0xD800, 0xDFFF)]
    )
    simple: list[tuple[int, int]] = []
    nxt = 0x80
    for lo, hi in excluded:
        if lo > nxt:
            simple.append((nxt, lo - 1))
        nxt = max(nxt, hi + 1)
    if nxt <= 0xFFFF:
        simple.append((nxt, 0xFFFF))
    return [(lo, min(hi, 0xFFFF)) for lo, hi in simple if lo <= 0xFFFF]


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, non-overlapping, non-adjacent union of inclusive ranges."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _subtract(ranges: list[tuple[int, int]], minus: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Inclusive ranges minus other inclusive ranges, as sorted ranges."""
    out: list[tuple[int, int]] = []
    for lo, hi in _merge(ranges):
        for mlo, mhi in _merge(minus):
            if mhi < lo or mlo > hi:
                continue
            if mlo > lo:
                out.append((lo, mlo - 1))
            lo = mhi + 1
            if lo > hi:
                break
        if lo <= hi:
            out.append((lo, hi))
    return out


def _table(*tables: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """wcwidth range tables (sequences of ``(lo, hi)``) as one list of int pairs."""
    return [(int(lo), int(hi)) for table in tables for lo, hi in table]


def _interior_ranges() -> list[tuple[int, int]]:
    """Non-ASCII BMP code points that may sit *inside* a packed run (not at its ends).

    Why this set: inside a run, a character's neighbours are run characters
    too, and the run starts and ends with an end character (see
    `_Regexes.pack`). A character may sit there when it breaks from every such
    neighbour and ends every look-back chain, which holds for the simple
    characters and also for:

    * controls (GB4, GB5: a break on both sides, and no chain goes through one);
    * precomposed Hangul syllables (LV, LVT): GB6-8 only join them to
      conjoining jamo (an L before, a V or T after), which are not in a run,
      and two syllables break from each other.

    Neither kind may *end* a run: a Prepend before a run attaches to its first
    character unless that is a control (GB5), an Extend after it attaches to
    its last one unless that is a control (GB4), and an L before a syllable or
    a V or T after one joins it; the ``"a"`` that stands in for the run would
    behave differently in each case.

    Returns:
        Sorted ranges within U+0080..U+FFFF, surrogates excluded (only the
        BMP, for the reason `_simple_ranges` gives).
    """
    from wcwidth import table_grapheme as _gcb  # 20 ms to import: only when needed

    extra = _table(_gcb.GRAPHEME_CONTROL, _gcb.GRAPHEME_LV, _gcb.GRAPHEME_LVT)
    return _subtract(_simple_ranges() + extra, [(0, 0x7F), (0xD800, 0xDFFF), (0x10000, 0x10FFFF)])


def _base_ranges() -> list[tuple[int, int]]:
    """Non-ASCII simple characters that may *end* a packed run: no InCB value.

    Why not all simple characters: the Unicode 18 rules join an InCB Linker
    (optionally followed by InCB Extends) to a following InCB Consonant without
    any consonant before it (GraphemeBreakTest-18.0.0 line 659: ``1CF5 x
    0915``), and U+1CF5 and U+1CF6 are InCB Linkers while being GCB Other, hence
    simple. Between simple characters that is harmless (no consonant is
    simple), but at the end of a run "a" could not stand in for one.

    Returns:
        `_simple_ranges` minus InCB Linker and InCB Extend.
    """
    from wcwidth import table_grapheme as _gcb  # 20 ms to import: only when needed

    return _subtract(_simple_ranges(), _table(_gcb.INCB_LINKER, _gcb.INCB_EXTEND))


class _Regexes(NamedTuple):
    """The compiled patterns.

    Attributes:
        runs: A run of simple characters that starts with a *base* (simple,
            not a control nor CR/LF: a character a preceding Prepend attaches
            to, like "a") and is followed by one more simple character, left
            out of the match so that what comes after the run still sees the
            same neighbour. It starts with a plain class, which lets the regex
            engine skip non-candidates in C; a look-behind at the start cost
            twice as much.
        pack: What `count` replaces with ``"a"``: an end, at least
            `_MIN_PACK` interior characters (simple, controls, Hangul
            syllables), and an end. An end is a base that no rule treats
            differently from "a" (GCB Other, not Extended_Pictographic, no
            InCB value: `_base_ranges`), which is what makes one ``"a"``
            equivalent to the whole run from both sides with no look-ahead,
            unlike `runs`.
        surrogates: One lone surrogate.
        walk: What a walk counts without the engine: runs or surrogates.
        certain: One character after which there is a certain boundary (the
            match's end): GB4 (after LF, a control, a surrogate), CR not
            before LF, GB5 (before a control, CR, LF or surrogate), or a
            simple character other than CR before another simple character.
    """

    runs: re.Pattern[str]
    pack: re.Pattern[str]
    surrogates: re.Pattern[str]
    walk: re.Pattern[str]
    certain: re.Pattern[str]


@cache
def _regexes() -> _Regexes:
    """Compile the patterns on first use.

    Importing the tables and compiling the big classes takes about 50 ms,
    which pure-ASCII callers (and `import core`) should not pay.

    Returns:
        The patterns.
    """
    non_ascii = _class_body(_simple_ranges())
    simple = "[\\x00-\\x7f" + non_ascii + "]"
    simple_not_cr = "[\\x00-\\x0c\\x0e-\\x7f" + non_ascii + "]"
    base = "[\\x20-\\x7e" + non_ascii + "]"
    surrogate = "[\\ud800-\\udfff]"
    interior = "[\\x00-\\x7f" + _class_body(_interior_ranges()) + "]"
    end = "[\\x20-\\x7e" + _class_body(_base_ranges()) + "]"
    run = f"{base}{simple}{{{_MIN_RUN},}}(?={simple})"
    return _Regexes(
        runs=re.compile(run),
        pack=re.compile(f"{end}{interior}{{{_MIN_PACK},}}{end}"),
        surrogates=re.compile(surrogate),
        walk=re.compile(f"{run}|{surrogate}"),
        certain=re.compile(
            "[\\x00-\\x09\\x0b\\x0c\\x0e-\\x1f\\x7f\\n\\ud800-\\udfff]"
            "|\\r(?!\\n)"
            "|[^\\r](?=[\\x00-\\x1f\\x7f\\ud800-\\udfff])"
            f"|{simple_not_cr}(?={simple})",
            re.DOTALL,
        ),
    )


# Grapheme_Cluster_Break values, numbered as wcwidth's GCB enum.
_OTHER, _CR, _LF, _CONTROL, _EXTEND, _ZWJ, _RI, _PREPEND, _SPACINGMARK = range(9)
_L, _V, _T, _LV, _LVT = range(9, 14)
# A code point's properties as one byte: GCB in the low four bits, then flags.
_GCB_MASK: Final = 0x0F
_EXT_PICT: Final = 0x10
_INCB_LINKER: Final = 0x20
_INCB_EXTEND: Final = 0x40
_INCB_CONSONANT: Final = 0x80
# Code points per block of the two-stage class table (core/_gcount.c agrees).
_BLOCK_SHIFT: Final = 7


class _State(NamedTuple):
    """What the boundary rules remember of the text before a code point.

    Attributes:
        prev: GCB of the previous code point.
        ri_odd: Whether an odd number of Regional_Indicators precede since
            the last boundary GB12/GB13 put between two of them.
        incb: Whether the text ends InCB=Linker InCB=Extend* (GB9c).
        emoji: 1 if it ends ExtPict Extend*, 2 if ExtPict Extend* ZWJ (GB11).
    """

    prev: int
    ri_odd: bool
    incb: bool
    emoji: int


# Before the first code point: as after a control, which breaks before anything.
_START: Final = _State(_CONTROL, False, False, 0)


def _step(state: _State, props: int) -> tuple[bool, _State]:
    """One code point of UAX #29: a boundary before it?, and the state after it.

    The tests are wcwidth's `_should_break`, in its order, with its two
    look-backs (GB9c, GB11) kept as state instead of scans.

    Args:
        state: The state before the code point.
        props: Its property byte.

    Returns:
        (boundary before it, state after it).
    """
    g = props & _GCB_MASK
    prev = state.prev
    ri = False
    if prev == _CR and g == _LF:  # GB3
        brk = False
    elif prev in (_CONTROL, _CR, _LF):  # GB4
        brk, ri = True, g == _RI
    elif g in (_CONTROL, _CR, _LF):  # GB5
        brk = True
    elif (
        (prev == _L and g in (_L, _V, _LV, _LVT))  # GB6
        or (prev in (_LV, _V) and g in (_V, _T))  # GB7
        or (prev in (_LVT, _T) and g == _T)  # GB8
        or g in (_EXTEND, _SPACINGMARK, _ZWJ)  # GB9, GB9a
    ):
        brk = False
    elif prev == _PREPEND:  # GB9b
        brk, ri = False, g == _RI
    elif (props & _INCB_CONSONANT and state.incb) or (props & _EXT_PICT and state.emoji == 2):
        brk = False  # GB9c, GB11 (emoji state 2 means the previous one is a ZWJ)
    elif prev == _RI and g == _RI:  # GB12, GB13
        brk = ri = not state.ri_odd
    else:  # GB999
        brk, ri = True, g == _RI

    if props & _INCB_LINKER:
        incb = True
    elif props & _INCB_EXTEND:
        incb = state.incb
    else:
        incb = False
    if g == _EXTEND:
        emoji = 1 if state.emoji == 1 else 0
    elif props & _EXT_PICT:
        emoji = 1
    elif g == _ZWJ:
        emoji = 2 if state.emoji == 1 else 0
    else:
        emoji = 0
    return brk, _State(g, ri, incb, emoji)


def _properties() -> bytearray:
    """The property byte of every code point, from wcwidth's Unicode 18 tables.

    Where wcwidth's GCB ranges overlap, the class its `_grapheme_cluster_break`
    tests first wins. Lone surrogates are Control and nothing else, as in
    `_count_pure`.
    """
    from wcwidth import table_grapheme as _gcb  # 20 ms to import: only when needed

    props = bytearray(0x110000)
    # Lowest priority first: later ones overwrite.
    by_priority: list[tuple[int, Iterable[tuple[int, int]]]] = [
        (_LVT, _gcb.GRAPHEME_LVT),
        (_LV, _gcb.GRAPHEME_LV),
        (_T, _gcb.GRAPHEME_T),
        (_V, _gcb.GRAPHEME_V),
        (_L, _gcb.GRAPHEME_L),
        (_SPACINGMARK, _gcb.GRAPHEME_SPACINGMARK),
        (_PREPEND, _gcb.GRAPHEME_PREPEND),
        (_RI, _gcb.GRAPHEME_REGIONAL_INDICATOR),
        (_EXTEND, _gcb.GRAPHEME_EXTEND),
        (_CONTROL, _gcb.GRAPHEME_CONTROL),
        (_ZWJ, ((0x200D, 0x200D),)),
        (_LF, ((0x0A, 0x0A),)),
        (_CR, ((0x0D, 0x0D),)),
    ]
    for value, table in by_priority:
        for lo, hi in _table(table):
            props[lo : hi + 1] = bytes([value]) * (hi - lo + 1)
    flags: list[tuple[int, Iterable[tuple[int, int]]]] = [
        (_EXT_PICT, _gcb.EXTENDED_PICTOGRAPHIC),
        (_INCB_LINKER, _gcb.INCB_LINKER),
        (_INCB_EXTEND, _gcb.INCB_EXTEND),
        (_INCB_CONSONANT, _gcb.INCB_CONSONANT),
    ]
    for flag, table in flags:
        for lo, hi in _table(table):
            props[lo : hi + 1] = bytes(b | flag for b in props[lo : hi + 1])
    props[0xD800:0xE000] = bytes([_CONTROL]) * 0x800
    return props


class _Automaton(NamedTuple):
    """The native counter's arguments after the text (see core/_gcount.c).

    Attributes:
        stage1: One native uint16 block number per 128 code points.
        stage2: 128 class bytes per distinct block.
        moves: One native uint16 per (state, class): the next state's row
            (state number times `classes`), shifted left once, plus 1 when
            there is a boundary before the code point. State 0 is `_START`.
        classes: Number of classes (distinct property bytes).
    """

    stage1: bytes
    stage2: bytes
    moves: bytes
    classes: int


@cache
def _native_tables() -> _Automaton:
    """Compile the boundary rules and wcwidth's tables into the native counter's input.

    Why here and not in C: the rules are written once, in `_step`, next to
    the pure-Python path, and the Unicode data comes from the same wcwidth
    tables, so nothing generated is committed and the C code holds no
    Unicode knowledge. Code points with the same property byte behave the
    same, so the bytes in use become classes, and every state reachable
    from `_START` gets a row (19 classes and 23 states today). About 16 ms,
    once.

    Returns:
        The tables.
    """
    from array import array

    props = _properties()
    values = sorted(set(props))
    klass = {v: i for i, v in enumerate(values)}
    classes = len(values)

    states = {_START: 0}
    todo = [_START]
    rows: list[list[tuple[bool, _State]]] = []
    while todo:
        state = todo.pop(0)
        row = [_step(state, v) for v in values]
        rows.append(row)
        for _, nxt in row:
            if nxt not in states:
                states[nxt] = len(states)
                todo.append(nxt)
    moves = array("H", [(states[nxt] * classes) << 1 | brk for row in rows for brk, nxt in row])

    size = 1 << _BLOCK_SHIFT
    as_classes = props.translate(bytes(klass.get(v, 0) for v in range(256)))
    blocks: dict[bytes, int] = {}
    stage1 = array("H")
    for start in range(0, len(as_classes), size):
        stage1.append(blocks.setdefault(bytes(as_classes[start : start + size]), len(blocks)))
    return _Automaton(stage1.tobytes(), b"".join(blocks), moves.tobytes(), classes)


@cache
def _automaton() -> _gcount.Automaton:
    """The native counter, its tables checked once (only called when `NATIVE`)."""
    assert _gcount is not None
    return _gcount.Automaton(*_native_tables())


@cache
def _engine() -> Callable[..., Iterator[str]]:
    """wcwidth's `iter_graphemes`, imported when a text first needs it.

    wcwidth takes ~25 ms to import, and most runs never ask: the native count
    (`_gcount`) answers, and a `--check` with no artifact to count counts nothing.
    """
    from wcwidth import iter_graphemes

    return iter_graphemes


def _engine_count(text: str) -> int:
    """Count clusters with the engine alone; the caller removed surrogates.

    `zip` with a counter drained by a zero-length deque keeps the loop in C,
    about 10% faster than ``sum(1 for _ in ...)``.
    """
    ticks = _counter()
    deque(zip(_engine()(text), ticks, strict=False), maxlen=0)
    return next(ticks)


def _crlf_pairs(text: str) -> int:
    """Number of CR LF pairs in `text`.

    Looking for a lone CR first is a memchr (about 100x faster than counting a
    two-character needle), and most text has no CR at all. Text that has one
    is counted by the native counter's loop where it was built (`crlf_pairs`,
    the GIL released): `str.count` of the two-character needle took longer
    than hashing the text (10 MB of ASCII with CR LF line ends: 8.5 ms against
    1.3 ms), and an ASCII result's whole grapheme count is this count.
    """
    if "\r" not in text:
        return 0
    native = getattr(_gcount, "crlf_pairs", None)  # None in a build older than it, too
    if native is not None:
        return int(native(text))
    return text.count(_CRLF)


def _has_surrogates(text: str) -> bool:
    """Whether `text` holds a lone surrogate.

    The UTF-32 encoder refuses exactly those, and it is a plain copy loop:
    several times faster than searching with a character class.
    """
    try:
        text.encode("utf-32-le")
    except UnicodeEncodeError:
        return True
    return False


def count(text: str) -> int:
    """Number of extended grapheme clusters in `text`.

    Pure-ASCII text is "length minus CR LF pairs". Anything else goes to the
    native counter when it was built (`NATIVE`), a few nanoseconds a code point
    with the GIL released, or else to `_count_pure`; the two agree on every
    input (the tests hold them to each other and to GraphemeBreakTest).

    Args:
        text: Any string, lone surrogates included.

    Returns:
        The grapheme count.
    """
    if _gcount is not None and not text.isascii():
        return _automaton().count(text)
    return _count_pure(text)  # which is "length minus CR LF pairs" for ASCII


def _count_pure(text: str) -> int:
    """`count` in pure Python, for when the native counter is not built.

    One regex pass replaces every packable run (`_Regexes.pack`: an end
    character, interior characters, an end character) with ``"a"``, lone
    surrogates become U+0000 (also a Control), the engine counts what is left,
    and the difference is put back by arithmetic. Why that is exact: "a" meets
    the character before the run exactly as the run's first character did and
    the character after it exactly as its last did (ends and "a" alike are GCB
    Other with no Extended_Pictographic or InCB value, so no rule tells them
    apart), no look-back chain can pass through a run, and inside it every
    pair of neighbours is a boundary except CR LF, none of which straddles an
    end (an end is neither CR nor LF). So packing a run removes
    ``len(run) - 1`` code points and ``len(run) - 1 - (CR LF pairs in it)``
    graphemes; summed over runs, that is the change in length minus the
    change in CR LF count.

    Where the time goes on 10 MB of the mixed-script fixture (7.1 M code
    points): the regex pass about half (one match per stretch between two
    complex clusters, about 150 ns each, plus 1.4 ns a code point), the engine
    on the 1 M code points left about 40%, counting CR LF the rest.

    Args:
        text: Any string, lone surrogates included.

    Returns:
        The grapheme count.
    """
    if text.isascii():
        return len(text) - _crlf_pairs(text)
    regexes = _regexes()
    packed = regexes.pack.sub("a", text)
    if _has_surrogates(packed):
        packed = regexes.surrogates.sub("\x00", packed)
    return (
        _engine_count(packed)
        + (len(text) - len(packed))
        - (_crlf_pairs(text) - _crlf_pairs(packed))
    )


def _run_forward(text: str, pos: int, stop: int, n: int) -> int:
    """End of the first `n` graphemes of ``text[pos:stop]``, all simple characters.

    Args:
        text: The string.
        pos: Start; a certain boundary.
        stop: End of the run; a certain boundary.
        n: Graphemes to take.

    Returns:
        The end position, `stop` if the run has fewer than `n` graphemes.
    """
    # Take n code points; each CR LF among them gave one grapheme too few, so
    # take that many more, until nothing is owed (at most log n rounds).
    while n > 0:
        end = pos + n
        if end >= stop:
            return stop
        owed = text.count(_CRLF, pos, end)
        if text[end - 1] == "\r" and text[end] == "\n":
            end += 1
        pos, n = end, owed
    return pos


def _run_backward(text: str, pos: int, start: int, n: int) -> int:
    """Start of the last `n` graphemes of ``text[start:pos]``, all simple characters.

    Args:
        text: The string.
        pos: End; a certain boundary.
        start: Start of the run; a certain boundary.
        n: Graphemes to take.

    Returns:
        The start position, `start` if the run has fewer than `n` graphemes.
    """
    while n > 0:
        beg = pos - n
        if beg <= start:
            return start
        owed = text.count(_CRLF, beg, pos)
        if text[beg] == "\n" and text[beg - 1] == "\r":
            beg -= 1
        pos, n = beg, owed
    return pos


def _engine_take(text: str, pos: int, stop: int, n: int, *, exact: bool) -> tuple[int, int]:
    """Walk up to `n` graphemes of ``text[pos:stop]`` with the engine.

    Args:
        text: The string (no surrogates in ``text[pos:stop]``).
        pos: Start; a boundary.
        stop: Where the engine must stop looking.
        n: Graphemes wanted.
        exact: Whether `stop` is a certain boundary. If not, the cluster that
            reaches `stop` may continue past it and is not taken.

    Returns:
        (position reached, graphemes still wanted).
    """
    if n <= 0 or pos >= stop:
        return pos, n
    for cluster in _engine()(text, pos, stop):
        end = pos + len(cluster)
        if end >= stop and not exact:
            break
        pos = end
        n -= 1
        if n == 0:
            break
    return pos, n


def _skip(text: str, pos: int, n: int) -> int:
    """Position just after the next `n` graphemes from `pos`.

    Looks at a window at a time, so that finding the end of a short head never
    scans the rest of a 10 MB string: runs of simple characters and
    surrogates inside the window are counted arithmetically, the rest goes to
    the engine. The window's last cluster may be cut by the window, so the
    next window starts at the last boundary the engine confirmed.

    Args:
        text: The string.
        pos: Start; a boundary.
        n: Graphemes to skip.

    Returns:
        The end position (``len(text)`` if fewer than `n` are left).
    """
    size = len(text)
    span = max(2 * n, _MIN_WINDOW)
    walk = _regexes().walk
    while n > 0 and pos < size:
        window_end = min(size, pos + span)
        for m in walk.finditer(text, pos, window_end):
            a, b = m.span()
            if b - a == 1:  # a lone surrogate: certain boundaries both sides
                pos, n = _engine_take(text, pos, a, n, exact=True)
                if n == 0:
                    return pos
                pos, n = b, n - 1
                if n == 0:
                    return pos
                continue
            # text[a] may belong to a Prepend before it, so the engine takes
            # it; after it, and before text[b] (simple), boundaries are certain
            # unless b splits CR LF: then end before the CR.
            lo = a + 1
            hi = b - 1 if text[b - 1] == "\r" else b
            pos, n = _engine_take(text, pos, lo, n, exact=True)
            if n == 0:
                return pos
            run = (hi - lo) - text.count(_CRLF, lo, hi)
            if n <= run:
                return _run_forward(text, lo, hi, n)
            pos, n = hi, n - run
        if window_end == size:
            return _engine_take(text, pos, size, n, exact=True)[0]
        reached, n = _engine_take(text, pos, window_end, n, exact=False)
        if reached == pos:  # one cluster fills the window: look further
            span *= 2
        pos = reached
    return pos


def _certain_at_or_before(text: str, pos: int) -> int:
    """Nearest certain boundary at or before `pos`.

    A certain boundary is one the characters on either side of it decide
    alone, so it is known without running the engine from the start. Text
    almost always has one within a character or two; scanning backwards in
    growing chunks keeps pathological text (megabytes of one script with no
    simple characters or controls) linear.

    Args:
        text: The string.
        pos: Position, ``0 <= pos <= len(text)``.

    Returns:
        The boundary; 0 if there is none before.
    """
    certain = _regexes().certain
    if pos <= 0 or pos >= len(text) or certain.match(text, pos - 1):
        return max(0, min(pos, len(text)))
    span = 64
    while True:
        lo = max(0, pos - span)
        best = 0
        # A match ending at q looks at text[q]; with endpos pos + 1 that is
        # still real text for every q <= pos.
        for m in certain.finditer(text, lo, pos + 1):
            if m.end() <= pos:
                best = m.end()
        if best or lo == 0:
            return best
        span *= 2


def _tail_start(text: str, n: int) -> int:
    """Start position of the last `n` graphemes of `text`.

    Each grapheme is at least one code point, so the tail starts at or before
    ``len(text) - n``. Count graphemes in windows that end where the previous
    one began (each starting at a certain boundary, so the counts add up),
    doubling the window until it holds `n`, then walk forward to the surplus.

    Args:
        text: The string.
        n: Graphemes wanted, ``n >= 1``.

    Returns:
        The start position (0 if `text` has at most `n` graphemes).
    """
    hi = len(text)
    reach = n + n // 8 + 16
    total = 0
    while True:
        lo = _certain_at_or_before(text, max(0, hi - reach))
        total += count(text[lo:hi])
        if total >= n or lo == 0:
            break
        hi = lo
        reach *= 2
    if total <= n:
        return lo
    return _skip(text, lo, total - n)


def head(text: str, n: int) -> str:
    """The first `n` graphemes of `text`.

    Args:
        text: Any string.
        n: Graphemes wanted.

    Returns:
        The prefix; all of `text` if it has fewer, ``""`` if ``n <= 0``.
    """
    if n <= 0:
        return ""
    if n >= len(text):
        return text
    if text.isascii():
        return text[: _run_forward(text, 0, len(text), n)]
    return text[: _skip(text, 0, n)]


def tail(text: str, n: int) -> str:
    """The last `n` graphemes of `text`.

    Args:
        text: Any string.
        n: Graphemes wanted.

    Returns:
        The suffix; all of `text` if it has fewer, ``""`` if ``n <= 0``.
    """
    if n <= 0:
        return ""
    if n >= len(text):
        return text
    if text.isascii():
        return text[_run_backward(text, len(text), 0, n) :]
    return text[_tail_start(text, n) :]


def cut(text: str, head_n: int, tail_n: int) -> tuple[int, str, str]:
    """Everything an excerpt needs: the count, the head and the tail.

    The count is the only full pass (and for ASCII it is a C-level scan for
    CR LF); head and tail only touch windows near their ends. Head and tail are
    computed independently, so they overlap when ``head_n + tail_n`` exceeds
    the count; deciding whether to excerpt at all is the caller's business.

    Args:
        text: Any string.
        head_n: Graphemes wanted from the start.
        tail_n: Graphemes wanted from the end.

    Returns:
        (grapheme count, first `head_n` graphemes, last `tail_n` graphemes).
    """
    total = count(text)
    first = text if head_n >= total else head(text, head_n)
    last = text if tail_n >= total else tail(text, tail_n)
    return total, first, last


def is_boundary(text: str, i: int) -> bool:
    """Whether a grapheme boundary falls at index `i` of `text`.

    Useful for checking that a slice made elsewhere (for example by code
    points) does not split a user-perceived character.

    Args:
        text: Any string.
        i: Index; 0 and ``len(text)`` are boundaries.

    Returns:
        True at a boundary; False inside a grapheme or out of range.
    """
    if i == 0 or i == len(text):
        return True
    if not 0 < i < len(text):
        return False
    if _regexes().certain.match(text, i - 1):
        return True
    # No certain boundary in (lo, i], so no surrogate in text[lo:i + 1] either.
    pos = _certain_at_or_before(text, i)
    for cluster in _engine()(text, pos, i + 1):
        pos += len(cluster)
        if pos >= i:
            break
    return pos == i

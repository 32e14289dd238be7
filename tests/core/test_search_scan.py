"""The search scan never misses a line whose strings hold the query, and reads fast enough.

`core.search.candidate_lines` is a prefilter over raw bytes: it may return a
line that turns out not to hold the query, never leave out one that does.
"Holds" is the definition the viewer's search confirms against: a key or a
string value of the line's JSON, decoded (the standard parser's answer) and
casefolded, contains the query casefolded. The property writes random lines
whose strings hold the query in every way a writer might put it: raw, in
another case, `\\uXXXX` with either case of hex (Python's `ensure_ascii`), a
surrogate pair, `\\/` (PHP), `\\u003c` (Go), or as a character that folds to
it ("ß" for "ss", KELVIN SIGN for "k"); and scans them with chunks as small as
one byte, so matches straddle every boundary.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_view.core.search import (
    FOLD_LIMIT,
    candidate_lines,
    compile_query,
    line_holds,
    scan,
    sources,
)
from transcript_view.core.transcript import Transcript

# -- the definition the scan must cover ------------------------------------------------------


def strings_of(value: Any) -> list[str]:
    """Every key and string value under a decoded JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings_of(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings_of(v)]
    return []


def holding_lines(text: str, query: str) -> set[int]:
    """The lines (1-based) whose JSON object has a string holding `query`, casefolded."""
    needle = query.casefold()
    out = set()
    for n, line in enumerate(text.split("\n"), start=1):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and any(needle in s.casefold() for s in strings_of(value)):
            out.add(n)
    return out


def write(tmp_path: Path, text: str, name: str = "t.jsonl") -> Transcript:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return Transcript.open(path)


# -- writing strings as writers do -----------------------------------------------------------

SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def u_escape(c: str, rnd: random.Random) -> str:
    """`\\uXXXX` for `c` (a surrogate pair past the BMP), each hex digit in a random case."""
    code = ord(c)
    units = [code]
    if code >= 0x10000:
        units = [0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)]
    return "".join(
        "\\u" + "".join(d.upper() if rnd.random() < 0.5 else d for d in f"{unit:04x}")
        for unit in units
    )


def json_string(s: str, rnd: random.Random) -> str:
    """`s` as a JSON string, each character written one of the ways JSON allows."""
    out = ['"']
    for c in s:
        forms = [u_escape(c, rnd)]
        if c in SHORT:
            forms.append(SHORT[c])
        elif ord(c) >= 0x20:
            forms.append(c)
        if c == "/":
            forms.append("\\/")
        out.append(rnd.choice(forms))
    out.append('"')
    return "".join(out)


def json_value(value: Any, rnd: random.Random) -> str:
    if isinstance(value, str):
        return json_string(value, rnd)
    if isinstance(value, dict):
        items = (f"{json_string(k, rnd)}:{json_value(v, rnd)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(json_value(v, rnd) for v in value) + "]"
    return json.dumps(value)


def disguise(needle: str, rnd: random.Random) -> str:
    """A string whose casefold is `needle`: each character one that folds to it, "ss" maybe "ß"."""
    out = []
    i = 0
    while i < len(needle):
        if needle.startswith("ss", i) and rnd.random() < 0.5:
            out.append(rnd.choice("ßẞ"))
            i += 2
            continue
        out.append(rnd.choice(sorted(sources(needle[i]))))
        i += 1
    return "".join(out)


#: Characters the random strings are made of: the queries' own, their other cases,
#: characters that fold to ASCII, escapes' characters, astral and CJK ones.
ALPHABET = 'abkAKsSiIeE/"\\<& \t\n\x01\x7féÉßẞſKİﬁﬆ😀中ŉ'
QUERIES = st.one_of(
    st.sampled_from(
        [
            "ab",
            "Kiss",
            "a/b",
            'say "hi"',
            "a\\b",
            "<a&b>",
            "é",
            "ÉtÉ",
            "ß",
            "ss",
            "k",
            "ﬁ",
            "😀",
            "中",
            "\t",
            "a\nb",
            "ʼn",
            "i̇",
            "\x7f",
        ]
    ),
    st.text(alphabet=ALPHABET, min_size=1, max_size=4),
)


@st.composite
def transcripts(draw: st.DrawFn, query: str) -> tuple[str, int]:
    """Random JSON lines, some holding `query` in disguise; a chunk size to scan them with."""
    rnd = draw(st.randoms(use_true_random=False))
    text = st.text(alphabet=ALPHABET, max_size=12)
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        kind = rnd.random()
        if kind < 0.05:
            lines.append("")  # a blank line
            continue
        if kind < 0.1:
            lines.append('{"broken": ' + json_string(draw(text), rnd))  # not JSON
            continue
        value: dict[str, Any] = {}
        for _ in range(rnd.randint(0, 3)):
            held = draw(text)
            if rnd.random() < 0.5:
                cut = rnd.randint(0, len(held))
                held = held[:cut] + disguise(query.casefold(), rnd) + held[cut:]
            inner: Any = held
            if rnd.random() < 0.3:
                inner = [rnd.randint(0, 99), {draw(text): held}, None]
            key = draw(text)
            if rnd.random() < 0.2:
                key, inner = disguise(query.casefold(), rnd) + key, rnd.random()
            value[key] = inner
        lines.append(json_value(value, rnd))
    chunk = draw(st.sampled_from([1, 2, 3, 7, 16, 64, 1 << 20]))
    return "\n".join(lines) + ("\n" if rnd.random() < 0.5 else ""), chunk


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), query=QUERIES)
def test_the_scan_never_misses_a_line_holding_the_query(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, query: str
) -> None:
    text, chunk = data.draw(transcripts(query))
    tmp = tmp_path_factory.mktemp("scan")
    with write(tmp, text) as t:
        found = scan(t, query, chunk_bytes=chunk)
        assert found == sorted(set(found)), "lines come once each, in file order"
        missed = holding_lines(text, query) - set(found)
        assert not missed, (missed, text.split("\n"))
        assert found == scan(t, query, chunk_bytes=chunk) and set(found) <= set(
            range(1, t.line_count + 1)
        )


# -- what the scan finds, case by case ----------------------------------------------------------


def lines_of(*rows: Any) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def test_a_rare_word_is_found_on_its_lines_only(tmp_path: Path) -> None:
    rows = [{"type": "message", "payload": {"content": f"step {i}: nothing"}} for i in range(50)]
    rows[7]["payload"]["content"] = "the Needle is here"
    rows[31]["payload"]["content"] = "NEEDLES again"
    with write(tmp_path, lines_of(*rows)) as t:
        assert scan(t, "needle") == [8, 32]
        assert scan(t, "needle", chunk_bytes=5) == [8, 32]
        assert scan(t, "") == []
        assert scan(t, "nowhere") == []


def test_escaped_writers_are_found(tmp_path: Path) -> None:
    """Python escapes non-ASCII, PHP escapes `/`, Go escapes `<>&`: the strings are the same."""
    text = (
        '{"a":"caf\\u00E9 au lait"}\n'  # Python's ensure_ascii, upper-case hex
        '{"a":"caf\u00e9 noir"}\n'  # JavaScript / Raku: UTF-8
        '{"a":"see src\\/main.py"}\n'  # PHP
        '{"a":"if a \\u003c b \\u0026\\u0026 c"}\n'  # Go
        '{"a":"say \\"hi\\" twice"}\n'
        '{"a":"C:\\\\Users"}\n'
        '{"a":"\\ud83d\\ude00 grin"}\n'  # an astral character as a surrogate pair
        '{"a":"nothing here"}\n'
    )
    with write(tmp_path, text) as t:
        assert scan(t, "CAFÉ") == [1, 2]
        assert scan(t, "src/main") == [3]
        assert scan(t, "a < b && c") == [4]
        assert scan(t, 'say "hi"') == [5]
        assert scan(t, "c:\\users") == [6]
        assert scan(t, "😀 GRIN") == [7]


def test_characters_that_fold_to_ascii_are_found_by_an_ascii_query(tmp_path: Path) -> None:
    text = (
        lines_of(
            {"a": "Stra\u00dfe"},  # ß folds to "ss"
            {"a": "200 \u212a"},  # KELVIN SIGN folds to "k"
            {"a": "\ufb01le"},  # the "fi" ligature
            {"a": "strasse"},
            {"a": "nothing"},
        )
        + '{"a":"Stra\\u00dfe"}\n{"a":"\\u212A"}\n'
    )
    with write(tmp_path, text) as t:
        assert scan(t, "STRASSE") == [1, 4, 6]
        assert scan(t, "ß") == [1, 4, 6]  # "ß" casefolds to "ss", which both hold
        assert scan(t, "0 k") == [2]
        assert scan(t, "k") == [2, 7]
        assert scan(t, "FILE") == [3]


def test_a_query_in_a_json_key_is_found(tmp_path: Path) -> None:
    text = lines_of({"plain": 1}, {"wanted-key": 1}, {"x": {"Wanted\u00e9": [1]}}) + (
        '{"\\u0077anted":2}\n'
    )
    with write(tmp_path, text) as t:
        assert scan(t, "wanted") == [2, 3, 4]
        assert scan(t, "wantedé") == [3]


def test_non_ascii_queries_are_found_in_any_case_and_encoding(tmp_path: Path) -> None:
    text = (
        lines_of(
            {"a": "Été"}, {"a": "ÉTÉ"}, {"a": "ete"}, {"a": "中文"}, {"b": ["x", {"c": "été"}]}
        )
        + json.dumps({"a": "ÉTÉ 中文"}, ensure_ascii=True)
        + "\n"
    )
    with write(tmp_path, text) as t:
        assert scan(t, "été") == [1, 2, 5, 6]
        assert scan(t, "ÉTÉ") == [1, 2, 5, 6]
        assert scan(t, "中文") == [4, 6]
        assert scan(t, "\t") == []  # a control: found only through its escapes
    with write(tmp_path, '{"a":"x\\ty"}\n{"a":"x y"}\n', "tab.jsonl") as t:
        assert scan(t, "x\ty") == [1]


def test_a_line_that_is_not_json_is_kept_when_it_may_hold_the_query(tmp_path: Path) -> None:
    """The per-line check cannot rule out what it cannot decode: the viewer decides."""
    text = '{"a": "caf\\u00e9 and a torn tai\n{"a": "caf\\u00e9"}\n'
    with write(tmp_path, text) as t:
        assert scan(t, "café") == [1, 2]
    assert line_holds(b'{"a": "broken', "zzz")
    assert not line_holds(b"   ", "zzz")


def test_a_match_across_pieces_of_a_long_line_is_found(tmp_path: Path) -> None:
    """A line longer than a chunk is read in overlapping pieces, also after short lines."""
    body = "x" * 5000 + "Needle" + "y" * 5000
    escaped = "x" * 4999 + "\\u00e9" + "y" * 5000
    text = lines_of({"a": "short"}, {"a": body}, {"a": "x" * 10000}) + '{"a":"' + escaped + '"}\n'
    with write(tmp_path, text) as t:
        for chunk in (1, 2, 3, 5, 100, 4999, 5001, 1 << 20):
            assert scan(t, "needle", chunk_bytes=chunk) == [2], chunk
            assert scan(t, "é", chunk_bytes=chunk) == [4], chunk
            assert scan(t, "short", chunk_bytes=chunk) == [1], chunk


def test_progress_is_reported_every_chunk_and_cancel_stops(tmp_path: Path) -> None:
    rows = [{"a": f"line {i} " + "z" * 100} for i in range(200)]
    rows[150]["a"] = "the target"
    with write(tmp_path, lines_of(*rows)) as t:
        seen: list[tuple[int, int]] = []
        found = scan(t, "target", progress=lambda d, n: seen.append((d, n)), chunk_bytes=1000)
        assert found == [151]
        total = t.line_span(t.line_count)[1]
        assert len(seen) >= 20 and {n for _, n in seen} == {total}
        assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] == total
        calls: list[int] = []
        cancelled = scan(
            t,
            "target",
            progress=lambda d, n: calls.append(d),
            cancelled=lambda: len(calls) >= 3,
            chunk_bytes=1000,
        )
        assert cancelled == [] and len(calls) == 3
        # Lazily: a consumer that stops early reads no further.
        lines = candidate_lines(t, "line 1", chunk_bytes=1000)
        assert next(lines) == 2


def test_compile_query_chooses_the_byte_path_only_for_printable_ascii() -> None:
    ascii_pattern = compile_query("Hello/World")
    assert ascii_pattern is not None and ascii_pattern.literal == b"hello/world"
    assert b"\\/" in ascii_pattern.tokens
    other = compile_query("héllo")
    assert other is not None and other.literal is None and other.needle == "héllo"
    ss = compile_query("ß")
    assert ss is not None and ss.literal == b"ss"  # casefolds to ASCII: the byte path
    assert compile_query("") is None


def test_no_character_past_the_fold_limit_changes_under_casefold() -> None:
    """`sources` only looks below FOLD_LIMIT; a Unicode update that folds more fails here."""
    changed = [c for c in range(FOLD_LIMIT, 0x110000) if chr(c).casefold() != chr(c)]
    assert changed == []
    assert {"k", "K", "\u212a"} <= sources("k")
    assert {"ß", "ẞ", "ſ", "\ufb06"} <= sources("s")


@given(st.text())
def test_casefold_folds_one_character_at_a_time(s: str) -> None:
    """The soundness argument maps each folded character back to one source character."""
    assert s.casefold() == "".join(c.casefold() for c in s)

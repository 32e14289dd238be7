"""The 44 excerpt vectors the Raku reference wrote, agreed with one by one.

39 agree exactly. Five differ, and the tests below show that the difference is
exactly rule GB9c (Indic conjuncts, Unicode 15.1), which the reference's Unicode
13 build lacks: with today's segmentation minus GB9c, our excerpt machinery
produces the reference's bytes exactly.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from _support import graphemes_without_gb9c, reference_vectors

from transcript_view.core import graphemes
from transcript_view.core.artifacts import elided_chars, excerpt, head_tail_sizes
from transcript_view.core.canonical import canonical_json, data_digest

VECTORS = reference_vectors()
GB9C_CASES = {
    "devanagari-conjunct",
    "devanagari-namaste",
    "bengali-ksa",
    "mixed-everything",
    "big-mixed-16384",
}


def test_the_file_has_44_cases_and_names_the_five_gb9c_ones() -> None:
    names = [v["name"] for v in VECTORS]
    assert len(names) == 44
    assert set(names) >= GB9C_CASES


def _cut_without_gb9c(text: str, head_n: int, tail_n: int) -> tuple[int, str, str]:
    clusters = graphemes_without_gb9c(text)
    tail = "".join(clusters[len(clusters) - tail_n :]) if tail_n > 0 else ""
    return len(clusters), "".join(clusters[:head_n]), tail


def _ids(vectors: list[dict[str, Any]]) -> list[str]:
    return [v["name"] for v in vectors]


EXACT = [v for v in VECTORS if v["name"] not in GB9C_CASES]
DIFFERENT = [v for v in VECTORS if v["name"] in GB9C_CASES]


@pytest.mark.parametrize("vector", EXACT, ids=_ids(EXACT))
def test_vector_agrees_exactly(vector: dict[str, Any]) -> None:
    text, limit = vector["input"], vector["limit"]
    data = text.encode("utf-8")
    assert graphemes.count(text) == vector["chars"]
    assert len(text) == vector["codepoints"]
    assert len(data) == vector["bytes"]
    assert hashlib.sha256(data).hexdigest() == vector["digest"]
    assert elided_chars(vector["chars"], limit) == vector["elided"]
    got = excerpt(text, limit, "MARKER")
    assert got == vector["excerpt"]
    assert graphemes.count(got) == vector["excerpt_chars"]
    assert len(got.encode("utf-8")) == vector["excerpt_bytes"]
    assert canonical_json(got) == vector["result_canonical_json"]
    assert data_digest(got) == vector["result_digest"]
    if vector["head_chars"] is not None:
        assert head_tail_sizes(limit) == (vector["head_chars"], vector["tail_chars"])
        assert graphemes.count(got.split("\nMARKER\n")[0]) == vector["head_chars"]


@pytest.mark.parametrize("vector", DIFFERENT, ids=_ids(DIFFERENT))
def test_vector_differs_by_exactly_rule_gb9c(
    vector: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    text, limit = vector["input"], vector["limit"]
    # Bytes, digests and code points are not a matter of segmentation: identical.
    assert len(text) == vector["codepoints"]
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == vector["digest"]
    # Under current Unicode (GB9c joins conjuncts) we count fewer graphemes...
    ours = graphemes.count(text)
    assert ours < vector["chars"]
    ours_excerpt = excerpt(text, limit, "MARKER")
    assert ours_excerpt != vector["excerpt"]
    # ...and our excerpt is still a correct one by today's rules.
    head_n, tail_n = head_tail_sizes(limit)
    head, _, tail = ours_excerpt.partition("\nMARKER\n")
    assert graphemes.count(head) == head_n and text.startswith(head)
    assert graphemes.count(tail) == tail_n and text.endswith(tail)
    # Take GB9c away and every number and byte is the reference's.
    assert len(graphemes_without_gb9c(text)) == vector["chars"]
    monkeypatch.setattr(graphemes, "cut", _cut_without_gb9c)
    theirs = excerpt(text, limit, "MARKER")
    assert theirs == vector["excerpt"]
    assert data_digest(theirs) == vector["result_digest"]
    assert len(graphemes_without_gb9c(theirs)) == vector["excerpt_chars"]


@pytest.mark.parametrize("vector", EXACT, ids=_ids(EXACT))
def test_gb9c_emulation_changes_nothing_where_there_is_no_conjunct(vector: dict[str, Any]) -> None:
    """The emulation is only GB9c: on the other 39 cases it agrees with today's rules."""
    assert len(graphemes_without_gb9c(vector["input"])) == vector["chars"]

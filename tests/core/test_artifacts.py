"""The reference's `t/15-artifacts.rakutest`, ported, plus properties and the crash-safe store."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_view.core import graphemes
from transcript_view.core.artifacts import (
    COULD_NOT_BE_STORED,
    NOWHERE_TO_PUT_IT,
    ArtifactConflict,
    Store,
    Stored,
    artifact_dir_for,
    commify,
    content_digest,
    elided_chars,
    excerpt,
    head_tail_sizes,
    is_temp_name,
    stored_marker,
    unstored_marker,
)
from transcript_view.core.markers import MarkerKind, parse_markers

# -- subtest 'the excerpt sub is head-weighted, marked, and grapheme-safe' --------


def test_content_under_or_on_the_limit_comes_back_untouched() -> None:
    assert excerpt("short", 100, "M") == "short"
    assert excerpt("x" * 100, 100, "M") == "x" * 100


def test_an_excerpt_is_head_marker_tail() -> None:
    cut = excerpt("a" * 60 + "b" * 60, 100, "MARKER")
    lines = cut.split("\n")
    assert len(lines) == 3
    assert lines[0] == "a" * 60 + "b" * 15
    assert lines[1] == "MARKER"
    assert lines[2] == "b" * 25
    assert elided_chars(120, 100) == 20


def test_every_cut_is_a_grapheme_cut() -> None:
    text = "e\u0301" * 40 + "a\r\n" * 40
    trimmed = excerpt(text, 40, "M")
    head = trimmed.split("\nM\n")[0]
    assert graphemes.count(head) == 30
    assert text.startswith(head)


def test_limit_zero_or_negative_means_no_excerpt() -> None:
    assert excerpt("x" * 1000, 0, "M") == "x" * 1000
    assert excerpt("x" * 1000, -5, "M") == "x" * 1000
    assert elided_chars(1000, 0) == 0


def test_head_is_the_ceiling_of_three_quarters() -> None:
    assert head_tail_sizes(16384) == (12288, 4096)
    assert head_tail_sizes(1) == (1, 0)
    assert head_tail_sizes(2) == (2, 0)
    assert head_tail_sizes(3) == (3, 0)
    assert head_tail_sizes(5) == (4, 1)
    assert excerpt("abcdefghi", 1, "M") == "a\nM\n"


# -- markers: exact texts ---------------------------------------------------------


def test_stored_marker_text_is_the_references() -> None:
    stored = Stored("66613832-6465-4236-b962-383635383133.txt", "3d" * 32, 401988, 264170)
    assert stored_marker(247786, stored) == (
        "[... elided 247,786 chars (401,988 bytes total); full result: "
        "66613832-6465-4236-b962-383635383133.txt sha256 " + "3d" * 32 + " ...]"
    )


def test_unstored_marker_texts_are_the_references() -> None:
    digest = "1d123c2acd5deb50993e673f40e6325bdfcfe0378ac80c8e484a82f0cabd16a4"
    assert unstored_marker(23060, 60308, digest, COULD_NOT_BE_STORED) == (
        f"[... elided 23,060 chars (60,308 bytes total); full result could not be stored, "
        f"sha256 {digest} ...]"
    )
    assert unstored_marker(23060, 60308, digest, NOWHERE_TO_PUT_IT) == (
        "[... elided 23,060 chars (60,308 bytes total); full result was not stored "
        f"(this run has nowhere to put it), sha256 {digest} ...]"
    )
    assert unstored_marker(1, 2, digest).startswith(
        "[... elided 1 chars (2 bytes total); full result not stored,"
    )


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1,000"),
        (1234567, "1,234,567"),
        (-123, "-,123"),
        (-1234, "-1,234"),
    ],
)
def test_commify_is_the_references_flip_comb_join(n: int, text: str) -> None:
    assert commify(n) == text


# -- subtest 'the artifact directory is a sibling of the transcript' ---------------


@pytest.mark.parametrize(
    ("transcript", "directory"),
    [
        ("/state/run.jsonl", "/state/run.artifacts"),
        ("/state/2026-08-10.run.jsonl", "/state/2026-08-10.run.artifacts"),
        ("/state/run", "/state/run.artifacts"),
    ],
)
def test_artifact_dir_is_a_sibling(transcript: str, directory: str) -> None:
    assert str(artifact_dir_for(transcript)) == directory


# -- subtest 'the store writes one file per operation, and creates its dir late' ----


def test_store_creates_its_directory_on_first_write(tmp_path: Path) -> None:
    directory = tmp_path / "store.artifacts"
    store = Store(directory)
    assert not directory.exists(), "constructing a store creates nothing"
    first = store.store("op-1", "hello")
    assert directory.is_dir()
    assert (directory / first.file).read_text() == "hello"
    assert first == Stored("op-1.txt", content_digest("hello"), 5, 5)


def test_an_id_with_path_separators_stays_one_flat_file_name(tmp_path: Path) -> None:
    odd = Store(tmp_path / "a.artifacts").store("../../etc/passwd", "nope")
    assert odd.file == ".._.._etc_passwd.txt"
    assert Path(odd.file).name == odd.file
    assert (tmp_path / "a.artifacts" / odd.file).read_text() == "nope"
    assert Store(tmp_path / "b.artifacts").store("", "x").file == "artifact.txt"


def test_the_digest_in_the_marker_is_the_digest_of_the_file(tmp_path: Path) -> None:
    content = "line\n" * 5000
    stored = Store(tmp_path / "x.artifacts").store("op", content)
    data = (tmp_path / "x.artifacts" / stored.file).read_bytes()
    assert stored.digest == hashlib.sha256(data).hexdigest() == content_digest(content)
    marker = stored_marker(elided_chars(stored.chars, 100), stored)
    assert stored.digest in marker and stored.file in marker


# -- better than the reference: crash-safe, never overwrites ---------------------------


def test_identical_content_is_accepted_different_content_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.artifacts")
    first = store.store("op", "same")
    assert store.store("op", "same") == first
    with pytest.raises(ArtifactConflict):
        store.store("op", "different")
    assert (tmp_path / "s.artifacts" / "op.txt").read_text() == "same"


def test_a_store_leaves_no_temp_file_behind(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.artifacts")
    store.store("op", "x" * 100_000)
    names = os.listdir(tmp_path / "s.artifacts")
    assert names == ["op.txt"]


def test_temp_names_are_recognisable_and_never_artifact_names() -> None:
    assert is_temp_name(".tmp-op.txt.123.abcd1234.partial")
    assert not is_temp_name("op.txt")
    assert not is_temp_name(".tmp-op.txt")


def test_surrogateescaped_text_is_stored_as_its_original_bytes(tmp_path: Path) -> None:
    raw = b"ok \xff\xfe bytes \xc3\xa9\n"
    text = raw.decode("utf-8", "surrogateescape")
    stored = Store(tmp_path / "s.artifacts").store("op", text)
    assert (tmp_path / "s.artifacts" / stored.file).read_bytes() == raw
    assert stored.bytes == len(raw)
    assert stored.digest == hashlib.sha256(raw).hexdigest()


def test_a_write_into_a_file_where_the_directory_should_be_raises(tmp_path: Path) -> None:
    (tmp_path / "w.artifacts").write_text("not a directory")
    with pytest.raises(OSError):
        Store(tmp_path / "w.artifacts").store("op", "x")


# -- properties ------------------------------------------------------------------------

_ALPHABET = st.sampled_from(
    [
        "a",
        "b",
        " ",
        "\n",
        "\r\n",
        "\r",
        "e\u0301",
        "\u0301",
        "👩\u200d💻",
        "🇫🇷",
        "🇯",
        "한",
        "\u1100\u1161\u11a8",
        "क्ष",
        "\t",
        "\x1b",
        "中",
        "z\u0308\u0323",
    ]
)
_TEXT = st.lists(_ALPHABET, max_size=80).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, limit=st.integers(min_value=1, max_value=60))
def test_excerpt_layout_and_sizes(text: str, limit: int) -> None:
    got = excerpt(text, limit, "MARKER")
    total = graphemes.count(text)
    if total <= limit:
        assert got == text
        return
    head_n, tail_n = head_tail_sizes(limit)
    head = graphemes.head(text, head_n)
    tail = graphemes.tail(text, tail_n)
    assert got == head + "\nMARKER\n" + tail
    assert graphemes.count(head) + graphemes.count(tail) == limit
    # No cut splits a grapheme: the pieces segment the same way inside the whole.
    assert graphemes.count(text[len(head) :]) == total - head_n
    assert graphemes.count(text[: len(text) - len(tail)]) == total - tail_n


@settings(max_examples=200, deadline=None)
@given(
    elided=st.integers(min_value=0, max_value=10**12),
    size=st.integers(min_value=0, max_value=10**12),
    name=st.from_regex(r"[A-Za-z0-9_.-]{1,60}\.txt", fullmatch=True),
    digest=st.from_regex(r"[0-9a-f]{64}", fullmatch=True),
    why=st.sampled_from([NOWHERE_TO_PUT_IT, COULD_NOT_BE_STORED, "not stored", "lost, sorry"]),
)
def test_markers_round_trip_through_the_parser(
    elided: int, size: int, name: str, digest: str, why: str
) -> None:
    stored = Stored(name, digest, size, 0)
    text = "head\n" + stored_marker(elided, stored) + "\ntail"
    (m,) = parse_markers(text)
    assert (m.elided, m.bytes, m.file, m.digest, m.why) == (elided, size, name, digest, None)
    assert m.kind is MarkerKind.STORED and m.on_own_line(text) and m.safe_name
    (u,) = parse_markers(unstored_marker(elided, size, digest, why))
    assert (u.elided, u.bytes, u.file, u.digest, u.why) == (elided, size, None, digest, why)


# -- the parallel store path (hash and write in threads) behaves exactly like the plain one --


@pytest.mark.parametrize(
    ("threshold", "native"),
    [(0, True), (0, False), (1 << 40, True)],
    ids=["parallel", "parallel-pure-count", "inline"],
)
def test_both_store_paths_write_the_same_thing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threshold: int, native: bool
) -> None:
    """Parallel (with the native count started before the encode, or the pure
    count in this thread) and inline stores write and report the same."""
    import transcript_view.core.artifacts as artifacts

    monkeypatch.setattr(artifacts, "PARALLEL_STORE_BYTES", threshold)
    if not native:
        monkeypatch.setattr(graphemes, "NATIVE", False)
        monkeypatch.setattr(graphemes, "_gcount", None)
    store = Store(tmp_path / "p.artifacts")
    content = "e\u0301 日本 👩\u200d💻\r\n" * 5000
    stored = store.store("op", content)
    data = (tmp_path / "p.artifacts" / "op.txt").read_bytes()
    assert data == content.encode()
    assert stored.digest == hashlib.sha256(data).hexdigest()
    assert stored.chars == graphemes.count(content) and stored.bytes == len(data)
    assert store.store("op", content) == stored
    with pytest.raises(ArtifactConflict):
        store.store("op", content + "!")
    raw = (b"\xff junk \x80" * 1000).decode("utf-8", "surrogateescape")
    assert (tmp_path / "p.artifacts" / store.store("raw", raw).file).read_bytes() == (
        b"\xff junk \x80" * 1000
    )
    assert sorted(os.listdir(tmp_path / "p.artifacts")) == ["op.txt", "raw.txt"]
    (tmp_path / "f.artifacts").write_text("file")
    with pytest.raises(OSError):
        Store(tmp_path / "f.artifacts").store("op", content)

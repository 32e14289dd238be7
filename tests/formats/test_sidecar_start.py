"""A ledger keeps of a Claude Code sidecar only the start its previews compare (issue 11).

A check holds up to 256 KiB of its file's start, and the ledger keeps every
check. A Claude Code marker's verdict reads its sidecar's start as text (the
preview, Bash's blank-line trim, whether a `.json` sidecar parses), so the
ledger kept the start whole: 2,000 sidecars of 200 KB took `--check` to
433 MB. It now keeps the bytes the previews compare (`rules.kept_start`),
with the JSON verdict judged before the cut. The property below holds the
kept check's verdicts to the whole check's on random and mutated starts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _sessions import ClaudeSession, claude_preview, numbered
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from transcript_view.core.formats import Format
from transcript_view.core.formats.claude_markers import bash_preview_source
from transcript_view.core.formats.model import SpillForm, SpillSite
from transcript_view.core.formats.readers import analyse_as
from transcript_view.core.formats.rules import kept_start, spill_state, start_suffices
from transcript_view.core.ledger import VerificationLedger
from transcript_view.core.transcript import Transcript
from transcript_view.core.verification import EDGE_BYTES, FileCheck, FileState, check_file
from transcript_view.viewer.session_blocks import preview_bytes

# Texts that stress the cut: blank lines Bash drops, trailing space it trims,
# characters of one to four bytes, lone surrogates, and bytes that are not UTF-8.
_PIECES = st.sampled_from(
    ["\n", " ", "\t", "\r", "\f", "a", "xyz ", "é", "€", "😀", "\ud800", "\n\n  \n", "{", "[1]"]
)
_BAD_BYTES = st.sampled_from([b"\xff", b"\xe2\x82", b"\xf0\x9f\x98", b"\x80"])


def _site(
    preview: str | None,
    *,
    bash: bool = False,
    name: str = "t.txt",
    line: int = 1,
    form: SpillForm = SpillForm.PERSISTED,
) -> SpillSite:
    return SpillSite(
        line=line,
        offset=0,
        format=Format.CLAUDE_CODE,
        form=form,
        block=0,
        start=0,
        end=0,
        file=name,
        preview=preview,
        bash=bash,
    )


@st.composite
def _starts(draw: st.DrawFn) -> bytes:
    """A sidecar's start: text pieces, some raw bytes that are not UTF-8 among them."""
    out = bytearray()
    for _ in range(draw(st.integers(0, 60))):
        if draw(st.integers(0, 9)) == 0:
            out += draw(_BAD_BYTES)
        else:
            out += draw(_PIECES).encode("utf-8", "surrogatepass") * draw(st.integers(1, 40))
    return bytes(out)


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[SpillSite], FileCheck]:
    start = draw(_starts())
    whole = draw(st.booleans())
    # A check holds the file's first EDGE_BYTES: all of a smaller file.
    head = start if whole else start + b"z" * (EDGE_BYTES - len(start))
    size = len(head) if whole else EDGE_BYTES + draw(st.integers(1, 1 << 20))
    bash = draw(st.booleans())
    name = draw(st.sampled_from(["t.txt", "t.json"]))
    text = head.decode("utf-8", "replace")
    source = bash_preview_source(text, whole=whole) if bash else text
    sites = []
    for i in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, len(start) + 3))
        preview: str | None = source[:n]
        how = draw(st.integers(0, 5))
        if how == 0 and preview:  # a preview that is not the file's start
            preview = preview[:-1] + ("b" if preview[-1] != "b" else "c")
        elif how == 1:
            preview += draw(_PIECES)  # one character too many, maybe white space
        elif how == 2:
            preview = None
        form = SpillForm.PERSISTED if how != 3 else SpillForm.MCP_SAVED
        sites.append(_site(preview, bash=bash, name=name, line=i + 1, form=form))
    return sites, FileCheck(name, FileState.OK, size=size, head=head, tail=b"tail")


def _bash_whole_ending_in_spaces() -> tuple[list[SpillSite], FileCheck]:
    """Bash trims a whole output's end: "abc " is not the start of "abc" + 100 spaces."""
    data = b"abc" + b" " * 100
    return [_site("abc ", bash=True)], FileCheck("t.txt", FileState.OK, size=103, head=data)


def _bash_after_many_blank_lines() -> tuple[list[SpillSite], FileCheck]:
    """Bash's preview starts after the blank lines it drops: those are kept too."""
    data = (b"\n" * 9000 + numbered(5000).encode())[:EDGE_BYTES]
    preview = numbered(5000)[:2000]
    return [_site(preview, bash=True)], FileCheck(
        "t.txt", FileState.OK, size=EDGE_BYTES + 1, head=data
    )


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
@example(_bash_whole_ending_in_spaces())
@example(_bash_after_many_blank_lines())
def test_a_kept_start_gives_the_whole_starts_verdicts(
    case: tuple[list[SpillSite], FileCheck],
) -> None:
    sites, whole = case
    kept = kept_start(sites, whole)
    assert kept.tail == b""
    assert whole.head.startswith(kept.head)
    for site in sites:
        assert spill_state(site, kept) == spill_state(site, whole)
        # The viewer's seen/unseen bar reads the kept start too.
        assert preview_bytes(site, kept.head) == preview_bytes(site, whole.head)
    # Carried into a ledger of the same markers, it suffices, and is kept as it is.
    assert start_suffices(sites, kept)
    assert kept_start(sites, kept) == kept


def test_a_200_kb_sidecar_is_kept_as_its_preview_and_a_little_more() -> None:
    full = numbered(3400).encode()  # 200 KB
    head = full[:EDGE_BYTES]
    preview, _ = claude_preview(full.decode())
    site = _site(preview)
    kept = kept_start([site], FileCheck("t.txt", FileState.OK, size=len(full), head=head))
    assert len(kept.head) <= 4 * (len(preview) + 3)
    assert spill_state(site, kept)[0].value == "preview matches"


def test_a_json_sidecars_verdict_is_judged_before_the_cut() -> None:
    good = ("[" + '{"type": "text", "text": "' + "x" * 50_000 + '"}' + "]").encode()
    bad = good[:-1]  # looks like JSON from its start; does not parse
    for data, parses in ((good, True), (bad, False)):
        site = _site(data[:2000].decode(), name="t.json")
        check = FileCheck("t.json", FileState.OK, size=len(data), head=data)
        kept = kept_start([site], check)
        assert len(kept.head) < 9000
        assert kept.looks_like_json is parses
        assert spill_state(site, kept) == spill_state(site, check)
        notes = [f.kind for f in spill_state(site, kept)[1]]
        assert ("sidecar-not-json" in notes) is not parses


def test_a_marker_with_a_longer_preview_has_the_file_read_again() -> None:
    """Follow mode: a new marker naming an old file compares more of it than was kept."""
    full = numbered(3400).encode()
    short = _site(full[:100].decode())
    kept = kept_start([short], FileCheck("t.txt", FileState.OK, size=len(full), head=full))
    assert start_suffices([short], kept)
    assert not start_suffices([short, _site(full[:2000].decode())], kept)


def test_a_cut_json_start_without_its_verdict_is_read_again() -> None:
    data = b"[" + b" " * 20_000 + b"]"
    cut = FileCheck("t.json", FileState.OK, size=len(data), head=data[:10])
    assert not start_suffices([_site("[")], cut)


@pytest.fixture
def session(tmp_path: Path) -> ClaudeSession:
    s = ClaudeSession(tmp_path / "projects" / "-Users-someone-proj")
    s.user("find the things")
    return s


def test_a_ledger_of_many_big_sidecars_keeps_kilobytes_and_the_same_verdicts(
    session: ClaudeSession,
) -> None:
    for i in range(30):
        if i % 2:
            session.bash_spill(f"toolu_{i:02d}", f"b{i:02d}", "\n\n" + numbered(3400))
        else:
            session.spill(f"toolu_{i:02d}", numbered(3400), sidecar=f"toolu_{i:02d}.txt")
    path = session.write()
    with Transcript(path) as t:
        t.build_index()
        ledger = VerificationLedger(analyse_as(t, Format.CLAUDE_CODE))
        full: dict[str, FileCheck] = {}
        for name in ledger.wanted():
            full[name] = check_file(
                session.tool_results,
                name,
                count_chars=False,
                count_utf16=ledger.counts_utf16(name),
            )
            assert len(full[name].head) > 190_000
            ledger.record(full[name])
        sites = [s for s in ledger.analysis.excerpt_sites if isinstance(s, SpillSite)]
        assert len(sites) == 30
        for site in sites:
            assert site.file is not None
            assert ledger.verdict(site.key) == spill_state(site, full[site.file])
        assert {s.value for s in ledger.states()} == {"preview matches"}
        assert sum(len(c.head) for c in ledger.checks.values()) < 30 * 9000
        # Carried into a follow-mode ledger, nothing is read again.
        again = VerificationLedger(analyse_as(t, Format.CLAUDE_CODE), checks=ledger.checks)
    assert again.wanted() == []
    assert again.states() == ledger.states()
    assert again.findings() == ledger.findings()

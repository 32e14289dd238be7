"""Markers are found only where their agent writes them (issue 26, item 12).

Claude Code writes `<persisted-output>` (both forms) and the MCP form as the whole
result, the tag or text at its start; `[Old tool result content cleared]` as the whole
result; `... [N characters truncated] ...` on its own line between head and tail
(CLAUDE_CODE.md, "The spill marker"). Codex writes its line and byte cuts on their own
line, its omitted-items notice as a text item (a line) of its own, and `Total output
lines:` at the start (`codex-rs/core/src/truncate.rs`). The same words anywhere else are
a document quoting them: text, for the core's finder and so for the viewer, which draws
with it.
"""

from __future__ import annotations

import pytest
from _sessions import (
    claude_preview,
    codex_chars_truncated,
    codex_lines_omitted,
    mcp_marker,
    numbered,
    persisted_marker,
    saved_marker,
)

from transcript_view.core.formats.claude_markers import find_spills
from transcript_view.core.formats.codex import find_notices
from transcript_view.core.formats.model import SpillForm

_PREVIEW, _MORE = claude_preview(numbered(60))

#: Each Claude Code form, as Claude Code writes it: the whole result.
CLAUDE_FORMS = {
    SpillForm.PERSISTED: persisted_marker("3.6KB", "/x/tool-results/t1.txt", _PREVIEW, _MORE),
    SpillForm.SAVED: saved_marker("/x/tool-results/t2.txt"),
    SpillForm.MCP_SAVED: mcp_marker(23_891, "/x/tool-results/t3.json"),
    SpillForm.CHARS_TRUNCATED: "Exit code 2\nhead\n\n... [48,112 characters truncated] ...\n\ntail",
    SpillForm.CLEARED: "[Old tool result content cleared]",
    SpillForm.OMITTED_MATCH: "src/a.ts:1:x = 1\ndist/a.min.js:4:[Omitted long matching line]",
}


def _quoted(marker: str) -> list[str]:
    """A document quoting `marker`: in a sentence, after a Read's line number, indented."""
    first, _, rest = marker.partition("\n")
    return [
        f"The model then sees {marker} and nothing else.",
        f"# Notes\n\nAn example: {first}\n{rest}\n",
        "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(marker.split("\n"), 1)),
        "For example:\n" + "\n".join("    " + line for line in marker.split("\n")),
        f"notes.md:12:{marker}",
    ]


@pytest.mark.parametrize("form", list(CLAUDE_FORMS), ids=str)
def test_each_claude_form_is_found_where_claude_code_writes_it(form: SpillForm) -> None:
    (found,) = find_spills(CLAUDE_FORMS[form])
    assert found.form is form


@pytest.mark.parametrize("form", list(CLAUDE_FORMS), ids=str)
def test_each_claude_form_quoted_in_a_document_is_text(form: SpillForm) -> None:
    marker = CLAUDE_FORMS[form]
    if form is SpillForm.CHARS_TRUNCATED:
        marker = "... [48,112 characters truncated] ..."
    if form is SpillForm.OMITTED_MATCH:
        marker = "[Omitted long matching line]"
    for text in _quoted(marker)[:-1]:  # (Grep's own prefix is where ripgrep writes it)
        assert find_spills(text) == [], text


def test_the_cleared_text_may_have_white_space_around_it_and_nothing_else() -> None:
    assert [f.form for f in find_spills("\n [Old tool result content cleared]\n")] == [
        SpillForm.CLEARED
    ]
    assert find_spills("[Old tool result content cleared] (see above)") == []
    assert find_spills("[Old tool result content cleared]\n[Old tool result content cleared]") == []


def test_a_bash_cut_on_its_own_line_is_found_wherever_that_line_is() -> None:
    """The head is cut anywhere (mid-line); Claude Code puts the cut on a line of its own."""
    (found,) = find_spills("Exit code 1\nerror: x" + "\n\n... [7 characters truncated] ...\n\ny")
    assert found.form is SpillForm.CHARS_TRUNCATED and found.cut == 7
    assert find_spills("a ... [7 characters truncated] ...\n") == []
    assert find_spills("... [7 characters truncated] ... b") == []


CODEX_FORMS = {
    SpillForm.LINES_OMITTED: codex_lines_omitted(400),
    SpillForm.BYTES_TRUNCATED: "Total output lines: 3\n\nhead\n[... output truncated to fit 10240 "
    "bytes ...]\n\ntail",
    SpillForm.ITEMS_OMITTED: "[omitted 3 text items ...]",
    SpillForm.CHARS_CUT: codex_chars_truncated(5000),
    SpillForm.TOTAL_LINES: "Total output lines: 3000\n\nsome of it",
}

#: Each Codex notice that has a place, as a document quotes it.
CODEX_QUOTED = {
    SpillForm.LINES_OMITTED: "Codex writes [... omitted 3 of 9 lines ...] between head and tail.",
    SpillForm.BYTES_TRUNCATED: "or `[... output truncated to fit 10240 bytes ...]` when",
    SpillForm.ITEMS_OMITTED: "    1\t[omitted 3 text items ...]",
    SpillForm.TOTAL_LINES: "the prefix\nTotal output lines: 12\n\ncomes first",
}


@pytest.mark.parametrize("form", list(CODEX_FORMS), ids=str)
def test_each_codex_notice_is_found_where_codex_writes_it(form: SpillForm) -> None:
    (found,) = find_notices(CODEX_FORMS[form])
    assert found.form is form


@pytest.mark.parametrize("form", list(CODEX_QUOTED), ids=str)
def test_each_codex_notice_with_a_place_quoted_elsewhere_is_text(form: SpillForm) -> None:
    assert find_notices(CODEX_QUOTED[form]) == []


def test_a_codex_character_cut_sits_wherever_the_budget_ran_out() -> None:
    """`…N chars truncated…` is written mid-line (`head…N chars truncated…tail`): it has
    no place to hold a quote to, so a quote of one with its digits is taken for one."""
    (found,) = find_notices("abc\u20264 chars truncated\u2026xyz")
    assert found.form is SpillForm.CHARS_CUT

"""A marker whose count is thousands of digits long is still a marker, and no crash.

`int()` refuses more than 4,300 digits (Python's guard against quadratic
parsing) by raising `ValueError`, and the Claude Code and Codex marker finders
called it on whatever digits a line held: one hostile tool result crashed
`--check` and the viewer's analysis. The count is read when it can be and
said to be too big when it cannot.
"""

from __future__ import annotations

from transcript_view.core.formats.claude_markers import find_spills
from transcript_view.core.formats.codex import find_notices
from transcript_view.core.formats.model import SpillForm
from transcript_view.core.text import MAX_COUNT_DIGITS, count_of

HUGE = "9" * (MAX_COUNT_DIGITS + 700)


def test_a_count_is_read_when_it_can_be() -> None:
    assert count_of("12,000") == 12000
    assert count_of("0" * 9000 + "42") == 42  # leading zeros are not digits of the number
    assert count_of("9" * MAX_COUNT_DIGITS) == 10**MAX_COUNT_DIGITS - 1
    assert count_of(HUGE) is None


def test_a_claude_code_marker_with_a_huge_count_is_found_without_an_amount() -> None:
    [spill] = find_spills(f"head\n... [{HUGE} characters truncated] ...\ntail")
    assert spill.form is SpillForm.CHARS_TRUNCATED and spill.cut is None
    [ok] = find_spills("head\n... [12,000 characters truncated] ...\ntail")
    assert ok.cut == 12000


def test_a_codex_notice_with_a_huge_count_says_so() -> None:
    [notice] = find_notices(f"[... omitted {HUGE} of 300 lines ...]")
    assert notice.form is SpillForm.LINES_OMITTED
    assert notice.cut == f"10^{MAX_COUNT_DIGITS} or more of 300 lines"
    [total] = find_notices(f"Total output lines: {HUGE}\n\nsome output")
    assert total.cut == f"part of 10^{MAX_COUNT_DIGITS} or more lines"

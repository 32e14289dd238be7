"""The viewer and `--check` never disagree: same counts, same badge on every marker.

Both take their verdicts from `core.ledger.VerificationLedger`, but the viewer
feeds it from worker messages one check at a time and draws the result, so
this is checked end to end: `--check --json` runs on a file, the viewer opens
the same file headlessly and is left until every worker is done, then the
header's counts and the badge drawn on each marker's row are compared with
the JSON, and every problem with a line must be drawn on it. The corpus:
every reference transcript, the bundled examples, every hostile case both
accept, and the case that once disagreed (an `artifact` key
naming a missing file with no marker).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from _hostile import CASES
from _pilot import settle, sync
from _runs import write_key_without_marker
from _support import (
    CLAUDE_EXAMPLE,
    CLAUDE_SUBAGENT_EXAMPLE,
    CODEX_EXAMPLE,
    COPILOT_EXAMPLE,
    EXAMPLES,
    GEMINI_EXAMPLE,
    OPENCODE_EXAMPLE,
    OPENCODE_STORAGE_EXAMPLE,
    QWEN_EXAMPLE,
    REFERENCE,
    REFERENCE_TRANSCRIPTS,
)

from transcript_view.core.check import run_check
from transcript_view.core.findings import KINDS, Severity
from transcript_view.core.ledger import ORPHAN_KINDS
from transcript_view.core.opencode_store import address
from transcript_view.core.records import SiteKey
from transcript_view.core.text import plural
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen

SIZE = (120, 40)

#: (id, how to make the file in a temporary directory)
FILES: list[tuple[str, Any]] = [
    *[(f"reference-{s}", lambda d, s=s: REFERENCE / f"{s}.jsonl") for s in REFERENCE_TRANSCRIPTS],
    ("example-demo", lambda d: EXAMPLES / "demo.jsonl"),
    ("example-broken", lambda d: EXAMPLES / "broken.jsonl"),
    ("example-claude", lambda d: CLAUDE_EXAMPLE),
    ("example-claude-subagent", lambda d: CLAUDE_SUBAGENT_EXAMPLE),
    ("example-codex", lambda d: CODEX_EXAMPLE),
    ("example-qwen", lambda d: QWEN_EXAMPLE),
    ("example-gemini", lambda d: GEMINI_EXAMPLE),
    ("example-opencode", lambda d: OPENCODE_EXAMPLE),
    ("example-copilot", lambda d: COPILOT_EXAMPLE),
    ("example-opencode-storage", lambda d: OPENCODE_STORAGE_EXAMPLE),
    ("key-without-marker", write_key_without_marker),
    # Cases `--check` refuses (exit 2) have no JSON; the viewer refuses them too
    # (tests/robustness/test_viewer_hostile.py).
    *[(f"hostile-{c.name}", c.build) for c in CASES if c.exit != 2],
]


def _check_json(path: Path) -> dict[str, Any]:
    out = io.StringIO()
    run_check([path], as_json=True, strict=False, out=out)
    (row,) = [json.loads(line) for line in out.getvalue().splitlines()]
    return dict(row)


def _drawn_badge(screen: TranscriptScreen, key: SiteKey) -> str:
    """The badge text on the first row of the marker at `key`, as the file view draws it."""
    doc = screen.view.doc
    index = doc.source.index_of_line(key.line)
    assert index is not None, f"line {key.line} is not laid out"
    for row in doc.source.build(index, expand=True).text_rows():
        if row.kind == "marker" and row.site == key and not row.cont:
            return row.text.plain
    raise AssertionError(f"no marker row for {key}")


@pytest.mark.parametrize("make", [m for _, m in FILES], ids=[i for i, _ in FILES])
def test_the_viewer_shows_what_check_says(make: Any, tmp_path: Path) -> None:
    path = make(tmp_path)
    # (An OpenCode session is named by a path below its database file.)
    assert path.is_file() or address(path), "a directory opens the listing, compared apart"
    expected = _check_json(path)
    _compare(path, expected, _check_summary(path))


def _check_summary(path: Path) -> str:
    """The first line of plain `--check`: its counts, as a person reads them."""
    out = io.StringIO()
    run_check([path], as_json=False, strict=False, out=out)
    return out.getvalue().splitlines()[0]


@sync
async def _compare(path: Path, expected: dict[str, Any], summary: str) -> None:
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        header = screen.header
        # The header counts problems and orphans apart, by the ledger's one rule
        # (`ORPHAN_KINDS`), and so does `--check`: findings about files no line
        # names are orphans, every other error or warning is a problem.
        serious = [f for f in expected["findings"] if KINDS[f["kind"]] is not Severity.NOTE]
        problems = [f for f in serious if f["kind"] not in ORPHAN_KINDS]
        orphans = [f for f in serious if f["kind"] in ORPHAN_KINDS]
        # A marker with no digest counts when its preview (or head and tail) and size match.
        checked = expected["verified"] + expected["matched"]
        assert (header.markers, header.verified, header.problems, header.orphans) == (
            expected["markers"],
            checked,
            len(problems),
            len(orphans),
        ), "header counts (markers, verified, problems, orphans) differ from --check --json"
        # `p` reaches every problem the header counts: each has a line to go to.
        assert all(f["line"] is not None for f in problems), problems
        # Plain `--check` says the same two numbers in words.
        assert summary.endswith(
            f"; {plural(len(problems), 'problem')}, {plural(len(orphans), 'orphan')}"
        ), summary
        assert header.phase == "", "every background phase has finished"
        for badge in expected["badges"]:
            drawn = _drawn_badge(screen, SiteKey(badge["line"], badge["start"]))
            assert f" {badge['state']} " in drawn[:40], (badge, drawn)
        # Every counted problem that has a line is drawn on that line's block.
        for f in problems:
            if f["line"] is not None:
                shown = _drawn_text(screen, f["line"])
                assert f["kind"] in shown, (f, shown)


def _drawn_text(screen: TranscriptScreen, line: int) -> str:
    """Every row the file view draws for transcript `line`, expanded, as plain text."""
    doc = screen.view.doc
    index = doc.source.index_of_line(line)
    assert index is not None, f"line {line} is not laid out"
    return "\n".join(r.text.plain for r in doc.source.build(index, expand=True).text_rows())

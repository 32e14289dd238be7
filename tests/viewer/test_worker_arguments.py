"""Workers never print their arguments: an analysis's `repr` is megabytes.

Textual's `@work` names a worker, when it is given no `description`, by the
`repr` of every argument, on the thread that starts it (the UI's). An analysis
is a dataclass whose `repr` spells out every column of its model calls and
every site: on a 1 GiB transcript, starting the artifact check after the
analysis landed held the UI for 0.85 s (`py-spy` of `benchmarks/idle_meter.py`),
and opening the context screen did the same. So every worker says what it is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from _pilot import settle, sync
from _support import CLAUDE_EXAMPLE, EXAMPLES, ROOT

from transcript_view.core.analysis import Analysis
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.context_screen import ContextScreen


def _is_work(node: ast.expr) -> bool:
    """`work` or `<module>.work` (`textual.work`)."""
    return (isinstance(node, ast.Name) and node.id == "work") or (
        isinstance(node, ast.Attribute) and node.attr == "work"
    )


def _work_decorators() -> list[tuple[str, ast.expr]]:
    """Every `@work` decorator in the viewer's modules (bare or called), with where it is."""
    found = []
    for path in sorted((ROOT / "viewer").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for deco in node.decorator_list:
                    if _is_work(deco.func if isinstance(deco, ast.Call) else deco):
                        found.append((f"{path.name}:{node.name}", deco))
    return found


def test_every_worker_says_what_it_is() -> None:
    decorators = _work_decorators()
    assert len(decorators) >= 10  # the scan sees the workers
    missing = [
        where
        for where, deco in decorators
        if not isinstance(deco, ast.Call) or "description" not in {k.arg for k in deco.keywords}
    ]
    assert missing == []


@pytest.mark.parametrize("path", [EXAMPLES / "demo.jsonl", CLAUDE_EXAMPLE], ids=["demo", "claude"])
@sync
async def test_no_worker_prints_the_analysis(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The artifact check after the analysis, and the chart's fills, take the analysis.
    # (`@work` swallows what its `repr` raises: the calls are counted instead.)
    printed: list[str] = []

    def counted(self: object) -> str:
        printed.append(type(self).__name__)
        return "..."

    monkeypatch.setattr(Analysis, "__repr__", counted)
    monkeypatch.setattr(SessionAnalysis, "__repr__", counted)
    app = TranscriptApp(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        assert isinstance(app.screen, ContextScreen)
    assert printed == []

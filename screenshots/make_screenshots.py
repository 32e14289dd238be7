#!/usr/bin/env python3
"""Regenerate the SVG screenshots in screenshots/ from the bundled examples.

Every picture is taken by driving the real app headlessly (`App.run_test`) and
saving what is on screen (`App.save_screenshot`), after waiting for all of its
background workers, so the images show the finished state and are never edited
by hand. Run it with the project's environment:

    python3 dev.py screenshots        (or: .venv/bin/python screenshots/make_screenshots.py)
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))  # the headless driver tests share (_pilot)

from _pilot import wait_until_quiet  # noqa: E402
from textual.pilot import Pilot  # noqa: E402

from transcript_view.viewer.app import TranscriptApp  # noqa: E402

EXAMPLES = ROOT / "examples"
SIZE = (120, 40)

Script = Callable[[Pilot[Any]], Awaitable[None]]


async def settle(pilot: Pilot[Any]) -> None:
    """Wait until the app is quiet, so the picture shows the finished state."""
    await wait_until_quiet(pilot)


async def nothing(pilot: Pilot[Any]) -> None:
    """Just the opened transcript."""


async def open_artifact(pilot: Pilot[Any]) -> None:
    """The first marker's artifact opened inline under it, its header rows in sight.

    Enter lands on the first byte the model never saw; a few rows up are the
    artifact's header (name, size, digest) and the end of the head it saw.
    """
    await pilot.press("n", "enter")
    await settle(pilot)
    view = pilot.app.screen.view  # type: ignore[attr-defined]
    doc = view.doc
    for i in range(doc.total_rows):
        row = doc.row(i)
        if row is not None and row.kind == "art-head":
            view.set_cursor(i, scroll=False)
            view.scroll_to(y=max(i - 4, 0), animate=False, immediate=True)
            break
    await pilot.pause()


async def landing(pilot: Pilot[Any]) -> None:
    """Enter on the first marker: where the view lands (what the model never saw)."""
    await pilot.press("n", "enter")
    await settle(pilot)


async def first_marker(pilot: Pilot[Any]) -> None:
    """The cursor on the first marker."""
    await pilot.press("n")


async def artifact_boundary(pilot: Pilot[Any]) -> None:
    """The opened artifact where the head the model saw ends and the unseen part begins."""
    await open_artifact(pilot)
    view = pilot.app.screen.view  # type: ignore[attr-defined]
    doc = view.doc
    for i in range(doc.total_rows):
        row = doc.row(i)
        if row is not None and row.kind == "art" and row.text.plain.lstrip().startswith("┆"):
            view.set_cursor(i, scroll=False)
            view.scroll_cursor_visible(center=True)
            break
    await pilot.pause()


async def first_problem(pilot: Pilot[Any]) -> None:
    """The cursor on the first thing that did not verify."""
    await pilot.press("p")


async def model_view(pilot: Pilot[Any]) -> None:
    """What the model is sent next."""
    await pilot.press("m")
    await settle(pilot)


async def search(pilot: Pilot[Any]) -> None:
    """A search with its hits highlighted."""
    await pilot.press("slash", *"offset", "enter")
    await settle(pilot)


async def help_screen(pilot: Pilot[Any]) -> None:
    """The help screen."""
    await pilot.press("question_mark")
    await pilot.pause()


async def orphans(pilot: Pilot[Any]) -> None:
    """The orphans screen of the broken example."""
    await pilot.press("o")
    await settle(pilot)


async def parallel_batch(pilot: Pilot[Any]) -> None:
    """The Claude Code example's parallel batch: its progress records folded, no branch note,
    then the retried API error and the microcompaction."""
    view = pilot.app.screen.view  # type: ignore[attr-defined]
    view.go_to_line(38)
    index = view.doc.source.index_of_line(38)
    view.scroll_to(y=view.doc.block_start(index), animate=False, immediate=True)
    await pilot.pause()


async def context_window(pilot: Pilot[Any]) -> None:
    """The context screen (`w`): the fill of every call's window, its compaction and spills,
    the fullest call selected with its biggest items."""
    await pilot.press("w")
    await settle(pilot)


async def call_context(pilot: Pilot[Any]) -> None:
    """The model view at one call (`w`, → to the call after the compaction, enter): its
    size and where it comes from, the compaction it starts after, what the file does not
    hold, then the summary and each message as the model got it."""
    await pilot.press("w")
    await settle(pilot)
    await pilot.press("right", "enter")
    await settle(pilot)


#: The synthetic Claude Code session and Codex rollout (examples/make_agent_examples.py).
CLAUDE = "claude/projects/-Users-someone-proj/5f0c2a9e-1111-4222-8333-444455556666.jsonl"
CODEX = (
    "codex/sessions/2026/01/01/"
    "rollout-2026-01-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl"
)
QWEN = "qwen/projects/-Users-someone-proj/chats/7b0e2c1a-5d3f-4e6a-9b8c-0d1e2f3a4b5c.jsonl"
GEMINI = "gemini/tmp/proj/chats/session-2026-11-20T10-00-3f9a2c1e.jsonl"
OPENCODE = "opencode/opencode.db/ses_5b1d3c7e9ffeRk2mZ8qL4tXw9a"
COPILOT = "copilot/session-state/4f6b2d1e-7a3c-4e5f-9b8a-1c2d3e4f5a6b/events.jsonl"

SHOTS: list[tuple[str, str, Script]] = [
    ("demo", "demo.jsonl", nothing),
    ("demo-artifact", "demo.jsonl", open_artifact),
    ("demo-artifact-unseen", "demo.jsonl", artifact_boundary),
    ("demo-model-view", "demo.jsonl", model_view),
    ("demo-search", "demo.jsonl", search),
    ("broken", "broken.jsonl", first_problem),
    ("broken-orphans", "broken.jsonl", orphans),
    ("help", "demo.jsonl", help_screen),
    ("claude-session", CLAUDE, first_problem),
    ("claude-sidecar", CLAUDE, landing),
    ("claude-parallel-batch", CLAUDE, parallel_batch),
    ("claude-context", CLAUDE, context_window),
    ("claude-call-context", CLAUDE, call_context),
    ("claude-sessions", "claude", nothing),
    ("codex-rollout", CODEX, first_marker),
    ("qwen-session", QWEN, first_problem),
    ("gemini-session", GEMINI, nothing),
    ("opencode-session", OPENCODE, first_problem),
    ("opencode-sessions", "opencode", nothing),
    ("copilot-session", COPILOT, first_problem),
]


async def shoot(name: str, transcript: str, script: Script) -> Path:
    """Open one example, run a script, save the screen as screenshots/<name>.svg."""
    app = TranscriptApp(EXAMPLES / transcript)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await script(pilot)
        await settle(pilot)
        return Path(app.save_screenshot(f"{name}.svg", path=str(HERE)))


async def shoot_every_agent(name: str) -> Path:
    """`--sessions` on the examples laid out as one machine's agents (a temporary home)."""
    import os
    import tempfile

    from _support import every_agent_home

    with tempfile.TemporaryDirectory() as tmp:
        saved = dict(os.environ)
        os.environ.pop("QWEN_HOME", None)
        os.environ.update(every_agent_home(Path(tmp)))
        try:
            app = TranscriptApp(None, every_agent=True)
            async with app.run_test(size=SIZE) as pilot:
                await settle(pilot)
                return Path(app.save_screenshot(f"{name}.svg", path=str(HERE)))
        finally:
            os.environ.clear()
            os.environ.update(saved)


def main() -> int:
    """Write every screenshot; print each path."""
    for name, transcript, script in SHOTS:
        print(asyncio.run(shoot(name, transcript, script)))
    print(asyncio.run(shoot_every_agent("every-agent-sessions")))
    return 0


if __name__ == "__main__":
    sys.exit(main())

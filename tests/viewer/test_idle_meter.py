"""The idle benchmark's meter ends on every format (`benchmarks/idle_meter.py`).

The meter waits until the viewer has nothing left to do; a view that is made
only when shown (a Claude Code session's or a Codex rollout's model view) is
no work owed. It once waited for that view forever: the benchmark hung on every
agent session. No time is asserted here, only that the wait ends.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import idle_meter  # noqa: E402

EXAMPLES = ROOT / "examples"
CLAUDE = "claude/projects/-Users-someone-proj/5f0c2a9e-1111-4222-8333-444455556666.jsonl"
CODEX = (
    "codex/sessions/2026/01/01/"
    "rollout-2026-01-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl"
)


@pytest.mark.parametrize("name", ["demo.jsonl", CLAUDE, CODEX])
def test_the_meter_sees_every_format_go_idle(name: str) -> None:
    async def measured() -> dict[str, Any]:
        return await asyncio.wait_for(idle_meter.measure(EXAMPLES / name), timeout=60)

    out = asyncio.run(measured())
    assert out["seconds"] > 0 and out["ui_hwm"] > 0

"""The bundled examples record what each model call was sent, as the agents do.

`examples/make_agent_examples.py` writes Claude Code's `message.usage` on every
response and a Codex `token_count` after every call, so what ships shows recorded
figures (`--context`, the context screen), not estimates. The sizes are made up,
but hold together as a real session's do.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from _support import CLAUDE_EXAMPLE, CLAUDE_SUBAGENT_EXAMPLE, CODEX_EXAMPLE

from transcript_view.core.calls import ModelCalls
from transcript_view.core.check import verify


def _calls(path: Path) -> ModelCalls:
    analysis = verify(path).analysis
    assert analysis is not None
    return analysis.calls


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("path", [CLAUDE_EXAMPLE, CLAUDE_SUBAGENT_EXAMPLE, CODEX_EXAMPLE])
def test_every_call_of_the_examples_is_recorded(path: Path) -> None:
    calls = _calls(path)
    assert len(calls) > 0
    assert all(call.recorded for call in calls), [c.number for c in calls if not c.recorded]


def test_the_claude_example_grows_is_compacted_and_repeats_usage_per_response() -> None:
    calls = list(_calls(CLAUDE_EXAMPLE))
    (compacted,) = [c for c in calls if any(x.kind == "compact_boundary" for x in c.compactions)]
    before = calls[compacted.number - 2]
    boundary = next(x for x in compacted.compactions if x.kind == "compact_boundary")
    # preTokens: the call before and the little its response added.
    assert boundary.tokens_before is not None
    assert 0 <= boundary.tokens_before - before.tokens < 100
    assert compacted.tokens < before.tokens  # a drop after it
    for a, b in pairwise(calls):
        if b is not compacted:
            assert b.tokens >= a.tokens  # grows with the conversation
    usage: dict[tuple[str, str], dict[str, int]] = {}
    for line in _lines(CLAUDE_EXAMPLE):
        if line["type"] != "assistant":
            continue
        got = line["message"]["usage"]
        assert got["input_tokens"] < 10 and got["output_tokens"] < 30
        key = (line["message"]["id"], line["requestId"])
        assert usage.setdefault(key, got) == got  # one response, one usage


def test_the_codex_example_records_each_calls_size_and_window() -> None:
    calls = list(_calls(CODEX_EXAMPLE))
    assert all(c.window == 272_000 and c.window_source is not None for c in calls)
    assert all(c.window_source.value == "recorded" for c in calls if c.window_source)
    assert [c.tokens for c in calls] == sorted(c.tokens for c in calls)
    counts = [
        line["payload"]["info"]
        for line in _lines(CODEX_EXAMPLE)
        if line["type"] == "event_msg" and line["payload"]["type"] == "token_count"
    ]
    recorded = [info["last_token_usage"] for info in counts if info is not None]
    assert [u["input_tokens"] for u in recorded] == [c.tokens for c in calls]
    assert all(u["cached_input_tokens"] < u["input_tokens"] for u in recorded)

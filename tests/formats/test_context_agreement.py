"""One answer to "was this line in call k's context?": the model view and the file view.

The model view at a call lists what `core.call_context` reads back for it; the file
view says which calls had a line (`core.lifetime`). They are written apart (one reads a
call's lines, the other bisects the calls for a line), so this holds them to each
other on sessions of the real shapes and on random ones: every line a call's context
holds says that call is in its lifetime.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _real_shapes import (
    codex_compacted_rollout,
    context_session,
    filling_session,
    microcompacted_session,
    parallel_session,
)
from _sessions import random_claude_session, random_codex_rollout

from transcript_view.core.call_context import context_of_call
from transcript_view.core.formats.detect import detect
from transcript_view.core.formats.readers import READERS
from transcript_view.core.lifetime import Lifetimes
from transcript_view.core.transcript import Transcript

_ROOT = "projects/-Users-someone-proj"

SESSIONS: dict[str, Callable[[Path], Path]] = {
    "context": lambda tmp: context_session(tmp / _ROOT),
    "filling": lambda tmp: filling_session(tmp / _ROOT),
    "microcompacted": lambda tmp: microcompacted_session(tmp / _ROOT),
    "parallel": lambda tmp: parallel_session(tmp / _ROOT),
    "codex compacted": lambda tmp: codex_compacted_rollout(tmp / "rollout-compacted.jsonl"),
    **{
        f"random claude {seed}": (
            lambda tmp, seed=seed: random_claude_session(tmp / _ROOT, seed, 60)
        )
        for seed in range(4)
    },
    **{
        f"random codex {seed}": (
            lambda tmp, seed=seed: random_codex_rollout(tmp / "rollout-r.jsonl", seed, 60)
        )
        for seed in range(4)
    },
}


#: Where the two still disagree (issue 27, left open): random Claude Code sessions hold
#: compact boundaries that keep a parent, rewinds to a record, broken lines in a chain;
#: the chain walk and the bisect read those differently. Strict: a fix must remove it.
_DISAGREE = pytest.mark.xfail(
    strict=True, reason="chain walk and lifetime differ on malformed Claude Code chains"
)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=_DISAGREE) if n.startswith("random claude") else n for n in SESSIONS],
)
def test_every_line_a_calls_context_holds_lived_through_that_call(
    tmp_path: Path, name: str
) -> None:
    path = SESSIONS[name](tmp_path)
    fmt = detect(path).format
    assert fmt is not None
    with Transcript.open(path) as transcript:
        analysis = READERS[fmt](transcript, None, workers=1)
        lives = Lifetimes.of(analysis)
        checked = 0
        for index in range(len(analysis.calls)):
            number = index + 1
            for entry in context_of_call(transcript, analysis, index).entries:
                if entry.summary or entry.item >= 0 or entry.cleared_at is not None:
                    continue  # a compaction's own words, or a result already cleared
                for line in entry.all_lines:
                    span = lives.at(line)
                    assert span.first is not None and span.last is not None, (line, number)
                    assert span.first <= number <= span.last, (line, number, span)
                    checked += 1
        assert checked or not len(analysis.calls)

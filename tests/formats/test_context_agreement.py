"""One answer to "was this line in call k's context?": the model view and the file view.

The model view at a call lists what `core.call_context` reads back for it; the file
view says which calls had a line (`core.lifetime`). They are written apart (one reads a
call's lines, the other bisects the calls for a line), so this holds them to each
other on sessions of the real shapes and on random ones: every line a call's context
holds says that call is in its lifetime.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from _real_shapes import (
    codex_compacted_rollout,
    context_session,
    filling_session,
    microcompacted_session,
    parallel_session,
)
from _sessions import random_claude_session, random_codex_rollout

from transcript_view.core.call_context import ContextEntry, context_of_call
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


@contextmanager
def _opened(tmp_path: Path, name: str) -> Iterator[tuple[Transcript, Any, Lifetimes]]:
    """Session `name` written, opened and analysed, with its lifetimes."""
    path = SESSIONS[name](tmp_path)
    fmt = detect(path).format
    assert fmt is not None
    with Transcript.open(path) as transcript:
        analysis = READERS[fmt](transcript, None, workers=1)
        yield transcript, analysis, Lifetimes.of(analysis)


def _aside(entry: ContextEntry) -> bool:
    """An entry neither rule speaks of: a compaction's own words, a result already cleared."""
    return entry.summary or entry.item >= 0 or entry.cleared_at is not None


@pytest.mark.parametrize("name", list(SESSIONS))
def test_every_line_a_calls_context_holds_lived_through_that_call(
    tmp_path: Path, name: str
) -> None:
    with _opened(tmp_path, name) as (transcript, analysis, lives):
        checked = 0
        for index in range(len(analysis.calls)):
            number = index + 1
            for entry in context_of_call(transcript, analysis, index).entries:
                if _aside(entry):
                    continue
                for line in entry.all_lines:
                    span = lives.at(line)
                    assert span.first is not None and span.last is not None, (line, number)
                    assert span.first <= number <= span.last, (line, number, span)
                    checked += 1
        assert checked or not len(analysis.calls)


@pytest.mark.parametrize("name", list(SESSIONS))
def test_every_call_a_lines_lifetime_names_holds_it(tmp_path: Path, name: str) -> None:
    """The converse: the calls a line's lifetime names are the calls whose context holds
    it, no more (but where a call's chain of parents leaves the file, which its context
    says as a problem: what came before it there cannot be known)."""
    with _opened(tmp_path, name) as (transcript, analysis, lives):
        contexts = [context_of_call(transcript, analysis, i) for i in range(len(analysis.calls))]
        held = [{n for e in c.entries for n in e.all_lines} for c in contexts]
        aside = {n for c in contexts for e in c.entries if _aside(e) for n in e.all_lines}
        known = {i + 1 for i, c in enumerate(contexts) if not c.problems}
        for line in sorted(set().union(*held) - aside):
            span = lives.at(line)
            runs = span.spans or (
                ((span.first, span.last),) if span.first and span.last else ()
            )
            named = {n for first, last in runs for n in range(first, last + 1)} & known
            holding = {i + 1 for i, h in enumerate(held) if line in h} & known
            assert named == holding, (line, span)

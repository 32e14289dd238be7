"""The context of one model call in a 1 GiB Claude Code session, against the issue's 1 s.

Issue 27: "opening the context of one call in a 1 GiB session reads only what
that call needs, within 1 s". The session is `gen.claude_session` (prompt,
tool call, result rounds, ~1 KiB a line) with a `compact_boundary` and its
summary every 3,000 lines (~2.3 MiB: a 200k-token window's worth), as a long
session compacts. The analysis is made once (its time is the pass's, timed by
the throughput group); each row is the best of 3 `context_of_call` of one call,
in process, warm page cache.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen  # noqa: E402
from gen import DATA, claude_session  # noqa: E402

T = TypeVar("T")

SIZE = 1 << 30
#: A key's budget (issue 11): what the file view's words under an expanded block wait on.
KEY_BUDGET = 0.050
EVERY = 3000
PLAIN = DATA / "claude-1g.jsonl"
COMPACTED = DATA / "claude-1g-compacting.jsonl"


def compacting_session() -> Path:
    """`claude_session` of 1 GiB with a compaction every `EVERY` lines (made on first use)."""
    if COMPACTED.exists():
        return COMPACTED
    claude_session(PLAIN, SIZE)
    last = None
    n = 0
    tmp = COMPACTED.with_suffix(".tmp")
    with PLAIN.open(encoding="utf-8") as src, tmp.open("w", encoding="utf-8") as out:
        for i, text in enumerate(src):
            obj = json.loads(text)
            if i and i % EVERY == 0:
                n += 1
                out.write(json.dumps({
                    "type": "system", "subtype": "compact_boundary", "uuid": f"cb-{n}",
                    "parentUuid": None, "logicalParentUuid": last,
                    "content": "Conversation compacted",
                    "compactMetadata": {"trigger": "auto", "preTokens": 160_000},
                }) + "\n")  # fmt: skip
                out.write(json.dumps({
                    "type": "user", "uuid": f"cs-{n}", "parentUuid": f"cb-{n}",
                    "isCompactSummary": True,
                    "message": {"role": "user", "content": "This session is being continued."},
                }) + "\n")  # fmt: skip
                obj["parentUuid"] = f"cs-{n}"
            last = obj.get("uuid")
            out.write(json.dumps(obj) + "\n")
    tmp.replace(COMPACTED)
    PLAIN.unlink()  # a GiB not needed again
    return COMPACTED


def _best(runs: int, work: Callable[[], T]) -> tuple[float, T]:
    """The best of `runs` timings of `work`, in seconds, and what it made (the last)."""
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        made = work()
        best = min(best, time.perf_counter() - t0)
    return best, made


def run(runs: int = 3) -> list[tuple[str, float, float, str]]:
    from transcript_view.core.call_context import context_of_call
    from transcript_view.core.formats.detect import Format
    from transcript_view.core.formats.readers import READERS
    from transcript_view.core.lifetime import Lifetimes
    from transcript_view.core.transcript import Transcript

    path = compacting_session()
    rows = []
    with Transcript.open(path) as t:
        analysis = READERS[Format.CLAUDE_CODE](t, None)
        count = len(analysis.calls)
        for name, index in (("a middle call", count // 2), ("the next call", None)):
            best, context = _best(runs, lambda i=index: context_of_call(t, analysis, i))
            rows.append((
                f"context of {name}, 1 GiB Claude Code session ({count:,} calls, "
                f"{len(context.entries):,} entries)",
                best,
                1.0,
                "the issue's budget, 1 s (target <= 1)",
            ))  # fmt: skip
        # Which calls had a line (the file view's words on an expanded block, on the UI
        # thread): the session's first message, whose lifetime crosses every jump after it.
        lives = Lifetimes.of(analysis)
        rows.append((
            "where the first message lived and what it cost, the same session",
            _best(runs, lambda: lives.words(t, 2))[0],
            KEY_BUDGET,
            "a key's budget, 50 ms (target <= 1)",
        ))  # fmt: skip
    # A session that never compacts: its last call's context is the whole file, every
    # line of which is read (the budget is the issue's; these show what it costs).
    for fmt, make, name, label in (
        (Format.CLAUDE_CODE, gen.claude_session, "claude", "Claude Code session"),
        (Format.CODEX, gen.codex_rollout, "codex", "Codex rollout"),
    ):
        path = make(gen.DATA / f"throughput-{name}-64m.jsonl", 64 * gen.MiB)
        with Transcript.open(path) as t:
            analysis = READERS[fmt](t, None)
            best, context = _best(
                runs, lambda t=t, a=analysis: context_of_call(t, a, len(a.calls) - 1)
            )
            rows.append((
                f"context of the last call, 64 MiB {label} that never compacts "
                f"({len(context.entries):,} entries: the whole file)",
                best,
                1.0,
                "the issue's budget, 1 s, for comparison; no target",
            ))  # fmt: skip
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)

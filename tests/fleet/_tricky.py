"""A tree whose names test every ordering rule of a tree walk (`core.check.transcripts_in`)."""

from __future__ import annotations

from pathlib import Path

#: Relative paths: a line of JSON each (what they hold does not matter to a walk).
TRICKY = (
    "a.jsonl",
    "a/subagents/agent-2.jsonl",
    "a/subagents/agent-1.jsonl",
    "a/subagents/workflows/w/agent-3.jsonl",
    "a/tool-results/t.txt",
    "a.k.jsonl",
    "a.z/x.jsonl",
    "a-b/x.jsonl",
    "proj/x.jsonl",
    "proj-a/x.jsonl",
    "proj.b/y.jsonl",
    "r.jsonl",
    "r.jsonl.bak",
    "r.jsonl.zst",
    "s.jsonl.zst",
    "t.artifacts/x.jsonl",
    "t.jsonl",
    "tool-results.jsonl",
    "tool-results/inside.jsonl",
    "chats/session-1.json",
    "chats/session-1.json.bak",
    "chats/session-1.jsonl",
    "chats/session-2.json",
    "chats/session-2/sub.jsonl",
    "notes.txt",
    "x.jsonl/inner.jsonl",
    "z/z/z/deep.jsonl",
)


def write_tricky(root: Path) -> Path:
    """The tree under `root`; returns `root`."""
    for rel in TRICKY:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"type": "user"}\n', encoding="utf-8")
    return root

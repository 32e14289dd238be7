"""Where the test data is, and helpers the core tests share (no fixtures, just facts).

Every test reads the reference's fixtures and the Unicode conformance file from
the copies under `tests/data/` (see its README), so a fresh clone tests
compatibility in full; `tests/contracts/test_data_copy.py` notices when
`../shared` holds a newer copy.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wcwidth import iter_graphemes

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
DATA = TESTS / "data"
#: Written by the Raku reference (LLM::Agent 0.6.1), copied byte for byte.
REFERENCE = DATA / "reference"
#: The Unicode Consortium's grapheme-break conformance test, copied byte for byte.
GRAPHEME_BREAK_TEST = DATA / "unicode" / "GraphemeBreakTest-18.0.0.txt"
#: Where CI and our own machines keep the originals (absent in a user's clone).
SHARED = ROOT.parent / "shared"
EXAMPLES = ROOT / "examples"
#: Our synthetic Claude Code project folder and Codex sessions tree
#: (`examples/make_agent_examples.py`; nobody's real session).
CLAUDE_PROJECT = EXAMPLES / "claude" / "projects" / "-Users-someone-proj"
CLAUDE_EXAMPLE = CLAUDE_PROJECT / "5f0c2a9e-1111-4222-8333-444455556666.jsonl"
CLAUDE_SUBAGENT_EXAMPLE = (
    CLAUDE_PROJECT / "5f0c2a9e-1111-4222-8333-444455556666" / "subagents" / "agent-a1b2c3.jsonl"
)
CODEX_EXAMPLE = (
    EXAMPLES / "codex" / "sessions" / "2026" / "01" / "01"
    / "rollout-2026-01-01T09-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl"
)  # fmt: skip

QWEN_EXAMPLE = (
    EXAMPLES / "qwen" / "projects" / "-Users-someone-proj" / "chats"
    / "7b0e2c1a-5d3f-4e6a-9b8c-0d1e2f3a4b5c.jsonl"
)  # fmt: skip

GEMINI_EXAMPLE = (
    EXAMPLES / "gemini" / "tmp" / "proj" / "chats" / "session-2026-11-20T10-00-3f9a2c1e.jsonl"
)
COPILOT_EXAMPLE = (
    EXAMPLES / "copilot" / "session-state" / "4f6b2d1e-7a3c-4e5f-9b8a-1c2d3e4f5a6b"
    / "events.jsonl"
)  # fmt: skip
#: OpenCode's data folder: a real SQLite database, a session named by a path below it.
OPENCODE_DATA = EXAMPLES / "opencode"
OPENCODE_EXAMPLE = OPENCODE_DATA / "opencode.db" / "ses_5b1d3c7e9ffeRk2mZ8qL4tXw9a"
OPENCODE_STORAGE_EXAMPLE = (
    OPENCODE_DATA / "storage" / "session" / "proj_shop" / "ses_7c3f2a9d1ffeOldStorageTree1.json"
)

#: The five reference transcripts (their `.events.jsonl` siblings are event logs).
REFERENCE_TRANSCRIPTS = ["basic", "many", "writefail", "aging", "compaction"]


def reference_vectors() -> list[dict[str, Any]]:
    """The 44 cross-implementation excerpt vectors, in file order."""
    with open(REFERENCE / "excerpt-vectors.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# -- the reference's segmentation, as far as its data shows it: today's minus GB9c --
# Indic_Conjunct_Break=Linker in Unicode 15.1 (the viramas that join conjuncts).
_LINKERS = frozenset("\u094d\u09cd\u0acd\u0b4d\u0c4d\u0d4d")


def _split_gb9c(cluster: str) -> Iterator[str]:
    """Undo GB9c inside one cluster: break before a letter that follows a linker.

    Without GB9c (the reference's Unicode 13 build) a virama is only Extend, so
    it stays with what precedes it, and the consonant after it starts a new
    cluster. Extend characters (marks, ZWJ) between the linker and the consonant
    stay with the linker, exactly as GB9 keeps them.
    """
    start = 0
    after_linker = False
    for i, ch in enumerate(cluster):
        if ch in _LINKERS:
            after_linker = True
            continue
        if after_linker and unicodedata.category(ch) == "Lo":
            yield cluster[start:i]
            start = i
        if unicodedata.category(ch) not in ("Mn", "Mc", "Cf"):
            after_linker = False
    yield cluster[start:]


def graphemes_without_gb9c(text: str) -> list[str]:
    """Grapheme clusters as a segmenter without GB9c (the reference's) makes them."""
    out: list[str] = []
    for cluster in iter_graphemes(text):
        out.extend(_split_gb9c(cluster))
    return out


def plain_clusters(text: str) -> list[str]:
    """Clusters by the plain engine, each lone surrogate a cluster of its own."""
    out: list[str] = []
    for piece in re.split("([\ud800-\udfff])", text):
        if len(piece) == 1 and "\ud800" <= piece <= "\udfff":
            out.append(piece)
        elif piece:
            out.extend(iter_graphemes(piece))
    return out


def spy_parsed_lines(monkeypatch: Any) -> list[int]:
    """Record the first line of every `Transcript.parsed_lines` call from now on.

    How the follow-mode tests see that an update reads only the new lines.
    """
    from transcript_view.core.transcript import Transcript

    starts: list[int] = []
    real = Transcript.parsed_lines

    def spy(self: Transcript, start: int = 1, stop: int | None = None) -> Any:
        starts.append(start)
        return real(self, start, stop)

    monkeypatch.setattr(Transcript, "parsed_lines", spy)
    return starts


def one_read_run(path: Path, ask: str, result: str, *, limit: int = 300) -> Path:
    """A run `Session` writes: `ask`, then one `fs_read` call whose result is `result`
    (stored as an artifact, with its marker, when it is longer than `limit`)."""
    from transcript_view.core.session import Session

    with Session.create(path, {"app": "tests"}, limit=limit) as s:
        s.append_message("user", ask)
        s.append_message("assistant", "", tool_calls=[
            {"id": "call_1", "type": "function",
             "function": {"name": "fs_read", "arguments": "{}"}},
        ])  # fmt: skip
        op = s.append_tool_dispatched("call_1", "fs_read", "{}", round=1)
        s.settle(op, "call_1", result)
    return path


def generate(path: Path, size: str, markers: int, artifact_size: str = "20K") -> Path:
    """`benchmarks/gen.py`'s transcript of about `size`, with `markers` stored artifacts."""
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gen.py"), str(path), "--size", size,
         "--markers", str(markers), "--artifact-size", artifact_size],
        check=True, capture_output=True,
    )  # fmt: skip
    return path


def every_agent_home(root: Path) -> dict[str, str]:
    """The bundled examples laid out as one machine's agents (copies under `root`), each
    session's time its first timestamp's (so "newest first" is one order everywhere), and
    the environment that points every agent's default root there (`--sessions`)."""
    import os
    import shutil
    from datetime import datetime

    from transcript_view.core.formats.detect import Format
    from transcript_view.core.formats.sessions import list_sessions

    home = root / "home"
    layout = {
        "claude": home / ".claude",
        "codex": home / ".codex",
        "qwen": home / ".qwen",
        "gemini": home / ".gemini",
        "opencode": home / ".local" / "share" / "opencode",
        "copilot": home / ".copilot",
    }
    for name, target in layout.items():
        shutil.copytree(EXAMPLES / name, target)
    trees = [
        (layout["claude"] / "projects", Format.CLAUDE_CODE),
        (layout["codex"] / "sessions", Format.CODEX),
        (layout["qwen"] / "projects", Format.QWEN),
        (layout["gemini"] / "tmp", Format.GEMINI),
        (layout["copilot"] / "session-state", Format.COPILOT),
    ]
    for tree, fmt in trees:
        for s in list_sessions(tree, fmt):
            assert s.started is not None
            when = datetime.fromisoformat(s.started.replace("Z", "+00:00")).timestamp()
            os.utime(s.path, (when, when))
    return {
        "CLAUDE_CONFIG_DIR": str(layout["claude"]),
        "CODEX_HOME": str(layout["codex"]),
        "QWEN_RUNTIME_DIR": str(layout["qwen"]),
        "GEMINI_CLI_HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "COPILOT_HOME": str(layout["copilot"]),
    }

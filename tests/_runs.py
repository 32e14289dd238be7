"""Small transcripts written by hand for the viewer's tests, with fixed ids and timestamps.

Snapshots must be identical on every run, so nothing here uses the clock (a
transcript written by `Session` would carry the current time).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transcript_view.core.artifacts import COULD_NOT_BE_STORED, NOWHERE_TO_PUT_IT, commify

#: Every badge a marker can wear in the viewer, with how the test run makes it.
BADGE_CASES = [
    "verified",
    "missing",
    "digest mismatch",
    "size mismatch",
    "excerpt mismatch",
    "unsafe name",
    "unreadable",
    "not stored",
    "could not be stored",
]


def line(n: int, type_: str, payload: dict[str, Any], id_: str | None = None) -> str:
    """One envelope line as the reference writes it (sorted keys, no spaces)."""
    env = {
        "id": id_ or f"00000000-0000-4000-8000-{n:012d}",
        "payload": payload,
        "ts": f"2026-01-01T00:00:{n % 60:02d}.000000Z",
        "type": type_,
        "v": 1,
    }
    return json.dumps(env, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def big_result(rows: int = 40) -> str:
    """A tool result with numbered rows: easy to see which part the model saw."""
    row = "row {:03d}: the quick brown fox jumps over the lazy dog\n"
    return "".join(row.format(i) for i in range(rows))


@dataclass
class Run:
    """A written transcript and what a test needs to know about it."""

    path: Path
    artifact_dir: Path
    op_id: str
    artifact_name: str
    marker: str


def write_run(directory: Path, state: str = "verified", name: str = "run.jsonl") -> Run:
    """A small transcript whose one excerpt marker ends up in badge `state`.

    The run: session meta, system prompt, user question, an assistant turn
    with one tool call, its dispatch, the excerpted tool message, the settle,
    and a final answer quoting a marker (so a quoted marker shows too).
    """
    content = big_result()
    limit = 200
    head_n, tail_n = 150, 50
    head, tail = content[:head_n], content[-tail_n:]
    data = content.encode()
    digest = hashlib.sha256(data).hexdigest()
    elided = len(content) - limit
    op_id = "6f7d06d2-f2c5-45a3-b687-c72851c5ef8a"
    file_name = f"{op_id}.txt"
    stem = name.rsplit(".", 1)[0]
    art_dir = directory / f"{stem}.artifacts"
    stored = True
    marker_file = file_name
    file_bytes: bytes | None = data
    if state == "missing":
        file_bytes = None
    elif state == "digest mismatch":
        file_bytes = data.replace(b"row 020", b"row 0X0")
    elif state == "size mismatch":
        file_bytes = data + b"one more line\n"
    elif state == "excerpt mismatch":
        head = head.replace("row 001", "row 00!")
    elif state == "unsafe name":
        marker_file = "../../etc/passwd"
        file_bytes = None
    elif state in ("not stored", "could not be stored"):
        stored = False
        file_bytes = None
    if stored:
        marker = (
            f"[... elided {commify(elided)} chars ({commify(len(data))} bytes total); "
            f"full result: {marker_file} sha256 {digest} ...]"
        )
    else:
        why = NOWHERE_TO_PUT_IT if state == "not stored" else COULD_NOT_BE_STORED
        marker = (
            f"[... elided {commify(elided)} chars ({commify(len(data))} bytes total); "
            f"full result {why}, sha256 {digest} ...]"
        )
    excerpt = head + "\n" + marker + "\n" + tail
    if file_bytes is not None or state == "unreadable":
        art_dir.mkdir(parents=True, exist_ok=True)
        if state == "unreadable":
            (art_dir / file_name).mkdir()
        elif file_bytes is not None:
            (art_dir / file_name).write_bytes(file_bytes)
    settle: dict[str, Any] = {"duration": 0.25, "op-id": op_id, "outcome": "completed"}
    if stored and marker_file == file_name:
        settle["artifact"] = {
            "bytes": len(data),
            "chars": len(content),
            "digest": digest,
            "elided-chars": elided,
            "file": file_name,
        }
    calls = [
        {
            "function": {"arguments": '{"path":"big.log"}', "name": "fs_read"},
            "id": "call_1",
            "type": "function",
        }
    ]
    lines = [
        line(1, "session-meta", {"scenario": "test", "state": state}),
        line(
            2,
            "message",
            {"content": "You read logs.", "role": "system", "sticky": True, "sysprompt": True},
        ),
        line(3, "message", {"content": "Read big.log please.", "role": "user"}),
        line(4, "message", {"content": "Reading it.", "role": "assistant", "tool-calls": calls}),
        line(
            5,
            "tool-dispatched",
            {"arguments": '{"path":"big.log"}', "call-id": "call_1", "tool": "fs_read"},
            id_=op_id,
        ),
        line(6, "message", {"content": excerpt, "role": "tool", "tool-call-id": "call_1"}),
        line(7, "tool-settled", settle),
        line(
            8,
            "message",
            {
                "content": "The log ends at row 039. The harness wrote:\n"
                "[... elided 1 chars (2 bytes total); full result: x.txt sha256 "
                + "0" * 64
                + " ...]",
                "role": "assistant",
            },
        ),
    ]
    path = directory / name
    path.write_text("".join(lines), encoding="utf-8")
    return Run(path, art_dir, op_id, file_name, marker)


def write_key_without_marker(directory: Path, name: str = "keyonly.jsonl") -> Path:
    """A settle whose `artifact` key names a file that is not there, with no marker.

    The tool message carries the whole result (no excerpt marker), yet the
    settle says it was stored: the analysis reports the disagreement
    (`metadata-mismatch`) and the missing file is a second error
    (`missing-artifact`). The viewer once counted only the first.
    """
    op_id = "6f7d06d2-f2c5-45a3-b687-c72851c5ef8b"
    content = "a small result, shown whole"
    data = content.encode()
    calls = [{"function": {"arguments": "{}", "name": "fs_read"}, "id": "call_1",
              "type": "function"}]  # fmt: skip
    settle = {
        "artifact": {
            "bytes": len(data),
            "chars": len(content),
            "digest": hashlib.sha256(data).hexdigest(),
            "elided-chars": 0,
            "file": f"{op_id}.txt",
        },
        "duration": 0.1,
        "op-id": op_id,
        "outcome": "completed",
    }
    lines = [
        line(1, "session-meta", {"scenario": "key without marker"}),
        line(2, "message", {"content": "Read it.", "role": "user"}),
        line(3, "message", {"content": "", "role": "assistant", "tool-calls": calls}),
        line(
            4,
            "tool-dispatched",
            {"arguments": "{}", "call-id": "call_1", "tool": "fs_read"},
            id_=op_id,
        ),
        line(5, "message", {"content": content, "role": "tool", "tool-call-id": "call_1"}),
        line(6, "tool-settled", settle),
    ]
    path = directory / name
    path.write_text("".join(lines), encoding="utf-8")
    return path

"""Generators for the big inputs the benchmarks need (made on demand, never committed).

Everything is written under `benchmarks/data/` (git-ignored) and reused when it
is already there with the right size, so a second run of the suite skips the
minutes of writing.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from transcript_view.core.artifacts import Store, artifact_dir_for, stored_marker  # noqa: E402
from transcript_view.core.canonical import canonical_json, data_digest  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
MIXED_SOURCE = ROOT / "tests" / "data" / "reference" / "basic.big-input.txt"
FIRST_TOKEN = "first-paint-token"
LAST_TOKEN = "last-line-token"

MiB = 1 << 20


def mixed_text(size: int) -> str:
    """`basic.big-input.txt` (the reference's mixed-script result) repeated to `size` bytes."""
    src = MIXED_SOURCE.read_bytes().decode("utf-8")
    reps = size // len(src.encode("utf-8")) + 1
    text = src * reps
    data = text.encode("utf-8")[:size]
    return data.decode("utf-8", "ignore")


def ascii_text(size: int) -> str:
    """Log-like ASCII lines to `size` bytes."""
    line = (
        "2026-11-30T07:14:37Z INFO worker=17 request=GET /api/v1/items?page=42 status=200 ms=13\n"
    )
    return (line * (size // len(line) + 1))[:size]


def _ts(i: int) -> str:
    return (
        f"2026-11-30T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1_000_000:06d}Z"
    )


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _line(type_: str, payload: object, id_: str, i: int) -> bytes:
    return (
        canonical_json(
            {"id": id_, "payload": payload, "ts": _ts(i), "type": type_, "v": 1}
        ).encode()
        + b"\n"
    )


def transcript(path: Path, size: int, *, artifacts: int = 0, artifact_size: int = 0) -> Path:
    """A transcript of about `size` bytes, ~1 KiB a line, optionally with stored artifacts.

    Rounds of user / assistant-with-call / dispatch / tool result / settle repeat
    until the size is reached; the first `artifacts` tool results are oversized
    ones whose full bytes are stored (`artifact_size` each, mostly ASCII).
    """
    if path.exists() and path.stat().st_size >= size:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(size)
    store = Store(artifact_dir_for(path))
    filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 12
    tmp = path.with_suffix(".partial")
    written = 0
    i = 0
    with open(tmp, "wb") as fh:
        head = _line(
            "session-meta", {"app": "benchmarks/gen.py", "note": FIRST_TOKEN}, _uuid(rng), 0
        )
        fh.write(head)
        written += len(head)
        stored = 0
        while written < size or stored < artifacts:
            i += 1
            call = f"call_{i}"
            op = _uuid(rng)
            chunk = [
                _line(
                    "message",
                    {"content": f"step {i}: {filler[:200]}", "role": "user"},
                    _uuid(rng),
                    i,
                ),
                _line(
                    "message",
                    {
                        "content": "calling",
                        "role": "assistant",
                        "tool-calls": [
                            {
                                "function": {"arguments": '{"n":1}', "name": "sh_run"},
                                "id": call,
                                "type": "function",
                            }
                        ],
                    },
                    _uuid(rng),
                    i,
                ),
                _line(
                    "tool-dispatched",
                    {
                        "arguments": '{"n":1}',
                        "arguments-digest": data_digest('{"n":1}'),
                        "call-id": call,
                        "tool": "sh_run",
                    },
                    op,
                    i,
                ),
            ]
            if stored < artifacts:
                body = ascii_text(artifact_size - 64) + f"\nend of artifact {stored} {'é' * 8}\n"
                st = store.store(op, body)
                limit = 16384
                content = (
                    body[:12288] + "\n" + stored_marker(st.chars - limit, st) + "\n" + body[-4096:]
                )
                artifact = {**st.as_dict(), "elided-chars": st.chars - limit}
                stored += 1
            else:
                content = f"result {i}: " + filler
                artifact = None
            chunk.append(
                _line(
                    "message",
                    {"content": content, "role": "tool", "tool-call-id": call},
                    _uuid(rng),
                    i,
                )
            )
            settle: dict[str, object] = {
                "duration": 0.01,
                "op-id": op,
                "outcome": "completed",
                "result-digest": data_digest(content),
            }
            if artifact:
                settle["artifact"] = artifact
            chunk.append(_line("tool-settled", settle, _uuid(rng), i))
            data = b"".join(chunk)
            fh.write(data)
            written += len(data)
        fh.write(last_line(rng, i + 1))
    os.replace(tmp, path)
    return path


def mixed_artifacts(path: Path, files: int, size: int) -> Path:
    """A transcript whose `files` results are `size` bytes of mixed-script text, stored."""
    if path.exists() and len(list(artifact_dir_for(path).glob("*.txt"))) >= files:
        return path
    from transcript_view.core.session import Session

    text = mixed_text(size)
    with Session.create(path, {"app": "benchmarks/gen.py"}) as s:
        for i in range(files):
            op = s.append_tool_dispatched(f"c{i}", "fs_read", "{}")
            s.settle(op, f"c{i}", text + str(i))
    return path


def last_line(rng: random.Random, i: int) -> bytes:
    """The final line: a token a tail-first viewer (toolong) shows on its first screen."""
    return _line("message", {"content": LAST_TOKEN, "role": "assistant"}, _uuid(rng), i)


def artifact_file(path: Path, size: int, *, mixed: bool = False) -> Path:
    """One big artifact-like text file (for the inline-open benchmark)."""
    if path.exists() and path.stat().st_size == size:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    text = mixed_text(size) if mixed else ascii_text(size)
    data = text.encode("utf-8")
    path.write_bytes(data)
    return path


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(4 * MiB):
            h.update(chunk)
    return h.hexdigest()

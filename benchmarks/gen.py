"""Generators for the big inputs the benchmarks need (made on demand, never committed).

Everything is written under `benchmarks/data/` (git-ignored) and reused when it
is already there with the right size, so a second run of the suite skips the
minutes of writing.

It is also a command line, for a transcript of any size to try the viewer on:

    python3 benchmarks/gen.py OUT.jsonl --size 300M --markers 3000

writes `OUT.jsonl` (~1 KiB lines) and `OUT.artifacts/` with one stored artifact
per marker, the markers spread evenly through the file. Sizes take K, M or G
(powers of 1024). Started by a Python without the project installed (a plain
`python3`), it runs itself again in the project's `.venv/`, which `dev.py`
builds on first use.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Set when this script runs itself again in `.venv/`: a second failure is an error.
_REEXEC = "TRANSCRIPT_VIEW_GEN_REEXEC"


def _run_in_project_env() -> int:
    """Run this script again with `.venv/`'s Python (built by `dev.py` if need be)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    dev.ensure_env()
    env = {**os.environ, _REEXEC: "1"}
    return subprocess.call([str(dev.PY), str(Path(__file__).resolve()), *sys.argv[1:]], env=env)


try:
    from transcript_view.core.artifacts import Store, artifact_dir_for, stored_marker
    from transcript_view.core.canonical import canonical_json, data_digest
except ImportError:
    if __name__ != "__main__" or os.environ.get(_REEXEC):
        raise
    sys.exit(_run_in_project_env())

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


def transcript(
    path: Path, size: int, *, artifacts: int = 0, artifact_size: int = 0, spread: bool = False
) -> Path:
    """A transcript of about `size` bytes, ~1 KiB a line, optionally with stored artifacts.

    Rounds of user / assistant-with-call / dispatch / tool result / settle repeat
    until the size is reached; the first `artifacts` tool results are oversized
    ones whose full bytes are stored (`artifact_size` each, mostly ASCII). With
    `spread`, the oversized results are placed evenly through the file instead
    (one each `size / artifacts` bytes), as a long session would have them; the
    benchmarks keep the default so their inputs stay what they measured.
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
            if stored < artifacts and (not spread or written >= stored * size // artifacts):
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


def _jsonl(
    path: Path,
    size: int,
    rounds: Callable[[int], list[dict[str, object]]],
    *,
    compact: bool = False,
) -> Path:
    """Lines from `rounds(i)` for i = 1, 2, … until the file is about `size` bytes.

    `compact` writes no space after `,` and `:`, as `JSON.stringify` and serde do.
    """
    if path.exists() and path.stat().st_size >= size:
        return path
    import json

    separators = (",", ":") if compact else None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    written = i = 0
    with open(tmp, "wb") as fh:
        while written < size:
            i += 1
            data = b"".join(
                json.dumps(obj, ensure_ascii=False, separators=separators).encode() + b"\n"
                for obj in rounds(i)
            )
            fh.write(data)
            written += len(data)
    os.replace(tmp, path)
    return path


def claude_session(path: Path, size: int) -> Path:
    """A Claude Code session of about `size` bytes: prompt, tool call, tool result rounds.

    Lines are shaped as Claude Code writes them (`uuid`/`parentUuid`, a
    `message` with content blocks, `toolUseResult`), about 1 KiB each, with
    no sidecars; for the readers' throughput, not their findings.
    """
    filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 8
    state = {"parent": None}

    def base(kind: str, i: int, k: int) -> dict[str, object]:
        uuid = f"{i:08x}-0000-4000-8000-{k:012d}"
        obj: dict[str, object] = {
            "parentUuid": state["parent"],
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/someone/proj",
            "sessionId": "0b7c6c1e-6f2e-4f5e-9c43-2f1d7a9e4b11",
            "version": "2.1.88",
            "type": kind,
            "uuid": uuid,
            "timestamp": _ts(i),
        }
        state["parent"] = uuid
        return obj

    def rounds(i: int) -> list[dict[str, object]]:
        tool = f"toolu_{i:020d}"
        user = base("user", i, 1)
        user["message"] = {"role": "user", "content": f"step {i}: {filler[:160]}"}
        call = base("assistant", i, 2)
        call["requestId"] = f"req_{i:020d}"
        call["message"] = {
            "id": f"msg_{i:020d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "running it"},
                {"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": "ls -la"}},
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1200 + i % 100, "output_tokens": 40},
        }
        result = base("user", i, 3)
        out = f"result {i}: {filler}"
        result["message"] = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool, "content": out}],
        }
        result["toolUseResult"] = {"stdout": out[:200], "stderr": "", "interrupted": False}
        return [user, call, result]

    return _jsonl(path, size, rounds)


#: Claude Code 2.1.2+'s marker (CLAUDE_CODE.md, "The markers"), byte for byte.
PERSISTED_MARKER = (
    "<persisted-output>\n"
    "Output too large ({size}). Full output saved to: {path}\n"
    "\n"
    "Preview (first 2KB):\n"
    "{preview}\n...\n</persisted-output>"
)


def claude_sidecars(root: Path, sidecars: int, sidecar_size: int) -> Path:
    """A Claude Code session whose `sidecars` tool results of `sidecar_size` bytes spilled.

    Laid out as `~/.claude/projects/` holds it: `<root>/<session>.jsonl` and
    the sidecars in `<root>/<session>/tool-results/`, half of them Bash's
    (bytes, leading blank lines its preview drops), half a generic tool's
    (UTF-16 sizes). Every preview is the file's start, so a check finds no
    problem: it is the reading and keeping of thousands of sidecars that is
    measured. Returns the transcript's path.
    """
    from transcript_view.core.formats.claude_markers import format_file_size, utf16_units

    session = "0b7c6c1e-6f2e-4f5e-9c43-2f1d7a9e4b11"
    path = root / f"{session}.jsonl"
    results = root / session / "tool-results"
    if path.exists() and len(list(results.glob("*.txt"))) >= sidecars:
        return path
    results.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"row {i:07d}: " + "x" * 47 + "\n" for i in range(sidecar_size // 60 + 1))
    foreign = f"/home/someone/.claude/projects/-home-someone-proj/{session}/tool-results"
    lines: list[dict[str, object]] = []
    parent: list[str | None] = [None]

    def base(kind: str, i: int, k: int) -> dict[str, object]:
        uuid = f"{i:08x}-0000-4000-8000-{k:012d}"
        obj: dict[str, object] = {
            "parentUuid": parent[0],
            "isSidechain": False,
            "type": kind,
            "uuid": uuid,
            "sessionId": session,
            "timestamp": _ts(i),
            "cwd": "/home/someone/proj",
            "version": "2.1.88",
        }
        parent[0] = uuid
        return obj

    for i in range(sidecars):
        bash = i % 2 == 1
        tool = f"toolu_{i:020d}"
        name = f"b{i:06d}.txt" if bash else f"{tool}.txt"
        full = f"output {i}\n" + rows[: sidecar_size - 12]
        data = (("\n\n" + full) if bash else full).encode()
        (results / name).write_bytes(data)
        preview = full[:2000]
        preview = preview[: preview.rfind("\n")]
        size = format_file_size(len(data) if bash else utf16_units(data.decode()))
        marker = PERSISTED_MARKER.format(size=size, path=f"{foreign}/{name}", preview=preview)
        call = base("assistant", i, 1)
        call["message"] = {
            "id": f"msg_{i:020d}",
            "role": "assistant",
            "type": "message",
            "content": [
                {"type": "tool_use", "id": tool, "name": "Bash" if bash else "Grep", "input": {}}
            ],
        }
        result = base("user", i, 2)
        result["message"] = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool, "content": marker}],
        }
        if bash:
            result["toolUseResult"] = {
                "stdout": preview,
                "stderr": "",
                "interrupted": False,
                "persistedOutputPath": f"{foreign}/{name}",
                "persistedOutputSize": len(data),
            }
        lines += [call, result]
    import json

    tmp = path.with_suffix(".partial")
    tmp.write_text("".join(json.dumps(obj) + "\n" for obj in lines), encoding="utf-8")
    os.replace(tmp, path)
    return path


def codex_rollout(path: Path, size: int) -> Path:
    """A Codex rollout of about `size` bytes: message, function call, output, event rounds."""
    filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 8

    def line(kind: str, payload: dict[str, object], i: int) -> dict[str, object]:
        return {"timestamp": _ts(i), "type": kind, "payload": payload}

    def rounds(i: int) -> list[dict[str, object]]:
        call = f"call_{i:020d}"
        head = []
        if i == 1:
            meta = {"id": "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000", "cwd": "/home/someone/proj"}
            head.append(line("session_meta", meta, i))
        text = [{"type": "input_text", "text": f"step {i}: {filler[:160]}"}]
        return [
            *head,
            line("response_item", {"type": "message", "role": "user", "content": text}, i),
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": '{"command":["ls","-la"]}',
                    "call_id": call,
                },
                i,
            ),
            line(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": call,
                    "output": f"result {i}: {filler}",
                },
                i,
            ),
            line("event_msg", {"type": "token_count", "info": {"total": 1200 + i}}, i),
        ]

    return _jsonl(path, size, rounds)


def qwen_session(runtime: Path, size: int, spills: int = 8) -> Path:
    """A Qwen Code session of about `size` bytes under the runtime folder `runtime` (as
    `~/.qwen` holds one): user, assistant (a call, its usage and window) and tool-result
    records, and `spills` results spread through it that went to a 64 KiB file each in the
    project's `tool-results/`, each given to the model as Qwen Code's stub with its sha256
    (`core.formats.qwen_markers`; the stub's text as 0.24.4 writes it)."""
    from transcript_view.core.formats.qwen_markers import preview_of, size_kb, tool_results_dir

    cwd = "/home/someone/proj"
    chats = runtime / "projects" / "-home-someone-proj" / "chats"
    path = chats / "b3c0ffee-0000-4000-8000-000000000001.jsonl"
    results = tool_results_dir(path, cwd)
    filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 8
    rounds_total = max(size // 2000, 1)  # a round is about 2 KB
    every = max(rounds_total // max(spills, 1), 1)
    body = "".join(f"line {i:05d}: {filler[:100]}\n" for i in range(600))[: 64 << 10]

    def base(i: int, k: int, kind: str) -> dict[str, object]:
        return {"uuid": f"u{i:09d}-{k}", "parentUuid": f"u{i:09d}-{k - 1}" if k else None,
                "sessionId": "b3c0ffee-0000-4000-8000-000000000001", "timestamp": _ts(i),
                "type": kind, "cwd": cwd, "version": "0.24.4", "gitBranch": "main"}  # fmt: skip

    def rounds(i: int) -> list[dict[str, object]]:
        call = f"call_{i:012d}"
        output = f"result {i}: {filler}"
        if i % every == 0 and i // every <= spills:
            results.mkdir(parents=True, exist_ok=True)
            (results / f"{call}.txt").write_text(body)
            data = body.encode()
            output = (
                f"<persisted-output>\nOutput too large ({size_kb(len(data))} KB). Full output "
                f"saved to: /home/someone/.qwen/tmp/x/tool-results/{call}.txt\n"
                f"Full output sha256: {hashlib.sha256(data).hexdigest()}\n"
                "Note: this file may be cleaned up after 24 hours.\n"
                "To read the complete output, use the read_file tool with the absolute file "
                f"path above.\n\nPreview (up to 2000 chars):\n{preview_of(body)}\n"
                "</persisted-output>"
            )
        user = {**base(i, 0, "user"),
                "message": {"role": "user", "parts": [{"text": f"step {i}: {filler[:160]}"}]}}
        model = {**base(i, 1, "assistant"), "model": "qwen3-coder-plus",
                 "message": {"role": "model", "parts": [
                     {"text": "running it"},
                     {"functionCall": {"id": call, "name": "run_shell_command",
                                       "args": {"command": "ls -la"}}}]},
                 "usageMetadata": {"promptTokenCount": 1200 + i, "candidatesTokenCount": 40,
                                   "totalTokenCount": 1240 + i},
                 "contextWindowSize": 1_000_000}
        result = {**base(i, 2, "tool_result"),
                  "message": {"role": "user", "parts": [{"functionResponse": {
                      "id": call, "name": "run_shell_command", "response": {"output": output}}}]},
                  "toolCallResult": {"callId": call, "status": "success",
                                     "resultDisplay": output[:80]}}  # fmt: skip
        return [user, model, result]

    return _jsonl(path, size, rounds, compact=True)


def gemini_session(home: Path, size: int, spills: int = 8) -> Path:
    """A Gemini CLI session of about `size` bytes in the project temp folder `home` (as
    `~/.gemini/tmp/<project>` holds one), written as Gemini CLI writes it: each round a
    user message, the model's message written again with its call and then with the
    call's result and tokens, and a metadata patch after each; `spills` results spread
    through it were cut to a head and a tail (`formatTruncatedToolOutput`, as 5411f113
    writes it) with the whole in `tool-outputs/session-<id>/`."""
    session = "b3c0ffee-0000-4000-8000-000000000002"
    path = home / "chats" / f"session-2026-11-30T00-00-{session[:8]}.jsonl"
    outputs = home / "tool-outputs" / f"session-{session}"
    filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 8
    rounds_total = max(size // 3300, 1)  # a round is about 3.3 KB
    every = max(rounds_total // max(spills, 1), 1)
    body = "".join(f"line {i:05d}: {filler[:100]}\n" for i in range(600))[: 64 << 10]

    def rounds(i: int) -> list[dict[str, object]]:
        call = f"run_shell_command-{i}"
        output = f"result {i}: {filler}"
        if i == 1:
            head = [{"sessionId": session, "projectHash": "ab" * 32, "startTime": _ts(i),
                     "lastUpdated": _ts(i), "kind": "main"}]  # fmt: skip
        else:
            head = []
        if i % every == 0 and i // every <= spills:
            outputs.mkdir(parents=True, exist_ok=True)
            (outputs / f"{call}.txt").write_text(body)
            h, t = 800, 3200
            output = (
                f"Output too large. Showing first {h:,} and last {t:,} characters. For full "
                f"output see: /home/someone/.gemini/tmp/proj/tool-outputs/session-{session}/"
                f"{call}.txt\n{body[:h]}\n\n... [{len(body) - h - t:,} characters omitted] "
                f"...\n\n{body[-t:]}"
            )
        user = {"id": f"u{i}", "timestamp": _ts(i), "type": "user",
                "content": [{"text": f"step {i}: {filler[:160]}"}]}  # fmt: skip
        model: dict[str, object] = {"id": f"g{i}", "timestamp": _ts(i), "type": "gemini",
                                    "content": "running it", "thoughts": [], "tokens": None,
                                    "model": "gemini-2.5-pro"}  # fmt: skip
        patch = {"$set": {"lastUpdated": _ts(i)}}
        first = dict(model)
        tool = {"id": call, "name": "run_shell_command", "args": {"command": "ls -la"},
                "status": "scheduled", "timestamp": _ts(i)}  # fmt: skip
        with_call = {**model, "toolCalls": [tool]}
        done = {**with_call, "toolCalls": [{**tool, "status": "success", "result": [
            {"functionResponse": {"id": call, "name": "run_shell_command",
                                  "response": {"output": output}}}]}],
                "tokens": {"input": 1200 + i, "output": 40, "cached": 0, "total": 1240 + i}}
        return [*head, user, patch, first, patch, with_call, patch, done, patch]  # fmt: skip

    return _jsonl(path, size, rounds, compact=True)


def copilot_session(home: Path, size: int, spills: int = 8) -> Path:
    """A Copilot CLI session of about `size` bytes under `home` (as `~/.copilot` holds one):
    rounds of a prompt, a turn with its usage record (a call), the model's message with a
    tool request, the tool's start and its result, and `spills` results over the threshold
    as Copilot CLI's large-output marker (`tests/_copilot.py`; their files are never read)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from _copilot import too_large

    sid = "4f6b2d1e-7a3c-4e5f-9b8a-00000000bench"
    path = home / "session-state" / sid / "events.jsonl"
    filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 8
    body = "".join(f"line {i:05d}: {filler[:100]}\n" for i in range(600))
    rounds_total = max(size // 2200, 1)
    every = max(rounds_total // max(spills, 1), 1)

    def event(i: int, k: int, kind: str, data: dict[str, object]) -> dict[str, object]:
        return {"type": kind, "data": data, "id": f"{i:012d}-{k}", "timestamp": _ts(i),
                "parentId": f"{i:012d}-{k - 1}" if k else None}  # fmt: skip

    def rounds(i: int) -> list[dict[str, object]]:
        call = f"call_{i:012d}"
        output = f"result {i}: {filler}"
        if i % every == 0 and i // every <= spills:
            output = too_large(body, f"/tmp/{i}-copilot-tool-output-{i:032x}.txt")
        return [
            event(i, 0, "user.message", {"content": f"step {i}: {filler[:160]}",
                                         "transformedContent": f"step {i}: {filler[:160]}"}),
            event(i, 1, "assistant.turn_start", {"turnId": str(i)}),
            event(i, 2, "session.usage_record", {"usage": {
                "model": "gpt-4.1", "inputTokens": 1200 + i, "outputTokens": 40,
                "maxPromptTokens": 64_000}}),
            event(i, 3, "assistant.message", {"messageId": f"m{i}", "content": "running it",
                  "toolRequests": [{"toolCallId": call, "name": "bash",
                                    "arguments": {"command": "ls -la"}}]}),
            event(i, 4, "tool.execution_start", {"toolCallId": call, "toolName": "bash",
                                                 "arguments": {"command": "ls -la"}}),
            event(i, 5, "tool.execution_complete", {"toolCallId": call, "success": True,
                                                    "result": {"content": output}}),
            event(i, 6, "assistant.turn_end", {"turnId": str(i)}),
        ]  # fmt: skip

    return _jsonl(path, size, rounds, compact=True)


def opencode_session(data: Path, size: int, spills: int = 8) -> Path:
    """An OpenCode session of about `size` bytes of rows in a real SQLite database at
    `data/opencode.db` (OpenCode's schema, `tests/_opencode.py`): rounds of a user message
    and an assistant step (its text, a tool part, its `step-finish` tokens), and `spills`
    tool outputs cut as `Truncate.output` cuts them, each file in `data/tool-output/`.
    Returns the session's path (`<database>/<id>`)."""
    import json
    import sqlite3

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from _opencode import SCHEMA, truncate

    data.mkdir(parents=True, exist_ok=True)
    db = data / "opencode.db"
    if db.exists():
        db.unlink()
    sid = "ses_5b1d3c7e9ffeBench0000000001"
    filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 8
    body = "\n".join(f"line {i:05d}: {filler[:100]}" for i in range(2600))  # > 2,000 lines
    rounds_total = max(size // 2600, 1)  # a round is about 2.6 KB of rows
    every = max(rounds_total // max(spills, 1), 1)
    (data / "tool-output").mkdir(exist_ok=True)
    messages: list[tuple[object, ...]] = []
    parts: list[tuple[object, ...]] = []
    start = 1_795_000_000_000
    for i in range(rounds_total):
        t = start + i * 1000
        user, model = f"msg_{2 * i:012x}u", f"msg_{2 * i + 1:012x}a"
        messages.append((user, sid, t, t, json.dumps(
            {"role": "user", "time": {"created": t}, "agent": "build",
             "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}})))
        messages.append((model, sid, t + 1, t + 1, json.dumps(
            {"role": "assistant", "time": {"created": t + 1}, "modelID": "claude-sonnet-4-5",
             "providerID": "anthropic", "mode": "build", "agent": "build", "cost": 0,
             "path": {"cwd": "/home/someone/proj", "root": "/home/someone/proj"},
             "tokens": {"input": 1200 + i, "output": 40, "reasoning": 0,
                        "cache": {"read": 0, "write": 0}}})))  # fmt: skip
        output = f"result {i}: {filler}"
        if i % every == 0 and i // every < spills:
            name = f"tool_{t:012x}Bench{i:09d}"
            (data / "tool-output" / name).write_text(body)
            cut = truncate(body, f"/home/someone/.local/share/opencode/tool-output/{name}")
            assert cut is not None
            output = cut
        def part(k: str, obj: object, i: int = i, user: str = user, model: str = model,
                 t: int = t) -> tuple[object, ...]:  # fmt: skip
            owner = user if k == "a" else model
            return (f"prt_{2 * i:012x}{k}", owner, sid, t, t, json.dumps(obj))

        parts.append(part("a", {"type": "text", "text": f"step {i}: {filler[:160]}"}))
        parts.append(part("b", {"type": "step-start"}))
        parts.append(part("c", {"type": "text", "text": "running it"}))
        parts.append(part("d", {"type": "tool", "callID": f"toolu_{i:012d}", "tool": "bash",
                                "state": {"status": "completed",
                                          "input": {"command": "ls -la"}, "output": output,
                                          "title": "ls", "metadata": {"truncated": False},
                                          "time": {"start": t, "end": t + 40}}}))  # fmt: skip
        parts.append(part("e", {"type": "step-finish", "reason": "tool-calls", "cost": 0,
                                "tokens": {"input": 1200 + i, "output": 40, "reasoning": 0,
                                           "cache": {"read": 0, "write": 0}}}))  # fmt: skip
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) "
                 "VALUES ('proj', '/home/someone/proj', 0, 0, '[]')")  # fmt: skip
    conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, "
                 "time_created, time_updated) VALUES (?, 'proj', 'bench', "
                 "'/home/someone/proj', 'bench', '1.18.33', ?, ?)",
                 (sid, start, start))  # fmt: skip
    conn.executemany("INSERT INTO message VALUES (?, ?, ?, ?, ?)", messages)
    conn.executemany("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", parts)
    conn.commit()
    conn.close()
    return db / sid


# -- many small lines ----------------------------------------------------------------------
#
# The generators above write ~400-1,000-byte lines. A real agent session is mostly
# smaller ones: short assistant turns, tool dispatches, small tool results, with a
# big result now and then. These write that, for each format, so that what a line
# costs beside its bytes (the per-line work of a pass) is measured too: most lines
# are under 300 bytes (`line_sizes` says how many), about 3% of the tool results are
# 1-6 KiB. Seeded by the size: the same size writes the same bytes.

_WORDS = (
    "the build passed; tests next",
    "reading the module first",
    "found it: an off-by-one in the loop",
    "ok",
    "running the linter",
    "that import is unused",
    "let me check the callers",
    "done",
    "the fixture needs a temp dir",
    "retrying with the flag",
)
_TOOLS = (
    ("sh_run", '{"cmd":"make test"}'),
    ("fs_read", '{"path":"src/app/main.py"}'),
    ("fs_read", '{"path":"README.md","lines":[1,40]}'),
    ("grep", '{"pattern":"TODO","path":"src"}'),
    ("fs_write", '{"path":"src/app/util.py","bytes":912}'),
    ("sh_run", '{"cmd":"git status --short"}'),
)
_COMMANDS = ("make test", "git status --short", "ls src", "pytest -q tests/unit", "cat setup.cfg")
#: Claude Code's tools and their inputs, short as most calls are.
_CLAUDE_CALLS = (
    ("Bash", {"command": "make test"}),
    ("Bash", {"command": "git diff --stat"}),
    ("Read", {"file_path": "src/app.py"}),
    ("Grep", {"pattern": "TODO"}),
    ("Glob", {"pattern": "**/*.py"}),
    ("Edit", {"file_path": "src/app.py", "old_string": "x", "new_string": "y"}),
)
_RESULTS = (
    "ok",
    "exit 0",
    "3 passed in 0.41s",
    "src/app/main.py:12: TODO tidy this",
    " M src/app/util.py\n?? notes.txt",
    "wrote 912 bytes",
    "def main() -> int:\n    return run(sys.argv[1:])",
    "error: no such file: src/app/old.py",
    "",
)
#: One tool result in this many is a big one (1-6 KiB).
_BIG_EVERY = 32


def _small_result(rng: random.Random) -> str:
    """A tool's output: mostly a few words or lines, now and then a few KiB of log."""
    if rng.randrange(_BIG_EVERY) == 0:
        return ascii_text(rng.randrange(1024, 6144))
    return rng.choice(_RESULTS)


def small_transcript(path: Path, size: int) -> Path:
    """A reference transcript of about `size` bytes of mostly small lines (~250 bytes).

    Rounds of an assistant turn with one tool call (now and then a short text turn
    first, or a user prompt), its dispatch, its result and its settle, ids lined up
    as `transcript` lines them up (each call's id in the assistant's `tool-calls`,
    the dispatch and the tool message; each settle's `op-id` its dispatch's id, its
    digest the result's). No artifacts.
    """
    if path.exists() and path.stat().st_size >= size:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(size)
    tmp = path.with_suffix(".partial")
    written = i = 0
    with open(tmp, "wb") as fh:
        head = _line(
            "session-meta", {"app": "benchmarks/gen.py", "note": FIRST_TOKEN}, _uuid(rng), 0
        )
        fh.write(head)
        written += len(head)
        while written < size:
            i += 1
            chunk = []
            r = rng.random()
            if r < 0.1:
                prompt = {"content": f"step {i}: {rng.choice(_WORDS)}", "role": "user"}
                chunk.append(_line("message", prompt, _uuid(rng), i))
            if r < 0.4:
                said = {"content": rng.choice(_WORDS), "role": "assistant"}
                chunk.append(_line("message", said, _uuid(rng), i))
            call = f"call_{i}"
            tool, args = rng.choice(_TOOLS)
            op = _uuid(rng)
            content = _small_result(rng)
            chunk += [
                _line(
                    "message",
                    {
                        "content": "",
                        "role": "assistant",
                        "tool-calls": [
                            {
                                "function": {"arguments": args, "name": tool},
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
                        "arguments": args,
                        "arguments-digest": data_digest(args),
                        "call-id": call,
                        "tool": tool,
                    },
                    op,
                    i,
                ),
                _line(
                    "message",
                    {"content": content, "role": "tool", "tool-call-id": call},
                    _uuid(rng),
                    i,
                ),
                _line(
                    "tool-settled",
                    {
                        "duration": 0.01,
                        "op-id": op,
                        "outcome": "completed",
                        "result-digest": data_digest(content),
                    },
                    _uuid(rng),
                    i,
                ),
            ]
            data = b"".join(chunk)
            fh.write(data)
            written += len(data)
        fh.write(last_line(rng, i + 1))
    os.replace(tmp, path)
    return path


def small_claude_session(path: Path, size: int) -> Path:
    """A Claude Code session of about `size` bytes of mostly small lines (~290 bytes).

    As Claude Code writes an API response, one content block a line: a short
    text block (in most rounds) and the `tool_use` after it share their
    `message.id`; then the user line with the `tool_result` (an eighth of them
    with a short `toolUseResult`). Compact JSON, as `JSON.stringify` writes it.
    Of the envelope only `type`, `uuid`, `parentUuid` and `timestamp` are kept:
    the keys a real line carries whatever it says (`sessionId`, `isSidechain`,
    `cwd`, `version`, `userType`, `gitBranch`: ~170 bytes) would put every line
    over 300 bytes. Still, a `tool_use` line is ~305 bytes: about 56% of the
    lines are under 300. No sidecars.
    """
    rng = random.Random(size)
    state: dict[str, object] = {"parent": None}

    def base(kind: str, i: int) -> dict[str, object]:
        uuid = _uuid(rng)
        obj: dict[str, object] = {
            "parentUuid": state["parent"],
            "type": kind,
            "uuid": uuid,
            "timestamp": _ts(i)[:23] + "Z",
        }
        state["parent"] = uuid
        return obj

    def assistant(i: int, block: dict[str, object]) -> dict[str, object]:
        line = base("assistant", i)
        line["message"] = {"id": f"msg_{i:08d}", "role": "assistant", "content": [block]}
        return line

    def rounds(i: int) -> list[dict[str, object]]:
        out = []
        r = rng.random()
        if r < 0.1:
            user = base("user", i)
            user["message"] = {"role": "user", "content": f"step {i}: {rng.choice(_WORDS)}"}
            out.append(user)
        if r < 0.75:
            out.append(assistant(i, {"type": "text", "text": rng.choice(_WORDS)}))
        tool = f"toolu_{i:08d}"
        name, tool_input = rng.choice(_CLAUDE_CALLS)
        out.append(
            assistant(i, {"type": "tool_use", "id": tool, "name": name, "input": tool_input})
        )
        result = base("user", i)
        text = _small_result(rng)
        result["message"] = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool, "content": text}],
        }
        if rng.random() < 0.125:
            result["toolUseResult"] = {"stdout": text[:40], "stderr": "", "interrupted": False}
        out.append(result)
        return out

    return _jsonl(path, size, rounds, compact=True)


def small_codex_rollout(path: Path, size: int) -> Path:
    """A Codex rollout of about `size` bytes of mostly small lines (~200 bytes).

    After the session meta: a user message now and then, then rounds of a short
    assistant message (some), a `function_call`, its `function_call_output` (a
    plain string, or in a fifth of them the older JSON string with `output` and
    `metadata`) and a `token_count` event. Compact JSON, as Codex's serde writes it.
    """
    import json

    rng = random.Random(size)

    def line(kind: str, payload: dict[str, object], i: int) -> dict[str, object]:
        return {"timestamp": _ts(i)[:23] + "Z", "type": kind, "payload": payload}

    def rounds(i: int) -> list[dict[str, object]]:
        out = []
        if i == 1:
            meta = {"id": "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000", "cwd": "/home/someone/proj"}
            out.append(line("session_meta", meta, i))
        r = rng.random()
        if r < 0.1:
            text = [{"type": "input_text", "text": f"step {i}: {rng.choice(_WORDS)}"}]
            item = {"type": "message", "role": "user", "content": text}
            out.append(line("response_item", item, i))
        if r < 0.4:
            said = [{"type": "output_text", "text": rng.choice(_WORDS)}]
            item = {"type": "message", "role": "assistant", "content": said}
            out.append(line("response_item", item, i))
        call = f"call_{i:08d}"
        command = json.dumps({"command": ["bash", "-lc", rng.choice(_COMMANDS)]})
        item = {"type": "function_call", "name": "shell", "arguments": command, "call_id": call}
        out.append(line("response_item", item, i))
        output = _small_result(rng)
        if rng.random() < 0.2:
            output = json.dumps({"output": output, "metadata": {"exit_code": 0}})
        item = {"type": "function_call_output", "call_id": call, "output": output}
        out.append(line("response_item", item, i))
        out.append(line("event_msg", {"type": "token_count", "info": {"total": 1200 + i}}, i))
        return out

    return _jsonl(path, size, rounds, compact=True)


def zst(path: Path, plain: Path) -> Path:
    """`plain` compressed to `path` as Codex compresses a rollout a week idle.

    zstd level 3, one frame written as a stream (so its header records no
    size), as `codex-rs/rollout/src/compression.rs` writes it; by the standard
    library's `compression.zstd` where the Python has it, else `zstandard`.
    Kept once written, like every input here.
    """
    if path.exists():
        return path
    tmp = path.with_name(path.name + ".partial")
    with open(plain, "rb") as src, open(tmp, "wb") as out:
        try:
            from compression import zstd  # type: ignore[import-not-found, unused-ignore]

            packer = zstd.ZstdCompressor(level=3)
            while chunk := src.read(8 << 20):
                out.write(packer.compress(chunk))
            out.write(packer.flush())
        except ImportError:
            import zstandard

            with zstandard.ZstdCompressor(level=3).stream_writer(out, closefd=False) as writer:
                while chunk := src.read(8 << 20):
                    writer.write(chunk)
    os.replace(tmp, path)
    return path


def line_sizes(path: Path) -> tuple[int, float]:
    """A file's median line length in bytes, and the share of its lines under 300 bytes."""
    from collections import Counter

    with open(path, "rb") as fh:
        counts = Counter(len(line) for line in fh)
    lines = sum(counts.values())
    seen = 0
    for length in sorted(counts):
        seen += counts[length]
        if 2 * seen >= lines:
            break
    return length, sum(n for size, n in counts.items() if size < 300) / lines


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


# -- the command line -------------------------------------------------------------------

#: The excerpt `transcript` writes keeps 16,384 characters: a stored result must be longer.
MIN_ARTIFACT_KIB = 20
MIN_ARTIFACT_SIZE = MIN_ARTIFACT_KIB * 1024

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMG]?)(?:I?B)?\s*", re.IGNORECASE)


def parse_size(text: str) -> int:
    """`300M` -> 314,572,800: bytes, with an optional K, M or G (powers of 1024).

    `KB`, `KiB`, `MB`, ... mean the same as `K`, `M`: a generated file's size is
    approximate anyway (it stops at the first whole round past it).
    """
    match = _SIZE.fullmatch(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 300M, 64K, 2G)")
    number, unit = match.groups()
    return int(float(number) * _UNITS[unit.upper()])


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gen.py",
        description=(
            "Write a transcript of about SIZE bytes with MARKERS excerpt markers, each "
            "with its full result stored in OUT's artifact directory (OUT.artifacts/)."
        ),
        epilog="example: python3 benchmarks/gen.py big.jsonl --size 300M --markers 3000",
    )
    p.add_argument("out", metavar="OUT.jsonl", type=Path, help="the transcript to write")
    p.add_argument(
        "--size", type=parse_size, default=1 << 20, help="about how big (default 1M; K, M, G)"
    )
    p.add_argument(
        "--markers", type=int, default=0, help="oversized results, stored and excerpted (default 0)"
    )
    p.add_argument(
        "--artifact-size",
        type=parse_size,
        default=64 << 10,
        help=f"about how big each stored result is (default 64K, at least {MIN_ARTIFACT_KIB}K)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Write OUT.jsonl and OUT.artifacts/; refuse to touch either if it exists."""
    parser = _parser()
    args = parser.parse_args(argv)
    out: Path = args.out
    if args.markers < 0:
        parser.error("--markers cannot be negative")
    if args.markers and args.artifact_size < MIN_ARTIFACT_SIZE:
        parser.error(f"--artifact-size must be at least {MIN_ARTIFACT_KIB}K")
    artifacts = artifact_dir_for(out)
    for existing in (out, artifacts):
        if os.path.lexists(existing):
            print(f"gen.py: {existing} exists; it is never overwritten", file=sys.stderr)
            return 2
    transcript(
        out, args.size, artifacts=args.markers, artifact_size=args.artifact_size, spread=True
    )
    from transcript_view.core.text import human_size, plural

    stored = sum(f.stat().st_size for f in artifacts.iterdir()) if artifacts.is_dir() else 0
    print(
        f"{out}: {human_size(out.stat().st_size)}, {plural(args.markers, 'marker')}"
        + (f"; {artifacts.name}/: {human_size(stored)}" if args.markers else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Write the bundled example transcripts with our own `Session` and `settle`.

`demo.jsonl` is what a healthy run looks like: an oversized result excerpted and
stored, a small result that fits, and one whose artifact write failed (its
marker says `could not be stored`). `broken.jsonl` is the same kind of run after
things went wrong on disk: one artifact deleted, one edited after the fact, and
an orphan left by a crash between the artifact write and the settle line.

The outputs are committed so the quick start works offline; rerun this only to
change them (ids and timestamps are fresh each time):

    .venv/bin/python examples/make_examples.py
"""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from transcript_view.core.artifacts import Store  # noqa: E402
from transcript_view.core.session import Session  # noqa: E402


class _FailingStore(Store):
    """A store whose disk is full: what makes a `could not be stored` marker."""

    def store(self, op_id: str, content: str, *, chars: int | None = None) -> object:  # type: ignore[override]
        raise OSError(28, "No space left on device")


def build_log(rng: random.Random) -> str:
    crates = ["serde", "tokio", "regex", "clap", "anyhow", "rayon", "hyper", "tracing"]
    lines = []
    for i in range(1, 1400):
        crate = rng.choice(crates)
        lines.append(
            f"   Compiling {crate} v1.{i % 40}.{i % 7} (registry+https://crates.example/{crate})"
        )
        if i % 97 == 0:
            lines.append(f"warning: unused variable: `tmp_{i}` --> src/lib.rs:{i}:9")
    lines += [
        "error[E0308]: mismatched types",
        "  --> src/transcript.rs:212:24",
        "    |",
        "212 |     let offset: u32 = file.len();",
        "    |                 ---   ^^^^^^^^^^ expected `u32`, found `u64`",
        "",
        "error: could not compile `transcript` (lib) due to 1 previous error",
    ]
    return "\n".join(lines) + "\n"


def web_page(rng: random.Random) -> str:
    words = [
        "agent",
        "loop",
        "excerpt",
        "artifact",
        "marker",
        "digest",
        "grapheme",
        "transcript",
        "日本語",
        "한국어",
        "café",
    ]
    paras = []
    for i in range(500):
        paras.append(f"¶{i}: " + " ".join(rng.choice(words) for _ in range(18)))
    return "\n".join(paras) + "\n"


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def write_run(path: Path, *, scenario: str) -> dict[str, str]:
    """One run; returns op ids by role so a caller can break things afterwards."""
    rng = random.Random(20261130)
    for p in (path, path.with_suffix(".artifacts")):
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    ops: dict[str, str] = {}
    with Session.create(path, {"app": "examples/make_examples.py", "scenario": scenario}) as s:
        s.append_message(
            "system",
            "You are a build doctor. Read logs; say what broke.",
            sticky=True,
            sysprompt=True,
        )
        s.append_message("user", "Why does `cargo build` fail? Check Cargo.toml and the docs too.")
        calls = [
            tool_call("call_build", "sh_run", '{"cmd":"cargo build 2>&1"}'),
            tool_call("call_toml", "fs_read", '{"path":"Cargo.toml"}'),
            tool_call("call_docs", "http_get", '{"url":"https://docs.example/offsets"}'),
        ]
        s.append_message(
            "assistant",
            "Let me build, read the manifest and fetch the docs.",
            tool_calls=calls,
            extra={"finish-reason": "tool_calls"},
        )
        op = s.append_tool_dispatched("call_build", "sh_run", '{"cmd":"cargo build 2>&1"}', round=1)
        s.settle(op, "call_build", build_log(rng), is_error=True, duration=41.207113)
        ops["build"] = op
        op = s.append_tool_dispatched("call_toml", "fs_read", '{"path":"Cargo.toml"}', round=1)
        s.settle(
            op,
            "call_toml",
            '[package]\nname = "transcript"\nversion = "0.3.0"\nedition = "2021"\n',
            duration=0.003121,
        )
        ops["toml"] = op
        op = s.append_tool_dispatched(
            "call_docs", "http_get", '{"url":"https://docs.example/offsets"}', round=1
        )
        s.store = _FailingStore(s.store.dir if s.store else path.with_suffix(".artifacts"))
        s.settle(op, "call_docs", web_page(rng), duration=1.5)
        s.store = Store(path.with_suffix(".artifacts"))
        ops["docs"] = op
        if scenario == "broken":
            s.append_message(
                "assistant",
                "One more look at the full log.",
                tool_calls=[tool_call("call_again", "sh_run", '{"cmd":"cargo build -v 2>&1"}')],
            )
            op = s.append_tool_dispatched(
                "call_again", "sh_run", '{"cmd":"cargo build -v 2>&1"}', round=2
            )
            s.settle(op, "call_again", build_log(random.Random(7)), is_error=True, duration=39.9)
            ops["again"] = op
        s.append_message(
            "assistant",
            "The build fails in src/transcript.rs:212: `file.len()` is a u64 and the "
            "offset is declared u32. Declare `offset: u64` (files over 4 GiB exist).",
            extra={"finish-reason": "stop"},
        )
    return ops


def main() -> None:
    write_run(HERE / "demo.jsonl", scenario="demo")
    ops = write_run(HERE / "broken.jsonl", scenario="broken")
    art = HERE / "broken.artifacts"
    # A missing artifact: somebody cleaned up by hand.
    (art / f"{ops['build']}.txt").unlink()
    # A digest mismatch: the file was edited after the fact (same size, other bytes).
    again = art / f"{ops['again']}.txt"
    data = bytearray(again.read_bytes())
    data[len(data) // 2] ^= 0x01
    again.write_bytes(bytes(data))
    # An orphan: a crash between the artifact write and the settle line.
    Store(art).store("00000000-dead-4bad-8000-000000000000", "a result nobody settled\n" * 2000)


if __name__ == "__main__":
    main()

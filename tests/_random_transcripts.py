"""Random and mutated reference transcripts, for tests that compare two ways of reading one.

Built to hit what a pass can get wrong when it reads a file in pieces: call ids
reused while an earlier call with the same id still waits, operations that
straddle any cut, ids used twice, settles of operations nobody dispatched,
markers (quoted, stored, several on their own lines), compactions and elisions
naming ids that are and are not there, and lines that are not envelopes at all.
"""

from __future__ import annotations

import random

from transcript_view.core.artifacts import Stored, stored_marker
from transcript_view.core.canonical import canonical_json, data_digest

_BAD_LINES = (
    b"not json",
    b"[1, 2]",
    b'{"type": "message", "v": 2}',
    b'{"v": 1}',
    b'{"type": 3, "v": 1}',
    b'{"id":"x","type":"message","v":1,"payload":{"content":"\xff\xfe"}}',
    b'{"id":"\\ud800","type":"message","v":1,"payload":{"role":"user","content":"\\udc00x"}}',
    b'{"id":"n","type":"message","v":1,"payload":{"content":NaN}}',
    b'{"id":"big","type":"message","v":1,"payload":{"content":"a","n":123456789012345678901234567890}}',
    b'{"id":"inf","type":"message","v":1.0,"payload":{}}',
    b'{"id":"e","type":"message","v":1,"payload":{"x":1e400}}',
    b'{"type":"message","v":true}',
    b"   ",
    b"",
    b'{"id":"q","type":"message","v":1,"payload":"a string"}',
)


def _marker(rng: random.Random) -> str:
    digest = "".join(rng.choice("0123456789abcdef") for _ in range(64))
    art = Stored(
        file=rng.choice(["a.txt", "b.txt", "../x", f"{rng.randrange(9)}.txt"]),
        bytes=rng.randrange(10, 10**6),
        chars=rng.randrange(10, 10**6),
        digest=digest,
    )
    return stored_marker(rng.randrange(0, 1000), art)


def random_transcript(seed: int, size: int = 60) -> bytes:
    """The bytes of a random transcript of about `size` lines (deterministic in `seed`)."""
    rng = random.Random(seed)
    # Half the files repeat no id: a pass that reads in pieces must get those
    # right without falling back to its exact (one line at a time) fold.
    repeats = seed % 2 == 1
    calls = [f"c{i}" for i in range(rng.randint(1, 4))]
    ops = [f"op{i}" for i in range(rng.randint(2, 8))] if repeats else []
    ids: list[str] = []
    out: list[bytes] = []
    n = 0

    def new_id() -> str:
        nonlocal n
        n += 1
        if repeats and ids and rng.random() < 0.04:
            return rng.choice(ids)  # a repeated id
        ident = f"id{n}" if rng.random() < 0.95 or not repeats else ""
        ids.append(ident)
        return ident

    def env(kind: str, payload: object, ident: str | None = None) -> None:
        obj: dict[str, object] = {"payload": payload, "ts": "t", "type": kind, "v": 1}
        ident = new_id() if ident is None else ident
        if rng.random() < 0.97:
            obj["id"] = ident
        out.append(canonical_json(obj).encode())

    if rng.random() < 0.9:
        env("session-meta", {"app": "random"})
    for _ in range(size):
        r = rng.random()
        if r < 0.12:
            role = rng.choice(["user", "user", "system", "other", None])
            payload: dict[str, object] = {"content": rng.choice(["hi", "", None, {"a": 1}])}
            if role is not None:
                payload["role"] = role
            if rng.random() < 0.2:
                payload[rng.choice(["sticky", "sysprompt", "depth"])] = rng.choice([True, 0, 1])
            if rng.random() < 0.1:
                payload["content"] = "quoted " + _marker(rng)
            env("message", payload)
        elif r < 0.3:
            k = rng.randint(0, 3)
            tc: list[object] = [
                {"id": rng.choice(calls), "type": "function", "function": {"name": "f"}}
                for _ in range(k)
            ]
            if rng.random() < 0.1:
                tc.append("not a call")
            env("message", {"role": "assistant", "content": "calling", "tool-calls": tc})
        elif r < 0.48:
            if repeats and rng.random() < 0.5:
                op = rng.choice(ops)
            else:
                op = new_id()
                if not repeats:
                    ops.append(op)
            args = rng.choice(['{"n":1}', {"n": 1}, None, "\u0008\U0001f600"])
            payload = {"call-id": rng.choice(calls), "tool": "f", "arguments": args}
            if args is not None and rng.random() < 0.8:
                payload["arguments-digest"] = data_digest(args) if rng.random() < 0.8 else "0" * 64
            env("tool-dispatched", payload, op)
        elif r < 0.66:
            content = rng.choice(["ok", "fail\n", "é\U0001f600\f\b"])
            if rng.random() < 0.35:
                content = "head\n" + _marker(rng) + "\ntail"
                if rng.random() < 0.3:
                    content += "\n" + _marker(rng) + "\nmore"
            payload = {"role": "tool", "content": content}
            if rng.random() < 0.9:
                payload["tool-call-id"] = rng.choice(calls)
            if rng.random() < 0.1:
                payload["is-error"] = True
            env("message", payload)
        elif r < 0.82:
            named = rng.choice([*ops[-4:], *ops[-4:], *ids[-3:], "nope"])
            payload = {"op-id": named, "outcome": "completed"}
            if rng.random() < 0.6:
                payload["result-digest"] = data_digest(rng.choice(["ok", "fail\n"]))
            if rng.random() < 0.2:
                payload["artifact"] = {"file": "a.txt", "bytes": 5, "digest": "0" * 64}
            env("tool-settled", payload)
        elif r < 0.86:
            through = rng.choice([*ids[-6:], "missing", None])
            env("compaction", {"summary": "s", "replaces-through-id": through})
        elif r < 0.89:
            items = [{"id": rng.choice([*ids[-6:], "missing"]), "stub": "[stub]"}, "x"]
            env("elision", {"items": items})
        elif r < 0.92:
            env(rng.choice(["grants", "run-context", "subagent-x", "weird"]), {"k": 1})
        else:
            n += 1
            out.append(rng.choice(_BAD_LINES).replace(b'"id":"', b'"id":"%d-' % n))
    sep = b"\r\n" if rng.random() < 0.1 else b"\n"
    data = sep.join(out) + (sep if rng.random() < 0.8 else b"")
    if rng.random() < 0.15 and len(data) > 10:
        data = data[: -rng.randint(1, 10)]  # a torn tail
    return data


def mutate(data: bytes, seed: int) -> bytes:
    """`data` with a few random byte edits (flips, deletions, duplicated lines)."""
    rng = random.Random(seed)
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not buf:
            break
        i = rng.randrange(len(buf))
        op = rng.random()
        if op < 0.4:
            buf[i] = rng.randrange(256)
        elif op < 0.7:
            del buf[i]
        else:
            lines = bytes(buf).split(b"\n")
            j = rng.randrange(len(lines))
            lines.insert(rng.randrange(len(lines) + 1), lines[j])
            buf = bytearray(b"\n".join(lines))
    return bytes(buf)

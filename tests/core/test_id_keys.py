"""The run's id keys (`core.keys.IdKeys`): a keyed fingerprint that any process can make.

That keys agree across start methods is `test_start_methods.py`'s; here, what a
key is: non-zero, below 2**62 (a signed 64-bit slot, 0 an empty one), the same
for the same string and modulus, different for the strings a plain integer
reading would confuse, and a modulus that is a prime drawn per run.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from array import array
from pathlib import Path

import pytest
from _analysis_dump import dump, dump_session
from _random_transcripts import random_transcript
from _sessions import random_claude_session, random_codex_rollout
from hypothesis import given
from hypothesis import strategies as st

import transcript_view.core.transcript as transcript_module
from transcript_view.core import keys as keys_module
from transcript_view.core import parallel
from transcript_view.core.analysis import AnalysisPass, analyse
from transcript_view.core.formats.claude_code import analyse_claude
from transcript_view.core.formats.codex import analyse_codex
from transcript_view.core.keys import KEY_CODE, IdKeys, is_prime, random_prime
from transcript_view.core.transcript import Transcript


def _sieve(n: int) -> list[bool]:
    flags = [True] * n
    flags[0] = flags[1] = False
    for i in range(2, int(n**0.5) + 1):
        if flags[i]:
            flags[i * i :: i] = [False] * len(flags[i * i :: i])
    return flags


def test_is_prime_is_a_sieve_below_ten_thousand() -> None:
    assert [is_prime(n) for n in range(10_000)] == _sieve(10_000)


def test_is_prime_on_large_known_numbers() -> None:
    assert is_prime(2**61 - 1)  # a Mersenne prime
    assert not is_prime(2**61 + 1)
    assert not is_prime(3215031751)  # a strong pseudoprime to bases 2, 3, 5 and 7
    assert not is_prime((2**31 - 1) * (2**31 + 11))


def test_each_run_draws_its_own_prime_in_range() -> None:
    primes = {random_prime() for _ in range(8)}
    assert len(primes) > 1
    assert all(2**61 <= p < 2**62 and is_prime(p) for p in primes)


@given(text=st.text(max_size=60))
def test_a_key_is_nonzero_and_fits_a_signed_64_bit_slot(text: str) -> None:
    keys = IdKeys(2**61 - 1)
    key = keys(text)
    assert 1 <= key <= 2**61 - 1 < 2**63
    assert keys(text) == key


def test_strings_an_integer_reading_would_confuse_have_different_keys() -> None:
    """Trailing NULs, lone surrogates, the empty string: each its own key."""
    keys = IdKeys.new()
    texts = ["", "\x00", "\x00\x00", "a", "a\x00", "\ud800", "\udc00", "\ud800\udc00", "𐀀"]
    assert len({keys(t) for t in texts}) == len(texts)


def test_keys_pickle_as_their_modulus_and_secret() -> None:
    keys = IdKeys.new()
    copy = pickle.loads(pickle.dumps(keys))
    assert copy == keys and copy("x") == keys("x")
    assert IdKeys(keys.modulus, keys.secret)("call_7") == keys("call_7")


@pytest.mark.parametrize("method", ["fork", "spawn", None])
def test_keys_are_by_hash_only_where_workers_fork(
    monkeypatch: pytest.MonkeyPatch, method: str | None
) -> None:
    """Python's `hash` agrees only between a process and its forked children."""
    monkeypatch.setattr(parallel, "START_METHOD", method)
    keys = IdKeys.new()
    assert (keys.secret is not None) == (method == "fork" and keys_module._hash_is_random())
    texts = ["", "\x00", "a", "a\x00", "\ud800", "\U0001f600" * 40]
    assert len({keys(t) for t in texts}) == len(texts)
    assert all(1 <= keys(t) < 2**62 for t in texts)


def test_a_fixed_hash_seed_keeps_karp_rabin(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seed in the environment is one a file could be written against."""
    monkeypatch.setattr(parallel, "START_METHOD", "fork")
    monkeypatch.setenv("PYTHONHASHSEED", "123")
    assert IdKeys.new().secret is None


def test_keys_by_hash_are_refused_where_the_hash_differs() -> None:
    """A process started by spawn draws its own hash secret: its keys would differ."""
    prime = random_prime()
    with pytest.raises(ValueError, match="hashes differently"):
        IdKeys(prime, IdKeys(prime, hash(keys_module._PROBE)).secret + 1)
    here = "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"
    blob = pickle.dumps(IdKeys(prime, hash(keys_module._PROBE)))
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    done = subprocess.run(
        [sys.executable, "-c", here], input=blob, capture_output=True, env=env, check=False
    )
    assert done.returncode != 0 and b"hashes differently" in done.stderr


@pytest.mark.parametrize("bad", [0, 2, 4, 2**61 + 1, 2**62 + 135])
def test_a_modulus_that_is_no_prime_below_two_to_the_62_is_refused(bad: int) -> None:
    with pytest.raises(ValueError, match="prime"):
        IdKeys(bad)


# -- a collision costs time, never an answer -------------------------------------------------------


def _tiny(monkeypatch: pytest.MonkeyPatch, modulus: int) -> None:
    """Every pass keys its ids modulo a tiny prime: ids collide all the time."""
    monkeypatch.setattr(IdKeys, "new", classmethod(lambda cls: cls(modulus)))


@pytest.mark.parametrize("modulus", [3, 101])
@pytest.mark.parametrize("seed", range(8))
def test_every_pass_answers_the_same_when_ids_collide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, modulus: int
) -> None:
    """Found in review: the exact pass's id tables took a colliding id for a repeat (a
    false "no earlier line dispatched", a missed duplicate). Every format, every pass."""
    monkeypatch.setattr(transcript_module, "READ_CHUNK", 700)
    reference = tmp_path / "t.jsonl"
    reference.write_bytes(random_transcript(seed, 120))
    session = random_claude_session(tmp_path / "projects" / "p", seed, 80)
    rollout = random_codex_rollout(tmp_path / "r.jsonl", seed, 80)
    cases = [(reference, analyse, dump), (session, analyse_claude, dump_session),
             (rollout, analyse_codex, dump_session)]  # fmt: skip
    want = []
    for path, read, show in cases:
        with Transcript.open(path) as t:
            want.append(show(read(t, workers=1)))
    _tiny(monkeypatch, modulus)
    for (path, read, show), expected in zip(cases, want, strict=True):
        with Transcript.open(path) as t:
            assert show(read(t, workers=1)) == expected


def test_an_exact_pass_confirms_each_id_it_finds_by_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's case: `msg-a` and `msg-131` share a key modulo 101."""
    keys = IdKeys(101)
    assert keys("msg-a") == keys("msg-131")

    def env(id_: str, kind: str, payload: dict[str, object]) -> str:
        return json.dumps({"id": id_, "type": kind, "v": 1, "payload": payload})

    call = {"role": "assistant", "content": "", "tool-calls": [{"id": "c1"}, {"id": "c2"}]}
    path = tmp_path / "t.jsonl"
    path.write_text(
        "\n".join([
            env("m0", "message", call),
            env("msg-a", "tool-dispatched", {"call-id": "c1", "arguments": {}}),
            env("msg-131", "tool-dispatched", {"call-id": "c2", "arguments": {}}),
            env("t1", "message", {"role": "tool", "tool-call-id": "c1", "content": "r"}),
            env("t2", "message", {"role": "tool", "tool-call-id": "c2", "content": "r"}),
            env("s1", "tool-settled", {"op-id": "msg-a", "outcome": "ok"}),
            env("s2", "tool-settled", {"op-id": "msg-131", "outcome": "ok"}),
            env("msg-131", "message", {"role": "user", "content": "a repeated id"}),
            env("u", "compaction", {"replaces-through-id": "msg-131"}),
        ])
        + "\n"
    )  # fmt: skip
    got = []
    for pass_keys in (keys, None):
        with Transcript.open(path) as t:
            p = AnalysisPass(t, keys=pass_keys)
            p.read(None, 1)
            got.append(dump(p.finish(t.line_count)))
    assert got[0] == got[1]
    assert "was already used on line 3" in str(got[0]["findings"])


def test_a_key_column_holds_every_key() -> None:
    """`KEY_CODE` is whichever unsigned 64-bit C integer the platform has: every key fits."""
    column = array(KEY_CODE, [1, 2**62 - 1, IdKeys.new()("x")])
    assert column.itemsize == 8 and column[1] == 2**62 - 1

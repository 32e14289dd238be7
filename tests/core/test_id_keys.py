"""The run's id keys (`core.keys.IdKeys`): a keyed fingerprint that any process can make.

That keys agree across start methods is `test_start_methods.py`'s; here, what a
key is: non-zero, below 2**62 (a signed 64-bit slot, 0 an empty one), the same
for the same string and modulus, different for the strings a plain integer
reading would confuse, and a modulus that is a prime drawn per run.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcript_view.core.keys import IdKeys, is_prime, random_prime


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


def test_keys_pickle_as_their_modulus() -> None:
    keys = IdKeys.new()
    copy = pickle.loads(pickle.dumps(keys))
    assert copy == keys and copy("x") == keys("x")
    assert IdKeys(keys.modulus)("call_7") == keys("call_7")


@pytest.mark.parametrize("bad", [0, 2, 4, 2**61 + 1, 2**62 + 135])
def test_a_modulus_that_is_no_prime_below_two_to_the_62_is_refused(bad: int) -> None:
    with pytest.raises(ValueError, match="prime"):
        IdKeys(bad)

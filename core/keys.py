"""Keys for ids that are compared across processes: one keyed fingerprint per run.

A pass keeps 64-bit keys of the ids it meets (envelope ids, call ids, uuids)
instead of the strings, and the keys a worker process makes are compared with
the ones its parent makes. Python's `hash` of a string is that process's own:
it agrees only between a process and its forked children, so the pipeline had
to fork. These keys are the same in every process that holds the same `IdKeys`,
whatever its start method (fork, forkserver, spawn), and an `IdKeys` pickles
as one integer.

The key of a string is its UTF-8 bytes (lone surrogates passed through), with a
0x01 byte after them, read as one integer and reduced modulo a prime drawn at
random for the run, plus one (0 marks an empty slot in `core.compact.IdTable`).
That is a Karp–Rabin fingerprint: for two different strings of at most `n`
bytes, the difference of their integers has at most `8 (n + 1) / 61` prime
factors of 61 bits, among about 10^16 primes of that size, so a file written to
make two ids collide cannot aim at a modulus it does not know. A collision costs
time, never an answer: every caller confirms a key's match against the string
itself before it reports anything (`core.analysis.analyse` reads a file whose
keys repeat again, with exact ids).

Cheap in pure Python (an encode, one `int.from_bytes` and one remainder; a few
hundred nanoseconds, against several microseconds for a keyed `hashlib.blake2b`),
which matters because a pass makes one or two a line.

Where every process that will compare a run's keys is forked from the one that
made them (the pipeline's workers and the pass server fork where the system has
it: `core.parallel.START_METHOD`), a key is Python's own `hash` of the string
instead, cut to 62 bits: SipHash keyed by the interpreter's secret, which a fork
inherits and a file cannot aim at either (unless `PYTHONHASHSEED` fixes it: then
the keys are Karp–Rabin's again). It is about ten times cheaper than the remainder
(40 ns; the string keeps it once made), and a pass makes one or two a line. Such
keys carry their maker's `hash` of a fixed text, and a process whose own differs
(one started by spawn or forkserver) refuses them instead of making other keys.
"""

from __future__ import annotations

import os
import secrets
import sys
from array import array

from transcript_view.core import parallel

#: Where the run's prime is drawn from: [2**61, 2**62), so every key fits a signed 64-bit slot.
_LOW, _BITS = 1 << 61, 61
#: Miller–Rabin with these bases is exact below 3.3 * 10**24 (far above 2**62).
_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
#: What keys by `hash` carry the hash of: another interpreter's secret hashes it differently.
_PROBE = "transcript-view: whose hash secret is this?"
#: A `hash` cut to an odd number in [1, 2**62): never 0, and below 2**62 as every key is.
_HASH_BITS = (1 << 62) - 2


def is_prime(n: int) -> bool:
    """Whether `n` is prime (exact for every `n` below 3.3 * 10**24)."""
    if n < 2:
        return False
    for p in _BASES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in _BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def random_prime() -> int:
    """A prime in [2**61, 2**62), drawn from the operating system's randomness."""
    while True:
        candidate = _LOW | secrets.randbits(_BITS) | 1
        if is_prime(candidate):
            return candidate


#: The `array` typecode of a column of keys: an unsigned C long where it holds 64 bits,
#: else an unsigned long long. A pass appends a key or two a line, and CPython 3.11
#: stores a signed long long byte by byte (~90 ns) and a signed long through its
#: argument parser (~50 ns), an unsigned long directly (~35 ns). Keys are never negative.
KEY_CODE = "L" if array("L").itemsize == 8 else "Q"


def _hash_is_random() -> bool:
    """Whether this interpreter's `hash` of a string is keyed by a secret drawn at start-up
    (not fixed by `PYTHONHASHSEED`, which a file could be written against)."""
    seed = os.environ.get("PYTHONHASHSEED", "")
    return bool(sys.flags.hash_randomization) and seed in ("", "random")


class IdKeys:
    """The keys of one run: `keys(text)` is a non-zero key below 2**62 (see the module).

    Made once where a pass starts (`IdKeys.new`) and handed to every process
    that maps its lines, and kept by what the pass leaves behind that looks an
    id up again (the replay's `find`), so a key made in one process is found in
    another.
    """

    __slots__ = ("modulus", "secret")

    def __init__(self, modulus: int, secret: int | None = None) -> None:
        """Keys modulo `modulus`, a prime below 2**62 (`new` draws one); or, with
        `secret`, by `hash`, for processes whose `hash` of `_PROBE` is `secret`.

        Raises:
            ValueError: a modulus that is no such prime, or keys by `hash` in a
                process that hashes differently (started otherwise than by fork).
        """
        if not 2 < modulus < 1 << 62 or not is_prime(modulus):
            raise ValueError(f"the modulus must be a prime below 2**62, not {modulus}")
        if secret is not None and secret != hash(_PROBE):
            raise ValueError(
                "these id keys are Python's hash, made for processes forked from their "
                "maker; this process hashes differently"
            )
        self.modulus = modulus
        self.secret = secret

    @classmethod
    def new(cls) -> IdKeys:
        """Keys for a new run, with a modulus of its own: by `hash` where the run's
        workers fork and the hash is randomized (see the module)."""
        forked = parallel.START_METHOD == "fork" and _hash_is_random()
        return cls(random_prime(), hash(_PROBE) if forked else None)

    def __call__(self, text: str) -> int:
        """The key of `text`."""
        if self.secret is not None:
            return (hash(text) & _HASH_BITS) + 1
        data = text.encode("utf-8", "surrogatepass") + b"\x01"
        return int.from_bytes(data, "little") % self.modulus + 1

    def __reduce__(self) -> tuple[type[IdKeys], tuple[int, int | None]]:
        return IdKeys, (self.modulus, self.secret)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, IdKeys)
            and other.modulus == self.modulus
            and other.secret == self.secret
        )

    def __hash__(self) -> int:
        return hash(self.modulus)

    def __repr__(self) -> str:
        return f"IdKeys({self.modulus}, {self.secret})"

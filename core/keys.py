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
"""

from __future__ import annotations

import secrets

#: Where the run's prime is drawn from: [2**61, 2**62), so every key fits a signed 64-bit slot.
_LOW, _BITS = 1 << 61, 61
#: Miller–Rabin with these bases is exact below 3.3 * 10**24 (far above 2**62).
_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)


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


class IdKeys:
    """The keys of one run: `keys(text)` is a non-zero key below 2**62 (see the module).

    Made once where a pass starts (`IdKeys.new`) and handed to every process
    that maps its lines, and kept by what the pass leaves behind that looks an
    id up again (the replay's `find`), so a key made in one process is found in
    another.
    """

    __slots__ = ("modulus",)

    def __init__(self, modulus: int) -> None:
        """Keys modulo `modulus`, a prime below 2**62 (`new` draws one)."""
        if not 2 < modulus < 1 << 62 or not is_prime(modulus):
            raise ValueError(f"the modulus must be a prime below 2**62, not {modulus}")
        self.modulus = modulus

    @classmethod
    def new(cls) -> IdKeys:
        """Keys for a new run, with a modulus of its own."""
        return cls(random_prime())

    def __call__(self, text: str) -> int:
        """The key of `text`."""
        data = text.encode("utf-8", "surrogatepass") + b"\x01"
        return int.from_bytes(data, "little") % self.modulus + 1

    def __reduce__(self) -> tuple[type[IdKeys], tuple[int]]:
        return IdKeys, (self.modulus,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IdKeys) and other.modulus == self.modulus

    def __hash__(self) -> int:
        return hash(self.modulus)

    def __repr__(self) -> str:
        return f"IdKeys({self.modulus})"

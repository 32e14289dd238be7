"""The test data under tests/data is the originals, byte for byte, and no older than them.

A user's clone has no `../shared`, so the project carries copies of the
reference fixtures and the Unicode conformance file. Two things can go wrong:
someone edits a copy (the manifest catches it anywhere), or `../shared` is
refreshed and the copies fall behind (caught wherever `../shared` exists, as
in CI). Either way every other test would quietly test against the wrong data.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from _support import DATA, SHARED

#: copy under tests/data -> original under ../shared
ORIGINALS = {"reference": SHARED / "fixtures" / "reference", "unicode": SHARED / "data" / "unicode"}


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}


def _manifest() -> dict[str, str]:
    out: dict[str, str] = {}
    for row in (DATA / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, name = row.split("  ", 1)
        out[name] = digest
    return out


def test_every_copied_file_matches_the_manifest() -> None:
    manifest = _manifest()
    copied = {
        f"{top}/{name}": path for top in ORIGINALS for name, path in _files(DATA / top).items()
    }
    assert sorted(copied) == sorted(manifest), "files added or removed without the manifest"
    changed = [
        name
        for name, path in copied.items()
        if hashlib.sha256(path.read_bytes()).hexdigest() != manifest[name]
    ]
    assert changed == [], f"copies edited (they must stay the originals): {changed}"
    assert len(manifest) >= 38


#: Only where ../shared exists (our machines, CI) is there anything to compare
#: with; in a user's clone these tests are not collected (rather than skipped),
#: and the manifest test above holds the copy.
PRESENT = sorted(t for t, original in ORIGINALS.items() if original.is_dir())


def _compare(top: str) -> None:
    original = ORIGINALS[top]
    ours, theirs = _files(DATA / top), _files(original)
    missing = sorted(set(theirs) - set(ours))
    extra = sorted(set(ours) - set(theirs))
    differ = sorted(n for n in set(ours) & set(theirs)
                    if ours[n].read_bytes() != theirs[n].read_bytes())  # fmt: skip
    assert (missing, extra, differ) == ([], [], []), (
        f"../shared has a different {top} set: copy it again (see tests/data/README.md); "
        f"new there: {missing}, gone there: {extra}, changed: {differ}"
    )


if PRESENT:

    @pytest.mark.parametrize("top", PRESENT)
    def test_copy_is_the_same_as_shared(top: str) -> None:
        _compare(top)

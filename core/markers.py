"""Recognising marker lines in text, by shape, without trusting them.

A marker is the line an excerpt puts between its head and its tail. Anything can
contain marker-shaped text (a tool that printed a transcript, a user pasting
one), so a marker is *recognised* here and *believed* only by `core.verification`,
which checks its file, size and digest. The file field is never trusted: a name
that is not a plain basename is flagged unsafe and must never be opened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from transcript_view.core.artifacts import COULD_NOT_BE_STORED, NOWHERE_TO_PUT_IT

_NUM = r"-?[0-9][0-9,]*"
_HEX = r"[0-9A-Fa-f]{64}"
# One regex for every form. `file` is non-greedy so it stops at the first
# " sha256 <64 hex> ...]"; `why` is the general unstored form (`full result <why>,`).
MARKER_RE = re.compile(
    r"\[\.\.\. elided (?P<elided>" + _NUM + r") chars \((?P<bytes>" + _NUM + r") bytes total\); "
    r"full result(?:: (?P<file>[^\n]*?) sha256 (?P<fdigest>" + _HEX + r"|\?)"
    r"|(?P<why> [^\n]*?), sha256 (?P<udigest>" + _HEX + r"))"
    r" \.\.\.\]"
)


class MarkerKind(StrEnum):
    """Which of the reference's marker forms a marker has."""

    STORED = "stored"
    NOT_STORED = "not-stored"  # `was not stored (this run has nowhere to put it)`
    COULD_NOT_BE_STORED = "could-not-be-stored"
    UNSTORED_OTHER = "unstored"  # any other `why`


@dataclass(frozen=True, slots=True)
class Marker:
    """One marker found in a text, with where it is and what it claims."""

    start: int
    end: int
    text: str
    elided: int
    bytes: int
    file: str | None
    digest: str
    why: str | None

    @property
    def kind(self) -> MarkerKind:
        """The marker's form."""
        if self.file is not None:
            return MarkerKind.STORED
        if self.why == NOWHERE_TO_PUT_IT:
            return MarkerKind.NOT_STORED
        if self.why == COULD_NOT_BE_STORED:
            return MarkerKind.COULD_NOT_BE_STORED
        return MarkerKind.UNSTORED_OTHER

    @property
    def safe_name(self) -> bool:
        """True when `file` is a plain basename that may be opened inside the artifact dir."""
        return self.file is not None and is_safe_basename(self.file)

    def on_own_line(self, text: str) -> bool:
        """True when the marker stands alone on its line in `text`, as an excerpt puts it."""
        before_ok = self.start == 0 or text[self.start - 1] == "\n"
        after_ok = self.end == len(text) or text[self.end] == "\n"
        return before_ok and after_ok


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def is_safe_basename(name: str) -> bool:
    """Whether a file name from a marker is a plain basename that is safe to open.

    Refused: empty, `.`/`..`, anything with a path separator (`/` or `\\`), a
    drive or stream colon, NUL or another control character, or more than 255
    UTF-8 bytes (no filesystem holds such a name, and a huge one is an attack on
    whatever displays it).
    """
    if name in ("", ".", ".."):
        return False
    if "/" in name or "\\" in name or ":" in name or _CONTROL.search(name):
        return False
    try:
        return len(name.encode("utf-8")) <= 255
    except UnicodeEncodeError:
        return False


def _number(text: str) -> int:
    try:
        return int(text.replace(",", ""))
    except ValueError:
        return -1


def parse_markers(text: str) -> list[Marker]:
    """Every marker of every form in `text`, in order, with its span and fields.

    Numbers are parsed with their thousands separators removed; the digest is
    returned lower-cased (`?` when a stored marker had none).
    """
    found: list[Marker] = []
    if "[... elided " not in text:
        return found
    for m in MARKER_RE.finditer(text):
        file = m.group("file")
        why = m.group("why")
        digest = m.group("fdigest") if file is not None else m.group("udigest")
        found.append(
            Marker(
                start=m.start(),
                end=m.end(),
                text=m.group(0),
                elided=_number(m.group("elided")),
                bytes=_number(m.group("bytes")),
                file=file,
                digest=(digest or "").lower(),
                why=why[1:] if why is not None else None,
            )
        )
    return found

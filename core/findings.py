"""The vocabulary of what a check can find, and how serious each kind is.

The kind strings are a public contract (`--check --json` prints them, scripts
match on them), so they live in one table and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How a finding affects `--check`'s exit status."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


#: Every finding kind, with its severity. Nothing else is ever reported.
KINDS: dict[str, Severity] = {
    "missing-artifact": Severity.ERROR,
    "digest-mismatch": Severity.ERROR,
    "size-mismatch": Severity.ERROR,
    "excerpt-mismatch": Severity.ERROR,
    "metadata-mismatch": Severity.ERROR,
    "result-digest-mismatch": Severity.ERROR,
    "unsafe-name": Severity.ERROR,
    "unreadable-artifact": Severity.ERROR,
    "malformed-line": Severity.ERROR,
    "unreadable-compressed": Severity.ERROR,
    "torn-tail": Severity.WARNING,
    "orphan-artifact": Severity.WARNING,
    "partial-write": Severity.WARNING,
    "unsettled-operation": Severity.WARNING,
    "path-mismatch": Severity.WARNING,
    "sidecar-not-json": Severity.WARNING,
    "output-capped": Severity.NOTE,
    "inline-duplicate": Severity.NOTE,
    "not-stored": Severity.NOTE,
    "cleared-result": Severity.NOTE,
    "chars-differ": Severity.NOTE,
    "expired-artifact": Severity.NOTE,
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a check found: what, where (1-based line, artifact basename), and why."""

    kind: str
    line: int | None
    file: str | None
    message: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown finding kind {self.kind!r}")

    @property
    def severity(self) -> Severity:
        """The kind's severity."""
        return KINDS[self.kind]

    def as_dict(self) -> dict[str, object]:
        """The `--check --json` shape of a finding."""
        return {
            "kind": self.kind,
            "severity": self.severity.value,
            "line": self.line,
            "file": self.file,
            "message": self.message,
        }

"""The verification ledger: one place that turns an analysis and file checks into verdicts.

`--check` and the viewer must never disagree about a marker's badge or about
what counts as a problem, so neither decides it: both feed this ledger and
read from it. `--check` records every file check at once and asks for the
findings; the viewer records checks one by one as its hashing worker posts
them, repainting the markers `record` says changed, and reads the same
counts for its header. The rules (`site_state`, artifact keys without a
marker, orphans) are applied here and nowhere else.

The ledger is not thread-safe for writing: one owner (the `--check` loop, or
the viewer's UI thread) records; readers on other threads only see whole
values swapped in (a marker's state and findings are replaced, never mutated).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from transcript_view.core.analysis import Analysis
from transcript_view.core.findings import Finding, Severity
from transcript_view.core.markers import MarkerKind, is_safe_basename
from transcript_view.core.records import MarkerSite, SiteKey
from transcript_view.core.verification import FileCheck, FileState, MarkerState, OrphanFile

# -- the rules ---------------------------------------------------------------------------------


def site_state(site: MarkerSite, fc: FileCheck | None) -> tuple[MarkerState, list[Finding]]:
    """A marker's badge and the findings it carries, given its file's check (or None)."""
    m = site.marker
    kind = m.kind
    if kind is MarkerKind.COULD_NOT_BE_STORED:
        return MarkerState.COULD_NOT_BE_STORED, []
    if kind is not MarkerKind.STORED:
        return MarkerState.NOT_STORED, []
    if not m.safe_name:
        return MarkerState.UNSAFE_NAME, []
    name = m.file or ""
    if fc is None:
        return MarkerState.CHECKING, []
    line = site.line
    if fc.state is FileState.MISSING:
        return MarkerState.MISSING, [Finding("missing-artifact", line, name, fc.detail)]
    if fc.state is FileState.UNREADABLE:
        return MarkerState.UNREADABLE, [Finding("unreadable-artifact", line, name, fc.detail)]
    if fc.size != m.bytes:
        return MarkerState.SIZE_MISMATCH, [
            Finding(
                "size-mismatch",
                line,
                name,
                f"the marker says {m.bytes:,} bytes; the file has {fc.size:,}",
            )
        ]
    if fc.digest != m.digest:
        return MarkerState.DIGEST_MISMATCH, [
            Finding(
                "digest-mismatch",
                line,
                name,
                f"the marker says sha256 {m.digest}; the file digests to {fc.digest}",
            )
        ]
    findings: list[Finding] = []
    shape = site.shape
    if shape is not None:
        bad = []
        if (
            shape.head_bytes > len(fc.head)
            or hashlib.sha256(fc.head[: shape.head_bytes]).hexdigest() != shape.head_sha256
        ):
            bad.append("the head the model saw is not the start of the file")
        tail = fc.tail[len(fc.tail) - shape.tail_bytes :] if shape.tail_bytes else b""
        if shape.tail_bytes > len(fc.tail) or hashlib.sha256(tail).hexdigest() != shape.tail_sha256:
            bad.append("the tail the model saw is not the end of the file")
        if bad:
            return MarkerState.EXCERPT_MISMATCH, [
                Finding("excerpt-mismatch", line, name, "; ".join(bad))
            ]
    art = site.op.artifact if site.op is not None else None
    recorded = art.get("chars") if art is not None else None
    if fc.chars is not None and isinstance(recorded, int) and recorded != fc.chars:
        findings.append(
            Finding(
                "chars-differ",
                line,
                name,
                f"recorded {recorded:,} chars, {fc.chars:,} under current Unicode "
                "(bytes and digest match: a writer on another Unicode version)",
            )
        )
    return MarkerState.VERIFIED, findings


def orphan_findings(orphans: Sequence[OrphanFile]) -> list[Finding]:
    """`orphan-artifact` / `partial-write` warnings for unnamed files."""
    out = []
    for o in orphans:
        if o.partial_write:
            out.append(
                Finding(
                    "partial-write",
                    None,
                    o.name,
                    f"leftover temp file of an interrupted artifact write ({o.size:,} bytes)",
                )
            )
        else:
            what = "" if o.kind == "file" else f" ({o.kind})"
            out.append(
                Finding(
                    "orphan-artifact",
                    None,
                    o.name,
                    f"no line names this file{what} ({o.size:,} bytes)",
                )
            )
    return out


# -- the ledger --------------------------------------------------------------------------------



def _finding_order(f: Finding) -> tuple[bool, int]:
    """`--check`'s order: by line, findings with no line (orphans) last; stable otherwise."""
    return (f.line is None, f.line or 0)


class VerificationLedger:
    """Marker states, findings and problems of one analysis, as file checks arrive.

    Args:
        analysis: the pass whose markers and artifact keys are to be verified.
        checks: file checks already made (a follow-mode re-analysis carries
            the previous ledger's over, so files are not hashed twice).
    """

    def __init__(self, analysis: Analysis, checks: Mapping[str, FileCheck] | None = None) -> None:
        self.analysis = analysis
        self._sites: list[MarkerSite] = analysis.excerpt_sites
        self._by_key: dict[SiteKey, MarkerSite] = {s.key: s for s in self._sites}
        self._by_file: dict[str, list[MarkerSite]] = {}
        for site in self._sites:
            name = site.marker.file
            if name is not None and site.marker.safe_name:
                self._by_file.setdefault(name, []).append(site)
        # Settles whose `artifact` key names a file although no marker does: the
        # file should still exist (the analysis already reports the metadata
        # disagreement; whether the file is there is this ledger's question).
        sited_ops = {s.op_index for s in self._sites}
        self._key_only: dict[str, list[int]] = {}
        ops = analysis.operations
        for row, art in ops.with_artifacts().items():
            key_file = art.get("file")
            if row in sited_ops or not isinstance(key_file, str) or key_file in self._by_file:
                continue
            if is_safe_basename(key_file):
                line = ops.line("settle", row)
                self._key_only.setdefault(key_file, []).append(line)
        self._checks: dict[str, FileCheck] = {}
        # One entry per marker, (badge, findings) replaced together, so a reader on
        # another thread never sees a new badge with the old findings.
        self._verdicts: dict[SiteKey, tuple[MarkerState, list[Finding]]] = {}
        self._key_findings: dict[str, list[Finding]] = {}
        for site in self._sites:
            self._verdicts[site.key] = site_state(site, None)
        # What a line's own rows show (not a marker's): the analysis's errors and
        # warnings, then missing files only a settle names. Lists replaced whole.
        self._line_findings: dict[int, list[Finding]] = {}
        for f in analysis.findings:
            if f.line is not None and f.severity is not Severity.NOTE:
                self._line_findings.setdefault(f.line, []).append(f)
        self.orphans: list[OrphanFile] | None = None
        """Files no line names; None until the directory has been listed."""
        self._orphan_findings: list[Finding] = []
        for check in (checks or {}).values():
            # A file once named only by a settle was checked without its grapheme
            # count; if a marker names it now, it is hashed again with one.
            uncounted = check.state is FileState.OK and check.chars is None
            if (check.name in self._by_file and not uncounted) or check.name in self._key_only:
                self.record(check)

    # -- what to check ----------------------------------------------------------------------------

    def wanted(self) -> list[str]:
        """Basenames still to hash: files markers name, then files only a settle names."""
        names = set(self._by_file) | set(self._key_only)
        return sorted(names - set(self._checks))

    def counts_chars(self, name: str) -> bool:
        """Whether the file's grapheme count matters (a marker names it, not only a settle).

        Counting is most of the cost of checking a mixed-script file; a file only
        an `artifact` key names is checked for being there, so it can skip it.
        """
        return name in self._by_file

    # -- recording -----------------------------------------------------------------------------

    def record(self, check: FileCheck) -> list[int]:
        """Take one file's check; returns the lines whose rows it changed, sorted.

        A line changes when a marker on it gets another badge or other findings,
        or when a settle on it names a file that turns out to be missing.
        """
        name = check.name
        self._checks[name] = check
        changed: set[int] = set()
        for site in self._by_file.get(name, ()):
            verdict = site_state(site, check)
            if verdict != self._verdicts.get(site.key):
                changed.add(site.line)
            self._verdicts[site.key] = verdict
        lines = self._key_only.get(name)
        if lines is not None:
            old = self._key_findings.get(name, [])
            new = (
                [Finding("missing-artifact", line, name, check.detail) for line in lines]
                if check.state is FileState.MISSING
                else []
            )
            self._key_findings[name] = new
            for f in (f for f in new if f not in old):
                assert f.line is not None
                self._line_findings[f.line] = [*self._line_findings.get(f.line, []), f]
                changed.add(f.line)
        return sorted(changed)

    def record_orphans(self, orphans: Sequence[OrphanFile]) -> None:
        """Take the listing of the artifact directory: files no line names."""
        self.orphans = list(orphans)
        self._orphan_findings = orphan_findings(self.orphans)

    # -- reading -------------------------------------------------------------------------------

    @property
    def checks(self) -> Mapping[str, FileCheck]:
        """Every file check recorded so far, by basename (read-only)."""
        return MappingProxyType(self._checks)

    def check_of(self, name: str) -> FileCheck | None:
        """The check of one artifact file, if it has been recorded."""
        return self._checks.get(name)

    def site(self, key: SiteKey) -> MarkerSite | None:
        """The excerpt marker with this key (quoted markers are not verified, so absent)."""
        return self._by_key.get(key)

    def state(self, key: SiteKey) -> MarkerState:
        """A marker's badge: from its file's check once recorded, else from its form.

        A key that is no excerpt marker (a quoted one) reads as `NOT_STORED`:
        nothing is verified for it.
        """
        verdict = self._verdicts.get(key)
        return verdict[0] if verdict is not None else MarkerState.NOT_STORED

    def findings_of(self, key: SiteKey) -> list[Finding]:
        """What verifying this marker found (missing file, digest mismatch, chars differ...)."""
        verdict = self._verdicts.get(key)
        return verdict[1] if verdict is not None else []

    def line_findings(self, line: int) -> list[Finding]:
        """The errors and warnings a line shows on its own rows (not under a marker)."""
        return self._line_findings.get(line, [])

    def finding_lines(self) -> set[int]:
        """Lines that show findings on their own rows."""
        return set(self._line_findings)

    def is_bad(self, key: SiteKey) -> bool:
        """Whether this marker's badge says something is wrong."""
        return self.state(key).is_bad

    @property
    def complete(self) -> bool:
        """Every wanted file has been checked and the directory has been listed."""
        return self.orphans is not None and not self.wanted()

    @property
    def markers(self) -> int:
        """Excerpt markers (quoted ones are not counted)."""
        return len(self._sites)

    @property
    def verified(self) -> int:
        """Markers whose artifact is there and is what the marker says."""
        return sum(1 for s, _ in self._verdicts.values() if s is MarkerState.VERIFIED)

    def states(self) -> list[MarkerState]:
        """Each excerpt marker's badge, in the order of `analysis.excerpt_sites`."""
        return [self._verdicts[s.key][0] for s in self._sites]

    def findings(self) -> list[Finding]:
        """Everything `--check` reports for this transcript, in its order."""
        out = list(self.analysis.findings)
        for site in self._sites:
            out.extend(self._verdicts[site.key][1])
        for name in sorted(self._key_findings):
            out.extend(self._key_findings[name])
        out.extend(self._orphan_findings)
        out.sort(key=_finding_order)
        return out

    def problems(self) -> list[Finding]:
        """Errors and warnings: what the viewer's header counts and `p` / `P` visit."""
        return [f for f in self.findings() if f.severity is not Severity.NOTE]

    def count(self, severity: Severity) -> int:
        """How many findings have this severity."""
        return sum(1 for f in self.findings() if f.severity is severity)

    def problem_lines(self) -> list[int]:
        """Transcript lines with a problem (a finding, or a marker in a bad state), sorted."""
        lines = {f.line for f in self.problems() if f.line is not None}
        lines.update(key.line for key, (state, _) in self._verdicts.items() if state.is_bad)
        return sorted(lines)

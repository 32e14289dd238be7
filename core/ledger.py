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

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from transcript_view.core.analysis import Analysis
from transcript_view.core.artifacts import TEMP_PREFIX, TEMP_SUFFIX, artifact_name, is_temp_name
from transcript_view.core.findings import Finding, Severity
from transcript_view.core.formats.model import SessionAnalysis, SpillSite
from transcript_view.core.formats.rules import kept_start, spill_state, start_suffices
from transcript_view.core.markers import MarkerKind, is_safe_basename
from transcript_view.core.records import MarkerSite, SiteKey
from transcript_view.core.tables import Operations, id_at
from transcript_view.core.text import plural
from transcript_view.core.verification import (
    EDGE_BYTES,
    FileCheck,
    FileState,
    MarkerState,
    OrphanFile,
    kept_ends,
)

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
                f"the marker says {plural(m.bytes, 'byte')}; the file has {fc.size:,}",
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
        if fc.edge_digest("head", shape.head_bytes) != shape.head_sha256:
            bad.append("the head the model saw is not the start of the file")
        if fc.edge_digest("tail", shape.tail_bytes) != shape.tail_sha256:
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
                f"recorded {plural(recorded, 'char')}, {fc.chars:,} under current Unicode "
                "(bytes and digest match: a writer on another Unicode version)",
            )
        )
    return MarkerState.VERIFIED, findings


#: Finding kinds about files no line names. They are counted apart from the
#: problems (the viewer's header says "orphans", `o` lists them, `--check`'s
#: summary line counts them too): `p` steps through transcript lines, and no line
#: can lead to a file that no line names.
ORPHAN_KINDS: frozenset[str] = frozenset({"orphan-artifact", "partial-write"})


def is_orphan(f: Finding) -> bool:
    """A finding about a file no line names (counted as an orphan, not a problem)."""
    return f.kind in ORPHAN_KINDS


def is_problem(f: Finding) -> bool:
    """An error or warning on a transcript line: what the header counts and `p` visits."""
    return f.severity is not Severity.NOTE and not is_orphan(f)


def _problems_in(findings: Sequence[Finding]) -> int:
    return sum(1 for f in findings if is_problem(f))


#: Why a sidecar is an orphan: no transcript of its session names it or its tool call.
SESSION_UNNAMED = "no transcript of the session names it or its tool call"
#: Why a file no line names is there, when no transcript is left to ask.
TRANSCRIPT_GONE = "its transcript is gone"
#: ... when its name is an artifact's, but no dispatch has the op id in it.
NO_DISPATCH = "no dispatch has this op id"
#: ... when its name is not `<op-id>.txt` at all.
NOT_AN_ARTIFACT_NAME = "not named like an artifact (<op-id>.txt)"
#: What is known of a file listed but never explained against a transcript.
UNEXPLAINED = "no line names it"


def partial_target(name: str) -> str | None:
    """The artifact a leftover temp file was being written as, if its name says.

    `Store` names its temp file `.tmp-<artifact>.<pid>.<random>.partial`.
    """
    if not is_temp_name(name):
        return None
    parts = name[len(TEMP_PREFIX) : len(name) - len(TEMP_SUFFIX)].rsplit(".", 2)
    return parts[0] if len(parts) == 3 and parts[0] else None


def _rows_by_artifact_name(analysis: Analysis, names: set[str]) -> dict[str, int]:
    """The operation whose artifact would be called each of `names` (the latest wins).

    An artifact is named `<op-id>.txt` with the op id sanitised, and a
    dispatch's envelope id is its op id, so each dispatch line's id is read
    back (the table keeps no ids). Only orphans need this, they are rare, and
    the ones a crash leaves are near the end: the scan runs from the last
    operation back and stops once every name is found.
    """
    found: dict[str, int] = {}
    ops = analysis.operations
    t = analysis.transcript
    for row in range(len(ops) - 1, -1, -1):
        if len(found) == len(names):
            break
        line = ops.line("dispatch", row)
        if line < 0:
            continue
        name = artifact_name(id_at(t, line))
        if name in names and name not in found:
            found[name] = row
    return found


def _operation_reason(ops: Operations, row: int, name: str) -> str:
    """How far the operation that would own `name` got, from the lines it has."""
    where = f"dispatched at line {ops.line('dispatch', row)}"
    settle = ops.line("settle", row)
    if settle < 0:
        return f"{where}, never settled"
    art = ops.artifact(row)
    other = art.get("file") if art is not None else None
    if isinstance(other, str) and other != name:
        return f"{where}; its settle on line {settle} names {other[:80]!r} instead"
    return f"{where}; its settle on line {settle} does not name it"


def explain_orphans(
    orphans: Sequence[OrphanFile], analysis: Analysis | SessionAnalysis | None
) -> list[OrphanFile]:
    """Each orphan with its own reason (`OrphanFile.reason`), read off the operations.

    A file named like an artifact belongs to the operation whose op id its name
    is; what that operation's lines say (never settled, settled naming another
    file...) is why no line names the file. `analysis` None: the transcript is
    gone (a lost artifact directory), which is the reason for every file.
    """
    if isinstance(analysis, SessionAnalysis):
        # Sidecars are named by tool call, not by op id: nothing more to read off.
        return [replace(o, reason=SESSION_UNNAMED) for o in orphans]
    targets = {o.name: partial_target(o.name) if o.partial_write else o.name for o in orphans}
    rows: dict[str, int] = {}
    if analysis is not None:
        wanted = {n for n in targets.values() if n is not None and n.endswith(".txt")}
        rows = _rows_by_artifact_name(analysis, wanted) if wanted else {}
    out = []
    for o in orphans:
        target = targets[o.name]
        if analysis is None:
            why = TRANSCRIPT_GONE
        elif target is None:
            why = ""
        elif target in rows:
            why = _operation_reason(analysis.operations, rows[target], target)
        elif target.endswith(".txt"):
            why = NO_DISPATCH if target == o.name else "no dispatch has its op id"
        else:
            why = NOT_AN_ARTIFACT_NAME
        if o.partial_write:
            write = f"an interrupted write of {target}" if target else "an interrupted write"
            why = f"{write}; {why}" if why else write
        out.append(replace(o, reason=why))
    return out


def orphan_findings(orphans: Sequence[OrphanFile]) -> list[Finding]:
    """`orphan-artifact` / `partial-write` warnings for unnamed files, each with its reason."""
    out = []
    for o in orphans:
        size = plural(o.size, "byte")
        if o.partial_write:
            what = o.reason or "an interrupted artifact write"
            out.append(
                Finding("partial-write", None, o.name, f"leftover temp file of {what} ({size})")
            )
        else:
            kind = "" if o.kind == "file" else f" ({o.kind})"
            why = f"; {o.reason}" if o.reason else ""
            out.append(
                Finding(
                    "orphan-artifact", None, o.name, f"no line names this file{kind}{why} ({size})"
                )
            )
    return out


#: A marker the ledger verifies: the reference's, or another format's spill marker.
Site = MarkerSite | SpillSite


def _checked_file(site: Site) -> str | None:
    """The basename a marker's verdict depends on (None: no file to read)."""
    if isinstance(site, MarkerSite):
        return site.marker.file if site.marker.safe_name else None
    return site.file if site.safe_name and site.form.stored else None


def verdict_of(site: Site, fc: FileCheck | None) -> tuple[MarkerState, list[Finding]]:
    """A marker's badge and findings by its format's rule (the only dispatch on format)."""
    if isinstance(site, MarkerSite):
        return site_state(site, fc)
    return spill_state(site, fc)


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

    def __init__(
        self, analysis: Analysis | SessionAnalysis, checks: Mapping[str, FileCheck] | None = None
    ) -> None:
        self.analysis = analysis
        self._sites: Sequence[Site] = analysis.excerpt_sites
        self._by_key: dict[SiteKey, Site] = {s.key: s for s in self._sites}
        self._by_file: dict[str, list[Site]] = {}
        for site in self._sites:
            name = _checked_file(site)
            if name is not None:
                self._by_file.setdefault(name, []).append(site)
        # Settles whose `artifact` key names a file although no marker does: the
        # file should still exist (the analysis already reports the metadata
        # disagreement; whether the file is there is this ledger's question).
        self._key_only: dict[str, list[int]] = (
            self._settle_only_files(analysis) if isinstance(analysis, Analysis) else {}
        )
        self._checks: dict[str, FileCheck] = {}
        # One entry per marker, (badge, findings) replaced together, so a reader on
        # another thread never sees a new badge with the old findings.
        self._verdicts: dict[SiteKey, tuple[MarkerState, list[Finding]]] = {}
        self._key_findings: dict[str, list[Finding]] = {}
        # Kept up to date with every verdict (`_set_verdict`), so the header's counts
        # after each batch of checks cost nothing, not a walk of thousands of markers.
        self._states: Counter[MarkerState] = Counter()
        # The analysis's own findings, and what is wrong with the file itself (a
        # compressed transcript that could not be read to its end).
        self._base: list[Finding] = [*analysis.findings, *analysis.transcript.source_findings()]
        self._problem_count = _problems_in(self._base)
        for site in self._sites:
            self._set_verdict(site.key, verdict_of(site, None))
        # What a line's own rows show (not a marker's): the analysis's errors and
        # warnings, then missing files only a settle names. Lists replaced whole.
        self._line_findings: dict[int, list[Finding]] = {}
        for f in self._base:
            if f.line is not None and f.severity is not Severity.NOTE:
                self._line_findings.setdefault(f.line, []).append(f)
        self.orphans: list[OrphanFile] | None = None
        """Files no line names; None until the directory has been listed."""
        self._orphan_findings: list[Finding] = []
        for check in (checks or {}).values():
            # A file once named only by a settle was checked without its grapheme
            # count; if a marker names it now, it is hashed again with one (and a
            # Claude Code sidecar without its UTF-16 length, when a size needs it).
            name = check.name
            ok = check.state is FileState.OK
            lacking = ok and (
                (self.counts_chars(name) and check.chars is None)
                or (self.counts_utf16(name) and check.utf16 is None)
                or not self._edges_suffice(check)
            )
            if (name in self._by_file and not lacking) or name in self._key_only:
                self.record(check)

    def _settle_only_files(self, analysis: Analysis) -> dict[str, list[int]]:
        """Files only a settle's `artifact` key names, with the settles' lines (reference only)."""
        out: dict[str, list[int]] = {}
        ops = analysis.operations
        sited_ops = {s.op_index for s in self._sites if isinstance(s, MarkerSite)}
        for row, art in ops.with_artifacts().items():
            key_file = art.get("file")
            if row in sited_ops or not isinstance(key_file, str) or key_file in self._by_file:
                continue
            if is_safe_basename(key_file):
                out.setdefault(key_file, []).append(ops.line("settle", row))
        return out

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
        return name in self._by_file and any(isinstance(s, MarkerSite) for s in self._by_file[name])

    def counts_utf16(self, name: str) -> bool:
        """Whether the file's UTF-16 length matters (a Claude Code size names it in those units)."""
        return any(
            isinstance(s, SpillSite) and ((not s.bash and s.size_text is not None) or s.units)
            for s in self._by_file.get(name, ())
        )

    # -- recording -----------------------------------------------------------------------------

    def record(self, check: FileCheck) -> list[int]:
        """Take one file's check; returns the lines whose rows it changed, sorted.

        A line changes when a marker on it gets another badge or other findings,
        or when a settle on it names a file that turns out to be missing.
        """
        name = check.name
        changed: set[int] = set()
        kept = self._kept(check)  # the verdicts read the digests it keeps: each end hashed once
        for site in self._by_file.get(name, ()):
            verdict = verdict_of(site, kept)
            if verdict != self._verdicts.get(site.key):
                changed.add(site.line)
                self._set_verdict(site.key, verdict)
        self._checks[name] = kept
        lines = self._key_only.get(name)
        if lines is not None:
            old = self._key_findings.get(name, [])
            new = (
                [Finding("missing-artifact", line, name, check.detail) for line in lines]
                if check.state is FileState.MISSING
                else []
            )
            self._key_findings[name] = new
            self._problem_count += _problems_in(new) - _problems_in(old)
            for f in (f for f in new if f not in old):
                assert f.line is not None
                self._line_findings[f.line] = [*self._line_findings.get(f.line, []), f]
                changed.add(f.line)
        return sorted(changed)

    def edge_needs(self, name: str) -> list[tuple[str, int]] | None:
        """The ends of `name` this ledger's markers compare, as `(end, bytes)`, or None.

        None where a marker reads the file's start as text (another format's
        preview, a JSON sidecar): its check keeps its start whole, and never
        its end, which no such verdict reads.
        """
        needs: list[tuple[str, int]] = []
        for site in self._by_file.get(name, ()):
            if not isinstance(site, MarkerSite):
                return None
            if site.shape is not None:
                needs += [("head", site.shape.head_bytes), ("tail", site.shape.tail_bytes)]
        return needs

    def _spill_sites(self, name: str) -> list[SpillSite]:
        """Another format's markers that name `name` (whose verdicts read its start as text)."""
        return [s for s in self._by_file.get(name, ()) if isinstance(s, SpillSite)]

    def ends_to_keep(self, names: Sequence[str]) -> dict[str, tuple[tuple[str, int], ...]] | None:
        """The ends each check of `names` may be cut to where it is made (`kept_ends`).

        What `verification.iter_checks` is given as `keep`, so that a check made
        in a worker process, or queued for the UI, carries digests, not bytes.
        None when some file is another format's sidecar, whose start this ledger
        cuts to what its previews compare (`rules.kept_start`): those come whole.
        """
        ends: dict[str, tuple[tuple[str, int], ...]] = {}
        for name in names:
            needs = self.edge_needs(name)
            if needs is None:
                return None
            ends[name] = tuple(needs)
        return ends

    def edge_bytes(self, name: str) -> tuple[int, int]:
        """The head and tail bytes of `name` a check must read for this ledger's verdicts.

        What `verification.iter_checks` is asked to keep (`edges`), so a check
        carries no more of its file than the markers compare.
        """
        needs = self.edge_needs(name)
        if needs is None:  # a sidecar's start is read as text; its end only for a cut's tail
            tail = any(site.tail for site in self._spill_sites(name))
            return EDGE_BYTES, EDGE_BYTES if tail else 0
        head = max((n for end, n in needs if end == "head"), default=0)
        return head, max((n for end, n in needs if end == "tail"), default=0)

    def _kept(self, check: FileCheck) -> FileCheck:
        """`check` as this ledger keeps it: the digests of the ends its markers compare.

        A check keeps up to 256 KiB of each end of its file, and a ledger keeps
        every check: for 3,000 artifacts of 64 KiB that was 384 MB of bytes
        already compared, and the ends an excerpt saw (16 KB for a 16 KB
        observation) were still 80 MB at 5,000. A marker compares the sha256 of
        an end with its own, so that digest is all a kept check needs; the
        verdicts of `record` read the kept check, whose digests are the whole
        check's (each end hashed once). Another format's sidecar keeps the
        part of its start its previews compare instead (`rules.kept_start`).
        """
        if check.state is not FileState.OK:
            return check
        needs = self.edge_needs(check.name)
        if needs is None:  # another format's sidecar: the start its previews compare, no end
            return kept_start(self._spill_sites(check.name), check)
        return kept_ends(check, needs)

    def _edges_suffice(self, check: FileCheck) -> bool:
        """Whether a check (carried from another ledger, kept with other ends) says what this
        ledger's markers compare; if not, the file is hashed again."""
        needs = self.edge_needs(check.name)
        if needs is None:
            return start_suffices(self._spill_sites(check.name), check)
        whole = min(check.size, EDGE_BYTES)
        return all(
            check.edge_digest(end, n) is not None
            or len(check.head if end == "head" else check.tail) >= whole  # shorter than n
            for end, n in needs
        )

    def record_orphans(self, orphans: Sequence[OrphanFile], *, explained: bool = False) -> None:
        """Take the listing of the artifact directory: files no line names.

        Each is explained against this analysis's operations (`explain_orphans`),
        so the orphans screen and `--check` give the same reason; `explained`
        says the caller did that already (`core.report.orphans_of`, in a worker
        thread: reading dispatch lines back can take a while on a big file).
        """
        self.orphans = list(orphans) if explained else explain_orphans(orphans, self.analysis)
        old = self._orphan_findings
        self._orphan_findings = orphan_findings(self.orphans)
        self._problem_count += _problems_in(self._orphan_findings) - _problems_in(old)

    def _set_verdict(self, key: SiteKey, verdict: tuple[MarkerState, list[Finding]]) -> None:
        """A marker's new verdict, and the tallies of states and problems kept with it."""
        old = self._verdicts.get(key)
        if old is not None:
            self._states[old[0]] -= 1
            self._problem_count -= _problems_in(old[1])
        self._verdicts[key] = verdict
        self._states[verdict[0]] += 1
        self._problem_count += _problems_in(verdict[1])

    # -- reading -------------------------------------------------------------------------------

    def sites_of(self, name: str) -> Sequence[Site]:
        """The markers whose verdict a check of the file `name` decides."""
        return self._by_file.get(name, ())

    def verdict(self, key: SiteKey) -> tuple[MarkerState, list[Finding]]:
        """A marker's badge and findings, as one pair (replaced together on every check)."""
        return self._verdicts[key]

    @property
    def checks(self) -> Mapping[str, FileCheck]:
        """Every file check recorded so far, by basename (read-only)."""
        return MappingProxyType(self._checks)

    def check_of(self, name: str) -> FileCheck | None:
        """The check of one artifact file, if it has been recorded."""
        return self._checks.get(name)

    def site(self, key: SiteKey) -> Site | None:
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
    def matched(self) -> int:
        """Markers of a format with no digest whose preview and size match their sidecar, or
        whose file's start and end are the head and tail the model saw."""
        return self._states[MarkerState.MATCHES] + self._states[MarkerState.EXCERPT_MATCHES]

    @property
    def present(self) -> int:
        """Markers whose form records nothing but the sidecar's name, and it is there."""
        return self._states[MarkerState.PRESENT]

    @property
    def agreeing(self) -> int:
        """Markers whose file is what they say, as far as their form lets it be checked:
        verified (a digest), or matched (a preview, or a head and tail, and a size)."""
        return self.verified + self.matched

    @property
    def expired(self) -> int:
        """Markers whose file is gone as the agent allows (`MarkerState.EXPIRED`)."""
        return self._states[MarkerState.EXPIRED]

    @property
    def verified(self) -> int:
        """Markers whose artifact is there and is what the marker says."""
        return self._states[MarkerState.VERIFIED]

    def states(self) -> list[MarkerState]:
        """Each excerpt marker's badge, in the order of `analysis.excerpt_sites`."""
        return [self._verdicts[s.key][0] for s in self._sites]

    def findings(self) -> list[Finding]:
        """Everything `--check` reports for this transcript, in its order."""
        out = list(self._base)
        for site in self._sites:
            out.extend(self._verdicts[site.key][1])
        for name in sorted(self._key_findings):
            out.extend(self._key_findings[name])
        out.extend(self._orphan_findings)
        out.sort(key=_finding_order)
        return out

    def problems(self) -> list[Finding]:
        """Errors and warnings on transcript lines: the header's problems, what `p` visits.

        Orphans are not among them (`orphan_warnings`): no line leads to a file no
        line names, so counting them here made the header promise problems `p`
        could never reach.
        """
        return [f for f in self.findings() if is_problem(f)]

    @property
    def problem_count(self) -> int:
        """`len(problems())`, kept as verdicts change: the header asks after every batch."""
        return self._problem_count

    def orphan_warnings(self) -> list[Finding]:
        """The warnings about files no line names: the header's orphans, what `o` lists."""
        return list(self._orphan_findings)

    def count(self, severity: Severity) -> int:
        """How many findings have this severity."""
        return sum(1 for f in self.findings() if f.severity is severity)

    def problem_lines(self) -> list[int]:
        """Transcript lines with a problem (a finding, or a marker in a bad state), sorted."""
        lines = {f.line for f in self.problems() if f.line is not None}
        lines.update(key.line for key, (state, _) in self._verdicts.items() if state.is_bad)
        return sorted(lines)

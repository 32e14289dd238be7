"""One pass over a transcript: tool operations, excerpt markers, replay, line problems.

Everything a viewer header, `--check` and the model view need is collected in a
single streaming pass that keeps no message content (a gigabyte transcript must
not become a gigabyte of Python strings): operations, marker sites and replay
entries hold line numbers, lengths and digests, and content is re-read by line
when somebody looks at it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from core import graphemes
from core.artifacts import head_tail_sizes, to_bytes
from core.canonical import canonical_string, data_digest
from core.envelopes import (
    Compaction,
    Elision,
    Envelope,
    Message,
    SessionMeta,
    ToolDispatched,
    ToolSettled,
)
from core.findings import Finding
from core.markers import Marker, MarkerKind, parse_markers
from core.transcript import LineProblem, Transcript


class OpState(StrEnum):
    """What the lines present say about one tool call (FORMAT.md's crash table)."""

    NEVER_DISPATCHED = "never-dispatched"
    RUNNING = "running-when-died"
    SETTLE_NEVER_LANDED = "settle-never-landed"
    SETTLED = "settled"


@dataclass(slots=True)
class ToolOperation:
    """One tool call joined across its assistant turn, dispatch, tool message and settle."""

    call_id: str
    tool: str
    op_id: str | None = None
    call_line: int | None = None
    dispatch_line: int | None = None
    dispatch_ts: str | None = None
    message_line: int | None = None
    message_id: str | None = None
    message_digest: str | None = None
    settle_line: int | None = None
    settle_ts: str | None = None
    outcome: str | None = None
    duration: float | None = None
    error: str | None = None
    reason: str | None = None
    result_digest: str | None = None
    artifact: Mapping[str, Any] | None = None
    is_error: bool = False

    @property
    def state(self) -> OpState:
        """Where the call got to, read off which lines exist."""
        if self.settle_line is not None:
            return OpState.SETTLED
        if self.dispatch_line is None:
            return OpState.NEVER_DISPATCHED
        if self.message_line is None:
            return OpState.RUNNING
        return OpState.SETTLE_NEVER_LANDED

    def describe_state(self) -> str:
        """The state in words a person reads in a viewer."""
        state = self.state
        if state is OpState.SETTLED:
            return self.outcome or "settled"
        if state is OpState.NEVER_DISPATCHED:
            return "never dispatched"
        if state is OpState.RUNNING:
            return "running when the process died"
        return "completed; the settle never landed"


@dataclass(frozen=True, slots=True)
class ExcerptShape:
    """The parts of an excerpt around its marker, kept as lengths and digests only."""

    head_bytes: int
    head_sha256: str
    head_chars: int
    tail_bytes: int
    tail_sha256: str


@dataclass(slots=True)
class MarkerSite:
    """A marker found in a message, with the operation it belongs to (if any)."""

    line: int
    message_id: str | None
    role: str
    marker: Marker
    quoted: bool
    """True when the marker is text *about* a marker (in a user or assistant message, or
    a second marker-shaped line inside a tool result) rather than the excerpt's own."""
    op: ToolOperation | None = None
    shape: ExcerptShape | None = None

    @property
    def file(self) -> str | None:
        """The artifact basename the marker names, if it is a stored marker."""
        return self.marker.file


@dataclass(frozen=True, slots=True)
class ReplayEntry:
    """One message of what the model is sent next: its id, source line and any stub."""

    id: str
    line: int
    role: str
    sticky: bool
    summary: bool = False
    """A compaction's summary turn (content is the compaction line's `summary`)."""
    stub: str | None = None
    """Content replaced by an elision stub."""


@dataclass(slots=True)
class Analysis:
    """What one pass over a transcript found."""

    lines: int = 0
    envelopes: int = 0
    type_counts: Counter[str] = field(default_factory=Counter)
    meta_line: int | None = None
    problems: list[LineProblem] = field(default_factory=list)
    operations: list[ToolOperation] = field(default_factory=list)
    sites: list[MarkerSite] = field(default_factory=list)
    replay: list[ReplayEntry] = field(default_factory=list)
    replay_problems: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def excerpt_sites(self) -> list[MarkerSite]:
        """Markers that are a tool result's own excerpt marker (the ones to verify)."""
        return [s for s in self.sites if not s.quoted]

    def named_files(self) -> set[str]:
        """Every artifact basename a marker or an artifact key names."""
        names = {s.marker.file for s in self.excerpt_sites if s.marker.file is not None}
        for op in self.operations:
            if op.artifact is not None and isinstance(op.artifact.get("file"), str):
                names.add(str(op.artifact["file"]))
        return names


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _shape(content: str, marker: Marker) -> ExcerptShape:
    head = content[: max(marker.start - 1, 0)]
    tail = content[marker.end + 1 :]
    hb, tb = to_bytes(head), to_bytes(tail)
    return ExcerptShape(len(hb), _sha(hb), graphemes.count(head), len(tb), _sha(tb))


def _choose_excerpt_marker(content: str, markers: list[Marker]) -> list[bool]:
    """Which markers in a tool result are quoted (True) rather than the excerpt's own.

    The excerpt's own marker stands on a line of its own. When several do (a tool
    that printed a transcript), the one the settle's artifact key describes is
    resolved later; here the first line-isolated one is provisionally chosen.
    """
    own = [m.on_own_line(content) for m in markers]
    quoted = [True] * len(markers)
    for i, ok in enumerate(own):
        if ok:
            quoted[i] = False
            break
    return quoted


class _Pass:
    def __init__(self, transcript: Transcript) -> None:
        self.t = transcript
        self.a = Analysis()
        self.ops_by_id: dict[str, ToolOperation] = {}
        self.undispatched: dict[str, list[ToolOperation]] = {}
        self.unanswered: dict[str, list[ToolOperation]] = {}
        self.ids_seen: dict[str, int] = {}
        self.first: Envelope | None = None
        # Replay state: entries in conversation order, index by id.
        self.entries: list[ReplayEntry] = []
        # Multi-candidate tool results, resolved once settles are known.
        self.ambiguous: list[tuple[MarkerSite, list[MarkerSite], str]] = []

    def run(self, progress: Callable[[int, int], None] | None) -> Analysis:
        a = self.a
        a.lines = self.t.line_count
        total = a.lines
        for n, parsed in enumerate(self.t, start=1):
            if isinstance(parsed, LineProblem):
                a.problems.append(parsed)
            else:
                self.envelope(parsed)
            if progress is not None and n % 2048 == 0:
                progress(parsed.line, total)
        self.finish()
        if progress is not None:
            progress(total, total)
        return a

    # -- per envelope ----------------------------------------------------------

    def envelope(self, env: Envelope) -> None:
        a = self.a
        if self.first is None:
            self.first = env
        a.envelopes += 1
        a.type_counts[env.type] += 1
        if env.id is not None:
            first = self.ids_seen.get(env.id)
            if first is not None:
                a.findings.append(
                    Finding(
                        "malformed-line",
                        env.line,
                        None,
                        f"envelope id {env.id[:80]!r} was already used on line {first}",
                    )
                )
            else:
                self.ids_seen[env.id] = env.line
        if isinstance(env, SessionMeta):
            if a.meta_line is None:
                a.meta_line = env.line
        elif isinstance(env, Message):
            self.message(env)
        elif isinstance(env, ToolDispatched):
            self.dispatched(env)
        elif isinstance(env, ToolSettled):
            self.settled(env)
        elif isinstance(env, Compaction):
            self.compaction(env)
        elif isinstance(env, Elision):
            self.elision(env)

    def message(self, env: Message) -> None:
        role = env.role
        self.entries.append(
            ReplayEntry(
                id=env.id or f"line-{env.line}", line=env.line, role=role, sticky=env.is_sticky
            )
        )
        if role == "assistant":
            for call in env.tool_calls:
                called = ToolOperation(call_id=call.id, tool=call.name, call_line=env.line)
                self.a.operations.append(called)
                self.undispatched.setdefault(call.id, []).append(called)
        content = env.content
        op: ToolOperation | None = None
        if role == "tool":
            op = self.answer(env, content)
        markers = parse_markers(content)
        if not markers:
            return
        quoted = (
            _choose_excerpt_marker(content, markers) if role == "tool" else [True] * len(markers)
        )
        sites = []
        for marker, q in zip(markers, quoted, strict=True):
            site = MarkerSite(
                line=env.line, message_id=env.id, role=role, marker=marker, quoted=q, op=op
            )
            if not q:
                site.shape = _shape(content, marker)
            sites.append(site)
            self.a.sites.append(site)
        candidates = [s for s in sites if s.marker.on_own_line(content)]
        if role == "tool" and len(candidates) > 1:
            self.ambiguous.append((candidates[0], candidates, content))

    def answer(self, env: Message, content: str) -> ToolOperation | None:
        call_id = env.tool_call_id
        if call_id is None:
            return None
        queue = self.unanswered.get(call_id)
        op: ToolOperation | None = None
        if queue:
            op = queue.pop(0)
        else:
            pending = self.undispatched.get(call_id)
            if pending:
                # A transcript written before dispatch lines existed answers calls directly.
                op = pending.pop(0)
        if op is None:
            return None
        op.message_line = env.line
        op.message_id = env.id
        op.is_error = env.is_error
        op.message_digest = _sha(canonical_string(content).encode("utf-8", "surrogatepass"))
        return op

    def dispatched(self, env: ToolDispatched) -> None:
        call_id = env.call_id
        pending = self.undispatched.get(call_id)
        op = pending.pop(0) if pending else None
        if op is None:
            op = ToolOperation(call_id=call_id, tool=env.tool)
            self.a.operations.append(op)
        op.op_id = env.op_id
        op.tool = env.tool or op.tool
        op.dispatch_line = env.line
        op.dispatch_ts = env.ts
        if env.op_id is not None:
            self.ops_by_id.setdefault(env.op_id, op)
        self.unanswered.setdefault(call_id, []).append(op)
        want = env.arguments_digest
        if want is not None and env.arguments is not None:
            got = data_digest(env.arguments)
            if got != want:
                self.a.findings.append(
                    Finding(
                        "metadata-mismatch",
                        env.line,
                        None,
                        f"arguments-digest {want[:64]} does not match the arguments "
                        f"(their canonical JSON digests to {got})",
                    )
                )

    def settled(self, env: ToolSettled) -> None:
        op_id = env.op_id
        op = self.ops_by_id.get(op_id) if op_id is not None else None
        if op is None:
            self.a.findings.append(
                Finding(
                    "malformed-line",
                    env.line,
                    None,
                    f"tool-settled names operation {str(op_id)[:80]!r}, "
                    "which no earlier line dispatched",
                )
            )
            return
        if op.settle_line is not None:
            self.a.findings.append(
                Finding(
                    "malformed-line",
                    env.line,
                    None,
                    f"operation {op_id!r} was already settled on line {op.settle_line}; "
                    "one operation has one outcome",
                )
            )
            return
        op.settle_line = env.line
        op.settle_ts = env.ts
        op.outcome = env.outcome
        op.duration = env.duration
        op.error = env.error
        op.reason = env.reason
        op.result_digest = env.result_digest
        op.artifact = env.artifact

    # -- replay (the reference's `load`, in file order) ----------------------------

    def compaction(self, env: Compaction) -> None:
        through = env.replaces_through_id
        cut = next((i for i, e in enumerate(self.entries) if e.id == through), None)
        if cut is None:
            self.a.replay_problems.append(
                f"line {env.line}: the compaction replaces through {str(through)[:80]!r}, "
                "which is not a message the conversation still has"
            )
            return
        kept = [e for e in self.entries[: cut + 1] if e.sticky]
        kept.append(
            ReplayEntry(
                id=env.id or f"line-{env.line}",
                line=env.line,
                role="user",
                sticky=False,
                summary=True,
            )
        )
        kept.extend(self.entries[cut + 1 :])
        self.entries = kept

    def elision(self, env: Elision) -> None:
        for target, stub in env.items:
            index = next((i for i, e in enumerate(self.entries) if e.id == target), None)
            if index is None:
                self.a.replay_problems.append(
                    f"line {env.line}: the elision stubs {target[:80]!r}, "
                    "which is not a message the conversation still has"
                )
                continue
            e = self.entries[index]
            self.entries[index] = ReplayEntry(
                id=e.id, line=e.line, role=e.role, sticky=e.sticky, summary=e.summary, stub=stub
            )

    # -- after the last line ---------------------------------------------------------

    def finish(self) -> None:
        a = self.a
        a.replay = self.entries
        for chosen, candidates, content in self.ambiguous:
            self.resolve(chosen, candidates, content)
        # A file in which nothing parses is not a transcript a crash tore: every
        # bad line, the last one included, is an error.
        nothing_parsed = a.envelopes == 0
        for problem in a.problems:
            torn = problem.kind == "torn-tail" and not nothing_parsed
            a.findings.append(
                Finding(
                    "torn-tail" if torn else "malformed-line", problem.line, None, problem.message
                )
            )
        if self.first is not None and not isinstance(self.first, SessionMeta):
            a.findings.append(
                Finding(
                    "malformed-line",
                    self.first.line,
                    None,
                    f"the first envelope is a {self.first.type[:40]!r} line; "
                    "a transcript starts with session-meta",
                )
            )
        for op in a.operations:
            self.check_operation(op)
        for site in a.excerpt_sites:
            self.check_site(site)
        a.findings.sort(key=lambda f: f.line if f.line is not None else 0)

    def resolve(self, chosen: MarkerSite, candidates: list[MarkerSite], content: str) -> None:
        """Pick the excerpt's own marker among several line-isolated ones."""
        op = chosen.op
        best = chosen
        art = op.artifact if op is not None else None
        if art is not None:
            chars, elided = art.get("chars"), art.get("elided-chars")
            head_n = None
            if isinstance(chars, int) and isinstance(elided, int):
                head_n = head_tail_sizes(chars - elided)[0]
            for cand in candidates:
                same = cand.marker.file == art.get("file") and cand.marker.digest == art.get(
                    "digest"
                )
                if same and (
                    head_n is None or graphemes.count(content[: cand.marker.start - 1]) == head_n
                ):
                    best = cand
                    break
        if best is not chosen:
            chosen.quoted, chosen.shape = True, None
            best.quoted = False
            best.shape = _shape(content, best.marker)

    def check_operation(self, op: ToolOperation) -> None:
        a = self.a
        if op.state in (OpState.RUNNING, OpState.SETTLE_NEVER_LANDED):
            a.findings.append(
                Finding(
                    "unsettled-operation",
                    op.dispatch_line,
                    None,
                    f"{op.tool or 'tool'} call {op.call_id!r}: {op.describe_state()}",
                )
            )
        if (
            op.result_digest is not None
            and op.message_digest is not None
            and op.result_digest != op.message_digest
        ):
            a.findings.append(
                Finding(
                    "result-digest-mismatch",
                    op.settle_line,
                    None,
                    f"result-digest {op.result_digest[:64]} does not match the tool message "
                    f"on line {op.message_line} (which digests to {op.message_digest})",
                )
            )
        if op.artifact is not None:
            has_site = any(s.op is op for s in a.excerpt_sites)
            if not has_site:
                name = op.artifact.get("file")
                a.findings.append(
                    Finding(
                        "metadata-mismatch",
                        op.settle_line,
                        name if isinstance(name, str) else None,
                        "the settle records an artifact, but the tool message"
                        + (f" on line {op.message_line}" if op.message_line else "")
                        + " carries no excerpt marker",
                    )
                )

    def check_site(self, site: MarkerSite) -> None:
        a = self.a
        m = site.marker
        if m.kind is not MarkerKind.STORED:
            a.findings.append(
                Finding(
                    "not-stored",
                    site.line,
                    None,
                    f"full result {m.why} ({m.bytes:,} bytes, sha256 {m.digest[:12]}…)",
                )
            )
            if site.op is not None and site.op.artifact is not None:
                a.findings.append(
                    Finding(
                        "metadata-mismatch",
                        site.line,
                        None,
                        "the marker says the result was not stored, "
                        "but the settle records an artifact",
                    )
                )
            return
        if not m.safe_name:
            a.findings.append(
                Finding(
                    "unsafe-name",
                    site.line,
                    None,
                    f"the marker names {_show(m.file or '')}, which is not a plain basename; "
                    "it was not opened",
                )
            )
        art = site.op.artifact if site.op is not None else None
        if art is None:
            return
        diffs = []
        for key, mine in (
            ("file", m.file),
            ("bytes", m.bytes),
            ("digest", m.digest),
            ("elided-chars", m.elided),
        ):
            theirs = art.get(key)
            if theirs != mine:
                diffs.append(f"{key}: marker {_show(str(mine))}, artifact key {_show(str(theirs))}")
        if diffs:
            a.findings.append(
                Finding(
                    "metadata-mismatch",
                    site.line,
                    m.file if m.safe_name else None,
                    "marker and settle disagree (" + "; ".join(diffs) + ")",
                )
            )


def _show(text: str, limit: int = 80) -> str:
    """A value for a message: repr'd (so controls are escaped) and bounded."""
    shown = repr(text[:limit])
    return shown + ("…" if len(text) > limit else "")


def analyse(transcript: Transcript, progress: Callable[[int, int], None] | None = None) -> Analysis:
    """One streaming pass over an indexed transcript.

    Args:
        transcript: an indexed transcript (`Transcript.open` or `build_index` done).
        progress: called as `(lines_done, lines_total)` every few thousand lines.
    """
    return _Pass(transcript).run(progress)

"""One pass over a transcript: tool operations, excerpt markers, replay, line problems.

Everything a viewer header, `--check` and the model view need is collected in a
single streaming pass that keeps no message content and no per-envelope Python
objects: a gigabyte transcript has millions of lines, and a few hundred bytes
each would be gigabytes. Operations and the replayed conversation are columns of
line numbers (`core.tables`); the `ToolOperation` and `ReplayEntry` objects a
caller sees are made on access, by re-reading the few lines they come from.

This module is the pass itself and its result. The records it hands out are in
`core.records`, the tables in `core.tables`, the findings only the whole file
can show in `core.consistency`, and the incremental `Analyser` (which keeps a
pass open as a transcript grows) in `core.analyser`.
"""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from transcript_view.core import graphemes
from transcript_view.core.artifacts import head_tail_sizes, to_bytes
from transcript_view.core.canonical import canonical_string, data_digest
from transcript_view.core.compact import IdOverlay, IdTable, key_of
from transcript_view.core.consistency import end_of_pass_findings
from transcript_view.core.envelopes import (
    Compaction,
    Elision,
    Envelope,
    Message,
    SessionMeta,
    ToolDispatched,
    ToolSettled,
)
from transcript_view.core.findings import Finding
from transcript_view.core.markers import Marker, parse_markers
from transcript_view.core.records import ExcerptShape, MarkerSite
from transcript_view.core.tables import Operations, Replay, id_at
from transcript_view.core.transcript import LineProblem, Transcript

# -- the result ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Analysis:
    """What one pass over a transcript found."""

    transcript: Transcript
    operations: Operations
    replay: Replay
    lines: int = 0
    envelopes: int = 0
    type_counts: Counter[str] = field(default_factory=Counter)
    meta_line: int | None = None
    problems: list[LineProblem] = field(default_factory=list)
    sites: list[MarkerSite] = field(default_factory=list)
    replay_problems: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def excerpt_sites(self) -> list[MarkerSite]:
        """Markers that are a tool result's own excerpt marker (the ones to verify)."""
        return [s for s in self.sites if not s.quoted]

    def named_files(self) -> set[str]:
        """Every artifact basename a marker or an artifact key names."""
        names = {s.marker.file for s in self.excerpt_sites if s.marker.file is not None}
        for art in self.operations.with_artifacts().values():
            if isinstance(art.get("file"), str):
                names.add(str(art["file"]))
        return names


# -- excerpt markers ------------------------------------------------------------------------------


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _shape(content: str, marker: Marker) -> ExcerptShape:
    head = content[: max(marker.start - 1, 0)]
    tail = content[marker.end + 1 :]
    hb, tb = to_bytes(head), to_bytes(tail)
    return ExcerptShape(len(hb), _sha(hb), graphemes.count(head), len(tb), _sha(tb))


def quoted_flags(role: str, content: str, markers: list[Marker]) -> list[bool]:
    """Which markers in a message are quoted (True) rather than the excerpt's own.

    Only a tool result has an excerpt marker of its own, and it stands on a
    line of its own; every other marker is text *about* a marker. When several
    stand alone (a tool that printed a transcript), the one the settle's
    artifact key describes is resolved at the end of the pass; here the first
    is chosen provisionally. Public because the viewer shows a transcript
    before its pass has finished and must apply the same rule, not a copy.
    """
    quoted = [True] * len(markers)
    if role != "tool":
        return quoted
    for i, m in enumerate(markers):
        if m.on_own_line(content):
            quoted[i] = False
            break
    return quoted


# -- the pass ------------------------------------------------------------------------------------


class AnalysisPass:
    """The state of one streaming pass: fed lines in file order, finished once.

    `analyse` runs one over a whole file. `core.analyser.Analyser` keeps one open
    as its transcript grows, feeding it new lines and finishing a `snapshot`
    after each update (finishing changes what it finishes).
    """

    def __init__(self, transcript: Transcript) -> None:
        """A pass over `transcript`, nothing fed yet."""
        self.t = transcript
        self.ops = Operations(transcript)
        self.replay = Replay(transcript)
        self.analysis = Analysis(transcript=transcript, operations=self.ops, replay=self.replay)
        # Pending work only: entries leave these maps as soon as they are matched,
        # so their size is what is in flight, not what the file holds.
        self.undispatched: dict[str, list[int]] = {}
        self.unanswered: dict[str, list[int]] = {}
        self.pending: dict[str, int] = {}
        self.message_digest: dict[int, str] = {}
        self.op_ids: IdTable | IdOverlay = IdTable()
        self.ids_seen: IdTable | IdOverlay = IdTable(expected=transcript.line_count)
        self.first: Envelope | None = None
        self.site_rows: set[int] = set()
        # Multi-candidate tool results, resolved once settles are known.
        self.ambiguous: list[tuple[MarkerSite, list[MarkerSite], str]] = []

    def run(self, progress: Callable[[int, int], None] | None) -> Analysis:
        """Feed every line of the transcript and finish.

        Args:
            progress: called as `(line, lines_total)` every few thousand lines.
        """
        total = self.t.line_count
        for n, parsed in enumerate(self.t, start=1):
            self.feed(parsed)
            if progress is not None and n % 2048 == 0:
                progress(parsed.line, total)
        a = self.finish(total)
        if progress is not None:
            progress(total, total)
        return a

    def feed(self, parsed: Envelope | LineProblem) -> None:
        """Take one parsed line, in file order."""
        if isinstance(parsed, LineProblem):
            self.analysis.problems.append(parsed)
        else:
            self._envelope(parsed)

    def snapshot(self) -> AnalysisPass:
        """A copy of the pass so far that can be fed and finished on its own.

        `finish` changes what it finishes (it resolves markers, adds findings),
        so an `Analyser` finishes a copy and keeps feeding the original. The
        transcript is shared, and the two id tables (the biggest part of the
        state, 48 MB for 2.6 M lines) are seen through overlays that keep the
        copy's few additions apart instead of being copied.
        """
        memo: dict[int, Any] = {
            id(self.t): self.t,
            id(self.op_ids): IdOverlay(self.op_ids),
            id(self.ids_seen): IdOverlay(self.ids_seen),
        }
        # Frozen objects are shared, not copied: deepcopy costs microseconds an
        # object, and a long run has many problems, findings and markers. Only
        # the sites themselves (which `finish` resolves) are copied.
        a = self.analysis
        frozen: list[object] = [*a.problems, *a.findings, self.first]
        for site in a.sites:
            frozen.append(site.marker)
            frozen.append(site.shape)
        for obj in frozen:
            memo[id(obj)] = obj
        return copy.deepcopy(self, memo)

    # -- per envelope ----------------------------------------------------------

    def _envelope(self, env: Envelope) -> None:
        a = self.analysis
        if self.first is None:
            self.first = env
        a.envelopes += 1
        a.type_counts[env.type] += 1
        env_id = env.id
        if env_id is not None:
            earlier = self.ids_seen.setdefault(key_of(env_id), env.line)
            if earlier >= 0 and id_at(self.t, earlier) == env_id:
                a.findings.append(
                    Finding(
                        "malformed-line",
                        env.line,
                        None,
                        f"envelope id {env_id[:80]!r} was already used on line {earlier}",
                    )
                )
        if isinstance(env, SessionMeta):
            if a.meta_line is None:
                a.meta_line = env.line
        elif isinstance(env, Message):
            self._message(env)
        elif isinstance(env, ToolDispatched):
            self._dispatched(env)
        elif isinstance(env, ToolSettled):
            self._settled(env)
        elif isinstance(env, Compaction):
            self._compaction(env)
        elif isinstance(env, Elision):
            self._elision(env)

    def _message(self, env: Message) -> None:
        role = env.role
        self.replay.append(
            env.line, env.id or f"line-{env.line}", role, sticky=env.is_sticky, summary=False
        )
        if role == "assistant":
            for pos, call in enumerate(env.tool_calls):
                row = self.ops.add_call(env.line, pos)
                self.undispatched.setdefault(call.id, []).append(row)
        content = env.content
        row = self._answer(env, content) if role == "tool" else -1
        markers = parse_markers(content)
        if not markers:
            return
        quoted = quoted_flags(role, content, markers)
        sites = []
        for marker, q in zip(markers, quoted, strict=True):
            site = MarkerSite(
                line=env.line, message_id=env.id, role=role, marker=marker, quoted=q, op_index=row
            )
            if not q:
                site.shape = _shape(content, marker)
                if row >= 0:
                    self.site_rows.add(row)
            sites.append(site)
            self.analysis.sites.append(site)
        candidates = [s for s in sites if s.marker.on_own_line(content)]
        if role == "tool" and len(candidates) > 1:
            self.ambiguous.append((candidates[0], candidates, content))

    @staticmethod
    def _take(queues: dict[str, list[int]], key: str) -> int:
        queue = queues.get(key)
        if not queue:
            return -1
        row = queue.pop(0)
        if not queue:
            del queues[key]
        return row

    def _answer(self, env: Message, content: str) -> int:
        call_id = env.tool_call_id
        if call_id is None:
            return -1
        row = self._take(self.unanswered, call_id)
        if row < 0:
            # A transcript written before dispatch lines existed answers calls directly.
            row = self._take(self.undispatched, call_id)
        if row < 0:
            return -1
        self.ops.set_message(row, env.line, is_error=env.is_error)
        if self.ops.line("dispatch", row) >= 0 and self.ops.line("settle", row) < 0:
            self.message_digest[row] = _sha(canonical_string(content).encode("utf-8"))
        return row

    def _dispatched(self, env: ToolDispatched) -> None:
        call_id = env.call_id
        row = self._take(self.undispatched, call_id)
        if row < 0:
            row = self.ops.add_dispatch(env.line)
        else:
            self.ops.set_dispatch(row, env.line)
        op_id = env.op_id
        if op_id is not None and self.op_ids.setdefault(key_of(op_id), row) < 0:
            self.pending[op_id] = row
        self.unanswered.setdefault(call_id, []).append(row)
        want = env.arguments_digest
        if want is not None and env.arguments is not None:
            got = data_digest(env.arguments)
            if got != want:
                self.analysis.findings.append(
                    Finding(
                        "metadata-mismatch",
                        env.line,
                        None,
                        f"arguments-digest {want[:64]} does not match the arguments "
                        f"(their canonical JSON digests to {got})",
                    )
                )

    def _settled(self, env: ToolSettled) -> None:
        op_id = env.op_id
        row = self.pending.pop(op_id, -1) if op_id is not None else -1
        if row < 0:
            earlier = self.op_ids.get(key_of(op_id)) if op_id is not None else -1
            done = earlier >= 0 and self.ops.line("settle", earlier) >= 0
            if done and id_at(self.t, self.ops.line("dispatch", earlier)) == op_id:
                message = (
                    f"operation {op_id!r} was already settled on line "
                    f"{self.ops.line('settle', earlier)}; one operation has one outcome"
                )
            else:
                message = (
                    f"tool-settled names operation {str(op_id)[:80]!r}, "
                    "which no earlier line dispatched"
                )
            self.analysis.findings.append(Finding("malformed-line", env.line, None, message))
            return
        self.ops.set_settle(row, env.line, env.artifact)
        digest = self.message_digest.pop(row, None)
        want = env.result_digest
        if want is not None and digest is not None and want != digest:
            self.analysis.findings.append(
                Finding(
                    "result-digest-mismatch",
                    env.line,
                    None,
                    f"result-digest {want[:64]} does not match the tool message on line "
                    f"{self.ops.line('message', row)} (which digests to {digest})",
                )
            )

    # -- replay (the reference's `load`, in file order) ----------------------------

    def _compaction(self, env: Compaction) -> None:
        through = env.replaces_through_id
        cut = self.replay.find(through) if through is not None else -1
        if cut < 0:
            self.analysis.replay_problems.append(
                f"line {env.line}: the compaction replaces through {str(through)[:80]!r}, "
                "which is not a message the conversation still has"
            )
            return
        self.replay.compact(cut, env.line, env.id or f"line-{env.line}")

    def _elision(self, env: Elision) -> None:
        for target, stub in env.items:
            index = self.replay.find(target)
            if index < 0:
                self.analysis.replay_problems.append(
                    f"line {env.line}: the elision stubs {target[:80]!r}, "
                    "which is not a message the conversation still has"
                )
                continue
            self.replay.set_stub(index, stub)

    # -- after the last line ---------------------------------------------------------

    def finish(self, lines: int) -> Analysis:
        """Join markers to their operations, resolve them, add the whole-file findings.

        Args:
            lines: the transcript's line count, as the caller last read it.

        Returns:
            The analysis, complete. Feed nothing to this pass after.
        """
        a = self.analysis
        a.lines = lines
        for site in a.sites:
            if site.op_index >= 0:
                site.op = self.ops[site.op_index]
        for chosen, candidates, content in self.ambiguous:
            self._resolve(chosen, candidates, content)
        a.findings.extend(
            end_of_pass_findings(
                problems=a.problems,
                envelopes=a.envelopes,
                first=self.first,
                operations=self.ops,
                site_rows=self.site_rows,
                excerpt_sites=a.excerpt_sites,
            )
        )
        a.findings.sort(key=lambda f: f.line if f.line is not None else 0)
        return a

    def _resolve(self, chosen: MarkerSite, candidates: list[MarkerSite], content: str) -> None:
        """Pick the excerpt's own marker among several line-isolated ones."""
        art = self.ops.artifact(chosen.op_index) if chosen.op_index >= 0 else None
        best = chosen
        if art is not None:
            chars, elided = art.get("chars"), art.get("elided-chars")
            head_n = None
            if isinstance(chars, int) and isinstance(elided, int):
                head_n = head_tail_sizes(chars - elided)[0]
            for cand in candidates:
                m = cand.marker
                same = m.file == art.get("file") and m.digest == art.get("digest")
                if same and (head_n is None or graphemes.count(content[: m.start - 1]) == head_n):
                    best = cand
                    break
        if best is not chosen:
            chosen.quoted, chosen.shape = True, None
            best.quoted = False
            best.shape = _shape(content, best.marker)


def analyse(transcript: Transcript, progress: Callable[[int, int], None] | None = None) -> Analysis:
    """One streaming pass over an indexed transcript.

    The result keeps a reference to `transcript`: operations and replay entries
    are read back from it on access (a closed transcript reopens read-only for
    that).

    Args:
        transcript: an indexed transcript (`Transcript.open` or `build_index` done).
        progress: called as `(lines_done, lines_total)` every few thousand lines.
    """
    return AnalysisPass(transcript).run(progress)

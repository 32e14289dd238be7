"""The pass of an agent session whose lines each say what they are on their own.

Qwen Code's and OpenCode's sessions need no fold beyond joining what each batch
of lines found: their map (`map_qwen`, `map_opencode`) reads a run of lines into
an `AgentBatch` — the records it counted, its bad lines, its markers, the words
for a line (`SessionAnalysis.tag`) and its model calls — and `AgentPass` joins
the batches in file order. Written once here, so that what a session's pass
ends with (its folder, its findings) is one rule for both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from transcript_view.core.calls import CallFold, CallRun
from transcript_view.core.decoding import Measure, Measured
from transcript_view.core.formats.batches import fold_mapped
from transcript_view.core.formats.claude_code import problem_findings
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis, SpillSite
from transcript_view.core.formats.rules import site_notes
from transcript_view.core.found import Found
from transcript_view.core.keys import IdKeys
from transcript_view.core.transcript import LineProblem, Transcript


@dataclass(slots=True, eq=False)
class AgentBatch:
    """What the fold needs of lines `first` to `last` (made by the format's map)."""

    first: int
    last: int
    envelopes: int = 0
    types: dict[str, int] = field(default_factory=dict)
    problems: list[LineProblem] = field(default_factory=list)
    sites: list[SpillSite] = field(default_factory=list)
    tags: list[tuple[int, str]] = field(default_factory=list)
    calls: CallRun = field(default_factory=CallRun)


AgentMap = Callable[[Transcript, int, int, int, IdKeys], AgentBatch]
"""A format's map (module-level: it is sent to worker processes by name)."""


@dataclass(slots=True)
class AgentPass:
    """The fold of such a pass: batches of lines, in file order."""

    transcript: Transcript
    analysis: SessionAnalysis
    mapper: AgentMap
    id_keys: IdKeys = field(default_factory=IdKeys.new)
    model_calls: CallFold = field(default_factory=CallFold)

    def read(
        self,
        progress: Callable[[int, int], None] | None,
        workers: int | None,
        found: Found | None = None,
        measure: Measure | None = None,
        measured: Measured | None = None,
    ) -> None:
        """Fold every indexed line of the session, mapped in batches (`batches.mapped`)."""
        fold_mapped(
            self.transcript,
            self.mapper,
            self.id_keys,
            self.absorb,
            self.analysis,
            progress,
            workers,
            found,
            measure,
            measured,
        )

    def absorb(self, b: AgentBatch) -> None:
        """Fold the next batch."""
        a = self.analysis
        a.envelopes += b.envelopes
        a.type_counts.update(b.types)
        a.problems.extend(b.problems)
        a.sites.extend(b.sites)
        for line, words in b.tags:
            a.tag(line, words)
        self.model_calls.absorb(b.calls)

    def finish(self, lines: int, folder: Path | None) -> SessionAnalysis:
        """Name the files' folder (an agent's, every session's: no orphans are reported);
        turn problems into findings; note cuts."""
        a = self.analysis
        a.lines = lines
        a.calls = self.model_calls.calls
        a.artifact_dir = folder
        a.named = {s.file for s in a.sites if s.file is not None and s.form.stored}
        a.owns_orphans = False  # other sessions' files are there
        a.findings = problem_findings(a.problems)
        for site in a.sites:
            a.findings.extend(site_notes(site))
        a.findings.sort(key=lambda f: f.line or 0)
        return a


def analyse_agent(
    fmt: Format,
    mapper: AgentMap,
    folder: Callable[[Path], Path | None],
    transcript: Transcript,
    progress: Callable[[int, int], None] | None = None,
    *,
    workers: int | None = None,
    found: Found | None = None,
    measure: Measure | None = None,
    measured: Measured | None = None,
) -> SessionAnalysis:
    """One pass over a session of `fmt`, mapped by `mapper`; `folder` says where its files
    are, from the session's path (None: nowhere), whose markers' files the ledger checks.

    Args: as `core.formats.codex.analyse_codex`'s.
    """
    p = AgentPass(transcript, SessionAnalysis(fmt, transcript, None), mapper)
    total = transcript.line_count
    p.read(progress, workers, found, measure, measured)
    analysis = p.finish(total, folder(transcript.path))
    if progress is not None:
        progress(total, total)
    return analysis

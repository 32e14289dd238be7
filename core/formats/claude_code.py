"""Reading a Claude Code session: where its sidecars are, and every spill marker in it.

A session is `<session-uuid>.jsonl` with a sibling directory of the same stem
holding `tool-results/` (the sidecars) and `subagents/` (sidechain
transcripts, which write to the *same* `tool-results/`). Everything is found
relative to the JSONL, never from the absolute paths the markers carry: those
are of the machine that ran the session.

The pass reads what the model saw — the `tool_result` blocks of `user`
lines, or the `content-replacement` text that replaced one at request time —
and records each marker as a `SpillSite` with what can be checked about it.
`toolUseResult` is Claude Code's own record, never sent to the model: it is
read only for what it says about the sidecar (Bash's `persistedOutputPath`
and `persistedOutputSize`) and to notice the full output written inline.

The pass is a map and a fold (`batches`): `claude_lines.map_claude` reads a
run of lines into a batch of what they say by themselves, in a worker process
for a big file, and `ClaudePass` here folds the batches in file order, with
what needs earlier lines: the uuid tree's branches, the response a line
continues, a compaction's parent, the tool a result answers, and at the end
the content replacements. The same pass lists the model calls (`core.calls`):
each response is one, its size read from `message.usage`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from transcript_view.core.calls import CallFold
from transcript_view.core.decoding import Measure, Measured
from transcript_view.core.findings import Finding
from transcript_view.core.formats.batches import (
    LATER,
    LineIndex,
    fold_mapped,
    last_content_line,
)
from transcript_view.core.formats.claude_lines import (
    BRANCH,
    COMPACTION,
    CONTINUES,
    CONVERSATION,
    FIRST_BRANCH,
    HEAD_FIRST,
    SUBAGENTS,
    TOOL_RESULTS,
    Block,
    Branch,
    ClaudeBatch,
    Line,
    LineRecord,
    Message,
    MicrocompactRecord,
    Note,
    ResultContext,
    compaction_words,
    continues_words,
    line_record,
    make_site,
    map_claude,
    read_line,
    result_parts,
    session_dir,
)
from transcript_view.core.formats.claude_markers import find_spills
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import (
    ClearedResult,
    Microcompaction,
    SessionAnalysis,
    SpillForm,
    SpillSite,
)
from transcript_view.core.formats.rules import site_notes
from transcript_view.core.found import Found
from transcript_view.core.keys import IdKeys
from transcript_view.core.markers import is_safe_basename
from transcript_view.core.transcript import LineProblem, Transcript, TranscriptError

__all__ = [
    "SUBAGENTS",
    "TOOL_RESULTS",
    "ClaudeExemption",
    "ClaudePass",
    "analyse_claude",
    "claude_prompt",
    "is_hook_output",
    "problem_findings",
    "read_lines",
    "result_texts",
    "seen_length",
    "session_dir",
    "session_files",
    "sidecar_dir",
    "subagent_of",
]


# -- layout ----------------------------------------------------------------------------------


def sidecar_dir(transcript: Path) -> Path:
    """The `tool-results/` a transcript's markers are resolved in."""
    return session_dir(transcript) / TOOL_RESULTS


def session_files(transcript: Path) -> list[Path]:
    """Every transcript of the session: the main file, then each subagent file.

    Only regular `.jsonl` files inside the session directory are listed
    (symlinks are not followed); the main file is the session directory's
    sibling `<stem>.jsonl`.
    """
    directory = session_dir(transcript)
    out: list[Path] = []
    main = directory.with_name(directory.name + ".jsonl")
    if main.is_file() and not main.is_symlink():
        out.append(main)
    sub = directory / SUBAGENTS
    if sub.is_dir() and not sub.is_symlink():
        for path in sorted(sub.rglob("*.jsonl")):
            if path.is_file() and not path.is_symlink():
                out.append(path)
    if transcript not in out:
        out.append(transcript)
    return out


def subagent_of(transcript: Path) -> str | None:
    """The session a subagent's transcript belongs to, "" when its file does not say, or
    None for a session's main transcript.

    A subagent transcript is one Claude Code writes under `<session>/subagents/`
    (2.1.x) or, in the old layout, as `agent-<id>.jsonl` beside the sessions:
    every line of it is the subagent's (a sidechain), which the viewer says
    once, in its header, rather than on every line.
    """
    directory = session_dir(transcript)
    if directory.parent != transcript.parent:  # an ancestor: <session>/subagents/…
        return directory.name
    return "" if transcript.name.startswith("agent-") else None


def is_hook_output(name: str) -> bool:
    """`hook-*` files hold hook output, which no marker names."""
    return name.startswith("hook-")


# -- reading one line ------------------------------------------------------------------------


def _texts(content: object) -> Iterable[tuple[int, str]]:
    """A tool result's text parts as (part index, text); a plain string is part -1."""
    if isinstance(content, str):
        yield -1, content
    elif isinstance(content, list):
        for i, part in enumerate(content):
            if isinstance(part, Mapping) and part.get("type") == "text":
                text = part.get("text")
                if isinstance(text, str):
                    yield i, text


def result_texts(content: object) -> Iterator[tuple[int, int, int, str, str | None]]:
    """Every tool result text of a user line: (block, part, base, text, tool_use_id).

    `base` is where the text starts in the line's *seen text* (the texts
    joined by one LF), which is what a marker's offset counts in: the analysis
    and the viewer both number markers through this one function.
    """
    if not isinstance(content, list):
        return
    base = 0
    for b, block in enumerate(content):
        if not isinstance(block, Mapping) or block.get("type") != "tool_result":
            continue
        tid = block.get("tool_use_id")
        for part, text in _texts(block.get("content")):
            yield b, part, base, text, tid if isinstance(tid, str) else None
            base += len(text) + 1


def seen_length(content: object) -> int:
    """Length of a user line's seen text (where content replacements' texts start)."""
    end = 0
    for _, _, base, text, _ in result_texts(content):
        end = base + len(text) + 1
    return end


@dataclass(frozen=True, slots=True)
class ClaudeExemption:
    """Sidecars that are no orphan although no marker names them: hook output, and a file
    named after a tool call of the session (`<tool_use_id>.txt`, written before its marker).

    A value, not a closure, so that an analysis pickles (the pass server sends one back).
    """

    ids: frozenset[str]
    """Every tool_use id the session's transcripts mention."""

    def __call__(self, name: str) -> bool:
        """Whether `name` is exempt from being an orphan."""
        return is_hook_output(name) or _stem_of(name) in self.ids


@dataclass(slots=True)
class ClaudePass:
    """The fold of a Claude Code pass: batches of lines (`map_claude`), in file order.

    Keeps what a batch needs of the lines before it: the last conversation
    `uuid`, the response the last assistant line is part of. What only a few
    lines need of far earlier ones — a branch's or a compaction's parent, the
    tool a result answers when it was named before the result's batch, the
    result a content replacement replaces — is looked up at the end, all at
    once, in indexes of keys (`LineIndex`) rather than dicts of every id
    (a gigabyte has a million).
    """

    transcript: Transcript
    analysis: SessionAnalysis
    ids: set[str] = field(default_factory=set)
    """Every tool_use id the file mentions (a sidecar named after one is no orphan)."""
    replacements: list[tuple[int, str, str]] = field(default_factory=list)
    """(line, tool_use_id, replacement text) from `content-replacement` lines."""
    microcompactions: list[MicrocompactRecord] = field(default_factory=list)
    """The `microcompact_boundary` lines' records, in file order."""
    uuids: LineIndex = field(default_factory=LineIndex)
    """Conversation lines by `uuid`."""
    tools: LineIndex = field(default_factory=LineIndex)
    """Assistant lines by the id of each tool_use block that names its tool."""
    results: LineIndex = field(default_factory=LineIndex)
    """User lines by the tool_use id of each tool result with a text."""
    id_keys: IdKeys = field(default_factory=IdKeys.new)
    """The keys of the three indexes (the pass's own, given to every process that maps
    its lines)."""
    previous_uuid: str | None = None
    previous_error: int | None = None
    """The last conversation line, when it is a failed API call's."""
    response: tuple[object, object, int] | None = None
    """(message.id, requestId, first line) of the last assistant line's response."""
    late_sites: list[tuple[int, str, LineRecord]] = field(default_factory=list)
    """Sites whose tool was named before their batch: (index in the analysis's sites,
    tool_use_id, their line's record)."""
    notes_later: dict[int, list[Note]] = field(default_factory=dict)
    """The notes of lines that still hold a `(BRANCH, Branch, before)` or `(COMPACTION,
    trigger, parent, before)`: a parent only lines before `before` can have."""
    calls: CallFold = field(default_factory=CallFold)
    """The model calls so far (the analysis's at the end)."""

    def read(
        self,
        progress: Callable[[int, int], None] | None,
        workers: int | None,
        found: Found | None = None,
        measure: Measure | None = None,
        measured: Measured | None = None,
    ) -> None:
        """Fold every indexed line of the transcript, mapped in batches (`batches.mapped`).

        With `measure`, each line is measured where it is mapped (`fold_mapped`).
        """
        fold_mapped(
            self.transcript,
            map_claude,
            self.id_keys,
            self.absorb,
            self.analysis,
            progress,
            workers,
            found,
            measure,
            measured,
        )

    def absorb(self, b: ClaudeBatch) -> None:
        """Fold the next batch: decide what its lines left to the lines before them.

        A line leaves something only when no earlier line of its batch could
        decide it; it is decided against this pass as it is before the batch.
        """
        a = self.analysis
        a.envelopes += b.envelopes
        a.type_counts.update(b.types)
        a.problems.extend(b.problems)
        at = len(a.sites)
        self.late_sites.extend((at + i, tid, record) for i, tid, record in b.late_sites)
        a.sites.extend(b.sites)
        head = 0
        for line in b.notes_later:
            notes = b.tags[line]
            done: list[Note] = []
            for note in notes:
                if type(note) is str:
                    done.append(note)
                    continue
                code = note[0]
                if code == FIRST_BRANCH:
                    fork = cast(Branch, note[1])
                    previous = self.previous_uuid
                    if previous is not None and fork.parent != previous:
                        done.append((BRANCH, self._settled(fork), b.first))
                elif code == BRANCH:
                    done.append((BRANCH, self._settled(cast(Branch, note[1])), b.first))
                elif code == COMPACTION:
                    done.append((*note, b.first))
                elif code == CONTINUES:
                    head = line
                    last = self.response
                    if last is not None and (note[1], note[2]) == last[:2]:
                        head = last[2]
                        done.append(continues_words(head))
                else:
                    done.append(continues_words(head))
            if any(type(note) is tuple for note in done):
                self.notes_later[line] = done
                b.tags[line] = []  # keeps the line's place until `finish` words its notes
            elif done:
                b.tags[line] = done
            else:
                del b.tags[line]
        a.tags.update(cast(dict[int, list[str]], b.tags))  # every note is words by now
        a.links.update(b.links)
        a.named |= b.named
        self.calls.absorb(b.calls)
        self.ids |= b.ids
        self.uuids.add(b.uuid_keys, b.uuid_lines)
        self.tools.add(b.tool_keys, b.tool_lines)
        self.results.add(b.result_keys, b.result_lines)
        if b.first_root is not None and self.previous_uuid is not None:
            a.branches.append((b.first_root, 0))  # not the file's first line: a root
        if b.last_uuid is not None:
            self.previous_uuid = b.last_uuid
            self.previous_error = b.last_error
        if b.response is not LATER:
            response = b.response
            if response is not None and response[2] == HEAD_FIRST:
                response = (response[0], response[1], head)
            self.response = response
        self.replacements.extend(b.replacements)
        self.microcompactions.extend(b.microcompactions)
        a.branches.extend(b.branches)
        a.sides.extend(b.sides)

    def _settled(self, fork: Branch) -> Branch:
        """A branch's facts that were the lines' before its batch, from this pass as it is
        before the batch: the last response, and whether the line before was an API error."""
        response = fork.response
        if response is LATER:
            last = self.response
            response = last[:2] if last is not None else None
        error = self.previous_error if fork.error is LATER else fork.error
        return replace(fork, response=response, error=error)

    def finish(self, lines: int) -> SessionAnalysis:
        """Decide what waited for the end, apply content replacements, number the markers,
        and turn problems into findings."""
        a = self.analysis
        a.lines = lines
        a.calls = self.calls.calls
        self._notes()
        tids = {tid for _, tid, _ in self.late_sites} | {tid for _, tid, _ in self.replacements}
        named = self.tools.lines_of({self.id_keys(tid) for tid in tids})
        for i, tid, record in self.late_sites:
            site = a.sites[i]
            ctx = record.context(tid, self._tool(named, tid, site.line))
            a.sites[i] = replace(site, tool=ctx.tool, bash=ctx.bash)
        self._replace(named)
        self._microcompactions()
        a.branches.sort()
        a.sides.sort()
        a.sites.sort(key=lambda s: (s.line, s.offset))
        a.findings = problem_findings(a.problems)
        for site in a.sites:
            a.findings.extend(site_notes(site))
        a.findings.sort(key=lambda f: f.line or 0)
        a.exempt = ClaudeExemption(frozenset(self.ids))
        return a

    def _microcompactions(self) -> None:
        """Each microcompaction's cleared results: where their calls and results are, a marker
        on the boundary for each (its full output, the sidecar named after its id), and a
        note on the result's line that the model stopped seeing it there.

        A sidecar is `<id>.txt`, or `<id>.json` when only that is there (a result that
        was a list of text blocks); it is named, so it is no orphan and no "mirror".
        """
        a = self.analysis
        if not self.microcompactions:
            return
        tids = {tid for m in self.microcompactions for tid in m.tool_ids}
        keys = {self.id_keys(tid) for tid in tids}
        calls, results = self.tools.lines_of(keys), self.results.lines_of(keys)
        folder = a.artifact_dir
        # Each line is read once per question: boundaries may list one id again and again.
        defines, answers = functools.cache(self._defines), functools.cache(self._answers)
        names, result_bytes = functools.cache(self._names), functools.cache(self._result_bytes)
        for m in self.microcompactions:
            cleared: list[ClearedResult] = []
            for k, tid in enumerate(m.tool_ids):
                key = self.id_keys(tid)
                call = self._last(calls.get(key, ()), m.line, defines, tid)
                result = self._last(results.get(key, ()), m.line, answers, tid)
                cleared.append(ClearedResult(tid, call, result))
                name = _cleared_sidecar(folder, tid)
                safe = is_safe_basename(name)
                if safe:
                    a.named.add(name)
                a.sites.append(
                    SpillSite(
                        line=m.line,
                        offset=k,
                        format=Format.CLAUDE_CODE,
                        form=SpillForm.MICROCOMPACTED,
                        block=-1,
                        start=0,
                        end=0,
                        file=name,
                        safe_name=safe,
                        tool_use_id=tid,
                        tool=names(call, tid) if call is not None else None,
                        persisted_size=result_bytes(result, tid),
                        cleared_result=result,
                        text=tid,
                    )
                )
                words = (
                    f"cleared from what the model saw by the microcompaction on line "
                    f"{m.line:,}: from there on it got [Old tool result content cleared]"
                )
                if result is not None and words not in a.tags.get(result, ()):
                    a.tag(result, words)
            a.microcompactions.append(
                Microcompaction(m.line, m.trigger, m.pre_tokens, m.tokens_saved, tuple(cleared))
            )

    def _result_bytes(self, line: int | None, tid: str) -> int | None:
        """The UTF-8 size of a result that is one string (what its sidecar holds whole)."""
        obj = self._read(line) if line is not None else None
        message = obj.message if obj is not None else None
        content = message.content if type(message) is Message else None
        for block in content if type(content) is list else ():
            if type(block) is Block and block.type == "tool_result" and block.tool_use_id == tid:
                inner = block.content
                return len(inner.encode("utf-8", "surrogatepass")) if type(inner) is str else None
        return None

    def _notes(self) -> None:
        """Word the notes that name a parent, now that every conversation line is indexed."""
        tags = self.analysis.tags
        later = self.notes_later.values()
        asked = {_parent(n) for notes in later for n in notes if type(n) is tuple}
        found = self.uuids.lines_of({self.id_keys(u) for u in asked})
        for line, notes in self.notes_later.items():
            words: list[str] = []
            for note in notes:
                if isinstance(note, str):
                    words.append(note)
                    continue
                parent, before = _parent(note), note[-1]
                at = self._last(found.get(self.id_keys(parent), ()), before, self._uuid_at, parent)
                if note[0] == BRANCH:
                    if at is not None and not self._parents(at, note[1]):
                        words.append(note[1].words(at))
                        self.analysis.branches.append((line, at))
                    elif at is not None:
                        self.analysis.sides.append((line, at))
                else:
                    words.append(compaction_words(note[1], at))
            if words:
                tags[line] = words
            else:
                del tags[line]

    def _replace(self, named: dict[int, list[int]]) -> None:
        """Apply the content replacements, in order.

        A replacement's text is what the model saw instead of a result's, so
        its markers are placed on the result's line, after the line's own
        texts, and the result's own markers go. The result is its tool_use
        id's last one in the file; its line is read again for what its markers
        carry (replacements are rare; keeping every result's context for them
        would not be).
        """
        if not self.replacements:
            return
        a = self.analysis
        found = self.results.lines_of({self.id_keys(tid) for _, tid, _ in self.replacements})
        # Each result's markers, by its line and id: its own, then its last replacement's.
        current: dict[tuple[int, str], list[SpillSite]] = {}
        for s in a.sites:
            if s.tool_use_id:
                current.setdefault((s.line, s.tool_use_id), []).append(s)
        gone: set[int] = set()
        results: dict[str, int | None] = {}
        contexts: dict[str, ResultContext] = {}
        line_end: dict[int, int] = {}
        for line, tid, text in self.replacements:
            if tid not in results:
                key = self.id_keys(tid)
                results[tid] = self._last(found.get(key, ()), None, self._answers, tid)
            result = results[tid]
            if result is None:
                at = line
                ctx = ResultContext(tid, self._tool(named, tid, None))
            else:
                at = result
                if tid not in contexts:
                    contexts[tid], end = self._result_line(at, tid, self._tool(named, tid, at))
                    line_end.setdefault(at, end)
                ctx = contexts[tid]
                gone.update(id(s) for s in current.get((at, tid), ()))
            base = line_end.get(at, 0)
            line_end[at] = base + len(text) + 1
            new = []
            for spill in find_spills(text):
                site = make_site(at, base, -1, -1, text, spill, ctx, replaced_at=line)
                if site.file is not None and site.safe_name:
                    a.named.add(site.file)
                new.append(site)
            a.sites.extend(new)
            if result is not None:
                current[at, tid] = new
                a.replaced.setdefault(at, {})[tid] = line
        if gone:
            a.sites = [s for s in a.sites if id(s) not in gone]

    @staticmethod
    def _last(
        lines: Iterable[int],
        before: int | None,
        holds: Callable[[int, str], bool],
        value: str,
    ) -> int | None:
        """The last of `lines` before `before` (None: any) that really holds `value`."""
        for line in sorted(lines, reverse=True):
            if (before is None or line < before) and holds(line, value):
                return line
        return None

    def _tool(self, named: dict[int, list[int]], tid: str, before: int | None) -> str | None:
        """The tool a tool_use id names as of line `before` (None: the end of the file)."""
        at = self._last(named.get(self.id_keys(tid), ()), before, self._defines, tid)
        return self._names(at, tid) if at is not None else None

    def _defines(self, line: int, tid: str) -> bool:
        return self._names(line, tid) is not None

    def _read(self, line: int) -> Line | None:
        start, _ = self.transcript.line_span(line)
        obj = read_line(self.transcript.raw_line(line), line, start, is_last=False)
        return obj if type(obj) is Line else None

    def _uuid_at(self, line: int, uuid: str) -> bool:
        """Whether `line` is a conversation line with this `uuid`."""
        obj = self._read(line)
        return (
            obj is not None
            and type(obj.type) is str
            and obj.type in CONVERSATION
            and (obj.uuid == uuid)
        )

    def _parents(self, line: int, fork: Branch) -> bool:
        """Whether the parent on `line` is of the branching line's step (`Branch.parented_by`)."""
        obj = self._read(line)
        if obj is None or obj.type != "assistant" or type(obj.message) is not Message:
            return False
        msg_id, content = obj.message.id, obj.message.content
        called = [
            b.id
            for b in (content if type(content) is list else ())
            if type(b) is Block and b.type == "tool_use" and type(b.id) is str
        ]
        return fork.parented_by((msg_id, obj.requestId) if msg_id is not None else None, called)

    def _names(self, line: int, tid: str) -> str | None:
        """The tool an assistant line's last tool_use block with this id names, if any."""
        obj = self._read(line)
        if obj is None or obj.type != "assistant" or type(obj.message) is not Message:
            return None
        name = None
        content = obj.message.content
        for block in content if type(content) is list else ():
            if (
                type(block) is Block
                and block.type == "tool_use"
                and block.id == tid
                and type(block.name) is str
            ):
                name = block.name
        return name

    def _answers(self, line: int, tid: str) -> bool:
        """Whether a user line has a tool result with a text for this tool_use id."""
        obj = self._read(line)
        if obj is None or obj.type != "user" or type(obj.message) is not Message:
            return False
        return any(t == tid for _, _, _, _, t in result_parts(obj.message.content))

    def _result_line(self, at: int, tid: str, tool: str | None) -> tuple[ResultContext, int]:
        """A result's context and its line's seen length, from the line read again."""
        obj = self._read(at)
        if obj is None:  # the file changed under the pass
            return ResultContext(tid, tool), 0
        message = obj.message
        content = message.content if type(message) is Message else None
        parts = result_parts(content)
        end = parts[-1][2] + len(parts[-1][3]) + 1 if parts else 0
        return line_record(obj.toolUseResult).context(tid, tool), end


def _parent(note: tuple[Any, ...]) -> str:
    """The parent uuid a `(BRANCH, Branch, before)` or `(COMPACTION, trigger, parent,
    before)` note looks for."""
    return cast(str, note[1].parent if note[0] == BRANCH else note[2])


def claude_prompt(obj: Mapping[str, Any]) -> str | None:
    """What the user typed on a `user` line (not a tool result, a meta line or a sidechain).

    The sessions listing shows a session's first one; the pass keeps it too.
    """
    if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isSidechain"):
        return None
    if obj.get("isCompactSummary"):
        return None
    message = obj.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, list):
        content = next(
            (b.get("text") for b in content if isinstance(b, Mapping) and b.get("type") == "text"),
            None,
        )
    if isinstance(content, str) and content.strip() and not content.startswith("<"):
        return content[:200]
    return None


def _cleared_sidecar(folder: Path | None, tid: str) -> str:
    """The sidecar of a microcompacted result: `<id>.txt`, or `<id>.json` if only that is
    there (looked up in the session's own folder, by a plain name only)."""
    name = f"{tid}.txt"
    if folder is not None and is_safe_basename(name):
        other = f"{tid}.json"
        try:
            if not (folder / name).exists() and (folder / other).is_file():
                return other
        except OSError:
            pass
    return name


def _stem_of(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


def problem_findings(problems: Iterable[LineProblem]) -> list[Finding]:
    """A line that is not a JSON object, as `--check` reports it for every format."""
    return [
        Finding(
            p.kind if p.kind in ("torn-tail", "malformed-line") else "malformed-line",
            p.line,
            None,
            p.message,
        )
        for p in problems
    ]


def read_lines(
    transcript: Transcript,
    feed: Callable[[int, int, bytes, bool], None],
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Feed every indexed line's bytes to `feed(line, offset, raw, is_last)`; returns the count.

    The last line with content is flagged so that a bad one is a torn tail.
    Lines are read a few megabytes at a time (`Transcript.raw_chunks`), not
    one `pread` each.
    """
    total = transcript.line_count
    last = last_content_line(transcript)
    step = 2048
    for first, offset, parts in transcript.raw_chunks():
        line = first
        for raw in parts:
            feed(line, offset, raw, line == last)
            offset += len(raw) + 1
            line += 1
        if progress is not None and line - 1 >= step:
            progress(line - 1, total)
            step = line - 1 + 2048
    if progress is not None:
        progress(total, total)
    return total


def analyse_claude(
    transcript: Transcript,
    progress: Callable[[int, int], None] | None = None,
    *,
    workers: int | None = None,
    found: Found | None = None,
    measure: Measure | None = None,
    measured: Measured | None = None,
) -> SessionAnalysis:
    """One pass over a Claude Code transcript, with the session's other files for orphans.

    Sidecars are shared by the whole session, so a file is an orphan only if no
    transcript of the session (main, every subagent) names it or the tool call
    it is named after.

    Args:
        transcript: an indexed transcript.
        progress: called as `(lines_done, lines_total)` after each batch of lines.
        workers: processes to map lines in (default: `core.parallel.workers_for` its size).
        found: told the lines of markers and line problems as batches are read.
        measure: the caller's number for each line of this transcript, taken where
            the line is mapped (`core.decoding.Measure`; the viewer's row count).
        measured: told each batch's measures, in file order.
    """
    p = ClaudePass(
        transcript,
        SessionAnalysis(Format.CLAUDE_CODE, transcript, sidecar_dir(transcript.path)),
    )
    total = transcript.line_count
    p.read(progress, workers, found, measure, measured)
    analysis = p.finish(total)
    if progress is not None:
        progress(total, total)
    home = session_dir(transcript.path)
    main = home.with_name(home.name + ".jsonl")
    analysis.owns_orphans = transcript.path == main or not main.is_file()
    ids = set(p.ids)
    for other in session_files(transcript.path):
        if other == transcript.path:
            continue
        named, theirs = _names_in(other, workers)
        analysis.named |= named
        ids |= theirs
    analysis.exempt = ClaudeExemption(frozenset(ids))
    return analysis


def _names_in(path: Path, workers: int | None) -> tuple[set[str], set[str]]:
    """Sidecar names and tool ids another transcript of the session mentions."""
    try:
        with Transcript(path) as t:
            t.build_index()
            p = ClaudePass(t, SessionAnalysis(Format.CLAUDE_CODE, t, sidecar_dir(path)))
            p.read(None, workers)
            p.finish(t.line_count)
            return p.analysis.named, p.ids
    except (OSError, TranscriptError):
        return set(), set()

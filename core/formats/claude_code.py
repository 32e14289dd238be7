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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transcript_view.core.findings import Finding
from transcript_view.core.formats.claude_markers import (
    PREVIEW_UNITS,
    FoundSpill,
    basename,
    find_spills,
)
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis, SpillForm, SpillSite
from transcript_view.core.formats.rules import site_notes
from transcript_view.core.markers import is_safe_basename
from transcript_view.core.transcript import (
    LineProblem,
    Transcript,
    TranscriptError,
)

#: Where sidecars live inside a session directory.
TOOL_RESULTS = "tool-results"
SUBAGENTS = "subagents"


# -- layout ----------------------------------------------------------------------------------


def _stem(path: Path) -> str:
    name = path.name
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


def session_dir(transcript: Path) -> Path:
    """The session directory a transcript belongs to.

    A subagent file (`…/<session>/subagents/agent-x.jsonl`, or deeper under
    `subagents/workflows/…`) belongs to its parent session; a main session
    file to the sibling directory named by its stem.
    """
    parents = transcript.parents
    # Only the layouts Claude Code writes: <session>/subagents/<f>.jsonl and
    # <session>/subagents/workflows/<wf>/<f>.jsonl. A folder called "subagents"
    # further up is somebody's directory name, not a session.
    if len(parents) > 1 and parents[0].name == SUBAGENTS:
        return parents[1]
    if len(parents) > 3 and parents[1].name == "workflows" and parents[2].name == SUBAGENTS:
        return parents[3]
    return transcript.with_name(_stem(transcript))


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


def _cut_words(form: SpillForm, cut: int | None) -> str | None:
    if form is SpillForm.CLEARED:
        return "the whole old result (microcompaction)"
    if cut is None:
        return None
    return f"{cut:,} characters"


#: Line types that make up the conversation's `uuid` chain.
_CONVERSATION = frozenset({"user", "assistant", "system"})
#: What an `agentId` may be before it is made into a file name.
_AGENT_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


@dataclass(frozen=True, slots=True)
class _Context:
    """What a tool result's line says about it, beyond its text (for its markers)."""

    tid: str | None
    tool: str | None
    bash: bool = False
    persisted_size: int | None = None
    persisted_name: str | None = None
    stdout_chars: int | None = None
    """Length of `toolUseResult.stdout` (the string itself is not kept: it can be 5 MB)."""


@dataclass(slots=True)
class _Result:
    """A tool result's place, kept until the end for content replacements."""

    line: int
    sites: list[SpillSite]
    context: _Context


#: The most of a marker's own text kept on its site (what `c` copies).
MARKER_TEXT_CHARS = 400


def make_site(
    line: int,
    base: int,
    block: int,
    part: int,
    text: str,
    found: FoundSpill,
    ctx: _Context,
    replaced_at: int | None = None,
) -> SpillSite:
    """The one way a Claude Code marker becomes a site (results and replacements alike)."""
    name = found.file
    return SpillSite(
        line=line,
        offset=base + found.start,
        format=Format.CLAUDE_CODE,
        form=found.form,
        block=block,
        part=part,
        start=found.start,
        end=found.end,
        file=name,
        path=found.path,
        safe_name=name is None or is_safe_basename(name),
        size_text=found.size_text,
        preview=found.preview,
        has_more=found.has_more,
        cut=_cut_words(found.form, found.cut),
        tool_use_id=ctx.tid,
        tool=ctx.tool,
        bash=ctx.bash,
        persisted_size=ctx.persisted_size,
        persisted_name=ctx.persisted_name,
        inline_chars=_inline(found.preview, ctx.stdout_chars),
        replaced_at=replaced_at,
        text=text[found.start : min(found.end, found.start + MARKER_TEXT_CHARS)],
    )


@dataclass(slots=True)
class ClaudePass:
    """One pass over a Claude Code transcript, fed lines in file order."""

    transcript: Transcript
    analysis: SessionAnalysis
    tools: dict[str, str] = field(default_factory=dict)
    """tool_use id -> tool name, from the assistant lines."""
    ids: set[str] = field(default_factory=set)
    """Every tool_use id the file mentions (a sidecar named after one is no orphan)."""
    results: dict[str, _Result] = field(default_factory=dict)
    line_end: dict[int, int] = field(default_factory=dict)
    """Where the next content-replacement text of a line starts in its seen text."""
    replacements: list[tuple[int, str, str]] = field(default_factory=list)
    """(line, tool_use_id, replacement text) from `content-replacement` lines."""
    uuid_line: dict[str, int] = field(default_factory=dict)
    """Line of each `uuid` (to say where a branch or a compaction's parent is)."""
    previous_uuid: str | None = None
    response: tuple[object, object, int] | None = None
    """(message.id, requestId, line) of the last assistant line."""

    def feed(self, line: int, offset: int, raw: bytes, *, is_last: bool) -> None:
        """Take one line."""
        a = self.analysis
        parsed = a.take(line, offset, raw, is_last=is_last)
        if parsed is None:
            return
        kind = parsed.get("type")
        self._tree(line, parsed)
        if kind == "assistant":
            self._assistant(line, parsed)
        elif kind == "user":
            self._user(line, parsed)
        elif kind == "content-replacement":
            self._replacement(line, parsed)
        elif kind == "system" and parsed.get("subtype") == "compact_boundary":
            meta = parsed.get("compactMetadata")
            trigger = meta.get("trigger") if isinstance(meta, Mapping) else None
            before = self._line_of(parsed.get("logicalParentUuid"))
            where = f"; the conversation through line {before:,} was summarised" if before else ""
            a.tag(line, f"compaction ({trigger or 'trigger not recorded'}){where}")

    def _line_of(self, uuid: object) -> int | None:
        return self.uuid_line.get(uuid) if isinstance(uuid, str) else None

    def _tree(self, line: int, obj: Mapping[str, Any]) -> None:
        """Notice branches of the `uuid`/`parentUuid` tree: a rewind, retry or fork.

        Only the conversation's own lines count: hooks' `progress` and
        `attachment` entries hang off the chain too (anthropics/claude-code#35024),
        and a turn after one is no branch.
        """
        uuid = obj.get("uuid")
        if not isinstance(uuid, str) or obj.get("type") not in _CONVERSATION:
            return
        parent = obj.get("parentUuid")
        if obj.get("isSidechain") is True:
            self.analysis.tag(line, "sidechain (a subagent's turn)")
        if (
            isinstance(parent, str)
            and self.previous_uuid is not None
            and parent != self.previous_uuid
            and parent in self.uuid_line
        ):
            self.analysis.tag(
                line,
                f"branches from line {self.uuid_line[parent]:,}, not the line before it "
                "(a rewind, retry or fork)",
            )
        self.uuid_line[uuid] = line
        self.previous_uuid = uuid

    def _assistant(self, line: int, obj: Mapping[str, Any]) -> None:
        message = obj.get("message")
        msg_id = message.get("id") if isinstance(message, Mapping) else None
        request = obj.get("requestId")
        if msg_id is not None and self.response is not None:
            last_id, last_request, first = self.response
            if (msg_id, request) == (last_id, last_request):
                self.analysis.tag(line, f"continues the response that starts on line {first:,}")
                line = first
        self.response = (msg_id, request, line) if msg_id is not None else None
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                tid, name = block.get("id"), block.get("name")
                if isinstance(tid, str):
                    self.ids.add(tid)
                    if isinstance(name, str):
                        self.tools[tid] = name

    def _user(self, line: int, obj: Mapping[str, Any]) -> None:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        a = self.analysis
        if obj.get("isCompactSummary") is True:
            a.tag(line, "the compaction's summary: what the model continued from")
        if not isinstance(content, list):
            return
        tur = obj.get("toolUseResult")
        extra = tur if isinstance(tur, Mapping) else {}
        agent = extra.get("agentId")
        if isinstance(agent, str) and agent:
            self._subagent(line, agent)
        persisted = extra.get("persistedOutputPath")
        persisted_name = basename(persisted) if isinstance(persisted, str) else None
        if persisted_name:
            self.analysis.named.add(persisted_name)
        size = extra.get("persistedOutputSize")
        stdout = extra.get("stdout")
        for block in content:
            if isinstance(block, Mapping) and isinstance(block.get("tool_use_id"), str):
                self.ids.add(block["tool_use_id"])
        by_result: dict[str, tuple[_Context, list[SpillSite]]] = {}
        persisted_size = size if isinstance(size, int) and not isinstance(size, bool) else None
        for b, part, base, text, tid in result_texts(content):
            tool = self.tools.get(tid) if tid is not None else None
            bash = (
                tool == "Bash"
                or "persistedOutputPath" in extra
                or (tool is None and isinstance(stdout, str) and "stderr" in extra)
            )
            chars = len(stdout) if isinstance(stdout, str) else None
            ctx = _Context(tid, tool, bash, persisted_size, persisted_name, chars)
            sites = by_result.setdefault(tid or "", (ctx, []))[1]
            for found in find_spills(text):
                site = make_site(line, base, b, part, text, found, ctx)
                if site.file is not None and site.safe_name:
                    self.analysis.named.add(site.file)
                sites.append(site)
                self.analysis.sites.append(site)
        end = seen_length(content)
        for tid, (ctx, sites) in by_result.items():
            if tid:
                self.results[tid] = _Result(line, sites, ctx)
        self.line_end[line] = end

    def _subagent(self, line: int, agent: str) -> None:
        """A Task's result names its subagent: link its transcript, if it is there.

        The id becomes a file name, so it must be a plain id; the file must be a
        regular file directly in the session's `subagents/` (2.1.x) or beside
        the session (the old layout).
        """
        a = self.analysis
        if not _AGENT_ID.match(agent):
            a.tag(line, "subagent: its agentId is not a plain id (not looked for)")
            return
        name = f"agent-{agent}.jsonl"
        here = self.transcript.path
        for folder, shown in (
            (session_dir(here) / SUBAGENTS, f"{SUBAGENTS}/{name}"),
            (here.parent, name),
        ):
            sub = folder / name
            if sub.is_file() and not sub.is_symlink() and sub != here:
                a.links[line] = sub
                a.tag(line, f"subagent transcript: {shown} (enter opens it)")
                return
        a.tag(line, f"subagent transcript: {SUBAGENTS}/{name} (not found)")

    def _replacement(self, line: int, obj: Mapping[str, Any]) -> None:
        reps = obj.get("replacements")
        if not isinstance(reps, list):
            return
        for rep in reps:
            if not isinstance(rep, Mapping):
                continue
            tid, text = rep.get("toolUseId"), rep.get("replacement")
            if isinstance(tid, str) and isinstance(text, str):
                self.ids.add(tid)
                self.replacements.append((line, tid, text))

    def finish(self, lines: int) -> SessionAnalysis:
        """Apply content replacements, number the markers, and turn problems into findings."""
        a = self.analysis
        a.lines = lines
        for line, tid, text in self.replacements:
            result = self.results.get(tid)
            at = result.line if result is not None else line
            if result is not None:
                gone = {id(s) for s in result.sites}
                a.sites = [s for s in a.sites if id(s) not in gone]
            new = []
            base = self.line_end.get(at, 0)
            self.line_end[at] = base + len(text) + 1
            ctx = result.context if result is not None else _Context(tid, self.tools.get(tid))
            for found in find_spills(text):
                site = make_site(at, base, -1, -1, text, found, ctx, replaced_at=line)
                if site.file is not None and site.safe_name:
                    a.named.add(site.file)
                new.append(site)
            a.sites.extend(new)
            if result is not None:
                result.sites = new
        a.sites.sort(key=lambda s: (s.line, s.offset))
        a.findings = problem_findings(a.problems)
        for site in a.sites:
            a.findings.extend(site_notes(site))
        a.findings.sort(key=lambda f: f.line or 0)
        ids = self.ids
        a.exempt = lambda name: is_hook_output(name) or _stem_of(name) in ids
        return a


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


def _stem_of(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


def _inline(preview: str | None, stdout_chars: int | None) -> int | None:
    """The inline copy's length when `toolUseResult.stdout` holds far more than the preview."""
    if preview is None or stdout_chars is None:
        return None
    if stdout_chars > max(2 * len(preview), 2 * PREVIEW_UNITS):
        return stdout_chars
    return None


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
    last = total
    while last > 0 and not transcript.raw_line(last, 4096).strip():
        last -= 1
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
    transcript: Transcript, progress: Callable[[int, int], None] | None = None
) -> SessionAnalysis:
    """One pass over a Claude Code transcript, with the session's other files for orphans.

    Sidecars are shared by the whole session, so a file is an orphan only if no
    transcript of the session (main, every subagent) names it or the tool call
    it is named after.
    """
    p = ClaudePass(
        transcript,
        SessionAnalysis(Format.CLAUDE_CODE, transcript, sidecar_dir(transcript.path)),
    )
    lines = read_lines(
        transcript, lambda n, off, raw, last: p.feed(n, off, raw, is_last=last), progress
    )
    analysis = p.finish(lines)
    home = session_dir(transcript.path)
    main = home.with_name(home.name + ".jsonl")
    analysis.owns_orphans = transcript.path == main or not main.is_file()
    for other in session_files(transcript.path):
        if other == transcript.path:
            continue
        named, ids = _names_in(other)
        analysis.named |= named
        p.ids |= ids
    return analysis


def _names_in(path: Path) -> tuple[set[str], set[str]]:
    """Sidecar names and tool ids another transcript of the session mentions."""
    try:
        with Transcript(path) as t:
            t.build_index()
            p = ClaudePass(t, SessionAnalysis(Format.CLAUDE_CODE, t, sidecar_dir(path)))
            read_lines(t, lambda n, off, raw, last: p.feed(n, off, raw, is_last=last))
            p.finish(t.line_count)
            return p.analysis.named, p.ids
    except (OSError, TranscriptError):
        return set(), set()

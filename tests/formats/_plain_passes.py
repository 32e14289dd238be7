"""The plain Claude Code and Codex passes: the definition the fast ones are held to.

These are the passes as they were before they were a map and a fold: one
line at a time, in file order, each line parsed whole by the standard
library's parser (`parse_json_line_plain`) into a dict and read with
`dict.get`, every piece of state kept as it comes. Slow and obviously
right; `test_session_passes.py` checks that the fast passes (msgspec shapes,
batches mapped anywhere, folded in order) give exactly what these give.

Only what a marker *is* (`find_spills`, `find_notices`, `make_site`,
`site_notes`, `output_copy`) and where a session's files are come from the library:
those are the same functions either way, not what the fast path changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from transcript_view.core.formats.claude_code import (
    SUBAGENTS,
    is_hook_output,
    problem_findings,
    result_texts,
    seen_length,
    session_dir,
    session_files,
    sidecar_dir,
)
from transcript_view.core.formats.claude_lines import ResultContext, make_site, output_copy
from transcript_view.core.formats.claude_markers import basename, find_spills
from transcript_view.core.formats.codex import OUTPUT_TYPES, find_notices, output_parts
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis, SpillSite
from transcript_view.core.formats.rules import site_notes
from transcript_view.core.transcript import LineProblem, Transcript, parse_json_line_plain

_CONVERSATION = frozenset({"user", "assistant", "system"})
_AGENT_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def _lines(t: Transcript) -> list[tuple[int, int, bytes, bool]]:
    """Every line by `pread`, one at a time, the last one with content flagged."""
    total = t.line_count
    last = total
    while last > 0 and not t.raw_line(last, 4096).strip():
        last -= 1
    return [(n, t.line_span(n)[0], t.raw_line(n), n == last) for n in range(1, total + 1)]


def _take(a: SessionAnalysis, line: int, offset: int, raw: bytes, is_last: bool) -> Any:
    parsed = parse_json_line_plain(raw, line, offset, is_last=is_last)
    if parsed is None:
        return None
    if isinstance(parsed, LineProblem):
        a.problems.append(parsed)
        return None
    a.envelopes += 1
    kind = parsed.get("type")
    a.type_counts[kind if isinstance(kind, str) else "?"] += 1
    return parsed


@dataclass(slots=True)
class _Result:
    line: int
    sites: list[SpillSite]
    context: ResultContext


@dataclass(slots=True)
class PlainClaude:
    """The plain Claude Code pass."""

    transcript: Transcript
    analysis: SessionAnalysis
    tools: dict[str, str] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)
    results: dict[str, _Result] = field(default_factory=dict)
    line_end: dict[int, int] = field(default_factory=dict)
    replacements: list[tuple[int, str, str]] = field(default_factory=list)
    uuid_line: dict[str, int] = field(default_factory=dict)
    previous_uuid: str | None = None
    previous_error: int | None = None
    response: tuple[object, object, int] | None = None
    turn_at: dict[int, tuple[tuple[object, object] | None, list[str]]] = field(default_factory=dict)

    def feed(self, line: int, offset: int, raw: bytes, is_last: bool) -> None:
        a = self.analysis
        parsed = _take(a, line, offset, raw, is_last)
        if parsed is None:
            return
        kind = parsed.get("type")
        if not isinstance(kind, str):
            return  # no line of the conversation (the pass once raised on an unhashable one)
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
            uuid = parsed.get("logicalParentUuid")
            before = self.uuid_line.get(uuid) if isinstance(uuid, str) else None
            where = f"; the conversation through line {before:,} was summarised" if before else ""
            a.tag(line, f"compaction ({trigger or 'trigger not recorded'}){where}")

    def _tree(self, line: int, obj: Mapping[str, Any]) -> None:
        uuid = obj.get("uuid")
        kind = obj.get("type")
        if not isinstance(uuid, str) or kind not in _CONVERSATION:
            return
        parent = obj.get("parentUuid")
        if (
            isinstance(parent, str)
            and self.previous_uuid is not None
            and parent != self.previous_uuid
            and parent in self.uuid_line
            and parent != obj.get("sourceToolAssistantUUID")
        ):
            at = self.uuid_line[parent]
            self._branch(line, obj, at)
        self.uuid_line[uuid] = line
        self.previous_uuid = uuid
        api_error = kind == "system" and obj.get("subtype") == "api_error"
        self.previous_error = line if api_error else None

    def _branch(self, line: int, obj: Mapping[str, Any], at: int) -> None:
        """A parent that is not the line before: a branch unless it holds a tool_use the
        line answers or is a line of its response (the line's own, for an assistant line;
        the last assistant line's, for a line of tool results)."""
        message = obj.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        answers = {b["tool_use_id"] for b in results if isinstance(b.get("tool_use_id"), str)}
        mine: tuple[object, object] | None = None
        if obj.get("type") == "assistant":
            msg_id = message.get("id") if isinstance(message, Mapping) else None
            mine = (msg_id, obj.get("requestId")) if msg_id is not None else None
        elif results and self.response is not None:
            mine = self.response[:2]
        theirs, called = self.turn_at.get(at, (None, []))
        if (theirs is not None and theirs == mine) or any(t in answers for t in called):
            return
        if (
            obj.get("type") == "user"
            and not results
            and obj.get("isMeta") is not True
            and obj.get("isCompactSummary") is not True
        ):
            why = "a prompt sent again after a rewind"
        elif self.previous_error is not None:
            why = f"a retry after the failed API call on line {self.previous_error:,}"
        else:
            why = "a rewind, retry or fork"
        self.analysis.tag(line, f"branches from line {at:,}, not the line before it ({why})")

    def _assistant(self, line: int, obj: Mapping[str, Any]) -> None:
        message = obj.get("message")
        msg_id = message.get("id") if isinstance(message, Mapping) else None
        request = obj.get("requestId")
        called: list[str] = []
        self.turn_at[line] = ((msg_id, request) if msg_id is not None else None, called)
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
                    called.append(tid)
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
            a.named.add(persisted_name)
        size = extra.get("persistedOutputSize")
        stdout = extra.get("stdout")
        for block in content:
            if isinstance(block, Mapping) and isinstance(block.get("tool_use_id"), str):
                self.ids.add(block["tool_use_id"])
        by_result: dict[str, tuple[ResultContext, list[SpillSite]]] = {}
        persisted_size = size if isinstance(size, int) and not isinstance(size, bool) else None
        for b, part, base, text, tid in result_texts(content):
            tool = self.tools.get(tid) if tid is not None else None
            bash = (
                tool == "Bash"
                or "persistedOutputPath" in extra
                or (tool is None and isinstance(stdout, str) and "stderr" in extra)
            )
            copy = output_copy(tur)
            ctx = ResultContext(tid, tool, bash, persisted_size, persisted_name, copy)
            sites = by_result.setdefault(tid or "", (ctx, []))[1]
            for found in find_spills(text):
                site = make_site(line, base, b, part, text, found, ctx)
                if site.file is not None and site.safe_name:
                    a.named.add(site.file)
                sites.append(site)
                a.sites.append(site)
        for tid, (ctx, sites) in by_result.items():
            if tid:
                self.results[tid] = _Result(line, sites, ctx)
        self.line_end[line] = seen_length(content)

    def _subagent(self, line: int, agent: str) -> None:
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
            ctx = result.context if result is not None else ResultContext(tid, self.tools.get(tid))
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
        return a


def _plain_claude(t: Transcript) -> PlainClaude:
    p = PlainClaude(t, SessionAnalysis(Format.CLAUDE_CODE, t, sidecar_dir(t.path)))
    for line, offset, raw, is_last in _lines(t):
        p.feed(line, offset, raw, is_last)
    p.finish(t.line_count)
    return p


def plain_claude(t: Transcript) -> tuple[SessionAnalysis, set[str]]:
    """The plain pass over a Claude Code transcript and its session's other files:
    the analysis, and the tool ids whose sidecars are no orphans."""
    p = _plain_claude(t)
    a = p.analysis
    home = session_dir(t.path)
    main = home.with_name(home.name + ".jsonl")
    a.owns_orphans = t.path == main or not main.is_file()
    ids = set(p.ids)
    for other in session_files(t.path):
        if other == t.path:
            continue
        with Transcript.open(other) as ot:
            theirs = _plain_claude(ot)
        a.named |= theirs.analysis.named
        ids |= theirs.ids
    return a, ids


def plain_exempt(ids: set[str], name: str) -> bool:
    """The plain rule for a file no marker names."""
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return is_hook_output(name) or stem in ids


@dataclass(slots=True)
class PlainCodex:
    """The plain Codex pass."""

    transcript: Transcript
    analysis: SessionAnalysis
    calls: dict[str, str] = field(default_factory=dict)

    def feed(self, line: int, offset: int, raw: bytes, is_last: bool) -> None:
        parsed = _take(self.analysis, line, offset, raw, is_last)
        if parsed is None:
            return
        payload = parsed.get("payload")
        if parsed.get("type") == "response_item" and isinstance(payload, Mapping):
            self._item(line, payload)

    def _item(self, line: int, item: Mapping[str, Any]) -> None:
        kind = item.get("type")
        call_id = item.get("call_id")
        call_id = call_id if isinstance(call_id, str) else None
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            name = item.get("name")
            if call_id is not None:
                self.calls[call_id] = name if isinstance(name, str) else str(kind)
            return
        if not isinstance(kind, str) or kind not in OUTPUT_TYPES:
            return  # (the pass once raised on an unhashable type)
        for part, base, text in output_parts(item.get("output")):
            for notice in find_notices(text):
                self.analysis.sites.append(
                    SpillSite(
                        line=line,
                        offset=base + notice.start,
                        format=Format.CODEX,
                        form=notice.form,
                        block=-1,
                        part=part,
                        start=notice.start,
                        end=notice.end,
                        cut=notice.cut,
                        tool_use_id=call_id,
                        tool=self.calls.get(call_id) if call_id is not None else None,
                        text=text[notice.start : notice.end],
                    )
                )


def plain_codex(t: Transcript) -> SessionAnalysis:
    """The plain pass over a Codex rollout."""
    p = PlainCodex(t, SessionAnalysis(Format.CODEX, t, None))
    for line, offset, raw, is_last in _lines(t):
        p.feed(line, offset, raw, is_last)
    a = p.analysis
    a.lines = t.line_count
    a.findings = problem_findings(a.problems)
    for site in a.sites:
        a.findings.extend(site_notes(site))
    a.findings.sort(key=lambda f: f.line or 0)
    return a

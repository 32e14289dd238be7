"""The model every format's reader produces for the ledger: marker sites and a session pass.

The reference format has its own, richer analysis (`core.analysis.Analysis`:
operations, replay, digests); the other formats produce a `SessionAnalysis`
with the same reading surface the ledger, `--check` and the viewer use —
`excerpt_sites`, `named_files()`, `findings`, `lines`, `envelopes`,
`artifact_dir` — so there is one ledger and one set of rules per badge.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from transcript_view.core.calls import ModelCalls
from transcript_view.core.findings import Finding
from transcript_view.core.formats.detect import Format
from transcript_view.core.records import SiteKey
from transcript_view.core.transcript import LineProblem, Transcript


class SpillForm(StrEnum):
    """Which marker form a site has (each format's own texts)."""

    # Claude Code
    PERSISTED = "persisted-output"
    """2.1.2+: `<persisted-output>` with size, path and a 2 KB head preview."""
    SAVED = "tool-result-saved"
    """About 2.0.60–2.1.1: `<persisted-output>Tool result saved to: PATH …`."""
    MCP_SAVED = "mcp-output-saved"
    """MCP result over the token limit: `Output has been saved to PATH`."""
    CHARS_TRUNCATED = "characters-truncated"
    """Before 2.1.2, Bash cut the middle: `... [N characters truncated] ...`; nothing kept."""
    CLEARED = "content-cleared"
    """`[Old tool result content cleared]`: microcompaction's stand-in."""
    OMITTED_MATCH = "omitted-matching-line"
    """`[Omitted long matching line]`: Grep (ripgrep's `--max-columns`) left out a matching
    line too long to show; stored nowhere."""
    OMITTED_CONTEXT = "omitted-context-line"
    """`[Omitted long context line]`: the same, for a context line (`-A`/`-B`/`-C`)."""
    MICROCOMPACTED = "microcompacted"
    """A result a `microcompact_boundary` (2.1.9+) cleared from the model's view from there
    on; its full output is the sidecar named after its tool id."""
    # Codex
    LINES_OMITTED = "lines-omitted"
    BYTES_TRUNCATED = "bytes-truncated"
    CHARS_CUT = "chars-truncated"
    TOKENS_CUT = "tokens-truncated"
    ITEMS_OMITTED = "items-omitted"
    TOTAL_LINES = "total-output-lines"
    """Codex's `Total output lines: N` prefix: the output was cut somewhere below."""
    # Qwen Code (`core.formats.qwen_markers`)
    QWEN_PERSISTED = "qwen-persisted-output"
    """`<persisted-output>` with the size in KB, the path, the sha256 (0.23+) and a preview."""
    QWEN_NOT_PERSISTED = "qwen-not-persisted"
    """The same stub, untagged, with a note where the path would be: no file was written."""
    QWEN_TRUNCATED = "qwen-tool-output-truncated"
    """`Tool output truncated. Persisted tool-output artifact: PATH`, then a head and a tail:
    a batch of results was over its budget, and this one's whole went to a file."""
    QWEN_TRUNCATED_UNSAVED = "qwen-tool-output-truncated-unsaved"
    """The same cut with no file named: the head and tail are all there is."""
    # Gemini CLI (`core.formats.gemini_markers`)
    GEMINI_TRUNCATED = "gemini-output-truncated"
    """`Output too large. Showing first H and last T characters. For full output see: PATH`:
    the head and tail around the omitted count; the file holds the whole."""
    GEMINI_MASKED = "gemini-output-masked"
    """`<tool_output_masked>`: an older result masked from the history, a preview kept."""
    GEMINI_NORMALIZED = "gemini-output-normalized"
    """`[Message Normalized: Tool output exceeded size limit]` … `Full output saved to:`."""
    GEMINI_LEGACY_SAVED = "gemini-output-saved"
    """Before 2026-01: `Tool output was too large and has been truncated.`, its file in the
    project's temp folder (not looked in)."""
    # OpenCode (`core.formats.opencode_markers`)
    OPENCODE_TRUNCATED = "opencode-output-truncated"
    """`...N lines|bytes truncated...` and `Full output saved to: PATH`: whole lines kept from
    the head (or the tail); the file holds the whole output."""
    OPENCODE_SHELL = "opencode-shell-output-truncated"
    """The shell tool's own cut (1.18+): `...output truncated...`, `Full output saved to:
    PATH`, then the output's last lines."""
    # GitHub Copilot CLI (`core.formats.copilot_markers`)
    COPILOT_SAVED = "copilot-output-too-large"
    """`Output too large to read at once (SIZE). Saved to: PATH` with the first 500
    characters: the whole went to the OS temp folder, emptied when the session ends."""
    QWEN_LEGACY_SAVED = "qwen-output-saved"
    """The older `Tool output was too large and has been truncated.` form (Gemini CLI's
    heritage): its file is `<name>.output` in the project's temp folder, not in
    `tool-results/`, and is not looked for."""

    @property
    def stored(self) -> bool:
        """Whether this form names a sidecar that holds the rest."""
        return self in _STORED


_STORED = frozenset(
    {
        SpillForm.PERSISTED,
        SpillForm.SAVED,
        SpillForm.MCP_SAVED,
        SpillForm.MICROCOMPACTED,
        SpillForm.QWEN_PERSISTED,
        SpillForm.QWEN_TRUNCATED,
        SpillForm.GEMINI_TRUNCATED,
        SpillForm.GEMINI_MASKED,
        SpillForm.GEMINI_NORMALIZED,
        SpillForm.OPENCODE_TRUNCATED,
        SpillForm.OPENCODE_SHELL,
    }
)


@dataclass(frozen=True, slots=True)
class SpillSite:
    """One marker in what the model saw, with what its format lets us check.

    `block` and `start`/`end` place the marker for highlighting: `block` is
    the index of the content block that holds it (-1 when the content is one
    string), `start`/`end` character offsets in that block's text.
    """

    line: int
    offset: int
    """Where the marker starts in its line's seen text: the line's tool result texts
    joined by one LF, then any content-replacement texts for them (`result_texts`).
    With `line`, the marker's identity; `--check --json` prints it as `start`."""
    format: Format
    form: SpillForm
    block: int
    start: int
    end: int
    part: int = -1
    """Within a block whose content is a list of text parts, which part (-1: one string)."""
    file: str | None = None
    """The sidecar basename (split from the written path on `/` and `\\`)."""
    path: str | None = None
    """The path as written in the marker (another machine's; never opened)."""
    safe_name: bool = True
    size_text: str | None = None
    preview: str | None = None
    has_more: bool = False
    cut: str | None = None
    """What the marker says was cut, in words (`12,000 characters`, `40 of 300 lines`)."""
    tool_use_id: str | None = None
    tool: str | None = None
    bash: bool = False
    """Claude Code's Bash: sizes in bytes, preview from trimmed stdout."""
    persisted_size: int | None = None
    """Bash's `toolUseResult.persistedOutputSize` (the original size, in bytes)."""
    persisted_name: str | None = None
    """The basename of Bash's `toolUseResult.persistedOutputPath`."""
    inline_chars: int | None = None
    """Length of the full output when it was also written inline in Claude Code's own
    record, in `inline_field`."""
    inline_field: str | None = None
    """Where in the line the inline copy is: `toolUseResult.stdout`, `toolUseResult.content`,
    `toolUseResult.result`, or `toolUseResult` itself (`claude_lines.output_copy`)."""
    cleared_result: int | None = None
    """For a microcompacted result: the line of the result it cleared (as the model saw it
    until then; the transcript still holds it whole)."""
    replaced_at: int | None = None
    """The `content-replacement` line whose text this marker is in (what the model saw)."""
    text: str = ""
    """The marker's own text as the model saw it (cut at a few hundred characters)."""
    digest: str | None = None
    """The sha256 (hex) the marker gives for the file (Qwen Code 0.23+); None: none given."""
    size_kb: int | None = None
    """The size the marker gives, in KB of 1,024 bytes rounded (Qwen Code)."""
    tail: str | None = None
    """The end of the output the model saw after the cut (Qwen Code's budget cut, Gemini
    CLI's): the file's end, as `preview` is its start."""
    units: int | None = None
    """The file's length in UTF-16 units, as the marker's counts say (Gemini CLI)."""
    file_bytes: int | None = None
    """The file's size in bytes, as the marker's counts say (OpenCode's cut by bytes)."""
    file_lines: int | None = None
    """The file's lines (its LFs + 1), as the marker's counts say (OpenCode's cut by lines)."""
    written_ms: int | None = None
    """When the file was written, in epoch milliseconds (OpenCode: the tool's end), for an
    agent that deletes its files after a while."""

    @property
    def key(self) -> SiteKey:
        """This marker's identity: its line, and where it starts in the line's seen text."""
        return SiteKey(self.line, self.offset)


@dataclass(frozen=True, slots=True)
class ClearedResult:
    """One tool result a microcompaction cleared: its id, and where its call and result are."""

    tool_use_id: str
    call: int | None
    """The line of its `tool_use` (None: not in this file)."""
    result: int | None
    """The line of its `tool_result`, as the model saw it before (None: not in this file)."""


@dataclass(frozen=True, slots=True)
class Microcompaction:
    """A `microcompact_boundary` line (Claude Code 2.1.9+): from it on, the model no longer
    saw `cleared` in full (each became `[Old tool result content cleared]` in requests)."""

    line: int
    trigger: str | None
    pre_tokens: int | None
    """The context's size in tokens when it began, as recorded."""
    tokens_saved: int | None
    cleared: tuple[ClearedResult, ...]


@dataclass(frozen=True, slots=True)
class NoExemption:
    """No sidecar is exempt from being an orphan (the default rule).

    A value rather than a lambda, as every format's rule is, so that an
    analysis pickles: the pass server sends analyses back to the viewer.
    """

    def __call__(self, name: str) -> bool:
        """Whether `name` is exempt: never."""
        return False


@dataclass(slots=True, weakref_slot=True)
class SessionAnalysis:
    """What one pass over a non-reference transcript found.

    Plain data all the way down (its transcript pickles as its path and line
    index), so it pickles: keep it so. Weakly referable, as `Analysis` is, so the
    pass server can tell the result it sent back last (`core.parallel`).
    """

    format: Format
    transcript: Transcript
    artifact_dir: Path | None
    """Where this transcript's sidecars are (Claude Code: the session's `tool-results/`;
    None for a format that keeps none)."""
    lines: int = 0
    envelopes: int = 0
    """Lines that are JSON objects (the format's records)."""
    type_counts: Counter[str] = field(default_factory=Counter)
    problems: list[LineProblem] = field(default_factory=list)
    sites: list[SpillSite] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    named: set[str] = field(default_factory=set)
    """Every sidecar basename any file of the session names (orphans are the rest)."""
    exempt: Callable[[str], bool] = field(default=NoExemption())
    """Files that are no orphan although nothing names them (hook output, mirrors): a
    picklable callable (`NoExemption`, `claude_code.ClaudeExemption`), never a lambda."""
    tags: dict[int, list[str]] = field(default_factory=dict)
    """What the whole file says about a line that the line alone cannot: the response
    it continues, the branch it starts, the compaction it follows, its subagent."""
    owns_orphans: bool = True
    """Whether this transcript reports its sidecar folder's orphans: the folder is the
    session's, so only the main transcript does (a subagent's when the main one is gone),
    and a tree check lists each orphan once."""
    links: dict[int, Path] = field(default_factory=dict)
    """Lines that name another transcript of the session (a Task's subagent), found."""
    replaced: dict[int, dict[str, int]] = field(default_factory=dict)
    """Results a `content-replacement` replaced: their line -> tool_use id -> the
    replacement's line (what the model saw instead, markers or none)."""
    microcompactions: list[Microcompaction] = field(default_factory=list)
    """Each microcompaction the file records, in order (Claude Code 2.1.9+)."""
    branches: list[tuple[int, int]] = field(default_factory=list)
    """Claude Code: (line, its parent's line) of each line that branches from an earlier
    line than the one before it (a rewind, retry or fork), and (line, 0) of each line
    that names no parent (the chain starts over there, as at a `compact_boundary`), in
    file order. With the compactions, the chain of parents of any line (what a request
    carried) is these jumps and the runs of lines between them (`core.lifetime`)."""
    sides: list[tuple[int, int]] = field(default_factory=list)
    """Claude Code: (line, its parent's line) of each line whose parent is not the line
    before it but a line of its own step (`Branch.parented_by`): a parallel batch's
    result parented on its own `tool_use` line, a response's line on an earlier one of
    the same response. A request carries such a line when it carries its parent
    (`core.call_context`, `core.lifetime`)."""
    calls: ModelCalls = field(default_factory=ModelCalls)
    """Every model call, with the size of its context where the file records it, and every
    compaction (`core.calls`)."""
    versions: tuple[array[int], array[int]] = field(
        default_factory=lambda: (array("q"), array("q"))
    )
    """Gemini CLI writes a message again, whole, each time it changes: (the line of each
    version that was written again, the line of the version after it), in the order of
    the latter (ascending). Numbers, not `tags`: a session has a line like that for most
    of its lines (`notes` words them)."""
    replaced_by: tuple[array[int], array[int]] = field(
        default_factory=lambda: (array("q"), array("q"))
    )
    """`versions` in the order of the former (ascending), for `notes`."""

    def tag(self, line: int, words: str) -> None:
        """Add a note about `line` (shown under its heading)."""
        self.tags.setdefault(line, []).append(words)

    def noted_lines(self) -> set[int]:
        """Every line `notes` says something of."""
        return set(self.tags).union(self.versions[0], self.versions[1])

    def notes(self, line: int) -> list[str]:
        """What the whole file says about `line`: its tags, and which line replaced it or
        which it replaced (`versions`)."""
        out = list(self.tags.get(line, ()))
        earlier, later = self.versions
        if earlier:
            at = bisect_left(later, line)
            if at < len(later) and later[at] == line:
                out.append(
                    f"the message of line {earlier[at]:,}, written again with what it gained "
                    "(results, tokens): this version replaces that one"
                )
            before, after = self.replaced_by
            at = bisect_left(before, line)
            if at < len(before) and before[at] == line:
                out.append(
                    f"written again on line {after[at]:,}: that version replaces this one"
                )
        return out

    @property
    def excerpt_sites(self) -> list[SpillSite]:
        """Every marker: no marker of these formats is quoted text about one."""
        return self.sites

    def named_files(self) -> set[str]:
        """Sidecar basenames the session names, and those exempt from being orphans."""
        return self.named

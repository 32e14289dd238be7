"""Rows of one line of a Claude Code session or a Codex rollout (the file view).

The reference's envelopes have their builder in `viewer.blocks`; these are
the other formats', built on the same `RowBuilder`, so wrapping, collapsing,
findings and inline artifacts behave the same. What the model saw is shown
as the conversation (message text, tool calls with their input, tool
results split around their spill markers); what it did not see is labelled
as such: Claude Code's `toolUseResult` is "Claude Code's own record", a
Codex `event_msg` is "the UI's record". Unknown line and block types are
shown as written, never an error.

Before the analysis lands, markers are found here with the core's own finder
(`find_spills`, `find_notices`), numbered as the analysis numbers them, and
wear "checking"; afterwards every badge is the ledger's.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from rich.text import Text

from transcript_view.core.formats.agent_records import record_of
from transcript_view.core.formats.claude_code import result_texts
from transcript_view.core.formats.claude_markers import find_spills
from transcript_view.core.formats.codex import OUTPUT_TYPES, find_notices, output_parts
from transcript_view.core.formats.copilot import result_sites as copilot_sites
from transcript_view.core.formats.copilot import result_text as copilot_result
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.gemini import is_message as gemini_message
from transcript_view.core.formats.gemini import result_texts as gemini_results
from transcript_view.core.formats.gemini import text_sites as gemini_sites
from transcript_view.core.formats.model import SessionAnalysis, SpillForm, SpillSite
from transcript_view.core.formats.opencode import COMPACTION_PROMPT, tool_text
from transcript_view.core.formats.opencode import part_sites as opencode_sites
from transcript_view.core.formats.qwen import COMPRESSION, REWIND
from transcript_view.core.formats.qwen import result_texts as qwen_results
from transcript_view.core.formats.qwen import text_sites as qwen_sites
from transcript_view.core.formats.rules import record_copy
from transcript_view.core.lifetime import compaction_figures, is_compaction_summary
from transcript_view.core.records import SiteKey
from transcript_view.core.text import compact_json, human_size, plural, short_id, visible
from transcript_view.core.transcript import _DEEP_BYTES, LineProblem, _decode
from transcript_view.core.verification import MarkerState
from transcript_view.viewer.context import BlockKey
from transcript_view.viewer.folds import FOLDED_MARK, UNFOLDED_MARK, fold_words
from transcript_view.viewer.palette import Palette
from transcript_view.viewer.rows import badge_text

if TYPE_CHECKING:
    from transcript_view.core.envelopes import Message
    from transcript_view.viewer.blocks import RowBuilder

#: At most this much of an unknown value is shown (it is collapsed to one row anyway).
PREVIEW_CHARS = 4000

# How the common texts of a session line are drawn (`RowBuilder.text`'s `indent` and
# `limit`, rows before it collapses).
#: An unknown value, or an image, as one dim row.
DIM_ROWS = 1
#: A record of the agent's own (`core.formats.agent_records`), shown on its own rows.
RECORD_TEXT_ROWS = 2
#: A Claude thinking block, after its words.
THINKING_ROWS = 3
THINKING_WORDS = "thinking: "
#: A thinking block that holds only its signature (Claude Code 2026 writes no text).
THINKING_NOT_KEPT = "thinking (its text is not in the file: only its signature is kept)"
#: What an image part is shown as.
IMAGE_WORDS = "[image]"
#: A Claude tool call's input.
INPUT_INDENT, INPUT_ROWS = 6, 3
#: Claude Code's own record of a tool call (`toolUseResult`), summarised: a field is
#: shown as itself up to `RECORD_FIELD_CHARS` (its size past that), a record that is
#: no object up to `RECORD_TEXT_CHARS`.
RECORD_INDENT, RECORD_ROWS = 4, 3
RECORD_FIELD_CHARS, RECORD_TEXT_CHARS = 80, 400
#: A Codex ui record's message.
UI_ROWS = 2
#: A Codex reasoning summary's text.
REASONING_ROWS = 3
#: A Codex reasoning item with no summary, only the provider's encrypted content.
REASONING_ENCRYPTED = "(no summary: the reasoning is encrypted by the provider)"
#: A Codex remote compaction (`compaction` {encrypted_content}): never guessed at.
COMPACTION_ENCRYPTED = (
    "summary not readable: encrypted by the provider (the model continued from it; "
    "the file cannot say what it holds)"
)
#: A Codex call's arguments.
ARGUMENTS_INDENT, ARGUMENTS_ROWS = 4, 3


def clip(value: object) -> str:
    """An unknown value as at most `PREVIEW_CHARS` of text (its compact JSON if not a string)."""
    text = value if isinstance(value, str) else compact_json(value)
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + " …"


def _site(b: RowBuilder, key: SiteKey) -> SpillSite | None:
    """The analysis's marker at `key`, or None before a session analysis lands."""
    if not isinstance(b.ctx.analysis, SessionAnalysis):
        return None
    site = b.ctx.index.site_by_key.get(key)
    return site if isinstance(site, SpillSite) else None


def spill_rows(b: RowBuilder, key: SiteKey, words: str, site: SpillSite | None) -> None:
    """A marker's rows: its badge and what it says, its findings, its open artifact.

    The same kinds as a reference marker (`marker`, continuation rows `cont`),
    so `n`/`N`, enter, `e` and `c` find it the same way.
    """
    p = b.palette
    state = b.ctx.site_state(key) if site is not None else None
    if site is not None and state in (MarkerState.MISSING, MarkerState.EXPIRED):
        # (A missing sidecar always has its finding: its rows are recounted when it lands.)
        words = spill_words(site.form, site, None, state)
    label = badge_text(state, p) if state is not None else Text(" … checking ", style=p.dim)
    label.append(" ")
    b.labelled_marker(key, label, words)
    for f in b.ctx.findings_of(key):
        b.finding_row(f, 4, key)
    art = b.ctx.artifact(key, b.view)
    if art is not None:
        b.inserts.append((len(b.rows) - 1, art))


def spill_words(
    form: SpillForm, site: SpillSite | None, found: Any, state: MarkerState | None = None
) -> str:
    """What a marker says, in words (from the analysis's site, or the text found here).

    A sidecar the ledger found missing (`state`) is said to be; where Claude Code's own
    record holds the full output instead (`rules.record_copy`), the words name it, and
    enter opens that.
    """
    if site is not None and site.format is Format.QWEN:
        return qwen_words(site, state)
    if site is not None and site.format is Format.GEMINI:
        return gemini_words(site, state)
    if site is not None and site.format is Format.OPENCODE:
        return opencode_words(site, state)
    if site is not None and site.format is Format.COPILOT:
        return (
            f"output too large ({site.size_text}): the model saw its first "
            f"{len(site.preview or ''):,} characters; the whole went to {site.file} in the OS "
            "temp folder, emptied when the session ended (not looked for)"
        )
    if form is SpillForm.MICROCOMPACTED and site is not None:
        return _cleared_words(site, state)
    if form.stored:
        name = (site.file if site else None) or getattr(found, "file", None) or "?"
        where = f"tool-results/{name}"
        if form is SpillForm.PERSISTED:
            size = getattr(found, "size_text", None) or (site.size_text if site else None)
            lead = f"output too large ({size_words(str(size or '?'), site)}): the rest is in"
        elif form is SpillForm.SAVED:
            lead = "tool result saved to"
        else:
            lead = "MCP result over the token limit, saved to"
        if site is None or state is not MarkerState.MISSING:
            return f"{lead} {where} (enter opens it)"
        lead = lead.replace(" is in", " was saved to")
        copy = record_copy(site, state)
        if copy is None:
            return f"{lead} {where}, which is missing"
        return (
            f"{lead} {where}, which is missing; Claude Code's own record ({copy}) "
            "holds the full output (enter opens that copy)"
        )
    cut = (site.cut if site else None) or getattr(found, "cut_words", None)
    cut = cut or getattr(found, "cut", None)
    what = f"{cut:,} characters" if isinstance(cut, int) else (cut or "part of the output")
    if form is SpillForm.CLEARED:
        return "old tool result content cleared (microcompaction; nothing stored)"
    return f"{what} cut from what the model saw; nothing stored"


def qwen_words(site: SpillSite, state: MarkerState | None) -> str:
    """A Qwen Code marker in words: what was cut, and where the whole is."""
    where = f"tool-results/{site.file}"
    gone = state in (MarkerState.EXPIRED, MarkerState.MISSING)
    opens = (
        ", which is gone (Qwen Code deletes these after 24 hours)" if gone else " (enter opens it)"
    )
    if site.form is SpillForm.QWEN_PERSISTED:
        digest = "" if site.digest is not None else "; no sha256 (before 0.23)"
        size = f"{site.size_kb or 0:,} KB"
        return f"output too large ({size}): the whole is in {where}{opens}{digest}"
    if site.form is SpillForm.QWEN_TRUNCATED:
        return f"cut to {site.cut} (its batch was over budget); the whole is in {where}{opens}"
    return f"cut from what the model saw: {site.cut or 'part of the output'}"


def gemini_words(site: SpillSite, state: MarkerState | None) -> str:
    """A Gemini CLI marker in words: what was cut, and where the whole is."""
    if not site.form.stored:
        return f"cut from what the model saw: {site.cut or 'part of the output'}"
    where = f"tool-outputs/…/{site.file}"
    opens = ", which is missing" if state is MarkerState.MISSING else " (enter opens it)"
    return f"{site.cut}; the whole is in {where}{opens}"


def opencode_words(site: SpillSite, state: MarkerState | None) -> str:
    """An OpenCode cut in words: what was cut, and where the whole is."""
    where = f"tool-output/{site.file}"
    if state is MarkerState.EXPIRED:
        opens = ", which is gone (OpenCode deletes these after 7 days)"
    elif state is MarkerState.MISSING:
        opens = ", which is missing"
    else:
        opens = " (enter opens it)"
    if site.form is SpillForm.OPENCODE_SHELL:
        return f"the shell kept {site.cut}; the whole is in {where}{opens}"
    return f"cut {site.cut}; the whole is in {where}{opens}"


def _cleared_words(site: SpillSite, state: MarkerState | None) -> str:
    """A result a microcompaction cleared: which, and where its full output is."""
    what = f"{site.tool or 'tool'} result {short_id(site.tool_use_id or '?', 24)}"
    if site.cleared_result is not None:
        what += f" (line {site.cleared_result:,})"
    words = f"{what} cleared from what the model saw from here on; "
    if state is MarkerState.NOT_STORED:
        return words + f"no tool-results/{site.file} (the transcript holds it whole)"
    return words + f"its full output: tool-results/{site.file} (enter opens it)"


def size_words(size: str, site: SpillSite | None) -> str:
    """Claude Code's printed size, saying what it counts: characters (UTF-16 units), or for
    Bash bytes, in KB of 1024 (`formatFileSize`), so it is never read as the byte size
    shown beside it (a `toolUseResult` field, an open sidecar)."""
    if site is None:
        return f"{size} as Claude Code counts it"
    return f"{size} as Claude Code counts it, in {'bytes' if site.bash else 'characters'}"


class _Mark(NamedTuple):
    """A marker found in a text by the format's own finder, ready to be drawn."""

    start: int
    end: int
    words: str
    preview: str | None = None


def site_text(b: RowBuilder, base: int, text: str, sites: Sequence[SpillSite]) -> None:
    """A tool's output the model saw, with a marker row where each of the format's own sites
    (what its pass records for the text) stands, in the format's words."""
    marks = [_Mark(s.start, s.end, spill_words(s.form, s, None)) for s in sites]
    _text_around(b, base, text, marks)


def _text_around(b: RowBuilder, base: int, text: str, marks: Sequence[_Mark]) -> None:
    """A tool's output the model saw, split around its markers, each a marker row with its badge.

    `base` is where the text starts in its line's seen text (`result_texts`,
    `output_parts`), so a marker's key is the offset the analysis gave it.
    Once a session analysis has landed, a marker it does not know is left as
    text (no badge that would say "checking" for ever). Markers are found in
    the text as written; the pieces between them, and a marker's preview, are
    the tool's output, drawn in its colours (`RowBuilder.text`'s `sgr`), each
    piece on its own.
    """
    landed = isinstance(b.ctx.analysis, SessionAnalysis)
    pos = 0
    for mark in marks:
        if mark.start < pos:
            continue  # inside the previous marker (its preview quotes one)
        key = SiteKey(b.line, base + mark.start)
        site = _site(b, key)
        if landed and site is None:
            continue
        before = text[pos : mark.start].strip("\n")
        if before:
            b.text(before, sgr=True)
        spill_rows(b, key, mark.words if site is None else spill_words(site.form, site, None), site)
        if mark.preview is not None:
            b.text(mark.preview, indent=4, limit=6, sgr=True)
        pos = mark.end
    rest = text[pos:].strip("\n") if pos else text
    if rest or not pos:
        b.text(rest, sgr=True)


def _text_with_spills(b: RowBuilder, base: int, text: str) -> None:
    """Tool result text, split around its spill markers (Claude Code's forms)."""
    marks = [
        _Mark(
            f.start,
            f.end,
            spill_words(f.form, None, f),
            None if f.preview is None else f.preview + ("\n…" if f.has_more else ""),
        )
        for f in find_spills(text)
    ]
    _text_around(b, base, text, marks)


def _notice_text(b: RowBuilder, base: int, text: str) -> None:
    """Codex output text, with a marker row where each truncation notice stands."""
    marks = [
        _Mark(n.start, n.end, f"{n.cut} cut from what the model saw; nothing stored")
        for n in find_notices(text)
    ]
    _text_around(b, base, text, marks)


def _qwen_text(b: RowBuilder, base: int, text: str) -> None:
    """A Qwen Code tool result the model saw, with a marker row where its stub's header or a
    cut's file names stand (the pass's own sites: `qwen.text_sites`)."""
    sites = qwen_sites(b.line, -1, base, text)
    site_text(b, base, text, sites)


def _tags(b: RowBuilder) -> None:
    """What the whole file says about this line; a row naming a subagent is a link."""
    analysis = b.ctx.analysis
    if isinstance(analysis, SessionAnalysis):
        for words in analysis.notes(b.line):
            if b.line in analysis.links and words.startswith("subagent transcript:"):
                b.head(Text("  ↳ " + visible(words), style=b.palette.tool_name), "link")
            else:
                b.text("↳ " + words, style=b.palette.dim, limit=2)


def lifetime_rows(b: RowBuilder, *, message: Message | None = None) -> None:
    """Where the line's message lived and what it cost (`core.lifetime`), under its head.

    Only in a block the reader expanded (enter), once the analysis is there: the
    words read the calls, and a row on every message would make every line's
    count wait for the analysis. An expanded block is recounted when it lands
    (`TranscriptView.analysis_changed`). `message`: the LLM::Agent message, whose
    being kept through every compaction (`Message.is_sticky`) the words say; it is
    read only when the words are written (every line is counted without them).
    """
    lives = b.ctx.lifetimes
    if lives is None or b.searched or not b.ctx.shows_lifetime(BlockKey(b.view, b.key)):
        return
    kept = message is not None and message.is_sticky
    b.note(lives.words(b.transcript, b.line, kept=kept), indent=4)


def compaction_rows(b: RowBuilder, *, summary: bool = True, before: bool = True) -> None:
    """A compaction's figures (`core.lifetime.compaction_figures`): its trigger, the context
    before it and after it, each labelled with where it comes from. Its rows are counted
    again when the analysis lands (`AnalysisState.adopt`).

    Args:
        summary: say what became of an unreadable summary (else a row of its own does).
        before: the trigger and the size before (a microcompaction's own row says them).
    """
    lives = b.ctx.lifetimes
    figures = compaction_figures(lives.calls, b.line) if lives is not None else None
    if figures is None:
        if lives is None:
            b.note("its figures come with the analysis…")
        return
    if before:
        b.note(figures.trigger_words(summary=summary))
        b.note(figures.before_words())
    b.note(figures.after_words())


def summary_fold(b: RowBuilder, text: str, what: str) -> bool:
    """A compaction's summary, folded by default (`viewer.folds`): one row that enter opens;
    unfolded, a heading that enter folds again, then the text. Returns whether it drew it
    folded (nothing more to draw). Only in the file view: the model view of a call shows
    the summary it starts from whole (it is what the model continued from)."""
    if b.view != "file":
        return False
    p = b.palette
    size = f"{plural(len(text), 'character')}"
    if b.ctx.folds(b.line) and not b.searched:
        b.head(Text(f"{FOLDED_MARK}{what}: {size}, folded (enter shows it)", style=p.dim), "fold")
        return True
    if b.ctx.fold_records:
        b.head(Text(f"{UNFOLDED_MARK}{what}: {size} (enter folds it)", style=p.dim), "unfold")
    return False


def build_problem(b: RowBuilder, problem: LineProblem) -> None:
    """A line that is not a JSON object."""
    p = b.palette
    decided = [f.kind for f in b.ctx.line_findings(b.line)]
    head = Text(f"✗ {decided[0] if decided else problem.kind}  ", style=p.error)
    head.append(visible(problem.message), style=p.bad)
    b.head(head, "problem")
    b.text("raw: " + problem.raw.decode("utf-8", errors="replace"), style=p.dim, limit=2)


# -- Claude Code -------------------------------------------------------------------------------


def build_claude(b: RowBuilder, obj: Mapping[str, Any]) -> None:
    """Rows of one Claude Code line."""
    p = b.palette
    kind = obj.get("type")
    kind = kind if isinstance(kind, str) else "?"
    message = obj.get("message")
    msg = message if isinstance(message, Mapping) else {}
    if kind in ("user", "assistant"):
        if b.count_only:
            b.counted_head()  # one row, whatever it says
        else:
            b.head(_message_head(p, kind, obj, msg, b.ctx.subagent_file))
        lifetime_rows(b)
        _tags(b)
        summary = is_compaction_summary(Format.CLAUDE_CODE, obj)
        if summary and summary_fold(b, _text_of(msg.get("content")), "the compaction's summary"):
            b.findings()
            return
        _claude_content(b, msg.get("content"), kind)
        _replaced(b)
        if "toolUseResult" in obj:
            _tool_use_result(b, obj["toolUseResult"])
    elif b.record is not None:
        record = b.record
        if b.count_only:
            b.counted_head()
        else:
            what = record.note + " (not sent to the model)"
            name = kind if kind != "system" else f"system  {obj.get('subtype')}"
            if record.detail is not None:
                name += f"  {record.detail}"
            record_head(b, name, what)
        _tags(b)
        title = _title(obj)
        if title is not None:
            b.text(title, limit=2)
        else:
            rest = {k: v for k, v in obj.items() if k not in CLAUDE_ENVELOPE_KEYS}
            b.text(clip(rest), style=p.dim, limit=RECORD_TEXT_ROWS)
    elif kind == "system":
        subtype = obj.get("subtype")
        head = Text("system", style=p.role("system"))
        head.append(f"  {visible(str(subtype or ''))}", style=p.dim)
        b.head(head)
        _tags(b)
        content = obj.get("content")
        if subtype == "api_error":
            b.text(api_error_words(obj), style=p.warning, limit=2)
        elif isinstance(content, str) and content:
            b.text(content, limit=3)
        meta = obj.get("compactMetadata")
        if subtype == "compact_boundary":
            compaction_rows(b)
        elif isinstance(meta, Mapping):
            b.text(clip(dict(meta)), style=p.dim, limit=DIM_ROWS)
        if subtype == "microcompact_boundary":
            _microcompaction(b, obj.get("microcompactMetadata"))
    elif kind == "content-replacement":
        reps = obj.get("replacements")
        reps = reps if isinstance(reps, list) else []
        head = Text("content replacement", style=p.heading)
        head.append(
            f"  {plural(len(reps), 'result')} replaced at request time: what the model saw",
            style=p.dim,
        )
        b.head(head)
        for rep in reps:
            if isinstance(rep, Mapping) and isinstance(rep.get("replacement"), str):
                b.text(
                    f"for {visible(short_id(str(rep.get('toolUseId', '?')), 24))} "
                    "(its markers are shown and counted at the result it replaces):",
                    style=p.dim,
                    limit=2,
                )
                b.text(str(rep["replacement"]), limit=4)
        _replaced(b)  # markers of replaced results that are not in this file
    else:  # an attachment, or a line that is neither a record nor known
        if b.count_only:
            b.counted_head()
        else:
            head = Text(visible(kind), style=p.heading)
            note = _CLAUDE_LINE_NOTES.get(
                kind, "a line type this viewer does not know, kept as written"
            )
            head.append("  " + note, style=p.dim)
            b.head(head)
        rest = {k: v for k, v in obj.items() if k not in CLAUDE_ENVELOPE_KEYS}
        b.text(clip(rest), style=p.dim, limit=DIM_ROWS)
    b.findings()


def _text_of(content: object) -> str:
    """A message's text: its string, or its text blocks' texts joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(x["text"]) for x in content if isinstance(x, Mapping) and isinstance(x.get("text"), str)
    )


def _microcompaction(b: RowBuilder, meta: object) -> None:
    """A `microcompact_boundary`: what it saved, then each result it cleared, a marker (its
    full output, the sidecar) with a row that goes to its call."""
    p = b.palette
    m = meta if isinstance(meta, Mapping) else {}
    ids = m.get("compactedToolIds")
    said = [f"{plural(len(ids), 'result')} cleared" if isinstance(ids, list) else None]
    for key, words in (("preTokens", "tokens in context before"), ("tokensSaved", "saved")):
        value = m.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            said.append(f"{value:,} {words}")
    trigger = m.get("trigger")
    if isinstance(trigger, str):
        said.append(f"trigger {trigger}")
    b.text("microcompaction: " + ", ".join(w for w in said if w), style=p.dim, limit=2)
    compaction_rows(b, before=False)
    analysis = b.ctx.analysis
    if not isinstance(analysis, SessionAnalysis):
        return
    for site in b.ctx.sites_by_line.get(b.line, []):
        if not isinstance(site, SpillSite) or site.form is not SpillForm.MICROCOMPACTED:
            continue
        state = b.ctx.site_state(site.key)
        spill_rows(b, site.key, spill_words(site.form, site, None, state), site)
        target = site.cleared_result
        if target is not None:
            b.jump(f"↳ its result as the model saw it before: line {target:,} (enter goes there)",
                   target)


def _first_str(value: object, *paths: tuple[str, ...]) -> str | None:
    """The first of `paths` (keys, one level each) that leads to a non-empty string."""
    for path in paths:
        at = value
        for key in path:
            at = at.get(key) if isinstance(at, Mapping) else None
        if isinstance(at, str | int) and not isinstance(at, bool) and str(at):
            return str(at)
    return None


def api_error_words(obj: Mapping[str, Any]) -> str:
    """A failed API call Claude Code retried: the error, the attempt, the wait.

    Claude Code writes `{"subtype": "api_error", "error": {status, error: {error:
    {type, message}}, cause: {code}}, "retryAttempt", "maxRetries", "retryInMs"}`;
    every part is optional, and the words say what is there.
    """
    error = obj.get("error")
    status = _first_str(error, ("status",))
    kind = _first_str(error, ("error", "error", "type"), ("error", "type"), ("type",))
    message = _first_str(
        error,
        ("error", "error", "message"),
        ("error", "message"),
        ("message",),
        ("cause", "code"),
        ("cause", "message"),
    )
    if message is None and isinstance(obj.get("content"), str):
        message = str(obj["content"]) or None
    said = " ".join(w for w in (f"HTTP {status}" if status else None, kind) if w)
    words = "API error" + (f" {said}" if said else "") + (f": {message}" if message else "")
    attempt, most = obj.get("retryAttempt"), obj.get("maxRetries")
    wait = obj.get("retryInMs")
    if isinstance(attempt, int) and not isinstance(attempt, bool):
        words += f"; retry {attempt:,}" + (f" of {most:,}" if isinstance(most, int) else "")
        if isinstance(wait, int | float) and not isinstance(wait, bool) and wait >= 0:
            try:
                words += f" after {wait / 1000:,.1f} s"
            except OverflowError:  # an integer no float holds: JSON sets no limit
                words += f" after {wait:,} ms"
    return words


#: The field that holds a title line's title, by its type.
_TITLE_FIELDS = {"summary": "summary", "custom-title": "customTitle", "ai-title": "aiTitle"}


def _title(obj: Mapping[str, Any]) -> str | None:
    """A title line's title (`summary` lines are titles, not compaction summaries)."""
    field = _TITLE_FIELDS.get(str(obj.get("type")))
    value = obj.get(field) if field is not None else None
    return value if isinstance(value, str) else None


def _message_head(
    p: Palette, kind: str, obj: Mapping[str, Any], msg: Mapping[str, Any], subagent_file: bool
) -> Text:
    """A Claude Code message line's heading: its role, model and flags.

    A sidechain line is marked so only outside a subagent's own file, whose
    header says it once (`subagent_of`).
    """
    head = Text(kind, style=p.role(kind))
    extra = []
    if kind == "assistant" and isinstance(msg.get("model"), str):
        extra.append(str(msg["model"]))
    if obj.get("isSidechain") is True and not subagent_file:
        extra.append("sidechain")
    if obj.get("isMeta") is True:
        extra.append("meta")
    if obj.get("isCompactSummary") is True:
        extra.append("compaction summary")
    if extra:
        head.append("  " + visible(" · ".join(extra)), style=p.dim)
    return head


#: What Claude Code's line types that are not its records are (its records say so
#: themselves: `core.formats.agent_records`).
_CLAUDE_LINE_NOTES: dict[str, str] = {
    "attachment": "context Claude Code adds to the next request (its text there is not "
    "recorded)",
}

#: Keys every message line carries: not repeated in an unknown line's summary.
CLAUDE_ENVELOPE_KEYS = frozenset(
    {
        "type",
        "uuid",
        "parentUuid",
        "sessionId",
        "timestamp",
        "cwd",
        "version",
        "gitBranch",
        "userType",
        "isSidechain",
    }
)


def _claude_content(b: RowBuilder, content: object, role: str) -> None:
    """A message's content blocks; tool results of a user line with their markers.

    Markers are looked for exactly where the analysis looks (`result_texts`:
    text parts of a user line's tool results), so every marker row has the key
    the analysis gave it. A result a `content-replacement` replaced is shown as
    the transcript holds it, without marker rows: the model saw the replacement.
    """
    p = b.palette
    if isinstance(content, str):
        b.text(content)
        return
    if not isinstance(content, list):
        return
    bases = (
        {(blk, part): base for blk, part, base, _, _ in result_texts(content)}
        if role == "user"
        else {}
    )
    replaced = _replaced_results(b)
    for i, block in enumerate(content):
        if not isinstance(block, Mapping):
            b.text(clip(block), style=p.dim, limit=DIM_ROWS)
            continue
        btype = block.get("type")
        if btype == "text":
            b.text(str(block.get("text", "")))
        elif btype == "thinking":
            thought = block.get("thinking")
            if isinstance(thought, str) and thought.strip():
                b.text(THINKING_WORDS + thought, style=p.dim, limit=THINKING_ROWS)
            else:  # newer versions keep only the signature
                b.text(THINKING_NOT_KEPT, style=p.dim, limit=DIM_ROWS)
        elif btype == "redacted_thinking":
            b.text("thinking (redacted)", style=p.dim, limit=DIM_ROWS)
        elif btype == "tool_use":
            if b.count_only:
                b.counted_head()
            else:
                head = Text("  ⚙ ", style=p.strong)
                head.append(visible(str(block.get("name", "?"))), style=p.tool_name)
                call = visible(short_id(str(block.get("id", "")), 24))
                head.append(f"  call {call}", style=p.dim)
                b.head(head)
            b.text(clip(block.get("input", {})), indent=INPUT_INDENT, limit=INPUT_ROWS)
        elif btype == "tool_result":
            tid = block.get("tool_use_id")
            gone = isinstance(tid, Hashable) and tid in replaced  # an id may be any JSON
            if b.count_only:
                b.counted_head()
            else:
                head = Text("  ← result", style=p.role("tool"))
                of = visible(short_id(str(block.get("tool_use_id", "")), 24))
                head.append(f"  of {of}", style=p.dim)
                if block.get("is_error") is True:
                    head.append("  error", style=p.bad)
                if gone:
                    head.append(f"  replaced at request time (line {replaced[tid]:,})", style=p.dim)
                b.head(head)
            inner = block.get("content")
            parts = [(-1, inner)] if isinstance(inner, str) else list(enumerate(inner or []))
            for j, part in parts:
                text = part if isinstance(part, str) else None
                if isinstance(part, Mapping) and part.get("type") == "text":
                    text = part.get("text") if isinstance(part.get("text"), str) else None
                elif isinstance(part, Mapping) and part.get("type") == "image":
                    b.text(IMAGE_WORDS, style=p.dim, limit=DIM_ROWS)
                    continue
                if text is None:
                    continue
                if gone or (i, j) not in bases:
                    # Not what the model saw, or not where markers are looked for.
                    b.text(text, sgr=True)
                else:
                    _text_with_spills(b, bases[(i, j)], text)
        elif btype == "image":
            b.text(IMAGE_WORDS, style=p.dim, limit=DIM_ROWS)
        else:
            b.text(f"{visible(str(btype))}: {clip(dict(block))}", style=p.dim, limit=DIM_ROWS)


def _replaced_results(b: RowBuilder) -> dict[object, int]:
    """Tool ids of this line's results that a content replacement replaced -> its line."""
    analysis = b.ctx.analysis
    if not isinstance(analysis, SessionAnalysis):
        return {}
    replaced = analysis.replaced.get(b.line, {})
    return {tid: at for tid, at in replaced.items() if at != b.line}


def _replaced(b: RowBuilder) -> None:
    """Markers of a `content-replacement` for this line's results: what the model saw instead."""
    analysis = b.ctx.analysis
    if not isinstance(analysis, SessionAnalysis):
        return
    for site in b.ctx.sites_by_line.get(b.line, []):
        if isinstance(site, SpillSite) and site.replaced_at is not None:
            b.text(
                f"the model saw this instead (content replacement on line {site.replaced_at:,}):",
                style=b.palette.dim,
                limit=1,
            )
            spill_rows(b, site.key, spill_words(site.form, site, None), site)


#: What a `toolUseResult` summary is introduced by.
TOOL_USE_RESULT_WORDS = "toolUseResult (Claude Code's own record, not sent to the model): "


def tool_use_summary(value: object) -> str:
    """Claude Code's own record of a tool call, in one line: each field, or its size.

    A value too long to show whole is cut visibly: a text says its length, a
    list the items shown and how many in all, anything else ends with `…` and
    its size.
    """
    if isinstance(value, Mapping):
        return ", ".join(f"{key} {_field(item)}" for key, item in value.items())
    return _cut(value, RECORD_TEXT_CHARS)


def _field(item: object) -> str:
    """One field of a `toolUseResult`, at most about `RECORD_FIELD_CHARS` characters."""
    if isinstance(item, str):
        if len(item) <= RECORD_FIELD_CHARS:
            return repr(item)
        size = human_size(len(item.encode("utf-8", "surrogatepass")))
        return f"({len(item):,} characters, {size} as UTF-8)"
    if isinstance(item, list) and item:
        shown: list[str] = []
        used = 0
        for element in item:
            text = compact_json(element)
            if shown and used + len(text) > RECORD_FIELD_CHARS:
                break
            shown.append(text if len(text) <= RECORD_FIELD_CHARS else _cut(element, 40))
            used += len(shown[-1]) + 1
        if len(shown) == len(item):
            return "[" + ",".join(shown) + "]"
        return f"[{','.join(shown)}, …] ({len(shown):,} of {plural(len(item), 'item')})"
    return _cut(item, RECORD_FIELD_CHARS)


def _cut(value: object, most: int) -> str:
    """`value` as compact JSON (a string as itself), cut at `most` characters with `…` and
    what it came to in all."""
    text = value if isinstance(value, str) else compact_json(value)
    if len(text) <= most:
        return text
    return f"{text[:most]}… ({human_size(len(text.encode('utf-8', 'surrogatepass')))} in all)"


def _tool_use_result(b: RowBuilder, value: object) -> None:
    """Claude Code's own record of a tool call: summarised, and labelled as never sent."""
    b.text(
        TOOL_USE_RESULT_WORDS + tool_use_summary(value),
        style=b.palette.dim,
        indent=RECORD_INDENT,
        limit=RECORD_ROWS,
    )


# -- Codex ------------------------------------------------------------------------------------


def build_codex(b: RowBuilder, obj: Mapping[str, Any]) -> None:
    """Rows of one Codex rollout line."""
    p = b.palette
    kind = obj.get("type")
    payload = obj.get("payload")
    pl = payload if isinstance(payload, Mapping) else {}
    if b.record is not None:
        if b.count_only:
            b.counted_head()
        else:
            record_head(b, f"{kind}  {pl.get('type', '?')}", b.record.note)
        msg = pl.get("message")
        if isinstance(msg, str) and msg:
            b.text(msg, style=p.dim, limit=UI_ROWS)
        elif kind != "event_msg":
            b.text(clip(dict(pl)), style=p.dim, limit=DIM_ROWS)
    elif kind == "response_item":
        _codex_item(b, pl)
    elif kind == "session_meta":
        head = Text("session", style=p.heading)
        head.append(
            f"  codex {visible(str(pl.get('cli_version', '')))} · "
            f"{visible(str(pl.get('cwd', '')))}",
            style=p.dim,
        )
        b.head(head)
        if isinstance(pl.get("instructions"), str):
            b.text(str(pl["instructions"]), style=p.dim, limit=2)
    elif kind == "turn_context":
        head = Text("turn context", style=p.heading)
        head.append(
            f"  {visible(str(pl.get('model', '')))} · approval "
            f"{visible(str(pl.get('approval_policy', '')))}",
            style=p.dim,
        )
        b.head(head)
    elif kind == "compacted":
        head = Text("compacted", style=p.heading)
        head.append("  a summary replaced the history before this line", style=p.dim)
        b.head(head)
        compaction_rows(b)
        message = pl.get("message")
        said = isinstance(message, str) and message
        if said and not summary_fold(b, str(message), "its summary (message)"):
            b.text(str(message))
        history = pl.get("replacement_history")
        if isinstance(history, list):
            b.text(
                f"the model continued from {plural(len(history), 'item')} of replacement "
                "history (replacement_history), not from the lines above",
                style=p.dim,
                limit=DIM_ROWS,
            )
    elif isinstance(kind, str) and kind in _CODEX_LINE_NOTES:  # a type may be any JSON
        head = Text(visible(kind), style=p.heading)
        head.append("  " + _CODEX_LINE_NOTES[kind], style=p.dim)
        b.head(head)
        b.text(clip(dict(pl)), style=p.dim, limit=DIM_ROWS)
    else:
        head = Text(visible(str(kind)), style=p.heading)
        head.append("  kept as written", style=p.dim)
        b.head(head)
        b.text(clip(dict(pl)), style=p.dim, limit=DIM_ROWS)
    b.findings()


#: What Codex's newer line types are (CODEX.md, 2026 additions), as far as is known.
_CODEX_LINE_NOTES: dict[str, str] = {
    "world_state": "the environment's state Codex recorded for the turn",
    "inter_agent_communication": "a message between Codex agents",
    "inter_agent_communication_metadata": "about a message between Codex agents",
}


# -- Qwen Code --------------------------------------------------------------------------------


def build_qwen(b: RowBuilder, obj: Mapping[str, Any]) -> None:
    """Rows of one Qwen Code record."""
    p = b.palette
    kind = obj.get("type")
    message = obj.get("message")
    parts = message.get("parts") if isinstance(message, Mapping) else None
    parts = parts if isinstance(parts, list) else []
    subtype = obj.get("subtype")
    if b.record is not None:
        record_rows(b, f"system  {subtype}", obj.get("systemPayload"))
    elif kind == "system" and subtype == COMPRESSION:
        head = Text("chat compression", style=p.heading)
        head.append("  a compressed history replaced the one before this line", style=p.dim)
        b.head(head)
        _tags(b)
        compaction_rows(b)
        payload = obj.get("systemPayload")
        history = payload.get("compressedHistory") if isinstance(payload, Mapping) else None
        texts = [
            str(part["text"])
            for entry in (history if isinstance(history, list) else [])
            if isinstance(entry, Mapping) and isinstance(entry.get("parts"), list)
            for part in entry["parts"]
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        ]
        summary = "\n\n".join(texts)
        if summary and not summary_fold(b, summary, "its compressed history"):
            b.text(summary)
    elif kind == "system" and subtype == REWIND:
        head = Text("rewind", style=p.heading)
        head.append("  the records after the turn it went back to were never sent again",
                    style=p.dim)  # fmt: skip
        b.head(head)
        _tags(b)
    elif kind in ("user", "assistant", "tool_result"):
        _qwen_message(b, str(kind), obj, parts)
    else:
        head = Text(visible(f"{kind}  {subtype or ''}".strip()), style=p.heading)
        head.append("  kept as written", style=p.dim)
        b.head(head)
        b.text(clip(dict(obj)), style=p.dim, limit=DIM_ROWS)
    b.findings()


def _qwen_message(b: RowBuilder, kind: str, obj: Mapping[str, Any], parts: list[Any]) -> None:
    p = b.palette
    if b.count_only:
        b.counted_head()
    elif kind == "tool_result":
        head = Text("← result", style=p.role("tool"))
        call = next((fr for _, _, fr, _ in qwen_results(parts)), None)
        if isinstance(call, Mapping):
            head.append(f"  of {visible(str(call.get('name', '?')))}", style=p.tool_name)
            head.append(f"  call {visible(short_id(str(call.get('id', '')), 24))}", style=p.dim)
        b.head(head)
    else:
        role = "assistant" if kind == "assistant" else "user"
        head = Text(role, style=p.role(role))
        if kind == "assistant" and isinstance(obj.get("model"), str):
            head.append(f"  {visible(obj['model'])}", style=p.dim)
        b.head(head)
    lifetime_rows(b)
    if kind == "tool_result":
        for _, base, _, result in qwen_results(parts):
            _qwen_text(b, base, result)
        return
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        text = part.get("text")
        if isinstance(text, str) and part.get("thought") is True:
            b.text(text, style=p.dim, limit=REASONING_ROWS)
        elif isinstance(text, str):
            b.text(text)
        call = part.get("functionCall")
        if isinstance(call, Mapping):
            call_head(b, call.get("name", "?"), call.get("id", ""))
            b.text(clip(call.get("args")), indent=ARGUMENTS_INDENT, limit=ARGUMENTS_ROWS)


# -- Gemini CLI -------------------------------------------------------------------------------


def build_gemini(b: RowBuilder, obj: Mapping[str, Any]) -> None:
    """Rows of one Gemini CLI session line."""
    p = b.palette
    patch = obj.get("$set")
    if b.record is not None:
        shown = obj.get("content") if "content" in obj else patch
        record_rows(b, str(obj.get("type") or "$set"), shown)
    elif isinstance(patch, Mapping) and isinstance(patch.get("messages"), list):
        _gemini_history(b, [m for m in patch["messages"] if isinstance(m, Mapping)])
    elif isinstance(obj.get("$rewindTo"), str):
        head = Text("rewind", style=p.heading)
        words = f"  to message {visible(short_id(obj['$rewindTo'], 24))}: it and the messages "
        head.append(words + "after it were dropped", style=p.dim)
        b.head(head)
        _tags(b)
    elif gemini_message(obj):
        _gemini_message(b, obj)
    elif "sessionId" in obj:
        head = Text("session", style=p.heading)
        kind, started = obj.get("kind", "main"), obj.get("startTime", "?")
        head.append(f"  gemini cli · {visible(str(kind))} · started {visible(str(started))}",
                    style=p.dim)  # fmt: skip
        b.head(head)
    else:
        head = Text("line", style=p.heading)
        head.append("  kept as written", style=p.dim)
        b.head(head)
        b.text(clip(dict(obj)), style=p.dim, limit=DIM_ROWS)
    b.findings()


def _gemini_history(b: RowBuilder, history: list[Mapping[str, Any]]) -> None:
    """A `$set` of the whole history: what it is, and the results in it that are markers
    new to the model (what changed in such a rewrite is an older result masked); once
    the analysis is there, a marker it reported earlier is not drawn again."""
    p = b.palette
    messages = [m for m in history if gemini_message(m)]
    head = Text("history rewritten", style=p.heading)
    head.append(f"  {plural(len(messages), 'message')} replace the conversation before "
                "this line", style=p.dim)  # fmt: skip
    b.head(head)
    _tags(b)
    compaction_rows(b)
    landed = isinstance(b.ctx.analysis, SessionAnalysis)
    base = 0
    for m in messages:
        end = base
        for _, at, call, text in gemini_results(m):
            end = base + at + len(text) + 1
            sites = gemini_sites(b.line, base + at, text, call.get("id"), call.get("name"))
            if sites and (landed is False or any(_site(b, s.key) for s in sites)):
                _gemini_call_head(b, call, result=True)
                _gemini_text(b, base + at, text, call)
        base = end


def _gemini_message(b: RowBuilder, obj: Mapping[str, Any]) -> None:
    p = b.palette
    kind = str(obj.get("type"))
    role = "assistant" if kind == "gemini" else "user"
    if b.count_only:
        b.counted_head()
    else:
        head = Text(kind, style=p.role(role))
        if isinstance(obj.get("model"), str):
            head.append(f"  {visible(obj['model'])}", style=p.dim)
        b.head(head)
    lifetime_rows(b)
    _tags(b)
    thoughts = obj.get("thoughts")
    for thought in thoughts if isinstance(thoughts, list) else []:
        if isinstance(thought, Mapping) and isinstance(thought.get("description"), str):
            b.text(thought["description"], style=p.dim, limit=REASONING_ROWS)
    content = obj.get("content")
    parts = content if isinstance(content, list) else []
    texts = [content] if isinstance(content, str) else [
        str(part["text"]) for part in parts
        if isinstance(part, Mapping) and isinstance(part.get("text"), str)
    ]  # fmt: skip
    for text in texts:
        if text:
            b.text(text)
    calls = obj.get("toolCalls")
    results: dict[int, list[tuple[int, str]]] = {}
    for _, at, call, text in gemini_results(obj):
        results.setdefault(id(call), []).append((at, text))
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, Mapping):
            continue
        _gemini_call_head(b, call, result=False)
        b.text(clip(call.get("args")), indent=ARGUMENTS_INDENT, limit=ARGUMENTS_ROWS)
        for at, text in results.get(id(call), ()):
            _gemini_call_head(b, call, result=True)
            _gemini_text(b, at, text, call)


def _gemini_call_head(b: RowBuilder, call: Mapping[str, Any], *, result: bool) -> None:
    call_head(b, call.get("name", "?"), call.get("id", ""), result=result)


def _gemini_text(b: RowBuilder, base: int, text: str, call: Mapping[str, Any]) -> None:
    """A result the model got, with a marker row where Gemini CLI's marker words stand (the
    pass's own sites: `gemini.text_sites`)."""
    sites = gemini_sites(b.line, base, text, call.get("id"), call.get("name"))
    site_text(b, base, text, sites)


# -- OpenCode ---------------------------------------------------------------------------------


def build_opencode(b: RowBuilder, obj: Mapping[str, Any]) -> None:
    """Rows of one line of an OpenCode session (`core.opencode_store`'s lines)."""
    p = b.palette
    kind = obj.get("opencode")
    data = obj.get("data")
    data = data if isinstance(data, Mapping) else {}
    if b.record is not None:
        record_rows(b, str(data.get("type")), dict(data))
    elif kind == "session":
        head = Text("session", style=p.heading)
        said = [str(obj.get(k)) for k in ("version", "directory", "title") if obj.get(k)]
        head.append(visible("  opencode " + " · ".join(said)), style=p.dim)
        b.head(head)
        if obj.get("source") == "storage":
            b.text("read from OpenCode's older storage tree (JSON files)", style=p.dim, limit=2)
    elif kind == "message":
        _opencode_message(b, data)
    elif kind == "part":
        _opencode_part(b, obj, data)
    else:
        head = Text("line", style=p.heading)
        head.append("  kept as written", style=p.dim)
        b.head(head)
        b.text(clip(dict(obj)), style=p.dim, limit=DIM_ROWS)
    b.findings()


def _opencode_message(b: RowBuilder, data: Mapping[str, Any]) -> None:
    p = b.palette
    role = "assistant" if data.get("role") == "assistant" else "user"
    if b.count_only:
        b.counted_head()
    else:
        head = Text(role, style=p.role(role))
        if role == "assistant" and data.get("modelID"):
            head.append(visible(f"  {data.get('providerID') or ''}/{data['modelID']}"), style=p.dim)
        if data.get("summary") is True:
            head.append("  the summary of a compaction", style=p.dim)
        b.head(head)
    error = data.get("error")
    if isinstance(error, Mapping):
        said = error.get("data")
        message = said.get("message") if isinstance(said, Mapping) else None
        b.text(
            visible(f"error {error.get('name', '?')}: {message or ''}".strip()),
            style=p.dim,
            limit=DIM_ROWS,
        )


def _opencode_part(b: RowBuilder, obj: Mapping[str, Any], data: Mapping[str, Any]) -> None:
    p = b.palette
    kind = data.get("type")
    text = data.get("text")
    if kind == "text" and isinstance(text, str):
        lifetime_rows(b)
        if data.get("ignored") is True:
            b.text("(ignored: never sent to the model)", style=p.dim, limit=1)
            b.text(text, style=p.dim, limit=DIM_ROWS)
        else:
            b.text(text)
    elif kind == "reasoning" and isinstance(text, str):
        b.text(text, style=p.dim, limit=REASONING_ROWS)
    elif kind == "tool":
        state = data.get("state")
        status = state.get("status", "?") if isinstance(state, Mapping) else None
        call_head(b, data.get("tool", "?"), data.get("callID", ""), note=status)
        _tags(b)
        lifetime_rows(b)
        if isinstance(state, Mapping):
            b.text(clip(state.get("input")), indent=ARGUMENTS_INDENT, limit=ARGUMENTS_ROWS)
        result = tool_text(state)
        if result is not None:
            if b.count_only:
                b.counted_head()
            else:
                b.head(Text("← result", style=p.role("tool")))
            call = str(data.get("callID")) if isinstance(data.get("callID"), str) else None
            tool = str(data.get("tool")) if isinstance(data.get("tool"), str) else None
            sites = opencode_sites(b.line, result, call, tool, state)
            site_text(b, 0, result, sites)
    elif kind == "compaction":
        head = Text("compaction", style=p.heading)
        how = "automatic" if data.get("auto") is True else "asked for"
        head.append(f"  ({how}) the history before this line was summarised", style=p.dim)
        b.head(head)
        _tags(b)
        compaction_rows(b)
        b.text(f"the model was asked: {COMPACTION_PROMPT}", style=p.dim, limit=2)
    elif kind == "file":
        head = Text("file", style=p.heading)
        head.append(visible(f"  {data.get('filename') or data.get('url') or '?'}  "
                            f"{data.get('mime') or ''}"), style=p.dim)  # fmt: skip
        b.head(head)
    else:
        head = Text(visible(str(kind)), style=p.heading)
        head.append("  kept as written", style=p.dim)
        b.head(head)
        b.text(clip(dict(data)), style=p.dim, limit=DIM_ROWS)


# -- Copilot CLI ------------------------------------------------------------------------------


def build_copilot(b: RowBuilder, obj: Mapping[str, Any]) -> None:
    """Rows of one Copilot CLI event."""
    p = b.palette
    kind = obj.get("type")
    data = obj.get("data")
    data = data if isinstance(data, Mapping) else {}
    if b.record is not None:
        record_rows(b, str(kind), dict(data))
    elif kind in ("user.message", "system.message"):
        role = "user" if kind == "user.message" else "system"
        if b.count_only:
            b.counted_head()
        else:
            b.head(Text(role, style=p.role(role)))
        lifetime_rows(b)
        content, sent = data.get("content"), data.get("transformedContent")
        if isinstance(content, str) and role == "system":
            b.text(content, style=p.dim, limit=DIM_ROWS)
        elif isinstance(content, str):
            b.text(content)
        if isinstance(sent, str) and sent != content:
            b.text("sent to the model as (transformedContent):", style=p.dim, limit=1)
            b.text(sent, style=p.dim, limit=DIM_ROWS)
    elif kind == "assistant.message":
        if b.count_only:
            b.counted_head()
        else:
            head = Text("assistant", style=p.role("assistant"))
            if isinstance(data.get("model"), str):
                head.append(f"  {visible(data['model'])}", style=p.dim)
            b.head(head)
        lifetime_rows(b)
        if isinstance(data.get("content"), str) and data["content"]:
            b.text(data["content"])
        requests = data.get("toolRequests")
        for r in requests if isinstance(requests, list) else []:
            if not isinstance(r, Mapping):
                continue
            call_head(b, r.get("name", "?"), r.get("toolCallId", ""))
            b.text(clip(r.get("arguments")), indent=ARGUMENTS_INDENT, limit=ARGUMENTS_ROWS)
    elif kind == "assistant.reasoning":
        if isinstance(data.get("content"), str):
            b.text(data["content"], style=p.dim, limit=REASONING_ROWS)
    elif kind == "tool.execution_complete":
        if b.count_only:
            b.counted_head()
        else:
            head = Text("← result", style=p.role("tool"))
            head.append(f"  of call {visible(short_id(str(data.get('toolCallId', '')), 24))}",
                        style=p.dim)  # fmt: skip
            if data.get("success") is False:
                head.append("  failed", style=p.dim)
            b.head(head)
        lifetime_rows(b)
        text = copilot_result(data)
        if text is not None:
            call = data.get("toolCallId")
            sites = copilot_sites(b.line, text, call if isinstance(call, str) else None, None)
            site_text(b, 0, text, sites)
        error = data.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            b.text(f"error: {error['message']}", style=p.dim, limit=DIM_ROWS)
    elif kind in ("session.compaction_complete", "session.truncation"):
        compacted = kind == "session.compaction_complete"
        head = Text("compaction" if compacted else "truncation", style=p.heading)
        head.append(
            "  a summary replaced the history before this line"
            if compacted
            else "  older messages were dropped to fit the context",
            style=p.dim,
        )
        b.head(head)
        _tags(b)
        compaction_rows(b)
        summary = data.get("summaryContent")
        if isinstance(summary, str) and summary and not summary_fold(b, summary, "its summary"):
            b.text(summary)
    else:
        head = Text(visible(str(kind)), style=p.heading)
        head.append("  kept as written", style=p.dim)
        b.head(head)
        b.text(clip(dict(data)), style=p.dim, limit=DIM_ROWS)
    b.findings()


def texts_of(items: object) -> list[str]:
    """The `text` of each item of a Codex content or summary list."""
    if type(items) is not list:
        return [] if not isinstance(items, list) else texts_of(list(items))
    return [
        str(item["text"])
        for item in items
        if (type(item) is dict or isinstance(item, Mapping)) and isinstance(item.get("text"), str)
    ]


def call_arguments(item: Mapping[str, Any]) -> object:
    """A Codex call's arguments: decoded when they are a JSON text, else as written.

    msgspec decodes them where it vouches for the text (what it accepts, the
    standard parser accepts alike: `core.transcript.fast_object`'s rule), the
    standard parser wherever it does not; a text neither takes stays a text.
    """
    args = item.get("arguments", item.get("input", item.get("action")))
    if not isinstance(args, str):
        return args
    if len(args) < _DEEP_BYTES:
        with contextlib.suppress(Exception):  # anything msgspec refuses: the parser decides
            return _decode(args)
    with contextlib.suppress(ValueError, RecursionError):  # too deep: shown as written
        return json.loads(args)
    return args


def _codex_item(b: RowBuilder, item: Mapping[str, Any]) -> None:
    p = b.palette
    itype = item.get("type")
    if itype == "message":
        if b.count_only:
            b.counted_head()
        else:
            role = str(item.get("role", "?"))
            b.head(Text(visible(role), style=p.role(role)))
        lifetime_rows(b)
        for text in texts_of(item.get("content")):
            b.text(text)
    elif itype == "reasoning":
        b.head(Text("reasoning", style=p.dim))
        lifetime_rows(b)
        summary = texts_of(item.get("summary"))
        for text in summary:
            b.text(text, style=p.dim, limit=REASONING_ROWS)
        if not summary and item.get("encrypted_content"):
            b.text(REASONING_ENCRYPTED, style=p.dim, limit=DIM_ROWS)
    elif itype in ("compaction", "compaction_summary"):
        head = Text("compaction", style=p.heading)
        head.append("  a remote compaction replaced the history before this line", style=p.dim)
        b.head(head)
        compaction_rows(b, summary=False)
        b.text(COMPACTION_ENCRYPTED, style=p.warning, limit=2)
    elif itype in ("function_call", "custom_tool_call", "local_shell_call"):
        call_head(b, item.get("name", itype), item.get("call_id", ""))
        lifetime_rows(b)
        b.text(clip(call_arguments(item)), indent=ARGUMENTS_INDENT, limit=ARGUMENTS_ROWS)
    elif isinstance(itype, str) and itype in OUTPUT_TYPES:
        if b.count_only:
            b.counted_head()
        else:
            head = Text("← output", style=p.role("tool"))
            call = visible(short_id(str(item.get("call_id", "")), 24))
            head.append(f"  of {call}", style=p.dim)
            b.head(head)
        lifetime_rows(b)
        for _, base, text in output_parts(item.get("output")):
            _notice_text(b, base, text)
    else:
        head = Text(visible(str(itype)), style=p.heading)
        head.append("  kept as written", style=p.dim)
        b.head(head)
        b.text(clip(dict(item)), style=p.dim, limit=DIM_ROWS)


def build_foreign(b: RowBuilder, fmt: Format, parsed: Mapping[str, Any] | LineProblem) -> None:
    """Rows of one line of a non-reference transcript.

    One of the agent's own records, while records are folded, is no rows of its
    own: the first of a run draws the run's fold row, the others nothing
    (`viewer.folds`). Built to be searched (`expand`), it shows its own rows;
    expanded by the reader (enter while it was shown), it still folds.
    """
    if isinstance(parsed, LineProblem):
        build_problem(b, parsed)
        return
    record = b.record = record_of(fmt, parsed)
    if record is not None and b.ctx.folds(b.line):
        b.folded = True
        if not b.searched:
            if not b.after_fold:
                _fold_row(b)
            return
    if fmt is Format.CODEX:
        build_codex(b, parsed)
    elif fmt is Format.QWEN:
        build_qwen(b, parsed)
    elif fmt is Format.GEMINI:
        build_gemini(b, parsed)
    elif fmt is Format.OPENCODE:
        build_opencode(b, parsed)
    elif fmt is Format.COPILOT:
        build_copilot(b, parsed)
    else:
        build_claude(b, parsed)


def _fold_row(b: RowBuilder) -> None:
    """The one row of a run of folded records: how many of what (`folds.fold_words`)."""
    if b.count_only:
        b.counted_head()
        return
    runs = b.runs
    records, more = runs.fold_run(b.line) if runs is not None else ([], False)
    if not records and b.record is not None:
        records = [b.record]
    words = visible(fold_words(records, more=more)) + " (enter shows them)"  # types are text
    b.head(Text(FOLDED_MARK + words, style=b.palette.dim), "fold")


def call_head(
    b: RowBuilder, name: object, call_id: object, *, result: bool = False, note: object = None
) -> None:
    """A tool call's heading (`⚙ name  call id`, or `← result of …` for its result's), with
    `note` after it (a state); counted alone when the block is only counted."""
    if b.count_only:
        b.counted_head()
        return
    p = b.palette
    head = Text("← result of " if result else "⚙ ", style=p.role("tool") if result else p.strong)
    head.append(visible(str(name)), style=p.tool_name)
    head.append(f"  call {visible(short_id(str(call_id), 24))}", style=p.dim)
    if note is not None:
        head.append(f"  {visible(str(note))}", style=p.dim)
    b.head(head)


def record_rows(b: RowBuilder, name: str, shown: object) -> None:
    """An agent's own record on its own rows: its heading and what it is, then what it
    holds, dimmed (`b.record`, which the caller has)."""
    if b.count_only:
        b.counted_head()
    else:
        record_head(b, name, b.record.note if b.record is not None else "")
    b.text(clip(shown), style=b.palette.dim, limit=DIM_ROWS)


def record_head(b: RowBuilder, name: str, note: str) -> None:
    """The heading of a record on its own rows: its type and what it is, never sent.

    Unfolded while records are folded, it is kind `unfold` (enter folds its run again).
    """
    p = b.palette
    unfolded = b.ctx.fold_records and b.record is not None
    head = Text(UNFOLDED_MARK if unfolded else "", style=p.dim)
    head.append(visible(name), style=p.heading)
    head.append(f"  {visible(note)}", style=p.dim)
    b.head(head, "unfold" if unfolded else "head")


def preview_bytes(site: SpillSite, head: bytes) -> int:
    """How many bytes at the start of the sidecar the model saw (its preview).

    Bash's preview starts after the leading blank lines it drops, so those
    bytes count as seen too (the boundary is where the unseen part begins).
    """
    if site.preview is None:
        return 0
    seen = len(site.preview.encode("utf-8", "surrogatepass"))
    if site.bash:
        text = head.decode("utf-8", "replace")
        stripped = text.lstrip(" \t\r\n")
        lead = text[: len(text) - len(stripped)]
        nl = lead.rfind("\n")
        seen += len(lead[: nl + 1].encode("utf-8"))
    return seen


__all__: Sequence[str] = (
    "build_foreign",
    "compaction_rows",
    "lifetime_rows",
    "preview_bytes",
    "spill_rows",
    "spill_words",
    "summary_fold",
)

"""Building blocks: the rows of one transcript line (file view) or replay entry (model view).

`RowBuilder` adds the line-number gutter, wraps text to the width and collapses
long pieces to a few rows with a "… N more lines" row; `build_envelope` knows
how every envelope type is shown; `FileSource` and `ModelSource` are what a
`viewer.document.Document` lays out. Every style comes from the
`viewer.palette.Palette` on the shared context (read once per block, so a
theme switch mid-build never mixes two palettes in one block).
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Container, Mapping, Sequence
from typing import Any, Protocol

from rich.cells import cell_len, chop_cells
from rich.style import Style
from rich.text import Text

from transcript_view.core.analysis import Analysis
from transcript_view.core.call_context import (
    CLEARED_TEXT,
    CallContext,
    ContextEntry,
    compacted_history,
    context_of_call,
)
from transcript_view.core.envelopes import (
    Compaction,
    Elision,
    Envelope,
    Grants,
    Message,
    RunContext,
    SessionMeta,
    Subagent,
    ToolDispatched,
    ToolSettled,
)
from transcript_view.core.findings import Finding, Severity
from transcript_view.core.formats.agent_records import RecordKind, record_of
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis, SpillSite
from transcript_view.core.markers import Marker
from transcript_view.core.records import ReplayEntry, SiteKey, ToolOperation
from transcript_view.core.tables import Replay
from transcript_view.core.text import (
    compact_json,
    human_size,
    plural,
    short_id,
    strip_sgr,
    visible,
)
from transcript_view.core.transcript import (
    LineProblem,
    Transcript,
    parse_json_line,
    parse_line_bytes,
)
from transcript_view.viewer.context import BlockContext, BlockKey
from transcript_view.viewer.folds import FOLD_SCAN_LINES
from transcript_view.viewer.palette import Palette, severity_mark
from transcript_view.viewer.rows import (
    COLLAPSE_ROWS,
    GUTTER,
    Block,
    InlineArtifact,
    Row,
    badge_text,
    collapse_split,
    describe_op,
    shown_rows,
    wrap,
    wrap_count,
    wrap_sgr,
    wrap_words,
)
from transcript_view.viewer.session_blocks import (
    build_codex,
    build_foreign,
    compaction_rows,
    lifetime_rows,
    spill_rows,
    spill_words,
    summary_fold,
)

#: A line longer than this is never parsed or wrapped whole on the UI thread: it
#: shows a prefix and a label, and enter pages through it (`TranscriptView.LineRequested`).
#: Some agents write 50 MB lines; json.loads and wrapping those take seconds.
BIG_LINE_BYTES = 1 << 20
#: Rows of a big line's prefix shown inline.
BIG_LINE_ROWS = 6
#: Rows a tool call's arguments show before they collapse (a message's content: COLLAPSE_ROWS).
CALL_ROWS = 3
#: Rows a dispatch's arguments show, and a settle's reason and stored-artifact key.
DISPATCH_ROWS = REASON_ROWS = ARTIFACT_ROWS = 1
#: Rows a settle's error shows, and each field of a session-meta line.
ERROR_ROWS = META_ROWS = 2

# -- building rows -----------------------------------------------------------------------------


#: What a counting `RowBuilder` puts where a row would go: one shared, never shown.
_COUNTED = Row(Text(""), "counted", 0)


class RowBuilder:
    """Accumulates the rows of one block, adding the gutter and collapsing long pieces.

    With `count_only`, it makes the same decisions (what wraps, what collapses,
    how many rows a marker takes) but puts a placeholder where each row would
    go: the layout worker needs only how many rows every block has, and
    styling millions of rows it throws away was most of its time. The tests
    hold the count of every block of every fixture to the built block's.
    """

    def __init__(
        self,
        view: str,
        key: int,
        line: int,
        ctx: BlockContext,
        expand: bool = False,
        *,
        count_only: bool = False,
    ) -> None:
        """`key` identifies the block within its view; `expand` shows every row (search)."""
        self.view = view
        self.key = key
        self.line = line
        self.ctx = ctx
        self.palette: Palette = ctx.palette
        """Read once: every row of the block is styled from the same palette."""
        self.count_only = count_only
        self.rows: list[Row] = []
        self.inserts: list[tuple[int, InlineArtifact]] = []
        self.expanded = expand or ctx.is_expanded(BlockKey(view, key))
        self.searched = expand
        """Built to be searched: every row, a folded record's own included (`build_foreign`)."""
        self.collapsed_any = False
        self.after_fold = False
        """Whether the line before is a folded record (`viewer.folds`): the caller's to set."""
        self.folded = False
        """Whether this line is a folded record: the builder's to set, the caller's to read."""
        self.record: RecordKind | None = None
        """What this line is when it is one of the agent's own records (the builder's)."""
        self.runs: FoldRuns | None = None
        """Where a fold row reads the run it stands for (the file view's source)."""
        self.transcript: Transcript | None = None
        """The file view's transcript: what a message's cost is read back from
        (`core.lifetime.cost`)."""

    def _gutter(self) -> Text:
        if not self.rows and self.line > 0:
            return Text(f"{self.line:>{GUTTER - 1}} ", style=self.palette.dim)
        return Text(" " * GUTTER)

    def counted_head(self) -> None:
        """Where a counting builder skips making a heading: it is one row, whatever it says."""
        self.rows.append(_COUNTED)

    def head(self, text: Text, kind: str = "head") -> None:
        """A one-row heading, cut with an ellipsis at the width.

        Headings are built from transcript fields (roles, types, tool names): a
        caller that forgot `visible` must not reach the terminal with a control
        character, so one that slipped through is made visible here (losing the
        heading's inner styles, which is the lesser harm).
        """
        if self.count_only:
            self.rows.append(_COUNTED)
            return
        plain = text.plain
        if visible(plain) != plain:
            text = Text(visible(plain), style=self.palette.bad)
        row = self._gutter()
        row.append_text(text)
        row.truncate(self.ctx.width, overflow="ellipsis")
        self.rows.append(Row(row, kind, self.line))

    def text(
        self,
        body: str,
        style: Style | None = None,
        indent: int = 2,
        limit: int = COLLAPSE_ROWS,
        *,
        sgr: bool = False,
    ) -> None:
        """A text piece wrapped to the width, collapsed to a few rows unless expanded.

        `style` is a palette entry (None: the view's own text colour). With
        `sgr` the text is a program's output: its SGR sequences are drawn as
        the colours and styles they set, over `style` (`viewer.rows.wrap_sgr`),
        and it is wrapped and counted without them (`core.text.strip_sgr`).

        Only tool output is drawn so (a tool result's text, a spill's preview,
        a Codex output, a reference `tool` message). There, colour codes are a
        program formatting its output for a terminal, and glyphs of them are
        noise. A message's text is what a person or the model wrote: an escape
        there is no terminal's formatting but a thing said (pasted, echoed,
        injected), and seeing it as written is the point of the view, so it
        stays glyphs, as do tool calls' arguments and the agent's own records.
        """
        width = self.ctx.width - GUTTER - indent
        if self.count_only:
            plain = strip_sgr(body) if sgr else body
            count = wrap_count(plain, width, None if self.expanded else limit + 1)
            self.collapsed_any = self.collapsed_any or (not self.expanded and count > limit)
            self.rows.extend([_COUNTED] * shown_rows(count, limit, self.expanded))
            return
        pieces: Sequence[str] | Sequence[Text] = (
            wrap_sgr(body, width) if sgr and "\x1b" in body else wrap(body, width)
        )
        pad = " " * indent
        if not self.expanded and len(pieces) > limit:
            keep_head, keep_tail = collapse_split(limit)
            hidden = len(pieces) - keep_head - keep_tail
            shown: list[str | Text | int] = [*pieces[:keep_head], hidden]
            if keep_tail:
                shown.extend(pieces[-keep_tail:])
            self.collapsed_any = True
        else:
            shown = list(pieces)
        for piece in shown:
            row = self._gutter()
            if isinstance(piece, int):
                row.append(
                    pad + f"… {plural(piece, 'more line')} (enter to expand)",
                    style=self.palette.dim,
                )
                self.rows.append(Row(row, "more", self.line))
            elif isinstance(piece, Text):
                row.append(pad)
                at = len(row)
                row.append_text(piece)
                if style is not None:
                    row.stylize_before(style, at)  # under the program's own styles
                self.rows.append(Row(row, "body", self.line))
            else:
                row.append(pad)
                row.append(piece, style=style)
                self.rows.append(Row(row, "body", self.line))

    def marker(self, key: SiteKey, marker: Marker, quoted: bool, indent: int = 2) -> None:
        """A marker on its own row(s): a badge and the marker text, or a quoted label."""
        width = self.ctx.width - GUTTER - indent
        pad = " " * indent
        p = self.palette
        if quoted:
            label = Text("❝ quoted ", style=p.quoted_label)
            style = p.quoted
            kind = "quoted"
        else:
            label = badge_text(self.ctx.marker_state(key, marker), p)
            label.append(" ")
            style = p.marker
            kind = "marker"
        first = width - label.cell_len
        shown = visible(marker.text)
        parts = chop_cells(shown, max(first, 10)) if shown else [""]
        rest = "".join(parts[1:])
        lines = [parts[0], *(wrap(rest, width) if rest else [])]
        for i, piece in enumerate(lines):
            if self.count_only:
                self.rows.append(_COUNTED)
                continue
            row = self._gutter()
            row.append(pad)
            if i == 0:
                row.append_text(label)
            row.append(piece, style=style)
            self.rows.append(Row(row, kind, self.line, key, cont=i > 0))
        if not quoted:
            for f in self.ctx.findings_of(key):
                self.finding_row(f, indent + 2, key)
        art = self.ctx.artifact(key, self.view)  # the model view: only if opened there
        if art is not None and not quoted:
            self.inserts.append((len(self.rows) - 1, art))

    def note(self, words: str, indent: int = 2) -> None:
        """The viewer's own words about the line (kind `note`: search skips them), dim,
        word-wrapped, never collapsed: a lifetime, a compaction's figures."""
        width = self.ctx.width - GUTTER - indent
        pieces = wrap_words(visible(words), width, width - 2)
        if self.count_only:
            self.rows.extend([_COUNTED] * len(pieces))
            return
        for i, piece in enumerate(pieces):
            row = self._gutter()
            row.append(" " * (indent if i == 0 else indent + 2) + piece, style=self.palette.dim)
            row.truncate(self.ctx.width, overflow="ellipsis")  # only a very narrow view
            self.rows.append(Row(row, "note", self.line, cont=i > 0))

    def jump(self, words: str, target: int, indent: int = 4) -> None:
        """One row that enter follows to transcript line `target` (kind `jump`)."""
        if self.count_only:
            self.rows.append(_COUNTED)
            return
        row = self._gutter()
        row.append(" " * indent + visible(words), style=self.palette.tool_name)
        row.truncate(self.ctx.width, overflow="ellipsis")
        self.rows.append(Row(row, "jump", self.line, target=target))

    def labelled_marker(self, key: SiteKey, label: Text, words: str, indent: int = 2) -> None:
        """A marker drawn from words (another format's): `label` (its badge), then `words`.

        The rows are kind `marker` (continuations `cont`), as a reference
        marker's are, so navigation, enter, `e` and `c` treat both alike.
        """
        width = self.ctx.width - GUTTER - indent
        pieces = wrap(words, max(width - label.cell_len, 10))
        for i, piece in enumerate(pieces):
            if self.count_only:
                self.rows.append(_COUNTED)
                continue
            row = self._gutter()
            row.append(" " * indent)
            if i == 0:
                row.append_text(label)
            row.append(piece, style=self.palette.marker)
            row.truncate(self.ctx.width, overflow="ellipsis")
            self.rows.append(Row(row, "marker", self.line, key, cont=i > 0))

    def content(self, line: int, role: str, content: str) -> None:
        """Message content, split around markers that stand on their own line.

        A tool message's content is a tool's output: its colours are drawn
        (`text`'s `sgr`). Markers are found in the content as written; each
        piece between them is drawn on its own, so a colour never runs
        across a marker row.
        """
        sgr = role == "tool"
        markers = [
            (m, q) for m, q in self.ctx.markers_of(line, role, content) if m.on_own_line(content)
        ]
        pos = 0
        for m, quoted in markers:
            before = content[pos : m.start]
            if before.endswith("\n"):
                before = before[:-1]
            if pos > 0 and before.startswith("\n"):
                before = before[1:]
            if before or (pos == 0 and m.start > 0):
                self.text(before, sgr=sgr)
            self.marker(SiteKey(line, m.start), m, quoted)
            pos = m.end
        rest = content[pos:]
        if pos > 0 and rest.startswith("\n"):
            rest = rest[1:]
        if rest or pos == 0:
            self.text(rest, sgr=sgr)

    def findings(self) -> None:
        """Errors and warnings on this line (the ledger's), one row each."""
        for f in self.ctx.line_findings(self.line):
            if f.kind in _LINE_KINDS and not self.rows:
                continue
            self.finding_row(f)

    def finding_row(self, f: Finding, indent: int = 2, site: SiteKey | None = None) -> None:
        """One finding: its severity's mark and kind in its colour, and its message.

        The message is wrapped, never cut: a digest mismatch names two digests,
        and the half past the width is the half that says what the file holds.
        """
        p = self.palette
        style = {Severity.ERROR: p.error, Severity.WARNING: p.warning}.get(f.severity, p.dim)
        label = f"{severity_mark(f.severity)} {f.kind}: "
        self.labelled_rows(label, f.message, style, indent, site)

    def labelled_rows(
        self, label: str, message: str, style: Style, indent: int = 2, site: SiteKey | None = None
    ) -> None:
        """A finding-like row: `label` in `style`, then `message` word-wrapped under it.

        The first row is kind `finding` (what `p` stops at); the rows it wraps
        onto are `finding-wrap`, indented two cells past the label's start.
        """
        lead = " " * indent + label
        hang = indent + 2
        text = self.ctx.width - GUTTER
        pieces = wrap_words(visible(message), text - cell_len(lead), text - hang)
        if self.count_only:
            self.rows.extend([_COUNTED] * len(pieces))
            return
        for i, piece in enumerate(pieces):
            row = self._gutter()
            row.append(lead if i == 0 else " " * hang, style=style if i == 0 else None)
            row.append(piece)
            row.truncate(self.ctx.width, overflow="ellipsis")  # only a very narrow view
            kind = "finding" if i == 0 else "finding-wrap"
            self.rows.append(Row(row, kind, self.line, site, cont=i > 0))

    def big_line(self, transcript: Transcript, length: int) -> None:
        """The first rows of a line too long to parse here, and how much is hidden.

        Only a prefix of about `BIG_LINE_ROWS` rows is read (`raw_line(limit=)`),
        decoded without the character a cut may split, and wrapped; the label row
        (kind `bigline`) says how many bytes follow, which enter pages through.
        What the analysis learnt in its worker (markers, findings) still shows.
        """
        width = self.ctx.content_width
        take = min(length, BIG_LINE_ROWS * width)
        pieces: list[str] = []
        shown = 0
        for _ in range(4):  # escapes show wider than their bytes: shrink until it fits
            raw = transcript.raw_line(self.line, limit=take)
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            text = decoder.decode(raw, final=False)
            shown = len(raw) - len(decoder.getstate()[0])
            pieces = wrap(text, width)
            if len(pieces) <= BIG_LINE_ROWS or take <= width:
                break
            take = max(take * BIG_LINE_ROWS // len(pieces), width)
        if self.count_only:
            self.rows.extend([_COUNTED] * (len(pieces[:BIG_LINE_ROWS]) + 1))
        else:
            for piece in pieces[:BIG_LINE_ROWS]:
                row = self._gutter()
                row.append("  ")
                row.append(piece)
                self.rows.append(Row(row, "body", self.line))
            row = self._gutter()
            row.append(
                f"  … {human_size(length - shown)} more on this line (enter to page through)",
                style=self.palette.warning,
            )
            self.rows.append(Row(row, "bigline", self.line))
        for site in self.ctx.sites_by_line.get(self.line, []):
            if isinstance(site, SpillSite):
                spill_rows(self, site.key, spill_words(site.form, site, None), site)
            else:
                self.marker(site.key, site.marker, site.quoted)
        self.findings()

    @property
    def counted(self) -> int:
        """The block's rows so far, inline artifacts included: what `block().count` says."""
        if not self.inserts:
            return len(self.rows)
        return len(self.rows) + sum(a.count for _, a in self.inserts)

    def block(self) -> Block:
        """The finished block (a blank source line still gets no rows)."""
        return Block(self.line, self.rows, self.inserts, self.ctx.width, self.palette)


def _role_head(p: Palette, role: str, msg: Message | None, extra: str = "") -> Text:
    head = Text(role, style=p.role(role))
    if msg is not None:
        tags = []
        if msg.sysprompt:
            tags.append("system prompt")
        if msg.sticky:
            tags.append("sticky")
        if msg.depth is not None:
            tags.append(f"depth {msg.depth}")
        if msg.is_error:
            tags.append("error")
        for tag in tags:
            head.append(" ")
            head.append(f" {tag} ", style=p.tag if tag != "error" else p.tag_error)
    if extra:
        head.append("  ")
        head.append(visible(extra), style=p.dim)
    return head


#: Findings that stand for a line that is not an envelope (shown as its problem row).
_LINE_KINDS = frozenset({"malformed-line", "torn-tail"})


def build_envelope(b: RowBuilder, parsed: Envelope | LineProblem) -> None:
    """Rows for one transcript line in file order."""
    ctx = b.ctx
    p = b.palette
    if isinstance(parsed, LineProblem):
        # The kind `--check` reports for this line once the analysis has decided
        # (a bad last line is `torn-tail` only if something else parsed); the
        # reader's own word for it until then.
        decided = [f.kind for f in ctx.line_findings(b.line) if f.kind in _LINE_KINDS]
        head = Text(f"✗ {decided[0] if decided else parsed.kind}  ", style=p.error)
        head.append(visible(parsed.message), style=p.bad)
        b.head(head, "problem")
        b.text("raw: " + parsed.raw.decode("utf-8", errors="replace"), style=p.dim, limit=2)
        return
    env = parsed
    if isinstance(env, SessionMeta):
        head = Text("session", style=p.heading)
        head.append("  session-meta", style=p.dim)
        b.head(head)
        for key, value in env.payload.items():
            shown = value if isinstance(value, str) else compact_json(value)
            b.text(f"{key}: {shown}", limit=META_ROWS)
    elif isinstance(env, Message):
        # Counting, a heading is one row whatever it says: the operation lookups
        # it needs (each reads other lines back) are skipped.
        if b.count_only:
            b.counted_head()
        elif env.role == "tool":
            op = ctx.op_by_message.get(env.line)
            tool = op.tool if op is not None else ""
            extra = f"← {tool}  call {short_id(env.tool_call_id, 16)}"
            if ctx.analysis is not None:
                extra += f" · {describe_op(op)}"
            b.head(_role_head(p, "tool", env, extra))
        else:
            b.head(_role_head(p, env.role, env))
        lifetime_rows(b, message=env)
        b.content(env.line, env.role, env.content)
        for call in env.tool_calls:
            if b.count_only:
                b.counted_head()
            else:
                call_op = ctx.op_by_call.get((env.line, call.id))
                head = Text("  ⚙ ", style=p.strong)
                head.append(visible(call.name) or "?", style=p.tool_name)
                head.append(f"  call {visible(short_id(call.id, 16))}", style=p.dim)
                if ctx.analysis is not None:
                    head.append(f" · {describe_op(call_op)}", style=_op_style(p, call_op))
                b.head(head)
            b.text(call.arguments, indent=6, limit=CALL_ROWS)
    elif isinstance(env, ToolDispatched) and b.count_only:
        b.counted_head()
        args = env.arguments
        b.text(args if isinstance(args, str) else compact_json(args), indent=4, limit=DISPATCH_ROWS)
    elif isinstance(env, ToolDispatched):
        op = ctx.op_by_dispatch.get(env.line)
        head = Text("dispatch ", style=p.envelope)
        head.append(visible(env.tool), style=p.tool_name)
        head.append(
            f"  op {short_id(env.op_id)} call {visible(short_id(env.call_id, 16))}", style=p.dim
        )
        if op is not None and op.state.value in ("running-when-died", "settle-never-landed"):
            head.append(f"  {op.describe_state()}", style=p.error)
        b.head(head)
        args = env.arguments
        b.text(
            args if isinstance(args, str) else compact_json(args),
            style=p.dim,
            indent=4,
            limit=DISPATCH_ROWS,
        )
    elif isinstance(env, ToolSettled):
        if b.count_only:
            b.counted_head()
        else:
            op = ctx.op_by_settle.get(env.line)
            head = Text("settle ", style=p.envelope)
            head.append(visible(op.tool if op is not None else ""), style=p.tool_name)
            words = env.outcome or "?"
            if env.duration is not None:
                words += f" in {env.duration:.3g}s"
            head.append(f"  {visible(words)}", style=p.bad if env.outcome != "completed" else p.ok)
            head.append(f"  op {visible(short_id(env.op_id))}", style=p.dim)
            b.head(head)
        if env.error:
            b.text("error: " + env.error, style=p.bad, indent=4, limit=ERROR_ROWS)
        if env.reason:
            b.text("reason: " + env.reason, indent=4, limit=REASON_ROWS)
        art = env.artifact
        if art is not None:
            b.text(artifact_words(art), style=p.dim, indent=4, limit=ARTIFACT_ROWS)
    elif isinstance(env, Compaction):
        head = Text("compaction", style=p.heading)
        payload = env.payload
        head.append(
            f"  {_replaced(ctx, env)}" + (" · fallback" if payload.get("fallback") else ""),
            style=b.palette.dim,
        )
        b.head(head)
        compaction_rows(b)
        if not summary_fold(b, env.summary, "its summary"):
            b.text(env.summary)
    elif isinstance(env, Elision):
        items = env.items
        head = Text("elision", style=p.heading)
        head.append(
            f"  {plural(len(items), 'message')} replaced by "
            + ("a stub" if len(items) == 1 else "stubs"),
            style=p.dim,
        )
        b.head(head)
        for target, stub in items:
            b.text(f"{short_id(target)} → {stub}", limit=2)
    elif isinstance(env, Grants | RunContext | Subagent):
        head = Text(visible(env.type), style=p.heading)
        head.append("  " + _summary(env), style=p.dim)
        b.head(head)
        b.text(compact_json(dict(env.payload)), style=p.dim, limit=1)
    else:
        head = Text(f"unknown type {visible(env.type)}", style=p.heading)
        head.append("  kept as written", style=p.dim)
        b.head(head)
        b.text(compact_json(dict(env.payload)), style=p.dim, limit=1)
    b.findings()


def is_big_line(length: int) -> bool:
    """Whether a line of `length` bytes is shown in part, never parsed here (`big_line`)."""
    return length > BIG_LINE_BYTES


def line_record(fmt: Format, raw: bytes, line: int, offset: int) -> RecordKind | None:
    """What a line is when it is one of the agent's own records: what `build_line` finds.

    A line shown in part (`is_big_line`) is never one: it is not parsed.
    """
    if fmt is Format.REFERENCE or is_big_line(len(raw)):
        return None
    obj = parse_json_line(raw, line, offset)
    return record_of(fmt, obj) if isinstance(obj, Mapping) else None


def build_line(b: RowBuilder, fmt: Format, raw: bytes, offset: int) -> None:
    """Rows of one line of a transcript in `fmt`, from its bytes (shorter than `BIG_LINE_BYTES`).

    What `FileSource.build` draws for a line, and what the analysis's workers
    count it by (`viewer.measure.BlockRows`): one definition of a line's look,
    whichever process builds it. A reference line that does not parse is
    the reader's problem as a malformed line (`Transcript.parse` also asks
    whether it is the last, which only changes the word on its one heading).
    """
    if fmt is Format.REFERENCE:
        parsed = parse_line_bytes(raw, b.line, offset)
        if parsed is not None:
            build_envelope(b, parsed)
        return
    obj = parse_json_line(raw, b.line, offset)
    if obj is not None:
        build_foreign(b, fmt, obj)


def microcompaction_words(analysis: SessionAnalysis) -> str | None:
    """What the model view says of a Claude Code session's microcompaction: where it is
    marked, or that the file cannot tell (None: another format)."""
    if analysis.format is not Format.CLAUDE_CODE:
        return None
    if analysis.microcompactions:
        return (
            "Results that microcompaction cleared are marked where it happened: "
            "from there on the model no longer saw them in full."
        )
    return (
        "Microcompaction may have cleared old results from later requests without a "
        "record (before Claude Code 2.1.9): a sidecar named after a tool call may be "
        "such a result's full output, and the file cannot tell."
    )


def artifact_words(art: Mapping[str, Any]) -> str:
    """A settle's stored-artifact row: the file, its size and the start of its digest."""
    return (
        f"artifact {art.get('file')} · {art.get('bytes')} bytes · "
        f"sha256 {str(art.get('digest'))[:16]}…"
    )


def _replaced(ctx: BlockContext, env: Compaction) -> str:
    """What a compaction replaced, by line ("replaces lines 3–41"): ids place nothing.

    The lines are the analysis's (`Analysis.compactions`); until it lands, the
    id the line names is all there is.
    """
    through = visible(short_id(env.replaces_through_id))
    analysis = ctx.analysis
    if not isinstance(analysis, Analysis):
        return f"replaces through {through}"
    span = analysis.compactions.get(env.line)
    if span is None:
        return f"replaces nothing: {through} is not in the conversation"
    first, last = span
    if first < 0:
        return f"replaces nothing: every message through line {last:,} is sticky"
    if first == last:
        return f"replaces line {last:,}"
    return f"replaces lines {first:,}–{last:,}"


def _big_line_head(b: RowBuilder, length: int, op: ToolOperation | None, role: str) -> None:
    """The heading of a line too long to lay out: its size, and what the analysis knows."""
    p = b.palette
    head = Text(role, style=p.role(role)) if role else Text()
    if op is not None:
        head = Text("tool", style=p.role_tool)
        head.append(f"  ← {visible(op.tool)} · {describe_op(op)}", style=p.dim)
    head.append("  " if head.plain else "")
    head.append(f" {human_size(length)} line ", style=p.badge_big_line)
    head.append(f"  {length:,} bytes, shown in part", style=p.dim)
    b.head(head)


def _op_style(p: Palette, op: ToolOperation | None) -> Style:
    if op is None or op.state.value != "settled":
        return p.error
    return p.ok if op.outcome == "completed" and not op.is_error else p.bad


def _summary(env: Envelope) -> str:
    p: Mapping[str, Any] = env.payload
    if isinstance(env, RunContext):
        facts = p.get("facts")
        sections = p.get("sections")
        n_facts = len(facts) if isinstance(facts, list) else 0
        n_sections = len(sections) if isinstance(sections, list | dict) else 0
        return (
            f"run {short_id(str(p.get('run-id')))} · {plural(n_facts, 'fact')} · "
            f"{plural(n_sections, 'section')}"
        )
    return visible(", ".join(sorted(str(k) for k in p)[:8]))


# -- sources: what a block is, for each view ---------------------------------------------------


class FoldRuns(Protocol):
    """What a fold row reads: the run of folded records that starts on a line."""

    def fold_run(self, line: int) -> tuple[list[RecordKind], bool]:
        """The records of the folded run from `line`, and whether it goes on past them."""
        ...


class BlockSource(Protocol):
    """What a `Document` lays out: a growing sequence of blocks."""

    view: str

    def available(self) -> int:
        """How many blocks can be built now."""
        ...

    def build(self, index: int, expand: bool = False, *, count_only: bool = False) -> Block:
        """Block `index` at the context's current width and state (`expand`: uncollapsed).

        With `count_only` its rows are placeholders: only `Block.count` is meant."""
        ...

    def line_of(self, index: int) -> int:
        """The transcript line block `index` shows."""
        ...

    def index_of_line(self, line: int) -> int | None:
        """The block showing transcript `line`, if this view has one."""
        ...

    def extent(self, blocks: int) -> tuple[int, int]:
        """How far the first `blocks` blocks reach into what this view shows, and its whole.

        In one unit that grows with the rows, for estimating the rows of blocks
        not laid out yet (`Document.estimated_rest`): the file view's bytes
        (a pager's estimate, which knows the file's end before its lines),
        another view's blocks.
        """
        ...


class FileSource:
    """The file view: one block per transcript line, in file order."""

    view = "file"

    def __init__(self, transcript: Transcript, ctx: BlockContext) -> None:
        """Blocks are read from `transcript` as they are built."""
        self.transcript = transcript
        self.ctx = ctx
        self.following = False
        self.index_complete = False
        self._last_record: tuple[int, RecordKind | None] = (0, None)
        """(line, its record kind) of the line built last (one tuple: read whole by threads)."""

    def available(self) -> int:
        """Lines whose end is known: a last line still being written waits."""
        count = self.transcript.line_count
        settled = self.index_complete and not self.following
        if count and not settled and not self.transcript.line_terminated(count):
            count -= 1
        return count

    def build(self, index: int, expand: bool = False, *, count_only: bool = False) -> Block:
        """Parse line `index + 1` and build its rows (placeholders with `count_only`)."""
        line = index + 1
        b = RowBuilder(self.view, index, line, self.ctx, expand, count_only=count_only)
        b.runs = self
        b.transcript = self.transcript
        try:
            length = self.transcript.line_length(line)
            if is_big_line(length):
                _big_line_head(b, length, self.ctx.op_by_message.get(line), "")
                b.big_line(self.transcript, length)
                return b.block()
            if self.ctx.format is not Format.REFERENCE:
                b.after_fold = line > 1 and self.folded(line - 1)
                start, _ = self.transcript.line_span(line)
                build_line(b, self.ctx.format, self.transcript.raw_line(line), start)
                self._last_record = (line, b.record)
                return b.block()
            parsed = self.transcript.parse(line)
        except (OSError, ValueError, IndexError) as exc:
            parsed = LineProblem(line, 0, "unreadable-line", f"could not read: {exc}", b"")
        if parsed is not None:
            build_envelope(b, parsed)
        return b.block()

    def record(self, line: int) -> RecordKind | None:
        """What `line` is when it is one of the agent's own records (`line_record`).

        The line built last is remembered: a layout builds lines in order, and
        each asks about the one before it.
        """
        last = self._last_record
        if last[0] == line:
            return last[1]
        transcript = self.transcript
        try:
            if is_big_line(transcript.line_length(line)):
                return None
            start, _ = transcript.line_span(line)
            return line_record(self.ctx.format, transcript.raw_line(line), line, start)
        except (OSError, ValueError, IndexError):
            return None

    def folded(self, line: int) -> bool:
        """Whether `line` is a folded record now (`viewer.folds`)."""
        return self.ctx.folds(line) and self.record(line) is not None

    def fold_run(self, line: int) -> tuple[list[RecordKind], bool]:
        """The folded records from `line` on, and whether the run goes on past them.

        Read a few megabytes at a time, at most `FOLD_SCAN_LINES` lines.
        """
        out: list[RecordKind] = []
        available = self.available()
        stop = min(available, line + FOLD_SCAN_LINES - 1)
        if line > stop:
            return out, False
        fmt = self.ctx.format
        try:
            for first, offset, parts in self.transcript.raw_chunks(line, stop):
                at = first
                for raw in parts:
                    record = line_record(fmt, raw, at, offset) if self.ctx.folds(at) else None
                    if record is None:
                        return out, False
                    out.append(record)
                    offset += len(raw) + 1
                    at += 1
        except (OSError, ValueError, IndexError):
            return out, False
        return out, stop < available and self.folded(stop + 1)

    def line_of(self, index: int) -> int:
        """Block i is line i + 1."""
        return index + 1

    def index_of_line(self, line: int) -> int | None:
        """Line n is block n - 1."""
        return line - 1 if line >= 1 else None

    def extent(self, blocks: int) -> tuple[int, int]:
        """Bytes of the file up to the end of line `blocks`, and of the lines to lay out.

        While the file is being indexed, its size (lines not found yet count);
        then the end of the last line there is a block for, so a line still
        being written (follow mode) is not taken for rows to come.
        """
        try:
            reached = self.transcript.line_span(blocks)[1] + 1 if blocks else 0
            if not self.index_complete:
                return reached, max(self.transcript.file_size(), reached)
            available = self.available()
            whole = self.transcript.line_span(available)[1] + 1 if available else 0
            return reached, max(whole, reached)
        except (OSError, IndexError):
            return blocks, blocks  # nothing to go by: no estimate


class ModelSource:
    """The model view: what the model was sent for one call, or is sent next.

    An LLM::Agent transcript's is its replay (`Analysis.replay`, or as of the
    call: `core.call_context.replay_at`); a Claude Code session's or a Codex
    rollout's is the call's context (`core.call_context.context_of_call`), each
    entry drawn from its lines as the file view draws them. Either is made the
    first time it is asked for (on the layout's worker, usually), once.
    """

    view = "model"

    def __init__(
        self,
        transcript: Transcript,
        ctx: BlockContext,
        call: int | None = None,
        *,
        wait: bool = False,
    ) -> None:
        """Entries come from the context's analysis; content is re-read by line.

        `call` is the 0-based call to show the context of (None: the next call).
        With `wait`, the view has no blocks until the context is made (`ready`):
        its maker (`TranscriptView`) makes it in a worker, never on the UI thread
        (a session that never compacted is its whole file).
        """
        self.transcript = transcript
        self.ctx = ctx
        self.call = call
        self.wait = wait
        self.making = False
        """Its maker has started making the context (the maker's to set)."""
        self._line_index: dict[int, int] | None = None
        self._lock = threading.Lock()
        self._context: CallContext | None = None
        self._history: tuple[int, list[dict[str, Any]]] | None = None
        """The last `compacted` line's history, decoded (`_history_item`)."""
        self._context_of: object = None
        """The analysis `_context` was made from (a new analysis makes it again)."""

    # -- what is shown ------------------------------------------------------------------

    def context(self) -> CallContext | None:
        """The call's context (None: no analysis yet), made once per analysis."""
        analysis = self.ctx.analysis
        if analysis is None:
            return None
        with self._lock:
            if self._context is None or self._context_of is not analysis:
                call = self.call
                if call is not None and call >= len(analysis.calls):
                    call = self.call = None  # a new analysis without it: the next call
                self._context = context_of_call(self.transcript, analysis, call, entries=False)
                self._context_of = analysis
                self._line_index = None
            return self._context

    def needs_context(self) -> bool:
        """Whether what is shown is made from a `CallContext` (not the analysis's replay)."""
        return not isinstance(self.ctx.analysis, Analysis) or self.call is not None

    def ready(self) -> bool:
        """Whether the blocks can be built without making the context first."""
        analysis = self.ctx.analysis
        if analysis is None or not self.needs_context():
            return True
        return self._context is not None and self._context_of is analysis

    def deferred(self) -> bool:
        """Whether the context waits to be shown before it is made (`wait`): nothing to
        lay out until then, and nothing being done about it (an idle view's model view)."""
        return self.wait and not self.making and not self.ready()

    def _replay(self) -> Replay | Sequence[ReplayEntry]:
        analysis = self.ctx.analysis
        if not isinstance(analysis, Analysis):
            return ()
        if self.call is None:
            return analysis.replay
        context = self.context()
        return context.replay if context is not None and context.replay is not None else ()

    def _entries(self) -> Sequence[ContextEntry]:
        """A session's entries (an LLM::Agent transcript's are its replay's)."""
        if not isinstance(self.ctx.analysis, SessionAnalysis):
            return ()
        context = self.context()
        return context.entries if context is not None else ()

    def header_words(self) -> str:
        """What the header calls this view (from the calls: the context need not be made)."""
        analysis = self.ctx.analysis
        call = self.call
        if analysis is None or call is None or call >= len(analysis.calls):
            return "model view: what the model is sent next"
        line = analysis.calls.lines[call]
        return f"model view: what the model was sent for call {call + 1:,} (line {line:,})"

    def available(self) -> int:
        """A preamble and every entry (nothing until the analysis lands, or while the
        context is being made, with `wait`)."""
        analysis = self.ctx.analysis
        if analysis is None or (self.wait and not self.ready()):
            return 0
        if isinstance(analysis, Analysis):
            return len(self._replay()) + 1
        return len(self._entries()) + 1

    def _preamble(self, expand: bool, count_only: bool) -> Block:
        """What this view is, how it was made, and what could not be replayed."""
        b = RowBuilder(self.view, 0, 0, self.ctx, expand, count_only=count_only)
        p = b.palette
        head = Text("model view", style=p.heading)
        analysis = self.ctx.analysis
        if isinstance(analysis, Analysis):
            replay = self._replay()
            summaries = replay.summary_count() if isinstance(replay, Replay) else 0
            stubs = replay.stub_count() if isinstance(replay, Replay) else 0
            when = "the model is sent next" if self.call is None else "the model was sent"
            head.append(
                f"  the {plural(len(replay), 'message')} {when}"
                f" · {plural(summaries, 'compaction summary', 'compaction summaries')}"
                f" · {plural(stubs, 'elision stub')}",
                style=p.dim,
            )
            b.head(head)
            if self.call is not None:
                self._call_rows(b)
            for problem in self._problems():
                b.labelled_rows(f"{severity_mark(Severity.WARNING)} replay: ", problem, p.warning)
            return b.block()
        entries = self._entries()
        when = "the model is sent next" if self.call is None else "the model was sent"
        head.append(f"  the {plural(len(entries), 'entry', 'entries')} {when}", style=p.dim)
        b.head(head)
        self._call_rows(b)
        if isinstance(analysis, SessionAnalysis):
            words = microcompaction_words(analysis)
            if words is not None:
                self._words(b, words, p.dim)
        for problem in self._problems():
            b.labelled_rows(f"{severity_mark(Severity.WARNING)} context: ", problem, p.warning)
        return b.block()

    def _problems(self) -> Sequence[str]:
        analysis = self.ctx.analysis
        if isinstance(analysis, Analysis) and self.call is None:
            return analysis.replay_problems
        context = self.context()
        return context.problems if context is not None else ()

    @staticmethod
    def _words(b: RowBuilder, words: str, style: Style | None = None) -> None:
        """A sentence of the preamble, wrapped at word boundaries (each piece one row)."""
        width = max(b.ctx.width - GUTTER - 2, 10)
        for piece in wrap_words(words, width, width):
            b.text(piece, style=style, limit=1)

    def _call_rows(self, b: RowBuilder) -> None:
        """The call's size (recorded, or an estimate), window and fill, the compaction it
        starts after, and what the file never holds (`CallContext`)."""
        context = self.context()
        if context is None:
            return
        p = b.palette
        call = context.call
        if call is not None:
            model = f" · {visible(call.model)}" if call.model else ""
            self._words(b, f"call {call.number:,} (line {call.line:,}){model} · "
                           f"{context.tokens_words()}")  # fmt: skip
            fill = context.fill_words()
            if fill is not None:
                self._words(b, fill, p.dim)
        else:
            self._words(b, f"the next call: what the file holds is {context.tokens_words()}")
        self._words(b, context.compaction_words(), p.dim)
        self._words(b, context.not_in_file_words(), p.dim)

    # -- the entries ----------------------------------------------------------------------

    def build(self, index: int, expand: bool = False, *, count_only: bool = False) -> Block:
        """One message the model was sent: role, where it came from, and the content sent."""
        if index == 0:
            return self._preamble(expand, count_only)
        if not isinstance(self.ctx.analysis, Analysis):
            return self._build_entry(index, expand, count_only)
        replay = self._replay()
        entry = replay.slot(index - 1) if isinstance(replay, Replay) else replay[index - 1]
        # Keyed by the block index (what the view toggles), not the replay index.
        b = RowBuilder(self.view, index, entry.line, self.ctx, expand, count_only=count_only)
        length = self.transcript.line_length(entry.line)
        if length > BIG_LINE_BYTES:
            role = "user" if entry.summary else entry.role
            _big_line_head(b, length, self.ctx.op_by_message.get(entry.line), role)
            if entry.stub is not None:
                b.text(entry.stub)
            else:
                b.big_line(self.transcript, length)
            return b.block()
        parsed = self.transcript.parse(entry.line)
        msg = parsed if isinstance(parsed, Message) else None
        if entry.summary:
            summary = parsed.summary if isinstance(parsed, Compaction) else ""
            if b.count_only:
                b.counted_head()
            else:
                summary_note = "compaction summary, replacing earlier turns"
                b.head(_role_head(b.palette, "user", None, summary_note))
            b.text(summary)
        else:
            if b.count_only:
                b.counted_head()
            else:
                extra = "content replaced by an elision stub" if entry.stub is not None else ""
                if entry.role == "tool" and msg is not None:
                    call_id = short_id(msg.tool_call_id, 16)
                    extra = (extra + "  " if extra else "") + f"call {call_id}"
                b.head(_role_head(b.palette, entry.role, msg, extra))
            if entry.stub is not None:
                b.text(entry.stub)
            elif msg is not None:
                b.content(entry.line, entry.role, msg.content)
                for call in msg.tool_calls:
                    if b.count_only:
                        b.counted_head()
                    else:
                        p = b.palette
                        head = Text("  ⚙ ", style=p.strong)
                        head.append(visible(call.name) or "?", style=p.tool_name)
                        head.append(f"  call {visible(short_id(call.id, 16))}", style=p.dim)
                        b.head(head)
                    b.text(call.arguments, indent=6, limit=CALL_ROWS)
            else:
                b.text("(this line no longer parses as a message)", style=b.palette.bad)
        return b.block()

    def _build_entry(self, index: int, expand: bool, count_only: bool) -> Block:
        """A session's entry: its lines as the file view draws them, or what stood for them."""
        entry = self._entries()[index - 1]
        b = RowBuilder(self.view, index, entry.line, self.ctx, expand, count_only=count_only)
        fmt = self.ctx.format
        p = b.palette
        try:
            if entry.cleared:
                if b.count_only:
                    b.counted_head()
                else:
                    head = Text("tool", style=p.role_tool)
                    head.append(f"  {visible(entry.what)}", style=p.dim)
                    b.head(head)
                b.text(CLEARED_TEXT, style=p.warning, limit=2)
                return b.block()
            if entry.item >= 0:
                item = self._history_item(entry.line, entry.item)
                if item is not None:
                    build_codex(b, {"type": "response_item", "payload": item})
                return b.block()
            for line in entry.all_lines:
                length = self.transcript.line_length(line)
                if is_big_line(length):
                    _big_line_head(b, length, None, entry.role)
                    b.big_line(self.transcript, length)
                    continue
                start, _ = self.transcript.line_span(line)
                raw = self.transcript.raw_line(line)
                b.line = line  # each line of a turn with its own notes and rows
                obj = parse_json_line(raw, line, start)
                if isinstance(obj, Mapping) and fmt is Format.CLAUDE_CODE:
                    # Claude Code's own record of a tool call was never sent: not shown here.
                    obj = {k: v for k, v in obj.items() if k != "toolUseResult"}
                if obj is not None:
                    build_foreign(b, fmt, obj)
        except (OSError, ValueError, IndexError) as exc:
            b.text(f"(could not read line {entry.line}: {exc})", style=p.bad)
        b.line = entry.line
        return b.block()

    def _history_item(self, line: int, item: int) -> dict[str, Any] | None:
        """Item `item` of the `replacement_history` of the `compacted` record on `line`.

        The line is decoded once for all its items (the history can be most of a
        rollout: decoding it per item would be quadratic); the last one is kept.
        """
        kept = self._history
        if kept is None or kept[0] != line:
            kept = (line, compacted_history(self.transcript.raw_line(line)))
            self._history = kept
        history = kept[1]
        return history[item] if 0 <= item < len(history) else None

    def counts_from_file(
        self, start: int, stop: int, file_counts: Sequence[int], reshaped: Container[int]
    ) -> list[int]:
        """Row counts of blocks [start, stop), a plain entry's taken from its line's file block.

        A replayed message shown as written (no summary, no stub) is built
        from its line exactly as the file view builds that line, heading
        aside (one row in both), except for what only the file view adds —
        the line's findings — and what either view changed — an expanded
        block or an artifact spliced in (`reshaped`). Every other entry's
        count is its own file block's, already counted; the rest are built.
        Counting a big transcript's model view is then a lookup a block, not
        a parse. The tests hold every fixture's counts to the built blocks'.
        """
        replay = self._replay()
        if not isinstance(replay, Replay):
            return [self.build(i, count_only=True).count for i in range(start, stop)]
        out: list[int] = []
        if start == 0:
            out.append(self.build(0, count_only=True).count)  # the preamble
            start = 1
        if start >= stop:
            return out
        lines = replay.entry_lines()[start - 1 : stop - 1]
        if max(lines) > len(file_counts):  # never once the file view is laid out
            return out + [self.build(i, count_only=True).count for i in range(start, stop)]
        counts = list(map(file_counts.__getitem__, map((-1).__add__, lines)))
        for j in replay.unplain(start - 1, stop - 1, reshaped):
            counts[j] = self.build(start + j, count_only=True).count
        return out + counts

    def line_of(self, index: int) -> int:
        """The source line of block `index` (0 for the preamble)."""
        if index <= 0:
            return 0
        if not isinstance(self.ctx.analysis, Analysis):
            return self._entries()[index - 1].line
        replay = self._replay()
        return replay.line_at(index - 1) if isinstance(replay, Replay) else replay[index - 1].line

    def index_of_line(self, line: int) -> int | None:
        """The block of the entry from `line`, if it is in the conversation."""
        if self.wait and not self.ready():
            return None
        if not isinstance(self.ctx.analysis, Analysis):
            self.context()
            if self._line_index is None:
                index: dict[int, int] = {}
                for i, e in enumerate(self._entries()):
                    for at in e.all_lines:
                        index.setdefault(at, i + 1)
                self._line_index = index
            return self._line_index.get(line)
        replay = self._replay()
        if isinstance(replay, Replay):
            found = replay.index_of_line(line)
            return None if found is None else found + 1
        if self._line_index is None:
            self._line_index = {e.line: i + 1 for i, e in enumerate(replay)}
        return self._line_index.get(line)

    def extent(self, blocks: int) -> tuple[int, int]:
        """Blocks laid out, and the blocks there are (every entry is known at once)."""
        return blocks, max(self.available(), blocks)


class EmptySource:
    """The source of a transcript that could not be opened: no blocks."""

    view = "file"

    def available(self) -> int:
        """Nothing to lay out."""
        return 0

    def build(self, index: int, expand: bool = False, *, count_only: bool = False) -> Block:
        """There is no block to build."""
        raise IndexError(index)

    def line_of(self, index: int) -> int:
        """No block shows a line."""
        return 0

    def index_of_line(self, line: int) -> int | None:
        """No line has a block."""
        return None

    def extent(self, blocks: int) -> tuple[int, int]:
        """Nothing, of nothing."""
        return 0, 0

"""The file view's row count of a Claude Code or Codex line, from its bytes, as the pass reads it.

`viewer.line_rows` counts a reference transcript's lines where the analysis
decodes them; this is the same for the other formats, whose blocks
`viewer.session_blocks` builds. Counting a 64 MiB Claude Code session by
building every block took ~2 s in the pass server's two workers after the
analysis, four times the parse floor by itself; `ClaudeRows` and `CodexRows`
are handed to the format's pass (`core.formats.batches.Measure`) and count
each line beside it, in a few microseconds.

A line is counted in its *plain* look: the file view's default (nothing
expanded, no artifact open) before any analysis (no badge, tag, replaced
result or finding rows). A line with anything the analysis may draw
differently, a marker the format's own finder sees, a big line, a line the
fast parser does not vouch for, or a shape this does not count, is
`UNKNOWN`, and the view builds it; when the analysis lands, every line it
tags, marks or finds something on is rebuilt (`AnalysisState.adopt`). What
is repeated here is only which texts a line shows, as `session_blocks`
draws them; how many rows a text takes is the builder's own rule
(`wrap_count`, `shown_rows`), and the tests hold both to the builder on
every example and on random sessions at several widths.

`session_measure` adds the native count (`viewer/_rows.c`, optional) for the
lines sessions are made of: prompts, text, thinking and tool-call blocks, tool
results and Claude Code's own record of them, Codex messages, reasoning,
calls, outputs and ui records, whose texts are TAB, LF and printable ASCII
as far as their rows are counted. It hands every other line to these Python
counts, and takes every width, limit and word from `_Rows.spec`, so it
decides nothing about how a line is drawn; in Python a Claude Code line took
~15 µs, most of a session open's background work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from transcript_view.core import native
from transcript_view.core.formats.batches import LineMeasure
from transcript_view.core.formats.claude_code import result_texts
from transcript_view.core.formats.claude_markers import find_spills
from transcript_view.core.formats.codex import OUTPUT_TYPES, find_notices, output_parts
from transcript_view.core.formats.detect import Format
from transcript_view.core.text import TAB_SIZE, human_size, visible
from transcript_view.core.transcript import fast_object
from transcript_view.viewer.blocks import BIG_LINE_BYTES
from transcript_view.viewer.line_rows import UNKNOWN
from transcript_view.viewer.rows import COLLAPSE_ROWS, GUTTER, shown_rows, wrap_count
from transcript_view.viewer.session_blocks import (
    ARGUMENTS_INDENT,
    ARGUMENTS_ROWS,
    CLAUDE_ENVELOPE_KEYS,
    DIM_ROWS,
    IMAGE_WORDS,
    INPUT_INDENT,
    INPUT_ROWS,
    PREVIEW_CHARS,
    REASONING_ROWS,
    RECORD_FIELD_CHARS,
    RECORD_INDENT,
    RECORD_ROWS,
    RECORD_TEXT_CHARS,
    THINKING_ROWS,
    THINKING_WORDS,
    TOOL_USE_RESULT_WORDS,
    UI_ROWS,
    call_arguments,
    clip,
    texts_of,
    tool_use_summary,
)

if TYPE_CHECKING:
    from transcript_view.viewer import _rows  # the optional native count (viewer/_rows.c)
else:  # None where it was not built, or under TRANSCRIPT_VIEW_PURE (core/native.py)
    _rows = native.load("transcript_view.viewer._rows")

#: The pieces the native count draws texts as, in the order it takes them
#: (`viewer/_rows.c`, `P_BODY`…): each an (indent, limit) of `RowBuilder.text`.
PIECES = (
    (2, COLLAPSE_ROWS),  # a prompt, a text block, a tool result's text, a Codex message
    (2, THINKING_ROWS),
    (2, DIM_ROWS),  # an unknown value, an image
    (INPUT_INDENT, INPUT_ROWS),
    (RECORD_INDENT, RECORD_ROWS),
    (2, UI_ROWS),
    (2, REASONING_ROWS),
    (ARGUMENTS_INDENT, ARGUMENTS_ROWS),
)


class _Rows:
    """What both formats' counts share: the width, and one text's rows at an indent."""

    __slots__ = ("_width",)

    def __init__(self, width: int) -> None:
        """Count at the view's `width` (the whole row, gutter included)."""
        self._width = width

    def _rows(self, text: str, indent: int = 2, limit: int = COLLAPSE_ROWS) -> int:
        """`RowBuilder.text`'s count of `text` at `indent`, collapsed past `limit` rows."""
        return shown_rows(wrap_count(text, self._width - GUTTER - indent, limit + 1), limit)

    @property
    def spec(self) -> tuple[int, ...]:
        """What the native count needs to count as this does (see `viewer/_rows.c`).

        The big-line threshold, `PREVIEW_CHARS`, `TAB_SIZE`, the record's two
        lengths, then each of `PIECES` as its width in cells (as `wrap_count`
        takes it), its limit, and the rows it shows collapsed.
        """
        head = (BIG_LINE_BYTES - 1, PREVIEW_CHARS, TAB_SIZE, RECORD_FIELD_CHARS, RECORD_TEXT_CHARS)
        return head + tuple(
            n
            for indent, limit in PIECES
            for n in (
                max(self._width - GUTTER - indent, 1),
                limit,
                shown_rows(limit + 1, limit),
            )
        )

    def _object(self, raw: bytes) -> Mapping[str, Any] | None:
        """The line's object, if the builder reads it whole and as msgspec decodes it."""
        if len(raw) >= BIG_LINE_BYTES - 1:
            return None  # shown in part (`RowBuilder.big_line`), by the builder
        return fast_object(raw)


class ClaudeRows(_Rows):
    """A Claude Code line's rows in the file view, at one width (`session_blocks.build_claude`)."""

    __slots__ = ()

    def __call__(self, raw: bytes) -> int:
        """Rows of the line `raw` (without its LF), or `UNKNOWN`."""
        obj = self._object(raw)
        if obj is None:
            return UNKNOWN
        kind = obj.get("type")
        kind = kind if isinstance(kind, str) else "?"
        message = obj.get("message")
        msg = message if type(message) is dict or isinstance(message, Mapping) else {}
        if kind in ("user", "assistant"):
            content = self._content(msg.get("content"), kind)
            if content == UNKNOWN:
                return UNKNOWN
            rows = 1 + content
            if "toolUseResult" in obj:
                words = TOOL_USE_RESULT_WORDS + tool_use_summary(obj["toolUseResult"])
                rows += self._rows(words, RECORD_INDENT, RECORD_ROWS)
            return rows
        if kind == "system":
            rows = 1
            text = obj.get("content")
            if isinstance(text, str) and text:
                rows += self._rows(text, limit=3)
            meta = obj.get("compactMetadata")
            if isinstance(meta, Mapping):
                rows += self._rows(clip(dict(meta)), limit=DIM_ROWS)
            return rows
        if kind == "summary":
            return 1 + self._rows(str(obj.get("summary", "")), limit=3)
        if kind == "content-replacement":
            return UNKNOWN  # its rows name the results it replaced: the analysis's
        rest = {k: v for k, v in obj.items() if k not in CLAUDE_ENVELOPE_KEYS}
        return 1 + self._rows(clip(rest), limit=DIM_ROWS)

    def _content(self, content: object, role: str) -> int:
        """`session_blocks._claude_content`'s rows, or `UNKNOWN` where a marker may be."""
        if isinstance(content, str):
            return self._rows(content)
        if not isinstance(content, list):
            return 0
        bases = (
            {(blk, part) for blk, part, _, _, _ in result_texts(content)} if role == "user" else ()
        )
        rows = 0
        for i, block in enumerate(content):
            if type(block) is not dict and not isinstance(block, Mapping):
                rows += self._rows(clip(block), limit=DIM_ROWS)
                continue
            btype = block.get("type")
            if btype == "text":
                rows += self._rows(str(block.get("text", "")))
            elif btype == "thinking":
                thinking = THINKING_WORDS + str(block.get("thinking", ""))
                rows += self._rows(thinking, limit=THINKING_ROWS)
            elif btype == "redacted_thinking":
                rows += self._rows("thinking (redacted)", limit=DIM_ROWS)
            elif btype == "tool_use":
                rows += 1 + self._rows(clip(block.get("input", {})), INPUT_INDENT, INPUT_ROWS)
            elif btype == "tool_result":
                inner = block.get("content")
                if not (isinstance(inner, str | list) or not inner):
                    return UNKNOWN  # a shape the builder reads oddly: let it
                rows += 1
                parts = [(-1, inner)] if isinstance(inner, str) else list(enumerate(inner or []))
                for j, part in parts:
                    text: str | None = part if isinstance(part, str) else None
                    if type(part) is dict or isinstance(part, Mapping):
                        ptype = part.get("type")
                        if ptype == "image":
                            rows += self._rows(IMAGE_WORDS, limit=DIM_ROWS)
                            continue
                        said = part.get("text")
                        text = said if ptype == "text" and isinstance(said, str) else None
                    if text is None:
                        continue
                    if (i, j) in bases and find_spills(text):
                        return UNKNOWN  # a marker row: its badge is the analysis's
                    rows += self._rows(text)
            elif btype == "image":
                rows += self._rows(IMAGE_WORDS, limit=DIM_ROWS)
            else:
                rows += self._rows(f"{visible(str(btype))}: {clip(dict(block))}", limit=DIM_ROWS)
        return rows


class CodexRows(_Rows):
    """A Codex rollout line's rows in the file view, at one width (`session_blocks.build_codex`)."""

    __slots__ = ()

    def __call__(self, raw: bytes) -> int:
        """Rows of the line `raw` (without its LF), or `UNKNOWN`."""
        obj = self._object(raw)
        if obj is None:
            return UNKNOWN
        kind = obj.get("type")
        payload = obj.get("payload")
        pl = payload if type(payload) is dict or isinstance(payload, Mapping) else {}
        if kind == "response_item":
            return self._item(pl)
        if kind == "event_msg":
            msg = pl.get("message")
            return 1 + (self._rows(msg, limit=UI_ROWS) if isinstance(msg, str) and msg else 0)
        if kind == "session_meta":
            text = pl.get("instructions")
            return 1 + (self._rows(text, limit=2) if isinstance(text, str) else 0)
        if kind == "turn_context":
            return 1
        if kind == "compacted":
            return 1 + self._rows(str(pl.get("message", "")), limit=3)
        return 1 + self._rows(clip(dict(pl)), limit=DIM_ROWS)

    def _item(self, item: Mapping[str, Any]) -> int:
        """`session_blocks._codex_item`'s rows, or `UNKNOWN` where a notice may be."""
        itype = item.get("type")
        if itype == "message":
            return 1 + sum(self._rows(text) for text in texts_of(item.get("content")))
        if itype == "reasoning":
            summary = texts_of(item.get("summary"))
            return 1 + sum(self._rows(text, limit=REASONING_ROWS) for text in summary)
        if itype in ("function_call", "custom_tool_call", "local_shell_call"):
            return 1 + self._rows(clip(call_arguments(item)), ARGUMENTS_INDENT, ARGUMENTS_ROWS)
        if isinstance(itype, str) and itype in OUTPUT_TYPES:
            rows = 1
            for _, _, text in output_parts(item.get("output")):
                if find_notices(text):
                    return UNKNOWN  # a marker row: its badge is the analysis's
                rows += self._rows(text)
            return rows
        return 1 + self._rows(clip(dict(item)), limit=DIM_ROWS)


def python_measure(fmt: Format, width: int) -> ClaudeRows | CodexRows | None:
    """`fmt`'s count in Python alone, for the file view at `width` (None: none for it)."""
    if fmt is Format.CLAUDE_CODE:
        return ClaudeRows(width)
    if fmt is Format.CODEX:
        return CodexRows(width)
    return None


def session_measure(fmt: Format, width: int) -> LineMeasure | None:
    """The measure to hand `fmt`'s pass for the file view at `width` (None: none for it).

    The native count (`viewer/_rows.c`) where it was built, which counts the
    common lines itself and hands every other line to `python_measure`'s
    count; else that count alone. Both give the same counts.
    """
    rows = python_measure(fmt, width)
    if rows is None or _rows is None:
        return rows
    return native_measure(rows, rows)


def native_measure(rows: ClaudeRows | CodexRows, fallback: LineMeasure) -> LineMeasure:
    """The native count of `rows`' format at its width, handing `fallback` what it does not count.

    Everything it counts by is handed in here: the widths and limits
    (`_Rows.spec`), the words it adds the length of, and the rules it calls,
    the decode, the marker finders and the formatting of a record's size and
    a call's arguments.
    """
    assert _rows is not None, "viewer/_rows.c is not built here"
    words = (THINKING_WORDS, IMAGE_WORDS, TOOL_USE_RESULT_WORDS)
    helpers: dict[str, object] = {"decode": fast_object}
    if isinstance(rows, ClaudeRows):
        helpers |= {"markers": find_spills, "human_size": human_size, "keys": CLAUDE_ENVELOPE_KEYS}
        fmt = Format.CLAUDE_CODE
    else:
        helpers |= {
            "markers": find_notices,
            "arguments": call_arguments,
            "parts": output_parts,
            "keys": OUTPUT_TYPES,
        }
        fmt = Format.CODEX
    return _rows.SessionCounter(fmt.value, rows.spec, words, helpers, fallback)

"""Gemini CLI's spill markers: their exact texts, and what each claims about its file.

Read in google-gemini/gemini-cli at 5411f113 (2026-08-21; OTHER_AGENTS.md, "Gemini CLI"):

- `formatTruncatedToolOutput` (`packages/core/src/utils/fileUtils.ts` L704–725): a shell
  result (or an MCP result of one text part) over `truncateToolOutputThreshold` keeps a
  head of a fifth of the threshold and a tail of the rest, in UTF-16 units, the counts
  written with `toLocaleString()`:

      Output too large. Showing first <H> and last <T> characters. For full output see: <path>
      <head>

      ... [<omitted> characters omitted] ...

      <tail>

  The file (`saveTruncatedToolOutput`, L729–755) holds the whole text: its start is the
  head, its end the tail, and its length H + omitted + T units. No digest.
- The history masking of older results (`context/toolOutputMaskingService.ts` L163–366):

      <tool_output_masked>
      <preview>

      Output too large. Full output available at: <path>
      </tool_output_masked>

  The file holds `JSON.stringify(response, null, 2)`; the preview of a tool other than
  the shell is that text's first 250 and last 250 units around `\\n... [TRUNCATED] ...\\n`
  (or all of it, at 500 or fewer); the shell's is its sections cut by lines, which no
  file's bytes can be compared with.
- Context management's forms (`context/truncation.ts`, `processors/toolMaskingProcessor.ts`):
  `[Message Normalized: Tool output exceeded size limit]` … `Full output saved to: <path>`,
  and `<tool_output_masked>\\n[Tool <type> string (<x.xx>MB, <n> lines) masked to preserve
  context window. Full string saved to: <path>]\\n</tool_output_masked>`: the file is named,
  what of it the model saw is not comparable.
- Before 2026-01, the `Tool output was too large and has been truncated.` form
  (`qwen_markers.find_cut`'s older form: Qwen Code kept it), whose `.output` file is in
  the project's temp folder.

Every path is another machine's: only its basename is used, in the session's own
`tool-outputs/session-<id>/` (`outputs_dir`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from transcript_view.core.formats.claude_markers import basename

_TRUNCATED_RE = re.compile(
    r"Output too large\. Showing first (?P<head>[0-9][0-9,.'\u00a0\u202f ]{0,24}) and last "
    r"(?P<tail>[0-9][0-9,.'\u00a0\u202f ]{0,24}) characters\. For full output see: "
    r"(?P<path>[^\n]+)\n"
)
_OMITTED_RE = re.compile(
    r"\n\n\.\.\. \[(?P<n>[0-9][0-9,.'\u00a0\u202f ]{0,24}) characters omitted\] \.\.\.\n\n"
)
MASK_OPEN = "<tool_output_masked>\n"
MASK_CLOSE = "\n</tool_output_masked>"
_MASK_AT = "\n\nOutput too large. Full output available at: "
_MASK_CUT = "\n... [TRUNCATED] ...\n"
#: `toolOutputMaskingService`'s head and tail of a general tool's preview, in UTF-16 units.
MASK_EDGE = 250
_NODE_RE = re.compile(
    r"\[Tool (?P<type>[^\n]{1,64}) string \((?P<mb>[0-9]+\.[0-9]{2})MB, (?P<lines>[0-9]+) lines\) "
    r"masked to preserve context window\. Full string saved to: (?P<path>[^\n]+)\]"
)
NORMALIZED = "[Message Normalized: Tool output exceeded size limit]\n"
_NORMALIZED_AT = "\n\nFull output saved to: "


class GeminiForm(Enum):
    """Which of Gemini CLI's texts a marker is."""

    TRUNCATED = "truncated"
    MASKED = "masked"
    MASKED_NODE = "masked-node"
    NORMALIZED = "normalized"


@dataclass(frozen=True, slots=True)
class GeminiMarker:
    """One marker, as the model saw it: what it claims, none of it trusted."""

    form: GeminiForm
    path: str
    start: int
    end: int
    """Where the marker's own words are in the text (the line naming the file)."""
    head: str | None = None
    tail: str | None = None
    """The file's start and end as the model saw them (None: not comparable)."""
    units: int | None = None
    """The file's length in UTF-16 units, as the counts say (None: not said)."""
    cut: str = ""
    """What was cut, in words."""

    @property
    def file(self) -> str | None:
        """The file's basename, the only part of the path that is used."""
        return basename(self.path) or None


def _count(text: str) -> int | None:
    """A `toLocaleString()` count in any locale's grouping ("8,000", "8.000", "8 000")."""
    digits = re.sub(r"[^0-9]", "", text)
    return int(digits) if digits and len(digits) <= 15 else None


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _slice(text: str, start: int, stop: int | None = None) -> str:
    units = text.encode("utf-16-le", "surrogatepass")
    end = len(units) if stop is None else 2 * stop
    return units[2 * start : end].decode("utf-16-le", "surrogatepass")


def find_marker(text: str) -> GeminiMarker | None:
    """The marker a tool result's text is, or None (each form is the whole text)."""
    if text.startswith("Output too large. Showing first "):
        return _truncated(text)
    if text.startswith(MASK_OPEN) and text.endswith(MASK_CLOSE):
        return _masked(text)
    if text.startswith(NORMALIZED):
        at = text.rfind(_NORMALIZED_AT)
        if at < 0:
            return None
        start = at + len(_NORMALIZED_AT)
        path = text[start:].split("\n", 1)[0]
        if not path:
            return None
        return GeminiMarker(
            GeminiForm.NORMALIZED, path, start, start + len(path),
            cut="all but a head and a tail (context management)",
        )  # fmt: skip
    return None


def _truncated(text: str) -> GeminiMarker | None:
    m = _TRUNCATED_RE.match(text)
    if m is None:
        return None
    head_n, tail_n = _count(m["head"]), _count(m["tail"])
    if head_n is None or tail_n is None:
        return None
    body = text[m.end() :]
    head = _slice(body, 0, head_n)
    rest = body[len(head) :]
    om = _OMITTED_RE.match(rest)
    if om is None or _units(head) != head_n:
        return None
    omitted = _count(om["n"])
    tail = rest[om.end() :]
    if omitted is None or _units(tail) != tail_n:
        return None
    return GeminiMarker(
        GeminiForm.TRUNCATED,
        m["path"],
        0,
        m.end() - 1,
        head=head,
        tail=tail,
        units=head_n + omitted + tail_n,
        cut=f"{omitted:,} characters between its first {head_n:,} and last {tail_n:,}",
    )


def _masked(text: str) -> GeminiMarker | None:
    inner = text[len(MASK_OPEN) : -len(MASK_CLOSE)]
    node = _NODE_RE.fullmatch(inner)
    if node is not None:
        start = len(MASK_OPEN) + node.start("path")
        return GeminiMarker(
            GeminiForm.MASKED_NODE,
            node["path"],
            start,
            start + len(node["path"]),
            cut=f"a {node['mb']} MB string of {int(node['lines']):,} lines",
        )
    at = inner.rfind(_MASK_AT)
    if at < 0:
        return None
    path = inner[at + len(_MASK_AT) :]
    if not path or "\n" in path:
        return None
    preview = inner[:at]
    start = len(MASK_OPEN) + at + 2
    end = len(MASK_OPEN) + len(inner)
    head = tail = None
    units = None
    cut_at = _slice(preview, MASK_EDGE, MASK_EDGE + _units(_MASK_CUT))
    if cut_at == _MASK_CUT and _units(preview) == 2 * MASK_EDGE + _units(_MASK_CUT):
        head, tail = _slice(preview, 0, MASK_EDGE), _slice(preview, MASK_EDGE + _units(_MASK_CUT))
    elif _units(preview) <= 2 * MASK_EDGE and preview.startswith("{"):
        head = tail = preview  # the whole response, as JSON
        units = _units(preview)
    return GeminiMarker(
        GeminiForm.MASKED, path, start, end, head=head, tail=tail, units=units,
        cut="an older result, masked from the history (its preview kept)",
    )  # fmt: skip


def outputs_dir(session: Path, session_id: str) -> Path:
    """Where a session's spilled outputs are: `<project temp dir>/tool-outputs/session-<id>/`
    (`saveTruncatedToolOutput`; the id's `[^a-zA-Z0-9_-]` as `_`). The project's temp dir is
    the folder above the session's `chats/` (a subagent's file is one folder deeper)."""
    chats = next((p for p in session.parents if p.name == "chats"), session.parent)
    safe = re.sub(r"[^a-zA-Z0-9_-]", "_", session_id)
    return chats.parent / "tool-outputs" / f"session-{safe}"

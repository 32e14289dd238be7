"""Claude Code's spill markers: the exact texts, found in what the model saw.

Every form in `CLAUDE_CODE.md` ("The spill marker") is recognised here, by
shape, without trusting it: the path is of another machine and only its
basename is ever used, and the preview and size are claims the rules in
`core.formats.rules` check against the sidecar. Also here: Claude Code's
`formatFileSize` and its preview rule, which those checks need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from transcript_view.core.formats.model import SpillForm
from transcript_view.core.text import count_of

#: 2.1.2+: size, absolute path, the preview, and `\n...\n` when there is more.
_PERSISTED_RE = re.compile(
    r"<persisted-output>\nOutput too large \((?P<size>[^)\n]{1,40})\)\. "
    r"Full output saved to: (?P<path>[^\n]*)\n\nPreview \((?P<label>[^)\n]{0,40})\):\n"
)
_CLOSE = "</persisted-output>"
#: About 2.0.60–2.1.1.
_SAVED_RE = re.compile(
    r"<persisted-output>Tool result saved to: (?P<path>[^\n]*)\n\n"
    r"Use Read to view</persisted-output>"
)
#: MCP results over the token limit (not wrapped in a tag).
_MCP_RE = re.compile(
    r"Error: result \((?P<chars>[0-9][0-9,]*) characters\) exceeds maximum allowed tokens\. "
    r"Output has been saved to (?P<path>[^\n]*)"
)
#: Before 2.1.2, Bash cut the middle with nothing stored.
_TRUNCATED_RE = re.compile(r"\.\.\. \[(?P<chars>[0-9][0-9,]*) characters truncated\] \.\.\.")
#: Microcompaction's stand-in (request only).
_CLEARED = "[Old tool result content cleared]"


@dataclass(frozen=True, slots=True)
class FoundSpill:
    """One marker in one text: where, which form, and what it claims."""

    start: int
    end: int
    form: SpillForm
    path: str | None = None
    """The path as written (another machine's; never opened)."""
    size_text: str | None = None
    preview: str | None = None
    has_more: bool = False
    cut: int | None = None
    """Characters the marker says were cut or saved (the MCP and truncated forms)."""

    @property
    def file(self) -> str | None:
        """The sidecar's basename: the path split on both `/` and `\\`."""
        return basename(self.path) if self.path is not None else None


def basename(path: str) -> str:
    """The last component of a path of any machine (POSIX or Windows)."""
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1] if path.strip("/\\") else ""


def _persisted(text: str) -> list[FoundSpill]:
    out: list[FoundSpill] = []
    taken = 0
    for m in _PERSISTED_RE.finditer(text):
        if m.start() < taken:
            continue  # a marker quoted inside the previous one's preview
        # Claude Code replaces the whole result with the marker, so one that opens
        # the text closes at its last tag: a preview that quotes a marker (a tool
        # that printed a session) holds that marker's closing tag too.
        close = text.rfind(_CLOSE) if m.start() == 0 else text.find(_CLOSE, m.end())
        if close < m.end():
            continue
        taken = close + len(_CLOSE)
        body = text[m.end() : close]
        has_more = body.endswith("\n...\n")
        preview = body[: -len("\n...\n")] if has_more else body.removesuffix("\n")
        out.append(
            FoundSpill(
                m.start(),
                close + len(_CLOSE),
                SpillForm.PERSISTED,
                path=m["path"],
                size_text=m["size"],
                preview=preview,
                has_more=has_more,
            )
        )
    return out


def find_spills(text: str) -> list[FoundSpill]:
    """Every spill or cut marker in one text the model saw, in order of position."""
    if "<persisted-output>" not in text and "characters" not in text and _CLEARED not in text:
        return []
    found = _persisted(text)
    taken = [(f.start, f.end) for f in found]

    def inside(start: int) -> bool:
        return any(a <= start < b for a, b in taken)

    for m in _SAVED_RE.finditer(text):
        if not inside(m.start()):
            found.append(FoundSpill(m.start(), m.end(), SpillForm.SAVED, path=m["path"]))
    for m in _MCP_RE.finditer(text):
        if inside(m.start()):
            continue
        path = m["path"].rstrip().removesuffix(".")
        cut = count_of(m["chars"])
        found.append(FoundSpill(m.start(), m.end(), SpillForm.MCP_SAVED, path=path, cut=cut))
    for m in _TRUNCATED_RE.finditer(text):
        if inside(m.start()):
            continue
        cut = count_of(m["chars"])
        found.append(FoundSpill(m.start(), m.end(), SpillForm.CHARS_TRUNCATED, cut=cut))
    at = text.find(_CLEARED)
    while at >= 0:
        if not inside(at):
            found.append(FoundSpill(at, at + len(_CLEARED), SpillForm.CLEARED))
        at = text.find(_CLEARED, at + 1)
    found.sort(key=lambda f: f.start)
    return found


# -- Claude Code's own arithmetic ------------------------------------------------------------


def _to_fixed_1(value: Decimal) -> str:
    # JavaScript's toFixed(1): the exact value rounded half up, then `.0` dropped.
    return str(value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)).removesuffix(".0")


def format_file_size(n: int) -> str:
    """Claude Code's `formatFileSize`: `n bytes` below 1 KiB, else KB/MB/GB with one decimal."""
    kb = Decimal(n) / 1024
    if kb < 1:
        return f"{n} bytes"
    if kb < 1024:
        return _to_fixed_1(kb) + "KB"
    mb = kb / 1024
    if mb < 1024:
        return _to_fixed_1(mb) + "MB"
    return _to_fixed_1(mb / 1024) + "GB"


#: The preview's budget, in UTF-16 code units.
PREVIEW_UNITS = 2000


def utf16_units(text: str) -> int:
    """The length JavaScript gives a string: astral characters count twice."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


_LEADING_BLANK_LINES = re.compile(r"^(?:[ \t\r\f\v]*\n)+")


def bash_preview_source(text: str, *, whole: bool) -> str:
    """What Bash's preview is taken from: leading blank lines removed, trailing space trimmed.

    Trimming the end needs the whole output; for a head only (`whole` False) the
    end is left as it is, since the preview never reaches it.
    """
    text = _LEADING_BLANK_LINES.sub("", text, count=1)
    return text.rstrip() if whole else text


def is_prefix_utf16(preview: str, text: str) -> bool:
    """Whether `preview` is the start of `text`, compared in UTF-16 code units.

    The preview is cut at a code-unit count, so its last character can be half
    of a surrogate pair (JSON keeps it as a lone `\\udXXX`); comparing code
    units is what makes such a cut still a prefix.
    """
    p = preview.encode("utf-16-le", "surrogatepass")
    t = text[: len(preview) + 1].encode("utf-16-le", "surrogatepass")
    return t.startswith(p)

"""Claude Code's spill markers: the exact texts, found in what the model saw.

Every form in `CLAUDE_CODE.md` ("The spill marker") is recognised here, by
shape and at the place Claude Code writes it (the same words quoted inside a
document the agent read are text), without trusting it: the path is of another machine and only its
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
_OPEN = "<persisted-output>"
_CLOSE = "</persisted-output>"
#: About 2.0.60–2.1.1.
_SAVED_RE = re.compile(
    r"<persisted-output>Tool result saved to: (?P<path>[^\n]*)\n\n"
    r"Use Read to view</persisted-output>"
)
#: MCP results over the token limit (not wrapped in a tag).
_MCP_START = "Error: result ("
_MCP_RE = re.compile(
    r"Error: result \((?P<chars>[0-9][0-9,]*) characters\) exceeds maximum allowed tokens\. "
    r"Output has been saved to (?P<path>[^\n]*)"
)
#: How the forms that are a whole result start (`_whole`).
_STARTS = (_OPEN, _MCP_START)
#: Before 2.1.2, Bash cut the middle with nothing stored: `head\n\n<this>\n\ntail`.
_TRUNCATED = " characters truncated] ..."
_TRUNCATED_RE = re.compile(
    r"^\.\.\. \[(?P<chars>[0-9][0-9,]*) characters truncated\] \.\.\.$", re.MULTILINE
)
#: Microcompaction's stand-in (request only).
_CLEARED = "[Old tool result content cleared]"
#: Grep (ripgrep's `--max-columns`) writes this instead of a line too long to show, after
#: the line's `path:`/`lineno:` prefix if it has one (`-` ends a context line's prefix).
_OMITTED = "[Omitted long "
_OMITTED_RE = re.compile(
    r"^(?:[^\n]*(?P<sep>[:-]))?(?P<text>\[Omitted long (?P<what>matching|context) line\])$",
    re.MULTILINE,
)
_OMITTED_FORMS = {"matching": SpillForm.OMITTED_MATCH, "context": SpillForm.OMITTED_CONTEXT}
#: The separator ripgrep ends each kind of line's prefix with.
_OMITTED_SEPS = {"matching": ":", "context": "-"}


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

    @property
    def cut_words(self) -> str | None:
        """What the marker says was cut (or saved), in words; None where it does not say."""
        if self.form is SpillForm.CLEARED:
            return "the whole old result (microcompaction)"
        if self.form is SpillForm.OMITTED_MATCH:
            return "one matching line too long for Grep"
        if self.form is SpillForm.OMITTED_CONTEXT:
            return "one context line too long for Grep"
        if self.cut is None:
            return None
        return f"{self.cut:,} characters"


def basename(path: str) -> str:
    """The last component of a path of any machine (POSIX or Windows)."""
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1] if path.strip("/\\") else ""


def _persisted(text: str) -> FoundSpill | None:
    """The 2.1.2+ marker, when it is the whole result (it opens the text).

    Claude Code replaces the whole result with the marker, so it closes at the
    text's last tag: a preview that quotes a marker (a tool that printed a
    session) holds that marker's closing tag too.
    """
    m = _PERSISTED_RE.match(text)
    if m is None:
        return None
    close = text.rfind(_CLOSE)
    if close < m.end():
        return None
    body = text[m.end() : close]
    has_more = body.endswith("\n...\n")
    preview = body[: -len("\n...\n")] if has_more else body.removesuffix("\n")
    return FoundSpill(
        0,
        close + len(_CLOSE),
        SpillForm.PERSISTED,
        path=m["path"],
        size_text=m["size"],
        preview=preview,
        has_more=has_more,
    )


def _whole(text: str) -> FoundSpill | None:
    """The marker that is the whole result, if the text is one (CLAUDE_CODE.md, "The spill
    marker": `<persisted-output>` and the MCP form open the result, the cleared text is
    all of it). The same words anywhere else are text: a document that quotes them."""
    if text.startswith(_OPEN):
        found = _persisted(text)
        if found is not None:
            return found
        m = _SAVED_RE.match(text)
        return FoundSpill(0, m.end(), SpillForm.SAVED, path=m["path"]) if m else None
    if text.startswith(_MCP_START):
        m = _MCP_RE.match(text)
        if m is None:
            return None
        path = m["path"].rstrip().removesuffix(".")
        cut = count_of(m["chars"])
        return FoundSpill(0, m.end(), SpillForm.MCP_SAVED, path=path, cut=cut)
    if _CLEARED in text and text.strip() == _CLEARED:
        at = text.index(_CLEARED)
        return FoundSpill(at, at + len(_CLEARED), SpillForm.CLEARED)
    return None


def find_spills(text: str) -> list[FoundSpill]:
    """Every spill or cut marker in one text the model saw, in order of position.

    Each form only where Claude Code writes it: the whole result (`_whole`); or,
    outside a whole result's marker (a preview that quotes one holds text, not a
    marker), Bash's cut standing on its own line between head and tail, and
    Grep's omitted line, each a whole line of the output after ripgrep's prefix.
    """
    if (
        not text.startswith(_STARTS)
        and _CLEARED not in text
        and _TRUNCATED not in text
        and _OMITTED not in text
    ):
        return []  # most results: no form's words, nothing else to do
    whole = _whole(text)
    found = [whole] if whole is not None else []
    after = whole.end if whole is not None else 0
    if _TRUNCATED in text:
        for m in _TRUNCATED_RE.finditer(text, after):
            cut = count_of(m["chars"])
            found.append(FoundSpill(m.start(), m.end(), SpillForm.CHARS_TRUNCATED, cut=cut))
    if _OMITTED in text:
        for m in _OMITTED_RE.finditer(text, after):
            what = m["what"]
            if m["sep"] in (None, _OMITTED_SEPS[what]):
                found.append(FoundSpill(m.start("text"), m.end(), _OMITTED_FORMS[what]))
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

"""OpenCode's cut tool outputs: the texts that say where the rest of an output went.

Every tool's output goes through `Truncate.output` (`packages/opencode/src/tool/
truncation.ts`; the same in the 1.18.33 build, OTHER_AGENTS.md, "OpenCode"): an
output over 2,000 lines or 51,200 bytes is written whole to
`<data>/tool-output/tool_<id>` and the model gets the whole lines that fit, from
the head (the default) or the tail, around a count of what was cut:

    head: <kept>\\n\\n...<removed> <lines|bytes> truncated...\\n\\n<hint>
    tail: ...<removed> <lines|bytes> truncated...\\n\\n<hint>\\n\\n<kept>
    hint: The tool call succeeded but the output was truncated. Full output saved to: <path>\\n
          Use Grep to search the full content or Read with offset/limit to view specific sections.
          (or, for an agent that may use the task tool: Use the Task tool to have explore …)

`<removed>` counts bytes when the byte limit cut (`totalBytes - bytes kept`, the
kept lines being `bytes kept` with their LFs), else lines (`lines.length - kept`,
lines being the text split at LF). So a file that is there can be checked against
both: its start (or end) is the kept text, and its size (or its LFs + 1) is the
kept text's plus the count. No digest is written, so never "verified".

The shell tool of 1.18 cuts on its own, keeping the end: `...output truncated...
\\n\\nFull output saved to: <path>\\n\\n<last lines>` (and `<shell_metadata>` after
a timeout); its file is looked for, not compared.

A marker is the whole text or nothing: only a text that starts (or ends) as one is
one, so a marker quoted in the middle of an output is no marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The words before the path, in every form of the hint.
SAVED = "The tool call succeeded but the output was truncated. Full output saved to: "
#: The hint's second line: plain, and for an agent that may delegate to the task tool.
NEXT_STEPS = (
    "Use Grep to search the full content or Read with offset/limit to view specific sections.",
    "Use the Task tool to have explore agent process this file with Grep and Read (with "
    "offset/limit). Do NOT read the full file yourself - delegate to save context.",
)
_COUNT = r"\.\.\.(\d{1,20}) (lines|bytes) truncated\.\.\."
_HEAD_END = re.compile(r"(?:\A|\n\n)" + _COUNT + r"\Z")
_TAIL_START = re.compile(
    _COUNT + r"\n\n" + re.escape(SAVED) + r"([^\n]*)\n(" + "|".join(map(re.escape, NEXT_STEPS))
    + r")(?:\n\n|\Z)"
)  # fmt: skip
#: The shell tool's own cut (1.18.33).
SHELL_START = "...output truncated...\n\nFull output saved to: "
#: How every text that may be a marker starts or ends (most outputs are neither).
STARTS = ("...",)
#: What `removed` counts.
LINES, BYTES = "lines", "bytes"
#: How long OpenCode keeps a file (`RETENTION_MS`): it deletes older ones hourly.
RETENTION_MS = 7 * 24 * 60 * 60 * 1000
RETENTION_WORDS = "OpenCode deletes its tool-output files after 7 days"


@dataclass(frozen=True, slots=True)
class Cut:
    """One cut output, as its text says."""

    path: str
    kept: str
    """The whole lines the model saw of the output (its start, or its end when `tail`)."""
    tail: bool
    removed: int | None
    """How many `unit`s were cut (None: the shell's cut, which does not say)."""
    unit: str | None
    start: int
    """Where the marker's own words start and end in the text."""
    end: int
    shell: bool = False

    @property
    def file_bytes(self) -> int | None:
        """The file's size the counts say (a cut by bytes)."""
        if self.unit != BYTES or self.removed is None:
            return None
        return len(self.kept.encode("utf-8", "surrogatepass")) + self.removed

    @property
    def file_lines(self) -> int | None:
        """The file's lines (its LFs + 1) the counts say (a cut by lines)."""
        if self.unit != LINES or self.removed is None:
            return None
        return self.kept.count("\n") + 1 + self.removed


def might_be_cut(text: str) -> bool:
    """A cheap test first: whether a text starts or ends as a marker does."""
    return text.startswith("...") or text.endswith(NEXT_STEPS)


def find_cut(text: str) -> Cut | None:
    """The cut a tool output's text is, if it is one (the whole text, never a quote in it)."""
    if text.startswith(SHELL_START):
        return _shell(text)
    m = _TAIL_START.match(text)
    if m is not None:
        start = m.end()
        return Cut(m[3], text[start:], True, int(m[1]), m[2], 0, m.start(4) - 1)
    for steps in NEXT_STEPS:
        if not text.endswith("\n" + steps):
            continue
        path_end = len(text) - len(steps) - 1
        at = text.rfind("\n\n" + SAVED, 0, path_end)
        if at < 0:
            return None
        path = text[at + 2 + len(SAVED) : path_end]
        if "\n" in path:
            return None
        before = text[:at]
        m = _HEAD_END.search(before)
        if m is None:
            return None
        count = m.start() + (2 if m[0].startswith("\n\n") else 0)
        kept = before[: m.start()]
        return Cut(path, kept, False, int(m[1]), m[2], count, path_end)
    return None


def _shell(text: str) -> Cut | None:
    rest = len(SHELL_START)
    end = text.find("\n", rest)
    path = text[rest : end if end >= 0 else len(text)]
    if not path:
        return None
    kept = text[end + 2 :] if end >= 0 and text.startswith("\n\n", end) else ""
    meta = kept.rfind("\n\n<shell_metadata>\n")
    if meta >= 0 and kept.endswith("</shell_metadata>"):
        kept = kept[:meta]
    return Cut(path, kept, True, None, None, 0, rest + len(path), shell=True)

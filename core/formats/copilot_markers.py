"""GitHub Copilot CLI's large tool outputs: the text that says where the rest of an output went.

A tool result over its threshold (20,480 bytes by default, `largeOutput.maxSizeBytes`)
reaches the model as this text instead (1.0.102's `large_output.rs`; 1.0.35's
readable `app.js` has the same words; OTHER_AGENTS.md, "GitHub Copilot CLI"):

    Output too large to read at once (<size>). Saved to: <path>
    Consider using tools like grep (for searching), head/tail (for viewing start/end), view
    with view_range (for specific sections), or jq (for JSON) to examine portions of the output.

    Preview (first <n> chars):
    <the output's first n characters>

`<size>` is `N bytes`, or KB or MB of 1,024 to one decimal. The file is in the OS
temp folder (`<epoch ms>-copilot-tool-output-<…>.txt`), not the session's, and
Copilot CLI deletes it when the session ends (unless `COPILOT_KEEP_TEMP_FILES`):
it is never looked for (a temp folder is no session's), and the marker says so.

A marker is the whole result or nothing: only a result that starts as one is one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The words in the middle that the search tool's name and the output's noun are set into.
_MIDDLE = (
    r"\nConsider using tools like (\S{1,40}) \(for searching\), head/tail \(for viewing "
    r"start/end\), view with view_range \(for specific sections\), or jq \(for JSON\) to "
    r"examine portions of the (\w{1,20})\.\n\nPreview \(first (\d{1,9}) chars\):\n"
)
_TOO_LARGE = re.compile(
    r"(\w{1,20}) too large to read at once \((\d{1,20} bytes|\d{1,20}\.\d (?:KB|MB))\)\. "
    r"Saved to: ([^\n]{1,4096})" + _MIDDLE
)
#: How a result that is a marker starts (most results are none).
STARTS = ("Output too large to read at once (",)
TEMP_WORDS = (
    "in the OS temp folder, which Copilot CLI empties when the session ends; not looked for"
)


@dataclass(frozen=True, slots=True)
class Saved:
    """One large output, as its text says."""

    size: str
    """The size as printed (`164.9 KB`, `800 bytes`)."""
    path: str
    preview: str
    """What the model saw of the output: its first characters."""
    end: int
    """Where the marker's own words end (the preview starts there)."""


def find_saved(text: str) -> Saved | None:
    """The large-output marker a tool result is, if it is one (at its start, never a quote)."""
    if not text.startswith(STARTS):
        return None
    m = _TOO_LARGE.match(text)
    if m is None:
        return None
    n = int(m[6])
    return Saved(m[2], m[3], text[m.end() : m.end() + n], m.end())

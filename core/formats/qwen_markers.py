"""Qwen Code's spill stub: its exact text, what it claims, and the rules that check a claim.

When a tool's text is over its threshold, Qwen Code writes the whole text to a
file and gives the model a stub in its place (`buildStub`, in
`packages/core/src/tools/truncation.ts`; read in the npm release
`@qwen-code/qwen-code` 0.24.4, `chunks/chunk-2VS5EEXU.js` L5319–5440):

    <persisted-output>
    Output too large (<KB> KB). Full output saved to: <absolute path>
    Full output sha256: <64 hex>
    Note: this file may be cleaned up after 24 hours.
    To read the complete output, use the read_file tool with the absolute file path above.

    Preview (up to 2000 chars):
    <preview>
    </persisted-output>

When the file could not be written, the stub has no tag and a note in place of
the path (`(file too large to persist)` and three others), and the same digest.
Releases before 0.23 have no digest line; later source adds a `Total characters:
<n>; total lines: <n>.` line and words the read-back line otherwise
(`OTHER_AGENTS.md`), so the lines between the first and the preview are read by
their label, not their place. The sha256 is of the same UTF-8 text the file
holds: with LLM::Agent's markers, the only ones here a file can be proved
against byte for byte (size, digest, and the preview as the file's start).

Two other forms name a file and keep a head and a tail, with no digest (`find_cut`):
the per-batch budget's `Tool output truncated. Persisted tool-output artifact: <path>`,
and the older `Tool output was too large and has been truncated.` of Gemini CLI's
heritage, whose file is `<name>.output` in the project's temp folder.

The path is another machine's and is never opened: the file is looked up by its
basename in the session's own results folder (`tool_results_dir`).
"""

from __future__ import annotations

import codecs
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from transcript_view.core.formats.claude_markers import basename

#: How the stub opens and closes (the whole output is the stub).
OPEN = "<persisted-output>\n"
CLOSE = "\n</persisted-output>"
#: The first line: the size in KB and the path, or a note where no file was written.
_FIRST_RE = re.compile(r"Output too large \((?P<kb>[0-9]{1,15}) KB\)\. (?P<rest>[^\n]*)")
_SAVED = "Full output saved to: "
_DIGEST = "Full output sha256: "
_DIGEST_RE = re.compile(r"[0-9a-f]{64}")
_TOTALS_RE = re.compile(
    r"Total characters: (?P<chars>[0-9]{1,15}); total lines: (?P<lines>[0-9]{1,15})\."
)
#: The labels a preview can follow (`generatePreview`; the structured sample of later source).
_PREVIEW_RE = re.compile(r"Preview \(up to (?P<limit>[0-9]{1,9}) chars\):|Structured sample:")
#: The notes of a stub whose output was not written to a file (`persistAndTruncateToolResult`).
NOT_WRITTEN = (
    "(file too large to persist)",
    "(session disk budget exhausted)",
    "(invalid callId)",
    "(disk persistence unavailable)",
)
#: What a missing file means (the stub's own "may be cleaned up after 24 hours": at start,
#: Qwen Code deletes every file of its temp folder older than that, `cleanupOldToolResults`).
RETENTION_WORDS = (
    "Qwen Code deletes these files after 24 hours (the marker says it \"may be cleaned up "
    "after 24 hours\"): the rest is gone, as allowed"
)
#: `PREVIEW_SIZE_CHARS`: a preview is at most this many UTF-16 code units of the output.
PREVIEW_UNITS = 2000
#: The tags `generatePreview` escapes in a preview, so a preview never closes its stub.
_ESCAPED_RE = re.compile(r"</?(?:persisted-output|system-reminder)>")


@dataclass(frozen=True, slots=True)
class QwenStub:
    """One stub, as the model saw it: what it claims, none of it trusted."""

    path: str | None
    """The path as written (another machine's); None when the stub says no file was written."""
    note: str | None
    """The note in the path's place (`NOT_WRITTEN`), or None."""
    kb: int
    """The output's UTF-8 size, rounded to a KB of 1,024 bytes (`Math.round`)."""
    digest: str | None
    """The sha256 of the output's UTF-8 bytes; None before 0.23 (no digest line)."""
    preview: str
    """The preview: the output's start, cut at a line, tags escaped (`preview_of`)."""
    structured: bool = False
    """The preview is a structured sample (later source), not the output's start."""
    total_chars: int | None = None
    total_lines: int | None = None

    @property
    def file(self) -> str | None:
        """The file's basename, the only part of the path that is used."""
        return (basename(self.path) or None) if self.path is not None else None


def find_stub(text: str) -> QwenStub | None:
    """The stub `text` is, or None: a stub is the whole output, never a part of one."""
    tagged = text.startswith(OPEN)
    if tagged:
        if not text.endswith(CLOSE) or len(text) < len(OPEN) + len(CLOSE):
            return None
        body = text[len(OPEN) : -len(CLOSE)]
    elif text.startswith("Output too large ("):
        body = text
    else:
        return None
    head, sep, rest = body.partition("\n\n")
    if not sep:
        return None
    lines = head.split("\n")
    first = _FIRST_RE.fullmatch(lines[0])
    if first is None:
        return None
    said = first["rest"]
    if said.startswith(_SAVED):
        if not tagged:
            return None
        path, note = said[len(_SAVED) :], None
    elif said in NOT_WRITTEN and not tagged:
        path, note = None, said
    else:  # (a relative `outputDirectory` would give an untagged path: not read as a stub)
        return None
    digest = None
    chars = total = None
    for line in lines[1:]:
        if line.startswith(_DIGEST):
            value = line[len(_DIGEST) :]
            if _DIGEST_RE.fullmatch(value) is None:
                return None  # a digest line that is no digest: not Qwen Code's stub
            digest = value
        elif (m := _TOTALS_RE.fullmatch(line)) is not None:
            chars, total = int(m["chars"]), int(m["lines"])
    label, nl, preview = rest.partition("\n")
    found = _PREVIEW_RE.fullmatch(label)
    if found is None or not nl:
        return None
    return QwenStub(
        path=path,
        note=note,
        kb=int(first["kb"]),
        digest=digest,
        preview=preview,
        structured=found["limit"] is None,
        total_chars=chars,
        total_lines=total,
    )


# -- the two other forms that name a file ---------------------------------------------------

#: The per-batch budget's cut (`fitText`, `tools/tool-response-finalizer.ts`; 0.24.4
#: `chunks/chunk-DPEB6S2R.js` L13922–13948): when a batch of results is over its budget,
#: each result over its share is written whole (`persistAndTruncateToolResult`, under a
#: `-<n>` name when two share an id) and the model gets this header, then the result's
#: head (a fifth of what fits) and tail around `\n...\n`.
_CUT = "Tool output truncated."
_CUT_ONE = " Persisted tool-output artifact: "
_CUT_MANY = " Persisted tool-output artifacts:\n"
_CUT_MARK = "\n...\n"
#: The older per-tool cut (`truncateAndSaveToFile`, 0.24.4 `chunks/chunk-2VS5EEXU.js`
#: L5139–5232), Gemini CLI's heritage: the file is `<projectTempDir>/<name>.output`.
_SAVED_OLD = (
    "Tool output was too large and has been truncated.\nThe full output has been saved to: "
)
_SAVED_OLD_PART = "\n\nTruncated part of the output:\n"
_SAVED_OLD_MARK = "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n"


@dataclass(frozen=True, slots=True)
class QwenCut:
    """A result cut to a head and a tail (either form above), and the files its whole went to."""

    paths: tuple[str, ...]
    """The paths as written (another machine's); () when none was written."""
    head: str
    tail: str | None
    """None: only a head was kept (the budget left no room for a tail, or the old form kept
    the head only)."""
    old: bool = False
    """The older per-tool form (`truncateAndSaveToFile`); else the per-batch budget's."""


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _text(units: bytes) -> str:
    return units.decode("utf-16-le", "surrogatepass")


def find_cut(text: str) -> QwenCut | None:
    """The cut `text` is (the whole result), or None."""
    if text.startswith(_SAVED_OLD):
        return _old_cut(text)
    if not text.startswith(_CUT):
        return None
    rest = text[len(_CUT) :]
    paths: tuple[str, ...]
    if rest.startswith(_CUT_ONE):
        path, sep, body = rest[len(_CUT_ONE) :].partition("\n\n")
        if not sep or not path or "\n" in path:
            return None
        paths = (path,)
    elif rest.startswith(_CUT_MANY):
        listing, sep, body = rest[len(_CUT_MANY) :].partition("\n\n")
        items = listing.split("\n")
        if not sep or not all(item.startswith("- ") and len(item) > 2 for item in items):
            return None
        paths = tuple(item[2:] for item in items)
    elif rest.startswith("\n\n"):
        paths, body = (), rest[2:]
    else:
        return None
    head, tail = _head_and_tail(body)
    return QwenCut(paths, head, tail)


def _head_and_tail(body: str) -> tuple[str, str | None]:
    """`fitText`'s preview split where it joined them: the head is `floor(C / 5)` UTF-16 units
    of a budget `C`, the tail the rest, each one unit shorter where it would have cut a
    character in two; so the mark is found at the one place each case puts it."""
    units = _units(body)
    n = len(units) // 2
    if n <= len(_CUT_MARK):
        return body, None  # only a head fitted
    mark = _units(_CUT_MARK)
    for short_head in (0, 1):
        for short_tail in (0, 1):
            budget = n - len(_CUT_MARK) + short_head + short_tail
            at = budget // 5 - short_head
            if units[2 * at : 2 * (at + len(_CUT_MARK))] == mark:
                return _text(units[: 2 * at]), _text(units[2 * (at + len(_CUT_MARK)) :])
    return body, None  # no mark where one belongs: a head alone, as far as it says


def _old_cut(text: str) -> QwenCut | None:
    """The older form: its path, then its fixed words, then the head and tail."""
    path, nl, rest = text[len(_SAVED_OLD) :].partition("\n")
    if not nl or not path:
        return None
    _, part, kept = rest.partition(_SAVED_OLD_PART)
    if not part:
        return None
    head, mark, tail = kept.partition(_SAVED_OLD_MARK)
    return QwenCut((path,), head, tail if mark else None, old=True)


# -- the rules a stub's claims are checked by -----------------------------------------------


def size_kb(nbytes: int) -> int:
    """`Math.round(nbytes / 1024)`: halves round up (the output's size is never negative)."""
    return (2 * nbytes + 1024) // 2048


def preview_of(text: str) -> str:
    """`generatePreview`: the whole output if it is at most `PREVIEW_UNITS` UTF-16 code
    units; else its first `PREVIEW_UNITS`, cut at their last newline (when one is past the
    start), and `\\n...`. Then the two tags are escaped (`&lt;…&gt;`).

    JavaScript counts a string's length in UTF-16 code units, so a character outside
    the Basic Multilingual Plane is two, and a cut may fall inside it (the half left is
    kept, as JavaScript keeps it).
    """
    units = _units(text)
    if len(units) > 2 * PREVIEW_UNITS:
        cut = _text(units[: 2 * PREVIEW_UNITS])
        at = cut.rfind("\n")
        text = (cut[:at] if at > 0 else cut) + "\n..."
    return _ESCAPED_RE.sub(lambda m: f"&lt;{m[0][1:-1]}&gt;", text)


#: The bytes of a file's start that decide its preview. A unit of UTF-16 is at most three
#: bytes of UTF-8, so 6,001 bytes of whole characters are over 2,000 units (the output is
#: cut); a character cut at the end of the bytes read loses up to three of them.
PREVIEW_READ = 3 * PREVIEW_UNITS + 4
_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def preview_of_start(head: bytes) -> str:
    """`preview_of` the output whose file starts with `head`: its first `PREVIEW_READ`
    bytes, or all of it when it is shorter. A character cut at the end of `head` is left
    out (the preview never reaches it); bytes that are no UTF-8 read as U+FFFD."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    return preview_of(decoder.decode(head, final=len(head) < PREVIEW_READ))


def preview_matches(claimed: str, head: bytes) -> bool:
    """Whether a stub's preview is the one its file's start (`head`, as `preview_of_start`
    takes it) gives.

    Node writes a string's lone surrogates to the file as U+FFFD, where the stub (JSON)
    keeps them: so both previews are compared with every lone surrogate as U+FFFD (the
    half of a character the 2,000-unit cut leaves is one in both).
    """
    made = preview_of_start(head)
    if claimed == made:
        return True
    return _LONE_SURROGATE_RE.sub("\ufffd", claimed) == _LONE_SURROGATE_RE.sub("\ufffd", made)


def file_name(call_id: str) -> str | None:
    """`normalizeToolResultCallId` + `.txt`: the file a call's output is written to (the
    call id's last path component, NULs as `_`); None for an id that names no file.

    POSIX's rule, as Node applies it there; on Windows `basename` splits at `\\` too."""
    safe = call_id.rstrip("/").rpartition("/")[2].replace("\x00", "_")
    return None if safe in ("", ".", "..") else f"{safe}.txt"


def tool_results_dir(session: Path, project_root: str) -> Path:
    """Where a session's stubs' files are: `<runtimeDir>/tmp/<sha256(project root)>/
    tool-results/`, the session being `<runtimeDir>/projects/<sanitized root>/chats/<id>.jsonl`
    (`Storage.getToolResultsDir`; the root is the records' `cwd`). Keyed by project, not by
    session: every session of a project shares it. (On Windows the root is lower-cased
    before it is hashed, and a sandbox with its own `outputDirectory` writes there.)

    An archived session (`chats/archive/<id>.jsonl`) and a subagent's
    (`<sanitized root>/subagents/<session id>/agent-<id>.jsonl`) are deeper: the
    runtime folder is the parent of the nearest `projects/` above the file (a project
    folder's name begins with `-`, the root being absolute, so it is never that one).
    """
    runtime = session.parent.parent.parent.parent
    for folder in session.parents:
        if folder.name == "projects":
            runtime = folder.parent
            break
    digest = hashlib.sha256(project_root.encode("utf-8", "surrogatepass")).hexdigest()
    return runtime / "tmp" / digest / "tool-results"

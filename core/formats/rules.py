"""The badge of another format's marker, given its sidecar's check.

The reference marker's rule is `core.ledger.site_state`; this is the other
formats' rule, applied by the same ledger. What can be checked is what the
format records (CLAUDE_CODE.md, "What can be checked"): that the sidecar is
there, that the preview the model saw is the start of the file, that the
size Claude Code printed is the file's size. Never that the bytes are the
ones the tool produced: no digest was written, so the best badge is
"preview matches", never "verified".

Qwen Code's stub is the exception (`qwen_state`): since 0.23 it gives the
sha256 of the whole output, so its file is verified as the reference's are
(size, digest, and the preview as the file's start); and Qwen Code deletes
its files after 24 hours, which the stub says, so a missing one is expired,
not an error.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

from transcript_view.core.findings import Finding
from transcript_view.core.formats.claude_markers import (
    bash_preview_source,
    format_file_size,
    is_prefix_utf16,
)
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SpillForm, SpillSite
from transcript_view.core.formats.opencode_markers import RETENTION_MS as OPENCODE_RETENTION_MS
from transcript_view.core.formats.opencode_markers import RETENTION_WORDS as OPENCODE_RETENTION
from transcript_view.core.formats.qwen_markers import (
    PREVIEW_READ,
    RETENTION_WORDS,
    preview_matches,
    size_kb,
)
from transcript_view.core.verification import EDGE_BYTES, FileCheck, FileState, MarkerState

#: Claude Code truncates a Bash output file at this size and keeps the real size apart.
BASH_FILE_CAP = 64 << 20


def spill_state(site: SpillSite, fc: FileCheck | None) -> tuple[MarkerState, list[Finding]]:
    """A spill marker's badge and the findings it carries."""
    if site.form in QWEN_FORMS:
        return qwen_state(site, fc)
    if site.form in GEMINI_FORMS:
        return gemini_state(site, fc)
    if site.form in OPENCODE_FORMS:
        return opencode_state(site, fc)
    if not site.form.stored:
        return MarkerState.NOT_STORED, []
    name = site.file or ""
    line = site.line
    if not site.safe_name:
        said = (
            f"the cleared result's tool id {site.tool_use_id!r:.120} is no plain file name"
            if site.form is SpillForm.MICROCOMPACTED
            else f"the marker's path {site.path!r:.120} does not end in a plain file name"
        )
        return MarkerState.UNSAFE_NAME, [Finding("unsafe-name", line, None, said)]
    if fc is None:
        return MarkerState.CHECKING, []
    if fc.state is FileState.MISSING and site.form is SpillForm.MICROCOMPACTED:
        return MarkerState.NOT_STORED, [
            Finding(
                "cleared-result",
                line,
                name,
                f"no such file in the session's tool-results/; {_held(site)}",
            )
        ]
    if fc.state is FileState.MISSING:
        where = (
            "the session has no tool-results/ directory"
            if fc.detail.startswith("the artifact directory")
            else "no such file in the session's tool-results/"
        )
        if site.inline_field is not None:
            where += f"; Claude Code's own record ({site.inline_field}) holds the full output"
        return MarkerState.MISSING, [Finding("missing-artifact", line, name, where)]
    if fc.state is FileState.UNREADABLE:
        return MarkerState.UNREADABLE, [Finding("unreadable-artifact", line, name, fc.detail)]
    notes = _file_notes(site, fc)
    if site.form is SpillForm.MICROCOMPACTED and site.persisted_size not in (None, fc.size):
        notes.append(
            Finding(
                "cleared-result",
                line,
                name,
                f"the file has {fc.size:,} bytes, the result it is the full output of "
                f"{site.persisted_size:,}; {_held(site)}",
            )
        )
    if site.form is not SpillForm.PERSISTED:
        return MarkerState.PRESENT, notes
    text = fc.head.decode("utf-8", "replace")
    whole = fc.size <= len(fc.head)
    source = bash_preview_source(text, whole=whole) if site.bash else text
    if site.preview is not None and not is_prefix_utf16(site.preview, source):
        how = " after the leading blank lines Bash drops" if site.bash else ""
        return MarkerState.EXCERPT_MISMATCH, [
            Finding(
                "excerpt-mismatch",
                line,
                name,
                f"the preview the model saw is not the start of the file{how}",
            ),
            *notes,
        ]
    size = _size_finding(site, fc)
    if size is not None:
        return MarkerState.SIZE_MISMATCH, [size, *notes]
    return MarkerState.MATCHES, notes


Verdict = tuple[MarkerState, list[Finding]]
"""A marker's badge and the findings it carries."""


def _unchecked(
    site: SpillSite, fc: FileCheck | None, missing: Callable[[SpillSite, FileCheck], Verdict]
) -> Verdict | None:
    """An agent's marker before its file can be compared: a path ending in no plain name,
    not checked yet, its file gone (`missing` words it as the agent's rule has it), or not
    readable. None: its file is there to compare."""
    line, name = site.line, site.file or ""
    if not site.safe_name:
        said = f"the marker's path {site.path!r:.120} does not end in a plain file name"
        return MarkerState.UNSAFE_NAME, [Finding("unsafe-name", line, None, said)]
    if fc is None:
        return MarkerState.CHECKING, []
    if fc.state is FileState.MISSING:
        return missing(site, fc)
    if fc.state is FileState.UNREADABLE:
        return MarkerState.UNREADABLE, [Finding("unreadable-artifact", line, name, fc.detail)]
    return None


def _no_folder(fc: FileCheck) -> bool:
    """Whether a file is missing because its whole folder is."""
    return fc.detail.startswith("the artifact directory")


def _qwen_missing(site: SpillSite, fc: FileCheck) -> Verdict:
    where = (
        "the project has no tool-results/ folder"
        if _no_folder(fc)
        else "no such file in the project's tool-results/"
    )
    return MarkerState.EXPIRED, [
        Finding("expired-artifact", site.line, site.file or "", f"{where}; {RETENTION_WORDS}")
    ]


def _gemini_missing(site: SpillSite, fc: FileCheck) -> Verdict:
    where = (
        "the session has no tool-outputs/ folder"
        if _no_folder(fc)
        else "no such file in the session's tool-outputs/"
    )
    return MarkerState.MISSING, [Finding("missing-artifact", site.line, site.file or "", where)]


def _opencode_missing(site: SpillSite, fc: FileCheck, now_ms: int | None) -> Verdict:
    """Gone more than 7 days after it was written: expired (OpenCode deletes them then);
    sooner, missing."""
    line, name = site.line, site.file or ""
    where = (
        "OpenCode's data folder has no tool-output/ folder"
        if _no_folder(fc)
        else "no such file in OpenCode's tool-output/"
    )
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    written = site.written_ms
    if written is None or now - written >= OPENCODE_RETENTION_MS:
        when = "" if written is None else f" (written {_utc(written)}, over 7 days ago)"
        return MarkerState.EXPIRED, [
            Finding("expired-artifact", line, name, f"{where}{when}; {OPENCODE_RETENTION}")
        ]
    return MarkerState.MISSING, [
        Finding(
            "missing-artifact",
            line,
            name,
            f"{where}, though it was written {_utc(written)}, less than 7 days ago "
            f"({OPENCODE_RETENTION})",
        )
    ]


#: Qwen Code's forms (`core.formats.qwen_markers`), whose rule is `qwen_state`.
QWEN_FORMS = frozenset(
    {
        SpillForm.QWEN_PERSISTED,
        SpillForm.QWEN_NOT_PERSISTED,
        SpillForm.QWEN_TRUNCATED,
        SpillForm.QWEN_TRUNCATED_UNSAVED,
        SpillForm.QWEN_LEGACY_SAVED,
    }
)


def qwen_state(site: SpillSite, fc: FileCheck | None) -> tuple[MarkerState, list[Finding]]:
    """A Qwen Code marker's badge: its stub verified (size, sha256, preview) where it gives a
    digest, matched where it does not (before 0.23), its budget cut matched by head and
    tail; a missing file expired (Qwen Code deletes them after 24 hours, and says so)."""
    if site.form is SpillForm.QWEN_NOT_PERSISTED:
        return MarkerState.COULD_NOT_BE_STORED, []
    if not site.form.stored:
        return MarkerState.NOT_STORED, []
    line, name = site.line, site.file or ""
    early = _unchecked(site, fc, _qwen_missing)
    if early is not None or fc is None:
        return early or (MarkerState.CHECKING, [])
    if site.form is SpillForm.QWEN_TRUNCATED:
        return _head_and_tail_state(site, fc)
    if site.size_kb is not None and size_kb(fc.size) != site.size_kb:
        return MarkerState.SIZE_MISMATCH, [
            Finding(
                "size-mismatch",
                line,
                name,
                f"the marker says {site.size_kb:,} KB; the file has {fc.size:,} bytes "
                f"({size_kb(fc.size):,} KB)",
            )
        ]
    if site.digest is not None and fc.digest != site.digest:
        return MarkerState.DIGEST_MISMATCH, [
            Finding(
                "digest-mismatch",
                line,
                name,
                f"the marker says sha256 {site.digest}; the file digests to {fc.digest}",
            )
        ]
    if site.preview is not None and not preview_matches(site.preview, fc.head[:PREVIEW_READ]):
        return MarkerState.EXCERPT_MISMATCH, [
            Finding(
                "excerpt-mismatch",
                line,
                name,
                "the preview the model saw is not the start of the file",
            )
        ]
    return (MarkerState.VERIFIED if site.digest is not None else MarkerState.MATCHES), []


def _head_and_tail_state(site: SpillSite, fc: FileCheck) -> tuple[MarkerState, list[Finding]]:
    """A cut whose file should start with the head the model saw and end with its tail."""
    bad = []
    head = site.preview or ""
    text = fc.head.decode("utf-8", "replace")
    if fc.size > len(fc.head):  # a head longer than the start read is compared that far
        head = head[: max(len(text) - 1, 0)]
    if not is_prefix_utf16(head, text):
        bad.append("the head the model saw is not the start of the file")
    tail = site.tail
    if tail and not _ends_with(fc, tail):
        bad.append("the tail the model saw is not the end of the file")
    if bad:
        return MarkerState.EXCERPT_MISMATCH, [
            Finding("excerpt-mismatch", site.line, site.file, "; ".join(bad))
        ]
    return MarkerState.EXCERPT_MATCHES, []


def _ends_with(fc: FileCheck, tail: str) -> bool:
    """Whether the file ends with `tail`, as far as the bytes the check kept of its end reach.

    A tail cut in UTF-16 units may begin with the second half of a character (a lone
    surrogate, as JSON keeps it): that half is not compared.
    """
    if "\udc00" <= tail[:1] <= "\udfff":
        tail = tail[1:]
    end = fc.tail or fc.head
    text = end.decode("utf-8", "replace")
    if fc.size <= len(end):
        return text.endswith(tail)
    # The kept end may begin inside a character (read as U+FFFD): compare after it.
    n = min(len(tail), max(len(text) - 1, 0))
    return text.endswith(tail[len(tail) - n :]) if n else True


#: Gemini CLI's forms (`core.formats.gemini_markers`), whose rule is `gemini_state`.
GEMINI_FORMS = frozenset(
    {
        SpillForm.GEMINI_TRUNCATED,
        SpillForm.GEMINI_MASKED,
        SpillForm.GEMINI_NORMALIZED,
        SpillForm.GEMINI_LEGACY_SAVED,
    }
)


def gemini_state(site: SpillSite, fc: FileCheck | None) -> tuple[MarkerState, list[Finding]]:
    """A Gemini CLI marker's badge: its file there, its start and end the head and tail the
    model saw and its length the counts' ("excerpt matches": no digest, so never verified);
    a form whose preview cannot be compared with the file's bytes is "present"."""
    if not site.form.stored:
        return MarkerState.NOT_STORED, []
    line, name = site.line, site.file or ""
    early = _unchecked(site, fc, _gemini_missing)
    if early is not None or fc is None:
        return early or (MarkerState.CHECKING, [])
    if site.preview is None:
        return MarkerState.PRESENT, []
    if site.units is not None and fc.utf16 is not None and fc.utf16 != site.units:
        return MarkerState.SIZE_MISMATCH, [
            Finding(
                "size-mismatch",
                line,
                name,
                f"the marker's counts come to {site.units:,} characters; the file has "
                f"{fc.utf16:,} (UTF-16 units)",
            )
        ]
    return _head_and_tail_state(site, fc)


def _utc(ms: int) -> str:
    """An epoch-milliseconds time as a person reads it, in UTC (the same on every machine)."""
    try:
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms / 1000))
    except (OverflowError, OSError, ValueError):
        return f"{ms:,} ms after 1970"


#: OpenCode's forms (`core.formats.opencode_markers`), whose rule is `opencode_state`.
OPENCODE_FORMS = frozenset({SpillForm.OPENCODE_TRUNCATED, SpillForm.OPENCODE_SHELL})


def opencode_state(
    site: SpillSite, fc: FileCheck | None, now_ms: int | None = None
) -> tuple[MarkerState, list[Finding]]:
    """An OpenCode cut's badge: its file there, its start (or end) the lines the model saw, and
    its size (or lines) the kept text's and the count's ("excerpt matches": no digest); a file
    gone a week after it was written expired (OpenCode deletes them then), one gone sooner
    missing. The shell's own cut is "present" when its file is (its count is not given).

    `now_ms`: the time a missing file's age is taken at (None: now).
    """
    line, name = site.line, site.file or ""
    early = _unchecked(site, fc, partial(_opencode_missing, now_ms=now_ms))
    if early is not None or fc is None:
        return early or (MarkerState.CHECKING, [])
    if site.form is SpillForm.OPENCODE_SHELL:
        return MarkerState.PRESENT, []
    if site.file_bytes is not None and fc.size != site.file_bytes:
        return MarkerState.SIZE_MISMATCH, [
            Finding(
                "size-mismatch",
                line,
                name,
                f"the marker's counts come to {site.file_bytes:,} bytes; the file has "
                f"{fc.size:,}",
            )
        ]
    if site.file_lines is not None and fc.newlines + 1 != site.file_lines:
        return MarkerState.SIZE_MISMATCH, [
            Finding(
                "size-mismatch",
                line,
                name,
                f"the marker's counts come to {site.file_lines:,} lines; the file has "
                f"{fc.newlines + 1:,}",
            )
        ]
    return _head_and_tail_state(site, fc)


def record_copy(site: SpillSite, state: MarkerState) -> str | None:
    """Where the full output is read when its sidecar is missing: the field of Claude Code's
    own record that holds it inline (`SpillSite.inline_field`), which is what enter opens
    and what the marker's words name instead of the sidecar. None: the sidecar is there
    (or not checked yet), or no record holds the output.

    The record is not what the model saw (it saw the preview) nor the sidecar: whoever
    shows it says so.
    """
    return site.inline_field if state is MarkerState.MISSING else None


def _held(site: SpillSite) -> str:
    """Where the transcript itself still holds a microcompacted result whole."""
    if site.cleared_result is None:
        return "the result is not in this transcript"
    return f"the transcript still holds the result whole on line {site.cleared_result:,}"


def _size_finding(site: SpillSite, fc: FileCheck) -> Finding | None:
    line, name = site.line, site.file or ""
    capped = (
        site.bash
        and site.persisted_size is not None
        and site.persisted_size > BASH_FILE_CAP
        and fc.size == BASH_FILE_CAP
    )
    if site.bash:
        sizes = {fc.size} | ({site.persisted_size} if capped and site.persisted_size else set())
        unit = "bytes"
    else:
        sizes = {fc.utf16} if fc.utf16 is not None else set()
        unit = "UTF-16 units"
    if site.size_text is not None and sizes:
        said = {format_file_size(n) for n in sizes if n is not None}
        if site.size_text not in said:
            n = min(s for s in sizes if s is not None)
            return Finding(
                "size-mismatch",
                line,
                name,
                f"the marker says {site.size_text}; the file is {format_file_size(n)} "
                f"({n:,} {unit})",
            )
    if (
        site.bash
        and site.persisted_size is not None
        and not capped
        and site.persisted_size != fc.size
    ):
        return Finding(
            "size-mismatch",
            line,
            name,
            f"toolUseResult.persistedOutputSize says {site.persisted_size:,} bytes; "
            f"the file has {fc.size:,}",
        )
    return None


def _file_notes(site: SpillSite, fc: FileCheck) -> list[Finding]:
    out = []
    line, name = site.line, site.file or ""
    if (
        site.bash
        and site.persisted_size is not None
        and site.persisted_size > BASH_FILE_CAP
        and fc.size == BASH_FILE_CAP
    ):
        out.append(
            Finding(
                "output-capped",
                line,
                name,
                f"Claude Code kept the first 64 MiB of {site.persisted_size:,} bytes "
                "of output; the rest was never stored",
            )
        )
    if name is not None and name.endswith(".json") and not _looks_like_json(fc):
        out.append(
            Finding(
                "sidecar-not-json",
                line,
                name,
                "a .json sidecar holds the result's text blocks as JSON; this one does "
                "not parse as JSON",
            )
        )
    return out


def _looks_like_json(fc: FileCheck) -> bool:
    if fc.looks_like_json is not None:
        return fc.looks_like_json  # judged before its start was cut (`kept_start`)
    if fc.size <= len(fc.head):
        try:
            json.loads(fc.head.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return False
        return True
    return fc.head.lstrip()[:1] in (b"[", b"{")


# -- what a kept check must hold -------------------------------------------------------------


def start_needed(site: SpillSite, head: bytes, size: int) -> int | None:
    """How many bytes of a sidecar's start `head` the verdict of `site` reads; None: all of it.

    `spill_state` compares the preview with the first `len(preview) + 1` code
    points of the file's text (after Bash's leading blank lines, which the
    viewer's seen/unseen bar counts as seen). A code point of a UTF-8 decode,
    a replacement character included, takes at most four bytes, so the first
    `4 * n` bytes decode to the whole head's first `n` code points, whatever
    the file holds. One code point more than compared is kept, so a kept
    start, asked again, still holds what it compares (`start_suffices`).
    None where the comparison reaches the end of the text, or where Bash's
    trailing-space trim of a whole file does.
    """
    if site.preview is None or not site.form.stored or not site.safe_name:
        return 0  # no preview to compare or show: the verdict reads sizes and the JSON verdict
    if site.form is SpillForm.QWEN_PERSISTED:
        return min(len(head), PREVIEW_READ)  # what `preview_of_start` reads
    text = head.decode("utf-8", "replace")
    compared = len(site.preview) + 1
    lead = len(text) - len(bash_preview_source(text, whole=False)) if site.bash else 0
    chars = lead + compared
    if chars >= len(text):
        return None
    whole = size <= len(head)
    if site.bash and whole and len(text.rstrip()) - lead <= compared:
        return None  # the trim of the end reaches what is compared
    return min(len(head), 4 * (chars + 1))


def kept_start(sites: Sequence[SpillSite], fc: FileCheck) -> FileCheck:
    """`fc` as a ledger keeps it for `sites`: the start their previews compare, and no end.

    A check holds up to 256 KiB of its sidecar's start, and a ledger keeps
    every check: 2,000 sidecars of 200 KB held 400 MB after their previews
    (2 KB) were compared. What else a verdict read of the cut part, whether a
    `.json` sidecar parses, is kept as `looks_like_json`. The verdicts of the
    kept check are the whole check's (`start_needed`; held by a property test).
    """
    if fc.state is not FileState.OK:
        return fc
    needs = [start_needed(site, fc.head, fc.size) for site in sites]
    keep = len(fc.head) if None in needs else max((n for n in needs if n is not None), default=0)
    tail = fc.tail if any(site.tail for site in sites) else b""  # a cut's tail is compared
    if keep >= len(fc.head):
        return replace(fc, tail=tail) if fc.tail != tail else fc
    judged = fc.looks_like_json
    if judged is None and fc.name.endswith(".json"):
        judged = _looks_like_json(fc)
    return replace(fc, head=fc.head[:keep], tail=tail, looks_like_json=judged)


def start_suffices(sites: Sequence[SpillSite], fc: FileCheck) -> bool:
    """Whether a check (carried from another ledger) holds what `sites`' verdicts read.

    A check whose start was cut for other markers (a follow-mode ledger's new
    marker naming an old file, with a longer preview) does not, and its file
    is read again; one cut for the same markers does, so a live session's
    sidecars are read once.
    """
    if len(fc.head) >= min(fc.size, EDGE_BYTES):
        return True  # the start as read, not cut
    if fc.looks_like_json is None and fc.name.endswith(".json"):
        return False
    return all(start_needed(site, fc.head, fc.size) is not None for site in sites)


#: Forms not stored where this checks whose own words say where the whole went.
_SAYS_WHERE = QWEN_FORMS | GEMINI_FORMS | {SpillForm.COPILOT_SAVED}
#: Where a format's record names the file apart from the marker's text.
_PATH_FIELDS = {Format.OPENCODE: "state.metadata.outputPath"}


def site_notes(site: SpillSite) -> list[Finding]:
    """What a marker and its line say on their own, before any file is read.

    These are the analysis's findings (a line shows them while its sidecar is
    still being checked, and whether or not the sidecar is there).
    """
    line, name = site.line, site.file or ""
    out = []
    if not site.form.stored:
        what = site.cut or "part of the output"
        if site.form in _SAYS_WHERE:  # its words say where the whole went
            said = f"cut from what the model saw: {what}"
        else:
            said = f"{what} cut from what the model saw, and not stored anywhere"
        out.append(Finding("not-stored", line, None, said))
    if site.persisted_name is not None and name is not None and site.persisted_name != name:
        out.append(
            Finding(
                "path-mismatch",
                line,
                name,
                f"{_PATH_FIELDS.get(site.format, 'toolUseResult.persistedOutputPath')} names "
                f"{site.persisted_name!r:.80}, the marker another file",
            )
        )
    if site.inline_chars is not None:
        out.append(
            Finding(
                "inline-duplicate",
                line,
                name,
                f"the full output ({site.inline_chars:,} chars) is also written inline "
                f"in {site.inline_field or 'toolUseResult'}; the model saw only the preview",
            )
        )
    return out

"""`transcript-view --check`: the headless contract for scripts and CI.

Exit 0 when no transcript has an error finding; 1 when one has (or, with
`--strict`, any warning); 2 for a PATH that is not a readable regular file.
Plain output is a summary line per transcript and a line per finding; `--json`
is one object per PATH per line. Nothing is ever written to a transcript or an
artifact directory.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from transcript_view.core import parallel
from transcript_view.core.findings import Severity
from transcript_view.core.formats.detect import Format, NotATranscript
from transcript_view.core.ledger import is_orphan, is_problem
from transcript_view.core.opencode_store import (
    StoreError,
    data_sessions,
    is_database_file,
    is_database_name,
    list_database,
)
from transcript_view.core.report import Report, verify
from transcript_view.core.text import plural
from transcript_view.core.transcript import TranscriptError


def summary_line(report: Report) -> str:
    """One line per transcript: counts a person scans first.

    After the severities (what the exit status follows) come the viewer's two
    counts, by the ledger's rule: problems on lines (what `p` visits) and
    orphans (what `o` lists), so the two never seem to disagree.
    """
    notes = report.count(Severity.NOTE)
    problems = sum(1 for f in report.findings if is_problem(f))
    orphans = sum(1 for f in report.findings if is_orphan(f))
    kind = "" if report.format is Format.REFERENCE else f" ({report.format.label})"
    record = "envelope" if report.format is Format.REFERENCE else "record"
    return (
        f"{report.transcript}{kind}: {plural(report.envelopes, record)} on "
        f"{plural(report.lines, 'line')}, {plural(report.markers, 'marker')}, "
        f"{checked_words(report)}; {plural(report.errors, 'error')}, "
        f"{plural(report.warnings, 'warning')}, {plural(notes, 'note')}; "
        f"{plural(problems, 'problem')}, {plural(orphans, 'orphan')}"
    )


def checked_words(report: Report) -> str:
    """What was checked of the markers, in the words the format allows.

    Only the reference marker carries a digest, so only there is a marker
    "verified"; a Claude Code sidecar can at best match its preview and size,
    and a Codex cut keeps nothing to check.
    """
    if report.format is Format.CLAUDE_CODE:
        n = report.matched
        agree = "matches its sidecar" if n == 1 else "match their sidecars"
        words = f"{n:,} {agree} (preview and size; this format records no digest)"
        if report.present:
            words += f", {report.present:,} present (their form records nothing else)"
        return words
    if report.format is Format.CODEX:
        return "nothing stored to check (this format keeps no sidecars)"
    if report.format is Format.COPILOT:
        return (
            "nothing stored to check (its large outputs went to the OS temp folder, "
            "emptied when the session ends)"
        )
    if report.format is Format.GEMINI:
        n = report.matched
        words = f"{n:,} {'matches its file' if n == 1 else 'match their files'} (head, tail "
        words += "and length; this format records no digest)"
        if report.present:
            words += f", {report.present:,} present (their form records nothing else)"
        return words
    if report.format is Format.OPENCODE:
        n = report.matched
        words = f"{n:,} {'matches its file' if n == 1 else 'match their files'} (kept lines "
        words += "and counts; this format records no digest)"
        if report.present:
            words += f", {report.present:,} present (their form records nothing else)"
        if report.expired:
            words += f", {report.expired:,} expired (deleted after 7 days, as OpenCode does)"
        return words
    if report.format is Format.QWEN:
        words = f"{report.verified:,} verified (size, sha256 and preview)"
        if report.matched:
            words += f", {report.matched:,} matched (no digest: a preview, or a head and tail)"
        if report.expired:
            words += f", {report.expired:,} expired (deleted after 24 hours, as Qwen Code does)"
        return words
    return f"{report.verified:,} verified"


def finding_line(report: Report, index: int) -> str:
    """One finding as `  severity kind line N file F: message`."""
    f = report.findings[index]
    where = []
    if f.line is not None:
        where.append(f"line {f.line}")
    if f.file is not None:
        where.append(f.file)
    place = (" " + ", ".join(where)) if where else ""
    return f"  {f.severity.value:<7} {f.kind}{place}: {f.message}"


def run_check(
    paths: Sequence[Path],
    *,
    as_json: bool,
    strict: bool,
    out: TextIO | None = None,
    format: Format | None = None,
    jobs: int | None = None,
    progress: TextIO | None = None,
) -> int:
    """Verify each PATH (a directory: every transcript in its tree) and print the results.

    Returns the exit status. Several transcripts are checked in `jobs`
    processes (default: one per core), printed in path order; one transcript
    alone hashes its artifacts in that many processes instead. `progress`
    (default: stderr when it is a terminal and the output is not JSON) gets a
    line that counts transcripts as they finish.
    """
    out = out if out is not None else sys.stdout
    jobs = jobs or os.cpu_count() or 1
    status = 0
    targets: list[tuple[Path, bool]] = []
    # Directories with no transcript, by how many targets come before them (PATH order).
    empty: dict[int, list[Path]] = {}
    for path in paths:
        if path.is_dir():
            found = transcripts_in(path)
            if not found:
                empty.setdefault(len(targets), []).append(path)
                status = 2
            targets.extend((p, True) for p in found)
        elif is_database_file(path):  # OpenCode's database: each of its sessions
            try:
                rows = list_database(path)
            except StoreError as exc:
                print(f"transcript-view: {exc}", file=sys.stderr)
                if as_json:
                    out.write(refusal_json(path, str(exc)))
                status = 2
                continue
            if not rows:
                empty.setdefault(len(targets), []).append(path)
                status = 2
            targets.extend((row.path, False) for row in sorted(rows, key=lambda r: r.id))
        else:
            targets.append((path, False))

    def say_empty(before: int) -> None:
        for path in empty.pop(before, []):
            message = (
                f"{path}: an OpenCode database with no sessions"
                if path.is_file()
                else empty_tree(str(path))
            )
            print(f"transcript-view: {message}", file=sys.stderr)
            if as_json:
                out.write(refusal_json(path, message))

    if progress is None and not as_json and sys.stderr.isatty() and len(targets) > 1:
        progress = sys.stderr
    outcomes = _outcomes(targets, format, jobs, as_json)
    printed = print_outcomes(
        outcomes, as_json=as_json, strict=strict, out=out, progress=progress,
        total=len(targets), before=say_empty,
    )  # fmt: skip
    return max(status, printed)


PathOutcome = tuple["Path | str", bool, "Outcome | Refusal"]
"""A transcript's outcome as `print_outcomes` takes it: (its path or URL, whether a
walk found it, its `Outcome` or why it could not be checked)."""


def print_outcomes(
    outcomes: Iterable[PathOutcome],
    *,
    as_json: bool,
    strict: bool,
    out: TextIO,
    progress: TextIO | None,
    total: int | None = None,
    before: Callable[[int], None] | None = None,
) -> int:
    """Print each transcript's outcome as `--check` does, in the order given; the exit status.

    The one loop of `run_check` and the fleet check (`transcript_view.fleet.cli`):
    a refusal's line on stderr (and its `refusal_json` with `--json`), a file a
    walk found that is no transcript passed over and counted once at the end, a
    `progress` line counting transcripts (of `total`, when known), 2 for a
    refusal, else 1 for a failure (`Outcome.failed`), else 0. `before(done)` runs
    before each outcome and after the last (`run_check`'s empty PATHs, in order).
    """
    status = 0
    skipped: list[Path | str] = []
    done = 0
    for path, walked, outcome in outcomes:
        if before is not None:
            before(done)
        done += 1
        if progress is not None:
            count = (
                f"{done:,} of {plural(total, 'transcript')}"
                if total is not None
                else plural(done, "transcript")
            )
            progress.write(f"\rtranscript-view: checked {count}")
            progress.flush()
        if isinstance(outcome, Refusal):
            if walked and outcome.not_a_transcript:
                skipped.append(path)
                continue
            if progress is not None:
                progress.write("\r\x1b[K")
            print(f"transcript-view: {outcome.message}", file=sys.stderr)
            if as_json:
                out.write(refusal_json(path, outcome.message))
            status = 2
            continue
        if progress is not None:
            progress.write("\r\x1b[K")
            progress.flush()
        out.write(outcome.text)
        if outcome.failed(strict) and status == 0:
            status = 1
    if before is not None:
        before(done)
    if progress is not None:
        progress.write("\r\x1b[K")
        progress.flush()
    if skipped:
        print(
            f"transcript-view: skipped {plural(len(skipped), 'file')} that "
            f"{'is' if len(skipped) == 1 else 'are'} not a transcript "
            f"(first: {skipped[0]})",
            file=sys.stderr,
        )
    out.flush()
    return status


def empty_tree(path: str) -> str:
    """The words for a directory tree with no transcript in it (`run_check`'s and the
    fleet listing's)."""
    return f"{path}: no .jsonl files in this directory tree"


def refusal_json(path: Path | str, message: str) -> str:
    """`--check --json`'s line for a PATH that could not be checked: its place is kept.

    A script reading one object per PATH, in order, can match each to its
    PATH; `error` says why (the same words as the line on stderr), and the
    exit status is 2 as it is without `--json`.
    """
    return json.dumps({"transcript": str(path), "error": message}, ensure_ascii=False) + "\n"


#: Directories inside a tree that hold sidecars, never transcripts.
_SIDECAR_DIRS = ("tool-results", "tool-output")


def is_sidecar_dir(name: str) -> bool:
    """Whether a directory of this name holds sidecars (never walked for transcripts)."""
    return name.endswith(".artifacts") or name in _SIDECAR_DIRS


def is_transcript_name(name: str, names: Collection[str], in_chats: bool) -> bool:
    """Whether a file of this name, among `names` (its directory's), is a transcript a tree
    walk checks: `.jsonl`; `.jsonl.zst` but beside its plain `.jsonl`; an older Gemini CLI
    chat (`chats/session-*.json`, `in_chats`) but beside its `.jsonl`. The rule of
    `transcripts_in` and of the fleet's listing of a store (`transcript_view.fleet`)."""
    return (
        name.endswith(".jsonl")
        or (name.endswith(".jsonl.zst") and name[: -len(".zst")] not in names)
        or (in_chats and name.startswith("session-") and name.endswith(".json")
            and name + "l" not in names)
    )  # fmt: skip


def folder_order(name: str) -> str:
    """What a folder is sorted by among its siblings: its name and a `/`, as a store lists
    it (`proj-a/` before `proj/`, as `-` sorts before `/`), so that a walk of a store's
    sorted listing (`transcript_view.fleet`) streams in the order of a local walk."""
    return name + "/"


def session_folder_name(name: str) -> str | None:
    """The name of the folder beside the transcript `name` that would hold its subagents'
    transcripts (None: no folder can): Claude Code's session folder, named by the file's
    stem, never a sidecar folder's name.

    A tree walk lists that folder's transcripts right after the file, so that a
    session and its subagents are one run of the listing: `transcripts_in`, the
    fleet's walk of a store (`transcript_view.fleet.walk`) and its one task per
    session (`transcript_view.fleet.listing.session_of`)."""
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else ""
    return stem if stem and not is_sidecar_dir(stem) else None


def session_folder(name: str, dirs: Collection[str]) -> str | None:
    """The folder among `dirs` that holds the subagents of the transcript `name` beside it
    (`session_folder_name`), or None."""
    folder = session_folder_name(name)
    return folder if folder is not None and folder in dirs else None


def _opencode_sessions(folder: Path, dirs: list[str]) -> list[Path]:
    """An OpenCode data folder's sessions (`core.opencode_store.data_sessions`), by id; its
    storage tree is not walked again as files. A database that cannot be read is itself
    listed, so that checking it says why."""
    if "storage" in dirs and (folder / "storage" / "session").is_dir():
        dirs.remove("storage")
    rows, problems = data_sessions(folder)
    return sorted([r.path for r in rows] + [db for db, _ in problems], key=str)


def transcripts_in(directory: Path) -> list[Path]:
    """Every `.jsonl` file in a directory tree, sorted; symlinks and sidecar folders skipped.

    A folder's files come by name, then its folders (`folder_order`); but a
    transcript's session folder (`session_folder`: a Claude Code session's
    subagents) comes right after the transcript, so that a session is listed whole
    before the next one.

    A compressed `.jsonl.zst` (Codex's, a week idle) counts too, except beside
    its plain `.jsonl`: then the plain file is the transcript, as for Codex
    itself, and the compressed one is passed over without a word. So does an
    older Gemini CLI chat, `chats/session-*.json`, but beside its `.jsonl`.
    """
    found: list[Path] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(
            (d for d in dirs if not (is_sidecar_dir(d) or os.path.islink(os.path.join(root, d)))),
            key=folder_order,
        )
        names = set(files)
        chats = os.path.basename(root) == "chats"
        if any(is_database_name(n) for n in files) or "storage" in dirs:
            found.extend(_opencode_sessions(Path(root), dirs))
        for name in sorted(files):
            path = Path(root) / name
            wanted = is_transcript_name(name, names, chats)
            if wanted and not path.is_symlink() and path.is_file():
                found.append(path)
                folder = session_folder(name, dirs)
                if folder is not None:
                    dirs.remove(folder)
                    found.extend(transcripts_in(path.with_name(folder)))
    return found


@dataclass(frozen=True, slots=True)
class Refusal:
    """A PATH that could not be checked: the one line to print, and why."""

    message: str
    not_a_transcript: bool = False
    """No format's file (skipped quietly in a tree walk, refused when named)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """One transcript's printed result, made where it was checked (maybe another process)."""

    text: str
    errors: int
    warnings: int

    def failed(self, strict: bool) -> bool:
        """Whether this transcript makes the exit status 1."""
        return self.errors > 0 or (strict and self.warnings > 0)


def check_one(path: Path, as_json: bool, fmt: Format | None, workers: int) -> Outcome | Refusal:
    """Verify one transcript and format its output, or say why it cannot be checked."""
    if is_database_file(path):  # what a walk lists of a database it cannot read
        try:
            list_database(path)
        except StoreError as exc:
            return Refusal(str(exc))
        return Refusal(f"{path}: a database: each of its OpenCode sessions is checked by name")
    try:
        report = verify(path, workers=workers, format=fmt)
    except NotATranscript as exc:
        return Refusal(str(exc), not_a_transcript=True)
    except TranscriptError as exc:
        return Refusal(str(exc))
    if as_json:
        text = json.dumps(report.as_dict(), ensure_ascii=False) + "\n"
    else:
        text = report_text(report)
    return Outcome(text, report.errors, report.warnings)


def report_text(report: Report) -> str:
    """`--check`'s lines for one transcript: its summary, then each finding."""
    lines = [summary_line(report)]
    lines.extend(finding_line(report, i) for i in range(len(report.findings)))
    return "\n".join(lines) + "\n"


def _check_job(shared: tuple[bool, Format | None], path: Path) -> Outcome | Refusal:
    as_json, fmt = shared
    return check_one(path, as_json, fmt, 1)


def _outcomes(
    targets: Sequence[tuple[Path, bool]], fmt: Format | None, jobs: int, as_json: bool
) -> Iterator[tuple[Path, bool, Outcome | Refusal]]:
    """Each target's outcome, in order: in-process for one, in `jobs` processes for several.

    Parsing is pure Python and holds the GIL, so transcripts are checked in
    processes, not threads; results come back in path order
    (`parallel.ordered`), so the output is the same whatever the number of cores.
    """
    if len(targets) <= 1 or jobs <= 1:
        for path, walked in targets:
            yield path, walked, check_one(path, as_json, fmt, jobs)
        return
    chunk = max(1, min(16, len(targets) // (jobs * 8)))  # fewer round trips for small files
    paths = [path for path, _ in targets]
    outcomes = parallel.ordered(_check_job, (as_json, fmt), paths, jobs, chunk=chunk, collect=True)
    for (path, walked), outcome in zip(targets, outcomes, strict=True):
        yield path, walked, outcome

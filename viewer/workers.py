"""The bodies of the transcript screen's background workers, as plain functions.

Each runs in a thread worker (`@work(thread=True)` on the screen or the view)
and learns nothing from Textual: it gets the data it works on, a `post`
callable that delivers `viewer.messages` to the widget that owns that data,
and, where it loops, a `cancelled` callable. Keeping them free of the App is
what lets a test drive each one with a list's `append` as `post` and see
exactly what it would have said, without a screen or an event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.message import Message

from transcript_view.core import parallel
from transcript_view.core.analyser import Analyser
from transcript_view.core.analysis import Analysis
from transcript_view.core.filelines import FileLines
from transcript_view.core.formats.claude_lines import output_text
from transcript_view.core.formats.detect import Format
from transcript_view.core.formats.model import SessionAnalysis
from transcript_view.core.formats.readers import analyse_as
from transcript_view.core.ledger import VerificationLedger
from transcript_view.core.records import SiteKey
from transcript_view.core.report import analysis_dir, orphans_of
from transcript_view.core.transcript import Transcript, TranscriptError, parse_json_line
from transcript_view.core.verification import (
    FileCheck,
    FileState,
    resolve_inside,
)
from transcript_view.viewer.background import FileJob, analysis_job, verify_job
from transcript_view.viewer.fills import Fills
from transcript_view.viewer.messages import (
    AnalysisFailed,
    AnalysisReady,
    Appended,
    ArtifactGrew,
    ArtifactOpened,
    ArtifactOpenFailed,
    ArtifactsChecked,
    FillsMade,
    IndexProgress,
    LinesFound,
    OrphansFound,
    Progress,
    RowsMeasured,
)
from transcript_view.viewer.pacing import give_way

Post = Callable[[Message], object]
"""Where a worker's messages go: the owning widget's `post_message` (a list's
`append` in tests)."""
Cancelled = Callable[[], bool]
"""Whether the worker was cancelled (its screen closed): checked between steps."""

#: Bytes indexed before the first screen is laid out; the rest follows in the background.
FIRST_INDEX_BYTES = 1 << 20
#: Bytes indexed per later step (between progress messages).
INDEX_STEP_BYTES = 32 << 20
#: Bytes of an artifact indexed between two looks at whether a key is waiting.
ARTIFACT_STEP_BYTES = 256 << 10


def _never() -> bool:
    return False


def index_transcript(transcript: Transcript, post: Post, cancelled: Cancelled = _never) -> None:
    """Build the line index: the first megabyte at once, then the rest in steps.

    The first step is small so the first screen is laid out before a huge file
    is scanned; every step posts an `IndexProgress`, the last one `complete`.
    A compressed transcript is decompressed as the index grows, step by step
    (`Transcript.build_index`): its progress counts compressed bytes read
    until all of it is decompressed. The transcript closed meanwhile (the
    screen went away), it stops.
    """
    step = FIRST_INDEX_BYTES
    while True:
        try:
            done = transcript.build_index(max_bytes=step)
        except (OSError, TranscriptError) as exc:
            if not cancelled():
                post(AnalysisFailed(f"index: {exc}"))
            return
        done_bytes, total_bytes = transcript.loading()
        post(
            IndexProgress(
                transcript.line_count,
                done_bytes,
                total_bytes,
                done,
                transcript.decompressing,
                transcript.file_size(),
            )
        )
        if done or cancelled():
            return
        step = INDEX_STEP_BYTES
        give_way()


def measures_rows(transcript: Transcript | int, analyser: Analyser | None) -> bool:
    """Whether `run_analysis` will count the file view's rows as it reads (`RowsMeasured`).

    Only a first pass (of any format) of a transcript big enough for the pass
    server (`transcript`, or its size while it is being indexed): the server's
    workers read every line anyway. A small file is laid out at once
    in-process, and a follow-mode update reads only what was appended.
    """
    size = transcript if isinstance(transcript, int) else transcript.indexed_bytes
    return analyser is None and parallel.server() is not None and size >= parallel.PARALLEL_BYTES


def run_analysis(
    transcript: Transcript,
    analyser: Analyser | None,
    post: Post,
    fmt: Format = Format.REFERENCE,
    cancelled: Cancelled = _never,
    width: int = 0,
) -> None:
    """The one streaming pass (operations, markers, replay, line problems).

    Following, `analyser` reads only the appended lines (after one full pass);
    otherwise one pass of the format's reader runs, whose working state is
    freed when it ends: for a big file in the program's pass server
    (`core.parallel`), which uses every core, while this thread only waits.
    Cancelled (the screen closed, the app quits), a pass in the server stops
    at its next batch instead of keeping the quit waiting for it.
    A bug in the pass is posted as `AnalysisFailed`
    rather than raised: the file view must survive it. With a `width`, a
    pass in the server also counts the file view's rows at that width as it
    reads (`RowsMeasured`; see `measures_rows`).
    """

    def progress(done: int, total: int) -> None:
        post(Progress("reading", done, total))
        give_way()

    def on_event(kind: str, value: Any) -> bool:
        if cancelled():
            return False  # the screen closed (or the app quits): the server stops the pass
        if kind == "progress":
            post(Progress("reading", *value))
        elif kind == "found":
            post(LinesFound(*value))
        elif kind == "rows":
            post(RowsMeasured(value[0], value[1], width))
        return True

    server = parallel.server()
    followed = analyser is not None and fmt is Format.REFERENCE
    try:
        if analyser is not None and followed:
            analysis: Analysis | SessionAnalysis = analyser.update(progress)
        elif server is not None and transcript.indexed_bytes >= parallel.PARALLEL_BYTES:
            try:
                analysis = server.run(analysis_job, transcript, fmt, width, on_event=on_event)
                if analysis is None or cancelled():
                    return  # stopped, or done as it was cancelled: nobody waits for it
            except (parallel.PassFailed, OSError):
                # The server could not (it is gone, or what it made would not travel
                # back): here, as without a server; a bug in the pass raises again.
                analysis = analyse_as(transcript, fmt, progress)
        else:
            analysis = analyse_as(transcript, fmt, progress)
    except Exception as exc:
        post(AnalysisFailed(f"{type(exc).__name__}: {exc}"))
        return
    if not followed:  # (a follower's next update extends its columns)
        analysis.calls.narrow()  # (done already where the pass server made it)
    post(AnalysisReady(analysis))


#: At least this many files are checked in the pass server (when it is free) rather
#: than here: a few are done before a message to it and back would be.
SERVER_CHECK_FILES = 64


@dataclass(frozen=True, slots=True)
class VerifyJob:
    """What the verification worker reads: the ledger's wants, decided on the UI thread."""

    analysis: Analysis | SessionAnalysis
    files: FileJob | None = None
    """The files to check (None: the analysis names no directory, or no file)."""

    @property
    def names(self) -> Sequence[str]:
        """The files to check, in order."""
        return self.files.names if self.files is not None else []

    @classmethod
    def of(cls, ledger: VerificationLedger) -> VerifyJob:
        """The job a ledger wants done (as `--check` does it: `core.report`)."""
        wanted = ledger.wanted()
        directory = analysis_dir(ledger.analysis)
        if directory is None or not wanted:
            return cls(ledger.analysis)
        return cls(
            ledger.analysis,
            FileJob(
                directory,
                wanted,
                frozenset(n for n in wanted if not ledger.counts_chars(n)),
                frozenset(n for n in wanted if ledger.counts_utf16(n)),
                {n: ledger.edge_bytes(n) for n in wanted},
                ledger.ends_to_keep(wanted),
            ),
        )


def verify_files(job: VerifyJob, post: Post, cancelled: Cancelled = _never) -> None:
    """Hash each named artifact (streamed), then list the directory's orphans.

    `ArtifactsChecked` carries the files checked since the last one
    (`FileJob.batches`), so badges turn from "checking" to their state as files
    are hashed without a message a file; `OrphansFound` last, which ends
    verification. Each check comes cut to the digests of the ends the ledger
    keeps (`FileJob.needs`). Many reference-format files are checked in the
    pass server when it is free (`background.verify_job`); what it could not
    check, or left to let a pass that waited for it go first, is checked here.
    """
    files = job.files
    if files is not None:
        start = 0
        server = parallel.server()
        if (
            server is not None
            and not server.busy
            and len(files.names) >= SERVER_CHECK_FILES
            and files.needs is not None  # a sidecar's start is cut by its ledger: sent whole
        ):
            reached = _checked_in_server(server, job, files, post, cancelled)
            if reached is None:
                return
            start = reached
        for batch, done in files.batches(start):
            if cancelled():
                return
            post(ArtifactsChecked(batch, done, len(files.names), job.analysis))
    post(OrphansFound(orphans_of(job.analysis)))


def _checked_in_server(
    server: parallel.PassServer,
    job: VerifyJob,
    files: FileJob,
    post: Post,
    cancelled: Cancelled,
) -> int | None:
    """How many of `files` the server checked (all, where it failed, or where it gave
    way to a pass that waited for it); None: cancelled."""
    done = 0
    gave_way = False

    def on_event(kind: str, value: Any) -> bool:
        nonlocal done, gave_way
        if cancelled():
            return False  # the screen closed, or a newer analysis checks its own files
        if kind == "checks":
            batch, done = value
            post(ArtifactsChecked(batch, done, len(files.names), job.analysis))
        if server.wanted:
            # A pass waits for the server (a followed file started over, say): it
            # goes first, and the rest of the files are checked here.
            gave_way = True
            return False
        return True

    try:
        finished = server.run(verify_job, job.analysis.transcript, files, 0, on_event=on_event)
        if cancelled() or (finished is None and not gave_way):
            return None  # stopped, or done as it was cancelled: nobody waits for the rest
    except (parallel.PassFailed, OSError):
        pass  # the server could not: the rest are checked here
    return done


def open_artifact(
    key: SiteKey,
    directory: Path,
    name: str,
    check: FileCheck | None,
    row_bytes: int,
    post: Post,
    cancelled: Cancelled = _never,
) -> None:
    """Index an artifact as rows, posting its first rows while the rest is indexed.

    The hash is not computed here: the verification worker delivers it (and
    the badge) as it does for every artifact, so a huge file is read once.
    `ArtifactOpened` carries the open `FileLines` (whose descriptor the
    receiver then owns); `ArtifactGrew` follows every `INDEX_STEP_BYTES`.
    """
    path, why = resolve_inside(directory, name)
    if path is None:
        post(ArtifactOpenFailed(key, f"{name}: {why}"))
        return
    try:
        lines = FileLines(path, row_bytes=row_bytes)
    except (OSError, TranscriptError, ValueError) as exc:
        post(ArtifactOpenFailed(key, f"{name}: {exc}"))
        return
    if check is None:
        check = FileCheck(name, FileState.OK, "being hashed", size=lines.size, path=path)
    _index_rows(key, name, lines, check, post, cancelled)


def open_record(
    key: SiteKey,
    transcript: Transcript,
    field: str,
    row_bytes: int,
    post: Post,
    cancelled: Cancelled = _never,
) -> None:
    """Open, as an artifact's rows, the field of Claude Code's own record on the marker's
    line that holds the full output its missing sidecar would have (`rules.record_copy`).

    The line is read again and the field decoded (the analysis kept only its length);
    its rows are of that text held in memory, nothing is written. The check says what
    it is: the agent's record, not a file that was hashed.
    """
    line = key.line
    try:
        start, _ = transcript.line_span(line)
        parsed = parse_json_line(transcript.raw_line(line), line, start, is_last=False)
    except (OSError, TranscriptError) as exc:
        post(ArtifactOpenFailed(key, f"line {line:,}: {exc}"))
        return
    record = parsed.get("toolUseResult") if isinstance(parsed, Mapping) else None
    text = output_text(record, field)
    if text is None:
        post(ArtifactOpenFailed(key, f"line {line:,} no longer holds {field}"))
        return
    data = text.encode("utf-8", "replace")
    lines = FileLines(transcript.path, row_bytes=row_bytes, data=data)
    check = FileCheck(
        field,
        FileState.OK,
        "Claude Code's own record",
        size=len(data),
        chars=len(text),
        path=transcript.path,
    )
    _index_rows(key, field, lines, check, post, cancelled)


def _index_rows(
    key: SiteKey, name: str, lines: FileLines, check: FileCheck, post: Post, cancelled: Cancelled
) -> None:
    """Post an opened artifact's first rows, then index the rest in steps (`ArtifactGrew`)."""
    try:
        done = lines.index(max_bytes=FIRST_INDEX_BYTES)
        if not done:
            lines.tail_rows()  # the end shows at once, before the index gets there
    except (OSError, ValueError) as exc:
        lines.close()
        post(ArtifactOpenFailed(key, f"{name}: {exc}"))
        return
    post(ArtifactOpened(key, lines, check))
    posted = lines.indexed_bytes
    while not done and not cancelled() and not lines.closed:
        # Small steps, so a key pressed meanwhile waits for at most one of them.
        give_way()
        try:
            done = lines.index(max_bytes=min(INDEX_STEP_BYTES, ARTIFACT_STEP_BYTES))
        except (OSError, ValueError) as exc:
            # The file went away or was truncated part-way: the rows found so
            # far stay on screen, and the receiver says why the rest is not.
            post(ArtifactOpenFailed(key, f"{name}: {exc}"))
            return
        if done or lines.indexed_bytes - posted >= INDEX_STEP_BYTES:
            posted = lines.indexed_bytes
            post(ArtifactGrew(key, lines, lines.row_count))


def poll_transcript(transcript: Transcript, post: Post) -> None:
    """Follow mode: index what was appended since the last look (`Appended`)."""
    try:
        new = transcript.refresh()
    except OSError as exc:
        post(AnalysisFailed(f"follow: {exc}"))
        return
    post(Appended(new))


def make_fills(analysis: Analysis | SessionAnalysis, post: Post) -> None:
    """The context screen's fills of every call (`FillsMade`): a loop over the calls,
    a fifth of a second for half a million, kept off the UI thread."""
    post(FillsMade(analysis, Fills.of(analysis.calls)))

"""`transcript-view --check URL... --scheduler ADDRESS | --workers N [--out DIR]`.

What `--check` prints, for a fleet: the same lines (or `--json` objects) in path
order, the same exit status (0, 1 for errors or with `--strict` warnings, 2 for a
URL or transcript that could not be checked), a line on stderr that counts
transcripts as they are checked when it is a terminal (none when piped), and
with `--out DIR` the results as Parquet tables (`fleet.dataset`).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from distributed import Client, LocalCluster

from transcript_view.core.formats.detect import Format
from transcript_view.core.text import plural
from transcript_view.fleet.dataset import DatasetWriter
from transcript_view.fleet.run import results


@contextlib.contextmanager
def cluster(scheduler: str | None, workers: int | None) -> Iterator[Client]:
    """A client of the cluster at `scheduler`, or of a `LocalCluster` of `workers`
    processes (one thread each: the check holds the GIL) started for this run."""
    if scheduler is not None:
        with Client(scheduler) as client:
            yield client
        return
    with (
        LocalCluster(
            n_workers=workers or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        ) as local,
        Client(local) as client,
    ):
        yield client


def run_fleet(
    urls: Sequence[str],
    *,
    as_json: bool,
    strict: bool,
    fmt: Format | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    out_dir: Path | None = None,
    out: TextIO | None = None,
    progress: TextIO | None = None,
) -> int:
    """Check every transcript `urls` name on a Dask cluster and print as `--check` does;
    returns the exit status."""
    out = out if out is not None else sys.stdout
    if progress is None and not as_json and sys.stderr.isatty():
        progress = sys.stderr
    writer = None
    if out_dir is not None:
        try:
            writer = DatasetWriter(out_dir)
        except (FileExistsError, OSError) as exc:
            print(f"transcript-view: {exc}", file=sys.stderr)
            return 2
    status = 0
    done = 0
    skipped: list[str] = []
    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(cluster(scheduler, workers))
        except (OSError, TimeoutError, ValueError) as exc:
            where = scheduler if scheduler is not None else "a LocalCluster"
            print(f"transcript-view: cannot reach {where} ({exc})", file=sys.stderr)
            return 2
        for target, checked in results(urls, client, format=fmt):
            done += 1
            if progress is not None:
                progress.write(f"\rtranscript-view: checked {plural(done, 'transcript')}")
                progress.flush()
            if checked.error is not None:
                if checked.not_a_transcript and target.url not in urls:  # a walk's find
                    skipped.append(checked.url)
                    continue
                if progress is not None:
                    progress.write("\r\x1b[K")
                print(f"transcript-view: {checked.error}", file=sys.stderr)
                if as_json:
                    out.write(json.dumps({"transcript": checked.url, "error": checked.error},
                                         ensure_ascii=False) + "\n")  # fmt: skip
                status = 2
            else:
                if progress is not None:
                    progress.write("\r\x1b[K")
                    progress.flush()
                out.write(
                    json.dumps(checked.record, ensure_ascii=False) + "\n"
                    if as_json
                    else checked.text
                )
                if checked.failed(strict) and status == 0:
                    status = 1
            if writer is not None:
                writer.add(checked)
    if writer is not None:
        writer.flush()
    if progress is not None:
        progress.write("\r\x1b[K")
        progress.flush()
    if skipped:
        print(
            f"transcript-view: skipped {plural(len(skipped), 'file')} that "
            f"{'is' if len(skipped) == 1 else 'are'} not a transcript (first: {skipped[0]})",
            file=sys.stderr,
        )
    out.flush()
    return status


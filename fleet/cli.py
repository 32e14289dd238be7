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
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

from distributed import Client, LocalCluster

from transcript_view.core.check import Outcome, PathOutcome, Refusal, print_outcomes
from transcript_view.core.formats.detect import Format
from transcript_view.fleet.dataset import DatasetWriter
from transcript_view.fleet.listing import Target
from transcript_view.fleet.run import results
from transcript_view.fleet.task import Checked


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
    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(cluster(scheduler, workers))
        except (OSError, TimeoutError, ValueError) as exc:
            where = scheduler if scheduler is not None else "a LocalCluster"
            print(f"transcript-view: cannot reach {where} ({exc})", file=sys.stderr)
            return 2
        checked = results(urls, client, format=fmt)
        status = print_outcomes(
            _outcomes(checked, urls, as_json, writer), as_json=as_json, strict=strict,
            out=out, progress=progress,
        )  # fmt: skip
    if writer is not None:
        writer.flush()
    return status


def _outcomes(
    checked: Iterable[tuple[Target, Checked]],
    urls: Sequence[str],
    as_json: bool,
    writer: DatasetWriter | None,
) -> Iterator[PathOutcome]:
    """Each result as `--check`'s printing loop takes it (a URL not named on the command
    line was found by a walk), written to the dataset as it passes."""
    for target, result in checked:
        if writer is not None:
            writer.add(result)
        walked = target.url not in urls
        if result.error is not None:
            yield result.url, walked, Refusal(result.error, result.not_a_transcript)
        else:
            text = json.dumps(result.record, ensure_ascii=False) + "\n" if as_json else result.text
            yield result.url, walked, Outcome(text, result.errors, result.warnings)

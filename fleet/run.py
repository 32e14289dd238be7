"""The fleet check on a Dask cluster: one task per transcript, results in path order.

`results` is the loop the command line and `check` share: the listing
(`fleet.listing.targets`) is read as it streams, each transcript submitted as
one task (`fleet.task.check_url`) with at most `window` in flight, and the
results handed on in the listing's order, each task's future released once its
result is read, so neither the listing nor the results of a million
transcripts sit in memory. A worker that dies mid-task has its task run again
by Dask's scheduler (its `allowed-failures`); a task that fails even so is that
transcript's result ("the check failed"), never the run's end. Tasks share no
state: a transcript's result depends on nothing but its own objects, so the
cluster may be as big as the fleet needs.
"""

from __future__ import annotations

import operator
import uuid
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import dask.dataframe as dd
import pandas as pd
from dask.delayed import delayed
from distributed import Client, Future

from transcript_view.core.formats.detect import Format
from transcript_view.fleet.dataset import CALLS, FINDINGS, TRANSCRIPTS, finding_rows, transcript_row
from transcript_view.fleet.listing import Target, redact, targets
from transcript_view.fleet.task import Checked, check_url

#: Tasks in flight at most, a worker thread: enough that none waits between two.
IN_FLIGHT_PER_THREAD = 8


def results(
    urls: Iterable[str],
    client: Client,
    *,
    storage_options: Mapping[str, Any] | None = None,
    format: Format | None = None,
    window: int | None = None,
) -> Iterator[tuple[Target, Checked]]:
    """Each transcript `urls` name with its result, in the listing's order."""
    options = dict(storage_options or {})
    if window is None:
        threads = sum(client.nthreads().values()) or 1
        window = max(16, IN_FLIGHT_PER_THREAD * threads)
    run = uuid.uuid4().hex[:12]
    pending: deque[tuple[Target, Future[Checked] | Checked]] = deque()
    for n, target in enumerate(targets(urls, options)):
        if target.error is not None:
            pending.append((target, Checked(redact(target.url), error=target.error)))
        else:
            key = f"transcript-view-check-{run}-{n}"
            future = client.submit(check_url, target.url, options, format, key=key, pure=False)
            pending.append((target, future))
        while len(pending) > window:
            yield _take(pending.popleft())
    while pending:
        yield _take(pending.popleft())


def _take(item: tuple[Target, Future[Checked] | Checked]) -> tuple[Target, Checked]:
    target, got = item
    if isinstance(got, Checked):
        return target, got
    try:
        checked: Checked = got.result()
    except Exception as exc:  # a task that failed even after Dask ran it again
        words = f"{type(exc).__name__}: {exc}"
        shown = redact(target.url)
        checked = Checked(shown, error=redact(f"{shown}: the check failed ({words})"))
    finally:
        got.release()
    return target, checked


@dataclass(frozen=True, slots=True)
class Fleet:
    """A fleet check's three tables as Dask DataFrames (`check`): computed together, each
    partition's transcripts are checked once."""

    findings: dd.DataFrame
    transcripts: dd.DataFrame
    calls: dd.DataFrame


#: Transcripts a partition of `check`'s tables holds.
PARTITION = 64


def check(
    urls: Iterable[str],
    client: Client | None = None,
    *,
    storage_options: Mapping[str, Any] | None = None,
    format: Format | None = None,
    partition: int = PARTITION,
) -> Fleet:
    """The fleet check as Dask DataFrames, for code that holds a Dask client of its own.

    The URLs are listed here (a partition a `partition` transcripts: the list of
    URLs is held, not their results); each partition is one task that checks its
    transcripts with `check_url` and gives its rows of the three tables
    (`fleet.dataset`), so `dask.compute(fleet.findings, fleet.transcripts)`
    checks every transcript once. With a `client`, they are persisted on its
    cluster at once (the checks start); without, they run where Dask computes
    them (the current client, as for any Dask collection).
    """
    options = dict(storage_options or {})
    listed = list(targets(urls, options))
    groups = [listed[i : i + partition] for i in range(0, len(listed), partition)] or [[]]
    parts = [delayed(_partition, pure=False)(g, options, format) for g in groups]
    frames = [
        dd.from_delayed(
            [delayed(operator.getitem)(p, name) for p in parts],
            meta=schema.empty_table().to_pandas(),
            verify_meta=False,
        )
        for name, schema in (("findings", FINDINGS), ("transcripts", TRANSCRIPTS), ("calls", CALLS))
    ]
    if client is not None:  # started on it now; else computed on the current client
        frames = client.persist(frames)
    return Fleet(*frames)


def _partition(
    group: list[Target], options: dict[str, Any], fmt: Format | None
) -> dict[str, pd.DataFrame]:
    """One partition's rows of the three tables."""
    found: dict[str, list[dict[str, Any]]] = {"findings": [], "transcripts": [], "calls": []}
    for target in group:
        checked = (
            Checked(redact(target.url), error=target.error)
            if target.error is not None
            else check_url(target.url, options, fmt)
        )
        found["findings"].extend(finding_rows(checked))
        found["transcripts"].append(transcript_row(checked))
        found["calls"].extend(dict(zip(CALLS.names, r, strict=True)) for r in checked.calls)
    return {
        name: _frame(rows, schema)
        for (name, rows), schema in zip(found.items(), (FINDINGS, TRANSCRIPTS, CALLS), strict=True)
    }


def _frame(rows: list[dict[str, Any]], schema: Any) -> pd.DataFrame:
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=schema).to_pandas()

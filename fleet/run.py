"""The fleet check on a Dask cluster: a task per transcript (a session with its subagents;
small transcripts together), results in path order.

`results` is the loop the command line uses: the listing
(`fleet.listing.targets`) is read as it streams, cut into tasks (`groups`),
each submitted (`fleet.task.check_urls`) with at most `window` in flight, and the
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
from transcript_view.fleet.dataset import CALLS, FINDINGS, TRANSCRIPTS, rows_of
from transcript_view.fleet.listing import Target, redact, targets, units
from transcript_view.fleet.task import Checked, Mirror, check_url, check_urls

#: Tasks in flight at most, a worker thread: enough that none waits between two.
IN_FLIGHT_PER_THREAD = 4
#: A task checks one transcript, or a run of small ones up to these many transcripts and
#: bytes: a Dask task costs a millisecond or two of the scheduler's, the worker's and
#: this client's time whatever it does, about what checking a small transcript costs.
GROUP_TRANSCRIPTS = 64
GROUP_BYTES = 8 << 20


def groups(
    listed: Iterable[Target], most: int = GROUP_TRANSCRIPTS, most_bytes: int = GROUP_BYTES
) -> Iterator[list[Target]]:
    """The listing cut into tasks, in order: a session (`listing.units`: a transcript with
    its subagents) is never cut; a transcript of `most_bytes` or more is a task of its
    own (with its session), smaller ones together up to `most` of them or `most_bytes`;
    a target that names no transcript (its `error`) alone, as it is no task."""
    group: list[Target] = []
    size = 0
    for unit in units(listed, key=_url):
        head = unit[0]
        alone = head.error is not None or (head.size or 0) >= most_bytes
        full = bool(group) and (
            group[0].error is not None or len(group) >= most or size >= most_bytes
        )
        if group and (alone or full):
            yield group
            group, size = [], 0
        group += unit
        size += sum(t.size or 0 for t in unit)
    if group:
        yield group


def _url(target: Target) -> str | None:
    """A target's URL, as `units` cuts sessions by; None for one that names no transcript."""
    return target.url if target.error is None else None


def results(
    urls: Iterable[str],
    client: Client,
    *,
    storage_options: Mapping[str, Any] | None = None,
    format: Format | None = None,
    window: int | None = None,
    most: int = GROUP_TRANSCRIPTS,
) -> Iterator[tuple[Target, Checked]]:
    """Each transcript `urls` name with its result, in the listing's order (tasks of at
    most `most` small transcripts: `groups`)."""
    options = dict(storage_options or {})
    if window is None:
        threads = sum(client.nthreads().values()) or 1
        window = max(8, IN_FLIGHT_PER_THREAD * threads)
    run = uuid.uuid4().hex[:12]
    pending: deque[tuple[list[Target], Future[list[Checked]] | None]] = deque()
    for n, group in enumerate(groups(targets(urls, options), most)):
        if group[0].error is not None:
            pending.append((group, None))
        else:
            key = f"transcript-view-check-{run}-{n}"
            names = [(t.where or t.url, t.url) for t in group]
            future = client.submit(check_urls, names, options, format, key=key, pure=False)
            pending.append((group, future))
        while len(pending) > window:
            yield from _take(*pending.popleft())
    while pending:
        yield from _take(*pending.popleft())


def _take(
    group: list[Target], future: Future[list[Checked]] | None
) -> Iterator[tuple[Target, Checked]]:
    if future is None:
        (target,) = group
        yield target, Checked(redact(target.url), error=target.error)
        return
    try:
        checked: list[Checked] = future.result()
    except Exception as exc:  # a task that failed even after Dask ran it again
        words = f"{type(exc).__name__}: {exc}"
        checked = [
            Checked(redact(t.url), error=redact(f"{t.url}: the check failed ({words})"))
            for t in group
        ]
    finally:
        future.release()
    yield from zip(group, checked, strict=True)


@dataclass(frozen=True, slots=True)
class Fleet:
    """A fleet check's three tables as Dask DataFrames (`check`): computed together, each
    partition's transcripts are checked once."""

    findings: dd.DataFrame
    transcripts: dd.DataFrame
    calls: dd.DataFrame


#: Transcripts a partition of `check`'s tables holds.
PARTITION = GROUP_TRANSCRIPTS


def check(
    urls: Iterable[str],
    client: Client | None = None,
    *,
    storage_options: Mapping[str, Any] | None = None,
    format: Format | None = None,
    partition: int = PARTITION,
) -> Fleet:
    """The fleet check as Dask DataFrames, for code that holds a Dask client of its own.

    The URLs are listed here (a partition up to `partition` transcripts, a session
    never cut, as `groups` cuts tasks: the list of URLs is held, not their
    results); each partition is one task that checks its
    transcripts with `check_url` and gives its rows of the three tables
    (`fleet.dataset`), so `dask.compute(fleet.findings, fleet.transcripts)`
    checks every transcript once. With a `client`, they are persisted on its
    cluster at once (the checks start); without, they run where Dask computes
    them (the current client, as for any Dask collection).
    """
    options = dict(storage_options or {})
    given = list(urls)
    listed = list(targets(given, options))
    parts_of = list(groups(listed, partition, GROUP_BYTES)) or [[]]
    named = frozenset(given)
    parts = [delayed(_partition, pure=False)(g, options, format, named) for g in parts_of]
    frames = [
        dd.from_delayed(
            [delayed(operator.getitem)(p, name) for p in parts],
            meta=_frame([], schema),
            verify_meta=False,
        )
        for name, schema in (("findings", FINDINGS), ("transcripts", TRANSCRIPTS), ("calls", CALLS))
    ]
    if client is not None:  # started on it now; else computed on the current client
        frames = client.persist(frames)
    return Fleet(*frames)


def _partition(
    group: list[Target], options: dict[str, Any], fmt: Format | None, named: frozenset[str]
) -> dict[str, pd.DataFrame]:
    """One partition's rows of the three tables (a file a walk found that is no
    transcript is passed over, as the command line passes over it)."""
    found: dict[str, list[dict[str, Any]]] = {"findings": [], "transcripts": [], "calls": []}
    for unit in units(group, key=_url):
        with Mirror() as mirror:  # a session's transcripts share what is fetched
            for target in unit:
                checked = (
                    Checked(redact(target.url), error=target.error)
                    if target.error is not None
                    else check_url(
                        target.where or target.url, options, fmt, name=target.url, mirror=mirror
                    )
                )
                if checked.not_a_transcript and target.url not in named:
                    continue
                for name, rows in rows_of(checked).items():
                    found[name].extend(rows)
    return {
        name: _frame(rows, schema)
        for (name, rows), schema in zip(found.items(), (FINDINGS, TRANSCRIPTS, CALLS), strict=True)
    }


def _frame(rows: list[dict[str, Any]], schema: Any) -> pd.DataFrame:
    """Rows as a DataFrame of Arrow types (an integer column with a null stays one)."""
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=schema).to_pandas(types_mapper=pd.ArrowDtype)

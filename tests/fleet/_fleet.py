"""What the fleet tests share: `--check --json` of a local copy, and the fleet's results
in the same shape, the store's URLs put back as the local copy's paths."""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from distributed import Client, LocalCluster

from transcript_view.core.check import run_check
from transcript_view.fleet.run import results


def local_json(paths: list[Path]) -> list[dict[str, Any]]:
    """`--check --json PATH...`, a record a transcript."""
    out = io.StringIO()
    run_check(paths, as_json=True, strict=False, out=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def as_local(record: dict[str, Any], prefix: str, local: Path) -> dict[str, Any]:
    """A fleet record with the store's URL `prefix` as the local copy's folder."""
    text = json.dumps(record).replace(json.dumps(prefix)[1:-1], json.dumps(str(local) + "/")[1:-1])
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def fleet_json(urls: list[str], client: Client) -> list[dict[str, Any]]:
    """The fleet check of `urls`: `--check --json`'s records (a line for a PATH it refused)."""
    out = []
    for target, checked in results(urls, client):
        if checked.record is not None:
            out.append(checked.record)
        elif not checked.not_a_transcript:
            out.append({"transcript": target.url, "error": checked.error})
    return out


def without_opencode(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("format") != "opencode"]


def free_port() -> int:
    """A loopback port nothing listens on (for a server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def server(argv: list[str], port: int) -> Iterator[None]:
    """A server process (`argv`), up once `port` takes a connection; stopped after (killed
    if it has not stopped in 5 seconds: an emulator may finish its writes first)."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
                break
            time.sleep(0.05)
        yield
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """`os.environ` with `values` set (as a user's configuration would be), then restored."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def two_workers() -> Iterator[Client]:
    """A real LocalCluster of two worker processes (one thread each) and its client; the
    workers inherit the environment as it is when it starts."""
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                     dashboard_address=None) as cluster,
        Client(cluster) as c,
    ):  # fmt: skip
        yield c

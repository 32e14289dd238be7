"""Checking a fleet of transcripts where they lie, on a Dask cluster.

`transcript-view --check URL... --scheduler ADDRESS` (or `--workers N` for a
`LocalCluster` of this machine) runs the same verification as `--check`, one
Dask task per transcript, each worker reading the transcript and its sidecar
folder through fsspec (`s3://`, `gs://`, `az://`, `http(s)://`, `file://` or a
plain path; globs too), and prints the same results in path order. Python code
that holds a Dask client of its own calls `check` (`transcript_view.fleet.check`,
from `transcript_view.fleet.run`), which gives the results as Dask DataFrames.

This package needs the `fleet` extra (`pip install 'transcript-view[fleet]'`):
Dask's `distributed`, fsspec (with `s3fs` and `aiohttp` for S3 and HTTP) and
pyarrow. The core never imports it, nor any of them (tests/contracts).
"""

from __future__ import annotations

from importlib.util import find_spec

#: What the fleet check imports, by the distribution that installs it.
NEEDS = {"dask": "dask", "distributed": "distributed", "fsspec": "fsspec", "pyarrow": "pyarrow"}


def missing() -> list[str]:
    """The distributions the fleet check needs that this Python lacks (none: it can run)."""
    return [dist for module, dist in NEEDS.items() if find_spec(module) is None]


_absent = missing()
if _absent:
    raise ImportError(
        "checking a fleet needs transcript-view's `fleet` extra: "
        f"pip install 'transcript-view[fleet]' (missing: {', '.join(_absent)})"
    )

from transcript_view.fleet.run import Fleet, check  # noqa: E402 (after the extras' check)

__all__ = ["Fleet", "check", "missing"]

"""A fleet: 10,000 small transcripts on a 2-worker `LocalCluster`, against `--check DIR`.

Issue 29: "10,000 small transcripts on a 2-worker LocalCluster: throughput
within 1.5x of `--check DIR` on the same machine (the cost of the engine,
measured); memory per worker flat as the count grows (10,000 vs 1,000)".

The tree is `gen.transcript` files of 8 KiB in folders of 100, every tenth with
one stored 4 KiB artifact, checked both ways with `--json` (the same lines):

- *throughput*: the fleet check of the tree on a `LocalCluster` of two worker
  processes (one thread each) already up, as a team's long-lived cluster is
  (`_STEADY`: the time of `fleet.run.results` over the tree, median of 3 in one
  cluster) against `--check --json DIR` (a process pool of one a core), median of 3.
  Target <= 1.5.
- *the whole command*: `--check --json DIR --workers 2`, which starts its own cluster
  and stops it (both in the time), against the same; for information, no target.
- *memory per worker*: the largest peak RSS (VmHWM) of the cluster's worker
  processes over the 10,000-transcript run, against the same over the first
  1,000's run. Target <= 1.1 (flat: a worker holds one transcript's check at a
  time, and the client only the results in flight).
- *a listing that streams*: the walk of one S3 prefix of `LISTED` keys on moto's
  server (a loopback port), its peak memory in the client (tracemalloc, every
  thread: s3fs parses pages on its own) against the same walk of a tenth as many
  keys. Target <= 1.1 (flat: a page of 1,000 keys at a time, `fleet/walk.py`). For
  comparison, fsspec's own `walk` of the same prefix, which holds the folder's
  listing whole, against ours.

Needs the `fleet` extra (`dev.py` installs it).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_throughput import timed  # noqa: E402
from gen import DATA, transcript  # noqa: E402

SMALL = 8 << 10
FOLDER = 100


def fleet_tree(count: int) -> Path:
    """`count` small transcripts in folders of `FOLDER`, generated on first use."""
    root = DATA / f"fleet-{count}"
    for i in range(count):
        path = root / f"d{i // FOLDER:03}" / f"t{i:05}.jsonl"
        if not path.exists():
            transcript(path, SMALL + i % 512, artifacts=1 if i % 10 == 0 else 0,
                       artifact_size=4 << 10)  # fmt: skip
    return root


def check_command(root: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "transcript_view", "--check", "--json", str(root), *extra]


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = []
        try:
            threads = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in threads:  # a child is listed under the thread that started it
            try:
                with open(f"/proc/{p}/task/{tid}/children") as fh:
                    kids += [int(c) for c in fh.read().split()]
            except OSError:
                continue
        out += kids
        todo += kids
    return out


def _hwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def worker_peak_mib(root: Path) -> float:
    """The largest peak RSS of the cluster's worker processes over one run (polled; a
    worker's VmHWM only grows, so the last reading before it ends is its peak)."""
    proc = subprocess.Popen(check_command(root, "--workers", "2"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    peaks: dict[int, int] = {}
    while proc.poll() is None:
        for pid in _descendants(proc.pid):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    cmd = fh.read()
            except OSError:
                continue
            if b"spawn_main" in cmd:  # a worker process (not the resource tracker)
                peaks[pid] = max(peaks.get(pid, 0), _hwm_kib(pid))
        time.sleep(0.05)
    return max(peaks.values(), default=0) / 1024


#: The fleet check of a tree on a cluster already up: each run's seconds, one a line.
_STEADY = """
import sys, time
from distributed import Client, LocalCluster
from transcript_view.fleet.run import results
if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        for _ in range(int(sys.argv[2])):
            t = time.perf_counter()
            for _ in results([sys.argv[1]], client):
                pass
            print(time.perf_counter() - t, flush=True)
"""


def steady(root: Path, runs: int) -> float:
    """The median time of the fleet check of `root` on a cluster already up."""
    out = subprocess.run(
        [sys.executable, "-c", _STEADY, str(root), str(runs)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return statistics.median(float(line) for line in out.stdout.split())


#: Keys in the S3 prefix the listing rows walk (and a tenth as many).
LISTED = 20_000

#: The walk of an S3 prefix on moto's server: `LISTED` keys put, then each walk's peak
#: traced memory in MiB, one a line: ours of a tenth, ours of all, fsspec's of all.
_LISTING = """
import contextlib, os, socket, subprocess, sys, time, tracemalloc
port, moto, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
server = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(port)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                  AWS_DEFAULT_REGION="us-east-1", AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}")
try:
    for _ in range(200):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
            break
        time.sleep(0.05)
    import s3fs
    from transcript_view.fleet.listing import store_of
    from transcript_view.fleet.walk import in_order
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    fs.mkdir("bench")
    for n, prefix in ((count // 10, "tenth"), (count, "all")):
        fs.pipe({f"bench/{prefix}/{i:07d}.jsonl": b"{}\\n" for i in range(n)}, batch_size=64)
    def peak(walk):
        tracemalloc.start()
        walk()
        got = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return got / 2**20
    ours = lambda p: sum(1 for _ in in_order(store_of(fs).entries, f"bench/{p}/"))
    theirs = lambda p: sum(len(f) for _, _, f in fs.walk(f"bench/{p}", detail=True))
    print(peak(lambda: ours("tenth")), peak(lambda: ours("all")), peak(lambda: theirs("all")))
finally:
    server.terminate()
"""


def listing_rows() -> list[tuple[str, float, float, str, str]]:
    """The peak memory of walking an S3 prefix of `LISTED` keys (see the module)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    moto = str(Path(sys.executable).parent / "moto_server")
    out = subprocess.run(
        [sys.executable, "-c", _LISTING, str(port), moto, str(LISTED)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    tenth, ours, theirs = (float(x) for x in out.stdout.split())
    return [
        (
            f"peak memory walking an S3 prefix of {LISTED:,} keys (paged)",
            ours,
            tenth,
            f"the same, {LISTED // 10:,} keys (target <= 1.1)",
            "MiB",
        ),
        (
            f"fsspec's walk of the same {LISTED:,} keys (a folder's listing whole)",
            theirs,
            ours,
            "ours (paged), for comparison; no target",
            "MiB",
        ),
    ]


def run(runs: int = 3) -> list[tuple[str, float, float, str] | tuple[str, float, float, str, str]]:
    big, small = fleet_tree(10_000), fleet_tree(1_000)
    subprocess.run(check_command(big), stdout=subprocess.DEVNULL, check=False)  # warm the cache
    local = [timed(check_command(big), 1) for _ in range(runs)]
    whole = [timed(check_command(big, "--workers", "2"), 1) for _ in range(runs)]
    on_cluster = steady(big, runs)
    rss_big, rss_small = worker_peak_mib(big), worker_peak_mib(small)
    cores = os.cpu_count() or 1
    base = statistics.median(local)
    return [
        (
            "fleet check, 10,000 small transcripts, on a LocalCluster of 2 workers (up)",
            on_cluster,
            base,
            f"--check DIR of the same tree, {cores} cores (target <= 1.5)",
        ),
        (
            "the whole command, --workers 2 (its cluster's start and stop in the time)",
            statistics.median(whole),
            base,
            f"--check DIR of the same tree, {cores} cores, for comparison; no target",
        ),
        (
            "peak RSS of a worker, 10,000 transcripts",
            rss_big,
            rss_small,
            "the same, 1,000 transcripts (target <= 1.1)",
            "MiB",
        ),
        *listing_rows(),
    ]


if __name__ == "__main__":
    for name, ours, ref, what, *_ in run():
        print(f"{name}: {ours:.3f} vs {what} {ref:.3f} = {ours / ref:.2f}x")

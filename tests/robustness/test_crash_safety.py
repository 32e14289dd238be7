"""The store under SIGKILL and under a racing second writer.

A writer without an atomic store that is killed mid-write leaves a short file
under the artifact's own name: a lie with the right name. Ours writes a temp
file, fsyncs, and links it into place, so a kill at any instant leaves either
the whole artifact or none, plus at most a temp file that `--check` reports as a
`partial-write`.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from transcript_view.core.artifacts import artifact_name, is_temp_name
from transcript_view.core.ledger import orphan_findings
from transcript_view.core.verification import list_orphans

ROOT = Path(__file__).resolve().parents[2]

WRITER = r"""
import sys
from transcript_view.core.artifacts import Store
directory, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = Store(directory)
print("ready", flush=True)
for i in range(count):
    body = (f"{seed}:{i}:" + "x" * 1000 + "\n") * 4000
    store.store(f"op-{seed}-{i}", body)
"""


def expected(seed: int, i: int) -> bytes:
    return ((f"{seed}:{i}:" + "x" * 1000 + "\n") * 4000).encode()


def test_sigkill_at_random_points_never_leaves_a_wrong_artifact(tmp_path: Path) -> None:
    directory = tmp_path / "run.artifacts"
    rng = random.Random(1234)
    kills = 0
    for seed in range(24):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(directory), str(seed), "50"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        # A random instant inside the write loop: this is the point of the test.
        time.sleep(rng.uniform(0.0, 0.25))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += proc.returncode == -signal.SIGKILL
    assert kills >= 20, "the writers must really have been killed mid-run"
    names = sorted(os.listdir(directory))
    artifacts = [n for n in names if not is_temp_name(n)]
    assert artifacts, "some artifacts completed before their writer died"
    for name in artifacts:
        _, seed, i = name.removesuffix(".txt").split("-")
        data = (directory / name).read_bytes()
        assert data == expected(int(seed), int(i)), f"{name} is not what was asked"
    leftovers = [n for n in names if is_temp_name(n)]
    findings = orphan_findings(list_orphans(directory, set(artifacts)))
    assert sorted(f.file or "" for f in findings if f.kind == "partial-write") == leftovers
    assert all(f.kind == "partial-write" for f in findings)


RACER = r"""
import sys
from transcript_view.core.artifacts import ArtifactConflict, Store
directory, tag = sys.argv[1], sys.argv[2]
sys.stdin.readline()  # start together
try:
    Store(directory).store("shared-op", (tag * 64 + "\n") * 40000)
    print("stored")
except ArtifactConflict:
    print("conflict")
"""


def _race(directory: Path, tags: list[str]) -> list[str]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(directory), tag],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for tag in tags
    ]
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    return [p.communicate(timeout=60)[0].strip() for p in procs]


def test_two_processes_storing_one_op_id_never_interleave(tmp_path: Path) -> None:
    for round_ in range(6):
        directory = tmp_path / f"r{round_}.artifacts"
        results = _race(directory, ["A", "B"])
        assert sorted(results) == ["conflict", "stored"]
        data = (directory / artifact_name("shared-op")).read_bytes()
        winners = {hashlib.sha256(((t * 64 + "\n") * 40000).encode()).hexdigest() for t in "AB"}
        assert hashlib.sha256(data).hexdigest() in winners
        assert [n for n in os.listdir(directory) if is_temp_name(n)] == []


def test_two_processes_storing_identical_content_both_succeed(tmp_path: Path) -> None:
    directory = tmp_path / "same.artifacts"
    assert _race(directory, ["A", "A"]) == ["stored", "stored"]
    assert os.listdir(directory) == [artifact_name("shared-op")]

"""The fleet check on a real Dask `LocalCluster` (worker processes), over real stores.

The same tree of transcripts is checked where it lies three ways: on this
machine's disk, served over HTTP by a server the test starts on a loopback port,
and in a bucket of a local S3-compatible server (moto's standalone server, the
test's own process on a loopback port). Every result is compared with what
`--check --json` gives for the local copy, with the store's URL in place of the
local path. OpenCode's databases are checked where they lie only (a store's
listing passes over them), so the stores' comparisons leave them out.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import EXAMPLES, ROOT
from _tricky import write_tricky

from transcript_view.core.check import transcripts_in

fleet = pytest.importorskip("transcript_view.fleet", reason="the fleet extra is not installed")

from _fleet import (  # noqa: E402
    as_local,
    environment,
    fleet_json,
    free_port,
    local_json,
    server,
    two_workers,
    without_opencode,
)
from distributed import Client  # noqa: E402

from transcript_view.fleet.listing import Target, store_of, targets  # noqa: E402
from transcript_view.fleet.run import groups, results  # noqa: E402
from transcript_view.fleet.walk import in_order, matching  # noqa: E402

#: The S3 server's made-up credentials (moto takes any), as the usual environment gives them.
S3_ENV = {
    "AWS_ACCESS_KEY_ID": "fleet-test",
    "AWS_SECRET_ACCESS_KEY": "fleet-test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}
BUCKET = "fleet"
#: Keys in the bucket's `many/` folder.
MANY = 600


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples, and hostile cases: a file that is no transcript, a big sidecar."""
    root = tmp_path_factory.mktemp("fleet") / "tree"
    shutil.copytree(EXAMPLES, root / "examples", ignore=shutil.ignore_patterns("*.py"))
    (root / "examples" / "not-one.jsonl").write_text("hello, world\n", encoding="utf-8")
    # A transcript whose one stored artifact is huge (24 MiB): streamed to the worker's disk
    # and hashed there, never held in memory.
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gen.py"), str(root / "examples" / "huge.jsonl"),
         "--size", "64K", "--markers", "1", "--artifact-size", "24M"],
        check=True, capture_output=True,
    )  # fmt: skip
    return root


@pytest.fixture(scope="module")
def s3(tree: Path) -> Iterator[str]:
    """moto's S3 server on a loopback port, holding the tree in a bucket; the environment
    (credentials, endpoint) set as a user's would be, for this process and the cluster's."""
    port = free_port()
    moto = [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)]
    with server(moto, port), environment(**S3_ENV, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}"):
        import s3fs

        fs = s3fs.S3FileSystem(skip_instance_cache=True)
        fs.mkdir(BUCKET)
        fs.put(str(tree / "examples"), f"{BUCKET}/examples", recursive=True)
        # Keys no file system has: one with a `..` part, and a "directory" object.
        fs.pipe(f"{BUCKET}/hostile/a/../escape.jsonl", b'{"type":"x"}\n')
        fs.pipe(f"{BUCKET}/hostile/folder.jsonl/", b"")
        # A Qwen Code session near the bucket's top: its format's sidecar folder (its
        # runtime's tmp/, four folders up) would be outside the bucket.
        qwen = next((tree / "examples" / "qwen" / "projects").glob("*/chats/*.jsonl"))
        fs.put(str(qwen), f"{BUCKET}/shallow/chats/{qwen.name}")
        # Names that test every rule of a walk's order; a folder of many keys.
        fs.put(str(write_tricky(tree.parent / "tricky")), f"{BUCKET}/tricky", recursive=True)
        fs.pipe({f"{BUCKET}/many/{i:04d}.jsonl": b"{}\n" for i in range(MANY)})
        yield f"s3://{BUCKET}/"


@pytest.fixture(scope="module")
def web(tree: Path) -> Iterator[str]:
    """The tree served over HTTP (the standard library's server) on a loopback port."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tree))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def client(s3: str) -> Iterator[Client]:
    """A real LocalCluster: two worker processes, started after the S3 environment is set."""
    with two_workers() as c:
        yield c


def test_a_local_tree_gives_what_check_json_gives(tree: Path, client: Client) -> None:
    expected = local_json([tree / "examples"])
    got = fleet_json([str(tree / "examples")], client)
    assert got == expected
    assert len(got) >= 10 and {r["format"] for r in got} >= {"reference", "claude-code", "opencode"}
    huge = next(r for r in got if r["transcript"].endswith("huge.jsonl"))
    assert huge["verified"] == 1 and huge["findings"] == []


def test_the_same_tree_over_http_gives_the_same_results(
    tree: Path, web: str, client: Client
) -> None:
    expected = without_opencode(local_json([tree / "examples"]))
    got = [as_local(r, web, tree) for r in fleet_json([web + "examples/"], client)]
    assert got == expected


def test_the_same_tree_in_s3_gives_the_same_results(tree: Path, s3: str, client: Client) -> None:
    expected = without_opencode(local_json([tree / "examples"]))
    got = [as_local(r, s3, tree) for r in fleet_json([s3 + "examples"], client)]
    assert got == expected
    # A Claude Code session's sidecars and subagent: its orphans are the session's, as here.
    claude = [r for r in got if r["format"] == "claude-code"]
    assert [len(r["findings"]) for r in claude] == [
        len(r["findings"]) for r in expected if r["format"] == "claude-code"
    ]


def test_a_glob_names_the_transcripts_it_matches(tree: Path, s3: str, client: Client) -> None:
    got = fleet_json([s3 + "examples/*.jsonl"], client)
    expected = local_json(sorted((tree / "examples").glob("*.jsonl")))
    assert [as_local(r, s3, tree) for r in got] == [r for r in expected if "error" not in r]


def test_an_s3_folder_is_walked_a_page_at_a_time_in_the_local_order(
    tree: Path, s3: str, caplog: pytest.LogCaptureFixture
) -> None:
    import s3fs

    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    local = tree.parent / "tricky"
    expected = [f"{BUCKET}/tricky/{p.relative_to(local).as_posix()}" for p in transcripts_in(local)]
    for page in (1, 2, 3, 1000):  # a decision's keys cut across pages, or in one
        walk = in_order(store_of(fs, page).entries, f"{BUCKET}/tricky/")
        assert [e.key for e in walk] == expected, page
    # A folder of many keys is read a page at a time as the walk goes, never whole.
    caplog.set_level(logging.DEBUG, logger="s3fs")

    def lists() -> int:
        return sum("list_objects_v2" in r.getMessage() for r in caplog.records)

    walk = in_order(store_of(fs, 50).entries, f"{BUCKET}/many/")
    assert next(walk).key == f"{BUCKET}/many/0000.jsonl" and lists() == 1
    assert len(list(walk)) == MANY - 1 and lists() == MANY // 50


def test_a_glob_matches_level_by_level_as_the_listing_streams(
    tree: Path, s3: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Each level of a glob is matched as its listing streams, files and folders alike,
    in the order a glob of the local copy gives (a folder's name with its `/`)."""
    local = tree.parent / "tricky"
    for pattern in ("*/x.jsonl", "proj*", "a*.jsonl", "chats/session-?.json*", "a/sub*/*",
                    "[pt]*/*.jsonl", "nothing-*"):  # fmt: skip
        got = [t.url.removeprefix(f"{s3}tricky/") for t in targets([f"{s3}tricky/{pattern}"])]
        here = [t.url for t in targets([f"{local}/{pattern}"])]
        assert got == [u.removeprefix(f"{local}/") for u in here], pattern
        assert got, pattern
    import s3fs

    caplog.set_level(logging.DEBUG, logger="s3fs")
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    found = matching(store_of(fs, 50).entries, f"{BUCKET}/many/", ["*.jsonl"], lambda _: None)
    assert next(found).key == f"{BUCKET}/many/0000.jsonl"
    assert sum("list_objects_v2" in r.getMessage() for r in caplog.records) == 1


def test_a_glob_over_http_matches_what_a_local_glob_does(tree: Path, web: str) -> None:
    for pattern in ("examples/*.jsonl", "examples/c*", "examples/*/projects"):
        got = [t.url.removeprefix(web) for t in targets([web + pattern])]
        here = [t.url.removeprefix(f"{tree}/") for t in targets([f"{tree}/{pattern}"])]
        assert got == here and got, pattern


def test_hostile_keys_are_each_one_finding_and_the_run_goes_on(s3: str, client: Client) -> None:
    """A key with a `..` part is never laid out (it could reach outside the private
    folder); a "directory" object is none of the transcripts."""
    got = list(results([s3 + "hostile/", s3 + "examples/demo.jsonl"], client))
    errors = {t.url: c.error for t, c in got if c.error is not None}
    assert any(".." in url and "cannot be laid out" in (e or "") for url, e in errors.items())
    assert not any("folder.jsonl" in t.url for t, _ in got)  # a "directory", no transcript
    assert len(got) == 2 and got[-1][1].record is not None
    assert got[-1][1].record["verified"] == 1


def test_an_object_that_cannot_be_read_is_that_transcripts_finding(
    s3: str, client: Client
) -> None:
    got = list(results([s3 + "examples/missing.jsonl", s3 + "examples/demo.jsonl"], client))
    assert got[0][1].error is not None and "no such file" in got[0][1].error
    assert got[1][1].record is not None


def test_a_worker_that_dies_mid_run_changes_no_result(tree: Path, client: Client) -> None:
    """Dask runs a dead worker's tasks again elsewhere: the results are the same."""
    many = tree.parent / "many"
    if not many.exists():
        many.mkdir()
        for i in range(40):
            shutil.copy(tree / "examples" / "demo.jsonl", many / f"d{i:02d}.jsonl")
            shutil.copytree(tree / "examples" / "demo.artifacts", many / f"d{i:02d}.artifacts")
    expected = local_json([many])
    got = []
    killed = False
    for _, checked in results([str(many)], client, window=40, most=1):  # 40 tasks
        got.append(checked.record)
        if not killed:
            worker = next(iter(client.scheduler_info()["workers"]))
            with contextlib.suppress(Exception):
                client.run(os._exit, 1, workers=[worker], wait=False)
            killed = True
    assert got == expected


def test_the_library_api_gives_the_tables_check_json_gives(
    tree: Path, s3: str, client: Client
) -> None:
    import dask

    frames = fleet.check([s3 + "examples"], client)  # `transcript_view.fleet.check`
    findings, transcripts, calls = dask.compute(frames.findings, frames.transcripts, frames.calls)
    expected = without_opencode(local_json([tree / "examples"]))
    checked = transcripts[transcripts["error"].isna()]
    assert sorted(checked["markers"]) == sorted(r["markers"] for r in expected)
    assert len(findings) == sum(len(r["findings"]) for r in expected)
    assert len(calls) > 0 and set(calls["source"]) <= {"recorded", "estimate"}


def test_the_command_line_prints_check_json_and_writes_parquet(
    tree: Path, s3: str, tmp_path: Path
) -> None:
    """`--check --json URL --workers 2 --out DIR`, as a user runs it: the same lines, the
    same exit status, and tables that hold the same numbers (read back with pandas)."""
    import pandas as pd

    out = tmp_path / "results"
    env = {**os.environ, "PYTHONPATH": ""}
    run = subprocess.run(
        [sys.executable, "-m", "transcript_view", "--check", "--json", s3 + "examples",
         "--workers", "2", "--out", str(out)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
    )  # fmt: skip
    local = subprocess.run(
        [sys.executable, "-m", "transcript_view", "--check", "--json", str(tree / "examples")],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert run.returncode == local.returncode == 1, run.stderr
    got = [as_local(json.loads(line), s3, tree) for line in run.stdout.splitlines()]
    expected = without_opencode([json.loads(line) for line in local.stdout.splitlines()])
    assert got == expected
    findings = pd.read_parquet(out / "findings")
    transcripts = pd.read_parquet(out / "transcripts")
    assert len(findings) == sum(len(r["findings"]) for r in expected)
    for r in expected:
        url = s3 + str(Path(r["transcript"]).relative_to(tree))
        row = transcripts[transcripts["transcript"] == url].iloc[0]
        assert (row["markers"], row["verified"], row["matched"], row["lines"]) == (
            r["markers"], r["verified"], r["matched"], r["lines"]
        )
    calls = pd.read_parquet(out / "calls")
    assert set(calls.columns) >= {"transcript", "line", "model", "tokens", "window", "fill"}


def test_credentials_written_into_a_url_are_never_shown(web: str, client: Client) -> None:
    """A user and password in a URL reach the store, never a result, line or table."""
    with_secret = web.replace("http://", "http://reader:s3cret-pw@")
    got = list(results([with_secret + "examples/demo.jsonl", with_secret + "nowhere/"], client))
    assert got[0][1].record is not None and got[0][1].record["verified"] == 1
    for _, checked in got:
        shown = json.dumps([checked.url, checked.record, checked.text, checked.error,
                            checked.calls])  # fmt: skip
        assert "s3cret-pw" not in shown and "reader" not in shown, shown
    assert got[1][1].error is not None and got[1][1].url.startswith("http://127.0.0.1:")


def test_small_transcripts_share_a_task_and_a_big_one_has_its_own() -> None:
    """A task costs about what checking a small transcript does: small ones go together,
    in order, up to a count or a size; a big one, or a URL that named nothing, alone."""
    listed = [Target(f"s3://b/t{i}.jsonl", size=1000) for i in range(5)]
    listed.insert(2, Target("s3://b/big.jsonl", size=9 << 20))
    listed.insert(4, Target("s3://b/gone/", error="s3://b/gone/: no such file or directory"))
    got = [[t.url.removeprefix("s3://b/") for t in g] for g in groups(listed, most=2)]
    assert got == [["t0.jsonl", "t1.jsonl"], ["big.jsonl"], ["t2.jsonl"], ["gone/"],
                   ["t3.jsonl", "t4.jsonl"]]  # fmt: skip


def test_a_session_with_its_subagents_is_one_task_never_cut() -> None:
    listed = [
        Target("s3://b/a.jsonl", size=1000),
        Target("s3://b/s.jsonl", size=9 << 20),  # big: its own task, with its subagents
        *(Target(f"s3://b/s/subagents/agent-{i}.jsonl", size=1000) for i in range(3)),
        Target("s3://b/t.jsonl", size=1000),
        *(Target(f"s3://b/t/subagents/agent-{i}.jsonl", size=1000) for i in range(3)),
        Target("s3://b/u.jsonl", size=1000),
    ]
    got = [[t.url.removeprefix("s3://b/") for t in g] for g in groups(listed, most=2)]
    assert [len(g) for g in got] == [1, 4, 4, 1]
    assert got[1][0] == "s.jsonl" and got[2][0] == "t.jsonl" and got[3] == ["u.jsonl"]


def test_a_url_that_named_nothing_stays_alone_beside_a_session() -> None:
    """A target that is an error never heads a session nor joins one: it is no task, and a
    group of it with others would end the run (`results` takes it alone)."""
    gone = "s3://b/X.jsonl: no such file or directory"
    listed = [
        Target("s3://b/X.jsonl", error=gone),
        Target("s3://b/X/subagents/agent-1.jsonl", size=10),
        Target("s3://b/Y.jsonl", size=10),
        Target("s3://b/Y/", error="s3://b/Y/: no .jsonl files in this directory tree"),
        Target("s3://b/Y/subagents/agent-1.jsonl", size=10),
    ]
    got = [[t.url.removeprefix("s3://b/") for t in g] for g in groups(listed)]
    assert got == [["X.jsonl"], ["X/subagents/agent-1.jsonl", "Y.jsonl"], ["Y/"],
                   ["Y/subagents/agent-1.jsonl"]]  # fmt: skip


def test_a_session_and_its_subagents_are_fetched_once(tmp_path: Path, client: Client) -> None:
    """Every transcript of a Claude Code session reads the whole session folder (its
    orphans are the session's): fetched once for them all, not once a transcript. The
    HTTP server counts what it is asked for."""
    from _sessions import ClaudeSession, numbered

    project = tmp_path / "served" / "projects" / "-proj"
    s = ClaudeSession(project)
    s.user("go")
    for n in range(3):
        s.spill(f"toolu_0{n}", numbered(300))
    s.write()
    for agent in ("a1", "a2", "a3"):
        sub = s.subagent(agent)
        sub.user("sub")
        sub.write()
    asked: dict[str, int] = {}

    class Counting(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            asked[self.path] = asked.get(self.path, 0) + 1
            super().do_GET()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Counting, directory=str(tmp_path / "served"))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/"
            got = [as_local(r, url, tmp_path / "served") for r in fleet_json([url], client)]
        finally:
            server.shutdown()
    assert got == local_json([tmp_path / "served"])
    assert [Path(r["transcript"]).name for r in got] == [
        f"{s.name}.jsonl", "agent-a1.jsonl", "agent-a2.jsonl", "agent-a3.jsonl",
    ]  # fmt: skip
    served = tmp_path / "served"
    files = {path: n for path, n in asked.items() if (served / path.lstrip("/")).is_file()}
    assert len(files) == 4 + 3 and set(files.values()) == {1}, files


def test_a_relative_path_is_checked_and_named_as_check_names_it(
    tree: Path, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers' working folder is not this one: they open the absolute path, the
    results say the path as given (and its sidecar folder likewise), as `--check` does."""
    monkeypatch.chdir(tree)
    expected = local_json([Path("examples")])
    assert expected[0]["transcript"].startswith("examples/")
    assert fleet_json(["examples"], client) == expected


def test_a_sidecar_folder_outside_the_bucket_is_never_read(s3: str, client: Client) -> None:
    """A format's rule that climbs above the store's top (Qwen Code's runtime folder) would
    reach the worker's own disk or another bucket: that transcript is one line instead."""
    ((_, checked),) = list(results([s3 + "shallow/"], client))
    assert checked.record is None and checked.error is not None
    assert "outside" in checked.error and "not checked" in checked.error


def test_a_presigned_urls_signature_is_never_shown(web: str, client: Client) -> None:
    signed = web + "examples/demo.jsonl?X-Amz-Signature=s1gnature-secret"
    got = list(results([signed], client))
    shown = json.dumps([[c.url, c.record, c.text, c.error] for _, c in got])
    assert "s1gnature-secret" not in shown, shown

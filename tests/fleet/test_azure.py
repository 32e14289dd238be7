"""The fleet check over `az://`: Azure Blob Storage as Azurite serves it (Microsoft's own
emulator, from the npm registry), on a loopback port the test starts, read through
adlfs. It is the store that lists as fsspec's other stores do (a folder at a
time, `listing.store_of`), so it holds the walk's order and the results to the
local `--check --json` through that path, with the credentials a user's
environment gives (`AZURE_STORAGE_CONNECTION_STRING`).

`dev.py` installs Azurite under `.venv/azurite/` where npm is on the machine (CI's
is); without Node.js the module is skipped, and says so.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _support import EXAMPLES
from _tricky import write_tricky

from transcript_view.core.check import transcripts_in

pytest.importorskip("transcript_view.fleet", reason="the fleet extra is not installed")
adlfs = pytest.importorskip("adlfs", reason="adlfs (the test extra's) is not installed")

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

from transcript_view.fleet.listing import store_of  # noqa: E402
from transcript_view.fleet.run import results  # noqa: E402
from transcript_view.fleet.walk import in_order  # noqa: E402

#: Azurite's well-known development account (published in its documentation).
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CONTAINER = "fleet"


def _azurite() -> Path | None:
    """Azurite's blob server as `dev.py` installs it, or one on PATH."""
    here = Path(sys.executable).parent.parent / "azurite" / "node_modules" / ".bin" / "azurite-blob"
    found = shutil.which("azurite-blob")
    return here if here.exists() else Path(found) if found else None


@pytest.fixture(scope="module")
def az(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Azurite on a loopback port, holding the examples and the tricky tree in a
    container; the connection string in the environment, as a user's would be. Yields
    the local copy."""
    server_bin = _azurite()
    if server_bin is None or shutil.which("node") is None:
        pytest.skip("Azurite is not installed (dev.py installs it where npm is)")
    root = tmp_path_factory.mktemp("azure")
    local = root / "tree"
    shutil.copytree(EXAMPLES, local / "examples", ignore=shutil.ignore_patterns("*.py"))
    write_tricky(local / "tricky")
    port = free_port()
    azurite = [str(server_bin), "--blobHost", "127.0.0.1", "--blobPort", str(port),
               "--location", str(root / "azurite"), "--silent", "--skipApiVersionCheck",
               "--loose"]  # fmt: skip
    connection = (
        f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
        f"BlobEndpoint=http://127.0.0.1:{port}/{ACCOUNT};"
    )
    with server(azurite, port), environment(AZURE_STORAGE_CONNECTION_STRING=connection):
        fs = adlfs.AzureBlobFileSystem(skip_instance_cache=True)
        fs.mkdir(CONTAINER)
        fs.put(str(local / "examples"), f"{CONTAINER}/examples", recursive=True)
        fs.put(str(local / "tricky"), f"{CONTAINER}/tricky", recursive=True)
        yield local


@pytest.fixture(scope="module")
def client(az: Path) -> Iterator[Client]:
    """A LocalCluster of two worker processes, started once the environment is set."""
    with two_workers() as c:
        yield c


def test_a_container_walks_in_the_local_order(az: Path) -> None:
    fs = adlfs.AzureBlobFileSystem(skip_instance_cache=True)
    expected = [
        f"{CONTAINER}/tricky/{p.relative_to(az / 'tricky').as_posix()}"
        for p in transcripts_in(az / "tricky")
    ]
    assert [e.key for e in in_order(store_of(fs).entries, f"{CONTAINER}/tricky/")] == expected


def test_the_tree_in_azure_gives_what_check_json_gives(az: Path, client: Client) -> None:
    url = f"az://{CONTAINER}/"
    got = [as_local(r, url, az) for r in fleet_json([url + "examples"], client)]
    expected = without_opencode(local_json([az / "examples"]))
    assert got == expected
    assert {r["format"] for r in got} >= {"reference", "claude-code", "codex", "gemini"}


def test_the_account_key_is_never_shown(az: Path, client: Client) -> None:
    """A missing object and a missing container are each one line, without the key."""
    urls = [f"az://{CONTAINER}/examples/demo.jsonl", f"az://{CONTAINER}/nowhere.jsonl",
            "az://no-such-container/x.jsonl"]  # fmt: skip
    got = list(results(urls, client))
    assert got[0][1].record is not None and got[0][1].record["verified"] == 1
    assert [c.error is not None for _, c in got] == [False, True, True]
    shown = json.dumps([[c.url, c.record, c.text, c.error] for _, c in got])
    assert KEY not in shown and KEY[:16] not in shown

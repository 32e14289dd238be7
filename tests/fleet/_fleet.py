"""What the fleet tests share: `--check --json` of a local copy, and the fleet's results
in the same shape, the store's URLs put back as the local copy's paths."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from distributed import Client

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

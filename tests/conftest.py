"""Fixtures only; the facts and helpers tests share live in `_support`, `_runs` and `_pilot`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _runs import Run, write_run
from _screen_apps import make_artifact_dir, make_transcripts_dir
from _support import REFERENCE

from transcript_view.core import parallel
from transcript_view.viewer import background, layouter, workers


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The fleet tests last: their Dask client and fsspec's IO loop leave threads running
    in this process, and a process that runs threads never forks workers
    (`core.parallel.worker_count`), so every test after them would take the one-process
    paths (and those that need a fork would be skipped)."""
    folder = Path(__file__).resolve().parent / "fleet"
    fleet = [item for item in items if folder in item.path.resolve().parents]
    if fleet:
        items[:] = [item for item in items if item not in fleet] + fleet


@pytest.fixture
def run_factory(tmp_path: Path) -> Callable[..., Run]:
    """Write a small run in tmp_path with its marker in a given badge state."""

    def make(state: str = "verified", name: str = "run.jsonl") -> Run:
        return write_run(tmp_path, state, name)

    return make


@pytest.fixture
def reference_dir() -> Path:
    """The reference fixtures (the copy under tests/data/reference; read-only by habit)."""
    return REFERENCE


@pytest.fixture
def artifact_dir(tmp_path: Path) -> Path:
    """An artifact directory of orphans (see `_screen_apps.make_artifact_dir`)."""
    return make_artifact_dir(tmp_path)


@pytest.fixture
def transcripts_dir(tmp_path: Path) -> Path:
    """A directory of transcripts to list (see `_screen_apps.make_transcripts_dir`)."""
    return make_transcripts_dir(tmp_path)


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every size threshold low, so a test-sized transcript takes the big-file paths."""
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(workers, "SERVER_CHECK_FILES", 2)
    monkeypatch.setattr(background, "COUNT_STEP", 7)
    monkeypatch.setattr(layouter, "LAYOUT_CHUNK", 5)
    monkeypatch.setattr(layouter, "SERVER_LAYOUT_BLOCKS", 10)


@pytest.fixture
def server(
    small_thresholds: None, monkeypatch: pytest.MonkeyPatch
) -> Iterator[parallel.PassServer]:
    """A pass server forked now (after the thresholds were lowered: it inherits them)."""
    started = parallel.PassServer.start()
    if started is None:
        pytest.skip("no fork here, or threads already running")
    monkeypatch.setattr(parallel, "_server", started)
    try:
        yield started
    finally:
        started.close()

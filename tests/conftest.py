"""Fixtures only; the facts and helpers tests share live in `_support`, `_runs` and `_pilot`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _runs import Run, write_run
from _screen_apps import make_artifact_dir, make_transcripts_dir
from _support import REFERENCE


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

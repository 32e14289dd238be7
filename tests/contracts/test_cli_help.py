"""What a newcomer types first: `--version` and `--help` (run as a user runs them).

`transcript-view --version` used to answer "PATH required", and `--help` said
neither what the exit codes mean nor that the viewer's keys are behind `?`.
These run `python -m transcript_view` in a subprocess, as a shell would, so the
test sees exactly what a person (or a CI script reading the exit status) sees.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import transcript_view


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "transcript_view", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_version_prints_the_package_version_and_exits_0() -> None:
    out = _cli("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"transcript-view {transcript_view.__version__}"
    assert "PATH" not in out.stderr


@pytest.mark.parametrize("argv", [("--version", "run.jsonl"), ("--check", "--version")])
def test_version_wins_over_other_arguments(argv: tuple[str, ...]) -> None:
    out = _cli(*argv)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("transcript-view ")


def test_help_usage_shows_one_path_for_the_viewer_and_several_for_check() -> None:
    out = _cli("--help")
    assert out.returncode == 0, out.stderr
    usage = out.stdout.split("\n\n", 1)[0]
    assert re.search(r"^usage: transcript-view \[options\] PATH$", usage, re.M), usage
    # The --check line may grow options; it names the mode first and PATH... last.
    assert re.search(r"^\s+transcript-view --check (\[[^]]+\] )*PATH\.\.\.$", usage, re.M), usage


def test_help_epilog_gives_every_exit_code_and_points_to_the_keys() -> None:
    text = _cli("--help").stdout
    epilog = text[text.index("exit status:") :]
    codes = dict(re.findall(r"^\s+([0-9])\s+(.+)$", epilog, re.M))
    assert set(codes) == {"0", "1", "2"}, epilog
    assert "no error" in codes["0"]
    assert "error" in codes["1"] and "--strict" in codes["1"] and "warning" in codes["1"]
    assert "cannot be read" in codes["2"] and "not a transcript" in codes["2"]
    assert re.search(r"press \? for every key", epilog), epilog


def test_help_lists_every_option() -> None:
    text = _cli("--help").stdout
    for option in ("--check", "--json", "--strict", "--context", "--window", "--version", "--help"):
        assert re.search(rf"^\s+(-h, )?{option}\b", text, re.M), option


def test_a_usage_error_shows_both_usage_lines() -> None:
    out = _cli()
    assert out.returncode == 2
    assert re.search(r"^usage: transcript-view \[options\] PATH$", out.stderr, re.M)
    assert re.search(r"^\s+transcript-view --check .*PATH\.\.\.$", out.stderr, re.M)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("--workers", "0", "--check", "x.jsonl"), "must be above 0: '0'"),
        (("--workers", "two", "--check", "x.jsonl"), "not a number of worker processes: 'two'"),
        (("--context", "--window", "lots", "x.jsonl"), "not a number of tokens: 'lots'"),
        (("--workers", "2", "x.jsonl"), "--scheduler, --workers and --out go with --check"),
        (("--check", "--scheduler", "tcp://h:8786", "--workers", "2", "x.jsonl"),
         "--scheduler or --workers"),
        (("--check", "--out", "results", "x.jsonl"), "--out goes with --scheduler or --workers"),
    ],
)  # fmt: skip
def test_a_fleet_option_out_of_place_is_a_usage_error(argv: tuple[str, ...], says: str) -> None:
    """What a fleet check's options take, and what they go with, is said before anything
    is read or a cluster started (exit 2, a usage error)."""
    result = _cli(*argv)
    assert result.returncode == 2
    assert says in result.stderr

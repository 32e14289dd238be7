"""The `transcript-view` command line.

`--check` is imported and run without touching Textual, so a CI job that only
verifies transcripts pays for neither the import nor a terminal.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="transcript-view",
        description=(
            "Show what an LLM agent's model really saw, and where the rest of each "
            "oversized tool result went. With --check, verify headlessly."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a transcript (.jsonl) or a directory")
    p.add_argument("--check", action="store_true", help="verify, print findings, exit 0/1/2")
    p.add_argument("--json", action="store_true", help="with --check: one JSON object per PATH")
    p.add_argument(
        "--strict", action="store_true", help="with --check: warnings also make the exit status 1"
    )
    return p


def _usage_error(message: str) -> int:
    print(f"transcript-view: {message}", file=sys.stderr)
    return 2


def _describe(path: Path) -> str | None:
    """Why a path cannot be opened as a transcript file, or None when it can."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return f"{path}: no such file or directory"
    except PermissionError:
        return f"{path}: permission denied"
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        from transcript_view.core.transcript import describe_mode

        return f"{path}: {describe_mode(st.st_mode)}, not a regular file"
    if not os.access(path, os.R_OK):
        return f"{path}: permission denied"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point for `transcript-view` and `python -m viewer`."""
    args = _parser().parse_args(argv)
    paths = [Path(p) for p in args.paths]
    if (args.json or args.strict) and not args.check:
        return _usage_error("--json and --strict go with --check")
    if args.check:
        from transcript_view.core.check import run_check

        return run_check(paths, as_json=args.json, strict=args.strict)
    if len(paths) != 1:
        return _usage_error("the viewer opens one PATH (use --check for several)")
    path = paths[0]
    problem = _describe(path)
    if problem is not None:
        return _usage_error(problem)
    if not path.is_dir():
        from transcript_view.core.transcript import Transcript, TranscriptError

        try:
            with Transcript(path) as t:
                first = t.read_at(0, 1)
        except TranscriptError as exc:
            return _usage_error(str(exc))
        if first and first not in (b"{", b" ", b"\t", b"\r", b"\n"):
            return _usage_error(f"{path}: not a transcript (it does not start with a JSON object)")
    from transcript_view.viewer.app import run_app

    return run_app(path)

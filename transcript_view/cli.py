"""The `transcript-view` command line.

`--check` is imported and run without touching Textual, so a CI job that only
verifies transcripts pays for neither the import nor a terminal.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import transcript_view

if TYPE_CHECKING:
    from transcript_view.core.formats.detect import Format

#: The ways to call it: the viewer opens one PATH, `--check` takes several, and
#: `--claude`, `--codex`, `--gemini`, `--qwen`, `--opencode`, `--copilot`: that agent's sessions.
#: One line per mode, so a new mode or option is one more line here.
USAGE = """\
%(prog)s [options] PATH
       %(prog)s --check [--json] [--strict] [--format F] PATH...
       %(prog)s --context [--json] [--window N] [--format F] FILE
       %(prog)s [--check] (--sessions | --claude | --codex | --gemini | --qwen |
                                 --opencode | --copilot)"""

#: Laid out by hand: the help formatter keeps the epilog's columns, so it wraps nothing.
DESCRIPTION = """\
Show what an LLM agent's model really saw, and where the rest of each
oversized tool result went. With --check, verify headlessly (for scripts and CI);
with --context, list every model call and how full its context was."""

#: After the options: what a script needs (exit codes) and what a person needs (keys).
EPILOG = """\
exit status:
  0  clean: --check found no error, --context listed the calls
     (the viewer: it was closed normally)
  1  --check found an error (with --strict: an error or a warning)
  2  a usage error, or a PATH that cannot be read or is not a transcript

In the viewer, press ? for every key (ctrl+p runs any of them by name)."""


class _Version(argparse.Action):
    """`--version`: argparse's own, with the version read only when it is asked for."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        sys.stdout.write(f"{parser.prog} {transcript_view.__version__}\n")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    """The command line: the viewer's PATH, `--check` and its options, `--version`.

    Options are grouped by the mode they belong to, so `--help` reads as the two
    usage lines do; a new option goes into its mode's group.
    """
    p = argparse.ArgumentParser(
        prog="transcript-view",
        usage=USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help=(
            "a transcript (an LLM::Agent transcript; a Claude Code, Qwen Code, Gemini CLI, "
            "OpenCode or Copilot CLI session, or a Codex rollout), a directory of them, or "
            "OpenCode's database (opencode.db; opencode.db/<session id> for one); --check "
            "takes several"
        ),
    )
    p.add_argument(
        "--version", action=_Version, nargs=0, help="show program's version number and exit"
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="read PATH as this format instead of telling it from the file's first lines",
    )
    agents = p.add_argument_group("an agent's own sessions folder, instead of PATH")
    where = agents.add_mutually_exclusive_group()
    where.add_argument(
        "--sessions",
        action="store_true",
        help="every agent's found on this machine, at the default folders below",
    )
    where.add_argument(
        "--claude",
        action="store_true",
        help="Claude Code's: $CLAUDE_CONFIG_DIR/projects, or ~/.claude/projects",
    )
    where.add_argument(
        "--codex", action="store_true", help="Codex's: $CODEX_HOME/sessions, or ~/.codex/sessions"
    )
    where.add_argument(
        "--gemini",
        action="store_true",
        help="Gemini CLI's: $GEMINI_CLI_HOME/.gemini/tmp, or ~/.gemini/tmp",
    )
    where.add_argument(
        "--qwen",
        action="store_true",
        help="Qwen Code's: $QWEN_RUNTIME_DIR/projects, $QWEN_HOME/projects or ~/.qwen/projects",
    )
    where.add_argument(
        "--copilot",
        action="store_true",
        help="Copilot CLI's: $COPILOT_HOME/session-state, or ~/.copilot/session-state",
    )
    where.add_argument(
        "--opencode",
        action="store_true",
        help=(
            "OpenCode's: its database $OPENCODE_DB, or $XDG_DATA_HOME/opencode, or "
            "~/.local/share/opencode (opencode.db and the older storage/)"
        ),
    )
    check = p.add_argument_group("headless verification (for scripts and CI)")
    check.add_argument(
        "--check", action="store_true", help="verify, print findings, exit 0/1/2 (no terminal UI)"
    )
    check.add_argument(
        "--json",
        action="store_true",
        help="with --check: one JSON object per PATH; with --context: one per call, then a summary",
    )
    check.add_argument(
        "--strict", action="store_true", help="with --check: warnings also make the exit status 1"
    )
    fleet = p.add_argument_group(
        "a fleet, on Dask (--check of URLs: s3://, gs://, az://, http(s)://, file://, paths, "
        "globs; needs the fleet extra)"
    )
    fleet.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --check: one task per transcript on the Dask cluster at ADDRESS",
    )
    fleet.add_argument(
        "--workers",
        type=_above_zero("worker processes"),
        metavar="N",
        help="with --check: one task per transcript on a LocalCluster of N worker processes",
    )
    fleet.add_argument(
        "--out",
        metavar="DIR",
        help="with --check on a cluster: the results as Parquet tables in DIR (findings, "
        "transcripts, calls)",
    )
    context = p.add_argument_group("model calls (headless)")
    context.add_argument(
        "--context",
        action="store_true",
        help=(
            "list every model call of FILE: the context's size (recorded, or an estimate "
            "said so), its window and how full it was, compactions; exit 0/2"
        ),
    )
    context.add_argument(
        "--window",
        type=_above_zero("tokens"),
        metavar="N",
        help="with --context: the window, in tokens, of calls whose file records none "
        "(default: the model's, from a documented table)",
    )
    return p


def _above_zero(unit: str) -> Callable[[str], int]:
    """An option's parser: a whole number of `unit` above 0 (`200000`, `200_000` or
    `200,000`), for `--window` (tokens) and `--workers` (processes)."""

    def parse(text: str) -> int:
        try:
            n = int(text.replace(",", "").replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of {unit}: {text!r}") from None
        if n <= 0:
            raise argparse.ArgumentTypeError(f"must be above 0: {text!r}")
        return n

    return parse


#: `--format` values (the core's `Format` names, spelled out so `--help` needs no import).
FORMATS = ("reference", "claude-code", "codex", "qwen", "gemini")


def _format(name: str | None) -> Format | None:
    if name is None:
        return None
    from transcript_view.core.formats.detect import Format

    return Format(name)


def _usage_error(message: str) -> int:
    print(f"transcript-view: {message}", file=sys.stderr)
    return 2


def _describe(path: Path) -> str | None:
    """Why a path cannot be opened as a transcript file, or None when it can."""
    from transcript_view.core.opencode_store import address

    if not os.path.lexists(path) and address(path) is not None:
        return None  # a session in OpenCode's database (`<database>/<id>`)
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


def _context(args: argparse.Namespace, paths: list[Path], agent: str | None) -> int:
    """`--context FILE`: one transcript's model calls (`core.context`)."""
    if args.check or args.strict or agent is not None:
        return _usage_error(
            "--context takes one FILE (not --check, --strict or an agent's folder)"
        )
    if len(paths) != 1:
        return _usage_error("--context takes one FILE")
    path = paths[0]
    problem = _describe(path)
    if problem is None and path.is_dir():
        problem = f"{path}: a directory; --context takes one transcript file"
    if problem is not None:
        return _usage_error(problem)
    from transcript_view.core.context import run_context

    return run_context(path, as_json=args.json, window=args.window, format=_format(args.format))


def _fleet(args: argparse.Namespace, forced: Format | None) -> int:
    """`--check URL... --scheduler ADDRESS | --workers N`: `transcript_view.fleet`."""
    try:
        from transcript_view.fleet.cli import run_fleet
    except ImportError as exc:
        return _usage_error(str(exc))
    return run_fleet(
        args.paths,
        as_json=args.json,
        strict=args.strict,
        fmt=forced,
        scheduler=args.scheduler,
        workers=args.workers,
        out_dir=Path(args.out) if args.out is not None else None,
    )


def _every_agent(args: argparse.Namespace, paths: list[Path]) -> int:
    """`--sessions`: every agent's sessions at their default roots, in the viewer's listing
    or, with `--check`, every transcript under those roots checked (a root that cannot be
    read: one line)."""
    if paths or args.context:
        return _usage_error("--sessions takes no PATH (and not --context)")
    if args.window is not None or ((args.json or args.strict) and not args.check):
        return _usage_error("--json and --strict go with --check; --window with --context")
    if not args.check:
        from transcript_view.viewer.app import run_app

        return run_app(None, _format(args.format), every_agent=True)
    from transcript_view.core.check import run_check
    from transcript_view.core.formats.sessions import all_sessions

    found = all_sessions()
    for line in found.unreadable:
        print(f"transcript-view: {line}", file=sys.stderr)
    if not found.sessions:
        looked = ", ".join(str(root) for _, root in [*found.roots, *found.absent])
        return _usage_error(f"no agent's sessions on this machine (looked in {looked})")
    # Each root as `--check --claude` and the others check theirs: subagents' files too.
    # OpenCode's sessions by name: its data folder holds worktree snapshots, not to be walked.
    from transcript_view.core.formats.detect import Format

    roots = [root for fmt, root in found.roots if fmt is not Format.OPENCODE]
    roots += sorted(s.path for s in found.sessions if s.format is Format.OPENCODE)
    return run_check(roots, as_json=args.json, strict=args.strict, format=_format(args.format))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point for `transcript-view` and `python -m viewer`."""
    parser = _parser()
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.paths]
    flags = {
        "claude": "claude-code",
        "codex": "codex",
        "gemini": "gemini",
        "qwen": "qwen",
        "opencode": "opencode",
        "copilot": "copilot",
    }
    flag = next((name for name in flags if getattr(args, name)), None)
    agent = flags[flag] if flag is not None else None
    if args.sessions:
        return _every_agent(args, paths)
    if agent is not None and not args.context:
        if paths:
            return _usage_error(f"--{flag} takes no PATH")
        from transcript_view.core.formats.detect import Format
        from transcript_view.core.formats.sessions import default_root

        root = default_root(Format(agent))
        if agent == "opencode" and root.exists():
            if args.check:  # its sessions by name (`_every_agent`)
                from transcript_view.core.formats.sessions import opencode_sessions

                found, problems = opencode_sessions(root)
                for line in problems:
                    print(f"transcript-view: {line}", file=sys.stderr)
                if not found:
                    return _usage_error(f"{root}: no OpenCode sessions there")
                paths = sorted(s.path for s in found)
            else:
                paths = [root]
        elif not root.is_dir():
            return _usage_error(f"{root}: no such directory (no sessions there yet?)")
        else:
            paths = [root]
    if not paths:
        parser.print_usage(sys.stderr)
        return _usage_error("a PATH is required (or --sessions, or one agent's: --claude …)")
    if args.context:
        return _context(args, paths, agent)
    if args.window is not None:
        return _usage_error("--window goes with --context")
    if (args.json or args.strict) and not args.check:
        return _usage_error("--json and --strict go with --check (--json also with --context)")
    forced = _format(args.format)
    on_cluster = args.scheduler is not None or args.workers is not None
    if (on_cluster or args.out is not None) and not args.check:
        return _usage_error("--scheduler, --workers and --out go with --check")
    if args.scheduler is not None and args.workers is not None:
        return _usage_error("--scheduler or --workers: a cluster of its own, or a local one")
    if args.out is not None and not on_cluster:
        return _usage_error("--out goes with --scheduler or --workers (a fleet check)")
    if on_cluster:
        return _fleet(args, forced)
    if args.check:
        from transcript_view.core.check import run_check

        return run_check(paths, as_json=args.json, strict=args.strict, format=forced)
    if len(paths) != 1:
        return _usage_error("the viewer opens one PATH (use --check for several)")
    path = paths[0]
    problem = _describe(path)
    if problem is not None:
        return _usage_error(problem)
    from transcript_view.core.opencode_store import StoreError, has_session, is_database_file

    if is_database_file(path):  # OpenCode's database: the list of its sessions
        try:
            has_session(path, "")  # says why, if it is no OpenCode database that can be read
        except StoreError as exc:
            return _usage_error(str(exc))
    elif not path.is_dir() and forced is None:
        from transcript_view.core.formats.detect import detect, expected_message
        from transcript_view.core.transcript import TranscriptError

        try:
            detection = detect(path)
        except TranscriptError as exc:
            return _usage_error(str(exc))
        if detection.format is None:
            return _usage_error(expected_message(path, detection))
    from transcript_view.viewer.app import run_app

    return run_app(path, forced)

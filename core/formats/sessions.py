"""Finding an agent's sessions on disk: Claude Code's projects folder, Codex's sessions tree.

`transcript-view ~/.claude/projects` (or one project folder, or `--claude`)
should list sessions — newest first, with when, where and the first prompt —
not folders named after encoded paths and uuids. This module recognises such a
tree and lists its main session files with what their first lines say; the
counts come from verifying each one (`core.report.verify`), which a listing
does in the background. Only names are listed and only the first bytes of
each session read; nothing is written, and symlinks are not followed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transcript_view.core.compressed import SUFFIX, CompressedError, is_zstd, read_head
from transcript_view.core.documents import is_chat_document, read_lines
from transcript_view.core.formats.claude_code import claude_prompt
from transcript_view.core.formats.copilot import copilot_prompt
from transcript_view.core.formats.detect import Format, detect
from transcript_view.core.formats.gemini import gemini_prompt
from transcript_view.core.formats.qwen import CWD_RE, qwen_prompt
from transcript_view.core.opencode_store import (
    SessionRow,
    StoreError,
    data_dir,
    data_sessions,
    is_database_file,
    is_database_name,
    list_database,
)
from transcript_view.core.transcript import TranscriptError, first_json_string, open_readonly

#: How much of a session is read for its first prompt and start time.
HEAD_BYTES = 256 << 10
#: A timestamp as both agents write it (anything else is not shown as a start time).
_ISO = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?$")
#: A Codex rollout's file name: `rollout-<YYYY-MM-DDThh-mm-ss>-<uuid>.jsonl`, or the same
#: with `.zst` after it once Codex has compressed it (a week idle, since 0.137).
ROLLOUT_RE = re.compile(r"^rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-.+\.jsonl(?:\.zst)?$")


def default_root(fmt: Format, env: Mapping[str, str] | None = None) -> Path:
    """Where an agent keeps its sessions: `$CLAUDE_CONFIG_DIR` or `~/.claude`, `projects/`;
    `$CODEX_HOME` or `~/.codex`, `sessions/`; `$QWEN_RUNTIME_DIR`, `$QWEN_HOME` or
    `~/.qwen`, `projects/`; `$GEMINI_CLI_HOME/.gemini` or `~/.gemini`, `tmp/`."""
    env = os.environ if env is None else env
    if fmt is Format.CLAUDE_CODE:
        base = env.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
        return Path(base) / "projects"
    if fmt is Format.CODEX:
        base = env.get("CODEX_HOME") or str(Path.home() / ".codex")
        return Path(base) / "sessions"
    if fmt is Format.QWEN:
        # `Storage`'s runtime folder (a `advanced.runtimeOutputDir` setting is not read).
        base = env.get("QWEN_RUNTIME_DIR") or env.get("QWEN_HOME") or str(Path.home() / ".qwen")
        return Path(base) / "projects"
    if fmt is Format.GEMINI:
        # `homedir()` of Gemini CLI's `utils/paths.ts`: `$GEMINI_CLI_HOME` stands for the home.
        home = env.get("GEMINI_CLI_HOME") or str(Path.home())
        return Path(home) / ".gemini" / "tmp"
    if fmt is Format.COPILOT:
        base = env.get("COPILOT_HOME") or str(Path.home() / ".copilot")
        return Path(base) / "session-state"
    if fmt is Format.OPENCODE:
        # Its data folder; `$OPENCODE_DB` moves only the database (used as the root).
        named = env.get("OPENCODE_DB")
        if named and os.path.isabs(named):
            return Path(named)
        return data_dir(env)
    raise ValueError(f"{fmt.value} keeps no sessions folder")


@dataclass(frozen=True, slots=True)
class SessionFile:
    """One session of a listing: where it is and what its first lines say."""

    path: Path
    format: Format
    project: str
    """The project folder's name (Claude Code: the encoded cwd) or the day (Codex)."""
    size: int
    mtime: float
    started: str | None
    """The first timestamp in the file, as written."""
    first_prompt: str | None


def _jsonl(directory: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            entries = list(it)
    except OSError:
        return
    for e in entries:
        if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False):
            yield e


def _rollout_entries(directory: Path) -> Iterator[os.DirEntry[str]]:
    """Rollout files in one folder: `*.jsonl`, and `*.jsonl.zst` where no plain one is.

    Codex's own rule (`RolloutFile::from_path`): while both exist (a moment,
    when it compresses or restores one), the plain file is the rollout.
    """
    try:
        with os.scandir(directory) as it:
            entries = [e for e in it if ROLLOUT_RE.match(e.name)]
    except OSError:
        return
    names = {e.name for e in entries}
    for e in entries:
        if e.name.endswith(SUFFIX) and e.name[: -len(SUFFIX)] in names:
            continue
        if e.is_file(follow_symlinks=False):
            yield e


def _dirs(directory: Path) -> list[Path]:
    try:
        with os.scandir(directory) as it:
            return sorted(
                Path(e.path)
                for e in it
                if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
            )
    except OSError:
        return []


def _is_claude(path: Path) -> bool:
    try:
        return detect(path).format is Format.CLAUDE_CODE
    except TranscriptError:
        return False


def tree_format(directory: Path) -> Format | None:
    """Whether `directory` is an agent's sessions tree, and whose.

    An agent's home (`~/.claude` with `projects/`, `~/.codex` with
    `sessions/`), a Claude Code projects folder (folders of session files) or
    one project folder (session files), a Codex sessions tree or one of its
    year, month or day folders, a Qwen Code runtime folder (`~/.qwen`) or a Gemini CLI
    one (`~/.gemini`), their folder of projects, one project or its `chats/`. Decided from
    names and one session's first
    lines: a folder of reference transcripts is none of these.
    """
    if _is_opencode_data(directory):
        return Format.OPENCODE
    if _copilot_root(directory) is not None:
        return Format.COPILOT
    chats = _chats_format(directory)
    if chats is not None:
        return chats
    if (directory / "projects").is_dir() and _claude_folder(directory / "projects"):
        return Format.CLAUDE_CODE
    if (directory / "sessions").is_dir() and next(_codex_files(directory / "sessions", 1), None):
        return Format.CODEX
    if next(_codex_files(directory, 1), None) is not None:
        return Format.CODEX
    return Format.CLAUDE_CODE if _claude_folder(directory) else None


#: The agents whose projects keep their sessions in a `chats/` folder each.
CHATS_FORMATS = (Format.QWEN, Format.GEMINI)


def _format_of(entry: os.DirEntry[str]) -> Format | None:
    try:
        return detect(Path(entry.path)).format
    except TranscriptError:
        return None


def _chats_format(directory: Path) -> Format | None:
    """Whose tree of project folders with `chats/` this is, if Qwen Code's or Gemini CLI's:
    a runtime folder (`~/.qwen`, with `projects/`; `~/.gemini`, with `tmp/`), the folder of
    projects, one project, or its `chats/`, decided by a session's first lines."""
    for top in (directory / "projects", directory / "tmp", directory):
        for sub in _dirs(top)[:20]:
            first = next(_jsonl(sub / "chats"), None)
            if first is not None:
                fmt = _format_of(first)
                return fmt if fmt in CHATS_FORMATS else None
    chats = directory if directory.name == "chats" else directory / "chats"
    first = next(_jsonl(chats), None)
    fmt = _format_of(first) if first is not None else None
    return fmt if fmt in CHATS_FORMATS else None


def _chat_files(root: Path, fmt: Format) -> Iterator[tuple[Path, str]]:
    """A tree's sessions, each with its project folder's name: Qwen Code's
    `<project>/chats/*.jsonl` and archived `chats/archive/*.jsonl`; Gemini CLI's
    `<project>/chats/session-*.jsonl` (its subagents are in folders below, reached from
    their session). `root` may be the folder of projects, one project, or its chats."""
    if root.name == "chats":
        projects = [root.parent]
    elif (root / "chats").is_dir():
        projects = [root]
    else:
        projects = _dirs(root)
    for project in projects:
        folders = [(project / "chats", project.name)]
        if fmt is Format.QWEN:
            folders.append((project / "chats" / "archive", f"{project.name} (archived)"))
        for folder, label in folders:
            entries = list(_jsonl(folder))
            for e in entries:
                if fmt is Format.GEMINI and not e.name.startswith("session-"):
                    continue
                yield Path(e.path), label
            if fmt is Format.GEMINI:  # older chats, one JSON document (`core.documents`)
                for path in older_chats(folder, {e.name for e in entries}):
                    yield path, label


def older_chats(folder: Path, jsonl_names: set[str]) -> Iterator[Path]:
    """Gemini CLI's older chats in a `chats/` folder, `session-*.json` (one JSON document
    each), but for one a `.jsonl` of the same name stands for (Gemini CLI converts a chat
    when it is resumed: the lines are the session then)."""
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return
    for e in entries:
        if (
            e.name.startswith("session-")
            and e.name.endswith(".json")
            and e.name + "l" not in jsonl_names
            and e.is_file(follow_symlinks=False)
        ):
            yield Path(e.path)


def _claude_folder(directory: Path) -> bool:
    """Session files here, or in the first project folders below: Claude Code's?"""
    own = next(_jsonl(directory), None)
    if own is not None:
        return _is_claude(Path(own.path))
    for sub in _dirs(directory)[:20]:
        first = next(_jsonl(sub), None)
        if first is not None:
            return _is_claude(Path(first.path))
    return False


def _codex_files(directory: Path, limit: int | None = None) -> Iterator[tuple[Path, str]]:
    """Rollout files under a sessions tree (or a year, month or day folder), newest day first."""
    found = 0
    stack = [directory]
    while stack:
        here = stack.pop()
        for e in sorted(_rollout_entries(here), key=lambda e: e.name, reverse=True):
            yield (
                Path(e.path),
                here.relative_to(directory).as_posix() if here != directory else "",
            )
            found += 1
            if limit is not None and found >= limit:
                return
        subs = [d for d in _dirs(here) if d.name.isdigit()]
        stack.extend(sorted(subs))  # popped from the end: the newest first


#: The file each Copilot CLI session folder holds its events in.
EVENTS = "events.jsonl"


def _copilot_root(directory: Path) -> Path | None:
    """The folder of Copilot CLI session folders a folder is or holds (`~/.copilot`, its
    `session-state/`, or one session's folder), decided by a session's first lines."""
    for root in (directory / "session-state", directory):
        for sub in _dirs(root)[:20]:
            events = sub / EVENTS
            if events.is_file() and _detected(events) is Format.COPILOT:
                return root
    events = directory / EVENTS
    if events.is_file() and _detected(events) is Format.COPILOT:
        return directory
    return None


def _detected(path: Path) -> Format | None:
    try:
        return detect(path).format
    except TranscriptError:
        return None


def _copilot_files(root: Path) -> Iterator[tuple[Path, str]]:
    """Each session's `events.jsonl`, with its project: the `cwd` its `session.start` names
    (else the session folder's name). `root` may be one session's folder."""
    folders = [root] if (root / EVENTS).is_file() else _dirs(root)
    for folder in folders:
        events = folder / EVENTS
        if events.is_file() and not events.is_symlink():
            cwd = first_json_string(events, CWD_RE, HEAD_BYTES)
            yield events, (Path(cwd).name if cwd else folder.name)



def _is_opencode_data(directory: Path) -> bool:
    """Whether a folder is OpenCode's data folder: a database of its name, or its older
    storage tree of sessions."""
    try:
        with os.scandir(directory) as it:
            if any(is_database_name(e.name) and e.is_file(follow_symlinks=False) for e in it):
                return True
    except OSError:
        return False
    return (directory / "storage" / "session").is_dir()


def opencode_sessions(where: Path) -> tuple[list[SessionFile], list[str]]:
    """OpenCode's sessions in its data folder or in one database file, newest first; with one
    line for each database that cannot be read."""
    problems: list[str] = []
    if is_database_file(where):
        try:
            rows = list_database(where)
        except StoreError as exc:
            rows, problems = [], [str(exc)]
    else:
        rows, unread = data_sessions(where)
        problems = [why for _, why in unread]
    return [_opencode_row(row) for row in rows], problems


def _opencode_row(row: SessionRow) -> SessionFile:
    import datetime as dt

    started = None
    if row.created is not None:
        with contextlib.suppress(OverflowError, OSError, ValueError):
            started = (
                dt.datetime.fromtimestamp(row.created / 1000, dt.UTC)
                .isoformat(timespec="milliseconds")
                .replace("+00:00", "Z")
            )
    project = Path(row.directory).name if row.directory else ""
    if row.parent:
        project += f" (subagent of {row.parent})"
    prompt = row.first_prompt or row.title
    mtime = (row.updated or row.created or 0) / 1000
    return SessionFile(row.path, Format.OPENCODE, project, row.size, mtime, started, prompt)


def _session_root(directory: Path, fmt: Format) -> Path:
    if fmt is Format.CLAUDE_CODE and (directory / "projects").is_dir():
        return directory / "projects"
    if fmt is Format.CODEX and (directory / "sessions").is_dir():
        return directory / "sessions"
    if fmt is Format.QWEN and (directory / "projects").is_dir():
        return directory / "projects"
    if fmt is Format.GEMINI and (directory / "tmp").is_dir():
        return directory / "tmp"
    return directory


def list_sessions(directory: Path, fmt: Format) -> list[SessionFile]:
    """The main session files of a tree, newest first (subagent files are reached from them)."""
    root = _session_root(directory, fmt)
    out: list[SessionFile] = []
    if fmt is Format.OPENCODE:
        out = opencode_sessions(directory)[0]
    elif fmt is Format.COPILOT:
        root = _copilot_root(directory) or directory
        out = [_describe(path, fmt, project) for path, project in _copilot_files(root)]
    elif fmt is Format.CODEX:
        for path, day in _codex_files(root):
            out.append(_describe(path, fmt, day))
    elif fmt in CHATS_FORMATS:
        for path, project in _chat_files(root, fmt):
            out.append(_describe(path, fmt, project))
    else:
        own = list(_jsonl(root))
        folders = [root] if own else _dirs(root)
        for folder in folders:
            for e in _jsonl(folder):
                if e.name.startswith("agent-"):
                    continue  # a subagent of the old (<= 2.0) layout: reached from its Task
                out.append(_describe(Path(e.path), fmt, folder.name))
    out.sort(key=lambda s: (s.mtime, str(s.path)), reverse=True)
    return out


def _describe(path: Path, fmt: Format, project: str) -> SessionFile:
    try:
        st = path.stat()
        size, mtime = st.st_size, st.st_mtime
    except OSError:
        size, mtime = 0, 0.0
    started, prompt = _head_facts(path, fmt)
    return SessionFile(path, fmt, project, size, mtime, started, prompt)


def _head_facts(path: Path, fmt: Format) -> tuple[str | None, str | None]:
    """The first timestamp and the first prompt, from the first `HEAD_BYTES` of a session."""
    try:
        fd = open_readonly(path)
    except (OSError, TranscriptError):
        return None, None
    try:
        head = os.pread(fd, HEAD_BYTES, 0)
        if is_zstd(head):  # a compressed rollout: its first bytes decompressed
            head = read_head(fd, HEAD_BYTES)[0]
        elif is_chat_document(head):  # an older Gemini CLI chat: the lines it reads as
            head = read_lines(fd)[0][:HEAD_BYTES]
    except (OSError, CompressedError):
        return None, None
    finally:
        os.close(fd)
    started: str | None = None
    for raw in head.split(b"\n")[:-1] or [head]:
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        stamp = obj.get("timestamp")
        if started is None and isinstance(stamp, str) and _ISO.match(stamp):
            started = stamp[:32]
        prompt = _prompt(obj, fmt)
        if prompt:
            return started, prompt
    return started, None


def _prompt(obj: dict[str, Any], fmt: Format) -> str | None:
    if fmt is Format.QWEN:
        return qwen_prompt(obj)
    if fmt is Format.COPILOT:
        return copilot_prompt(obj)
    if fmt is Format.GEMINI:
        return gemini_prompt(obj)
    if fmt is Format.CODEX:
        payload = obj.get("payload")
        if (
            obj.get("type") == "event_msg"
            and isinstance(payload, dict)
            and payload.get("type") == "user_message"
            and isinstance(payload.get("message"), str)
        ):
            return str(payload["message"])[:200]
        return None
    return claude_prompt(obj)


#: The agents `--sessions` looks for, each at its default root (`default_root`).
AGENTS = (
    Format.CLAUDE_CODE,
    Format.CODEX,
    Format.GEMINI,
    Format.QWEN,
    Format.OPENCODE,
    Format.COPILOT,
)


@dataclass(frozen=True, slots=True)
class AllSessions:
    """Every agent's sessions on this machine (`all_sessions`), newest first."""

    sessions: list[SessionFile]
    roots: list[tuple[Format, Path]]
    """Each agent's root that is there, in `AGENTS` order."""
    unreadable: list[str]
    """One line for each root that is there but cannot be read."""
    absent: list[tuple[Format, Path]]
    """Each agent's root that is not there (skipped quietly; said when nothing is found)."""


def all_sessions(env: Mapping[str, str] | None = None) -> AllSessions:
    """The sessions of every agent at its default root (each overridable by its variable):
    an absent root is skipped, one that cannot be read is one line; only names and the
    first bytes of each session are read, and nothing is written."""
    sessions: list[SessionFile] = []
    roots: list[tuple[Format, Path]] = []
    unreadable: list[str] = []
    absent: list[tuple[Format, Path]] = []
    for fmt in AGENTS:
        root = default_root(fmt, env)
        if fmt is Format.OPENCODE and root.is_file():  # `$OPENCODE_DB`, a database
            roots.append((fmt, root))
            found, problems = opencode_sessions(root)
            sessions.extend(found)
            unreadable.extend(problems)
            continue
        try:
            with os.scandir(root):
                pass
        except FileNotFoundError:
            absent.append((fmt, root))
            continue
        except OSError as exc:
            why = exc.strerror or str(exc)
            unreadable.append(f"{root}: {fmt.agent}'s sessions cannot be read ({why})")
            continue
        roots.append((fmt, root))
        if fmt is Format.OPENCODE:
            found, problems = opencode_sessions(root)
            sessions.extend(found)
            unreadable.extend(problems)
            continue
        sessions.extend(list_sessions(root, fmt))
    sessions.sort(key=lambda s: (s.mtime, str(s.path)), reverse=True)
    return AllSessions(sessions, roots, unreadable, absent)

"""Synthetic OpenCode sessions in a real SQLite database, from OpenCode's exact strings and schema.

Never a real session. The templates are OpenCode's, written out here as fixtures
(not the code under test): `truncate` is `Truncate.output`
(`packages/opencode/src/tool/truncation.ts` at the v1.2.10 release, 296250f1, the same
strings and limits in the 1.18.33 build; OTHER_AGENTS.md, "OpenCode"), `SCHEMA` the
1.18.33 baseline's `project`, `session`, `message` and `part` tables and indexes,
`ascending` `Identifier.ascending` (`src/id/id.ts`). `OpenCodeSession` writes rows as
`Session.updateMessage` / `updatePart` do: `message.data` and `part.data` are the
objects without the ids that are columns. The texts, ids and times are ours.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The tables OpenCode 1.18.33 creates (its squashed baseline), as far as sessions go.
SCHEMA = """
CREATE TABLE `project` (
  `id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text,
  `icon_url` text, `icon_url_override` text, `icon_color` text,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_initialized` integer, `sandboxes` text NOT NULL, `commands` text
);
CREATE TABLE `session` (
  `id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text,
  `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text NOT NULL,
  `version` text NOT NULL, `share_url` text, `summary_additions` integer,
  `summary_deletions` integer, `summary_files` integer, `summary_diffs` text, `metadata` text,
  `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL,
  `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL,
  `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL,
  `revert` text, `permission` text, `agent` text, `model` text,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_compacting` integer, `time_archived` integer,
  CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`)
    REFERENCES `project`(`id`) ON DELETE CASCADE
);
CREATE TABLE `message` (
  `id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`)
    REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE TABLE `part` (
  `id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`)
    REFERENCES `message`(`id`) ON DELETE CASCADE
);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
"""

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
SAVED = "The tool call succeeded but the output was truncated. Full output saved to: "
GREP = "Use Grep to search the full content or Read with offset/limit to view specific sections."
TASK = (
    "Use the Task tool to have explore agent process this file with Grep and Read (with "
    "offset/limit). Do NOT read the full file yourself - delegate to save context."
)
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def ascending(prefix: str, ms: int, counter: int) -> str:
    """`Identifier.ascending`: the prefix, 12 hex of `ms * 4096 + counter` (its low 48 bits),
    and 14 base62 characters (random there; made from the counter here)."""
    now = (ms * 0x1000 + counter) & ((1 << 48) - 1)
    tail = "".join(_B62[(counter * 7 + i * 13) % 62] for i in range(14))
    return f"{prefix}_{now:012x}{tail}"


def truncate(
    text: str,
    path: str,
    *,
    direction: str = "head",
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
    task: bool = False,
) -> str | None:
    """`Truncate.output`'s message for `text` saved at `path` (None: not cut), line for line."""
    lines = text.split("\n")
    total = len(text.encode("utf-8"))
    if len(lines) <= max_lines and total <= max_bytes:
        return None
    out: list[str] = []
    used = 0
    hit = False
    if direction == "head":
        for i, line in enumerate(lines[:max_lines]):
            size = len(line.encode("utf-8")) + (1 if i > 0 else 0)
            if used + size > max_bytes:
                hit = True
                break
            out.append(line)
            used += size
    else:
        for line in reversed(lines):
            if len(out) >= max_lines:
                break
            size = len(line.encode("utf-8")) + (1 if out else 0)
            if used + size > max_bytes:
                hit = True
                break
            out.insert(0, line)
            used += size
    removed = total - used if hit else len(lines) - len(out)
    unit = "bytes" if hit else "lines"
    preview = "\n".join(out)
    hint = f"{SAVED}{path}\n{TASK if task else GREP}"
    if direction == "head":
        return f"{preview}\n\n...{removed} {unit} truncated...\n\n{hint}"
    return f"...{removed} {unit} truncated...\n\n{hint}\n\n{preview}"


@dataclass
class OpenCodeSession:
    """One session written into `<data>/opencode.db`, its cut outputs into `<data>/tool-output/`."""

    data: Path
    """OpenCode's data folder (`~/.local/share/opencode`)."""
    directory: str = "/home/dev/shop"
    title: str = "Fix the flaky checkout test"
    start_ms: int = 1_795_000_000_000
    session_id: str = "ses_5b1d3c7e9ffeRk2mZ8qL4tXw9a"
    rows: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    model: str = "claude-sonnet-4-5"
    _clock: int = 0
    _counter: int = 0
    _message: str | None = None

    @property
    def db(self) -> Path:
        """The database file."""
        return self.data / "opencode.db"

    @property
    def path(self) -> Path:
        """What the session is opened by: `<database>/<session id>`."""
        return self.db / self.session_id

    @property
    def outputs(self) -> Path:
        """OpenCode's `tool-output/` folder."""
        return self.data / "tool-output"

    def _now(self) -> int:
        self._clock += 1000
        return self.start_ms + self._clock

    def _id(self, prefix: str) -> str:
        self._counter += 1
        return ascending(prefix, self.start_ms + self._clock, self._counter)

    def message(self, role: str, **extra: Any) -> str:
        """A message row; its parts follow (`part`)."""
        mid = self._id("msg")
        now = self._now()
        data: dict[str, Any] = {"role": role, "time": {"created": now}}
        if role == "assistant":
            data.update(
                modelID=self.model,
                providerID="anthropic",
                mode="build",
                agent="build",
                path={"cwd": self.directory, "root": self.directory},
                cost=0,
                tokens={"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            )
        else:
            data.update(agent="build", model={"providerID": "anthropic", "modelID": self.model})
        data.update(extra)
        self.rows.append(("message", (mid, self.session_id, now, now, json.dumps(data))))
        self._message = mid
        return mid

    def part(self, data: dict[str, Any]) -> str:
        """A part of the last message."""
        pid = self._id("prt")
        now = self._now()
        assert self._message is not None
        row = (pid, self._message, self.session_id, now, now, json.dumps(data))
        self.rows.append(("part", row))
        return pid

    def user(self, text: str) -> None:
        """A user message with one text part."""
        self.message("user")
        self.part({"type": "text", "text": text})

    def step(self, *, input_tokens: int, cache_read: int = 0, cache_write: int = 0) -> None:
        """An assistant message's step: `step-start` now; `finish` adds the `step-finish`."""
        self.part({"type": "step-start"})
        self._tokens = {
            "input": input_tokens,
            "output": 120,
            "reasoning": 0,
            "cache": {"read": cache_read, "write": cache_write},
        }

    def finish(self) -> None:
        """The `step-finish` of the open step, with its tokens."""
        self.part(
            {"type": "step-finish", "reason": "tool-calls", "cost": 0, "tokens": self._tokens}
        )

    def text(self, text: str) -> None:
        """The model's text."""
        self.part({"type": "text", "text": text, "time": {"start": self._now()}})

    def tool(
        self,
        tool: str,
        args: dict[str, Any],
        output: str,
        *,
        direction: str = "head",
        task: bool = False,
        save: bool = True,
        at: str | None = None,
        compacted: bool = False,
        max_lines: int = MAX_LINES,
        max_bytes: int = MAX_BYTES,
    ) -> str:
        """A completed tool part; an output over the limits is cut as `Truncate.output` cuts it,
        its whole written to `tool-output/` (unless not `save`). Returns the file's name."""
        call = f"toolu_{self._counter + 1:04d}"
        name = self._id("tool")
        path = at if at is not None else f"{self.outputs}/{name}"
        cut = truncate(
            output, path, direction=direction, task=task, max_lines=max_lines, max_bytes=max_bytes
        )
        start = self._now()
        times: dict[str, Any] = {"start": start, "end": start + 40}
        if compacted:
            times["compacted"] = start + 600_000
        meta: dict[str, Any] = {"truncated": cut is not None}
        if cut is not None:
            meta["outputPath"] = path
            if save:
                self.files[name] = output
        self.part(
            {
                "type": "tool",
                "callID": call,
                "tool": tool,
                "state": {
                    "status": "completed",
                    "input": args,
                    "output": cut if cut is not None else output,
                    "title": tool,
                    "metadata": meta,
                    "time": times,
                },
            }
        )
        return name

    def raw_tool(self, tool: str, output: str, *, end_ms: int | None = None) -> None:
        """A completed tool part whose output is given as is."""
        start = self._now()
        self.part(
            {
                "type": "tool",
                "callID": f"toolu_{self._counter + 1:04d}",
                "tool": tool,
                "state": {
                    "status": "completed",
                    "input": {},
                    "output": output,
                    "title": tool,
                    "metadata": {},
                    "time": {"start": start, "end": end_ms if end_ms is not None else start + 40},
                },
            }
        )

    def compaction(self, summary: str, *, auto: bool = True) -> None:
        """A compaction: the user message with its `compaction` part, then the summary."""
        self.message("user")
        self.part({"type": "compaction", "auto": auto})
        self.message("assistant", summary=True, mode="compaction", agent="compaction")
        self.step(input_tokens=9000)
        self.text(summary)
        self.finish()

    def write(self, *, wal: bool = True) -> Path:
        """The database (made, or added to) and the outputs' files; returns the session's path."""
        self.data.mkdir(parents=True, exist_ok=True)
        new = not self.db.exists()
        conn = sqlite3.connect(self.db)
        try:
            if new:
                if wal:
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.executescript(SCHEMA)
            conn.execute(
                "INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, "
                "sandboxes) VALUES (?, ?, ?, ?, '[]')",
                ("proj_shop", self.directory, self.start_ms, self.start_ms),
            )
            conn.execute(
                "INSERT INTO session (id, project_id, slug, directory, title, version, "
                "time_created, time_updated, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.session_id,
                    "proj_shop",
                    "quiet-harbor",
                    self.directory,
                    self.title,
                    "1.18.33",
                    self.start_ms,
                    self.start_ms + self._clock,
                    json.dumps({"id": self.model, "providerID": "anthropic"}),
                ),
            )
            for table, row in self.rows:
                marks = ", ".join("?" * len(row))
                conn.execute(f"INSERT INTO {table} VALUES ({marks})", row)
            conn.commit()
        finally:
            conn.close()
        self.outputs.mkdir(parents=True, exist_ok=True)
        for name, text in self.files.items():
            (self.outputs / name).write_text(text, encoding="utf-8")
        return self.path


def write_storage(s: OpenCodeSession, *, project: str = "proj_shop") -> Path:
    """The session as OpenCode before its database kept it (1.1.x `Storage.write`): one file
    per session, message and part, `JSON.stringify(x, null, 2)`, ids in the objects too;
    its outputs' files in `tool-output/`. Returns the session file's path."""
    storage = s.data / "storage"
    session = storage / "session" / project / f"{s.session_id}.json"
    session.parent.mkdir(parents=True, exist_ok=True)
    info = {
        "id": s.session_id,
        "slug": "quiet-harbor",
        "projectID": project,
        "directory": s.directory,
        "title": s.title,
        "version": "1.1.65",
        "time": {"created": s.start_ms, "updated": s.start_ms + s._clock},
    }
    session.write_text(json.dumps(info, indent=2), encoding="utf-8")
    for table, row in s.rows:
        if table == "message":
            mid, sid, _, _, data = row
            obj = {"id": mid, "sessionID": sid, **json.loads(data)}
            path = storage / "message" / sid / f"{mid}.json"
        else:
            pid, mid, sid, _, _, data = row
            obj = {"id": pid, "sessionID": sid, "messageID": mid, **json.loads(data)}
            path = storage / "part" / mid / f"{pid}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(obj, indent=2), encoding="utf-8")
    s.outputs.mkdir(parents=True, exist_ok=True)
    for name, text in s.files.items():
        (s.outputs / name).write_text(text, encoding="utf-8")
    return session

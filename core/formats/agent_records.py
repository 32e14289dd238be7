"""Which lines are the agent's own records, never sent to the model, and what each one is.

Beside the conversation, an agent writes lines for itself: Claude Code its
tools' and hooks' progress, file-history snapshots for undo, queued input,
turn durations, session titles, modes (in real 2.1.39 sessions `progress`
lines are 70 % of all lines); Codex its UI's events (`event_msg`) and
`/undo` snapshots. None of them is what the model saw, and drawn each on its
own rows they bury the conversation. The viewer folds a run of them into one
row in its "what the model saw" look (`viewer.folds`); this module is the rule
of which lines they are and what each is called, written once.

A line type this module does not know is a record too, for Claude Code: new
ones appear with most releases (CLAUDE_CODE.md), and everything Claude Code
sends to the model is a `user` or `assistant` line. Codex's unknown types are
left shown: its newer ones (`world_state`, `inter_agent_communication`) may
be what the model was given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from transcript_view.core.formats.detect import Format

__all__ = ["RecordKind", "record_of"]


@dataclass(frozen=True, slots=True)
class RecordKind:
    """What one record line is: its kind, and within it what it was about."""

    kind: str
    """The kind as a noun, singular ("progress record", "file-history snapshot")."""
    kinds: str
    """The plural of `kind`."""
    note: str
    """What such a line is, for its heading when it is shown on its own rows."""
    detail: str | None = None
    """What within the kind (a progress record's tool: "hook", "Bash"), singular."""
    details: str | None = None
    """The plural of `detail`."""


def _kind(kind: str, kinds: str, note: str) -> RecordKind:
    return RecordKind(kind, kinds, note)


#: Claude Code's record line types (CLAUDE_CODE.md, "Lines"), by `type`.
_CLAUDE: dict[str, RecordKind] = {
    "progress": _kind(
        "progress record", "progress records", "a tool's or hook's progress, shown while it ran"
    ),
    "file-history-snapshot": _kind(
        "file-history snapshot", "file-history snapshots", "Claude Code's record of edited files"
    ),
    "queue-operation": _kind(
        "queue operation", "queue operations", "input queued while the model was busy"
    ),
    "summary": _kind("title", "titles", "the session's title, as `/resume` lists it"),
    "custom-title": _kind("title", "titles", "the session's title, as the user set it"),
    "ai-title": _kind("title", "titles", "the session's title, as a model wrote it"),
    "last-prompt": _kind("last prompt", "last prompts", "the last prompt, kept for resuming"),
    "task-summary": _kind("task summary", "task summaries", "a task's summary, for the UI"),
    "tag": _kind("tag", "tags", "a tag on the session"),
    "agent-name": _kind("agent name", "agent names", "a subagent's name"),
    "agent-color": _kind("agent colour", "agent colours", "a subagent's colour"),
    "agent-setting": _kind("agent setting", "agent settings", "a subagent's setting"),
    "pr-link": _kind("pull-request link", "pull-request links", "a pull request it opened"),
    "attribution-snapshot": _kind(
        "attribution snapshot", "attribution snapshots", "Claude Code's attribution record"
    ),
    "speculation-accept": _kind(
        "speculation record", "speculation records", "an accepted speculative edit"
    ),
    "mode": _kind("mode change", "mode changes", "the mode the session was in"),
    "permission-mode": _kind(
        "permission mode", "permission modes", "the permission mode the session was in"
    ),
    "worktree-state": _kind("worktree state", "worktree states", "the git worktree's state"),
}

#: Claude Code's `system` lines that are records, by `subtype`. The others (a
#: compaction, an API error, a local command's output) say what happened to the
#: conversation and stay shown.
_CLAUDE_SYSTEM: dict[str, RecordKind] = {
    "turn_duration": _kind("turn duration", "turn durations", "how long a turn took"),
    "away_summary": _kind(
        "away summary", "away summaries", "a recap shown to the user on their return"
    ),
    "stop_hook_summary": _kind(
        "hook summary", "hook summaries", "what the stop hooks did, for the UI"
    ),
}

#: What a `progress` line's `data.type` was about: (singular, plural).
_PROGRESS: dict[str, tuple[str, str]] = {
    "hook_progress": ("hook", "hooks"),
    "bash_progress": ("Bash", "Bash"),
    "powershell_progress": ("PowerShell", "PowerShell"),
    "agent_progress": ("subagent", "subagents"),
    "mcp_progress": ("MCP call", "MCP calls"),
    "waiting_for_task": ("wait for a task", "waits for a task"),
    "query_update": ("web search", "web searches"),
    "search_results_received": ("web search", "web searches"),
}

#: Claude Code's line types that are (or change) what the model is sent: a message, a
#: result replaced at request time, and an attachment (context Claude Code adds to
#: the next request as a reminder).
_CONVERSATION = frozenset({"user", "assistant", "content-replacement", "attachment"})

_UNKNOWN_NOTE = "a line type this viewer does not know, kept as written (not sent to the model)"


def _claude(obj: Mapping[str, Any]) -> RecordKind | None:
    kind = obj.get("type")
    if type(kind) is not str:
        return None
    if kind in _CONVERSATION:
        return None
    if kind == "system":
        subtype = obj.get("subtype")
        return _CLAUDE_SYSTEM.get(subtype) if type(subtype) is str else None
    found = _CLAUDE.get(kind)
    if found is None:
        return RecordKind(f"{kind} record", f"{kind} records", _UNKNOWN_NOTE)
    if kind == "progress":
        data = obj.get("data")
        what = data.get("type") if isinstance(data, Mapping) else None
        if type(what) is str and what:
            one, many = _PROGRESS.get(what, (what, what))
            return RecordKind(found.kind, found.kinds, found.note, one, many)
    return found


_CODEX_UI = _kind("UI record", "UI records", "what the UI showed, not the model")
_CODEX_UNDO = _kind("undo snapshot", "undo snapshots", "a snapshot for `/undo`, never sent")


def _codex(obj: Mapping[str, Any]) -> RecordKind | None:
    kind = obj.get("type")
    payload = obj.get("payload")
    what = payload.get("type") if isinstance(payload, Mapping) else None
    if kind == "event_msg":
        if type(what) is str and what:
            return RecordKind(_CODEX_UI.kind, _CODEX_UI.kinds, _CODEX_UI.note, what, what)
        return _CODEX_UI
    if kind == "response_item" and what == "ghost_snapshot":
        return _CODEX_UNDO
    return None


#: Qwen Code's `system` records that are its own bookkeeping (`ChatRecordingService`), by
#: `subtype`. A compression and a rewind change what the model is sent, and a subtype not
#: known here may be a message the model was given: those stay shown.
_QWEN_SYSTEM: dict[str, RecordKind] = {
    "ui_telemetry": _kind("telemetry record", "telemetry records", "a UI event, for metrics"),
    "session_model": _kind("model setting", "model settings", "the model the session used"),
    "custom_title": _kind("title", "titles", "the session's title"),
    "session_source": _kind("session source", "session sources", "how the session began"),
    "parent_session": _kind("parent session", "parent sessions", "the session it came from"),
    "file_history_snapshot": _kind(
        "file-history snapshot", "file-history snapshots", "Qwen Code's record of edited files"
    ),
    "attribution_snapshot": _kind(
        "attribution snapshot", "attribution snapshots", "Qwen Code's attribution record"
    ),
    "slash_command": _kind("slash command", "slash commands", "a command the user ran"),
    "at_command": _kind("@ command", "@ commands", "files the user attached with @"),
    "user_text_elements": _kind(
        "text elements", "text elements", "how the UI showed the user's text"
    ),
    "branch_checkpoint": _kind("checkpoint", "checkpoints", "a point the session can return to"),
    "goal_state": _kind("goal state", "goal states", "the goal runtime's state"),
    "goal_runtime": _kind("goal record", "goal records", "the goal runtime's bookkeeping"),
    "goal_turn_end": _kind("goal turn end", "goal turn ends", "the end of a goal's turn"),
}


def _qwen(obj: Mapping[str, Any]) -> RecordKind | None:
    if obj.get("type") != "system":
        return None
    subtype = obj.get("subtype")
    return _QWEN_SYSTEM.get(subtype) if type(subtype) is str else None


_GEMINI_UI = _kind("UI message", "UI messages", "a message the UI showed, never sent to the model")
_GEMINI_META = _kind(
    "metadata update", "metadata updates", "the session's metadata (last update, summary)"
)


def _gemini(obj: Mapping[str, Any]) -> RecordKind | None:
    kind = obj.get("type")
    if isinstance(obj.get("id"), str) and kind in ("info", "error", "warning"):
        return RecordKind(_GEMINI_UI.kind, _GEMINI_UI.kinds, _GEMINI_UI.note, kind, kind)
    patch = obj.get("$set")
    if isinstance(patch, Mapping) and "messages" not in patch:
        return _GEMINI_META
    return None


#: OpenCode's parts that are its own bookkeeping (OTHER_AGENTS.md, "OpenCode"), by `type`:
#: `toModelMessages` sends none of them.
_OPENCODE: dict[str, RecordKind] = {
    "step-start": _kind("step start", "step starts", "a model call began (OpenCode's step)"),
    "step-finish": _kind(
        "step finish", "step finishes", "a model call ended: why, its tokens and cost"
    ),
    "snapshot": _kind("snapshot", "snapshots", "OpenCode's snapshot of the worktree, for undo"),
    "patch": _kind("patch record", "patch records", "the files a step changed, for undo"),
    "retry": _kind("retry", "retries", "a call OpenCode tried again after an API error"),
}


def _opencode(obj: Mapping[str, Any]) -> RecordKind | None:
    data = obj.get("data")
    if obj.get("opencode") != "part" or not isinstance(data, Mapping):
        return None
    kind = data.get("type")
    return _OPENCODE.get(kind) if type(kind) is str else None


#: Copilot CLI's events that are its own record, by their `type`'s first word; the
#: conversation's events (`copilot.CONVERSATION`) are none.
_COPILOT: dict[str, RecordKind] = {
    "session": _kind(
        "session event",
        "session events",
        "the session's own record (start, model, usage, shutdown), never sent to the model",
    ),
    "assistant": _kind("turn event", "turn events", "a model turn began or ended"),
    "tool": _kind(
        "tool start", "tool starts", "a tool began (its call is in the model's message)"
    ),
    "hook": _kind("hook event", "hook events", "a hook ran"),
    "subagent": _kind("subagent event", "subagent events", "a subagent's progress"),
    "skill": _kind("skill event", "skill events", "a skill was invoked"),
}
_COPILOT_OTHER = _kind("event", "events", "Copilot CLI's own record, never sent to the model")
#: Copilot CLI's conversation, which is no record (`core.formats.copilot.CONVERSATION`).
_COPILOT_SENT = frozenset(
    {
        "user.message",
        "assistant.message",
        "assistant.reasoning",
        "tool.execution_complete",
        "system.message",
        "session.compaction_complete",
        "session.truncation",
    }
)


def _copilot(obj: Mapping[str, Any]) -> RecordKind | None:
    kind = obj.get("type")
    if type(kind) is not str or kind in _COPILOT_SENT:
        return None
    return _COPILOT.get(kind.split(".", 1)[0], _COPILOT_OTHER)


def record_of(fmt: Format, obj: Mapping[str, Any]) -> RecordKind | None:
    """What a decoded line is, when it is one of the agent's own records (else None).

    Args:
        fmt: the transcript's format (the reference format has no such records:
            every envelope is part of what the replay rules read).
        obj: the line, decoded (a JSON object).
    """
    if fmt is Format.CLAUDE_CODE:
        return _claude(obj)
    if fmt is Format.CODEX:
        return _codex(obj)
    if fmt is Format.QWEN:
        return _qwen(obj)
    if fmt is Format.GEMINI:
        return _gemini(obj)
    if fmt is Format.OPENCODE:
        return _opencode(obj)
    if fmt is Format.COPILOT:
        return _copilot(obj)
    return None

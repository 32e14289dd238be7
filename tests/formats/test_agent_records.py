"""Which lines are the agent's own records (never sent to the model): the core's one rule."""

from __future__ import annotations

from typing import Any

import pytest

from transcript_view.core.formats.agent_records import record_of
from transcript_view.core.formats.detect import Format

CLAUDE = Format.CLAUDE_CODE


@pytest.mark.parametrize(
    ("line", "kind", "detail"),
    [
        ({"type": "progress", "data": {"type": "hook_progress"}}, "progress record", "hook"),
        ({"type": "progress", "data": {"type": "bash_progress"}}, "progress record", "Bash"),
        ({"type": "progress", "data": {"type": "new_kind"}}, "progress record", "new_kind"),
        ({"type": "progress"}, "progress record", None),
        ({"type": "file-history-snapshot"}, "file-history snapshot", None),
        ({"type": "queue-operation"}, "queue operation", None),
        ({"type": "summary", "summary": "Friendly Robot Icon"}, "title", None),
        ({"type": "ai-title"}, "title", None),
        ({"type": "mode"}, "mode change", None),
        ({"type": "permission-mode"}, "permission mode", None),
        ({"type": "agent-name"}, "agent name", None),
        ({"type": "last-prompt"}, "last prompt", None),
        ({"type": "system", "subtype": "turn_duration"}, "turn duration", None),
        # A line type nobody has seen yet is a record: new ones come with most releases.
        ({"type": "brand-new-type"}, "brand-new-type record", None),
    ],
)
def test_claude_codes_own_lines_are_records(
    line: dict[str, Any], kind: str, detail: str | None
) -> None:
    record = record_of(CLAUDE, line)
    assert record is not None and (record.kind, record.detail) == (kind, detail)


@pytest.mark.parametrize(
    "line",
    [
        {"type": "user", "message": {"content": "hi"}},
        {"type": "assistant", "message": {"content": []}},
        {"type": "content-replacement", "replacements": []},
        {"type": "attachment", "attachment": {"type": "todo"}},
        {"type": "system", "subtype": "compact_boundary"},
        {"type": "system", "subtype": "microcompact_boundary"},
        {"type": "system", "subtype": "api_error"},
        {"type": "system", "subtype": "never_seen_before"},
        {"type": 7},
        {"no": "type"},
    ],
)
def test_what_the_model_is_sent_or_what_happened_to_it_is_no_record(line: dict[str, Any]) -> None:
    assert record_of(CLAUDE, line) is None


def test_codex_ui_events_and_undo_snapshots_are_records_its_model_items_are_not() -> None:
    ui = record_of(Format.CODEX, {"type": "event_msg", "payload": {"type": "token_count"}})
    assert ui is not None and (ui.kind, ui.detail) == ("UI record", "token_count")
    ghost = {"type": "response_item", "payload": {"type": "ghost_snapshot"}}
    assert record_of(Format.CODEX, ghost) is not None
    for line in (
        {"type": "response_item", "payload": {"type": "message"}},
        {"type": "compacted", "payload": {"message": "x"}},
        {"type": "turn_context", "payload": {}},
        {"type": "world_state", "payload": {}},  # may be what the model was given
    ):
        assert record_of(Format.CODEX, line) is None, line


def test_the_reference_format_has_no_records() -> None:
    assert record_of(Format.REFERENCE, {"type": "progress"}) is None

"""Issue 27: the model view at a call. `m` shows what the model is sent next for every
format; `M` on an assistant turn shows what the model was sent for the call that
produced it (elsewhere, the next call after the line), and says which call it is."""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from typing import Any

import _real_shapes as shapes
from _pilot import settle, sync
from _runs import line as ref_line
from _screen import SIZE, assert_counting_matches_building
from _sessions import ClaudeSession, codex_line
from _support import CLAUDE_EXAMPLE, CODEX_EXAMPLE

from transcript_view.core.analysis import Analysis
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.blocks import ModelSource
from transcript_view.viewer.context import BlockKey
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.messages import LayoutChunk


def _text(screen: TranscriptScreen) -> str:
    """Every row of the current view, every block built (not only what is on screen)."""
    source = screen.view.doc.source
    rows = []
    for i in range(source.available()):
        rows.extend(r.text.plain for r in source.build(i).text_rows())
    return "\n".join(rows)


def _lines(screen: TranscriptScreen) -> list[int]:
    """The transcript lines the model view's entries come from."""
    source = screen.view.doc.source
    assert isinstance(source, ModelSource)
    return [source.line_of(i) for i in range(1, source.available())]


def rewound_session(root: Path) -> tuple[Path, dict[str, int]]:
    """`_real_shapes.rewound_session`, written: its path and its lines' numbers by name."""
    s, at = shapes.rewound_session(root)
    path = s.write()
    return path, {k: s.lines.index(v) + 1 for k, v in at.items()}


async def _cursor_to(pilot: Any, screen: TranscriptScreen, line: int) -> None:
    view = screen.view
    index = view.doc.source.index_of_line(line)
    assert index is not None
    view.set_cursor(view.doc.block_start(index))
    await pilot.pause()


@sync
async def test_m_on_a_claude_code_session_shows_the_next_calls_context(tmp_path: Path) -> None:
    path, at = rewound_session(tmp_path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("m")
        await settle(pilot)
        assert screen.header.view_name == "model view: what the model is sent next"
        assert _lines(screen) == [at["p1"], at["a1"], at["p3"], at["y"]]  # not the rewound
        text = _text(screen)
        assert "not replayed" not in text and "the 4 entries the model is sent next" in text
        assert "system prompt and tool definitions are not in the file" in text
        assert "before Claude Code 2.1.9" in text  # what the file cannot tell, still said
        assert_counting_matches_building(screen)


@sync
async def test_m_on_a_codex_rollout_shows_the_next_calls_context() -> None:
    app = TranscriptApp(CODEX_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("m")
        await settle(pilot)
        text = _text(screen)
        assert "the model is sent next" in text and "not replayed" not in text
        lines = _lines(screen)
        assert lines and lines == sorted(lines)
        assert_counting_matches_building(screen)


@sync
async def test_m_on_the_claude_example_no_longer_says_not_replayed() -> None:
    app = TranscriptApp(CLAUDE_EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("m")
        await settle(pilot)
        assert "not replayed" not in _text(screen) and _lines(screen)


def _reference(path: Path) -> Path:
    usage = {"prompt-tokens": 37}
    lines = [
        ref_line(1, "message", {"role": "system", "content": "S" * 40, "sticky": True}),
        ref_line(2, "message", {"role": "user", "content": "first question"}),
        ref_line(3, "message", {"role": "assistant", "content": "first answer", "usage": usage}),
        ref_line(4, "message", {"role": "user", "content": "second question"}),
        ref_line(5, "message", {"role": "assistant", "content": "second answer"}),
    ]
    path.write_text("".join(lines), "utf-8")
    return path


@sync
async def test_m_on_an_llm_agent_transcript_is_todays_replay(tmp_path: Path) -> None:
    app = TranscriptApp(_reference(tmp_path / "t.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("m")
        await settle(pilot)
        analysis = screen.analysis
        assert isinstance(analysis, Analysis)
        replay = analysis.replay
        assert _lines(screen) == [replay.line_at(i) for i in range(len(replay))]
        assert screen.header.view_name == "model view: what the model is sent next"
        assert "the 5 messages the model is sent next" in _text(screen)
        # `M` on the second answer: the replay as of the line before it.
        await pilot.press("m")
        await settle(pilot)
        await _cursor_to(pilot, screen, 5)
        await pilot.press("M")
        await settle(pilot)
        assert screen.header.view_name == "model view: what the model was sent for call 2 (line 5)"
        assert _lines(screen) == [1, 2, 3, 4]
        assert_counting_matches_building(screen)


@sync
async def test_M_on_an_assistant_turn_shows_its_calls_context(tmp_path: Path) -> None:
    path, at = rewound_session(tmp_path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await _cursor_to(pilot, screen, at["y"])
        await pilot.press("M")
        await settle(pilot)
        assert screen.view.showing_model
        want = f"model view: what the model was sent for call 3 (line {at['y']})"
        assert screen.header.view_name == want
        assert _lines(screen) == [at["p1"], at["a1"], at["p3"]]
        assert at["p2"] not in _lines(screen) and at["x"] not in _lines(screen)
        text = _text(screen)
        assert "20,050 tokens (recorded: message.usage" in text
        assert "tokens not in the file: system prompt and tool definitions" in text
        assert "estimate" in text
        assert "no compaction before it" in text
        assert_counting_matches_building(screen)
        # On the abandoned answer: its own call, whose request had the abandoned prompt.
        await pilot.press("m")  # back to the file view
        await settle(pilot)
        await _cursor_to(pilot, screen, at["x"])
        await pilot.press("M")
        await settle(pilot)
        assert _lines(screen) == [at["p1"], at["a1"], at["p2"]]
        # On a prompt: the next call after it.
        await pilot.press("m")
        await settle(pilot)
        await _cursor_to(pilot, screen, at["p1"])
        await pilot.press("M")
        await settle(pilot)
        assert screen.header.view_name.endswith(f"for call 1 (line {at['a1']})")
        assert _lines(screen) == [at["p1"]]
        # `m` from the file view is the next call again.
        await pilot.press("m")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert screen.header.view_name == "model view: what the model is sent next"


@sync
async def test_show_call_context_is_the_screens_to_call(tmp_path: Path) -> None:
    """What the context screen calls when a call is chosen there."""
    path, at = rewound_session(tmp_path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        screen.show_call_context(1)
        await settle(pilot)
        assert screen.header.view_name.endswith(f"for call 2 (line {at['x']})")
        screen.show_call_context(None)
        await settle(pilot)
        assert screen.header.view_name == "model view: what the model is sent next"


@sync
async def test_the_context_is_made_in_a_worker_once_shown(tmp_path: Path) -> None:
    """A model view that needs a call's context has no blocks until it is made: the view
    makes it in a worker once it is shown (a session that never compacted is its whole
    file: no open pays for it unasked)."""
    path, at = rewound_session(tmp_path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        doc = screen.view.model_doc
        assert doc is not None and isinstance(doc.source, ModelSource)
        # Not made before the view is shown (nobody may ask), then made by a worker.
        assert doc.source.wait and not doc.source.ready() and not doc.source.making
        await pilot.press("m")
        await settle(pilot)
        assert doc.source.making and doc.source.ready() and screen.view.doc is doc
        fresh = ModelSource(doc.source.transcript, doc.source.ctx, 2, wait=True)
        assert not fresh.ready()
        assert fresh.available() == 0 and fresh.index_of_line(at["p1"]) is None
        assert fresh.header_words().endswith(f"for call 3 (line {at['y']})")  # no context made
        assert not fresh.ready()
        fresh.context()
        assert fresh.ready() and fresh.available() == 4


@sync
async def test_brackets_step_from_call_to_call_in_the_model_view(tmp_path: Path) -> None:
    path, at = rewound_session(tmp_path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("left_square_bracket")  # the file view: nothing to step
        await settle(pilot)
        assert not screen.view.showing_model
        await pilot.press("m")
        await settle(pilot)
        seen = []
        for _ in range(4):
            await pilot.press("left_square_bracket")
            await settle(pilot)
            seen.append(screen.header.view_name)
        assert seen == [
            f"model view: what the model was sent for call 3 (line {at['y']})",
            f"model view: what the model was sent for call 2 (line {at['x']})",
            f"model view: what the model was sent for call 1 (line {at['a1']})",
            f"model view: what the model was sent for call 1 (line {at['a1']})",  # the first
        ]
        assert _lines(screen) == [at["p1"]]
        for _ in range(3):
            await pilot.press("right_square_bracket")
            await settle(pilot)
        assert screen.header.view_name == "model view: what the model is sent next"
        assert _lines(screen) == [at["p1"], at["a1"], at["p3"], at["y"]]


@sync
async def test_the_model_view_shows_the_result_not_claude_codes_own_record(
    tmp_path: Path,
) -> None:
    """`toolUseResult` was never sent: the file view labels it, the model view leaves it out;
    the spill marker the model got is there in both."""
    s = ClaudeSession(tmp_path)
    s.user("Run it.")
    s.spill("toolu_01", "".join(f"row {i}\n" for i in range(3000)), name="Bash", inline=True)
    s.assistant({"type": "text", "text": "Many rows."}, msg_id="m9", request="r9")
    app = TranscriptApp(s.write())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        file_text = _text(screen)
        assert "toolUseResult (Claude Code's own record" in file_text
        await pilot.press("m")
        await settle(pilot)
        text = _text(screen)
        assert "toolUseResult" not in text
        assert "row 0" in text  # the preview the model got with its marker
        assert_counting_matches_building(screen)


@sync
async def test_another_calls_context_starts_collapsed(tmp_path: Path) -> None:
    """Block i of one call's context is another entry in another call's: what was expanded
    in one is not in the other."""
    path, _ = rewound_session(tmp_path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("m")
        await settle(pilot)
        key = BlockKey("model", 1)
        screen.view.expansion.expand(key)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert key not in screen.view.expansion


def _codex_rollout(path: Path) -> Path:
    text = [{"type": "input_text", "text": "build it"}]
    said = [{"type": "output_text", "text": "done"}]
    history = [
        {"type": "message", "role": "user", "content": text},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "SUMMARY: built it"}]},
    ]  # fmt: skip
    items = [
        ("turn_context", {"cwd": "/p", "model": "gpt-5-codex"}),
        ("response_item", {"type": "message", "role": "user", "content": text}),
        ("response_item", {"type": "message", "role": "assistant", "content": said}),
        ("compacted", {"message": "SUMMARY: built it", "replacement_history": history}),
        ("response_item", {"type": "message", "role": "assistant", "content": said}),
        ("response_item", {"type": "compaction", "encrypted_content": "gAAAA..."}),
        ("response_item", {"type": "message", "role": "user", "content": text}),
    ]
    path.write_text("".join(json.dumps(codex_line(k, p, i)) + "\n"
                            for i, (k, p) in enumerate(items)), "utf-8")  # fmt: skip
    return path


@sync
async def test_codex_contexts_start_with_the_history_or_say_it_is_encrypted(
    tmp_path: Path,
) -> None:
    app = TranscriptApp(_codex_rollout(tmp_path / "rollout.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await _cursor_to(pilot, screen, 5)
        await pilot.press("M")
        await settle(pilot)
        assert screen.header.view_name.endswith("for call 2 (line 5)")
        assert _lines(screen) == [4, 4]  # the two items of the history the model continued from
        text = _text(screen)
        assert "SUMMARY: built it" in text and "starts after the compacted on line 4" in text
        assert_counting_matches_building(screen)
        await pilot.press("m")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert _lines(screen) == [6, 7]
        text = _text(screen)
        assert "encrypted by the provider" in text


@sync
async def test_a_replaced_model_views_late_counts_are_not_taken(tmp_path: Path) -> None:
    """Chunks find their document by view and generation: a layout worker of the call's
    context on show before may still post (it did, in the hostile cases: another call's
    counts for blocks the new context does not have)."""
    path, _ = rewound_session(tmp_path)
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        screen.show_call_context(2)
        await settle(pilot)
        old = screen.view.model_doc
        assert old is not None and old.blocks == 4
        screen.show_call_context(0)
        await settle(pilot)
        new = screen.view.model_doc
        assert new is not None and new is not old and new.blocks == 2
        assert new.generation > old.generation and new.epoch > old.epoch
        late = LayoutChunk("model", old.generation, new.blocks, array("i", [3, 3]), done=True)
        screen.view.on_layout_chunk(late)
        assert new.blocks == 2
        assert_counting_matches_building(screen)

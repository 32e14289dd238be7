"""Reading a Gemini CLI session (`core.formats.gemini`, `gemini_markers`).

The sessions are synthetic (`tests/_gemini.py`, from Gemini CLI's own templates at
5411f113); each test builds the case it needs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _gemini import GeminiSession, masked, truncated
from _support import GEMINI_EXAMPLE

from transcript_view.core.calls import GEMINI_TOKENS
from transcript_view.core.formats.detect import Format, detect, sniff
from transcript_view.core.formats.gemini import sidecar_dir
from transcript_view.core.formats.gemini_markers import GeminiForm, find_marker, outputs_dir
from transcript_view.core.formats.model import SpillForm
from transcript_view.core.report import Report, verify

TESTS = "".join(f"PASS src/test_{i:04d}.py\n" for i in range(3000))
CALL = "run_shell_command-1"


def _session(tmp_path: Path) -> tuple[GeminiSession, dict[str, object]]:
    s = GeminiSession(tmp_path / ".gemini" / "tmp" / "proj")
    s.user("run the tests")
    m = s.gemini("Running them.", [(CALL, "run_shell_command", {"command": "pytest"})],
                 tokens=12_000)  # fmt: skip
    return s, m


def _states(report: Report) -> list[str]:
    return [b.state.value for b in report.badges]


# -- the markers -----------------------------------------------------------------------------


@pytest.mark.parametrize("text", [TESTS, "ab" + "😀" * 3000 + "cd"], ids=["ascii", "astral"])
def test_the_truncated_form_gives_back_its_head_tail_and_length(text: str) -> None:
    made = truncated(text, "/home/x/.gemini/tmp/p/tool-outputs/session-1/shell_1.txt", 4000)
    m = find_marker(made)
    assert m is not None and m.form is GeminiForm.TRUNCATED
    assert m.file == "shell_1.txt"
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    assert m.units == units
    assert m.head is not None and m.tail is not None
    assert text.encode("utf-16-le", "surrogatepass").startswith(
        m.head.encode("utf-16-le", "surrogatepass")
    )
    assert text.encode("utf-16-le", "surrogatepass").endswith(
        m.tail.encode("utf-16-le", "surrogatepass")
    )


def test_counts_in_another_locales_grouping_are_read() -> None:
    made = truncated(TESTS, "/p/shell_1.txt", 40_000).replace("8,000", "8.000")
    made = made.replace("32,000", "32 000")
    m = find_marker(made)
    assert m is not None and m.units == len(TESTS)


@pytest.mark.parametrize("size", [300, 5000], ids=["whole", "head-and-tail"])
def test_the_masked_form_keeps_a_comparable_preview_of_a_general_tool(size: int) -> None:
    content = json.dumps({"output": "x" * size}, indent=2)
    m = find_marker(masked(content, "/p/tool-outputs/session-1/read_file_c1_k2x9q.txt"))
    assert m is not None and m.form is GeminiForm.MASKED
    assert m.file == "read_file_c1_k2x9q.txt"
    assert m.head is not None and content.startswith(m.head)
    assert m.tail is not None and content.endswith(m.tail)


def test_context_managements_forms_name_their_files() -> None:
    node = (
        "<tool_output_masked>\n[Tool stdout string (1.25MB, 4021 lines) masked to preserve "
        "context window. Full string saved to: /p/tool-outputs/session-1/shell_c1_stdout_9.txt]"
        "\n</tool_output_masked>"
    )
    m = find_marker(node)
    assert m is not None and m.form is GeminiForm.MASKED_NODE and m.head is None
    assert m.file == "shell_c1_stdout_9.txt" and "1.25 MB" in m.cut
    normalized = (
        "[Message Normalized: Tool output exceeded size limit]\nhead\n...\ntail\n\n"
        "Full output saved to: /p/tool-outputs/session-1/shell_c1.txt"
    )
    m = find_marker(normalized)
    assert m is not None and m.form is GeminiForm.NORMALIZED and m.file == "shell_c1.txt"


@pytest.mark.parametrize(
    "text",
    [
        "see: " + truncated(TESTS, "/p/shell_1.txt", 4000),
        truncated(TESTS, "/p/shell_1.txt", 4000).replace("characters omitted", "chars omitted"),
        "<tool_output_masked>\nno path here\n</tool_output_masked>",
    ],
    ids=["quoted", "other-words", "no-path"],
)
def test_text_that_only_looks_like_a_marker_is_text(text: str) -> None:
    assert find_marker(text) is None


def test_the_outputs_folder_is_the_sessions_in_the_projects_temp_folder(tmp_path: Path) -> None:
    project = tmp_path / ".gemini" / "tmp" / "proj"
    main = project / "chats" / "session-2026-11-20T10-00-3f9a2c1e.jsonl"
    sub = project / "chats" / "3f9a2c1e-full" / "agent-1.jsonl"
    expected = project / "tool-outputs" / "session-a_b"
    assert outputs_dir(main, "a/b") == outputs_dir(sub, "a/b") == expected


# -- the session -----------------------------------------------------------------------------


def test_a_session_is_detected_as_gemini_cli(tmp_path: Path) -> None:
    s, _ = _session(tmp_path)
    path = s.write()
    assert detect(path).format is Format.GEMINI
    # A line too long to read whole (a message with a big result) is told by its keys.
    for line in path.read_bytes().split(b"\n")[:2]:
        assert sniff(line[:120], complete=False).format is Format.GEMINI
    assert sidecar_dir(path) == s.outputs


def test_a_truncated_output_is_matched_by_head_tail_and_length(tmp_path: Path) -> None:
    s, m = _session(tmp_path)
    s.spill(m, CALL, TESTS)
    report = verify(s.write())
    assert (report.format, _states(report), report.findings) == (
        Format.GEMINI, ["excerpt matches"], []
    )
    assert report.verified == 0 and report.matched == 1  # no digest: never "verified"
    (site,) = report.analysis.sites  # type: ignore[union-attr]
    assert site.form is SpillForm.GEMINI_TRUNCATED and site.file == f"{CALL}.txt"


@pytest.mark.parametrize(
    ("stored", "state", "kind"),
    [
        (TESTS[:-300], "size mismatch", "size-mismatch"),
        (TESTS[:-10] + "x" * 10, "excerpt mismatch", "excerpt-mismatch"),
        ("y" + TESTS[1:], "excerpt mismatch", "excerpt-mismatch"),
    ],
    ids=["shorter", "other-end", "other-start"],
)
def test_a_file_that_is_not_what_the_model_saw_is_an_error(
    tmp_path: Path, stored: str, state: str, kind: str
) -> None:
    s, m = _session(tmp_path)
    s.spill(m, CALL, TESTS, stored=stored)
    report = verify(s.write())
    assert (_states(report), [f.kind for f in report.findings]) == ([state], [kind])


def test_a_missing_output_file_is_an_error(tmp_path: Path) -> None:
    s, m = _session(tmp_path)
    s.spill(m, CALL, TESTS, file=False)
    report = verify(s.write())
    assert (_states(report), report.errors) == (["missing"], 1)


def test_a_result_written_again_is_one_marker_a_masked_one_another(tmp_path: Path) -> None:
    s, m = _session(tmp_path)
    s.spill(m, CALL, TESTS)
    s.gemini("again", tokens=13_000)  # the first message is written again meanwhile
    s.mask(m, CALL)  # every message again, in a `$set`: the result masked
    report = verify(s.write())
    assert _states(report) == ["excerpt matches", "excerpt matches"]
    forms = [site.form for site in report.analysis.sites]  # type: ignore[union-attr]
    assert forms == [SpillForm.GEMINI_TRUNCATED, SpillForm.GEMINI_MASKED]


def test_each_gemini_message_is_a_call_sized_by_its_tokens(tmp_path: Path) -> None:
    s, m = _session(tmp_path)
    s.result(m, CALL, "ok")
    s.gemini("done", tokens=12_500)
    report = verify(s.write())
    calls = report.analysis.calls  # type: ignore[union-attr]
    assert list(calls.tokens) == [12_000, 12_500]
    assert list(calls.fields) == [GEMINI_TOKENS, GEMINI_TOKENS]
    assert [c.model for c in calls] == ["gemini-2.5-pro"] * 2
    assert [c.field for c in calls] == ["tokens.input"] * 2


def test_a_rewind_drops_the_messages_after_it(tmp_path: Path) -> None:
    s, _ = _session(tmp_path)
    wrong = s.gemini("wrong turn", tokens=12_100)
    s.rewind(str(wrong["id"]))
    s.gemini("right turn", tokens=12_050)
    path = s.write()
    report = verify(path)
    rewind_line = next(
        i for i, x in enumerate(path.read_text().splitlines(), 1) if '"$rewindTo"' in x
    )
    assert any("rewind" in t for t in report.analysis.tags[rewind_line])  # type: ignore[union-attr]


def test_the_bundled_example_shows_every_check() -> None:
    report = verify(GEMINI_EXAMPLE)
    assert _states(report) == ["excerpt matches", "missing", "size mismatch", "excerpt matches"]
    assert report.format is Format.GEMINI


def test_older_chats_are_listed_and_checked_but_beside_their_lines(tmp_path: Path) -> None:
    from transcript_view.core.check import transcripts_in
    from transcript_view.core.formats.sessions import list_sessions

    s, _ = _session(tmp_path)
    s.write()
    chats = s.path.parent
    older = {
        "sessionId": "8d1f6c2a-0000-4000-8000-000000000001",
        "projectHash": "3f" * 32,
        "startTime": "2025-11-02T10:00:00.000Z",
        "lastUpdated": "2025-11-02T10:05:00.000Z",
        "messages": [{"id": "m1", "timestamp": "2025-11-02T10:00:01.000Z", "type": "user",
                      "content": [{"text": "an older question"}]}],
    }  # fmt: skip
    (chats / "session-2025-11-02T10-00-8d1f6c2a.json").write_text(json.dumps(older, indent=2))
    # Converted on resume: the lines are the session, the document is passed over.
    (chats / s.path.name.replace(".jsonl", ".json")).write_text(json.dumps(older, indent=2))
    listed = list_sessions(tmp_path / ".gemini" / "tmp", Format.GEMINI)
    assert sorted(x.path.name for x in listed) == sorted(
        [s.path.name, "session-2025-11-02T10-00-8d1f6c2a.json"]
    )
    prompts = {x.path.suffix: x.first_prompt for x in listed}
    assert prompts == {".jsonl": "run the tests", ".json": "an older question"}
    assert [p.name for p in transcripts_in(chats)] == sorted(
        [s.path.name, "session-2025-11-02T10-00-8d1f6c2a.json"]
    )

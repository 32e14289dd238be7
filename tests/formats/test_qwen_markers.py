"""Qwen Code's spill stub (`core.formats.qwen_markers`), held to Qwen Code's own text.

The stubs here are written by `stub()`, the template of `buildStub` as the npm
release `@qwen-code/qwen-code` 0.24.4 has it (`chunks/chunk-2VS5EEXU.js`
L5420–5440), with the later source's two changes (`OTHER_AGENTS.md`); the
outputs are ours. The expected previews are worked out by hand from
`generatePreview` (L5319–5326), not by the code under test.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from _qwen import fit_text
from _qwen import stub as qwen_stub

from transcript_view.core.formats.qwen_markers import (
    NOT_WRITTEN,
    PREVIEW_READ,
    QwenCut,
    QwenStub,
    file_name,
    find_cut,
    find_stub,
    preview_matches,
    preview_of,
    preview_of_start,
    size_kb,
    tool_results_dir,
)

#: 3,000 lines of 21 characters and a newline: 66,000 bytes, 64 KB.
OUTPUT = "".join(f"PASS src/test_{i:04d}.py\n" for i in range(3000))
#: Its first 2,000 characters hold 90 whole lines and most of the 91st: the preview is
#: the 90, cut at their last newline, and "\n...".
PREVIEW = "\n".join(f"PASS src/test_{i:04d}.py" for i in range(90)) + "\n..."
PATH = "/home/alice/.qwen/tmp/2af6b4a7/tool-results/call_8f2c1e0b7a9d.txt"
DIGEST = hashlib.sha256(OUTPUT.encode()).hexdigest()


def stub(
    path_or_note: str = PATH,
    *,
    kb: int = 64,
    digest: str | None = DIGEST,
    preview: str = PREVIEW,
    later: bool = False,
) -> str:
    """`_qwen.stub` of this file's output, by default."""
    return qwen_stub(path_or_note, kb=kb, digest=digest, preview=preview, later=later)


def test_the_stub_of_0_24_4_says_its_file_size_digest_and_preview() -> None:
    found = find_stub(stub())
    assert found == QwenStub(path=PATH, note=None, kb=64, digest=DIGEST, preview=PREVIEW)
    assert found.file == "call_8f2c1e0b7a9d.txt"
    # What the file holds agrees with every claim (the rules a check applies).
    data = OUTPUT.encode()
    assert size_kb(len(data)) == found.kb
    assert hashlib.sha256(data).hexdigest() == found.digest
    assert preview_of(OUTPUT) == found.preview
    assert preview_of_start(data[:PREVIEW_READ]) == found.preview


def test_later_and_earlier_stubs_are_read_by_their_labels() -> None:
    later = find_stub(stub(later=True))
    assert later is not None
    assert (later.digest, later.total_chars, later.total_lines) == (DIGEST, 66000, 3001)
    earlier = find_stub(stub(digest=None))  # 0.21: no digest line
    assert earlier is not None and earlier.digest is None and earlier.path == PATH


@pytest.mark.parametrize("note", NOT_WRITTEN)
def test_a_stub_with_no_file_says_why_and_keeps_its_digest(note: str) -> None:
    found = find_stub(stub(note))
    assert found is not None
    assert (found.path, found.note, found.file, found.digest) == (None, note, None, DIGEST)


@pytest.mark.parametrize(
    "text",
    [
        "see: " + stub(),  # quoted after other text: a stub is the whole output
        stub() + "\nmore",  # text after its closing tag
        stub().removesuffix("\n</persisted-output>"),  # never closed
        stub(digest="not-a-digest"),
        stub().replace("Preview (up to 2000 chars):", "Preview:"),
        stub().replace("Output too large (64 KB)", "Output too large (64 MB)"),
        # The untagged form never names a file; the tagged one always does.
        stub().removeprefix("<persisted-output>\n").removesuffix("\n</persisted-output>"),
        "<persisted-output>\n" + stub("(invalid callId)") + "\n</persisted-output>",
        "Output too large (64 KB). (some other note)\n\nPreview (up to 2000 chars):\nx",
    ],
    ids=[
        "quoted",
        "trailing",
        "unclosed",
        "bad-digest",
        "no-label",
        "unit",
        "untagged-path",
        "tagged-note",
        "unknown-note",
    ],
)
def test_what_is_not_a_stub(text: str) -> None:
    assert find_stub(text) is None


def test_the_preview_cuts_at_the_last_newline_of_2000_code_units() -> None:
    assert preview_of("short\ntext") == "short\ntext"
    assert preview_of("x" * 2000) == "x" * 2000  # exactly the limit: whole
    assert preview_of("x" * 2001) == "x" * 2000 + "\n..."  # no newline: cut where it fell
    assert preview_of("\n" + "x" * 2500) == "\n" + "x" * 1999 + "\n..."  # a newline at 0 is none
    # JavaScript counts UTF-16 code units: an emoji is two, and a cut may split one.
    assert preview_of("😀" * 1500) == "😀" * 1000 + "\n..."
    split = preview_of("a" + "😀" * 1500)
    assert split == "a" + "😀" * 999 + "\ud83d\n..."


def test_the_preview_escapes_only_its_two_tags() -> None:
    text = "<persisted-output>x</persisted-output> <system-reminder>y</system-reminder> <b>"
    assert preview_of(text) == (
        "&lt;persisted-output&gt;x&lt;/persisted-output&gt; "
        "&lt;system-reminder&gt;y&lt;/system-reminder&gt; <b>"
    )


@pytest.mark.parametrize(
    "output",
    [
        OUTPUT,
        "é" * 5000,  # two bytes a character
        "€" * 2001,  # three: the longest a code unit takes
        "€" * 2000,  # exactly 2,000 units, 6,000 bytes: whole
        "x" * 1999 + "😀" * 10,  # the cut falls inside the first emoji
        "ab\n" + "€" * 1998 + "\n" + "z" * 10,
        "€" * 2000 + "😀" + "x",  # the read ends inside the emoji after 2,000 units
    ],
    ids=[
        "ascii",
        "two-byte",
        "three-byte-over",
        "three-byte-at",
        "astral-cut",
        "newline-late",
        "cut-after-limit",
    ],
)
def test_the_preview_from_the_files_start_is_the_whole_outputs(output: str) -> None:
    data = output.encode()
    assert preview_of_start(data[:PREVIEW_READ]) == preview_of(output)


def test_a_file_that_is_no_utf8_has_no_matching_preview() -> None:
    data = b"PASS \xff\n" * 10
    assert not preview_matches(preview_of("PASS \n" * 10), data)
    assert preview_matches(preview_of("PASS \ufffd\n" * 10), data)


def test_a_lone_surrogate_is_u_fffd_in_the_file_and_still_matches() -> None:
    # Node writes the output's lone surrogate as U+FFFD; the stub (JSON) keeps it.
    output = "ok \ud800 then\n" * 300
    written = output.encode("utf-8", "surrogatepass").replace(b"\xed\xa0\x80", b"\xef\xbf\xbd")
    assert preview_matches(preview_of(output), written[:PREVIEW_READ])
    assert not preview_matches(preview_of(output.replace("ok", "no")), written[:PREVIEW_READ])


def test_the_size_is_math_round_of_kilobytes() -> None:
    assert [size_kb(n) for n in (0, 511, 512, 1535, 1536, 66000)] == [0, 0, 1, 1, 2, 64]


def test_the_file_of_a_call_is_its_ids_last_component() -> None:
    assert file_name("call_8f2c1e0b7a9d") == "call_8f2c1e0b7a9d.txt"
    assert file_name("../../etc/passwd") == "passwd.txt"  # never a path of the file's
    assert file_name("dir/") == "dir.txt"
    assert file_name("a\x00b") == "a_b.txt"
    assert [file_name(x) for x in ("", ".", "..", "/")] == [None, None, None, None]


def test_the_results_folder_is_the_projects_not_the_sessions(tmp_path: Path) -> None:
    session = tmp_path / ".qwen" / "projects" / "-home-alice-proj" / "chats" / "7b0e2c1a.jsonl"
    # sha256("/home/alice/proj"), as the path in a real stub for that project shows it.
    digest = "2af6b4a70d443ffdfe2b93b75008d7d9e4b3327c183f7e70cc2fb5e29ceec35d"
    expected = tmp_path / ".qwen" / "tmp" / digest / "tool-results"
    assert tool_results_dir(session, "/home/alice/proj") == expected
    # An archived session's and a subagent's are deeper, in the same runtime folder.
    project = session.parent.parent
    for deeper in (
        project / "chats" / "archive" / "7b0e2c1a.jsonl",
        project / "subagents" / "7b0e2c1a" / "agent-1.jsonl",
    ):
        assert tool_results_dir(deeper, "/home/alice/proj") == expected


# -- the two other forms ---------------------------------------------------------------------


TEXT = "".join(f"line {i}: {'x' * (i % 7)}\n" for i in range(400))


@pytest.mark.parametrize("budget", [300, 301, 302, 303, 304, 999, 2000])
@pytest.mark.parametrize("files", [[PATH], [PATH, PATH + "-1"], []], ids=["one", "two", "none"])
def test_the_batch_budgets_cut_gives_back_its_head_and_tail(budget: int, files: list[str]) -> None:
    cut = find_cut(fit_text(TEXT, budget, files))
    assert cut is not None and cut.paths == tuple(files) and not cut.old
    assert cut.tail is not None
    assert TEXT.startswith(cut.head) and TEXT.endswith(cut.tail)
    assert 4 * len(cut.head) <= len(cut.tail) <= 4 * len(cut.head) + 5


@pytest.mark.parametrize("shift", range(6))
def test_a_cut_inside_a_character_still_splits_where_fit_text_joined(shift: int) -> None:
    # Emoji everywhere: either end of the head or the tail may fall inside one.
    text = "ab" + "😀" * 400 + "cd"
    made = fit_text(text, 200 + shift, [PATH])
    cut = find_cut(made)
    assert cut is not None and cut.tail is not None
    assert text.startswith(cut.head) and text.endswith(cut.tail)
    assert made.endswith(f"{cut.head}\n...\n{cut.tail}")


def test_a_tiny_budget_keeps_a_head_alone() -> None:
    header = f"Tool output truncated. Persisted tool-output artifact: {PATH}"
    cut = find_cut(fit_text(TEXT, len(header) + 2 + 4, [PATH]))
    assert cut == QwenCut((PATH,), TEXT[:4], None)


def test_the_older_form_names_its_output_file_and_keeps_both_ends() -> None:
    head, tail = "first\nlines", "last\nlines"
    text = (
        "Tool output was too large and has been truncated.\n"
        "The full output has been saved to: /home/a/.qwen/tmp/h/run_shell_command_1a2b3c.output\n"
        "To read the complete output, use the read_file tool with the absolute file path above.\n"
        "The truncated output below shows the beginning and end of the content. The marker "
        "'... [CONTENT TRUNCATED] ...' indicates where content was removed.\n\n"
        f"Truncated part of the output:\n{head}\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n{tail}"
    )
    cut = find_cut(text)
    path = "/home/a/.qwen/tmp/h/run_shell_command_1a2b3c.output"
    assert cut == QwenCut((path,), head, tail, old=True)
    assert find_cut("see: " + text) is None
    assert find_cut(text.replace("Truncated part of the output:", "Part:")) is None


@pytest.mark.parametrize(
    "text",
    [
        "Tool output truncated.x",
        "Tool output truncated. Persisted tool-output artifact: \n\nbody",
        "Tool output truncated. Persisted tool-output artifacts:\nnot a list\n\nbody",
        "The tool said: Tool output truncated.\n\nbody",
    ],
)
def test_what_is_no_cut(text: str) -> None:
    assert find_cut(text) is None

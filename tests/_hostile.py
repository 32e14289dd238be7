"""The hostile-input corpus: every case is built in a temporary directory on demand.

Cases are code, not committed files, because most of them cannot be committed
(fifos, devices, symlinks leaving the tree, permission bits, 50 MB lines) and the
rest are clearer as the two lines that make them. Each case says what `--check`
must answer; `robustness/test_hostile.py` holds `--check` to it,
`robustness/test_viewer_hostile.py` the viewer, and the README's table is this
table.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _copilot import CopilotSession
from _copilot import too_large as copilot_too_large
from _gemini import GeminiSession
from _gemini import truncated as gemini_truncated
from _opencode import OpenCodeSession
from _opencode import truncate as opencode_truncate
from _qwen import QwenSession
from _qwen import stub as qwen_stub
from _sessions import (
    ClaudeSession,
    claude_preview,
    codex_lines_omitted,
    mcp_marker,
    numbered,
    persisted_marker,
    saved_marker,
    write_codex_rollout,
)

from transcript_view.core.artifacts import artifact_dir_for
from transcript_view.core.canonical import canonical_json
from transcript_view.core.session import Session

CONTENT = "".join(f"{i:05d} the quick brown fox 日本語\n" for i in range(300))


def env(type_: str, payload: object, id_: str, v: object = 1) -> bytes:
    obj = {
        "id": id_,
        "payload": payload,
        "ts": "2026-01-01T00:00:00.000000Z",
        "type": type_,
        "v": v,
    }
    return canonical_json(obj).encode()


META = env("session-meta", {"app": "hostile"}, "meta")
USER = env("message", {"role": "user", "content": "hello"}, "u1")


def lines(*items: bytes, end: bytes = b"\n") -> bytes:
    return b"".join(item + end for item in items)


def stored_run(directory: Path, name: str = "run.jsonl") -> tuple[Path, Path]:
    """A healthy transcript with one stored artifact; returns (transcript, artifact)."""
    path = directory / name
    with Session.create(path, {"app": "hostile"}, limit=100) as s:
        calls = [
            {"id": "c1", "type": "function", "function": {"name": "fs_read", "arguments": "{}"}}
        ]
        s.append_message("assistant", "reading", tool_calls=calls)
        op = s.append_tool_dispatched("c1", "fs_read", "{}")
        settled = s.settle(op, "c1", CONTENT)
    return path, artifact_dir_for(path) / settled.artifact["file"]


def rename_in_marker(path: Path, artifact: Path, new_name: str) -> None:
    """Point the marker at another name, as an attacker would, keeping the digests consistent.

    The tool message's marker gets the new name and the settle's `result-digest` is
    recomputed over the new content, so what is left to find is the name itself
    (and that the artifact key still names the real file).
    """
    import json

    from transcript_view.core.canonical import data_digest

    rows = [json.loads(line) for line in path.read_bytes().split(b"\n") if line]
    old = f"full result: {artifact.name} sha256"
    new = f"full result: {new_name} sha256"
    for row in rows:
        payload = row["payload"]
        if row["type"] == "message" and old in payload.get("content", ""):
            payload["content"] = payload["content"].replace(old, new)
            content = payload["content"]
        if row["type"] == "tool-settled":
            payload["result-digest"] = data_digest(content)
    path.write_bytes(b"".join(canonical_json(row).encode() + b"\n" for row in rows))


@dataclass(frozen=True)
class Case:
    """One hostile input and what `--check` must say of it."""

    name: str
    what: str
    build: Callable[[Path], Path]
    exit: int
    kinds: tuple[str, ...] = ()
    """Finding kinds that must be present (others may be too, unless `exact`)."""
    exact: bool = True


#: An older Gemini CLI chat (`session-*.json`, OTHER_AGENTS.md): one pretty-printed document.
_GEMINI_CHAT = b"""{
  "sessionId": "8d1f6c2a-0000-4000-8000-000000000001",
  "projectHash": "3f3f3f3f",
  "startTime": "2025-11-02T10:00:00.000Z",
  "lastUpdated": "2025-11-02T10:05:00.000Z",
  "messages": [
    {
      "id": "m1",
      "type": "user",
      "content": "hello"
    }
  ]
}
"""


def _write(directory: Path, data: bytes, name: str = "t.jsonl") -> Path:
    path = directory / name
    path.write_bytes(data)
    return path


def _case_fifo(d: Path) -> Path:
    os.mkfifo(d / "pipe.jsonl")
    return d / "pipe.jsonl"


def _case_symlink(d: Path) -> Path:
    (d / "real").mkdir()
    real, _ = stored_run(d / "real")
    (d / "link.jsonl").symlink_to(real)
    return d / "link.jsonl"


def _artifact_replaced(make: Callable[[Path], None]) -> Callable[[Path], Path]:
    def build(d: Path) -> Path:
        path, artifact = stored_run(d)
        artifact.unlink()
        make(artifact)
        return path

    return build


def _outside_link(a: Path) -> None:
    outside = a.parent.parent / "secret.txt"
    outside.write_text(CONTENT)
    a.symlink_to(outside)


def _inside_link(a: Path) -> None:
    real = a.parent / "real-body.bin"
    real.write_text(CONTENT)
    a.symlink_to(real.name)


def _bad_name(name: str) -> Callable[[Path], Path]:
    def build(d: Path) -> Path:
        path, artifact = stored_run(d)
        rename_in_marker(path, artifact, name)
        return path

    return build


def _invalid_utf8_artifact(d: Path) -> Path:
    """A raw-bytes artifact (invalid UTF-8) written through the store: it verifies."""
    path = d / "bytes.jsonl"
    raw = (b"\xff\xfe binary \x80 junk " * 400).decode("utf-8", "surrogateescape")
    with Session.create(path, {}, limit=100) as s:
        op = s.append_tool_dispatched("c", "t", "{}")
        s.settle(op, "c", raw)
    return path


def _two_markers_one_file(d: Path) -> Path:
    path, _ = stored_run(d)
    data = path.read_bytes().split(b"\n")
    tool_line = data[3]
    with open(path, "ab") as fh:
        fh.write(tool_line.replace(b'"id":"', b'"id":"x', 1) + b"\n")
    return path


def _quoted_marker(d: Path) -> Path:
    path, artifact = stored_run(d)
    quoted = (
        "see [... elided 1 chars (2 bytes total); full result: "
        f"{artifact.name} sha256 {'0' * 64} ...]"
    )
    with open(path, "ab") as fh:
        fh.write(env("message", {"role": "user", "content": quoted}, "q") + b"\n")
    return path


def _ansi_everywhere(d: Path) -> Path:
    nasty = (
        "\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07 \x1b]0;pwned\x07 "
        "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ \x9b31m \x07 a\x08b "
        "over\rwrite [bold red]markup[/] [link=http://x]y[/link] \u202eevil\u202c zero\u200bwidth"
    )
    path = d / "ansi.jsonl"
    with Session.create(path, {"note": nasty}, limit=100) as s:
        s.append_message("user", nasty)
        op = s.append_tool_dispatched("c", "sh", canonical_json({"cmd": nasty}))
        s.settle(op, "c", (nasty + "\n") * 30)
    return path


#: A tool's coloured output with everything else a program can write into it (issue 26):
#: the colours are drawn, the rest stays glyphs. Each line is one hostile form.
SGR_OUTPUT = (
    "\x1b[1m\x1b[46m RUN \x1b[49m\x1b[22m \x1b[36mv4.0.18\x1b[39m\n"
    # OSC 52 (a clipboard write) inside a colour run
    "\x1b[31mred \x1b]52;c;ZXZpbA==\x07 still red\x1b[0m\n"
    # an erase of the screen, a true colour, conceal, blink, black on black
    "\x1b[2Jcleared\n"
    "\x1b[38;2;255;0;0mtrue colour\x1b[0m\n"
    "\x1b[8mconcealed\x1b[28m \x1b[5mblinking\x1b[25m \x1b[30;40mblack on black\x1b[0m\n"
    # an OSC 8 hyperlink in colour
    "\x1b[34m\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\\x1b[39m\n"
)
#: A CSI of 10,000 parameters ending in `m`: no colour, one run of glyphs (its own result,
#: whose 180 rows collapse: `SGR_OUTPUT` stays whole on screen).
HUGE_CSI = "\x1b[" + ";".join(["1"] * 10_000) + "mafter ten thousand params"


def _sgr_reference(d: Path) -> Path:
    """The outputs whole; then a green run across the elision marker of a stored result."""
    path = d / "sgr.jsonl"
    outputs = [SGR_OUTPUT, HUGE_CSI, "\x1b[32m" + CONTENT * 4 + "\x1b[0m tail"]
    with Session.create(path, {"app": "hostile"}, limit=len(HUGE_CSI) + 100) as s:
        for i, output in enumerate(outputs):
            call = f"c{i}"
            calls = [
                {"id": call, "type": "function", "function": {"name": "sh", "arguments": "{}"}}
            ]
            s.append_message("assistant", "running", tool_calls=calls)
            op = s.append_tool_dispatched(call, "sh", "{}")
            s.settle(op, call, output)
    return path


def _huge_line(d: Path) -> Path:
    body = "0123456789abcdef" * (50 * 1024 * 1024 // 16)
    return _write(d, lines(META, env("message", {"role": "tool", "content": body}, "big"), USER))


CASES: list[Case] = [
    # -- transcripts ------------------------------------------------------------------
    Case("empty", "an empty file", lambda d: _write(d, b""), 0),
    Case("blank-lines", "only blank lines", lambda d: _write(d, b"\n\n  \n\r\n"), 0),
    Case(
        "not-json",
        "a file that is not JSON: not a transcript, in one line",
        lambda d: _write(d, b"hello\nworld\n"),
        2,
    ),
    Case(
        "other-jsonl",
        "JSON lines of something else: not a transcript, in one line",
        lambda d: _write(d, b'{"name":"a","n":1}\n{"name":"b","n":2}\n'),
        2,
    ),
    Case(
        "json-document",
        "one JSON document over many lines (not an older Gemini CLI chat): not JSON lines, "
        "in one line",
        lambda d: _write(d, b'{\n  "name": "x",\n  "items": [1, 2]\n}\n', "config.json"),
        2,
    ),
    Case(
        "gemini-json-chat",
        "an older Gemini CLI chat, one JSON document (`session-*.json`): read as its messages",
        lambda d: _write(d, _GEMINI_CHAT, "session-2025-11-02T10-00-8d1f6c2a.json"),
        0,
    ),
    Case(
        "gemini-json-chat-cut",
        "an older Gemini CLI chat cut short: one line saying it does not parse",
        lambda d: _write(d, _GEMINI_CHAT[:-30], "session-2025-11-02T10-00-8d1f6c2a.json"),
        2,
    ),
    Case(
        "not-envelope",
        "JSON that is not an envelope",
        lambda d: _write(d, lines(META, b"[1,2,3]", b'"text"', b'{"no":"type"}', USER)),
        1,
        ("malformed-line",),
    ),
    Case(
        "unknown-v",
        "an unknown envelope version",
        lambda d: _write(d, lines(META, env("message", {}, "x", v=2), USER)),
        1,
        ("malformed-line",),
    ),
    Case(
        "unknown-type",
        "an unknown envelope type (kept and shown)",
        lambda d: _write(d, lines(META, env("from-the-future", {"x": 1}, "f"), USER)),
        0,
    ),
    Case(
        "torn-multibyte",
        "a torn last line ending inside a multi-byte character",
        lambda d: _write(d, lines(META, USER) + env("message", {"content": "日本"}, "t")[:-12]),
        0,
        ("torn-tail",),
    ),
    Case(
        "malformed-middle",
        "malformed lines in the middle",
        lambda d: _write(d, lines(META, b"{oops", USER, b"}", USER.replace(b"u1", b"u2"))),
        1,
        ("malformed-line",),
    ),
    Case(
        "invalid-utf8",
        "invalid UTF-8 inside a line",
        lambda d: _write(d, lines(META, b'{"id":"\xc3\x28","type":"message","v":1}', USER)),
        1,
        ("malformed-line",),
    ),
    Case(
        "invalid-escape",
        "the reference's invalid \\u000\u00e7 escape",
        lambda d: _write(
            d,
            lines(
                META,
                '{"id":"e","payload":{"content":"\\u000ç"},"type":"message","v":1}'.encode(),
                USER,
            ),
        ),
        1,
        ("malformed-line",),
    ),
    Case(
        "duplicate-ids",
        "duplicate envelope ids",
        lambda d: _write(d, lines(META, USER, USER)),
        1,
        ("malformed-line",),
    ),
    Case(
        "settle-unknown",
        "a settle naming an unknown operation",
        lambda d: _write(
            d, lines(META, env("tool-settled", {"op-id": "ghost", "outcome": "completed"}, "s"))
        ),
        1,
        ("malformed-line",),
    ),
    Case(
        "settle-twice",
        "an operation settled twice",
        lambda d: _write(
            d,
            lines(
                META,
                env("tool-dispatched", {"call-id": "c", "tool": "t", "arguments": "{}"}, "op"),
                env("message", {"role": "tool", "content": "r", "tool-call-id": "c"}, "m"),
                env("tool-settled", {"op-id": "op", "outcome": "completed"}, "s1"),
                env("tool-settled", {"op-id": "op", "outcome": "failed"}, "s2"),
            ),
        ),
        1,
        ("malformed-line",),
    ),
    Case("crlf", "CRLF line endings", lambda d: _write(d, lines(META, USER, end=b"\r\n")), 0),
    Case("huge-line", "a 50 MB line", _huge_line, 0),
    Case("path-directory", "a PATH that is a directory", lambda d: d, 2),
    Case("path-fifo", "a PATH that is a fifo (must not block)", _case_fifo, 2),
    Case("path-symlink", "a PATH that is a symlink to a transcript", _case_symlink, 0),
    # -- markers and artifacts ------------------------------------------------------------
    Case(
        "name-slash",
        "a marker naming ../etc/passwd",
        _bad_name("../etc/passwd"),
        1,
        ("unsafe-name", "metadata-mismatch"),
    ),
    Case(
        "name-backslash",
        "a marker naming ..\\x.txt",
        _bad_name("..\\x.txt"),
        1,
        ("unsafe-name", "metadata-mismatch"),
    ),
    Case(
        "name-dotdot",
        "a marker naming ..",
        _bad_name(".."),
        1,
        ("unsafe-name", "metadata-mismatch"),
    ),
    Case(
        "name-absolute",
        "a marker naming /etc/passwd",
        _bad_name("/etc/passwd"),
        1,
        ("unsafe-name", "metadata-mismatch"),
    ),
    Case(
        "name-nul",
        "a marker naming a\\0b.txt",
        _bad_name("a\x00b.txt"),
        1,
        ("unsafe-name", "metadata-mismatch"),
    ),
    Case(
        "name-10000",
        "a marker naming 10,000 characters",
        _bad_name("n" * 10000),
        1,
        ("unsafe-name", "metadata-mismatch"),
    ),
    Case(
        "artifact-directory",
        "an artifact that is a directory",
        _artifact_replaced(lambda a: a.mkdir()),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "artifact-fifo",
        "an artifact that is a fifo (must not block)",
        _artifact_replaced(lambda a: os.mkfifo(a)),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "artifact-device",
        "an artifact that is a device (/dev/zero)",
        _artifact_replaced(lambda a: a.symlink_to("/dev/zero")),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "artifact-symlink-out",
        "a symlink pointing outside the artifact directory",
        _artifact_replaced(_outside_link),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "artifact-symlink-in",
        "a symlink inside the artifact directory (followed)",
        _artifact_replaced(_inside_link),
        0,
        ("orphan-artifact",),
    ),
    Case(
        "artifact-truncated",
        "a truncated artifact (a non-atomic writer crashed)",
        _artifact_replaced(lambda a: a.write_text(CONTENT[:100])),
        1,
        ("size-mismatch",),
    ),
    Case("artifact-invalid-utf8", "an artifact with invalid UTF-8", _invalid_utf8_artifact, 0),
    Case(
        "artifacts-is-a-file",
        "the .artifacts path being a file",
        lambda d: _artifacts_file(d),
        1,
        ("missing-artifact",),
    ),
    Case(
        "two-markers-one-file",
        "two markers naming one file (both verify)",
        _two_markers_one_file,
        0,
    ),
    Case(
        "quoted-marker",
        "marker text inside a user message (quoted, not verified)",
        _quoted_marker,
        0,
    ),
    # -- content ----------------------------------------------------------------------------
    Case(
        "ansi",
        "ANSI CSI/OSC, C1, BEL, backspace, CR, markup, bidi, zero-width",
        _ansi_everywhere,
        0,
    ),
    Case(
        "sgr",
        "a tool's colours (SGR) with OSC 52 inside a run, a screen erase, a true colour, "
        "conceal, black on black, a 10,000-parameter CSI, a run across a marker",
        _sgr_reference,
        0,
    ),
]


# -- Claude Code and Codex ------------------------------------------------------------------


def _claude(d: Path) -> ClaudeSession:
    s = ClaudeSession(d / "projects" / "-proj")
    s.user("go")
    return s


def _claude_other_machine(d: Path) -> Path:
    # The marker's absolute path exists here, outside the session: never opened.
    outside = d / "elsewhere"
    outside.mkdir()
    full = numbered(200)
    (outside / "toolu_01.txt").write_text(full)
    s = _claude(d)
    preview, more = claude_preview(full)
    s.tool_use("toolu_01", "Read", {})
    s.tool_result(
        "toolu_01", persisted_marker("11.7KB", str(outside / "toolu_01.txt"), preview, more)
    )
    return s.write()


def _claude_windows(d: Path) -> Path:
    s = _claude(d)
    s.spill("toolu_01", numbered(200), path_style="windows")
    return s.write()


def _claude_dotdot(d: Path) -> Path:
    s = _claude(d)
    s.spill("toolu_01", numbered(200), write_file=False)
    s.tool_use("toolu_02", "Read", {})
    preview, more = claude_preview(numbered(200))
    s.tool_result("toolu_02", persisted_marker("11.7KB", "/x/tool-results/..", preview, more))
    s.tool_use("toolu_03", "Read", {})
    s.tool_result("toolu_03", persisted_marker("11.7KB", "../../../etc/passwd", preview, more))
    s.tool_results.mkdir(parents=True, exist_ok=True)
    (s.tool_results / "toolu_01.txt").write_text(numbered(200))
    return s.write()


def _claude_sidecar(make: Callable[[Path, Path], None]) -> Callable[[Path], Path]:
    def build(d: Path) -> Path:
        s = _claude(d)
        s.spill("toolu_01", numbered(200), write_file=False)
        s.tool_results.mkdir(parents=True)
        make(s.tool_results / "toolu_01.txt", d)
        return s.write()

    return build


def _symlink_out(sidecar: Path, d: Path) -> None:
    (d / "outside.txt").write_text(numbered(200))
    sidecar.symlink_to(d / "outside.txt")


def _claude_not_json(d: Path) -> Path:
    s = _claude(d)
    s.spill("toolu_01", "{{ not json " + numbered(200), sidecar="toolu_01.json")
    return s.write()


def _claude_ansi(d: Path) -> Path:
    s = _claude(d)
    nasty = "\x1b[2J\x1b]52;c;SGVsbG8=\x07 \u202e evil \x9b31m [bold]x[/bold]\n"
    s.spill("toolu_01", nasty * 300)
    s.user(nasty)
    return s.write()


def _claude_sgr(d: Path) -> Path:
    """Coloured output, whole and spilled: the 2 KB preview ends inside an SGR sequence."""
    s = _claude(d)
    for tid, output in (("toolu_00", SGR_OUTPUT), ("toolu_02", HUGE_CSI)):
        s.tool_use(tid, "Bash", {"command": "npx vitest"})
        s.tool_result(tid, output)
    # 13 characters a unit, no LF: the preview's 2,000 end 11 into one, at "␛[0".
    s.spill("toolu_01", "\x1b[31mred\x1b[0m " * 500, name="Bash")
    return s.write()


def _codex_sgr(d: Path) -> Path:
    """Codex cuts by characters: here its notice splits an SGR sequence in two."""
    cut = "Total output lines: 900\n\n\x1b[31mhead part\x1b[3\u20269 chars truncated\u20261mtail"
    return write_codex_rollout(d / "rollout.jsonl", [SGR_OUTPUT, HUGE_CSI, cut + " part\x1b[0m"])


def _codex_ansi(d: Path) -> Path:
    nasty = "\x1b[31mred\x1b[0m \u202e\u2066 \x07"
    return write_codex_rollout(d / "rollout.jsonl", [nasty + codex_lines_omitted(300)])


def _claude_quoted_markers(d: Path) -> Path:
    """A Read of a Markdown document about Claude Code's markers, and a Grep through it:
    every marker text quoted (whole, on lines of their own, in sentences), none a marker."""
    preview, more = claude_preview(numbered(40))
    forms = [
        persisted_marker("2.3KB", "/x/tool-results/toolu_01.txt", preview, more),
        saved_marker("/x/tool-results/toolu_02.txt"),
        mcp_marker(23891, "/x/tool-results/toolu_03.json"),
        "... [48,112 characters truncated] ...",
        "[Old tool result content cleared]",
        "[Omitted long matching line]",
    ]
    doc = "# What the model saw\n\n"
    for form in forms:
        doc += f"When it happens, the model sees `{form}` instead.\n\n```\n{form}\n```\n\n"
    s = _claude(d)
    s.tool_use("toolu_01", "Read", {"file_path": "notes.md"})
    s.tool_result("toolu_01", "".join(f"{n:6d}\t{t}\n" for n, t in enumerate(doc.split("\n"), 1)))
    s.tool_use("toolu_02", "Grep", {"pattern": "truncated|cleared"})
    # (A line that is only `[Omitted long matching line]` would come out of ripgrep as its
    # own omission would: no reader can tell them apart, so it is not grepped here.)
    grep = [
        f"notes.md:{n}:{t}"
        for n, t in enumerate(doc.split("\n"), 1)
        if "]" in t and not t.startswith("[Omitted")
    ]
    s.tool_result("toolu_02", "\n".join(grep))
    return s.write()


def _codex_quoted_notices(d: Path) -> Path:
    doc = (
        "Codex cuts the middle: `[... omitted 3 of 9 lines ...]` or "
        "[... output truncated to fit 10240 bytes ...] between head and tail,\n"
        "     1\t[omitted 3 text items ...]\n"
        "and the output then starts with\nTotal output lines: 12\n\nas its first line.\n"
    )
    return write_codex_rollout(d / "rollout.jsonl", [doc])


CASES += [
    Case(
        "claude-other-machine",
        "a Claude Code marker whose absolute path exists here, "
        "outside the session (never followed)",
        _claude_other_machine,
        1,
        ("missing-artifact",),
    ),
    Case("claude-windows-path", "a Claude Code marker with a Windows path", _claude_windows, 0),
    Case(
        "claude-dotdot",
        "Claude Code marker paths ending in `..` and climbing with `../`",
        _claude_dotdot,
        1,
        ("missing-artifact", "unsafe-name"),
    ),
    Case(
        "claude-sidecar-fifo",
        "a Claude Code sidecar that is a fifo",
        _claude_sidecar(lambda p, d: os.mkfifo(p)),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "claude-sidecar-symlink-out",
        "a Claude Code sidecar that is a symlink out of tool-results/",
        _claude_sidecar(_symlink_out),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "claude-json-not-json",
        "a `.json` sidecar that is not JSON",
        _claude_not_json,
        0,
        ("sidecar-not-json",),
    ),
    Case(
        "claude-ansi",
        "control sequences, bidi and markup in a Claude Code session",
        _claude_ansi,
        0,
    ),
    Case("codex-ansi", "control sequences in a Codex rollout's cut output", _codex_ansi, 0),
    Case(
        "claude-sgr",
        "a Claude Code tool's colours (SGR) among other escapes; a preview cut inside one",
        _claude_sgr,
        0,
    ),
    Case(
        "codex-sgr",
        "a Codex output's colours (SGR) among other escapes; a cut notice splitting one",
        _codex_sgr,
        0,
    ),
    Case(
        "claude-quoted-markers",
        "a Read of a Markdown document, and a Grep through it, quoting every Claude Code "
        "marker text: text, not markers",
        _claude_quoted_markers,
        0,
    ),
    Case(
        "codex-quoted-notices",
        "a Codex output quoting the notices that have a place, elsewhere: text, not markers",
        _codex_quoted_notices,
        0,
    ),
]


# -- Qwen Code --------------------------------------------------------------------------------


def _qwen(d: Path) -> QwenSession:
    s = QwenSession(d / ".qwen")
    s.user("go")
    s.assistant(None, [("call_01", "run_shell_command", {"command": "cat big"})], tokens=900)
    return s


def _qwen_other_machine(d: Path) -> Path:
    # The stub's absolute path exists here, outside the project's tool-results/: never opened.
    full = numbered(300)
    outside = d / "elsewhere"
    outside.mkdir()
    (outside / "call_01.txt").write_text(full)
    s = _qwen(d)
    s.home = str(outside)
    record = s.spill("call_01", "run_shell_command", full, file=False)
    text = record["message"]["parts"][0]["functionResponse"]["response"]["output"]
    record["message"]["parts"][0]["functionResponse"]["response"]["output"] = text.replace(
        s.foreign_path("call_01.txt"), str(outside / "call_01.txt")
    )
    return s.write()


def _qwen_dotdot(d: Path) -> Path:
    s = _qwen(d)
    record = s.spill("call_01", "run_shell_command", numbered(300))
    part = record["message"]["parts"][0]["functionResponse"]["response"]
    part["output"] = part["output"].replace("call_01.txt", "..")
    return s.write()


def _qwen_results_file(make: Callable[[Path, Path], None]) -> Callable[[Path], Path]:
    def build(d: Path) -> Path:
        s = _qwen(d)
        s.spill("call_01", "run_shell_command", numbered(300))
        target = s.results / "call_01.txt"
        target.unlink()
        make(target, d)
        return s.write()

    return build


def _qwen_quoted(d: Path) -> Path:
    s = _qwen(d)
    doc = "Qwen Code replies with a stub like this one:\n\n" + qwen_stub(
        "/home/x/.qwen/tmp/ab/tool-results/call_9.txt", kb=3, digest="0" * 64, preview="hi"
    ) + "\n\nand cuts a batch as `Tool output truncated. Persisted tool-output artifact: x`."
    s.tool_result("call_01", "read_file", doc)
    return s.write()


def _qwen_ansi(d: Path) -> Path:
    s = _qwen(d)
    s.spill("call_01", "run_shell_command", SGR_OUTPUT + "\x1b]0;title\x07\u202e" + numbered(300))
    return s.write()


CASES += [
    Case(
        "qwen-other-machine",
        "a Qwen Code stub whose absolute path exists here, outside the project's "
        "tool-results/ (never followed: the file there is taken as gone)",
        _qwen_other_machine,
        0,
    ),
    Case(
        "qwen-dotdot",
        "a Qwen Code stub whose path ends in `..`",
        _qwen_dotdot,
        1,
        ("unsafe-name",),
    ),
    Case(
        "qwen-result-fifo",
        "a Qwen Code result file that is a fifo",
        _qwen_results_file(lambda p, d: os.mkfifo(p)),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "qwen-result-symlink-out",
        "a Qwen Code result file that is a symlink out of tool-results/",
        _qwen_results_file(_symlink_out),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "qwen-quoted-stub",
        "a Qwen Code result quoting a stub and a cut mid-text: text, not markers",
        _qwen_quoted,
        0,
    ),
    Case("qwen-ansi", "control sequences in a Qwen Code stub's preview", _qwen_ansi, 0),
]


# -- Gemini CLI -------------------------------------------------------------------------------

_GCALL = "run_shell_command-1"


def _gemini(d: Path) -> tuple[GeminiSession, dict[str, object]]:
    s = GeminiSession(d / ".gemini" / "tmp" / "proj")
    s.user("go")
    m = s.gemini("running", [(_GCALL, "run_shell_command", {"command": "cat big"})], tokens=900)
    return s, m


def _gemini_other_machine(d: Path) -> Path:
    # The marker's absolute path exists here, outside the session's tool-outputs/.
    full = numbered(300)
    outside = d / "elsewhere"
    outside.mkdir()
    (outside / f"{_GCALL}.txt").write_text(full)
    s, m = _gemini(d)
    s.home = str(outside)
    s.spill(m, _GCALL, full, file=False)
    return s.write()


def _gemini_dotdot(d: Path) -> Path:
    s, m = _gemini(d)
    s.spill(m, _GCALL, numbered(300))
    for line in s.lines:
        for call in line.get("toolCalls", ()) if isinstance(line, dict) else ():
            for part in call.get("result", ()):
                response = part["functionResponse"]["response"]
                response["output"] = response["output"].replace(f"{_GCALL}.txt", "..", 1)
    return s.write()


def _gemini_outputs_file(make: Callable[[Path, Path], None]) -> Callable[[Path], Path]:
    def build(d: Path) -> Path:
        s, m = _gemini(d)
        s.spill(m, _GCALL, numbered(300))
        target = s.outputs / f"{_GCALL}.txt"
        target.unlink()
        make(target, d)
        return s.write()

    return build


def _gemini_quoted(d: Path) -> Path:
    s, _ = _gemini(d)
    doc = "Gemini CLI cuts a shell output like this:\n\n" + gemini_truncated(
        numbered(300), "/home/x/.gemini/tmp/p/tool-outputs/session-1/shell_1.txt", 2000
    ) + "\n\nand masks an old one with `<tool_output_masked>`."
    m = s.gemini("reading", [("read_file-2", "read_file", {"path": "doc.md"})], tokens=950)
    s.result(m, "read_file-2", doc)
    return s.write()


CASES += [
    Case(
        "gemini-other-machine",
        "a Gemini CLI marker whose absolute path exists here, outside the session's "
        "tool-outputs/ (never followed)",
        _gemini_other_machine,
        1,
        ("missing-artifact",),
    ),
    Case(
        "gemini-dotdot",
        "a Gemini CLI marker path ending in `..` (its file, named by nothing else, an orphan)",
        _gemini_dotdot,
        1,
        ("orphan-artifact", "unsafe-name"),
    ),
    Case(
        "gemini-output-fifo",
        "a Gemini CLI output file that is a fifo",
        _gemini_outputs_file(lambda p, d: os.mkfifo(p)),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "gemini-output-symlink-out",
        "a Gemini CLI output file that is a symlink out of tool-outputs/",
        _gemini_outputs_file(_symlink_out),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "gemini-quoted-marker",
        "a Gemini CLI result quoting a truncation mid-text: text, not a marker",
        _gemini_quoted,
        0,
    ),
]

# -- OpenCode ---------------------------------------------------------------------------------


def _opencode(d: Path) -> OpenCodeSession:
    s = OpenCodeSession(d / "opencode")
    s.user("go")
    s.message("assistant")
    s.step(input_tokens=900)
    return s


def _opencode_other_machine(d: Path) -> Path:
    # The marker's absolute path exists here, outside OpenCode's tool-output/: never opened.
    full = numbered(3000)
    outside = d / "elsewhere"
    outside.mkdir()
    (outside / "tool_1ee5").write_text(full)
    s = _opencode(d)
    s.tool("bash", {"command": "cat big"}, full, at=str(outside / "tool_1ee5"), save=False)
    s.finish()
    return s.write()


def _opencode_dotdot(d: Path) -> Path:
    s = _opencode(d)
    s.tool("bash", {"command": "cat big"}, numbered(3000), at=f"{d}/opencode/tool-output/..")
    s.finish()
    return s.write()


def _opencode_output_file(make: Callable[[Path, Path], None]) -> Callable[[Path], Path]:
    def build(d: Path) -> Path:
        s = _opencode(d)
        name = s.tool("bash", {"command": "cat big"}, numbered(3000), save=False)
        s.finish()
        path = s.write()
        make(s.outputs / name, d)
        return path

    return build


def _opencode_quoted(d: Path) -> Path:
    s = _opencode(d)
    cut = opencode_truncate(numbered(3000), "/home/x/.local/share/opencode/tool-output/tool_9")
    s.raw_tool("read", f"OpenCode cuts an output like this:\n\n{cut}\n\nand that is all.")
    s.raw_tool("bash", "...output truncated... is what the shell says, then its path")
    s.finish()
    return s.write()


def _opencode_ansi(d: Path) -> Path:
    s = _opencode(d)
    s.tool("bash", {"command": "make"}, SGR_OUTPUT + "\x1b]0;title\x07\u202e" + numbered(3000))
    s.finish()
    return s.write()


def _opencode_not_sqlite(d: Path) -> Path:
    db = d / "opencode.db"
    db.write_text("version = 1\nthis is not a database\n")
    return db


def _opencode_not_opencodes(d: Path) -> Path:
    import sqlite3

    db = d / "opencode.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE session (id TEXT PRIMARY KEY)")
    conn.execute("INSERT INTO session VALUES ('ses_1')")
    conn.commit()
    conn.close()
    return db / "ses_1"


def _opencode_bad_part(d: Path) -> Path:
    import sqlite3

    s = _opencode(d)
    s.text("fine")
    s.finish()
    path = s.write()
    conn = sqlite3.connect(s.db)
    conn.execute("UPDATE part SET data = '{\"type\": \"text\", \"text\": ' "
                 "WHERE data LIKE '%fine%'")  # fmt: skip
    conn.commit()
    conn.close()
    return path


CASES += [
    Case(
        "opencode-other-machine",
        "an OpenCode cut whose absolute path exists here, outside tool-output/ (never "
        "followed: its file, written long ago, is taken as expired)",
        _opencode_other_machine,
        0,
    ),
    Case(
        "opencode-dotdot",
        "an OpenCode cut whose path ends in `..`",
        _opencode_dotdot,
        1,
        ("unsafe-name",),
    ),
    Case(
        "opencode-output-fifo",
        "an OpenCode tool-output file that is a fifo",
        _opencode_output_file(lambda p, d: os.mkfifo(p)),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "opencode-output-symlink-out",
        "an OpenCode tool-output file that is a symlink out of tool-output/",
        _opencode_output_file(_symlink_out),
        1,
        ("unreadable-artifact",),
    ),
    Case(
        "opencode-quoted-marker",
        "an OpenCode output quoting a cut mid-text: text, not a marker",
        _opencode_quoted,
        0,
    ),
    Case("opencode-ansi", "control sequences in an OpenCode cut's kept lines", _opencode_ansi, 0),
    Case(
        "opencode-not-sqlite",
        "a file named opencode.db that is not a SQLite database",
        _opencode_not_sqlite,
        2,
    ),
    Case(
        "opencode-not-opencodes",
        "a session below a SQLite database without OpenCode's message and part tables",
        _opencode_not_opencodes,
        2,
    ),
    Case(
        "opencode-bad-part",
        "an OpenCode part whose data is cut-off JSON: a finding on its line",
        _opencode_bad_part,
        1,
        ("malformed-line",),
        False,
    ),
]

# -- Copilot CLI ------------------------------------------------------------------------------

_COPILOT_FILE = "1796412667518-copilot-tool-output-3704-8d7d30e5-9111-4e99-8d0c-4a9da33db938.txt"


def _copilot(d: Path) -> CopilotSession:
    s = CopilotSession(d / ".copilot")
    s.started()
    s.user("go")
    s.call(900)
    s.assistant("running", [("call_1", "bash", {"command": "cat big"})])
    return s


def _copilot_other_machine(d: Path) -> Path:
    # The marker's absolute path exists here (a temp folder): it is never opened.
    outside = d / "tmp"
    outside.mkdir()
    (outside / _COPILOT_FILE).write_text(numbered(3000))
    s = _copilot(d)
    s.spilled("call_1", numbered(3000), _COPILOT_FILE, tmp=str(outside))
    return s.write()


def _copilot_quoted(d: Path) -> Path:
    s = _copilot(d)
    text = copilot_too_large(numbered(3000), f"/tmp/{_COPILOT_FILE}")
    s.result("call_1", f"Copilot CLI answers a big output with:\n\n{text}\n\nand that is all.")
    return s.write()


def _copilot_ansi(d: Path) -> Path:
    s = _copilot(d)
    s.spilled("call_1", SGR_OUTPUT + "\x1b]0;title\x07\u202e" + numbered(3000), _COPILOT_FILE)
    return s.write()


def _copilot_nuls(d: Path) -> Path:
    s = _copilot(d)
    s.result("call_1", "ok")
    return s.write(tail=b"\x00" * 4096)


def _copilot_run_together(d: Path) -> Path:
    s = _copilot(d)
    s.result("call_1", "ok")
    s.call(950)
    s.assistant("done")
    lines = s.text().split(b"\n")  # [..., result, turn start, usage, message, ""]
    lines[-5] = lines[-5][:50] + lines[-4]  # the result cut short, the turn run into it
    del lines[-4]
    s.path.parent.mkdir(parents=True, exist_ok=True)
    s.path.write_bytes(b"\n".join(lines))
    return s.path


CASES += [
    Case(
        "copilot-other-machine",
        "a Copilot CLI large-output marker whose path exists here (a temp folder): never "
        "opened, the marker said",
        _copilot_other_machine,
        0,
    ),
    Case(
        "copilot-quoted-marker",
        "a Copilot CLI result quoting a large-output marker mid-text: text, not a marker",
        _copilot_quoted,
        0,
    ),
    Case("copilot-ansi", "control sequences in a Copilot CLI marker's preview", _copilot_ansi, 0),
    Case(
        "copilot-nul-tail",
        "a Copilot CLI session ending in NUL bytes (a crash before a write landed)",
        _copilot_nuls,
        0,
        (),
        False,
    ),
    Case(
        "copilot-run-together",
        "a Copilot CLI event cut short with the next run into it",
        _copilot_run_together,
        1,
        ("malformed-line",),
    ),
]

#: Cases whose transcript quotes marker texts: no marker, no finding, no badge.
QUOTED_MARKERS = (
    "claude-quoted-markers",
    "codex-quoted-notices",
    "qwen-quoted-stub",
    "gemini-quoted-marker",
    "opencode-quoted-marker",
    "copilot-quoted-marker",
)


def _codex_zst(damage: Callable[[bytes], bytes]) -> Callable[[Path], Path]:
    """A compressed rollout (as Codex compresses one a week idle), damaged by `damage`."""

    def build(d: Path) -> Path:
        from _zstd import compress_file

        rollout = write_codex_rollout(
            d / "rollout.jsonl", [numbered(3000) for _ in range(3)] + [codex_lines_omitted(300)]
        )
        packed = compress_file(rollout)
        packed.write_bytes(damage(packed.read_bytes()))
        return packed

    return build


def _codex_zst_bomb(d: Path) -> Path:
    from _zstd import bomb

    first = write_codex_rollout(d / "rollout.jsonl", []).read_bytes().split(b"\n")[0] + b"\n"
    (d / "rollout.jsonl").unlink()
    path = d / "rollout.jsonl.zst"
    path.write_bytes(bomb(256 << 20, first))  # 256 MiB from a few kilobytes
    return path


CASES += [
    Case(
        "codex-zst-truncated",
        "a compressed rollout cut short",
        _codex_zst(lambda b: b[:-64]),
        1,
        ("unreadable-compressed",),
    ),
    Case(
        "codex-zst-bad-header",
        "a compressed rollout whose first frame's header is corrupt (not one line readable)",
        _codex_zst(lambda b: b[:4] + b"\xff" * 32 + b[36:]),
        2,
    ),
    Case(
        "codex-zst-trailing",
        "a compressed rollout with bytes after its last frame",
        _codex_zst(lambda b: b + b"not zstd"),
        1,
        ("unreadable-compressed",),
    ),
    Case(
        "codex-zst-bomb",
        "a zstd bomb: a few kilobytes that decompress to 256 MiB",
        _codex_zst_bomb,
        1,
        ("unreadable-compressed",),
    ),
]


def _artifacts_file(d: Path) -> Path:
    path, artifact = stored_run(d)
    directory = artifact.parent
    artifact.unlink()
    directory.rmdir()
    directory.write_text("a file where the directory should be")
    return path

"""The viewer on the hostile corpus: it opens, renders and stays inert, and writes nothing.

`test_hostile.py` holds `--check` to every case of `tests/_hostile.py`; this file
holds the interactive viewer to the same cases. A case `--check` refuses with
exit 2 must be refused by the viewer's command line too, with one clear line
on stderr (and a fifo must not block it); every other case must open, let all
its workers finish and render every row without an exception.

Nothing sleeps: each test waits on the app's workers (`conftest.settle`).
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _hostile import CASES, QUOTED_MARKERS, Case
from _pilot import settle, sync
from _support import EXAMPLES
from rich.style import Style
from textual.strip import Strip

from transcript_view.cli import main
from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.transcript_view import TranscriptView

SIZE = (120, 40)

#: Characters that must never reach the terminal raw: C0 controls but TAB,
#: DEL, C1 controls, bidi embeddings/overrides/isolates/marks.
FORBIDDEN = (
    {chr(c) for c in range(0x20) if c != 0x09}
    | {"\x7f"}
    | {chr(c) for c in range(0x80, 0xA0)}
    | {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)}
)


def run_cli(argv: list[str]) -> tuple[int | None, str, str]:
    """`transcript-view ARGV` in-process, in a thread with a watchdog against hangs."""
    out, err = io.StringIO(), io.StringIO()
    result: list[int] = []

    def target() -> None:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result.append(main(argv))

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), f"transcript-view {argv} hung"
    return (result[0] if result else None), out.getvalue(), err.getvalue()


def render_all(view: TranscriptView) -> list[Strip]:
    """Every row of the document on show, drawn through the Line API a page at a time.

    The view is scrolled over its whole virtual height and `render_line` is called
    for each screen line, exactly as the compositor would; each document row is
    kept once (the last page overlaps the one before).
    """
    height = max(view.scrollable_content_region.height, 1)
    total = view.doc.total_rows
    strips: dict[int, Strip] = {}
    top = 0
    while top < total:
        view.scroll_to(y=top, animate=False, immediate=True)
        first = int(view.scroll_y)
        for y in range(height):
            row = first + y
            if row < total and row not in strips:
                strips[row] = view.render_line(y)
        top += height
    view.scroll_to(y=0, animate=False, immediate=True)
    return [strips[i] for i in sorted(strips)]


def strip_text(strip: Strip) -> str:
    return "".join(seg.text for seg in strip)


# -- every case ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_viewer_on_hostile_input(case: Case, tmp_path: Path) -> None:
    path = case.build(tmp_path)
    if case.exit == 2 and not path.is_dir():
        code, out, err = run_cli([str(path)])
        assert code == 2
        assert out == ""
        assert err.startswith("transcript-view: ") and err.count("\n") == 1, err
        assert "Traceback" not in err
        return
    asyncio_run_case(path, case)


@sync
async def asyncio_run_case(path: Path, case: Case) -> None:
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not any(w.state.name in ("PENDING", "RUNNING") for w in app.workers)
        screen = app.screen
        if path.is_dir():
            # `--check DIR` is a usage error, but the viewer opens a directory's listing.
            from transcript_view.viewer.screens.listing import ListingScreen

            assert isinstance(screen, ListingScreen)
            return
        assert isinstance(screen, TranscriptScreen)
        assert screen.error is None
        view = screen.view
        strips = render_all(view)
        assert len(strips) == view.doc.total_rows
        texts = [strip_text(s) for s in strips]
        for text in texts:
            assert not FORBIDDEN & set(text), repr(text)
        for strip in strips:  # a style from a file never links, hides or flashes
            for seg in strip:
                style = seg.style
                assert style is None or not (
                    style.link or style.conceal or style.blink or style.blink2
                ), seg
        assert screen.header.phase == "" or case.exit != 0
        # What the layout counts is what a build shows, for every block of every case.
        for doc in (screen.view.file_doc, screen.view.model_doc):
            if doc is not None:
                for i in range(doc.source.available()):
                    built = doc.source.build(i).count
                    assert doc.source.build(i, count_only=True).count == built, (case.name, i)
        if case.name == "ansi":
            check_ansi_rendering(strips, texts)
        if case.name in ("sgr", "claude-sgr", "codex-sgr"):
            check_sgr_rendering(case.name, strips, texts)
        if case.name in QUOTED_MARKERS:
            doc = view.doc
            kinds = {r.kind for i in range(doc.total_rows) if (r := doc.row(i)) is not None}
            assert "marker" not in kinds and screen.header.markers == 0
            quoted = {
                "qwen-quoted-stub": "Persisted tool-output artifact: x`.",
                "gemini-quoted-marker": "and masks an old one with `<tool_output_masked>`.",
                "opencode-quoted-marker": "is what the shell says, then its path",
                "copilot-quoted-marker": "and that is all.",
            }.get(
                case.name, "[Old tool result content cleared]"
            )
            assert quoted in "\n".join(texts) or "codex" in case.name
        # The model view builds and renders too: the next call's, then (issue 27) the
        # last line's call and the call before it.
        await pilot.press("m")
        await settle(pilot)
        _model_view_renders(screen, case.name)
        if view.doc is screen.view.model_doc:
            await pilot.press("m")
            await settle(pilot)
        await pilot.press("G", "M", "left_square_bracket")
        await settle(pilot)
        _model_view_renders(screen, case.name)
    assert app.return_code in (None, 0)


def _model_view_renders(screen: TranscriptScreen, name: str) -> None:
    """The model view on show renders nothing a file could smuggle in, and its counts are
    its builds'."""
    view = screen.view
    doc = screen.view.model_doc
    if doc is None or view.doc is not doc:
        return
    for text in map(strip_text, render_all(view)):
        assert not FORBIDDEN & set(text), repr(text)
    for i in range(doc.source.available()):
        built = doc.source.build(i).count
        assert doc.source.build(i, count_only=True).count == built, (name, "model", i)


def check_ansi_rendering(strips: list[Strip], texts: list[str]) -> None:
    """Escapes are shown as glyphs, markup stays literal text, nothing becomes a link."""
    joined = "\n".join(texts)
    assert "[bold red]markup[/]" in joined
    assert "[link=http://x]y[/link]" in joined
    assert "␛[31mred␛[0m" in joined and "␛]52;c;ZXZpbA==␇" in joined
    assert "⟨009B⟩" in joined and "⟨202E⟩evil⟨202C⟩" in joined and "zero⟨200B⟩width" in joined
    assert "over␍write" in joined and "a␈b" in joined
    for strip in strips:
        for seg in strip:
            style = seg.style
            assert style is None or not style.link, seg


def check_sgr_rendering(name: str, strips: list[Strip], texts: list[str]) -> None:
    """A tool's colours are drawn and their sequences gone; every other escape is glyphs.

    Around a marker each piece is drawn on its own: a sequence the marker cuts in two
    is text on both sides, and a colour ends at the marker row.
    """
    joined = "\n".join(texts)
    for sgr in ("1m", "46m", "49m", "36m", "31m", "0m", "38;2;255;0;0m", "8m", "30;40m", "34m"):
        assert "␛[" + sgr not in joined, sgr
    for shown in (
        " RUN  v4.0.18",
        "red ␛]52;c;ZXZpbA==␇ still red",
        "␛[2Jcleared",
        "true colour",
        "concealed blinking black on black",
        "␛]8;;http://evil.example␛\\link␛]8;;␛\\",
        "␛[1;1;1;1;",
        ";1;1mafter ten thousand params",
    ):
        assert shown in joined, shown


    def style_of(words: str) -> Style:
        """The style of the first segment drawing `words`."""
        return next(
            seg.style for strip in strips for seg in strip if words in seg.text and seg.style
        )

    assert style_of("RUN").bold and style_of("RUN").bgcolor is not None
    assert style_of("v4.0.18").color not in (None, style_of("RUN").color)
    true = style_of("true colour").color
    assert true is not None and true.get_truecolor() == (255, 0, 0)
    black = style_of("black on black")
    assert black.color != black.bgcolor
    if name == "codex-sgr":  # the notice cuts `ESC [ 3 1 m` after `ESC [ 3`
        assert "head part␛[3" in joined and "\n         1mtail part" in joined
        assert style_of("head part").color != style_of("1mtail part").color  # red, then not
    elif name == "claude-sgr":  # the preview, in red: each "red" its own run
        red = next(seg.style for strip in strips for seg in strip if seg.text == "red")
        assert red is not None and red.color not in (None, style_of("RUN").color)
    else:  # a green run up to the elision marker; the tail after it is plain
        assert style_of("00000 the quick").color not in (None, style_of("RUN").color)
        assert style_of("00299 the quick").color == style_of("RUN").color


# -- file names are never markup -------------------------------------------------------------

MARKUP_NAME = "[bold red]evil[link=http:x]y[reset] \u202eexe"  # no "/": not in a file name


@sync
async def test_header_and_toasts_never_parse_markup_from_the_file_name(tmp_path: Path) -> None:
    directory = tmp_path / "[b]dir"
    directory.mkdir()
    src = EXAMPLES / "demo.jsonl"
    path = directory / f"{MARKUP_NAME}.jsonl"
    shutil.copy(src, path)
    shutil.copytree(EXAMPLES / "demo.artifacts", directory / f"{MARKUP_NAME}.artifacts")
    app = TranscriptApp(path)
    shown: list[tuple[str, bool]] = []
    async with app.run_test(size=SIZE) as pilot:
        app.notify = (  # type: ignore[method-assign]
            lambda message, *a, markup=True, **k: shown.append((message, markup))
        )
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        header = screen.header.render().plain
        assert "[bold red]evil[link=http:x]y[reset] ⟨202E⟩exe.jsonl" in header
        # The header's rendered strips carry no link and the literal brackets.
        line = "".join(seg.text for seg in screen.header.render_line(0))
        assert "[bold red]" in line
        # Toasts that quote names: the pager on a marker whose artifact is now a directory.
        await pilot.press("n")
        art_dir = directory / f"{MARKUP_NAME}.artifacts"
        for f in art_dir.iterdir():
            f.unlink()
            f.mkdir()
        await pilot.press("e", "c")
        assert shown and all(markup is False for _, markup in shown)
        # The palette opens and lists our commands; the title is ours, not the file's.
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert app.title == "transcript-view"
        await pilot.press("escape")
        await pilot.pause()
    # A name that cannot be opened is quoted in a toast without markup too.
    assert app.return_code in (None, 0)


# -- read-only -------------------------------------------------------------------------------


def tree_state(root: Path) -> dict[str, tuple[int, int, int, bytes]]:
    """Every name under `root` (recursively, lstat): mode, size, mtime_ns, and file bytes."""
    state: dict[str, tuple[int, int, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            is_file = p.is_file() and not p.is_symlink()
            state[str(p.relative_to(root))] = (
                st.st_mode,
                st.st_size,
                st.st_mtime_ns,
                p.read_bytes() if is_file else b"",
            )
    return state


def build_session(root: Path) -> Path:
    """Copies of both examples with their artifacts, plus an interrupted store's leftover."""
    root.mkdir()
    for stem in ("demo", "broken"):
        shutil.copy2(EXAMPLES / f"{stem}.jsonl", root / f"{stem}.jsonl")
        shutil.copytree(EXAMPLES / f"{stem}.artifacts", root / f"{stem}.artifacts")
    (root / "demo.artifacts" / ".tmp-x.txt.1.ab.partial").write_bytes(b"half a result\n")
    return root


WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


@contextlib.contextmanager
def no_writes(monkeypatch: pytest.MonkeyPatch, root: Path) -> Iterator[list[str]]:
    """Record every open of a path under `root` with a write flag or a writing mode."""
    writes: list[str] = []
    real_os_open = os.open
    real_open = builtins.open

    def inside(path: Any) -> bool:
        try:
            return Path(os.fspath(path)).resolve().is_relative_to(root.resolve())
        except (TypeError, ValueError, OSError):
            return False

    def guarded_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & WRITE_FLAGS and inside(path):
            writes.append(f"os.open({path}, {flags:#o})")
        return real_os_open(path, flags, *args, **kwargs)

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | os.PathLike) and set(mode) & set("wax+") and inside(file):
            writes.append(f"open({file}, {mode!r})")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded_os_open)
    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)
    yield writes


def fd_modes(root: Path) -> dict[str, int]:
    """Access mode (O_RDONLY/O_WRONLY/O_RDWR) of every fd this process holds under `root`."""
    modes: dict[str, int] = {}
    real = str(root.resolve())
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            with builtins.open(f"/proc/self/fdinfo/{fd}") as fh:
                info = fh.read()
        except OSError:
            continue
        if target.startswith(real):
            flags = next(int(x.split()[1], 8) for x in info.splitlines() if x.startswith("flags"))
            modes[target] = flags & os.O_ACCMODE
    return modes


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="needs /proc")
def test_a_whole_viewer_session_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = build_session(tmp_path / "session")
    before = tree_state(root)
    calls: list[list[str]] = []
    monkeypatch.setattr(
        "transcript_view.viewer.pager.subprocess.call", lambda argv: calls.append(argv) or 0
    )
    monkeypatch.setattr("transcript_view.viewer.pager.shutil.which", lambda name: name)
    monkeypatch.setattr("transcript_view.viewer.pager.wait_for_enter", lambda: True)

    @contextlib.contextmanager
    def fake_suspend(self: TranscriptApp) -> Iterator[None]:
        yield

    monkeypatch.setattr(TranscriptApp, "suspend", fake_suspend)
    held: list[dict[str, int]] = []
    with no_writes(monkeypatch, root) as writes:
        scripted_session(root / "demo.jsonl", held, calls)
        scripted_broken(root / "broken.jsonl", held)
        code, _, _ = run_cli(["--check", str(root / "demo.jsonl"), str(root / "broken.jsonl")])
        assert code == 1  # broken has errors
        code, _, _ = run_cli(["--check", "--json", str(root / "demo.jsonl")])
        assert code == 0
    assert writes == []
    assert calls and calls[0][-1].startswith(str(root / "demo.artifacts"))
    # Every descriptor the viewer held under the session directory was read-only.
    seen = {path: mode for modes in held for path, mode in modes.items()}
    assert any(p.endswith(".jsonl") for p in seen) and any(".artifacts/" in p for p in seen)
    assert set(seen.values()) == {os.O_RDONLY}, seen
    assert tree_state(root) == before, "the viewer changed or created something"


@sync
async def scripted_session(path: Path, held: list[dict[str, int]], calls: list[list[str]]) -> None:
    """Open, expand, open an artifact, search, orphans (open one), model view, follow, pager."""
    from transcript_view.viewer.fileview import ArtifactScreen
    from transcript_view.viewer.screens.orphans import OrphansScreen

    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.view
        # Expand a collapsed message.
        doc = view.doc
        more = next(i for i in range(doc.total_rows) if (r := doc.row(i)) and r.kind == "more")
        before = doc.total_rows
        view.set_cursor(more)
        await pilot.press("enter")
        assert doc.total_rows > before
        # Open the artifact inline.
        await pilot.press("home", "n", "enter")
        await settle(pilot)
        assert screen.artifacts
        held.append(fd_modes(path.parent))
        # Search.
        await pilot.press("slash", *"offset", "enter")
        await settle(pilot)
        assert view.hits
        await pilot.press("escape")
        # Orphans: the leftover partial write; open it.
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, OrphansScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ArtifactScreen)
        held.append(fd_modes(path.parent))
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        # Model view and back.
        await pilot.press("m")
        await settle(pilot)
        assert view.doc.view == "model"
        await pilot.press("m")
        # Follow on, one poll with nothing appended, follow off.
        await pilot.press("f")
        screen.action_poll()
        await settle(pilot)
        await pilot.press("f")
        # The pager (monkeypatched), on the first marker.
        await pilot.press("home", "n", "e")
        await settle(pilot)
        assert calls
        held.append(fd_modes(path.parent))


@sync
async def scripted_broken(path: Path, held: list[dict[str, int]]) -> None:
    """The broken example: step through problems, open the orphan inline in its screen."""
    app = TranscriptApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await pilot.press("p", "p", "p")
        await pilot.press("home", "n", "n", "n", "enter")  # the mismatched artifact opens
        await settle(pilot)
        held.append(fd_modes(path.parent))
        render_all(screen.view)

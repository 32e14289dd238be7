"""Snapshots: what a person sees, pinned as SVG and grouped by feature.

Every snapshot waits for all workers (index, analysis, hashing) before the
picture is taken, shows no clock and no absolute path, and is taken at a fixed
size (120x40 for the transcript screen, 100x30 for a screen on its own), so it
is the same on every machine. Update with
`python3 dev.py test tests/snapshots --snapshot-update`, then look at every SVG
that changed before committing it.
"""

from __future__ import annotations

from typing import Any

import pytest
from _pilot import settle
from _runs import BADGE_CASES
from _screen_apps import SCREEN_SIZE, ScreenApp, orphans_app
from _support import EXAMPLES, REFERENCE
from textual.pilot import Pilot

from transcript_view.viewer.app import TranscriptApp
from transcript_view.viewer.fileview import SEEN, UNSEEN, ArtifactScreen
from transcript_view.viewer.main_screen import TranscriptScreen
from transcript_view.viewer.screens import HelpScreen, ListingScreen, OrphansScreen

SIZE = (120, 40)


def screen_of(pilot: Pilot[Any]) -> TranscriptScreen:
    screen = pilot.app.screen
    assert isinstance(screen, TranscriptScreen)
    return screen


async def settled(pilot: Pilot[Any]) -> None:
    await settle(pilot)


async def _open_demo_artifact(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("n", "enter")
    await settle(pilot)


class TestTranscript:
    """The transcript screen as it opens, and at its first problem."""

    def test_demo_opened(self, snap_compare: Any) -> None:
        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=settled)

    def test_broken_example_at_its_first_problem(self, snap_compare: Any) -> None:
        async def first_problem(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("p")

        app = TranscriptApp(EXAMPLES / "broken.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=first_problem)


class TestBadges:
    """Every badge a marker can wear, and the one it wears while its file is hashed."""

    @pytest.mark.parametrize("state", BADGE_CASES)
    def test_badge(self, snap_compare: Any, run_factory: Any, state: str) -> None:
        run = run_factory(state)

        async def at_marker(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("n")

        assert snap_compare(TranscriptApp(run.path), terminal_size=SIZE, run_before=at_marker)

    def test_checking(
        self, snap_compare: Any, run_factory: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        run = run_factory("verified")
        monkeypatch.setattr(TranscriptScreen, "_verify", lambda self, *a: None)
        assert snap_compare(TranscriptApp(run.path), terminal_size=SIZE, run_before=settled)


class TestInlineArtifacts:
    """Enter on a marker: the full artifact under it, with what the model saw marked."""

    def test_top(self, snap_compare: Any) -> None:
        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=_open_demo_artifact)

    def test_end(self, snap_compare: Any) -> None:
        async def to_artifact_end(pilot: Pilot[Any]) -> None:
            await _open_demo_artifact(pilot)
            view = screen_of(pilot).view
            doc = view.doc
            kinds = [(r.kind if (r := doc.row(i)) is not None else "")
                     for i in range(doc.total_rows)]  # fmt: skip
            end = kinds.index("art-end")
            view.set_cursor(end, scroll=False)
            view.scroll_cursor_visible(center=True)
            await pilot.pause()

        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=to_artifact_end)

    def test_seen_and_unseen(self, snap_compare: Any, run_factory: Any) -> None:
        """A small artifact whole on screen: the head and tail the model saw, the middle not."""
        run = run_factory("verified")
        assert snap_compare(
            TranscriptApp(run.path), terminal_size=SIZE, run_before=_open_demo_artifact
        )


class TestModelView:
    """`m`: the conversation the model is sent next, compaction and elision applied."""

    @pytest.mark.parametrize("stem", ["compaction", "aging"])
    def test_model_view(self, snap_compare: Any, stem: str) -> None:
        async def model_view(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("m")
            await settle(pilot)

        app = TranscriptApp(REFERENCE / f"{stem}.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=model_view)


class TestSearch:
    """`/`: hits highlighted, the cursor on the first."""

    def test_search(self, snap_compare: Any) -> None:
        async def search(pilot: Pilot[Any]) -> None:
            await settle(pilot)
            await pilot.press("slash", *"offset", "enter")
            await settle(pilot)
            await pilot.press("n")

        app = TranscriptApp(EXAMPLES / "demo.jsonl")
        assert snap_compare(app, terminal_size=SIZE, run_before=search)


class TestOrphans:
    """`o`: files no line names, each with a preview; nothing can be deleted."""

    def test_orphans(self, snap_compare: Any, artifact_dir: Any) -> None:
        app = orphans_app(artifact_dir)
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=settled)

    def test_none(self, snap_compare: Any, tmp_path: Any) -> None:
        d = tmp_path / "empty.artifacts"
        d.mkdir()
        app = ScreenApp(lambda: OrphansScreen(d, []))
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=settled)

    @staticmethod
    async def _open_orphan(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("down", "enter")  # row 1: the regular orphan (".tmp-" sorts first)
        await settle(pilot)

    def test_opened(self, snap_compare: Any, artifact_dir: Any) -> None:
        app = orphans_app(artifact_dir)
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=self._open_orphan)

    def test_opened_at_its_end(self, snap_compare: Any, artifact_dir: Any) -> None:
        async def open_and_end(pilot: Pilot[Any]) -> None:
            await self._open_orphan(pilot)
            await pilot.press("end")
            await settle(pilot)

        app = orphans_app(artifact_dir)
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=open_and_end)


class TestArtifactScreen:
    """A file on its own screen, with the regions the model saw and never saw."""

    def test_regions(self, snap_compare: Any, tmp_path: Any) -> None:
        body = b"".join(b"line %02d of the full result\n" % i for i in range(40))
        p = tmp_path / "result.txt"
        p.write_bytes(body)
        head, tail = 8 * 28 + 10, 5 * 28
        end = len(body)
        regions = [(0, head, SEEN), (head, end - tail, UNSEEN), (end - tail, end, SEEN)]
        app = ScreenApp(lambda: ArtifactScreen(p, "result.txt", regions=regions))
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=settled)


class TestListing:
    """A directory: its transcripts with counts, and artifact directories whose transcript
    is gone."""

    def test_listing(self, snap_compare: Any, transcripts_dir: Any) -> None:
        app = ScreenApp(lambda: ListingScreen(transcripts_dir))
        assert snap_compare(app, terminal_size=SCREEN_SIZE, run_before=settled)


class TestHelp:
    """`?`: every key of the one key table and what each badge means."""

    def test_help(self, snap_compare: Any) -> None:
        app = ScreenApp(lambda: HelpScreen())
        assert snap_compare(app, terminal_size=SIZE, run_before=settled)

"""What a test reads off a transcript screen: its rows, its cursor, its layout's health."""

from __future__ import annotations

from transcript_view.viewer.main_screen import TranscriptScreen

SIZE = (120, 40)


def rows_of(screen: TranscriptScreen) -> list[tuple[str, str]]:
    """(kind, plain text) of every row of the document on show."""
    doc = screen.view.doc
    out = []
    for i in range(doc.total_rows):
        row = doc.row(i)
        assert row is not None
        out.append((row.kind, row.text.plain))
    return out


def assert_layout_consistent(screen: TranscriptScreen) -> None:
    """Every block's laid-out row count is what building it gives now."""
    doc = screen.view.doc
    assert doc.blocks == doc.source.available()
    for i in range(doc.blocks):
        assert doc.counts[i] == doc.source.build(i).count, f"block {i}"
    assert doc.total_rows == sum(doc.counts)


def assert_counting_matches_building(screen: TranscriptScreen) -> None:
    """The layout's count-only builds agree with full builds, block by block.

    Checked for both documents, collapsed and expanded, at the current width,
    with whatever artifacts are open: the layout worker only ever counts.
    """
    for doc in (screen.view.file_doc, screen.view.model_doc):
        if doc is None:
            continue
        source = doc.source
        for i in range(source.available()):
            for expand in (False, True):
                counted = source.build(i, expand, count_only=True).count
                assert counted == source.build(i, expand).count, (doc.view, i, expand)


def cursor_row(screen: TranscriptScreen):  # type: ignore[no-untyped-def]
    row = screen.view.current_row
    assert row is not None
    return row

"""Codex rollouts: every truncation notice is a "not stored" marker with the amount cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _sessions import codex_chars_truncated, codex_line, codex_lines_omitted, write_codex_rollout

from transcript_view.core.formats import Format
from transcript_view.core.formats.codex import find_notices, output_texts
from transcript_view.core.formats.model import SpillForm
from transcript_view.core.report import verify


@pytest.mark.parametrize(
    ("text", "form", "cut"),
    [
        (codex_lines_omitted(400), SpillForm.LINES_OMITTED, "147 of 400 lines"),
        ("a\n[... omitted 0 of 256 lines ...]\n\nb", SpillForm.LINES_OMITTED, "0 of 256 lines"),
        (
            "head\n[... output truncated to fit 10240 bytes ...]\n\n",
            SpillForm.BYTES_TRUNCATED,
            "everything past 10,240 bytes",
        ),
        (codex_chars_truncated(5000), SpillForm.CHARS_CUT, "5,000 characters of a 900-line output"),
        ("h\u20261200 tokens truncated\u2026t", SpillForm.TOKENS_CUT, "1,200 tokens"),
        ("one\n[omitted 3 text items ...]", SpillForm.ITEMS_OMITTED, "3 text items"),
        ("Total output lines: 3000\n\nsome of it", SpillForm.TOTAL_LINES, "part of 3,000 lines"),
        (
            "Warning: truncated output (original token count: 40000)\nTotal output lines: 12\n\nx"
            "\u20269 tokens truncated\u2026y",
            SpillForm.TOKENS_CUT,
            "9 tokens of a 12-line output",
        ),
    ],
)
def test_each_notice_is_found_with_the_amount_cut(text: str, form: SpillForm, cut: str) -> None:
    (notice,) = find_notices(text)
    assert notice.form is form and notice.cut == cut


def test_output_that_was_not_cut_has_no_notice() -> None:
    assert find_notices("Total output lines is a phrase\nall fine") == []


def test_a_0_40_output_is_decoded_from_its_json_string() -> None:
    raw = json.dumps({"output": "inner text", "metadata": {"exit_code": 0}})
    assert list(output_texts(raw)) == [(-1, "inner text")]
    items = [{"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "x"}]
    assert list(output_texts(items)) == [(0, "a")]


def test_a_clean_rollout_passes_with_exit_0_and_no_findings(tmp_path: Path) -> None:
    report = verify(write_codex_rollout(tmp_path / "r.jsonl", ["ok", "fine"]))
    assert report.format is Format.CODEX and report.markers == 0
    assert report.findings == [] and report.artifact_dir is None
    assert report.as_dict()["format"] == "codex"


def test_cut_outputs_are_not_stored_markers_with_notes_and_no_errors(tmp_path: Path) -> None:
    outputs = [codex_lines_omitted(400), "clean", codex_chars_truncated(7)]
    report = verify(write_codex_rollout(tmp_path / "r.jsonl", outputs, json_string=True))
    assert [b.state.value for b in report.badges] == ["not stored", "not stored"]
    assert [f.kind for f in report.findings] == ["not-stored", "not-stored"]
    assert report.errors == 0 and report.warnings == 0


def test_notices_in_the_uis_record_are_not_markers(tmp_path: Path) -> None:
    path = write_codex_rollout(tmp_path / "r.jsonl", [])
    event = codex_line(
        "event_msg", {"type": "exec_command_end", "aggregated_output": codex_lines_omitted(400)}, 30
    )
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(event) + "\n")
    assert verify(path).markers == 0


def test_unknown_line_and_payload_types_are_counted_never_errors(tmp_path: Path) -> None:
    path = write_codex_rollout(tmp_path / "r.jsonl", ["ok"])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(codex_line("brand_new", {"type": "whatever"}, 40)) + "\n")
        fh.write(json.dumps(codex_line("response_item", {"type": "new_item"}, 41)) + "\n")
    report = verify(path)
    assert report.errors == 0 and report.warnings == 0
    assert report.analysis is not None and report.analysis.type_counts["brand_new"] == 1

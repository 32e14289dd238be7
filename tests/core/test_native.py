"""`TRANSCRIPT_VIEW_PURE` (core/native.py): the package without its native modules.

Set, the package imports none of its C (not even where it was built) and gives
the same answers. Each side runs in a subprocess of its own, so the test holds
whichever lane runs it (`python3 dev.py test` or `test-pure`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _random_transcripts import random_transcript
from _support import REFERENCE

from transcript_view.core import native

#: Texts `graphemes.count` is asked about: every string width, the fast paths'
#: edges (CR LF, runs of printable ASCII), and a mixed fixture of 100 KB or so.
TEXTS = [
    "",
    "plain ascii\r\nwith CR LF\r\n",
    "\x85\xad\xe9\r\n\xff" * 50,
    "a\u0301\u0915\u094d\u0937\uac00\u11a8 한국어 텍스트" * 40,
    "👩\u200d👩\u200d👧\u200d👦\U0001f1ef\U0001f1f5\U0001f1fa flags and families" * 40,
    "\udcff\u0301\ud800 lone surrogates",
]

#: Run in each subprocess: what it loaded, and its answers, as JSON.
PROBE = """
import json, sys
from pathlib import Path
from transcript_view.core import graphemes, native, transcript  # every load() site
import transcript_view.viewer.app  # and the whole viewer: it loads no native module of its own
texts = json.loads(Path(sys.argv[1]).read_text())
texts.append(Path(sys.argv[2]).read_text(encoding="utf-8"))
with transcript.Transcript.open(sys.argv[3]) as t:
    spans = [t.line_span(i) for i in range(1, t.line_count + 1)]
print(json.dumps({
    "pure": native.PURE,
    "native": graphemes.NATIVE,
    "lines_is_none": transcript._lines is None,
    "loaded": sorted(name for name, module in sys.modules.items()
                     if name.startswith("transcript_view.")
                     and str(getattr(module, "__file__", "")).endswith((".so", ".pyd"))),
    "counts": [graphemes.count(text) for text in texts],
    "spans": spans,
}))
"""


def _probe(tmp_path: Path, pure: str | None) -> dict[str, Any]:
    """What a fresh interpreter loads and answers, with `TRANSCRIPT_VIEW_PURE` set to `pure`."""
    env = {k: v for k, v in os.environ.items() if k != native.PURE_VARIABLE}
    if pure is not None:
        env[native.PURE_VARIABLE] = pure
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(TEXTS))
    path = tmp_path / "t.jsonl"
    if not path.exists():  # lines of every shape, blank ones, and no LF at the end
        path.write_bytes(random_transcript(7, 400) * 5 + b"\n\n\r\nlast")
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(texts), str(REFERENCE / "basic.big-input.txt"),
         str(path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_pure_mode_imports_no_native_module_and_answers_the_same(tmp_path: Path) -> None:
    pure = _probe(tmp_path, "1")
    assert pure["pure"] is True
    assert pure["native"] is False and pure["lines_is_none"] is True
    assert pure["loaded"] == []
    built = _probe(tmp_path, None)  # the native modules, where they were built
    assert built["pure"] is False
    assert ("transcript_view.core._gcount" in built["loaded"]) is built["native"]
    assert ("transcript_view.core._lines" in built["loaded"]) is not built["lines_is_none"]
    assert pure["counts"] == built["counts"]
    assert pure["spans"] == built["spans"]
    assert len(pure["spans"]) > 2_000


@pytest.mark.parametrize(
    ("value", "pure"),
    [(None, False), ("", False), ("0", False), ("1", True), ("yes", True), ("false", True)],
)
def test_what_turns_pure_mode_on(value: str | None, pure: bool) -> None:
    """Any non-empty value but "0" (even "false": the variable is a switch, not a boolean)."""
    environ = {} if value is None else {native.PURE_VARIABLE: value}
    assert native.pure_requested(environ) is pure

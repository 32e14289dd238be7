"""Target 5: our first paint of a 1 GiB JSONL file vs toolong's, on the same file.

Run: ``.venv/bin/python benchmarks/bench_toolong.py``

toolong (`tl`, PyPI `toolong`) is the reference: a Textual log viewer that
also opens huge files lazily. It pins an old Textual, so it gets its own
virtual environment, `benchmarks/.venv-toolong/`, created here on first use
(`python -m venv` and `pip install toolong==1.5.0`).

Both run in a 120x40 pty with the `first_paint` meter (a pyte screen), timed
from spawn until a known text is on the screen. toolong opens a file at its
end (tail mode), so its text is the file's last line's `last-line-token`; our
viewer opens at the start and shows the session meta line's
`first-paint-token`. Best of 3 each. Target: ours <= 1x toolong's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_open import best_paint, viewer  # noqa: E402
from gen import DATA, FIRST_TOKEN, LAST_TOKEN, MiB, transcript  # noqa: E402

VENV = HERE / ".venv-toolong"
TOOLONG = "toolong==1.5.0"


def toolong() -> Path:
    """The `tl` executable, installing toolong into its own venv if it is not there."""
    tl = VENV / "bin" / "tl"
    if tl.exists():
        return tl
    print(f"  installing {TOOLONG} into {VENV} (first run only)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    pip = [str(VENV / "bin" / "python"), "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", TOOLONG], check=True)
    return tl


def run(runs: int = 3) -> list[tuple[str, float, float, str]]:
    path = transcript(DATA / "open-1g.jsonl", 1024 * MiB)
    tl = toolong()
    t_tl = best_paint([str(tl), str(path)], LAST_TOKEN, runs)
    t_ours = best_paint(viewer(path), FIRST_TOKEN, runs)
    return [
        (
            f"first paint, {path.stat().st_size / MiB:,.0f} MiB JSONL",
            t_ours,
            t_tl,
            "toolong 1.5.0, same file, tail view (target <= 1.0)",
        )
    ]


if __name__ == "__main__":
    for name, ours, ref, what in run():
        print(f"{name}: {ours:.3f}s vs {what} {ref:.3f}s = {ours / ref:.2f}x")

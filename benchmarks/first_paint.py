"""A first-paint meter: run any command in a pseudo-terminal, time until a text is on screen.

"On screen" means on the emulated screen, not merely somewhere in the byte
stream: the child's output is fed through `pyte` (a VT100 emulator), so text
split by style escapes, overwritten, or scrolled away is judged as a person
would see it. The child gets a fixed-size terminal, and its peak RSS is read
from `/proc/<pid>/status` (VmHWM) before it is stopped.

    python benchmarks/first_paint.py --text TOKEN [--cols 120 --rows 40] -- CMD ARGS...
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass

import pyte


@dataclass(frozen=True)
class Paint:
    """When the text appeared (seconds after spawn, None if never), and the child's peak RSS."""

    seconds: float | None
    peak_rss_kib: int | None
    screen: str


def _peak_rss_kib(pid: int) -> int | None:
    """VmHWM of a process and its descendants' maximum (the app may fork helpers)."""
    best: int | None = None
    pids = [pid]
    with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{pid}/children") as fh:
        pids += [int(c) for c in fh.read().split()]
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as fh:
                status = fh.read()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                value = int(line.split()[1])
                best = value if best is None else max(best, value)
    return best


def measure(
    cmd: list[str],
    text: str,
    *,
    cols: int = 120,
    rows: int = 40,
    timeout: float = 120.0,
    settle: float = 0.0,
    until: str | None = None,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Paint:
    """Spawn `cmd` on a pty of `cols`x`rows`; return when `text` is first on screen.

    `settle` keeps the child running that many seconds after the paint, so the
    peak RSS includes what it does in the background right after (an index
    build, a hash worker). `until` instead keeps it running until that text is on
    screen too (the app saying its background work is done); `seconds` is then the
    time to `until`, and the peak RSS covers everything up to it.
    """
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    child_env = dict(os.environ if env is None else env)
    child_env.update({"TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)})
    child_env.pop("TEXTUAL", None)
    screen = pyte.Screen(cols, rows)
    stream = pyte.ByteStream(screen)
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=child_env,
        start_new_session=True,
        cwd=cwd,
    )
    os.close(slave)
    seen: float | None = None
    peak: int | None = None
    try:
        deadline = start + timeout
        while time.perf_counter() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    data = os.read(master, 1 << 16)
                except OSError:
                    break
                if not data:
                    break
                stream.feed(data)
                shown = "\n".join(screen.display)
                if until is not None:
                    if text in shown and until in shown:
                        seen = time.perf_counter() - start
                        break
                elif seen is None and text in shown:
                    seen = time.perf_counter() - start
                    if settle <= 0:
                        break
                    deadline = time.perf_counter() + settle
            elif proc.poll() is not None:
                break
            peak = _peak_rss_kib(proc.pid) or peak
        peak = _peak_rss_kib(proc.pid) or peak
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)
    return Paint(seen, peak, "\n".join(screen.display))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", required=True, help="text whose appearance ends the timing")
    parser.add_argument("--cols", type=int, default=120)
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--settle", type=float, default=0.0)
    parser.add_argument("--show", action="store_true", help="print the screen at the end")
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("give a command after --")
    paint = measure(
        cmd, args.text, cols=args.cols, rows=args.rows, timeout=args.timeout, settle=args.settle
    )
    if args.show:
        print(paint.screen)
    if paint.seconds is None:
        print(f"never painted {args.text!r} within {args.timeout}s", file=sys.stderr)
        return 1
    print(f"first paint {paint.seconds:.3f}s, peak RSS {paint.peak_rss_kib or 0:,} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Background workers give way to the person at the keyboard.

Indexing, analysing, laying out and searching run in threads, but Python runs
one thread at a time: while a worker is busy, the UI thread waits for the GIL
every time it wakes up, so a key pressed during a 200 MiB index is handled in
several times the time it takes when nothing runs. The app notes every input
event (`note_input`), and workers call `give_way()` between steps: for a
moment after a key or a mouse event they sleep (releasing the GIL) so the UI
has the processor to itself, then carry on. The pause after each input is
short and bounded, so a worker is slowed, never starved.
"""

from __future__ import annotations

import time

#: Seconds after an input event during which workers pause between steps.
QUIET_AFTER_INPUT = 0.1
#: Longest a worker waits in one `give_way` call, however much input arrives.
MAX_WAIT = 0.5
_TICK = 0.005

_last_input = float("-inf")


def note_input() -> None:
    """Record that a key or mouse event just arrived (called on the UI thread)."""
    global _last_input
    _last_input = time.monotonic()


def give_way() -> None:
    """Sleep while an input event is recent (called by workers between steps)."""
    deadline = time.monotonic() + MAX_WAIT
    while True:
        now = time.monotonic()
        quiet_at = _last_input + QUIET_AFTER_INPUT
        if now >= quiet_at or now >= deadline:
            return
        # One sleep to the end of the quiet time (not a poll): every wake-up takes
        # the GIL from the UI thread for a moment.
        time.sleep(max(min(quiet_at, deadline) - now, _TICK))

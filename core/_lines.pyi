"""Types of the optional native line scanner built from `_lines.c`."""

def line_starts(buffer: bytes, base: int, /) -> bytes:
    """Native int64 offsets of the byte after each LF, plus `base`."""

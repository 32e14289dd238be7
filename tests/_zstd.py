"""Compressed rollouts for tests: what Codex writes once a rollout is a week idle.

Codex compresses with the `zstd` crate's stream encoder at level 3
(`codex-rs/rollout/src/compression.rs`), so its frame does not record the
decompressed size; `zstandard`'s stream writer writes the same kind of frame.
"""

from __future__ import annotations

import io
from pathlib import Path

import zstandard

#: Codex's `COMPRESSION_LEVEL`.
LEVEL = 3


def compress(data: bytes, *, frames: int = 1) -> bytes:
    """`data` as zstd frames written as a stream (no size in their headers).

    More than one frame splits `data` at even byte offsets, not at lines (what
    `cat a.zst b.zst` or a writer that flushes frames would leave).
    """
    out = io.BytesIO()
    step = -(-len(data) // frames) if data else 1
    for start in range(0, max(len(data), 1), step):
        with zstandard.ZstdCompressor(level=LEVEL).stream_writer(out, closefd=False) as writer:
            writer.write(data[start : start + step])
    return out.getvalue()


def compress_file(path: Path, *, keep: bool = False, frames: int = 1) -> Path:
    """Compress `path` to `path.zst` as Codex does; the plain file goes unless `keep`."""
    target = path.with_name(path.name + ".zst")
    target.write_bytes(compress(path.read_bytes(), frames=frames))
    if not keep:
        path.unlink()
    return target


def bomb(size: int, first: bytes = b"") -> bytes:
    """A few kilobytes that decompress to `first`, then `size` zero bytes (no line in them)."""
    out = io.BytesIO()
    block = bytes(16 << 20)
    with zstandard.ZstdCompressor(level=LEVEL).stream_writer(out, closefd=False) as writer:
        writer.write(first)
        for start in range(0, size, len(block)):
            writer.write(block[: min(len(block), size - start)])
    return out.getvalue()


def snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    """Every entry under `directory`: its size and modification time (to see nothing changed)."""
    return {
        str(p.relative_to(directory)): (p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in sorted(directory.rglob("*"))
    }

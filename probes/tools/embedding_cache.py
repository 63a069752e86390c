"""The embedding cache: vectors by image content, one folder per model identity.

Default place: `$PROBE_HOME/embeddings/` (`.probe/embeddings/` without PROBE_HOME). Each model
identity (a fingerprint of what the model is: see `probes.tools.embeddings.fingerprint`) has a
folder named by it, holding `model.json` (kind, where the model was loaded from, the embedding
recipe) and `part-*.npz` files, each with `sha256` (the hex digests of image files' bytes, as
64-byte strings) and `vectors` (float32 rows, the same order). Keyed by the bytes, a renamed or
moved picture is still found; a changed one is embedded afresh.

Every part is written to a temporary name, synced and renamed, so an interrupted run leaves
whole parts only and the next run embeds just what is missing. Parts are written every 512 new
vectors or 30 seconds, and merged into one when more than 16 pile up (the merged part is
written before the old ones go, so a reader never misses a vector; a part that vanishes while
being read is skipped and its vectors recomputed). Nothing is pickled.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

FLUSH_EVERY = 512  # vectors per cache part; also flushed every FLUSH_SECONDS
FLUSH_SECONDS = 30.0
MAX_PARTS = 16  # merge the parts into one past this many


def default_cache_dir() -> Path:
    return Path(os.environ.get("PROBE_HOME", ".probe")) / "embeddings"


class EmbeddingCache:
    """Vectors of one model identity, by image sha256 (see the module docstring for the layout)."""

    def __init__(self, root: Path, identity: str, about: dict[str, Any]):
        self.dir = Path(root) / identity
        self.about = about
        self.vectors: dict[str, np.ndarray] = {}
        self._pending: dict[str, np.ndarray] = {}
        self._last_flush = time.monotonic()
        self._load()

    def __contains__(self, sha256: str) -> bool:
        return sha256 in self.vectors

    def get(self, sha256: str) -> np.ndarray:
        return self.vectors[sha256]

    def add(self, sha256: str, vector: np.ndarray) -> None:
        self.vectors[sha256] = vector
        self._pending[sha256] = vector
        if len(self._pending) >= FLUSH_EVERY or time.monotonic() - self._last_flush > FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        about = self.dir / "model.json"
        if not about.exists():
            _write_atomic(about, (json.dumps(self.about, indent=1) + "\n").encode())
        _write_part(self.dir, self._pending)
        self._pending = {}
        parts = sorted(self.dir.glob("part-*.npz"))
        if len(parts) > MAX_PARTS:
            _write_part(self.dir, self.vectors)  # first the merged part, then the old ones go
            for part in parts:
                part.unlink(missing_ok=True)

    def _load(self) -> None:
        for part in sorted(self.dir.glob("part-*.npz")):
            try:
                with np.load(part, allow_pickle=False) as data:
                    hashes, vectors = data["sha256"], data["vectors"]
            except (OSError, ValueError, KeyError, EOFError):
                continue  # another process merged it away, or it is not ours: recompute instead
            for digest, vector in zip(hashes, vectors, strict=True):
                self.vectors[digest.decode("ascii")] = vector


def _write_part(folder: Path, vectors: dict[str, np.ndarray]) -> None:
    hashes = np.array([h.encode("ascii") for h in vectors], dtype="S64")
    rows = np.stack(list(vectors.values())).astype(np.float32)
    name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.npz"
    temporary = folder / f".{name}.tmp"
    with temporary.open("wb") as handle:
        np.savez(handle, sha256=hashes, vectors=rows)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, folder / name)


def _write_atomic(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)

"""Encoded images kept beside the results store, by content: each distinct image is drawn or
decoded and encoded once per store, not once per model or run.

Layout: `<store file>.images/ab/<content hash>.<encoding>` (the store `results.sqlite` keeps its
images in `results.sqlite.images/`), one file per image and encoding (`png-ng2`: our PNG, deflated
by zlib-ng at level 2; `anthropic-8000`: an image shrunk to Anthropic's limits). The content hash
is the one the store already remembers per image reference (ImagePart.sha256), so a run that
knows an image's hash finds its bytes without touching the pixels.

Safe for several processes at once (a CLI run beside the playground): a file is written under a
temporary name and renamed into place, so a reader sees a whole file or none; two processes
encoding one image write the same bytes, and the last rename wins. Within a process, callers
asking for one key at once wait for the first to make it.

Bounded: past `max_bytes` the least recently used files go (a hit touches its file's time), down
to 80% of the bound. A process looks at the whole folder again after writing an eighth of the
bound, so with other processes writing at once it can run over by an eighth of the bound each,
never more. A file deleted under a reader is only a miss: the image is encoded again.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from models.png import is_complete
from probes.core.errors import UsageError

DEFAULT_MAX_BYTES = 512 * 2**20
VARIABLE = "PROBE_IMAGE_CACHE_MB"
# Below a megabyte a single large canvas would not fit and every image would be encoded again;
# past a terabyte the bound is surely a typo (and 1e400 megabytes is infinite).
MIN_MB, MAX_MB = 1, 2**20
_NAME = re.compile(r"[0-9a-f]{64}\.[a-z0-9-]+")  # what we write; eviction touches nothing else


def cache_dir(store_path: Path) -> Path:
    """Where the image cache of the store at `store_path` lives."""
    return store_path.with_name(store_path.name + ".images")


def max_bytes_from_env() -> int:
    """The bound: PROBE_IMAGE_CACHE_MB (megabytes) or 512 MB. A value that does not parse, or
    past the bounds, is refused like a flag's (a UsageError saying what to write)."""
    raw = os.environ.get(VARIABLE, "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    try:
        megabytes = float(raw)
    except ValueError:
        megabytes = math.nan
    if not MIN_MB <= megabytes <= MAX_MB:  # also nan, inf and 1e400 (inf)
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        raise UsageError(
            f"{VARIABLE}={shown!r}: write a number of megabytes from {MIN_MB} to {MAX_MB:,} "
            f"(default {DEFAULT_MAX_BYTES // 2**20})"
        )
    return int(megabytes * 2**20)


class ImageCache:
    """Encoded image bytes by `<content hash>.<encoding>` key; see the module's docstring."""

    def __init__(self, root: Path, max_bytes: int | None = None):
        self.root = Path(root)
        self.max_bytes = max_bytes if max_bytes is not None else max_bytes_from_env()
        self._lock = threading.Lock()
        self._making: dict[str, threading.Lock] = {}
        self._total: int | None = None  # bytes on disk as of the last scan plus what we wrote since
        self._written = 0  # bytes written since the last scan
        self.hits = self.misses = 0

    @classmethod
    def beside(cls, store_path: Path, max_bytes: int | None = None) -> ImageCache:
        return cls(cache_dir(Path(store_path)), max_bytes)

    def _path(self, key: str) -> Path:
        if not _NAME.fullmatch(key):
            raise ValueError(f"not an image cache key: {key!r}")
        return self.root / key[:2] / key

    def get(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            data = path.read_bytes()
        except OSError:  # not there, or evicted by another process a moment ago
            return None
        if not is_complete(data):  # cut short (a crash mid-write on a file system without rename order)
            return None
        try:
            os.utime(path)  # recently used: eviction keeps it
        except OSError:
            pass
        return data

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        try:
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".part-")
        except FileNotFoundError:  # the folder's first file, or the folder was deleted meanwhile
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".part-")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        self._account(len(data))

    def holds(self, key: str) -> bool:
        return bool(_NAME.fullmatch(key)) and self._path(key).is_file()

    def fetch(self, key: str, make: Callable[[], bytes]) -> bytes:
        """The bytes under `key`, or `make()` them once (callers in this process wait for it)."""
        if not _NAME.fullmatch(key):  # not a content hash we gave out: made, never kept
            return make()
        data = self.get(key)
        if data is not None:
            self.hits += 1
            return data
        with self._lock:
            gate = self._making.setdefault(key, threading.Lock())
        with gate:
            data = self.get(key)  # made while we waited
            if data is None:
                self.misses += 1
                data = make()
                try:
                    self.put(key, data)
                except OSError:  # a full or read-only disk: the request still goes out
                    pass
            else:
                self.hits += 1
        with self._lock:
            self._making.pop(key, None)
        return data

    # --- the bound ------------------------------------------------------------------------

    def _account(self, added: int) -> None:
        """Count what we wrote; look at the folder again (other processes write too) once we
        have written an eighth of the bound since, or think it full; evict when it is."""
        with self._lock:
            self._written += added
            stale = self._total is None or self._written > self.max_bytes // 8
            if not stale:
                self._total += added
                stale = self._total > self.max_bytes
        if stale:
            total = self.size()
            with self._lock:
                self._total, self._written = total, 0
            if total > self.max_bytes:
                self.evict()

    def _files(self) -> list[tuple[float, Path, int]]:
        """(last use, path, size) of every cache file."""
        found = []
        try:
            folders = list(os.scandir(self.root))
        except OSError:
            return []
        for folder in folders:
            if not folder.is_dir():
                continue
            try:
                entries = list(os.scandir(folder.path))
            except OSError:
                continue
            for entry in entries:
                if not _NAME.fullmatch(entry.name):
                    continue
                try:
                    stat = entry.stat()
                except OSError:  # evicted by another process meanwhile
                    continue
                found.append((stat.st_mtime, Path(entry.path), stat.st_size))
        return found

    def evict(self) -> None:
        """Delete the least recently used files until the cache holds at most 80% of its bound."""
        files = sorted(self._files())
        total = sum(size for _, _, size in files)
        target = int(self.max_bytes * 0.8)
        for _, path, size in files:
            if total <= target:
                break
            try:
                path.unlink()
            except OSError:  # another process evicted it first
                pass
            total -= size
        with self._lock:
            self._total = total

    def size(self) -> int:
        """Bytes held on disk now (a scan)."""
        return sum(size for _, _, size in self._files())

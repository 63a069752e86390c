"""Visitors' session stores in public mode: opened on lease, never closed under a request, swept
a day after their last use (a visitor who reloads the page, or comes back the same day, finds
their results: ui/sessions.py keeps who they are across reloads), each bounded on disk.

- **Leases.** Every use of a session's store holds a lease (`with SESSIONS.lease(session) as
  lease:`, or `lease.release()` when the use outlives a block, as an evaluation does). A store is
  closed only when nobody holds it: past SOFT_OPEN open stores the least recently used idle ones
  close (they reopen on the next use); when every open store is in use the bound gives way
  rather than break a request, up to HARD_OPEN, past which a *new* session is refused with a
  message (sessions already open keep working). Opening 260 sessions once closed another
  visitor's store in the middle of their evaluation ("Cannot operate on a closed database").
- **Bookkeeping that does not grow with the folder.** Last use is kept in an index (oldest
  first), updated on every lease; the sweep, on the sweeper thread (ui/cleanup.py), pops expired
  entries from the front of the index, so its cost is the number of stores it removes, not the
  number on disk. The folder is listed once per process (the first sweep, to learn of stores a
  previous process left), never on a request: each new session once globbed every session file on
  the event loop (2.3 s at 50,000).
- **Disk.** A session's database and its write-ahead log hold at most SESSION_STORE_BYTES: past
  it the store refuses more results with a message (and `room_for` refuses work before it
  starts); the encoded images kept beside it hold at most SESSION_IMAGE_CACHE_BYTES. A swept
  store's files are first renamed into a trash folder (fast, under the lock, so a session coming
  back never meets half-deleted files), then deleted outside the lock.
"""

from __future__ import annotations

import itertools
import logging
import os
import resource
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from models.types import Output
from probes.core.errors import LimitExceeded
from probes.core.types import Result
from probes.running.image_cache import cache_dir
from probes.running.store import Store
from ui import identity

SESSION_DIR = Path(tempfile.gettempdir()) / "probe-sessions"
IDLE_SECONDS = 24 * 3600.0  # kept a day after the last use: About and README say so
SOFT_OPEN = 256  # session stores kept open at once when idle; the least recently used idle ones close
HARD_OPEN = 1024  # open at once, in use included (about 3 file descriptors each): past it new sessions wait
# A session's encoded images (what its runs sent): a visitor cannot fill the disk through them.
SESSION_IMAGE_CACHE_BYTES = 32 * 2**20
# A session's database and its write-ahead log: 5,000 results (the most a session may hold) of
# ordinary replies take a few MB; this leaves room for long replies, not for filling the disk.
SESSION_STORE_BYTES = 64 * 2**20
TRASH = ".sweeping"  # files of swept stores on their way out
_SUFFIXES = ("", "-wal", "-shm", "-journal")  # a store's files beside its database (and its image folder)

log = logging.getLogger(__name__)


class SessionStore(Store):
    """A visitor's store: refuses results once its files pass `max_bytes`."""

    def __init__(self, path: Path, max_bytes: int = SESSION_STORE_BYTES):
        super().__init__(path, image_cache_bytes=SESSION_IMAGE_CACHE_BYTES)
        self.max_bytes = max_bytes

    def size(self) -> int:
        """Bytes of the database and its write-ahead log (two stats, whatever the store holds)."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += os.stat(f"{self.path}{suffix}").st_size
            except FileNotFoundError:
                pass
        return total

    def check_room(self) -> None:
        size = self.size()
        if size >= self.max_bytes:
            raise LimitExceeded(
                f"this session's results take {size / 2**20:.1f} MB, the most a session keeps here is "
                f"{self.max_bytes // 2**20} MB: download what you need from the Scoreboard and open a new page, "
                "or run the playground on your own machine"
            )

    def record_many(
        self, entries: list[tuple[Result, Output | None, str]], image_hashes: Mapping[str, str] | None = None
    ) -> None:
        if entries:
            self.check_room()
        super().record_many(entries, image_hashes)


class Lease:
    """One use of a session's store; `release()` (or leaving the `with` block) ends it, once."""

    def __init__(self, store: Store, on_release: Callable[[], None] | None = None):
        self.store = store
        self._on_release = on_release
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            on_release, self._on_release = self._on_release, None
        if on_release is not None:
            on_release()

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


@dataclass
class _Open:
    store: SessionStore
    users: int = 0


def hard_bound(soft: int = SOFT_OPEN, most: int = HARD_OPEN) -> int:
    """HARD_OPEN, or fewer where the process may open few files: a store holds about three
    descriptors (database, log, shared memory), and the app needs a few hundred of its own."""
    try:
        allowed = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (OSError, ValueError):
        return most
    if allowed == resource.RLIM_INFINITY:
        return most
    return max(soft, min(most, (allowed - 256) // 4))


class SessionStores:
    def __init__(
        self,
        folder: Path = SESSION_DIR,
        soft: int = SOFT_OPEN,
        hard: int | None = None,
        idle: float = IDLE_SECONDS,
        max_bytes: int = SESSION_STORE_BYTES,
        clock: Callable[[], float] = time.time,
    ):
        self.folder = folder
        self.soft, self.idle, self.max_bytes = soft, idle, max_bytes
        self.hard = hard_bound(soft) if hard is None else hard
        self._clock = clock
        self._open: OrderedDict[Path, _Open] = OrderedDict()  # least recently used first
        self._used: OrderedDict[Path, float] = OrderedDict()  # every store known -> last use, oldest first
        self._seeded: set[Path] = set()  # folders listed once already
        self._lock = threading.Lock()
        self._trash_names = itertools.count()
        self.evicted = 0  # idle stores closed to stay within `soft`
        self.swept = 0  # stores deleted for being idle

    def path(self, session: str) -> Path:
        # Keyed by the server's secret: a session hash comes from the client and must not shape
        # a path, nor give away which file is whose.
        return self.folder / f"{identity.keyed('store', session)[:32]}.sqlite"

    # --- leases -------------------------------------------------------------------------------

    def lease(self, session: str, create: bool = True) -> Lease | None:
        """The session's store, held until the lease is released; None if `create` is False and
        the session has no store. LimitExceeded when HARD_OPEN stores are in use and this session's
        is not among them."""
        path = self.path(session)
        with self._lock:
            entry = self._open.get(path)
            if entry is None:
                if not create and path not in self._used and not path.exists():
                    return None
                closing = self._make_room()
                if len(self._open) >= self.hard:
                    _close_later(closing)
                    raise LimitExceeded(
                        "this Space is serving as many sessions as it can hold right now: try again in a minute"
                    )
                try:
                    entry = _Open(SessionStore(path, self.max_bytes))
                except BaseException:
                    _close_later(closing)
                    raise
                self._open[path] = entry
            else:
                closing = []
            entry.users += 1
            self._open.move_to_end(path)
            self._touch(path)
        _close_later(closing)
        return Lease(entry.store, lambda: self._release(path, entry))

    def _release(self, path: Path, entry: _Open) -> None:
        closing = []
        with self._lock:
            entry.users -= 1
            if self._open.get(path) is entry:
                self._touch(path)
                if entry.users == 0 and len(self._open) > self.soft:  # the others past the bound are in use
                    self._open.pop(path)
                    closing.append(entry.store)
                    self.evicted += 1
        _close_later(closing)

    def _make_room(self) -> list[Store]:
        """Idle stores to close, least recently used first, so that one more fits within `soft`
        (under the lock; they are closed after it)."""
        closing: list[Store] = []
        if len(self._open) < self.soft:
            return closing
        for path in list(self._open):  # at most HARD_OPEN entries, whatever the folder holds
            if len(self._open) < self.soft:
                break
            if self._open[path].users == 0:
                closing.append(self._open.pop(path).store)
                self.evicted += 1
        return closing

    def _touch(self, path: Path) -> None:
        self._used[path] = self._clock()
        self._used.move_to_end(path)

    def open_count(self) -> int:
        with self._lock:
            return len(self._open)

    def in_use(self) -> int:
        with self._lock:
            return sum(1 for entry in self._open.values() if entry.users)

    # --- sweeping -----------------------------------------------------------------------------

    def sweep(self, idle: float | None = None) -> int:
        """Close and delete the stores unused for `idle` seconds (default: a day); returns how
        many went. Runs on the sweeper thread; a lease waits at most for one store's removal."""
        self._seed(self.folder)
        cutoff = self._clock() - (self.idle if idle is None else idle)
        removed = 0
        while True:
            with self._lock:
                if not self._used:
                    break
                path, used = next(iter(self._used.items()))
                if used >= cutoff:
                    break
                entry = self._open.get(path)
                if entry is not None and entry.users:  # in use: not idle at all
                    self._touch(path)
                    continue
                self._used.pop(path)
                if entry is not None:
                    self._open.pop(path)
                    _close(entry.store)
                trashed = self._to_trash(path)
            for moved in trashed:
                _delete(moved)
            removed += 1
        self.swept += removed
        return removed

    def _to_trash(self, path: Path) -> list[Path]:
        """Rename the store's files into the trash (under the lock: a session that comes back
        meets no half-deleted store); returns their new names."""
        trash = path.parent / TRASH
        moved = []
        for source in [Path(f"{path}{suffix}") for suffix in _SUFFIXES] + [cache_dir(path)]:
            target = trash / f"{next(self._trash_names)}-{source.name}"
            try:
                trash.mkdir(exist_ok=True)
                os.replace(source, target)
            except FileNotFoundError:
                continue
            except OSError:  # cannot be moved (permissions): deleted where it is, which a lease then recreates
                target = source
            moved.append(target)
        return moved

    def _seed(self, folder: Path) -> None:
        """Learn, once per folder and process, of the stores a previous process left: one listing,
        one stat per file, on the sweeper thread."""
        if folder in self._seeded:
            return
        found: dict[Path, float] = {}
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            entries = []
        for entry in entries:
            if entry.name == TRASH:
                _delete(Path(entry.path))  # left by a process that stopped mid-sweep
                continue
            stem, dot, _ = entry.name.partition(".sqlite")
            if not dot:
                continue
            try:
                modified = entry.stat(follow_symlinks=False).st_mtime
            except OSError:
                continue
            key = folder / f"{stem}.sqlite"
            found[key] = max(found.get(key, 0.0), modified)
        with self._lock:
            # Older than anything used since this process started: in front of the index, oldest first.
            for key, modified in sorted(found.items(), key=lambda pair: pair[1], reverse=True):
                if key not in self._used:
                    self._used[key] = modified
                    self._used.move_to_end(key, last=False)
            self._seeded.add(folder)


def _delete(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


# Closing a store checkpoints its log: done on a thread of its own, never on the caller's (a
# release may come from the event loop, when an evaluation ends).
_closer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="session-store-close")


def _close_later(stores: Sequence[Store]) -> None:
    for store in stores:
        _closer.submit(_close, store)


def _close(store: Store) -> None:
    # The sweeper thread must outlive a store that fails to close (it would stop sweeping).
    try:
        store.close()
    except Exception:  # noqa: BLE001 - logged; the store's files are still swept
        log.warning("a session store failed to close", exc_info=True)

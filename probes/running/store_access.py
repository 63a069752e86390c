"""What the file system lets a results store do here: whether it can be written, a connection
that only reads, and the message for a disk that filled up.

A store on a read-only file system, or a file or folder without write permission, is still
readable (`report`, the Scoreboard); only writing is refused, with one line saying why. A full
disk says the disk is full, how much is free and what may go: `.recover` is for damaged files,
and a store that could not grow is not damaged.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

from probes.core.errors import InputRejected

DISK_FULL = "the disk is full"  # why a store that could not be opened for writing is read instead


class StoreReadOnly(InputRejected):
    """The store can be read here but not written."""


def unwritable(path: Path) -> str | None:
    """Why the existing store at `path` cannot be written here, or None (it can, or it does not
    exist yet). SQLite in WAL mode writes two files beside the store (-wal, -shm): the folder
    must take them unless they are there already and writable."""
    if not path.exists():
        return None
    if not os.access(path, os.W_OK):
        return _why_not(path, "it")
    sides = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    folder = path.parent
    if not os.access(folder, os.W_OK) and not all(side.exists() and os.access(side, os.W_OK) for side in sides):
        return _why_not(folder, "its folder")
    return None


def uncreatable(path: Path) -> str | None:
    """Why a store cannot be made at `path` (which does not exist yet), or None: the nearest
    folder on its way that exists must be writable."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return _why_not(folder, str(folder))
    return None


def _why_not(path: Path, what: str) -> str:
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return "the file system is read-only"
    except OSError:
        pass
    return f"no permission to write {what}"


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write. SQLite reads a WAL store through its -shm file, made beside
    it if missing; in a folder nobody can write, none can be made, and the store is read as an
    immutable file: no process can be writing it there either (a writer would need the -shm)."""
    uri = path.resolve().as_uri()
    for query in ("mode=ro", "immutable=1"):
        db = sqlite3.connect(f"{uri}?{query}", uri=True, timeout=60, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout = 60000")
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError as exc:
            db.close()
            code = getattr(exc, "sqlite_errorname", "") or ""
            if query != "mode=ro" or not code.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")):
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


def is_full(exc: BaseException) -> bool:
    """SQLite's "database or disk is full", or the operating system's "no space left"."""
    if isinstance(exc, sqlite3.Error):
        return (getattr(exc, "sqlite_errorname", "") or "").startswith("SQLITE_FULL")
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


# Below this much free space (or 1% of the disk) a failed write is the disk being full; above it,
# SQLite's "full" has another cause, and the message says so rather than blame the disk.
_NEARLY_FULL = 256 * 2**20


def disk_full(path: Path, exc: BaseException) -> str:
    """The one line for a store that could not grow: what SQLite or the system said, the free
    space now where the store is, and what to free. Never `.recover`: nothing is damaged."""
    folder = path.resolve().parent
    detail = getattr(exc, "strerror", None) or str(exc)
    cache = path.with_name(path.name + ".images")  # safe to delete: its images are made again
    images = f" (the image cache {cache.name} beside the store can go)" if cache.is_dir() else ""
    try:
        usage = shutil.disk_usage(folder)
    except OSError:
        return f"results store {path}: the disk is full ({detail}): free some space or give --store a file elsewhere"
    free = _size(usage.free)
    if usage.free < max(_NEARLY_FULL, usage.total // 100):
        return (
            f"results store {path}: the disk is full ({detail}; {free} free in {folder}): free some space there"
            f"{images} or give --store a file on another disk"
        )
    return (
        f"results store {path}: the store could not grow ({detail}) though {free} is free in {folder} now: "
        "a disk quota, a full temporary folder (TMPDIR) or a size limit on the file; free space or give --store a "
        "file elsewhere"
    )


def _size(count: float) -> str:
    unit = "bytes"
    for unit in ("bytes", "KB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            break
        count /= 1024
    return f"{count:,.0f} {unit}" if unit == "bytes" else f"{count:,.1f} {unit}"

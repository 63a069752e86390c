"""A file's identity on disk, and values remembered per identity.

Device, inode, size, modification and change times tell one version of a file from another: a
file written again, even to the same size and modification time, gets a new change time (which
no program can set back). What was learned from reading one version (its check, its content
hash) holds for as long as the identity stays the same.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Generic, TypeVar

Value = TypeVar("Value")
Identity = tuple[int, ...]


def identity_of(stat: os.stat_result) -> Identity:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


class ByIdentity(Generic[Value]):
    """Values by (path, identity): a bounded map, the most recently used kept; thread-safe."""

    def __init__(self, kept: int):
        self._kept = kept
        self._values: OrderedDict[tuple, Value] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: Path, identity: Identity) -> Value | None:
        key = (os.fspath(path), *identity)
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, path: Path, identity: Identity, value: Value) -> Value:
        with self._lock:
            self._values[(os.fspath(path), *identity)] = value
            self._values.move_to_end((os.fspath(path), *identity))
            while len(self._values) > self._kept:
                self._values.popitem(last=False)
        return value

"""Nothing on disk grows without bound: files the app writes for visitors (previews, exports, the
images of a prompt, scoreboard downloads) are deleted an hour after they were last written
(session stores a day after their last use: ui/session_stores.py), by a sweeper that runs every few minutes. Gradio deletes its own cache of uploads
and served files on the same schedule (`gr.Blocks(delete_cache=...)` in app.py)."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

MAX_AGE = 3600.0
EVERY = 300.0

_started = threading.Event()


def sweep_folder(folder: Path, max_age: float = MAX_AGE, now: float | None = None) -> int:
    """Delete files (and emptied folders) under `folder` untouched for `max_age` seconds."""
    if not folder.is_dir():
        return 0
    cutoff = (time.time() if now is None else now) - max_age
    removed = 0
    for entry in sorted(folder.iterdir()):
        try:
            if entry.is_dir() and not entry.is_symlink():
                if max((p.stat().st_mtime for p in entry.rglob("*")), default=entry.stat().st_mtime) < cutoff:
                    shutil.rmtree(entry, ignore_errors=True)
                    removed += 1
            elif entry.stat().st_mtime < cutoff:
                entry.unlink(missing_ok=True)
                removed += 1
        except OSError:  # removed meanwhile by another sweeper or writer
            continue
    return removed


def start_sweeper(folders: Sequence[Path], also: Sequence[Callable[[], None]] = ()) -> None:
    """Sweep `folders` (and call `also`) every EVERY seconds, in one daemon thread per process."""
    if _started.is_set():
        return
    _started.set()

    def loop() -> None:
        while True:
            for folder in folders:
                sweep_folder(folder)
            for task in also:
                try:
                    task()
                except OSError:
                    pass
            time.sleep(EVERY)

    threading.Thread(target=loop, name="probe-sweeper", daemon=True).start()

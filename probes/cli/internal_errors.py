"""Where a bug's traceback goes: a log file under $PROBE_HOME, credentials removed, never the
terminal (a user sees one line saying it is a bug and where the details are)."""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from models.base import redact


def log_path() -> Path:
    return Path(os.environ.get("PROBE_HOME", ".probe")) / "internal-errors.log"


def log_internal_error(context: str) -> Path:
    """Append the exception being handled, with `context` (the command), to the log; returns the
    file (or, if it cannot be written, says so in the returned path's place)."""
    path = log_path()
    entry = f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}  {redact(context)}\n{redact(traceback.format_exc())}\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as log:
            log.write(entry)
    except OSError:
        return Path("(the log could not be written: run again with a writable PROBE_HOME)")
    return path

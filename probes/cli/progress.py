"""A progress bar on stderr: redrawn in place on a terminal, a line every few seconds in logs."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from probes.core.errors import UsageError
from probes.running.runner import Progress


class ProgressBar:
    def __init__(self, total: int, label: str, stream: TextIO | None = None, width: int = 24):
        self.total = max(total, 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.width = width
        self.interactive = self.stream.isatty()
        self._last_line = time.monotonic()
        self._drawn = False

    def update(self, done: int) -> None:
        self.show(Progress(total=self.total, done=done))

    def show(self, progress: Progress) -> None:
        now = time.monotonic()
        finished = progress.done >= progress.total
        if not finished and now - self._last_line < (0.1 if self.interactive else 5.0):
            return
        self._last_line = now
        filled = int(self.width * progress.done / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        parts = [f"{self.label} [{bar}] {progress.done}/{progress.total}"]
        if progress.cached:
            parts.append(f"cached {progress.cached}")
        if progress.errors:
            parts.append(f"errors {progress.errors}")
        graded = progress.done - progress.errors
        if progress.correct and graded:
            parts.append(f"acc {100 * progress.correct / graded:.1f}%")
        eta = progress.eta
        if eta is not None and not finished:
            parts.append(f"eta {eta:.0f}s")
        line = "  ".join(parts)
        if self.interactive:
            self.stream.write("\r" + line.ljust(100)[:160])
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.interactive and self._drawn:
            self.stream.write("\n")
            self.stream.flush()


@contextmanager
def writing(out: object, total: int, label: str) -> Iterator[Callable[[int], None]]:
    """A bar while `total` items are written into the folder `out` (given as --out); it yields
    the bar's update. A failed write (a full disk, the folder removed meanwhile) ends in one line
    naming --out, not a traceback."""
    bar = ProgressBar(total, label)
    try:
        yield bar.update
    except OSError as exc:
        raise UsageError(f"--out {out}: writing failed ({exc.strerror or type(exc).__name__})") from None
    finally:
        bar.close()

"""A progress bar on stderr: redrawn in place on a terminal, a line every few seconds in logs."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from probes.core.errors import UsageError
from probes.running.runner import Progress

# An import shows its bar from this many results: a smaller one is done before a line would help.
IMPORT_PROGRESS_FROM = 2_000
# Files read before an import's bar can start (its total is their rows) are named from this size:
# a .xlsx from 1 MB (openpyxl reads a few thousand rows a second), anything else from 20 MB.
READING_NOTE_BYTES = {".xlsx": 1_000_000, "": 20_000_000}


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


def reading(path: Path) -> None:
    """One line on stderr before a large file is read, so that minutes of reading are not silent."""
    try:
        size = path.stat().st_size if path.is_file() else 0
    except OSError:
        return  # the reader names the problem
    suffix = path.suffix.lower()
    if size < READING_NOTE_BYTES.get(suffix, READING_NOTE_BYTES[""]):
        return
    slow = " (an .xlsx reads at a few thousand rows a second; saved as .tsv it reads many times faster)"
    print(f"import {path.name}: reading {size / 1e6:,.1f} MB{slow if suffix == '.xlsx' else ''}", file=sys.stderr)


class ImportProgress:
    """An import's bar: the import calls it with (results stored, results in all) once its file
    is read and after each batch; nothing is drawn for fewer than `least`."""

    def __init__(self, label: str, least: int = IMPORT_PROGRESS_FROM):
        self.label, self.least = label, least
        self.done = self.total = 0
        self._bar: ProgressBar | None = None
        self._progress: Progress | None = None

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        if total < self.least:
            return
        if self._bar is None or self._progress is None:
            self._bar, self._progress = ProgressBar(total, self.label), Progress(total=total)
        self._progress.done = done
        self._bar.show(self._progress)

    def interrupted(self) -> str:
        """What an interrupted import kept: its batches stored so far stay (one result per item:
        importing the file again stores the rest and counts nothing twice)."""
        if not self.done:
            return "interrupted: nothing was stored"
        return (f"interrupted: {self.done:,} of {self.total:,} results were stored; import the file again to store "
                "the rest (the same items are replaced, never counted twice)")  # fmt: skip

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


@contextmanager
def importing(label: str, least: int = IMPORT_PROGRESS_FROM) -> Iterator[ImportProgress]:
    """An import's bar (`ImportProgress`), its line ended however the import ends."""
    progress = ImportProgress(label, least)
    try:
        yield progress
    finally:
        progress.close()

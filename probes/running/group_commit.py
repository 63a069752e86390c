"""Saving results as they are graded, several workers' results in one SQLite transaction."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from models.types import Output
from probes.core.types import Result
from probes.running.store import Store


class GroupCommit:
    """Results go to the store the moment they are graded, but when several workers finish at
    once, one transaction saves them all: the first to arrive writes everything waiting, the
    others wait for that write, and nobody returns before their result is committed. (Each
    SQLite call lets go of the GIL; on a busy machine getting it back takes milliseconds, and a
    transaction per result made the store the run's bottleneck.) Image hashes learned on the way
    are saved with the next write."""

    def __init__(self, store: Store):
        self.store = store
        self._condition = threading.Condition()
        self._waiting: list[Ticket] = []
        self._hashes: dict[str, str] = {}
        self._writing = False

    def remember(self, hashes: dict[str, str]) -> None:
        with self._condition:
            self._hashes.update(hashes)

    def save(self, entries: list[tuple[Result, Output | None, str]]) -> None:
        """Return once `entries` (and every image hash remembered so far) are committed."""
        ticket = Ticket(entries)
        with self._condition:
            self._waiting.append(ticket)
            while self._writing and not ticket.done:
                self._condition.wait()
            if ticket.done:
                if ticket.error is not None:
                    raise ticket.error
                return
            self._writing = True
            batch, self._waiting = self._waiting, []
            hashes, self._hashes = self._hashes, {}
        error: BaseException | None = None
        try:
            self.store.record_many([entry for waiting in batch for entry in waiting.entries], hashes)
        except BaseException as exc:  # every waiter hears of it, not only the writer
            error = exc
        with self._condition:
            for waiting in batch:
                waiting.done, waiting.error = True, error
            self._writing = False
            self._condition.notify_all()
        if error is not None:
            raise error


@dataclass
class Ticket:
    entries: list[tuple[Result, Output | None, str]]
    done: bool = False
    error: BaseException | None = None

"""Following and stopping runs: `Progress` (what a run, or several runs making one evaluation,
has done) and `Stop` (asked from any thread or a signal handler), and waiting on a run's tasks
until they end or a stop is asked. The runner owns both."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from probes.core.types import Result, Status


@dataclass
class Progress:
    """What a run (or several runs making one evaluation) has done so far."""

    total: int
    done: int = 0
    cached: int = 0
    errors: int = 0
    correct: int = 0
    scored: int = 0  # results with a score (errors and ungraded replies have none)
    score_sum: float = 0.0
    per_model: Counter[str] = field(default_factory=Counter)
    first_error: str | None = None
    started: float = field(default_factory=time.monotonic)

    def add(self, result: Result) -> None:
        self.done += 1
        self.cached += result.cached
        self.errors += result.status is Status.ERROR
        self.correct += bool(result.correct)
        self.per_model[result.model] += 1
        if result.status is not Status.ERROR and result.score is not None:
            self.scored += 1
            self.score_sum += result.score
        if result.status is Status.ERROR and self.first_error is None:
            self.first_error = result.error

    @property
    def accuracy(self) -> float | None:
        """Percent, over the results scored so far (a match rate counts by its share)."""
        return 100 * self.score_sum / self.scored if self.scored else None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def eta(self) -> float | None:
        """Seconds left, from the pace of requests actually sent (cache hits are near free)."""
        sent = self.done - self.cached
        if self.done == 0 or self.done >= self.total:
            return None if self.done == 0 else 0.0
        pace = self.elapsed / max(sent, 1) if sent else self.elapsed / self.done
        return pace * (self.total - self.done)


class Stop:
    """Asks runs to stop, from any thread (a Cancel button) or a signal handler: nothing new is
    sent; requests in flight get `grace` seconds to come back (and are saved), then are
    abandoned (they are asked again by the next run)."""

    def __init__(self) -> None:
        self.grace = 0.0
        self._requested = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._lock = threading.Lock()

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    def request(self, grace: float = 0.0) -> None:
        with self._lock:
            if self._requested.is_set():
                self.grace = min(self.grace, grace)  # a second, more urgent stop shortens the wait
            else:
                self.grace = grace
            self._requested.set()
            waiters = list(self._waiters)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    async def wait(self) -> None:
        """Return once a stop is requested."""
        event = asyncio.Event()
        with self._lock:
            if self._requested.is_set():
                return
            self._waiters.append((asyncio.get_running_loop(), event))
        await event.wait()


async def until_done_or_stopped(tasks: list[asyncio.Task], stop: Stop) -> None:
    """Wait for the workers; on a stop, give the requests in flight `stop.grace` seconds. A
    worker's unexpected failure (a bug: item errors are results) is raised."""
    stopped = asyncio.ensure_future(stop.wait())
    try:
        pending = set(tasks)
        while pending and not stopped.done():
            _, pending = await asyncio.wait(pending | {stopped}, return_when=asyncio.FIRST_COMPLETED)
            pending.discard(stopped)
            raise_failure(tasks)
        if pending:
            await asyncio.wait(pending, timeout=stop.grace)
            raise_failure(tasks)
    finally:
        stopped.cancel()


def raise_failure(tasks: list[asyncio.Task]) -> None:
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()

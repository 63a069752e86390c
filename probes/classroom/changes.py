"""A class's news, pushed rather than polled: a version number that moves whenever something a
page shows changes, and a wait (async) that returns as soon as it has moved.

A hall of phones each holding one `wait` costs nothing while nothing happens: no timer, no poll,
one parked future each. `bump` is called from any thread (the class's logic runs under its own
lock, in request threads); each waiting page's event loop is woken through `call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import threading


class Changes:
    def __init__(self) -> None:
        self.version = 0
        self._waiting: set[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = set()
        self._lock = threading.Lock()

    def bump(self) -> None:
        """Something changed: every wait returns."""
        with self._lock:
            self.version += 1
            waiting, self._waiting = self._waiting, set()
        for loop, future in waiting:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_wake, future)

    async def wait(self, seen: int, timeout: float) -> int:
        """The version once it differs from `seen` (at once if it does), or after `timeout` seconds."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.version != seen:
                return self.version
            future = loop.create_future()
            entry = (loop, future)
            self._waiting.add(entry)
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                self._waiting.discard(entry)
        return self.version

    @property
    def waiting(self) -> int:
        with self._lock:
            return len(self._waiting)


def _wake(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)

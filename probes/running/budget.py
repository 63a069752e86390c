"""Requests on the server's keys, counted against three budgets at once: per browser session, per
client address (per hour) and across everyone (per hour). A request is allowed only if all three
have room; the three counts are taken under one lock, so concurrent clicks cannot overdraw.

Counted: every request to a provider declared `paid` (OpenAI, Anthropic, the models file's
servers) that the visitor did not bring their own key for. Cached answers are counted too (the
cost is known before the run, the cache hits only after): a budget errs on the side of the
operator's bill.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from probes.core.errors import LimitExceeded

HOUR = 3600.0
MAX_SESSIONS = 100_000


class BudgetExceeded(LimitExceeded):
    """A request refused by one budget: which (`SESSION`, `CLIENT` or `EVERYONE`), its size, and
    in how many seconds it has room again (None: it does not refill, as a session's does not)."""

    def __init__(self, message: str, which: str = "", limit: int = 0, refills_in: float | None = None):
        super().__init__(message)
        self.which, self.limit, self.refills_in = which, limit, refills_in


SESSION, CLIENT, EVERYONE = "session", "client", "everyone"
# Each budget as a visitor reads it ("... of 6 requests on this Space's keys is used up").
BUDGET_WORDS = {
    SESSION: "this session's budget",
    CLIENT: "the budget per visitor address and hour",
    EVERYONE: "this Space's budget for the hour",
}


def requests_words(count: int) -> str:
    return f"{count} request{'s' if count != 1 else ''}"


class _Window:
    """Requests taken in the last `span` seconds."""

    def __init__(self, span: float):
        self.span = span
        self.taken: deque[tuple[float, int]] = deque()
        self.total = 0

    def used(self, now: float) -> int:
        while self.taken and self.taken[0][0] <= now - self.span:
            self.total -= self.taken.popleft()[1]
        return self.total

    def add(self, now: float, count: int) -> None:
        self.taken.append((now, count))
        self.total += count

    def room_in(self, now: float, limit: int, requests: int) -> float:
        """Seconds until `requests` more fit under `limit` (the oldest requests leave the window)."""
        over = self.used(now) + requests - limit
        for when, count in self.taken:
            over -= count
            if over <= 0:
                return max(0.0, when + self.span - now)
        return self.span  # more than the whole limit at once: never, said as a full window


class Budget:
    def __init__(
        self,
        session_limit: int | None = None,
        client_limit: int | None = None,
        global_limit: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        span: float = HOUR,
    ):
        self.session_limit = session_limit
        self.client_limit = client_limit
        self.global_limit = global_limit
        self._clock = clock
        self._span = span
        # Sessions are cheap to make: the oldest are forgotten past a bound (the address and
        # global budgets still hold for them).
        self._sessions: OrderedDict[str, int] = OrderedDict()
        self._clients: dict[str, _Window] = {}
        self._global = _Window(span)
        self._lock = threading.Lock()

    @property
    def limited(self) -> bool:
        return any(limit is not None for limit in (self.session_limit, self.client_limit, self.global_limit))

    def take(self, session: str, client: str, requests: int) -> None:
        """Take `requests` from every budget, or raise BudgetExceeded naming the one without room."""
        if requests <= 0 or not self.limited:
            return
        with self._lock:
            now = self._clock()
            session_used = self._sessions.get(session, 0)
            client_window = self._clients.setdefault(client, _Window(self._span))
            checks = (
                (self.session_limit, session_used, SESSION, None),
                (self.client_limit, client_window.used(now), CLIENT, client_window),
                (self.global_limit, self._global.used(now), EVERYONE, self._global),
            )
            for limit, used, which, window in checks:
                if limit is not None and used + requests > limit:
                    refills_in = None if window is None else window.room_in(now, limit, requests)
                    raise BudgetExceeded(
                        f"{BUDGET_WORDS[which]} of {requests_words(limit)} on the server's keys is used up "
                        f"({max(0, limit - used)} left, {requests} needed): paste your own key under 'API keys' to go on",
                        which, limit, refills_in,
                    )  # fmt: skip
            self._sessions[session] = session_used + requests
            self._sessions.move_to_end(session)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
            client_window.add(now, requests)
            self._global.add(now, requests)
            if len(self._clients) > 10_000:  # forget addresses with nothing in their window
                for address in [a for a, w in self._clients.items() if w.used(now) == 0]:
                    del self._clients[address]

    def left(self, session: str, client: str) -> int | None:
        """Requests this visitor may still send on the server's keys (None: unlimited)."""
        with self._lock:
            now = self._clock()
            room = []
            if self.session_limit is not None:
                room.append(self.session_limit - self._sessions.get(session, 0))
            if self.client_limit is not None:
                window = self._clients.get(client)
                room.append(self.client_limit - (window.used(now) if window else 0))
            if self.global_limit is not None:
                room.append(self.global_limit - self._global.used(now))
            return max(0, min(room)) if room else None

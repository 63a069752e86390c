"""Fair evaluation slots: several visitors' evaluations run at once, up to a bound, one per visitor;
the rest wait in a line where a visitor's second evaluation stands behind everyone else's first.

One visitor's long run used to hold the only slot while the others waited behind it in Gradio's
queue (the 4th visitor of the abuse bench waited 44 s). Here a run waits for a slot inside its
own handler, so it can tell its visitor how many are ahead; the order is: visitors with no
evaluation running before those with one, then those who have run fewer evaluations lately, then
who came first. Thread-safe (a run ends on whatever thread finishes it).
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(order=True)
class Ticket:
    order: tuple[int, int, int] = field(compare=True)
    visitor: str = field(compare=False)
    number: int = field(compare=False)


class FairSlots:
    REMEMBERED = 10_000  # visitors whose count of past runs is kept (the oldest forgotten first)

    def __init__(self, slots: Callable[[], int]):
        """`slots`: how many run at once, asked each time (public mode may be switched on later)."""
        self._slots = slots
        self._running: dict[str, int] = {}  # visitor -> runs holding a slot (0 or 1)
        self._served: OrderedDict[str, int] = OrderedDict()  # visitor -> runs started lately
        self._waiting: dict[int, Ticket] = {}
        self._numbers = itertools.count()
        self._lock = threading.Lock()

    def join(self, visitor: str) -> Ticket:
        """Stand in line; `poll` the ticket until it is granted (or `leave` the line)."""
        with self._lock:
            number = next(self._numbers)
            ticket = Ticket((0, 0, number), visitor, number)
            self._waiting[number] = ticket
            return ticket

    def poll(self, ticket: Ticket) -> int:
        """0: the ticket holds a slot now (it is out of the line); else how many stand before it."""
        with self._lock:
            ordered = sorted(self._ordered(t) for t in self._waiting.values())
            ahead = next(i for i, t in enumerate(ordered) if t.number == ticket.number)
            free = self.slots - sum(self._running.values())
            # Granted when a slot is free, its visitor holds none, and nobody eligible stands before it.
            eligible = [t for t in ordered if not self._running.get(t.visitor)]
            if free > 0 and eligible and eligible[0].number == ticket.number:
                del self._waiting[ticket.number]
                self._running[ticket.visitor] = self._running.get(ticket.visitor, 0) + 1
                self._served[ticket.visitor] = self._served.pop(ticket.visitor, 0) + 1
                while len(self._served) > self.REMEMBERED:
                    self._served.popitem(last=False)
                return 0
            return ahead + 1

    def leave(self, ticket: Ticket) -> None:
        """Out of the line without a slot (the visitor left or cancelled while waiting)."""
        with self._lock:
            self._waiting.pop(ticket.number, None)

    def release(self, visitor: str) -> None:
        """A granted run has ended: its slot is free."""
        with self._lock:
            left = self._running.get(visitor, 0) - 1
            if left > 0:
                self._running[visitor] = left
            else:
                self._running.pop(visitor, None)

    @property
    def slots(self) -> int:
        return self._slots()

    def _ordered(self, ticket: Ticket) -> Ticket:
        ticket.order = (
            1 if self._running.get(ticket.visitor) else 0,
            self._served.get(ticket.visitor, 0),
            ticket.number,
        )
        return ticket

    def running(self) -> int:
        with self._lock:
            return sum(self._running.values())

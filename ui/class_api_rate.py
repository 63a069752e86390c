"""A rate per client address on the class's named endpoints (ui/classroom/api.py) as scripts call
them, in public mode: straight to `/gradio_api/run/class_*` (or `/api/`, `/call/`, `/call/v2/`), or
by number (`fn_index` in the body of any of those routes or of `/gradio_api/queue/join`, as
`gradio_client` calls, which Gradio takes over the name in the address).

Each of those calls goes through Gradio's whole pipeline (about 5 ms of the app's CPU; 70 ms when
it names a session Gradio does not hold, whose state is built first), so one script playing 120
students as fast as its replies came kept the app's cores busy and another visitor waited 4-5x
idle (BENCHMARKS "Third attack round").
A notebook running a class makes a call or two a second; phones use the class's own page and its
light routes (`/class/...`, ui/classroom/student_page.py), which this does not count.

`Limits.class_api_rate` calls a second per address (PROBE_CLASS_API_RATE; a call that opens a
session counts NEW_SESSION_COST times), as a generic cell rate:
BURST_SECONDS of calls may go at once, the next ones are held (asleep, costing nothing) until their
turn, up to MAX_WAIT seconds; a call whose turn is further off is refused with 429 and when to
come back, before Gradio reads it.

A plain ASGI middleware (no Gradio here), after ui/body_bound.py in `launch(app_kwargs=)`."""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from probes.running.limits import client_address
from probes.running.limits import current as limits
from ui.body_bound import header, read_body

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

CALL = re.compile(r"/gradio_api/(?:(?:run|api|call|call/v2)/(?P<name>[^/]+)|queue/join)/?$")
CLASS = "class_"  # the class's endpoints' names begin so
BURST_SECONDS = 3.0  # a rate's worth of calls for this long may go at once (a script's start)
MAX_WAIT = 2.0  # seconds a call is held for its turn before it is refused instead
MAX_ADDRESSES = 10_000  # addresses remembered (the least recent forgotten first)
# A call naming a session Gradio does not hold has that session's state built first: 67-74 ms of
# the app's CPU, against 5 ms for a call of a session it holds (measured on class_join and
# class_item, 60 calls each); such a call takes this many calls' turns.
NEW_SESSION_COST = 5


class CallRate:
    """When each address's next call is due at its rate; thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._due: OrderedDict[str, float] = OrderedDict()
        self._clock = clock
        self._lock = threading.Lock()

    def take(self, address: str, rate: float, cost: float = 1.0) -> tuple[bool, float]:
        """(True, seconds to hold the call first) when `address` may make a call at `rate` a
        second, the call taking `cost` calls' turns; (False, seconds until it may) when its turn
        is more than MAX_WAIT away."""
        now = self._clock()
        with self._lock:
            due = max(self._due.pop(address, now), now)
            wait = due - now - BURST_SECONDS
            if wait > MAX_WAIT + 1e-6:  # (the due times add up in floats)
                self._due[address] = due
                return False, wait - MAX_WAIT
            self._due[address] = due + cost / rate
            while len(self._due) > MAX_ADDRESSES:
                self._due.popitem(last=False)
            return True, max(0.0, wait) if wait > 1e-6 else 0.0


class ClassApiRate:
    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], rate: CallRate | None = None) -> None:
        self.app = app
        self.rate = rate or CallRate()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        bounds = limits()
        call = CALL.search(scope.get("path", "")) if scope["type"] == "http" and scope.get("method") == "POST" else None
        if bounds.class_api_rate is None or call is None:
            await self.app(scope, receive, send)
            return
        messages, body = await read_body(receive)
        endpoint, new_session = _call(scope, call.group("name"), body)
        if endpoint.startswith(CLASS):
            client = scope.get("client")
            peer = str(client[0]) if client else "unknown"
            address = client_address(header(scope, b"x-forwarded-for"), peer, bounds.trusted_proxies)[:64]
            cost = NEW_SESSION_COST if new_session else 1
            admitted, seconds = self.rate.take(address, bounds.class_api_rate, cost)
            if not admitted:
                await _refuse(send, bounds.class_api_rate, seconds)
                return
            if seconds > 0:
                await asyncio.sleep(seconds)

        async def replayed() -> MutableMapping[str, Any]:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replayed, send)


def _call(scope: Scope, named: str | None, body: bytes | None) -> tuple[str, bool]:
    """(the name of the endpoint a call reaches, whether it names a session Gradio does not hold).
    The endpoint: the one its body's `fn_index` numbers (Gradio takes that first), else the one
    its address names ("" for neither). A body naming no session is a new one (Gradio makes one)."""
    found: Any = None
    if body and body.lstrip().startswith(b"{"):
        try:
            found = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            found = None
    fields = found if isinstance(found, dict) else {}
    app = scope.get("app")
    blocks = app.get_blocks() if app is not None and hasattr(app, "get_blocks") else None
    session = fields.get("session_hash")
    holder = getattr(blocks, "state_holder", None)
    new_session = not (isinstance(session, str) and session and holder is not None and session in holder)
    number = fields.get("fn_index")
    if isinstance(number, int) and not isinstance(number, bool):
        function = blocks.fns.get(number) if blocks is not None else None
        name = getattr(function, "api_name", None)
        return (name if isinstance(name, str) else ""), new_session
    return named or "", new_session


def refusal(rate: int, wait: float) -> str:
    seconds = math.ceil(wait)
    return (f"too many calls to the class's endpoints from your address (at most {rate} a second): try again in "
            f"{seconds} second{'s' if seconds != 1 else ''}; a phone answers on the class's own page "
            "(/class/CODE), which is not counted")  # fmt: skip


async def _refuse(send: Send, rate: int, wait: float) -> None:
    body = json.dumps({"error": refusal(rate, wait)}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"retry-after", str(math.ceil(wait)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})

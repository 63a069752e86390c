"""A bound on the new sessions one client address may open (public mode), before Gradio sees them.

Gradio keeps a state for every session id a request names (every component's configuration:
about 0.7 MB and 40 ms of CPU each; a page load is one, a gradio_client is one, and an API call
that names none gets one of its own). The app's launch keeps at most `Limits.max_sessions` of
them (least recently used forgotten first), which bounds the memory; this middleware keeps one
address from opening more than `Limits.new_sessions` in `NEW_SESSION_WINDOW`, so a script making
up session ids cannot push the Space's visitors out of that capacity in minutes. A session once
admitted is never counted again; a request over the bound is refused with 429 and never read
further.

A plain ASGI middleware (no Gradio here), after ui/body_bound.py in `launch(app_kwargs=)`: the
bodies it reads are already bounded there."""

from __future__ import annotations

import json
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from probes.running.limits import NEW_SESSION_WINDOW, client_address
from probes.running.limits import current as limits
from ui.body_bound import MAX_BODY_BYTES, UPLOADS, header

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_SESSION_ID = 256  # characters of a session id taken as one; Gradio's are 11 to 36
MAX_ADDRESSES = 10_000  # addresses whose new sessions are remembered (oldest forgotten; at most ~77 MB)


class NewSessions:
    """Which sessions were admitted (the most recent `known` of them) and when each address
    opened its new ones; thread-safe."""

    def __init__(self, known: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._known: OrderedDict[str, None] = OrderedDict()
        self._opened: OrderedDict[str, deque[float]] = OrderedDict()
        self._bound, self._clock = known, clock
        self._lock = threading.Lock()

    def admit(self, address: str, session: str | None, per_address: int, window: float) -> float | None:
        """None if the request may go on (a known session, or a new one within the address's
        bound, then known); else the seconds until the address may open another. A request
        naming no session opens one each time (Gradio makes one for it)."""
        now = self._clock()
        with self._lock:
            if session is not None and session in self._known:
                self._known.move_to_end(session)
                return None
            opened = self._opened.pop(address, None) or deque()
            while opened and opened[0] <= now - window:
                opened.popleft()
            self._opened[address] = opened  # the most recent address last: the oldest forgotten first
            while len(self._opened) > MAX_ADDRESSES:
                self._opened.popitem(last=False)
            if len(opened) >= per_address:
                return max(1.0, opened[0] + window - now)
            opened.append(now)
            if session is not None:
                self._known[session] = None
                while len(self._known) > self._bound:
                    self._known.popitem(last=False)
            return None


class SessionBound:
    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], sessions: NewSessions | None = None):
        self.app = app
        self.sessions = sessions or NewSessions(known=4 * limits().max_sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        bounds = limits()
        if (
            bounds.new_sessions is None
            or scope["type"] != "http"
            or scope.get("method") != "POST"
            or scope.get("path", "").endswith(UPLOADS)
        ):
            await self.app(scope, receive, send)
            return
        messages, body = await _read(receive)
        address = client_address(header(scope, b"x-forwarded-for"), _peer(scope), bounds.trusted_proxies)[:64]
        wait = self.sessions.admit(address, _session_of(body), bounds.new_sessions, NEW_SESSION_WINDOW)
        if wait is not None:
            await _refuse(send, bounds.new_sessions, wait)
            return

        async def replayed() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replayed, send)


async def _read(receive: Receive) -> tuple[list[Message], bytes | None]:
    """The request's messages as received, and its body (None past MAX_BODY_BYTES: not read as one)."""
    messages: list[Message] = []
    body = bytearray()
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, None
        body += message.get("body", b"")
        if len(body) > MAX_BODY_BYTES:
            return messages, None
        if not message.get("more_body", False):
            return messages, bytes(body)


def _session_of(body: bytes | None) -> str | None:
    """The session id a Gradio request body names, or None (none, or not a body Gradio reads)."""
    if not body or not body.lstrip().startswith(b"{"):
        return None
    try:
        session = json.loads(body).get("session_hash")
    except (ValueError, UnicodeDecodeError):
        return None
    return session if isinstance(session, str) and 0 < len(session) <= MAX_SESSION_ID else None


def _peer(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


async def _refuse(send: Send, per_address: int, wait: float) -> None:
    minutes = math.ceil(wait / 60)
    message = (f"too many new sessions from your address ({per_address} in {NEW_SESSION_WINDOW / 60:.0f} minutes): "
               f"try again in {minutes} minute{'s' if minutes != 1 else ''}")  # fmt: skip
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"retry-after", str(math.ceil(wait)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})

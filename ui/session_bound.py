"""A bound on the new sessions one client address may open (public mode), before Gradio sees them.

Gradio keeps a state for every session id a request names (every component's configuration:
about 0.7 MB and 40 ms of CPU each; a page load is one, a gradio_client is one, and an API call
that names none gets one of its own). The app's launch keeps at most `Limits.max_sessions` of
them (least recently used forgotten first), which bounds the memory; this middleware keeps one
address from opening more than `Limits.new_sessions` in `NEW_SESSION_WINDOW`, so a script making
up session ids cannot push the Space's visitors out of that capacity in minutes. A session once
admitted is never counted again; a request over the bound is refused with 429 and never read
further.

A page load always opens a new session (the browser makes its id), so the page itself is refused
when its address has no room left: one plain page saying why and when to come back, before
Gradio's client starts. Served, that page's every load event would be refused on its own, each
with an error of its own (six of them on one page).

A plain ASGI middleware (no Gradio here), after ui/body_bound.py in `launch(app_kwargs=)`: the
bodies it reads are already bounded there."""

from __future__ import annotations

import html
import json
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from probes.running.limits import NEW_SESSION_WINDOW, client_address
from probes.running.limits import current as limits
from ui.body_bound import UPLOADS, header, read_body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

# Routes served beside Gradio's that open no Gradio session (a class's own page and its JSON
# routes, ui/classroom/student_page.py): a class bounds its own members, per class and per address.
OWN_ROUTES = ("/class/",)
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

    def room(self, address: str, per_address: int, window: float) -> float | None:
        """None if `address` may open another session now; else the seconds until it may. Opens
        nothing (a page load asks before its client opens its session)."""
        now = self._clock()
        with self._lock:
            opened = [when for when in self._opened.get(address, ()) if when > now - window]
            return max(1.0, opened[0] + window - now) if len(opened) >= per_address else None

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
        if bounds.new_sessions is not None and scope["type"] == "http" and _is_page(scope):
            address = client_address(header(scope, b"x-forwarded-for"), _peer(scope), bounds.trusted_proxies)[:64]
            wait = self.sessions.room(address, bounds.new_sessions, NEW_SESSION_WINDOW)
            if wait is not None:
                await _refuse_page(send, bounds.new_sessions, wait)
                return
        if (
            bounds.new_sessions is None
            or scope["type"] != "http"
            or scope.get("method") != "POST"
            or scope.get("path", "").endswith(UPLOADS)
            or scope.get("path", "").startswith(OWN_ROUTES)
        ):
            await self.app(scope, receive, send)
            return
        messages, body = await read_body(receive)
        address = client_address(header(scope, b"x-forwarded-for"), _peer(scope), bounds.trusted_proxies)[:64]
        wait = self.sessions.admit(address, _session_of(body), bounds.new_sessions, NEW_SESSION_WINDOW)
        if wait is not None:
            await _refuse(send, bounds.new_sessions, wait)
            return

        async def replayed() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replayed, send)


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


def _is_page(scope: Scope) -> bool:
    """A load of the app's page (its address, any query), not of its files or routes."""
    root = scope.get("root_path", "") or ""
    return scope.get("method") == "GET" and scope.get("path", "") in ("/", "", f"{root}/", root)


def _refusal(per_address: int, wait: float) -> str:
    minutes = math.ceil(wait / 60)
    return (f"too many new sessions from your address ({per_address} in {NEW_SESSION_WINDOW / 60:.0f} minutes): "
            f"try again in {minutes} minute{'s' if minutes != 1 else ''}")  # fmt: skip


async def _refuse_page(send: Send, per_address: int, wait: float) -> None:
    """The page refused as one plain page (no script runs, so no other message follows)."""
    message = html.escape(_refusal(per_address, wait))
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Perception playground: come back soon'
        '</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>'
        '<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 3em auto; padding: 0 1em">'
        f'<h1>Perception playground</h1><p id="refused">{message[:1].upper()}{message[1:]}.</p>'
        "<p>A page of this playground already open goes on working.</p></body></html>"
    ).encode()
    headers = [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode()),
               (b"retry-after", str(math.ceil(wait)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _refuse(send: Send, per_address: int, wait: float) -> None:
    message = _refusal(per_address, wait)
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"retry-after", str(math.ceil(wait)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})

"""A bound on what a request may send before the app reads it: every page event, API call and
queue message is a JSON body of a few kilobytes (pictures go through the upload route, which
Gradio bounds by `max_file_size`), so a body past MAX_BODY_BYTES is refused with 413 as soon as
its Content-Length says so, or, sent without one (chunked), as soon as the bytes received pass
the bound: never parsed, never held whole in memory.

A plain ASGI middleware (no Gradio here), given to the FastAPI app through `launch(app_kwargs=)`."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

MAX_BODY_BYTES = 2 * 2**20  # the longest text a form takes is 64 KB; a state of the page a few more
UPLOADS = "/gradio_api/upload"  # bounded by Gradio's own max_file_size, streamed to disk

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class BodyBound:
    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path", "").endswith(UPLOADS):
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None:  # the server's HTTP parser holds the client to the length it declared
            if declared > self.limit:
                await self._refuse(send)
            else:
                await self.app(scope, receive, send)
            return
        # No length declared (chunked): read up to the bound here, then hand the app what came.
        messages: list[Message] = []
        received = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            received += len(message.get("body", b""))
            if received > self.limit:
                await self._refuse(send)
                return
            if not message.get("more_body", False):
                break

        async def replayed() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replayed, send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"error": f"a request carries at most {self.limit // 2**20} MB"}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]  # fmt: skip
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def read_body(receive: Receive) -> tuple[list[Message], bytes | None]:
    """The request's messages as received (to hand on to the app), and its body (None past
    MAX_BODY_BYTES: not read as one). For the middlewares after this one, which read a body
    whose size this one has bounded."""
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


def header(scope: Scope, name: bytes) -> str:
    """A request header's value (the first, as sent), or "" without one."""
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return ""


def _content_length(scope: Scope) -> int | None:
    try:
        return int(header(scope, b"content-length"))
    except ValueError:
        return None

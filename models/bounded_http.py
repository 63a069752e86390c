"""The HTTP client the API backends give their SDK: every reply read under a byte bound and
every attempt under a deadline.

Both SDKs (openai 3.x, anthropic 2.x) send through an `httpx2.AsyncClient` and read a reply
whole with `send(request, stream=False)`, which reads the body inside `send`. `BoundedClient`
overrides that one method:

- the attempt (waiting for a connection, connecting, sending, the headers, the whole body) ends
  by its deadline: the request's own timeout, which httpx2 applies to each read, applies here to
  the attempt as a whole, so a server dripping a byte a second cannot keep it alive;
- the body is counted as httpx2 decodes it (gzip, deflate, brotli: httpx2's decoders hand out
  at most 1 MiB at a time), and reading stops past `max_bytes`, decompressed or on the wire: a
  gzip bomb costs a few MB, not a GB. A declared Content-Length past the bound is refused unread;
- a body read whole must hold at most `max_values` JSON values (see models/replies.py);
- redirects are not followed: httpx2 reads a redirect's body without any bound before following
  it, and an API request has no business being sent elsewhere.

Past the deadline `send` raises `AttemptDeadline`, an httpx2 timeout, so the SDK retries it as it
retries its own timeouts; past a bound it raises `too_large` (a `ReplyTooLarge`), which the SDKs
do not retry (anthropic's backend passes a subclass that is also an `AnthropicError` for that).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2

from models.replies import MAX_JSON_VALUES, MAX_REPLY_BYTES, ReplyRefused, ReplyTooLarge, json_values

_DROPPED_HEADERS = ("content-encoding", "content-length")  # the body handed on is decoded


class AttemptDeadline(ReplyRefused, httpx2.ReadTimeout):
    """One attempt (connect, headers, body) took longer than the request's timeout."""

    def __init__(self, seconds: float, request: httpx2.Request | None = None):
        message = (
            f"no complete reply within {seconds:g} s of sending "
            "(the deadline of one attempt: connecting, the headers and the whole body)"
        )
        httpx2.ReadTimeout.__init__(self, message, request=request)


class BoundedClient(httpx2.AsyncClient):
    def __init__(
        self,
        *,
        max_bytes: int = MAX_REPLY_BYTES,
        max_values: int = MAX_JSON_VALUES,
        too_large: type[ReplyTooLarge] = ReplyTooLarge,
        **kwargs: Any,
    ):
        kwargs["follow_redirects"] = False
        super().__init__(**kwargs)
        self.max_bytes = max_bytes
        self.max_values = max_values
        self.too_large = too_large

    async def send(self, request: httpx2.Request, *, stream: bool = False, **kwargs: Any) -> httpx2.Response:
        kwargs["follow_redirects"] = False
        seconds = attempt_seconds(request)
        deadline = None if seconds is None else anyio.current_time() + seconds
        try:
            with anyio.fail_after(seconds):
                response = await super().send(request, stream=True, **kwargs)
        except TimeoutError:
            raise AttemptDeadline(seconds or 0.0, request) from None
        declared = response.headers.get("content-length", "")
        if declared.strip().isdigit() and int(declared) > self.max_bytes:
            await response.aclose()
            raise self.too_large(
                f"the server announced a reply of {int(declared):,} bytes, past the {_mb(self.max_bytes)} "
                "a reply may weigh; none of it was read"
            )
        bounded = httpx2.Response(
            response.status_code,
            headers=[(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DROPPED_HEADERS],
            stream=_BoundedBody(self, response, deadline, seconds),
            request=request,
            extensions=response.extensions,
            history=response.history,
            default_encoding=response.default_encoding,
        )
        if stream:
            return bounded
        try:
            body = await bounded.aread()
        except BaseException:
            await bounded.aclose()
            raise
        if json_values(body) > self.max_values:
            raise self.too_large(
                f"the server's reply held more than {self.max_values:,} JSON values "
                "(an honest reply holds a few dozen); it was not parsed"
            )
        bounded.elapsed = response.elapsed
        return bounded


class _BoundedBody(httpx2.AsyncByteStream):
    """The decoded body of `response`, counted and under the attempt's deadline."""

    def __init__(self, client: BoundedClient, response: httpx2.Response, deadline: float | None, seconds: float | None):
        self._client = client
        self._response = response
        self._deadline = deadline
        self._seconds = seconds

    async def __aiter__(self) -> AsyncIterator[bytes]:
        limit = self._client.max_bytes
        parts = self._response.aiter_bytes()
        read = 0
        try:
            while True:
                left = None if self._deadline is None else max(0.0, self._deadline - anyio.current_time())
                try:
                    with anyio.fail_after(left):  # not around the yield: the caller's time is not ours
                        piece = await parts.__anext__()
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    raise AttemptDeadline(self._seconds or 0.0, self._response.request) from None
                read += len(piece)
                if read > limit or self._response.num_bytes_downloaded > limit:
                    raise self._client.too_large(
                        f"the server's reply passed {_mb(limit)} (counted decompressed); nothing more was read"
                    )
                yield piece
        finally:
            await parts.aclose()

    async def aclose(self) -> None:
        await self._response.aclose()


def attempt_seconds(request: httpx2.Request) -> float | None:
    """The request's timeout (the SDK sets it per request), taken as the whole attempt's."""
    timeout = request.extensions.get("timeout") or {}
    values = [v for v in timeout.values() if isinstance(v, (int, float))] if isinstance(timeout, dict) else []
    return max(values) if values else None


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"

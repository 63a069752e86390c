"""A very small HTTP/1.1 client on asyncio's streams, for benches that play hundreds of phones.

A hall of 300 phones is 300 devices; on the bench's machine it is one Python process sharing
two cores with the app. httpx's asynchronous client spends about 20 ms of CPU per request with
300 connections open (its pool is searched on every request), so most of what such a bench
measured was its own clients: 300 answers took 6 s of the bench's CPU against 1.2 s of the
app's. This client does what the student page's `fetch` and `EventSource` do and nothing more:
one kept-alive connection per phone for its requests, one for its event stream, JSON bodies,
`Content-Length` or chunked replies. Not a general client: no TLS, no redirects, no proxies.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit


class Connection:
    """One kept-alive connection to `url`'s host, its requests one after another."""

    def __init__(self, url: str, headers: Mapping[str, str] | None = None) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.root = parts.path.rstrip("/")
        self.headers = dict(headers or {})
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        return self._reader, self._writer

    def _head(self, method: str, path: str, length: int | None) -> bytes:
        lines = [f"{method} {self.root}{path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{name}: {value}" for name, value in self.headers.items()]
        if length is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {length}"]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _exchange(self, request: bytes) -> tuple[int, Any]:
        """Send `request`, read its JSON reply. A kept-alive connection the server has closed
        meanwhile (uvicorn closes them after 5 idle seconds) is opened again and the request sent
        once more, as a browser does when nothing of the reply came back."""
        for attempt in (1, 2):
            reused = self._writer is not None and not self._writer.is_closing()
            reader, writer = await self._open()
            writer.write(request)
            try:
                status, headers = await _read_head(reader)
            except (asyncio.IncompleteReadError, ConnectionResetError):
                self.close()
                self._writer = None
                if reused and attempt == 1:
                    continue
                raise
            return status, json.loads(await _read_body(reader, headers))
        raise AssertionError("unreachable")

    async def post_json(self, path: str, payload: Any) -> tuple[int, Any]:
        """(status, the reply's JSON) of a POST of `payload` as JSON."""
        body = json.dumps(payload).encode()
        return await self._exchange(self._head("POST", path, len(body)) + body)

    async def get_json(self, path: str, params: Mapping[str, str]) -> tuple[int, Any]:
        return await self._exchange(self._head("GET", f"{path}?{urlencode(params)}", None))

    async def events(self, path: str, params: Mapping[str, str]) -> AsyncIterator[Any]:
        """Each `data:` of a server-sent event stream, as JSON, for as long as it lasts."""
        reader, writer = await self._open()
        writer.write(self._head("GET", f"{path}?{urlencode(params)}", None))
        status, headers = await _read_head(reader)
        if status != 200:
            raise ConnectionError(f"{path}: {status} {await _read_body(reader, headers)!r}")
        pending = b""
        async for piece in _pieces(reader, headers):
            pending += piece
            *events, pending = pending.split(b"\n\n")
            for event in events:
                for line in event.split(b"\n"):
                    if line.startswith(b"data: "):
                        yield json.loads(line[6:])

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers


async def _pieces(reader: asyncio.StreamReader, headers: Mapping[str, str]) -> AsyncIterator[bytes]:
    if headers.get("transfer-encoding", "").lower() != "chunked":
        yield await reader.readexactly(int(headers.get("content-length", "0")))
        return
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        piece = await reader.readexactly(size + 2)  # the piece and its CRLF
        if size == 0:
            return
        yield piece[:-2]


async def _read_body(reader: asyncio.StreamReader, headers: Mapping[str, str]) -> bytes:
    return b"".join([piece async for piece in _pieces(reader, headers)])

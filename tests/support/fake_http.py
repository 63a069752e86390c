"""The HTTP machinery under the fake protocol servers: a threaded server on 127.0.0.1, the request
record, injected faults, and the base class each protocol fills in (tests/support/fake_servers.py).
Standard library only."""

from __future__ import annotations

import abc
import itertools
import json
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict], str]


def default_responder(body: dict) -> str:
    return "Yes"


@dataclass
class Fault:
    """What to do to one request instead of answering it well.

    kind: "reply" (send `reply`, e.g. a 429 with Retry-After), "drop" (close the connection
    without a reply), "slow" (wait `seconds`, then answer), "invalid-json" (200 with a broken
    body), "empty" (200 with no choices / no content), "raw" (`write(handler)` writes whatever
    bytes it likes to the connection, which is closed afterwards: a reply dripped a byte at a
    time, chunked without end, compressed; see tests/support/hostile_servers.py).
    """

    kind: str
    reply: Reply | None = None
    seconds: float = 0.0
    write: Callable[[Any], None] | None = None


@dataclass
class Reply:
    """A complete HTTP answer. ``body`` may be a JSON-able object or raw bytes."""

    status: int
    body: Any
    headers: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- #
# HTTP plumbing
# --------------------------------------------------------------------------- #


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    fake: _FakeServerBase  # set by _FakeServerBase.start()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.conns: set = set()  # open client sockets (for stop())
        self.conn_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def close_connections(self) -> None:
        """Hang up idle keep-alive connections so handler threads exit."""
        with self.conn_lock:
            conns = list(self.conns)
        for sock in conns:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-reply is what a client should do to a hostile reply (see
        # tests/support/hostile_servers.py), not the server's failure: no traceback for it.
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)

    def server_bind(self) -> None:
        # HTTPServer.server_bind() calls socket.getfqdn(), which can stall for
        # seconds on hosts with broken reverse DNS.  Skip it.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = host
        self.server_port = port


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # silence
        pass

    def setup(self) -> None:
        super().setup()
        with self.server.conn_lock:
            self.server.conns.add(self.connection)

    def finish(self) -> None:
        with self.server.conn_lock:
            self.server.conns.discard(self.connection)
        super().finish()

    def do_POST(self) -> None:
        self.server.fake._handle(self)

    def do_GET(self) -> None:
        self.server.fake._handle(self)

    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    # consume trailers up to the blank line
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()  # CRLF after each chunk
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send_reply(self, reply: Reply) -> None:
        if isinstance(reply.body, (bytes, bytearray)):
            payload = bytes(reply.body)
            ctype = "application/octet-stream"
        else:
            payload = json.dumps(reply.body).encode("utf-8")
            ctype = "application/json"
        headers = {"Content-Type": ctype, **(reply.headers or {})}
        self.send_response(reply.status)
        for name, value in headers.items():
            if name.lower() in ("content-length", "connection"):
                continue
            self.send_header(name, str(value))
        self.send_header("Content-Length", str(len(payload)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.wfile.flush()


# --------------------------------------------------------------------------- #
# Base class
# --------------------------------------------------------------------------- #


class _FakeServerBase(abc.ABC):
    #: request paths this server answers (exact match, query string ignored)
    paths: tuple = ()
    #: appended to "http://127.0.0.1:PORT" to form base_url
    base_path: str = ""

    def __init__(
        self,
        responder: Responder | None = None,
        latency: float = 0.0,
        fault: Callable[[dict], Fault | None] | None = None,
    ) -> None:
        self.responder: Responder = responder or default_responder
        self.latency = float(latency)
        #: fault(record) -> a Fault to inject into this request, or None to answer normally
        self.fault = fault
        self.requests: list[dict] = []
        #: exceptions raised by the responder (each also answered with a 500)
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._counter = itertools.count()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------- #

    def start(self) -> _FakeServerBase:
        if self._httpd is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{type(self).__name__}:{httpd.server_port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        httpd.close_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- introspection ----------------------------------------------------- #

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return self._httpd.server_port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.base_path}"

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def reset(self) -> None:
        """Forget recorded requests and errors."""
        with self._lock:
            self.requests.clear()
            self.errors.clear()

    # -- request pipeline -------------------------------------------------- #

    def _handle(self, h: _Handler) -> None:
        path = h.path.split("?", 1)[0]
        raw = h.read_body()
        if h.command == "GET" and path == "/_stats":  # for a server in another process
            h.send_reply(Reply(200, {"requests": self.request_count}))
            return
        if h.command != "POST" or path not in self.paths:
            h.send_reply(self.error_reply(404, "not_found", f"no route for {h.command} {path}"))
            return
        try:
            body = json.loads(raw) if raw else {}
        except ValueError as exc:
            body = None
            bad_json: str | None = str(exc)
        else:
            bad_json = None

        record = {
            "path": path,
            "headers": {k.lower(): v for k, v in h.headers.items()},
            "body": body,
            "client": h.client_address,  # (host, port): same port => same keep-alive connection
            "attempt": int(h.headers.get("x-stainless-retry-count") or 0),  # the SDKs' retry counter
            "time": time.monotonic(),
        }
        with self._lock:
            record["index"] = next(self._counter)
            self.requests.append(record)

        if self.latency > 0:
            time.sleep(self.latency)

        if bad_json is not None or not isinstance(body, dict):
            h.send_reply(self.error_reply(400, "invalid_request", f"body is not a JSON object: {bad_json}"))
            return
        injected = self.fault(record) if self.fault else None
        if injected is not None:
            if injected.kind == "drop":  # hang up without a byte of reply
                h.close_connection = True
                h.connection.shutdown(socket.SHUT_RDWR)
                return
            if injected.kind == "slow":
                time.sleep(injected.seconds)
            elif injected.kind == "reply":
                h.send_reply(injected.reply)
                return
            elif injected.kind == "raw":
                h.close_connection = True
                try:
                    injected.write(h)
                    h.wfile.flush()
                except OSError:  # the client hung up, as it should on a hostile reply
                    pass
                return
            elif injected.kind == "invalid-json":
                h.send_reply(Reply(200, b'{"id": "chatcmpl-x", "choices": [', {"Content-Type": "application/json"}))
                return
            elif injected.kind == "empty":
                body_out = self.success_body(body, "")
                for key in ("choices", "content"):
                    if key in body_out:
                        body_out[key] = []
                h.send_reply(Reply(200, body_out))
                return
        reply = self._intercept(record)
        if reply is None:
            if body.get("stream"):
                reply = self.error_reply(400, "invalid_request", "the fake server does not implement streaming")
            else:
                try:
                    text = self.responder(body)
                except Exception as exc:  # surface to the test, answer 500
                    with self._lock:
                        self.errors.append(exc)
                    reply = self.error_reply(500, "server", f"responder raised {exc!r}")
                else:
                    reply = Reply(200, self.success_body(body, str(text)))
        reply.headers = {**self.extra_headers(), **(reply.headers or {})}
        h.send_reply(reply)

    def _intercept(self, record: dict) -> Reply | None:
        """Pre-responder checks; return a Reply to short-circuit the request.

        This is where fault injection belongs.  ``record["index"]`` is the
        0-based global arrival order of the request.
        """
        if not self.has_api_key(record["headers"]):
            return self.error_reply(401, "authentication", "missing API key")
        return None

    # -- protocol specifics (subclasses) ----------------------------------- #

    @abc.abstractmethod
    def has_api_key(self, headers: dict) -> bool: ...

    @abc.abstractmethod
    def success_body(self, body: dict, text: str) -> dict: ...

    @abc.abstractmethod
    def error_reply(self, status: int, kind: str, message: str) -> Reply:
        """``kind`` is one of: authentication, invalid_request, not_found, server."""

    def extra_headers(self) -> dict:
        return {}


# --------------------------------------------------------------------------- #
# Token counting (rough: whitespace-separated words)
# --------------------------------------------------------------------------- #


def _words(value: Any) -> int:
    """Words in all text in a message content (str or list of parts)."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_words(p) for p in value)
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return len(value["text"].split())
        if "content" in value:  # e.g. anthropic tool_result
            return _words(value["content"])
    return 0


def _prompt_tokens(body: dict) -> int:
    n = _words(body.get("system"))
    for m in body.get("messages") or []:
        if isinstance(m, dict):
            n += _words(m.get("content"))
    return n

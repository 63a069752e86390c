"""Model servers that lie: an OpenAI- and an Anthropic-protocol server on 127.0.0.1 whose replies
attack the client, one attack per model name (so one server serves a run of several models, each
attacked its own way, and `fine` answers well).

Attacks (the model name after the provider, e.g. `openai/number`):

- shapes the SDKs accept: `parts` (content as a list of text parts, with other parts mixed in:
  reads as "Yes"), `number`, `bool`, `null`, `object`, `no-text` (only image or tool parts),
  `odd-fields` (content fine, usage and ids of the wrong types), `text-body` (a 200 whose body is
  plain text), `json-list` (a 200 whose body is a JSON list), `deep` (nested 50,000 levels);
- size: `huge` (50 MB, Content-Length announced), `huge-chunked` (50 MB chunked, no length),
  `long` (a 1 MB reply text ending "Yes": under the wire bound, over what is kept), `bomb` (gzip: 1 MB
  inflating to 1 GB of a valid reply), `bomb-nested` (gzip inside gzip), `values` (3 MB of tiny
  JSON objects), `huge-error` (a 500 with a 50 MB chunked body), `sse` (an OpenAI event stream
  that never ends, for a client that asked to stream);
- honest compression, which must keep working: `gzip` and `brotli` (a good reply, compressed);
- elsewhere: `redirect` (307 to another address);
- time: `drip` (the body a byte every `drip_seconds`), `drip-headers` (the status line and
  headers a byte at a time), `slow-429` (429 with Retry-After: 2, every time);
- keys: `echo` (the reply's text holds the caller's key in every form below), `echo-error` (a
  401 whose message holds them), `echo-id` (the reply's id and finish reason hold them).

`key_forms(key)` lists the forms: exact, upper, lower, reversed, split by spaces and by line
breaks, masked three ways, hex, base64 of the key, of "Bearer <key>" and of "user:<key>" (the
standard and URL-safe alphabets), and the key's base64 broken over lines.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterable

from tests.support.fake_servers import FakeAnthropicServer, FakeOpenAIServer, Fault, Reply

MB = 1024 * 1024
HUGE_BYTES = 50 * MB
LONG_CHARS = 1 * MB
BOMB_INFLATED = 1024 * MB


def key_forms(key: str) -> dict[str, str]:
    """Every form of `key` a careless or hostile server might send back, by name."""
    b64 = lambda data: base64.b64encode(data.encode()).decode()  # noqa: E731
    url64 = lambda data: base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")  # noqa: E731
    spaced = " ".join(key[i : i + 4] for i in range(0, len(key), 4))
    return {
        "exact": key,
        "upper": key.upper(),
        "lower": key.lower(),
        "reversed": key[::-1],
        "spaced": spaced,
        "lines": "\n".join(key[i : i + 7] for i in range(0, len(key), 7)),
        "masked-dots": f"{key[:3]}...{key[-4:]}",
        "masked-stars": f"{key[:8]}{'*' * 20}{key[-4:]}",
        "masked-middle": f"{key[:12]}****{key[16:]}",
        "hex": key.encode().hex(),
        "base64": b64(key),
        "base64-bearer": b64(f"Bearer {key}"),
        "base64-basic": b64(f"user:{key}"),
        "base64-url": url64(f"Bearer {key}"),
        "base64-lines": "\n".join(b64(key)[i : i + 10] for i in range(0, len(b64(key)), 10)),
    }


def key_of(headers: dict) -> str:
    """The key a client sent (Authorization: Bearer, or Anthropic's x-api-key)."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else headers.get("x-api-key", "")


class Attacks:
    """The fault hook of a hostile server: `server = FakeOpenAIServer(fault=Attacks("openai"))`.
    Counts what it did: `launched[name]`, and for the drip attacks the bytes it got out."""

    def __init__(self, protocol: str = "openai", drip_seconds: float = 0.5, drip_bytes: int = 400):
        self.protocol = protocol
        self.drip_seconds = drip_seconds
        self.drip_bytes = drip_bytes  # a dripped reply's length: minutes at drip_seconds a byte
        self.launched: Counter = Counter()
        self.dripped: list[int] = []  # bytes out, per dripped attempt
        self._lock = threading.Lock()

    def __call__(self, record: dict) -> Fault | None:
        body = record["body"] or {}
        name = str(body.get("model", ""))
        attack = getattr(self, "_" + name.replace("-", "_"), None)
        if attack is None:
            return None  # `fine` and any other name: a good answer
        with self._lock:
            self.launched[name] += 1
        return attack(record)

    # -- the reply's shape ------------------------------------------------------------------ #

    def _success(self, content, **fields) -> Fault:
        if self.protocol == "anthropic":
            body = {"id": "msg_1", "type": "message", "role": "assistant", "content": content,
                    "stop_reason": "end_turn", "usage": {"input_tokens": 5, "output_tokens": 1}}  # fmt: skip
        else:
            body = {"id": "chatcmpl-1", "object": "chat.completion", "usage": {"prompt_tokens": 5, "completion_tokens": 1},
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
                                 "finish_reason": "stop"}]}  # fmt: skip
        return Fault("reply", reply=Reply(200, _merged(body, fields)))

    def _parts(self, record: dict) -> Fault:
        if self.protocol == "anthropic":
            blocks = [{"type": "thinking", "thinking": "No, wait.", "signature": "s"}, {"type": "text", "text": "Ye"},
                      {"type": "mystery", "data": [1, 2]}, {"type": "text", "text": "s"}]  # fmt: skip
        else:
            blocks = [{"type": "text", "text": "Ye"}, {"type": "image_url", "image_url": {"url": "data:,"}},
                      {"type": "text", "text": "s"}]  # fmt: skip
        return self._success(blocks)

    def _number(self, record: dict) -> Fault:
        return self._success(3)

    def _bool(self, record: dict) -> Fault:
        return self._success(True)

    def _null(self, record: dict) -> Fault:
        return self._success(None)

    def _object(self, record: dict) -> Fault:
        return self._success({"unexpected": ["a", "b"]})

    def _no_text(self, record: dict) -> Fault:
        if self.protocol == "anthropic":
            return self._success([{"type": "tool_use", "id": "t", "name": "f", "input": {}}])
        return self._success([{"type": "image_url", "image_url": {"url": "data:,"}}])

    def _odd_fields(self, record: dict) -> Fault:
        usage = {"prompt_tokens": "many", "completion_tokens": {"n": 1}, "input_tokens": [1], "output_tokens": 1e300}
        return self._success("Yes" if self.protocol == "openai" else [{"type": "text", "text": "Yes"}],
                             usage=usage, id={"nested": list(range(50))} )  # fmt: skip

    def _text_body(self, record: dict) -> Fault:
        return Fault("reply", reply=Reply(200, b"Yes", {"Content-Type": "text/plain"}))

    def _json_list(self, record: dict) -> Fault:
        return Fault("reply", reply=Reply(200, [1, 2, 3]))

    def _deep(self, record: dict) -> Fault:
        deep = b"[" * 50_000 + b"]" * 50_000
        return Fault("reply", reply=Reply(200, b'{"id": ' + deep + b"}", {"Content-Type": "application/json"}))

    # -- size ------------------------------------------------------------------------------ #

    def _huge(self, record: dict) -> Fault:
        head, tail = self._around_text()
        length = len(head) + HUGE_BYTES + len(tail)
        return Fault(
            "raw",
            write=lambda h: _plain(
                h, 200, {"Content-Length": length}, [head, *_repeat(b"A" * MB, HUGE_BYTES // MB), tail]
            ),
        )

    def _huge_chunked(self, record: dict) -> Fault:
        head, tail = self._around_text()
        return Fault("raw", write=lambda h: _chunked(h, 200, [head, *_repeat(b"A" * MB, HUGE_BYTES // MB), tail]))

    def _huge_error(self, record: dict) -> Fault:
        return Fault(
            "raw", write=lambda h: _chunked(h, 500, [b'{"error": {"message": "', *_repeat(b"E" * MB, 50), b'"}}'])
        )

    def _long(self, record: dict) -> Fault:
        text = "The answer is long. " * (LONG_CHARS // 20) + "So, touching? Yes"
        return self._success(text if self.protocol == "openai" else [{"type": "text", "text": text}])

    def _bomb(self, record: dict) -> Fault:
        head, tail = self._around_text()
        bomb = gzip_bomb(head, tail, BOMB_INFLATED)
        return Fault(
            "raw", write=lambda h: _plain(h, 200, {"Content-Encoding": "gzip", "Content-Length": len(bomb)}, [bomb])
        )

    def _sse(self, record: dict) -> Fault:
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "sse",
                 "choices": [{"index": 0, "delta": {"content": "Yes " * 64}, "finish_reason": None}]}  # fmt: skip
        event = b"data: " + json.dumps(chunk).encode() + b"\n\n"
        events = _repeat(event * (MB // len(event)), HUGE_BYTES // MB)
        return Fault("raw", write=lambda h: _chunked(h, 200, events, "text/event-stream"))

    def _gzip(self, record: dict) -> Fault:
        return self._compressed("gzip", _gzip)

    def _brotli(self, record: dict) -> Fault:
        import brotli

        return self._compressed("br", lambda pieces: brotli.compress(b"".join(pieces)))

    def _compressed(self, coding: str, compress) -> Fault:
        head, tail = self._around_text()
        body = compress([head, b"Yes", tail])
        headers = {"Content-Encoding": coding, "Content-Length": len(body)}
        return Fault("raw", write=lambda h: _plain(h, 200, headers, [body]))

    def _bomb_nested(self, record: dict) -> Fault:
        head, tail = self._around_text()
        inner = gzip_bomb(head, tail, BOMB_INFLATED)
        outer = _gzip([inner])
        headers = {"Content-Encoding": "gzip, gzip", "Content-Length": len(outer)}
        return Fault("raw", write=lambda h: _plain(h, 200, headers, [outer]))

    def _values(self, record: dict) -> Fault:
        many = b"[" + b"{}," * (MB) + b"{}]"
        head, tail = self._around_text()
        body = b'{"extra": ' + many + b", " + head[1:] + b"Yes" + tail
        return Fault("reply", reply=Reply(200, body, {"Content-Type": "application/json"}))

    def _around_text(self) -> tuple[bytes, bytes]:
        """A valid reply's JSON before and after its text, so that whatever fills the middle
        makes a reply the SDK would read as an answer if it read it all."""
        marker = "\u0000MARK\u0000"
        fault = self._success(marker if self.protocol == "openai" else [{"type": "text", "text": marker}])
        encoded = json.dumps(fault.reply.body).encode()
        head, tail = encoded.split(json.dumps(marker).encode()[1:-1])
        return head, tail

    # -- time ------------------------------------------------------------------------------ #

    def _drip(self, record: dict) -> Fault:
        head, tail = self._around_text()
        body = head + b"Y" * self.drip_bytes + tail
        headers = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
        return Fault("raw", write=lambda h: self._drip_out(h, headers, body))

    def _drip_headers(self, record: dict) -> Fault:
        head, tail = self._around_text()
        body = head + b"Yes" + tail
        headers = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                   + b"X-Padding: " + b"p" * self.drip_bytes + b"\r\nContent-Length: %d\r\n\r\n" % len(body))  # fmt: skip
        return Fault("raw", write=lambda h: self._drip_out(h, b"", headers + body))

    def _drip_out(self, h, prefix: bytes, dripped: bytes) -> None:
        sent = 0
        try:
            if prefix:
                h.wfile.write(prefix)
                h.wfile.flush()
            for byte in dripped:
                h.wfile.write(bytes([byte]))
                h.wfile.flush()
                sent += 1
                time.sleep(self.drip_seconds)
        finally:
            with self._lock:
                self.dripped.append(sent)

    def _redirect(self, record: dict) -> Fault:
        # Elsewhere: a port nothing listens on (a client that followed would fail to connect).
        return Fault("reply", reply=Reply(307, {"moved": True}, {"Location": "http://127.0.0.1:9/v1/messages"}))

    def _slow_429(self, record: dict) -> Fault:
        if self.protocol == "anthropic":
            body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
        else:
            body = {"error": {"message": "slow down", "type": "rate_limit", "param": None, "code": None}}
        return Fault("reply", reply=Reply(429, body, {"retry-after": "2"}))

    # -- keys ------------------------------------------------------------------------------ #

    def _echo(self, record: dict) -> Fault:
        text = "Your request came with these credentials:\n" + _listed(key_forms(key_of(record["headers"])))
        return self._success(text if self.protocol == "openai" else [{"type": "text", "text": text}])

    def _echo_error(self, record: dict) -> Fault:
        message = "Incorrect API key provided: " + _listed(key_forms(key_of(record["headers"])))
        if self.protocol == "anthropic":
            body = {"type": "error", "error": {"type": "authentication_error", "message": message}}
        else:
            body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
        return Fault("reply", reply=Reply(401, body))

    def _echo_id(self, record: dict) -> Fault:
        forms = _listed(key_forms(key_of(record["headers"])))
        fault = self._success("Yes" if self.protocol == "openai" else [{"type": "text", "text": "Yes"}], id=forms)
        choices = fault.reply.body.get("choices")
        if choices:
            choices[0]["finish_reason"] = forms
        else:
            fault.reply.body["stop_reason"] = forms
        return fault


def _merged(body: dict, fields: dict) -> dict:
    return {**body, **fields}


def _listed(forms: dict[str, str]) -> str:
    return "\n".join(f"{name}: {value}" for name, value in forms.items())


def _repeat(block: bytes, times: int) -> Iterable[bytes]:
    for _ in range(times):
        yield block


def _plain(h, status: int, headers: dict, pieces: Iterable[bytes]) -> None:
    """A reply with the given headers (a Content-Length among them), written piece by piece."""
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    h.wfile.write(f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{head}\r\n".encode())
    for piece in pieces:
        h.wfile.write(piece)


def _chunked(h, status: int, pieces: Iterable[bytes], content_type: str = "application/json") -> None:
    """A reply in chunked transfer encoding, no length announced."""
    h.wfile.write(f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
    for piece in pieces:
        if piece:
            h.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
    h.wfile.write(b"0\r\n\r\n")


def _gzip(pieces: Iterable[bytes]) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return b"".join([*(compressor.compress(p) for p in pieces), compressor.flush()])


@functools.lru_cache(maxsize=4)
def gzip_bomb(head: bytes, tail: bytes, inflated: int) -> bytes:
    """gzip of `head`, `inflated` bytes of "A" (whole MB), `tail`: a valid reply about 1,000
    times smaller than what it inflates to. Made in a fraction of a second: after the first MB,
    every MB of "A" (flushed to a byte boundary, its window all "A") deflates to the same bytes,
    so one is deflated and repeated."""
    block = b"A" * MB
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = deflate.compress(head + block) + deflate.flush(zlib.Z_SYNC_FLUSH)
    second = deflate.compress(block) + deflate.flush(zlib.Z_SYNC_FLUSH)
    third = deflate.compress(block) + deflate.flush(zlib.Z_SYNC_FLUSH)
    assert second == third, "the repeated block must deflate alike"
    last = deflate.compress(tail) + deflate.flush()
    crc = zlib.crc32(head)
    for _ in range(inflated // MB):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(tail, crc)
    size = len(head) + inflated // MB * MB + len(tail)
    if inflated < 3 * MB or inflated % MB:
        raise ValueError("a bomb inflates to whole MB, at least 3")
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    stream = first + second * (inflated // MB - 1) + last  # `first` holds the first MB
    return header + stream + crc.to_bytes(4, "little") + (size % 2**32).to_bytes(4, "little")


def attacked_servers(**options) -> tuple[FakeOpenAIServer, FakeAnthropicServer]:
    """Both hostile servers (not started), answering "Yes" to `fine`."""
    return (
        FakeOpenAIServer(responder=lambda body: "Yes", fault=Attacks("openai", **options)),
        FakeAnthropicServer(responder=lambda body: "Yes", fault=Attacks("anthropic", **options)),
    )


# Keys as the providers shape them (fixed, so that a test never fails on a chance match).
OPENAI_KEY = "sk-proj-Q8vN3rT5wY7zB1dF4hJ6kL9mP2sU0xA5cE8gI1oR3tV6yW9qZ2nM4bK7jH0fD3lS5pX8uG1Q7zX"
ANTHROPIC_KEY = "sk-ant-api03-Zr4Tq8Wm2Xn6Vb0Ls3Kp7Jd1Hf5Gc9Yu2Ei6Oa0Wz4Rk8Mq1Nt5Pv9Bx3Cj7Dg0Fh4Lw8Ys-2Kf6AAQ"
_RUN = re.compile(r"[A-Za-z0-9+/=_\-]{12,}")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{16,}")


def leaks(text: str, key: str) -> list[str]:
    """What of `key` a user could read in `text`, in any form `key_forms` makes (and more): a
    run of 8 of its characters in any case, forwards or backwards, across whitespace or escaped
    line breaks; its last four characters (what a masked key shows); 8 of its characters inside
    anything that decodes as base64 or hex. Empty when nothing leaks."""
    squeezed = re.sub(r"\s|\\[nrt]|\\", "", text)
    low = squeezed.lower()
    found = []
    for piece in (key.lower()[i : i + 8] for i in range(len(key) - 7)):
        if piece in low or piece[::-1] in low:
            found.append(f"a piece of the key: {piece}")
            break
    if key[-4:].lower() in low:
        found.append("its last four characters")
    for run in _RUN.findall(squeezed):
        for decoded in _base64_readings(run):
            if any(key[i : i + 8].encode() in decoded for i in range(len(key) - 7)):
                found.append(f"base64 of it: {run[:20]}...")
                break
    for run in _HEX_RUN.findall(squeezed):
        for start in (0, 1):
            data = bytes.fromhex(run[start : start + (len(run) - start) // 2 * 2])
            if any(key[i : i + 8].encode() in data for i in range(len(key) - 7)):
                found.append(f"hex of it: {run[:20]}...")
    return found


def _base64_readings(run: str) -> list[bytes]:
    readings = []
    for start in range(4):
        part = run[start:]
        part = part[: len(part) // 4 * 4]
        for alphabet in (None, b"-_"):
            try:
                readings.append(
                    base64.b64decode(part.rstrip("=") + "=" * (-len(part.rstrip("=")) % 4), altchars=alphabet)
                )
            except ValueError:
                pass
    return readings

"""Protocol-faithful fake LLM API servers for tests and benchmarks.

Standard library only.  Each server is a ``ThreadingHTTPServer`` bound to
``127.0.0.1`` on a random free port, served from a daemon thread, and speaks
just enough of the real wire protocol for the official SDKs to work against it:

* :class:`FakeOpenAIServer` -- OpenAI Chat Completions,
  ``POST /v1/chat/completions`` (``POST /chat/completions`` is accepted too).
  ``base_url`` is ``http://127.0.0.1:PORT/v1`` (what ``openai.OpenAI`` expects).
* :class:`FakeAnthropicServer` -- Anthropic Messages, ``POST /v1/messages``.
  ``base_url`` is ``http://127.0.0.1:PORT`` (what ``anthropic.Anthropic`` expects).

Usage::

    with FakeOpenAIServer(responder=lambda body: "No", latency=0.05) as srv:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="k")
        ...
        assert srv.request_count == 1
        body = srv.requests[0]["body"]

``responder(body) -> str`` maps the parsed JSON request body to the assistant
reply text (default: always ``"Yes"``).  ``latency`` seconds are slept in the
request's own handler thread, so concurrent requests overlap.

Requests without an API key header (OpenAI: ``Authorization: Bearer``;
Anthropic: ``x-api-key`` or ``Authorization: Bearer`` -- anthropic SDK 2.x sends
the latter) get a 401 in the API's own error shape
(SDKs raise ``AuthenticationError``; they do not retry 401).  Every request
that reaches a known endpoint is recorded in ``server.requests`` (including
the ones answered with an error) as ``{"path", "headers", "body", "index", "client"}``
with lower-case header names.

Extension point: each request goes through :meth:`_FakeServerBase._intercept`
before the responder is called.  It returns ``None`` (proceed normally) or a
:class:`Reply`.  The 401 check lives there; fault injection (e.g. a
``fault(body, attempt) -> None | (status, headers, body)`` hook) is meant to be
added there as well.
"""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from tests.support.fake_http import Fault, Reply, Responder, _FakeServerBase, _prompt_tokens, default_responder

__all__ = [
    "Fault",
    "FakeOpenAIServer",
    "FakeAnthropicServer",
    "Reply",
    "Responder",
    "default_responder",
    "openai_images",
    "anthropic_images",
    "roles",
]

# --------------------------------------------------------------------------- #
# OpenAI
# --------------------------------------------------------------------------- #


Alternatives = Callable[[int, str, list[str]], "list[tuple[str, float]] | None"]
_TOKEN = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")


def tokens_of(text: str) -> list[str]:
    """The reply cut into tokens the way a BPE tokenizer roughly does (a word or a punctuation
    mark with the spaces before it): they spell the text exactly."""
    return _TOKEN.findall(text)


class FakeOpenAIServer(_FakeServerBase):
    """``logprobs``: "serve" (a request asking for them gets ``choices[0].logprobs.content``),
    "refuse" (such a request gets a 400 naming logprobs, as a model without them answers), or
    "omit" (the request is answered without them, as some compatible servers do).
    ``alternatives(index, token, tokens)`` gives a token's ``top_logprobs`` as (token, logprob)
    pairs, or None for the token alone at probability 1."""

    paths = ("/v1/chat/completions", "/chat/completions")
    base_path = "/v1"

    def __init__(self, *args: Any, logprobs: str = "serve", alternatives: Alternatives | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.logprobs = logprobs
        self.alternatives = alternatives

    _error_types = {
        "authentication": ("invalid_request_error", "invalid_api_key"),
        "invalid_request": ("invalid_request_error", None),
        "not_found": ("invalid_request_error", "unknown_url"),
        "server": ("server_error", None),
    }

    def has_api_key(self, headers: dict) -> bool:
        auth = headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        return scheme.lower() == "bearer" and bool(token.strip())

    def success_body(self, body: dict, text: str) -> dict:
        prompt = _prompt_tokens(body)
        completion = len(text.split())
        return {
            "id": "chatcmpl-" + uuid.uuid4().hex[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": self._logprobs(body, text),
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _logprobs(self, body: dict, text: str) -> dict | None:
        if not body.get("logprobs") or self.logprobs != "serve":
            return None
        tokens = tokens_of(text)
        content = []
        for index, token in enumerate(tokens):
            top = (self.alternatives(index, token, tokens) if self.alternatives else None) or [(token, 0.0)]
            top = top[: int(body.get("top_logprobs") or 0) or len(top)]
            chosen = next((logprob for name, logprob in top if name == token), math.log(0.5))
            content.append(
                {
                    "token": token,
                    "logprob": chosen,
                    "bytes": list(token.encode()),
                    "top_logprobs": [{"token": n, "logprob": lp, "bytes": list(n.encode())} for n, lp in top],
                }
            )
        return {"content": content, "refusal": None}

    def _intercept(self, record: dict) -> Reply | None:
        refused = super()._intercept(record)
        body = record["body"] if isinstance(record["body"], dict) else {}
        if refused is None and self.logprobs == "refuse" and (body.get("logprobs") or "top_logprobs" in body):
            # What OpenAI answers for a model without them (e.g. its reasoning models).
            return self.error_reply(400, "invalid_request", "This model does not support the 'logprobs' parameter.")
        return refused

    def error_reply(self, status: int, kind: str, message: str) -> Reply:
        etype, code = self._error_types.get(kind, ("invalid_request_error", None))
        return Reply(status, {"error": {"message": message, "type": etype, "param": None, "code": code}})

    def extra_headers(self) -> dict:
        return {"x-request-id": "req_" + uuid.uuid4().hex}


# --------------------------------------------------------------------------- #
# Anthropic
# --------------------------------------------------------------------------- #


class FakeAnthropicServer(_FakeServerBase):
    paths = ("/v1/messages",)
    base_path = ""

    _error_types = {
        "authentication": "authentication_error",
        "invalid_request": "invalid_request_error",
        "not_found": "not_found_error",
        "server": "api_error",
    }

    def has_api_key(self, headers: dict) -> bool:
        # The real API takes ``x-api-key``; anthropic SDK 2.x sends the api_key
        # as ``Authorization: Bearer <key>`` instead, so accept both.
        if headers.get("x-api-key", "").strip():
            return True
        scheme, _, token = headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and bool(token.strip())

    def success_body(self, body: dict, text: str) -> dict:
        return {
            "id": "msg_" + uuid.uuid4().hex[:24],
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": _prompt_tokens(body), "output_tokens": len(text.split())},
        }

    def error_reply(self, status: int, kind: str, message: str) -> Reply:
        etype = self._error_types.get(kind, "invalid_request_error")
        return Reply(status, {"type": "error", "error": {"type": etype, "message": message}})

    def extra_headers(self) -> dict:
        return {"request-id": "req_" + uuid.uuid4().hex}


# --------------------------------------------------------------------------- #
# Request inspection helpers
# --------------------------------------------------------------------------- #


def _parts(message: Any) -> list:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def openai_images(body: dict) -> list[str]:
    """The ``image_url`` URLs (usually data URLs), in order across all messages."""
    urls = []
    for m in body.get("messages") or []:
        for p in _parts(m):
            if isinstance(p, dict) and p.get("type") == "image_url":
                iu = p.get("image_url")
                urls.append(iu.get("url") if isinstance(iu, dict) else iu)
    return urls


def anthropic_images(body: dict) -> list[dict]:
    """The image ``source`` dicts, in order (including images inside tool_result blocks)."""
    out: list[dict] = []

    def walk(parts: list) -> None:
        for p in parts:
            if not isinstance(p, dict):
                continue
            if p.get("type") == "image":
                out.append(p.get("source"))
            elif isinstance(p.get("content"), list):
                walk(p["content"])

    for m in body.get("messages") or []:
        walk(_parts(m))
    return out


def roles(body: dict) -> list[str]:
    """Message roles in order; ``"system"`` first if the body has a top-level ``system`` (Anthropic)."""
    out = ["system"] if "system" in body else []
    out.extend(m.get("role") for m in body.get("messages") or [] if isinstance(m, dict))
    return out


def serve_in_subprocess(protocol: str = "openai", reply: str = "Yes", latency: float = 0.0, hostile: bool = False):
    """Start a fake server in its own process (so it does not share the caller's GIL).

    `hostile`: models named after an attack of tests/support/hostile_servers.py (`bomb`,
    `echo`, `number` ...) get that attack; every other model its good answer.

    Returns (process, base_url, request_count) where request_count() asks the server.
    """
    import subprocess
    import sys
    import urllib.request

    code = (
        "import sys, time\n"
        "from tests.support.fake_servers import FakeOpenAIServer, FakeAnthropicServer\n"
        f"cls = FakeOpenAIServer if {protocol!r} == 'openai' else FakeAnthropicServer\n"
        "from tests.support.hostile_servers import Attacks\n"
        f"fault = Attacks({protocol!r}) if {hostile!r} else None\n"
        f"server = cls(responder=lambda body: {reply!r}, latency={latency!r}, fault=fault).start()\n"
        "print(server.base_url, flush=True)\n"
        "while True: time.sleep(3600)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    base_url = process.stdout.readline().strip()
    root = base_url.removesuffix("/v1")

    def request_count() -> int:
        with urllib.request.urlopen(f"{root}/_stats") as response:
            return json.loads(response.read())["requests"]

    return process, base_url, request_count

"""Drive the fake servers through the real openai / anthropic SDKs."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request

import anthropic
import openai
import pytest

from tests.support.fake_servers import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    anthropic_images,
    openai_images,
    roles,
)

PNG_B64 = "iVBORw0KGgo="
DATA_URL = f"data:image/png;base64,{PNG_B64}"

OPENAI_MESSAGES = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "image_url", "image_url": {"url": DATA_URL, "detail": "auto"}},
        ],
    }
]
ANTHROPIC_SOURCE = {"type": "base64", "media_type": "image/png", "data": PNG_B64}
ANTHROPIC_MESSAGES = [
    {
        "role": "user",
        "content": [
            {"type": "image", "source": ANTHROPIC_SOURCE},
            {"type": "text", "text": "hi"},
        ],
    }
]


async def _openai_call(client: openai.AsyncOpenAI, **kw):
    return await client.chat.completions.create(model="x", messages=OPENAI_MESSAGES, max_completion_tokens=5, **kw)


async def _anthropic_call(client: anthropic.AsyncAnthropic, **kw):
    kw.setdefault("messages", ANTHROPIC_MESSAGES)
    return await client.messages.create(model="x", max_tokens=5, **kw)


def _post(url: str, body: dict, headers: dict | None = None):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


# --------------------------------------------------------------------------- #
# OpenAI
# --------------------------------------------------------------------------- #


def test_openai_roundtrip():
    async def main():
        with FakeOpenAIServer(responder=lambda body: "No, it is not") as srv:
            assert srv.base_url.endswith("/v1")
            async with openai.AsyncOpenAI(base_url=srv.base_url, api_key="k") as client:
                r = await _openai_call(client)
            return srv, r

    srv, r = asyncio.run(main())
    assert r.object == "chat.completion"
    assert r.id.startswith("chatcmpl-")
    assert r.model == "x"
    assert r.choices[0].message.content == "No, it is not"
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].finish_reason == "stop"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens) == (1, 4, 5)

    assert srv.request_count == 1
    rec = srv.requests[0]
    assert rec["path"] == "/v1/chat/completions"
    assert rec["headers"]["authorization"] == "Bearer k"
    assert rec["headers"]["content-type"] == "application/json"
    assert rec["headers"]["x-stainless-retry-count"] == "0"
    assert rec["body"] == {"model": "x", "messages": OPENAI_MESSAGES, "max_completion_tokens": 5}
    assert openai_images(rec["body"]) == [DATA_URL]
    assert roles(rec["body"]) == ["user"]


def test_openai_default_responder_and_unprefixed_path():
    with FakeOpenAIServer() as srv:
        root = srv.base_url[: -len("/v1")]
        status, data = _post(
            root + "/chat/completions",
            {"model": "m", "messages": [{"role": "user", "content": "a b c"}]},
            {"Authorization": "Bearer k"},
        )
    assert status == 200
    assert data["choices"][0]["message"]["content"] == "Yes"
    assert data["model"] == "m"
    assert data["usage"] == {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    assert srv.requests[0]["path"] == "/chat/completions"


def test_openai_401_without_key_not_retried():
    async def main():
        with FakeOpenAIServer() as srv:
            async with openai.AsyncOpenAI(base_url=srv.base_url, api_key="k") as client:
                with pytest.raises(openai.AuthenticationError) as ei:
                    await _openai_call(client, extra_headers={"Authorization": openai.Omit()})
            return srv, ei.value

    srv, err = asyncio.run(main())
    assert err.status_code == 401
    assert err.body["code"] == "invalid_api_key"  # SDK unwraps {"error": {...}}
    assert srv.request_count == 1  # 401 is not retried
    assert "authorization" not in srv.requests[0]["headers"]


# --------------------------------------------------------------------------- #
# Anthropic
# --------------------------------------------------------------------------- #


def test_anthropic_roundtrip():
    async def main():
        with FakeAnthropicServer(responder=lambda body: "Yes indeed") as srv:
            assert srv.base_url.startswith("http://127.0.0.1:") and not srv.base_url.endswith("/v1")
            async with anthropic.AsyncAnthropic(base_url=srv.base_url, api_key="k") as client:
                r1 = await _anthropic_call(client)
                r2 = await _anthropic_call(client, system="be brief")
            return srv, r1, r2

    srv, r, r2 = asyncio.run(main())
    assert r.type == "message" and r.role == "assistant"
    assert r.id.startswith("msg_")
    assert r.model == "x"
    assert r.content[0].type == "text" and r.content[0].text == "Yes indeed"
    assert r.stop_reason == "end_turn" and r.stop_sequence is None
    assert (r.usage.input_tokens, r.usage.output_tokens) == (1, 2)
    assert r2.usage.input_tokens == 3  # "be brief" + "hi"

    assert srv.request_count == 2
    rec = srv.requests[0]
    assert rec["path"] == "/v1/messages"
    # anthropic SDK 2.x sends api_key as a Bearer token, not x-api-key
    assert rec["headers"].get("x-api-key") == "k" or rec["headers"].get("authorization") == "Bearer k"
    assert "anthropic-version" in rec["headers"]
    assert rec["body"] == {"model": "x", "max_tokens": 5, "messages": ANTHROPIC_MESSAGES}
    assert anthropic_images(rec["body"]) == [ANTHROPIC_SOURCE]
    assert roles(rec["body"]) == ["user"]
    assert roles(srv.requests[1]["body"]) == ["system", "user"]
    # keep-alive: both calls on the same connection
    assert srv.requests[0]["client"] == srv.requests[1]["client"]


def test_anthropic_x_api_key_accepted():
    with FakeAnthropicServer() as srv:
        status, data = _post(
            srv.base_url + "/v1/messages",
            {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
            {"x-api-key": "k", "anthropic-version": "2023-06-01"},
        )
    assert status == 200
    assert data["content"] == [{"type": "text", "text": "Yes"}]


def test_anthropic_401_without_key_not_retried():
    async def main():
        with FakeAnthropicServer() as srv:
            async with anthropic.AsyncAnthropic(base_url=srv.base_url, api_key="k") as client:
                with pytest.raises(anthropic.AuthenticationError) as ei:
                    await _anthropic_call(client, extra_headers={"Authorization": anthropic.Omit()})
            return srv, ei.value

    srv, err = asyncio.run(main())
    assert err.status_code == 401
    assert err.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "missing API key"},
    }
    assert srv.request_count == 1
    hdrs = srv.requests[0]["headers"]
    assert "authorization" not in hdrs and "x-api-key" not in hdrs


# --------------------------------------------------------------------------- #
# Concurrency / latency
# --------------------------------------------------------------------------- #

N_CONCURRENT = 32
LATENCY = 0.2


def test_openai_concurrent_latency():
    async def main():
        with FakeOpenAIServer(latency=LATENCY) as srv:
            async with openai.AsyncOpenAI(base_url=srv.base_url, api_key="k") as client:
                t0 = time.perf_counter()
                rs = await asyncio.gather(*(_openai_call(client) for _ in range(N_CONCURRENT)))
                return srv, rs, time.perf_counter() - t0

    srv, rs, elapsed = asyncio.run(main())
    print(f"\nopenai: {N_CONCURRENT} concurrent requests, latency={LATENCY}s -> {elapsed:.3f}s")
    assert [r.choices[0].message.content for r in rs] == ["Yes"] * N_CONCURRENT
    assert srv.request_count == N_CONCURRENT
    assert sorted(r["index"] for r in srv.requests) == list(range(N_CONCURRENT))
    assert elapsed < 2.0


def test_anthropic_concurrent_latency():
    async def main():
        with FakeAnthropicServer(latency=LATENCY) as srv:
            async with anthropic.AsyncAnthropic(base_url=srv.base_url, api_key="k") as client:
                t0 = time.perf_counter()
                rs = await asyncio.gather(*(_anthropic_call(client) for _ in range(N_CONCURRENT)))
                return srv, rs, time.perf_counter() - t0

    srv, rs, elapsed = asyncio.run(main())
    print(f"\nanthropic: {N_CONCURRENT} concurrent requests, latency={LATENCY}s -> {elapsed:.3f}s")
    assert [r.content[0].text for r in rs] == ["Yes"] * N_CONCURRENT
    assert srv.request_count == N_CONCURRENT
    assert elapsed < 2.0


# --------------------------------------------------------------------------- #
# Misc behaviour and helpers
# --------------------------------------------------------------------------- #


def test_unknown_path_404_and_stream_rejected():
    with FakeOpenAIServer() as srv:
        root = srv.base_url[: -len("/v1")]
        status, data = _post(root + "/v1/nope", {}, {"Authorization": "Bearer k"})
        assert status == 404 and "error" in data
        status, data = _post(
            srv.base_url + "/chat/completions",
            {"model": "m", "messages": [], "stream": True},
            {"Authorization": "Bearer k"},
        )
        assert status == 400 and data["error"]["type"] == "invalid_request_error"
        assert srv.request_count == 1  # unknown paths are not recorded


def test_responder_exception_gives_500_and_is_recorded():
    def boom(body):
        raise ValueError("kaput")

    async def main():
        with FakeAnthropicServer(responder=boom) as srv:
            async with anthropic.AsyncAnthropic(base_url=srv.base_url, api_key="k", max_retries=0) as client:
                with pytest.raises(anthropic.InternalServerError):
                    await _anthropic_call(client)
            return srv

    srv = asyncio.run(main())
    assert len(srv.errors) == 1 and isinstance(srv.errors[0], ValueError)


def test_lifecycle():
    srv = FakeOpenAIServer()
    with pytest.raises(RuntimeError):
        _ = srv.base_url  # not started
    srv.start()
    url = srv.base_url
    with pytest.raises(RuntimeError):
        srv.start()
    srv.stop()
    srv.stop()  # idempotent
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/chat/completions", data=b"{}", timeout=2)


def test_helpers():
    oa = {
        "messages": [
            {"role": "system", "content": "sys"},
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:a"}},
                    {"type": "text", "text": "t"},
                    {"type": "image_url", "image_url": {"url": "data:b"}},
                ],
            },
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:c"}}]},
        ]
    }
    assert openai_images(oa) == ["data:a", "data:b", "data:c"]
    assert roles(oa) == ["system", "user", "assistant", "user"]

    s1 = {"type": "base64", "media_type": "image/png", "data": "A"}
    s2 = {"type": "url", "url": "https://example.invalid/x.png"}
    an = {
        "system": [{"type": "text", "text": "s"}],
        "messages": [
            {"role": "user", "content": [{"type": "image", "source": s1}, {"type": "text", "text": "q"}]},
            {"role": "assistant", "content": "a"},
            {"role": "user", "content": [{"type": "image", "source": s2}]},
        ],
    }
    assert anthropic_images(an) == [s1, s2]
    assert roles(an) == ["system", "user", "assistant", "user"]
    assert roles({"messages": [{"role": "user", "content": "x"}]}) == ["user"]
    assert openai_images({"messages": [{"role": "user", "content": "x"}]}) == []


def test_stop_hangs_up_keepalive_connections():
    async def main():
        srv = FakeOpenAIServer().start()
        async with openai.AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0) as client:
            await _openai_call(client)  # leaves a pooled keep-alive connection
            srv.stop()
            with pytest.raises(openai.APIConnectionError):
                await _openai_call(client)
        return srv

    srv = asyncio.run(main())
    assert srv.request_count == 1

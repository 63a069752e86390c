"""Both API backends against servers that lie (tests/support/hostile_servers.py), through the
real SDKs over real HTTP: every reply shape read as text or made that item's error, every reply
bounded in bytes (compressed or not, streamed or not) and every request in time, long replies
kept truncated, and the caller's key never shown in any form the server sends it back."""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from dataclasses import dataclass

import pytest

from models.registry import create
from models.replies import MAX_KEPT_CHARS
from models.types import GenerateConfig, Output, ProviderError, user
from tests.support.fake_servers import FakeAnthropicServer, FakeOpenAIServer
from tests.support.hostile_servers import ANTHROPIC_KEY, LONG_CHARS, MB, OPENAI_KEY, Attacks, leaks

SERVERS = {"openai": FakeOpenAIServer, "anthropic": FakeAnthropicServer}
KEYS = {"openai": OPENAI_KEY, "anthropic": ANTHROPIC_KEY}


@dataclass
class Hostile:
    protocol: str
    server: FakeOpenAIServer | FakeAnthropicServer
    attacks: Attacks

    @property
    def key(self) -> str:
        return KEYS[self.protocol]

    def ask(self, attack: str, config: GenerateConfig | None = None) -> Output:
        backend = create(f"{self.protocol}/{attack}")
        return asyncio.run(backend.generate([user("Are the two circles touching?")], config or GenerateConfig()))

    def refused(self, attack: str, config: GenerateConfig | None = None) -> str:
        """The item's error message the attack ends in."""
        with pytest.raises(ProviderError) as raised:
            self.ask(attack, config)
        message = str(raised.value)
        assert message.startswith(f"{self.protocol}/{attack}: ") and "\n" not in message
        return message


@pytest.fixture(params=list(SERVERS))
def hostile(request, monkeypatch):
    protocol = request.param
    attacks = Attacks(protocol)
    with SERVERS[protocol](responder=lambda body: "Yes", fault=attacks) as server:
        monkeypatch.setenv(f"{protocol.upper()}_BASE_URL", server.base_url)
        monkeypatch.setenv(f"{protocol.upper()}_API_KEY", KEYS[protocol])
        yield Hostile(protocol, server, attacks)


def wait_for(condition, what: str, ceiling: float = 60.0) -> None:
    """Wait until `condition()` holds (a generous ceiling: the machine may be loaded)."""
    give_up = time.monotonic() + ceiling
    while not condition():
        assert time.monotonic() < give_up, f"still waiting for {what}"
        time.sleep(0.05)


# -- shapes -------------------------------------------------------------------------------- #


def test_a_content_of_text_parts_reads_as_their_text(hostile):
    # Text parts joined; an image part, a thinking block and an unknown block are not the reply.
    assert hostile.ask("parts").text == "Yes"


@pytest.mark.parametrize(
    ("attack", "says"),
    [
        ("number", "content was a number (3), not text"),
        ("bool", "content was true (a boolean), not text"),
        ("null", "no"),  # "had no text content" / "had no content"
        ("object", "held no text (1 part(s): object without a type)"),
        ("no-text", "held no text (1 part(s): "),
        ("text-body", "the server's reply was not JSON: 'Yes'"),
        ("json-list", "the server's reply was a list ([1, 2, 3]), not a JSON object"),
        ("deep", "not valid JSON (nested too deeply)"),
    ],
)
def test_a_reply_that_is_not_text_is_that_items_error_saying_what_came(hostile, attack, says):
    message = hostile.refused(attack)
    assert says in message
    assert hostile.attacks.launched[attack] == 1  # a malformed reply is not asked again


def test_odd_usage_and_ids_are_dropped_or_bounded_not_trusted(hostile):
    output = hostile.ask("odd-fields")
    assert output.text == "Yes"
    assert output.usage.input_tokens is None and output.usage.output_tokens is None
    assert all(isinstance(value, str) and len(value) <= 200 for value in output.raw.values() if value is not None)


# -- size ---------------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    ("attack", "says"),
    [
        ("huge", "the server announced a reply of 52,4"),  # 50 MB, its length announced
        ("huge-chunked", "the server's reply passed 4 MB (counted decompressed)"),
        ("huge-error", "the server's reply passed 4 MB"),  # a 500 whose page is 50 MB
        ("bomb", "the server's reply passed 4 MB (counted decompressed)"),  # gzip, 1 MB -> 1 GB
        ("bomb-nested", "the server's reply passed 4 MB (counted decompressed)"),
        ("values", "held more than 100,000 JSON values"),
    ],
)
def test_a_reply_past_the_byte_bound_is_that_items_error_read_once(hostile, attack, says):
    hostile.ask("fine")  # the SDK imported and set up before memory is counted
    tracemalloc.start()
    try:
        message = hostile.refused(attack)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert says in message
    # The 1 GB bomb, the 50 MB replies: read no further than the bound (a few MB at a time).
    assert peak < 24 * MB, f"{peak / MB:.0f} MB held reading a refused reply"
    assert hostile.attacks.launched[attack] == 1  # not asked again: the server would do it again


def test_a_long_reply_is_kept_truncated_with_its_length(hostile):
    output = hostile.ask("long")
    length = output.raw["reply_chars"]
    assert length > LONG_CHARS
    # Its start, the line saying what was cut, and its end, where the model gave its answer.
    head, note, tail = output.text.partition(
        f"\n[reply truncated: {length:,} characters; the first 45,000 and the last 5,000 kept]\n"
    )
    assert note and head.startswith("The answer is long. ") and tail.endswith("So, touching? Yes")
    assert len(head) + len(tail) == MAX_KEPT_CHARS


def test_a_redirect_is_not_followed_and_says_where_it_pointed(hostile):
    message = hostile.refused("redirect")
    assert "redirected the request (status 307, to http://127.0.0.1:9/v1/messages)" in message
    assert "set the base URL" in message
    assert hostile.attacks.launched["redirect"] == 1


# -- time ---------------------------------------------------------------------------------- #


@pytest.mark.parametrize("attack", ["drip", "drip-headers"])
def test_a_server_dripping_its_reply_is_cut_at_the_deadline(hostile, attack):
    # A byte every half second: each read is quick, so only a deadline on the whole attempt ends
    # it. Unbounded, the reply would take minutes (`drip_bytes` of them).
    config = GenerateConfig(timeout=2, max_retries=2)
    message = hostile.refused(attack, config)
    assert "no complete reply within 2 s" in message or "no reply within 6 s" in message
    attempts = hostile.attacks.launched[attack]
    # The first attempt was cut at its own deadline and asked again, within the request's.
    assert 2 <= attempts <= 3
    wait_for(lambda: len(hostile.attacks.dripped) == attempts, "the server to notice the hang-ups")
    assert max(hostile.attacks.dripped) < 40  # of ~400: each attempt ended near its 2 s
    assert sum(hostile.attacks.dripped) < hostile.attacks.drip_bytes // 4


def test_retries_wait_within_the_requests_deadline(hostile):
    # 429 with Retry-After: 2, every time. Five retries would wait 10 s; the request's deadline
    # is 6 attempts of at most 1 s: it ends there, having asked fewer than 6 times.
    config = GenerateConfig(timeout=1, max_retries=5)
    message = hostile.refused("slow-429", config)
    assert "no reply within 6 s, the deadline of one request (6 attempt(s) of at most 1 s each)" in message
    assert hostile.attacks.launched["slow-429"] < 6


# -- keys ---------------------------------------------------------------------------------- #


def test_a_key_echoed_in_the_reply_is_redacted_in_every_form(hostile):
    output = hostile.ask("echo")
    assert output.text.startswith("Your request came with these credentials:")
    assert "[redacted]" in output.text
    assert leaks(output.text, hostile.key) == []


def test_a_key_echoed_in_an_error_is_redacted_in_every_form(hostile):
    message = hostile.refused("echo-error")
    assert "AuthenticationError" in message and "Incorrect API key provided" in message
    assert leaks(message, hostile.key) == []


def test_a_key_echoed_in_the_replys_fields_is_redacted(hostile):
    output = hostile.ask("echo-id")
    assert output.text == "Yes"
    for value in output.raw.values():
        assert leaks(str(value), hostile.key) == []


def test_a_key_typed_for_one_session_is_redacted_as_the_servers_is(hostile, monkeypatch):
    from models.anthropic_backend import AnthropicBackend
    from models.openai_backend import OpenAIBackend

    monkeypatch.delenv(f"{hostile.protocol.upper()}_API_KEY")  # the visitor's key is in no variable
    typed = "sk-typed-" + OPENAI_KEY[::-1][:40]
    if hostile.protocol == "openai":
        backend = OpenAIBackend("openai/echo", "echo", api_key=typed)
    else:
        backend = AnthropicBackend("anthropic/echo", "echo", api_key=typed)
    output = asyncio.run(backend.generate([user("hi")], GenerateConfig()))
    assert output.text.startswith("Your request came with these credentials:")
    assert leaks(output.text, typed) == []


# -- honest compression, streaming --------------------------------------------------------- #


@pytest.mark.parametrize("attack", ["gzip", "brotli"])
def test_an_honestly_compressed_reply_is_read_as_before(hostile, attack):
    assert hostile.ask(attack).text == "Yes"
    assert hostile.attacks.launched[attack] == 1


def test_a_streamed_reply_is_bounded_as_it_is_read(monkeypatch):
    # The backends ask for whole replies; a client that streams through the same bounded HTTP
    # client gets the event stream piece by piece, and an endless one stops at the bound.
    import openai

    from models.bounded_http import BoundedClient
    from models.replies import MAX_REPLY_BYTES, ReplyTooLarge

    attacks = Attacks("openai")

    async def stream() -> tuple[int, BaseException | None]:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key=OPENAI_KEY, http_client=BoundedClient())
        received = 0
        try:
            events = await client.chat.completions.create(
                model="sse", messages=[{"role": "user", "content": "hi"}], stream=True, timeout=60
            )
            async for event in events:
                received += len(event.choices[0].delta.content or "")
        except ReplyTooLarge as exc:
            return received, exc
        finally:
            await client.close()
        return received, None

    with FakeOpenAIServer(fault=attacks) as server:
        received, stopped = asyncio.run(stream())
    assert stopped is not None and "passed 4 MB" in str(stopped)
    assert MAX_REPLY_BYTES // 4 < received < MAX_REPLY_BYTES  # streamed as it came, up to the bound

"""One run, many models, each on a server that lies its own way (tests/support/hostile_servers.py):
every attack costs only its own items, every other model's items are kept, and no row of the
store grows large or holds the key."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import defaultdict
from collections.abc import Sequence

import pytest

from models.base import Backend
from models.replies import MAX_ERROR_CHARS, MAX_KEPT_CHARS
from models.types import GenerateConfig, Message, Output
from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.core.types import Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from tests.support.fake_servers import FakeAnthropicServer, FakeOpenAIServer
from tests.support.hostile_servers import ANTHROPIC_KEY, OPENAI_KEY, Attacks, leaks

SERVERS = {"openai": (FakeOpenAIServer, OPENAI_KEY), "anthropic": (FakeAnthropicServer, ANTHROPIC_KEY)}
ANSWERING = ["fine", "parts", "echo-id", "long"]  # a reply the item's question reads: "Yes"
KEPT_UNPARSED = ["echo"]  # a reply, kept, that answers nothing
FAILING = {
    "number": "not text",
    "null": "no",
    "object": "held no text",
    "huge-chunked": "passed 4 MB",
    "bomb": "passed 4 MB",
    "values": "JSON values",
}


@pytest.mark.parametrize("protocol", list(SERVERS))
def test_every_attack_costs_its_own_items_and_the_store_stays_small_and_clean(store, monkeypatch, protocol):
    server_class, key = SERVERS[protocol]
    attacks = Attacks(protocol)
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"]})
    items = select_items(benchmark.items(), 3, seed=5)
    names = [*ANSWERING, *KEPT_UNPARSED, *FAILING]
    with server_class(responder=lambda body: "Yes", fault=attacks) as server:
        monkeypatch.setenv(f"{protocol.upper()}_BASE_URL", server.base_url)
        monkeypatch.setenv(f"{protocol.upper()}_API_KEY", key)
        plan = RunPlan(benchmark, items, [create(f"{protocol}/{name}") for name in names], concurrency=2)
        results = asyncio.run(run(plan, store))

    assert len(results) == store.count() == len(items) * len(names)
    by_model = defaultdict(list)
    for result in results:
        by_model[result.model.split("/", 1)[1]].append(result)
    for name in ANSWERING:
        assert all(r.status is Status.ANSWERED and r.parsed == "yes" for r in by_model[name]), name
    for name in KEPT_UNPARSED:
        assert all(r.status is Status.UNPARSED and r.reply for r in by_model[name]), name
    # A 1 MB reply kept cut, its end (the model's answer) with it.
    assert all("characters; the first 45,000 and the last 5,000 kept]" in r.reply for r in by_model["long"])
    for name, says in FAILING.items():
        assert all(r.status is Status.ERROR and says in r.error for r in by_model[name]), (
            name,
            by_model[name][0].error,
        )

    with sqlite3.connect(store.path) as db:
        longest_reply = db.execute(
            "SELECT max(n) FROM (SELECT length(reply) AS n FROM results UNION ALL SELECT length(reply) FROM responses)"
        ).fetchone()[0]
        longest_raw = db.execute("SELECT max(length(raw)) FROM responses").fetchone()[0]
        longest_error = db.execute("SELECT max(length(error)) FROM results").fetchone()[0]
        everything = "\n".join(
            str(value)
            for table in ("results", "responses")
            for row in db.execute(f"SELECT * FROM {table}")  # noqa: S608 - our own table names
            for value in row
        )
    # The 1 MB reply was kept cut with its length noted; the 1 GB and 50 MB ones never read.
    assert MAX_KEPT_CHARS < longest_reply < MAX_KEPT_CHARS + 100
    assert longest_raw < 1_000 and longest_error <= MAX_ERROR_CHARS
    assert leaks(everything, key) == []


class CarelessBackend(Backend):
    """A provider's backend that hands on whatever its server sent: a list for one item."""

    endpoint = "careless://nowhere"

    def __init__(self):
        self.model_id = "careless/model"
        self.calls = 0

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Output:
        self.calls += 1
        return Output([{"type": "text", "text": "Yes"}] if self.calls == 2 else "Yes", 0.0)  # type: ignore[arg-type]


def test_a_backend_returning_something_other_than_text_costs_that_item_alone(store):
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"]})
    items = select_items(benchmark.items(), 4, seed=2)
    backend = CarelessBackend()
    results = asyncio.run(run(RunPlan(benchmark, items, [backend], concurrency=1), store))
    assert len(results) == store.count() == 4
    errors = [r for r in results if r.status is Status.ERROR]
    assert len(errors) == 1 and errors[0].error == "careless/model: the reply was list, not text"
    assert all(r.status is Status.ANSWERED for r in results if r not in errors)

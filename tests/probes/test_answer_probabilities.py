"""Answer probabilities end to end: the real OpenAI SDK against a local server that serves (or
refuses) logprobs, Anthropic's none, what the store keeps and what a re-run sends."""

import asyncio
import logging
import math

import pytest

from probes.core.registry import get_benchmark
from probes.core.types import Mode, Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store
from tests.support.fake_servers import FakeAnthropicServer, FakeOpenAIServer

# A chain-of-thought reply that mentions b early on and answers b at its very end.
COT_REPLY = "Let me look. Option b) seems shorter at first, but the fins fool the eye.\nAnswer: b"


def alternatives(index, token, tokens):
    if token == " b" and index == len(tokens) - 1:  # the final answer
        return [(" b", math.log(0.7)), (" a", math.log(0.2)), ("B", math.log(0.05)), (" maybe", math.log(0.05))]
    if token == " b":  # the early mention: read here, a would look the likelier
        return [(" a", math.log(0.6)), (" b", math.log(0.4))]
    return None


@pytest.fixture
def lines():
    benchmark = get_benchmark(
        "illusion/mueller-lyer",
        params={"difference": ["-0.1", "0.1"], "illusion_strength": ["0"], "canvas": ["384"]},
    )
    return benchmark, benchmark.items()[:6]


@pytest.fixture
def openai_server(monkeypatch):
    servers = []

    def start(**kwargs):
        server = FakeOpenAIServer(**kwargs).start()
        servers.append(server)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000")
        return server

    yield start
    for server in servers:
        server.stop()


def test_a_chain_of_thought_reply_is_read_at_its_final_answer(lines, store, openai_server):
    benchmark, items = lines
    server = openai_server(responder=lambda body: COT_REPLY, alternatives=alternatives)
    plan = RunPlan(benchmark, items, [create("openai/x")], mode=Mode(0, cot=True), probabilities=True)
    results = asyncio.run(run(plan, store))
    body = server.requests[0]["body"]
    assert body["logprobs"] is True and body["top_logprobs"] == 10
    for result in results:
        assert result.status is Status.ANSWERED and result.parsed == 1  # b
        # " b" 0.7 and "B" 0.05 are b; " a" 0.2 is a; " maybe" 0.05 is neither answer.
        assert result.probabilities == pytest.approx({"0": 0.2 / 0.95, "1": 0.75 / 0.95})
        assert result.probability_mass == pytest.approx(0.95)
        assert result.alternatives[0] == (" b", pytest.approx(0.7))
    stored = {r.item_id: r for r in store.results()}
    for result in results:
        kept = stored[result.item_id]
        assert kept.probabilities == pytest.approx(result.probabilities)
        assert kept.probability_mass == pytest.approx(0.95)
        assert [t for t, _ in kept.alternatives] == [" b", " a", "B", " maybe"]


def test_a_server_that_refuses_logprobs_answers_without_them_said_once(lines, store, openai_server, caplog):
    benchmark, items = lines
    server = openai_server(responder=lambda body: "b", logprobs="refuse")
    backend = create("openai/x")
    plan = RunPlan(benchmark, items, [backend], probabilities=True, concurrency=1)
    with caplog.at_level(logging.WARNING):
        results = asyncio.run(run(plan, store))
    assert all(r.status is Status.ANSWERED and r.parsed == 1 for r in results)
    assert all(r.probabilities is None and r.probability_mass is None for r in results)
    asked = [record for record in server.requests if record["body"].get("logprobs")]
    assert len(asked) == 1  # refused once, then never asked again
    assert server.request_count == len(items) + 1
    assert "refused token probabilities" in backend.probabilities_note()
    assert sum("without probabilities" in r.getMessage() for r in caplog.records) == 1
    # Refused is known: a re-run asking for probabilities does not send them again.
    asyncio.run(run(RunPlan(benchmark, items, [create("openai/x")], probabilities=True), store))
    assert server.request_count == len(items) + 1


def test_a_server_that_omits_logprobs_gives_none(lines, store, openai_server):
    benchmark, items = lines
    openai_server(responder=lambda body: "b", logprobs="omit")
    results = asyncio.run(run(RunPlan(benchmark, items, [create("openai/x")], probabilities=True), store))
    assert all(r.status is Status.ANSWERED and r.probabilities is None for r in results)


def test_a_rerun_asking_for_probabilities_sends_only_what_lacks_them(lines, store, openai_server):
    benchmark, items = lines
    server = openai_server(responder=lambda body: "Answer: b", alternatives=alternatives)

    def go(chosen, **kwargs):
        return asyncio.run(run(RunPlan(benchmark, chosen, [create("openai/x")], **kwargs), store))

    go(items[:2], probabilities=True)
    assert server.request_count == 2
    plain = go(items)  # without probabilities: the 4 new items only
    assert server.request_count == 6
    assert [r.probabilities is not None for r in plain] == [True, True, False, False, False, False]
    kept = go(items, probabilities=True, keep_answers=True)  # answers kept as they are
    assert server.request_count == 6 and sum(r.probabilities is not None for r in kept) == 2
    asked = go(items, probabilities=True)
    assert server.request_count == 10  # the 4 that lacked them
    assert all(r.probabilities is not None for r in asked)
    go(items, probabilities=True)
    assert server.request_count == 10


def test_anthropic_offers_none_and_says_so(lines, store, monkeypatch):
    benchmark, items = lines
    with FakeAnthropicServer(responder=lambda body: "b") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-000000")
        backend = create("anthropic/claude-test")
        results = asyncio.run(run(RunPlan(benchmark, items, [backend], probabilities=True), store))
        asyncio.run(run(RunPlan(benchmark, items, [create("anthropic/claude-test")], probabilities=True), store))
        assert server.request_count == len(items)  # nothing asked again for what cannot come
    assert all(r.status is Status.ANSWERED and r.probabilities is None for r in results)
    assert "offers no token probabilities" in backend.probabilities_note()


def test_a_store_from_before_probabilities_keeps_its_answers(lines, tmp_path, openai_server):
    import sqlite3

    benchmark, items = lines
    openai_server(responder=lambda body: "b")
    path = tmp_path / "old.sqlite"
    with Store(path) as store:
        asyncio.run(run(RunPlan(benchmark, items, [create("openai/x")]), store))
    with sqlite3.connect(path) as db:  # as version 5 left it (no probabilities, so no index of them either)
        db.execute("DROP INDEX results_with_probabilities")
        db.execute("ALTER TABLE results DROP COLUMN probabilities")
        db.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    db.close()
    with Store(path, read_only=True) as read_only:  # read as it is: every answer, none with probabilities
        assert read_only.read_only
        old = read_only.results()
    assert len(old) == len(items) and all(r.parsed == 1 and r.probabilities is None for r in old)
    with Store(path) as upgraded:
        assert [r.parsed for r in upgraded.results()] == [r.parsed for r in old]
        assert all(r.probabilities is None for r in upgraded.results())

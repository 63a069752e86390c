"""Answer probabilities from a server that lies about its token alternatives (issue 33): several
alternatives at log probability 0, a token listed twice at a high one, a chosen token missing
from a top list that already holds all the probability. Such numbers are no distribution:
the answers get no probabilities at all, fresh or read again from the cache, and what is shown
and stored never adds up past 1. Honest lists (two tokens that decode alike, rounding) still
read. Through the real OpenAI SDK against a local server (tests/support/fake_servers.py)."""

from __future__ import annotations

import asyncio
import math

import pytest

from probes.core.registry import get_benchmark
from probes.core.types import Status
from probes.reading.probabilities import SUM_SLACK
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from tests.support.fake_servers import FakeOpenAIServer

REPLY = "Answer: b"  # tokens "Answer", ":", " b": the answer at the last
LYING = {
    "several certain": [(" b", 0.0), (" a", 0.0), ("B", 0.0)],
    "listed twice": [(" b", math.log(0.8)), (" b", math.log(0.8)), (" a", math.log(0.1))],
    "chosen beyond a full list": [(" a", 0.0)],  # the server then gives " b" itself log(0.5)
    "past by a percent": [(" b", math.log(0.71)), (" a", math.log(0.3))],
}


@pytest.fixture
def lines():
    benchmark = get_benchmark(
        "illusion/mueller-lyer",
        params={"difference": ["-0.1", "0.1"], "illusion_strength": ["0"], "canvas": ["384"]},
    )
    return benchmark, benchmark.items()[:3]


def serving(top):
    def alternatives(index, token, tokens):
        return top if index == len(tokens) - 1 else None

    return alternatives


def ask(lines, store, monkeypatch, top):
    benchmark, items = lines
    with FakeOpenAIServer(responder=lambda body: REPLY, alternatives=serving(top)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000")
        fresh = asyncio.run(run(RunPlan(benchmark, items, [create("openai/x")], probabilities=True), store))
        again = asyncio.run(run(RunPlan(benchmark, items, [create("openai/x")], probabilities=True), store))
        assert server.request_count == len(items)  # the second run read the cached replies
    return fresh, again


def adds_up(result) -> bool:
    """What the Probe grid shows and the store keeps: answers normalised, alternatives at most 1."""
    if result.probabilities is None:
        return result.alternatives is None and result.probability_mass is None
    return (
        sum(result.probabilities.values()) == pytest.approx(1.0)
        and result.probability_mass <= 1.0
        and sum(p for _, p in result.alternatives or ()) <= 1 + SUM_SLACK
    )


@pytest.mark.parametrize("lie", list(LYING))
def test_alternatives_adding_up_past_one_give_no_probabilities(lie, lines, store, monkeypatch):
    fresh, again = ask(lines, store, monkeypatch, LYING[lie])
    for result in [*fresh, *again, *store.results()]:
        assert result.status is Status.ANSWERED and result.parsed == 1  # the answer itself still counts
        assert result.probabilities is None and result.alternatives is None, (lie, result)
        assert adds_up(result)


def test_two_tokens_that_read_alike_both_count_where_they_add_up_to_one_at_most(lines, store, monkeypatch):
    # Byte-level tokenizers offer different tokens that decode to the same text: both were offered.
    top = [(" b", math.log(0.5)), (" b", math.log(0.3)), (" a", math.log(0.1))]
    fresh, again = ask(lines, store, monkeypatch, top)
    for result in [*fresh, *again, *store.results()]:
        assert result.probabilities == pytest.approx({"0": 0.1 / 0.9, "1": 0.8 / 0.9})
        assert result.probability_mass == pytest.approx(0.9)
        assert [token for token, _ in result.alternatives] == [" b", " b", " a"]
        assert adds_up(result)


def test_an_honest_list_rounded_a_little_past_one_still_reads(lines, store, monkeypatch):
    # Log probabilities rounded as a server prints them: 0.7 and 0.3 each a millionth high.
    top = [(" b", math.log(0.7) + 1e-6), (" a", math.log(0.3) + 1e-6)]
    fresh, _ = ask(lines, store, monkeypatch, top)
    for result in [*fresh, *store.results()]:
        assert result.probabilities == pytest.approx({"0": 0.3, "1": 0.7})
        assert result.probability_mass == 1.0
        assert adds_up(result)

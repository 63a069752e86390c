"""Provider faults survived: 429 with Retry-After, 500, 503, replies slower than the timeout,
dropped connections, invalid JSON, empty choices. Nothing lost, nothing counted twice."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import defaultdict

import pytest

from models.types import GenerateConfig
from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.core.types import Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from tests.support.fake_servers import FakeAnthropicServer, FakeOpenAIServer
from tests.support.faults import FaultPlan

RETRIES = 2
CONFIG = GenerateConfig(max_tokens=16, timeout=1.0, max_retries=RETRIES)
AGAIN_KEY = "k-faults-again"


def _key_header(record: dict) -> str:
    headers = record["headers"]
    return headers.get("authorization", "") + headers.get("x-api-key", "")


def request_key(record: dict) -> str:
    return hashlib.sha256(json.dumps(record["body"]["messages"], sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize(
    ("server_class", "provider"), [(FakeOpenAIServer, "openai"), (FakeAnthropicServer, "anthropic")]
)
def test_a_run_with_30_percent_faults_ends_with_every_item_answered_or_explained(
    store, monkeypatch, server_class, provider
):
    items_wanted = 500 if provider == "openai" else 150
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384", "769"]})
    items = select_items(benchmark.items(), items_wanted, seed=3)
    plan_faults = FaultPlan(rate=0.3, seed=7, slow_seconds=2.5, retry_after=1, protocol=provider)
    with server_class(responder=lambda body: "No", fault=plan_faults) as server:
        monkeypatch.setenv(f"{provider.upper()}_BASE_URL", server.base_url)
        monkeypatch.setenv(f"{provider.upper()}_API_KEY", "k-faults-000")
        plan = RunPlan(benchmark, items, [create(f"{provider}/flaky")], config=CONFIG, concurrency=16)
        results = asyncio.run(run(plan, store))

        assert len(results) == len(items) == store.count() == items_wanted
        assert len({r.item_id for r in store.results()}) == len(items)
        errors = [r for r in results if r.status is Status.ERROR]
        assert all(r.status in (Status.ANSWERED, Status.ERROR) for r in results)
        assert all(r.error for r in errors) and all(r.reply == "No" for r in results if r not in errors)
        assert set(plan_faults.injected) == set(plan_faults.kinds)  # every kind of fault happened

        attempts: dict[str, list[dict]] = defaultdict(list)
        for record in server.requests:
            attempts[request_key(record)].append(record)
        assert max(len(tries) for tries in attempts.values()) <= RETRIES + 1  # retries are bounded
        waits = []
        for tries in attempts.values():
            tries.sort(key=lambda r: r["time"])
            for earlier, later in zip(tries, tries[1:], strict=False):
                if (
                    plan_faults(earlier) is not None
                    and plan_faults(earlier).reply
                    and plan_faults(earlier).reply.status == 429
                ):
                    waits.append(later["time"] - earlier["time"])
        assert waits and min(waits) >= 0.9  # Retry-After: 1 is honoured

        # Asked again with another key, so that this run's requests are told apart from the first
        # run's that a loaded machine's server thread reads only now (their client gave up on them).
        plan_faults.enabled = False
        again_plan = RunPlan(benchmark, items, [create(f"{provider}/flaky", api_key=AGAIN_KEY)], config=CONFIG,
                             concurrency=16)  # fmt: skip
        again = asyncio.run(run(again_plan, store))
        asked_again = [record for record in list(server.requests) if AGAIN_KEY in _key_header(record)]
        assert len(asked_again) == len(errors)  # only the failed items are asked again, once each
        assert all(r.status is Status.ANSWERED for r in again) and store.count() == len(items)

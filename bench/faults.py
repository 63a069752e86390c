"""Provider faults: 500 items, 30% of requests faulty (429 with Retry-After, 500, 503, slower than
the 1 s timeout, dropped connection, invalid JSON, empty choices), the SDK's own retries (2).
Prints requests sent per item, wall time, final error count, and the re-run that retries only the
failed items.

Run from the repository root:  python -m bench.faults
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from models.types import GenerateConfig
from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.core.types import Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store
from tests.support.fake_servers import FakeOpenAIServer
from tests.support.faults import FaultPlan


def main() -> None:
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384", "769"]})
    items = select_items(benchmark.items(), 500, seed=3)
    faults = FaultPlan(rate=0.3, seed=7, slow_seconds=2.5, retry_after=1)
    config = GenerateConfig(max_tokens=16, timeout=1.0, max_retries=2)
    with (
        tempfile.TemporaryDirectory() as folder,
        FakeOpenAIServer(lambda body: "No", latency=0.05, fault=faults) as server,
    ):
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = server.base_url, "bench"
        with Store(Path(folder) / "faults.sqlite") as store:
            plan = RunPlan(benchmark, items, [create("openai/flaky")], config=config, concurrency=16)
            started = time.perf_counter()
            results = asyncio.run(run(plan, store))
            first = time.perf_counter() - started
            errors = sum(r.status is Status.ERROR for r in results)
            sent = server.request_count
            faults.enabled = False
            started = time.perf_counter()
            asyncio.run(run(plan, store))
            second = time.perf_counter() - started
            retried = server.request_count - sent
            final = [r for r in store.results() if r.status is Status.ERROR]
            stored = store.count()
    print(f"items {len(items)}, fault rate 30%, SDK retries 2, timeout 1 s, concurrency 16, server latency 50 ms")
    print(f"faults injected: {dict(sorted(faults.injected.items()))}")
    print(
        f"first run:  {first:.2f} s, {sent} requests ({sent / len(items):.2f} per item), {errors} items ended as error"
    )
    print(f"second run (faults off): {second:.2f} s, {retried} requests (the {errors} failed items only)")
    print(f"stored results: {stored} (items {len(items)}), errors left: {len(final)}")


if __name__ == "__main__":
    main()

"""Runner throughput against a local OpenAI-protocol server that answers after 200 ms.

Prints, for 400 touching-circles items at concurrency 16:
- the runner's wall time against the ideal (400 x 0.2 s / 16 = 5 s) and their ratio;
- the same work through a plain pool of 16 threads with the synchronous SDK, for comparison;
- a fully cached re-run: results per second, in a fresh runner (nothing memoised in memory).

Run from the repository root:  python -m bench.runner_throughput
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from models.openai_backend import _to_openai
from models.types import GenerateConfig, ImagePart
from probes.asking.prompting import build_prompt
from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.core.types import Mode, Result, Status
from probes.reading.correctness import is_correct as grade
from probes.reading.parsing import parse_item_reply
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store
from tests.support.fake_servers import serve_in_subprocess


def thread_pool_run(benchmark, items, server_url: str, workers: int, store: Store) -> float:
    """The same per-item work (draw, build the prompt, encode, send, parse, grade, store)
    on a plain thread pool with the synchronous SDK."""
    import openai

    client = openai.OpenAI(base_url=server_url, api_key="bench")

    def one(item):
        prompt = build_prompt(benchmark, item, Mode(), [], lambda it: [ImagePart(s.load()) for s in it.images])
        response = client.chat.completions.create(
            model="bench", messages=[_to_openai(m) for m in prompt.messages], max_completion_tokens=16, temperature=0
        )
        text = response.choices[0].message.content
        parsed = parse_item_reply(text, item)
        result = Result(benchmark.id, item.id, "openai/pool", "0-shot", "none", parsed.status, reply=text,
                        parsed=parsed.value, correct=grade(item.kind, parsed, item.target))  # fmt: skip
        store.record(result)
        return result.status

    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        statuses = list(pool.map(one, items))
    elapsed = time.perf_counter() - started
    assert all(s is Status.ANSWERED for s in statuses)
    return elapsed


def sdk_alone(items, base_url: str, concurrency: int) -> float:
    """The SDK by itself on messages encoded beforehand: the floor the runner builds on."""
    import openai

    messages = [[_to_openai(m) for m in build_prompt(_BENCHMARK[0], item, Mode(), [],
                 lambda it: [ImagePart(s.load()) for s in it.images]).messages] for item in items]  # fmt: skip

    async def go() -> float:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="bench")
        gate = asyncio.Semaphore(concurrency)

        async def one(message):
            async with gate:
                await client.chat.completions.create(
                    model="bench", messages=message, max_completion_tokens=16, temperature=0
                )

        started = time.perf_counter()
        await asyncio.gather(*(one(m) for m in messages))
        elapsed = time.perf_counter() - started
        await client.close()
        return elapsed

    return asyncio.run(go())


_BENCHMARK: list = []


def cpu_floor(items) -> float:
    """CPU seconds to draw, hash and PNG-encode the items' images serially: work no scheduler
    can avoid on a cache miss."""
    started = time.process_time()
    for item in items:
        for source in item.images:
            part = ImagePart(source.load())
            _ = part.sha256, part.png_bytes
    return time.process_time() - started


def scenario(label: str, params: dict, args) -> None:
    def fresh_items():
        benchmark = get_benchmark("blind/touching-circles", params=params)
        return benchmark, select_items(benchmark.items(), args.items, seed=0)

    benchmark, items = fresh_items()
    _BENCHMARK[:] = [benchmark]
    ideal = len(items) * args.latency / args.concurrency
    process, base_url, request_count = serve_in_subprocess("openai", "No.", args.latency)
    try:
        os.environ["OPENAI_BASE_URL"] = base_url
        os.environ["OPENAI_API_KEY"] = "bench-key"
        backend = create("openai/bench")
        config = GenerateConfig(max_tokens=16)
        with tempfile.TemporaryDirectory() as folder:
            sdk_seconds = sdk_alone(items, base_url, args.concurrency)
            with Store(Path(folder) / "pool.sqlite") as pool_store:
                pool_seconds = thread_pool_run(benchmark, items, base_url, args.concurrency, pool_store)

            with Store(Path(folder) / "runner.sqlite") as store:
                plan = RunPlan(benchmark, items, [backend], config=config, concurrency=args.concurrency)
                started = time.perf_counter()
                results = asyncio.run(run(plan, store))
                runner_seconds = time.perf_counter() - started
                assert len(results) == len(items) and all(r.status is Status.ANSWERED for r in results)
                sent = request_count()

                benchmark, items = fresh_items()  # nothing memoised in memory
                plan = RunPlan(benchmark, items, [backend], config=config, concurrency=args.concurrency)
                started = time.perf_counter()
                cached = asyncio.run(run(plan, store))
                cached_seconds = time.perf_counter() - started
                assert all(r.cached for r in cached) and request_count() == sent
    finally:
        process.kill()
    floor = cpu_floor(fresh_items()[1])
    print(f"\n## {label}")
    print(f"items {len(items)}, concurrency {args.concurrency}, server latency {args.latency * 1000:.0f} ms "
          f"(server in its own process), cores {os.cpu_count()}")  # fmt: skip
    print(f"ideal (items x latency / concurrency): {ideal:.2f} s")
    print(f"image CPU floor (draw+hash+PNG, serial): {floor:.2f} s")
    print(f"SDK alone, images encoded beforehand:  {sdk_seconds:.2f} s   ratio to ideal {sdk_seconds / ideal:.3f}")
    print(
        f"runner (asyncio):                      {runner_seconds:.2f} s   ratio to ideal {runner_seconds / ideal:.3f}"
    )
    print(
        f"plain thread pool of {args.concurrency}:              {pool_seconds:.2f} s   ratio to ideal {pool_seconds / ideal:.3f}"
    )
    print(f"runner / thread pool:                  {runner_seconds / pool_seconds:.3f}")
    print(
        f"cached re-run:                         {cached_seconds:.3f} s   {len(items) / cached_seconds:,.0f} results/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    scenario("default set (canvas 384, 769, 1155 px)", {}, args)
    scenario("small images only (canvas 384 px): orchestration overhead", {"canvas": ["384"]}, args)


if __name__ == "__main__":
    main()

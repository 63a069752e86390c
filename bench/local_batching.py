"""Local models: a run's requests answered one at a time against batched by the model's worker.
Uses the tiny random LLaVA the tests build (no download), so the figure is the orchestration and
batching gain on this CPU, not a real model's speed.

Run from the repository root:  python -m bench.local_batching
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from models.types import GenerateConfig
from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store
from tests.support.tiny_vlm import build_tiny_llava


def timed_run(model_id: str, items, concurrency: int, store_path: Path) -> tuple[float, list]:
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"]})
    with Store(store_path) as store:
        plan = RunPlan(
            benchmark, items, [create(model_id)], config=GenerateConfig(max_tokens=8), concurrency=concurrency
        )
        started = time.perf_counter()
        results = asyncio.run(run(plan, store))
        return time.perf_counter() - started, results


def main() -> None:
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"]})
    items = select_items(benchmark.items(), 64, seed=0)
    with tempfile.TemporaryDirectory() as folder:
        model = build_tiny_llava(Path(folder) / "tiny")
        model_id = f"hf/{model}"
        timed_run(model_id, items[:2], 1, Path(folder) / "warm.sqlite")  # load the model once
        serial, serial_results = timed_run(model_id, items, 1, Path(folder) / "serial.sqlite")
        batched, batched_results = timed_run(model_id, items, 8, Path(folder) / "batched.sqlite")
        worker = create(model_id)._load()
    same = [r.reply for r in serial_results] == [r.reply for r in batched_results]
    print(f"{len(items)} items, tiny LLaVA (2+2 layers, 32 px images), 8 new tokens, greedy")
    print(f"one at a time (concurrency 1): {serial:.2f} s  {len(items) / serial:.1f} items/s")
    print(f"batched (concurrency 8):       {batched:.2f} s  {len(items) / batched:.1f} items/s")
    print(f"speed-up: {serial / batched:.2f}x; batch sizes seen: max {max(worker.batch_sizes)}; same replies: {same}")


if __name__ == "__main__":
    main()

"""Freed image buffers given back to the system (`probes/running/heap.py`): what it saves and costs.

Each setting runs in a fresh process (the allocator's threshold is set once per process):

- memory: a Probe of four 16 MP uploads asked of four models (three OpenAI, one Anthropic, local
  servers in this process) under four picture conditions in turn, as the Probe tab runs large
  pictures; the process's peak resident memory (sampled every 10 ms) and what it holds after;
- time: drawing, hashing and PNG-encoding the default BlindTest canvases (384, 769, 1155 px)
  serially, the work every cache miss does, in CPU seconds (best of three).

    python -m bench.heap [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SETTINGS = {"the allocator's own": None, "1 MB": 1 << 20, "4 MB": 4 << 20}
CONDITIONS = ["flip-vertical", "flip-horizontal", "grayscale", "resize-256"]
MODELS = ["openai/gpt-4o", "openai/gpt-4o-mini", "openai/gpt-4.1", "anthropic/claude-haiku-4-5"]


def _rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _ramps(folder: Path) -> list[Path]:
    import numpy as np
    from PIL import Image

    paths = []
    y, x = np.mgrid[0:4000, 0:4000]
    for shift in range(4):
        pixels = np.stack([(x + shift) % 256, y % 256, (x + y) % 256], axis=-1).astype(np.uint8)
        path = folder / f"ramp{shift}.png"
        Image.fromarray(pixels, "RGB").save(path)
        paths.append(path)
    return paths


def _memory(folder: Path) -> dict[str, float]:
    import asyncio

    from models.types import GenerateConfig
    from probes.benchmarks.custom import UploadSet
    from probes.core.types import Mode
    from probes.running.answerers import create
    from probes.running.runner import Runner, RunPlan
    from probes.running.store import Store
    from tests.support.fake_servers import FakeAnthropicServer, FakeOpenAIServer

    benchmark = UploadSet.from_files(_ramps(folder), "Which is brightest?", [], "")
    (item,) = benchmark.items()
    with FakeOpenAIServer(responder=lambda b: "No") as openai, FakeAnthropicServer(responder=lambda b: "No") as other:
        os.environ.update(OPENAI_BASE_URL=openai.base_url, ANTHROPIC_BASE_URL=other.base_url,
                          OPENAI_API_KEY="sk-bench", ANTHROPIC_API_KEY="sk-ant-bench")  # fmt: skip
        models = [create(model) for model in MODELS]
        base = _rss_mb()
        highest, stop = [base], threading.Event()

        def sample() -> None:
            while not stop.wait(0.01):
                highest[0] = max(highest[0], _rss_mb())

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        with Store(folder / "results.sqlite") as store:
            for perturbation in CONDITIONS:
                plan = RunPlan(benchmark, [item], models, Mode(), perturbation, GenerateConfig(max_tokens=16, seed=0))
                results = asyncio.run(Runner(plan, store).run())
                assert all(result.status.value == "answered" for result in results), results
        stop.set()
        sampler.join()
    return {"base": base, "peak": highest[0], "after": _rss_mb()}


def _drawing_seconds() -> float:
    from models.types import ImagePart
    from probes.core.registry import get_benchmark
    from probes.core.selection import select_items

    benchmark = get_benchmark("blind/touching-circles")
    best = float("inf")
    for _ in range(3):
        items = select_items(benchmark.items(), limit=120, seed=0)
        started = time.process_time()
        for item in items:
            for source in item.images:
                part = ImagePart(source.load())
                _ = part.sha256, part.png_bytes
        best = min(best, time.process_time() - started)
    return best


def child(threshold: int | None) -> None:
    from probes.running.heap import give_back_large_buffers

    if threshold is not None:
        assert give_back_large_buffers(threshold), "mallopt did not take: not glibc?"
    with tempfile.TemporaryDirectory() as folder:
        figures = _memory(Path(folder))
    figures["drawing"] = _drawing_seconds()
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(None if args.child == "none" else int(args.child))
        return
    print(f"{len(MODELS)} models x {len(CONDITIONS)} conditions of four 16 MP uploads; cores {os.cpu_count()}")
    print(f"{'threshold':<22}{'peak MB':>16}{'after MB':>16}{'drawing s':>12}")
    baseline = None
    for label, threshold in SETTINGS.items():
        runs = []
        for _ in range(args.repeats):  # interleaving would be fairer; each run is a minute at most
            output = subprocess.run(
                [sys.executable, "-m", "bench.heap", "--child", "none" if threshold is None else str(threshold)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            runs.append(json.loads(output.stdout.strip().splitlines()[-1]))
        peaks = sorted(run["peak"] - run["base"] for run in runs)
        afters = sorted(run["after"] - run["base"] for run in runs)
        drawing = min(run["drawing"] for run in runs)
        baseline = baseline or drawing
        print(
            f"{label:<22}{'+' + format(peaks[len(peaks) // 2], ',.0f') + ' (max +' + format(peaks[-1], ',.0f') + ')':>16}"
            f"{'+' + format(afters[len(afters) // 2], ',.0f'):>16}{drawing:>9.3f} s  x{drawing / baseline:.3f}"
        )
    print("peak and after: above the process's resident memory before the runs (median of runs, and the worst)")


if __name__ == "__main__":
    main()

"""Generating the full default sets of all seven BlindTest tasks, as `python -m probes generate`
writes them (every item's PNG + metadata.jsonl), against the floor: PNG-encoding the same distinct
images alone, one after another, measured in the same run.

Run from the repository root:  python -m bench.generation
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from models.png import encode_rgb_png
from models.types import to_rgb
from probes.benchmarks.generated import render_cached
from probes.core.registry import benchmark_ids, get_benchmark
from probes.files.export import write_generated


def main() -> None:
    tasks = [b for b in benchmark_ids() if b.startswith("blind/")]
    totals = {"images": 0, "items": 0, "generate": 0.0, "floor": 0.0}
    print(f"cores {os.cpu_count()}; encoder: 8-bit RGB PNG, deflate level 6, no row filters")
    print(f"{'task':26} {'images':>6} {'items':>6} {'generate s':>10} {'images/s':>9} {'floor s':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as folder:
        for task in tasks:
            items = get_benchmark(task).items()
            distinct = {source.ref: source for item in items for source in item.images}
            render_cached.cache_clear()
            started = time.perf_counter()
            write_generated(items, Path(folder) / task.replace("/", "_"))
            generate = time.perf_counter() - started

            pictures = [to_rgb(source.load()) for source in distinct.values()]  # drawn outside the floor
            started = time.perf_counter()
            for picture in pictures:
                encode_rgb_png(picture, level=6)
            floor = time.perf_counter() - started
            del pictures

            print(f"{task:26} {len(distinct):6d} {len(items):6d} {generate:10.2f} {len(distinct) / generate:9.1f} "
                  f"{floor:8.2f} {generate / floor:6.2f}")  # fmt: skip
            totals["images"] += len(distinct)
            totals["items"] += len(items)
            totals["generate"] += generate
            totals["floor"] += floor
    print(f"{'all seven':26} {totals['images']:6d} {totals['items']:6d} {totals['generate']:10.2f} "
          f"{totals['images'] / totals['generate']:9.1f} {totals['floor']:8.2f} "
          f"{totals['generate'] / totals['floor']:6.2f}  (goal: within 1.5)")  # fmt: skip


if __name__ == "__main__":
    main()

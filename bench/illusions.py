"""Generating the default sets of the seven illusion/* benchmarks, as `python -m probes generate`
writes them (every item's PNG + metadata.jsonl), against the floor: PNG-encoding the same
distinct images alone, one after another, measured in the same run (the method of
bench/generation.py, which does this for BlindTest).

`write` is write_generated alone, as bench/generation.py times it; `items` is building the
items first (the design, and measuring every stimulus's targets for its label), which
`generate` also does, so the last ratio counts both.

Run from the repository root:  python -m bench.illusions
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
    tasks = [b for b in benchmark_ids() if b.startswith("illusion/")]
    totals = {"images": 0, "items": 0, "build": 0.0, "write": 0.0, "floor": 0.0}
    print(f"cores {os.cpu_count()}; encoder: 8-bit RGB PNG, deflate level 6, no row filters")
    print(
        f"{'task':30} {'images':>6} {'items':>6} {'items s':>8} {'write s':>8} {'images/s':>9} "
        f"{'floor s':>8} {'write/floor':>11} {'all/floor':>9}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for task in tasks:
            started = time.perf_counter()
            items = get_benchmark(task).items()
            build = time.perf_counter() - started
            distinct = {source.ref: source for item in items for source in item.images}
            render_cached.cache_clear()
            started = time.perf_counter()
            write_generated(items, Path(folder) / task.replace("/", "_"))
            write = time.perf_counter() - started

            pictures = [to_rgb(source.load()) for source in distinct.values()]  # drawn outside the floor
            started = time.perf_counter()
            for picture in pictures:
                encode_rgb_png(picture, level=6)
            floor = time.perf_counter() - started
            del pictures

            print(f"{task:30} {len(distinct):6d} {len(items):6d} {build:8.2f} {write:8.2f} "
                  f"{len(distinct) / write:9.1f} {floor:8.2f} {write / floor:11.2f} {(build + write) / floor:9.2f}")  # fmt: skip
            totals["images"] += len(distinct)
            totals["items"] += len(items)
            totals["build"] += build
            totals["write"] += write
            totals["floor"] += floor
    print(f"{'all seven':30} {totals['images']:6d} {totals['items']:6d} {totals['build']:8.2f} {totals['write']:8.2f} "
          f"{totals['images'] / totals['write']:9.1f} {totals['floor']:8.2f} {totals['write'] / totals['floor']:11.2f} "
          f"{(totals['build'] + totals['write']) / totals['floor']:9.2f}  (goal: within 1.5)")  # fmt: skip


if __name__ == "__main__":
    main()

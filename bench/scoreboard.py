"""Scoreboard: time to build the table and the charts from a store of 100,000 results (the
Scoreboard tab's own `scoreboard()` handler, everything it returns), the first time (the store
read and decoded) and after a change of filters (the decoded results kept in memory).

Run from the repository root:  python -m bench.scoreboard [--results 100000]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

from probes.core.types import Result, Status
from probes.running.store import Store

MODELS = [f"provider/model-{n}" for n in range(8)]
MODES = ["0-shot", "4-shot", "4-shot+CoT"]
GAPS = [f"{-0.15 + 0.05 * i:+.2f}" for i in range(14)]


def fill(store: Store, count: int) -> None:
    rng = random.Random(0)
    batch = []
    for n in range(count):
        model, mode = MODELS[n % len(MODELS)], MODES[(n // len(MODELS)) % len(MODES)]
        correct = rng.random() < 0.6
        result = Result(
            benchmark="blind/touching-circles", item_id=f"item-{n // (len(MODELS) * len(MODES))}", model=model,
            mode=mode, perturbation="none", status=Status.ANSWERED, reply="Yes" if correct else "No",
            parsed="yes", correct=correct, score=float(correct), target="yes", latency=rng.uniform(0.2, 3.0),
            groups={"prompt": "touching", "gap": GAPS[n % 14], "canvas": "384"}, cache_key=f"k{n}",
        )  # fmt: skip
        batch.append((result, None, ""))
        if len(batch) == 5000:
            store.record_many(batch)
            batch = []
    store.record_many(batch)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["PROBE_HOME"] = home
        from ui import common
        from ui.scoreboard import scoreboard

        common.store.cache_clear()
        fill(common.store(), args.results)
        arguments = ("blind/touching-circles", [], "all", "all", "gap", MODELS[0], ["0-shot", "4-shot"])
        started = time.perf_counter()
        outputs = scoreboard(*arguments)
        first = time.perf_counter() - started
        timings = []
        for mode in ("0-shot", "4-shot", "all"):
            started = time.perf_counter()
            scoreboard("blind/touching-circles", [], mode, "all", "gap", MODELS[1], MODES)
            timings.append(time.perf_counter() - started)
    rows = len(outputs[1])
    print(f"store of {args.results:,} results, 8 models x 3 modes, grouped by gap (14 values), cores {os.cpu_count()}")
    print(
        f"first build (read and decode the store, table, CSV/JSON, 3 charts, agreement): {first:.2f} s, {rows} table rows"
    )
    print(
        f"after a change of filters (decoded results kept): {min(timings):.2f} to {max(timings):.2f} s (goal: under 1 s)"
    )


if __name__ == "__main__":
    main()

"""Scoreboard: time to build the table and the charts from a store of 100,000 results (the
Scoreboard tab's own `scoreboard()` handler, everything it returns), the first time (the store
read and decoded) and after a change of filters (the decoded results kept in memory); then the
Curves view (`psychometric()`: item references read for the series drawn, logistic fits with
their bootstrap) and the Compare view (`compare()`) on 20,000 illusion results in the same store.

Run from the repository root:  python -m bench.scoreboard [--results 100000]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import tempfile
import time

from probes.core.types import ItemRef, Result, Status
from probes.running.store import Store

MODELS = [f"provider/model-{n}" for n in range(8)]
MODES = ["0-shot", "4-shot", "4-shot+CoT"]
GAPS = [f"{-0.15 + 0.05 * i:+.2f}" for i in range(14)]
DIFFERENCES = [-0.3, -0.2, -0.1, -0.05, 0.05, 0.1, 0.2, 0.3]


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


def fill_illusion(store: Store, count: int) -> None:
    """Mueller-Lyer answers as the runner stores them (item references with the design's
    parameters): a difference sweep under three inducer polarities, an observer per model."""
    rng = random.Random(1)
    batch = []
    for n in range(count):
        model, mode = MODELS[n % len(MODELS)], MODES[(n // len(MODELS)) % len(MODES)]
        item = n // (len(MODELS) * len(MODES))
        difference, polarity = DIFFERENCES[item % 8], (1, -1, 0)[(item // 8) % 3]
        positive = rng.random() < 1 / (1 + math.exp(-(difference - 0.05 * polarity) / 0.06))
        params = {"difference": difference, "polarity": polarity, "positive_answer": 0}
        result = Result(
            benchmark="illusion/mueller-lyer", item_id=f"ml-{item}", model=model, mode=mode, perturbation="none",
            status=Status.ANSWERED, reply="Top" if positive else "Bottom", parsed=0 if positive else 1,
            correct=positive == (difference > 0), score=float(positive == (difference > 0)), target=0,
            groups={"difference": f"{difference:+.2f}", "inducers": ("with", "flipped", "none")[(item // 8) % 3]},
            item_ref=ItemRef("illusion/mueller-lyer", f"ml-{item}", params=params), cache_key=f"i{n}",
        )  # fmt: skip
        batch.append((result, None, ""))
        if len(batch) == 5000:
            store.record_many(batch)
            batch = []
    store.record_many(batch)


def timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--illusion", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["PROBE_HOME"] = home
        from ui import sessions
        from ui.scoreboard import scoreboard
        from ui.scoreboard_handlers import compare, psychometric

        sessions.shared_store.cache_clear()
        fill(sessions.shared_store(), args.results)
        arguments = ("blind/touching-circles", [], "all", "all", "gap", MODELS[0], ["0-shot", "4-shot"])
        started = time.perf_counter()
        outputs = scoreboard(*arguments)
        first = time.perf_counter() - started
        timings = [
            timed(lambda mode=mode: scoreboard("blind/touching-circles", [], mode, "all", "gap", MODELS[1], MODES))
            for mode in ("0-shot", "4-shot", "all")
        ]
        fill_illusion(sessions.shared_store(), args.illusion)
        scoreboard(*arguments)  # the store changed: read it again before timing the views
        curves = [timed(lambda: psychometric("illusion/mueller-lyer", "difference", [], "all", "all")) for _ in "ab"]
        compared = timed(lambda: compare("illusion/mueller-lyer", "modes", "0-shot", ["4-shot", "4-shot+CoT"], [],
                                         "all", "all"))  # fmt: skip
    table = outputs[1]
    rows = len(getattr(table, "data", table))  # a pandas Styler (tinted reference rows) or a DataFrame
    print(f"store of {args.results:,} results, 8 models x 3 modes, grouped by gap (14 values), cores {os.cpu_count()}")
    print(
        f"first build (read and decode the store, leaderboard, table, CSV/JSON, 3 charts, agreement): {first:.2f} s, "
        f"{rows} table rows"
    )
    print(
        f"after a change of filters (decoded results kept): {min(timings):.2f} to {max(timings):.2f} s (goal: under 1 s)"
    )
    print(
        f"curves on {args.illusion:,} illusion results (8 series x 3 inducer fits, 1000 bootstrap resamples each): "
        f"first {curves[0]:.2f} s, again {curves[1]:.2f} s; compare 0-shot with two modes: {compared:.2f} s"
    )


if __name__ == "__main__":
    main()

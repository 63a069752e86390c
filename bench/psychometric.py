"""Psychometric fitting speed: what `report --fit` and the Scoreboard chart pay for the fits.

Prints:
- one fit of 9 levels x 20 trials with its 1000 bootstrap resamples (the SPEC's check);
- the same without the bootstrap (the fast path, `resamples=0`);
- one fit whose x is continuous (every trial its own level, as with measured differences);
- `fit_rows` and `magnitude_rows` over a store-sized set of results: the Illusion Game grid
  (8 differences x 7 strengths, both signs) x 20 jittered trials x 8 models x 3 modes, with
  `--by` one group of 2 values.

Run from the repository root:  python -m bench.psychometric [--models 8] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from probes.analysis.logistic import fit_levels
from probes.analysis.psychometric import fit_rows, magnitude_rows
from probes.core.types import ItemRef, Result, Status

DIFFERENCES = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
STRENGTHS = (-45, -30, -15, 0, 15, 30, 45)
MODES = ("0-shot", "4-shot", "4-shot+CoT")


def timed(label: str, work, repeat: int = 1) -> None:  # noqa: ANN001
    start = time.perf_counter()
    for _ in range(repeat):
        work()
    print(f"{label}: {(time.perf_counter() - start) / repeat * 1000:.1f} ms")


def illusion_results(models: int, trials: int = 20) -> list[Result]:
    rng = np.random.default_rng(0)
    results = []
    for model in range(models):
        for mode in MODES:
            for strength in STRENGTHS:
                for d in (*DIFFERENCES, *(-v for v in DIFFERENCES)):
                    side = int(np.sign(strength) * np.sign(d))
                    p = 1 / (1 + np.exp(-(d - 0.05 * side) / 0.06))
                    for trial in range(trials):
                        params = {"difference": d, "illusion_strength": strength, "positive_answer": trial % 2}
                        positive = rng.random() < p
                        item = f"{strength}:{d}:{trial}"
                        results.append(Result(
                            "illusion/mueller-lyer", item, f"model-{model}", mode, "none", Status.ANSWERED,
                            parsed=trial % 2 if positive else 1 - trial % 2, groups={"canvas": ("384", "768")[trial % 2]},
                            item_ref=ItemRef("illusion/mueller-lyer", item, params=params),
                        ))  # fmt: skip
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    x = np.linspace(-0.2, 0.2, 9)
    k = rng.binomial(20, 1 / (1 + np.exp(-(x - 0.08) / 0.05)))
    print(f"cores {os.cpu_count()}, {args.resamples} resamples")
    timed("one fit, 9 levels x 20 trials, bootstrap", lambda: fit_levels(x, [20] * 9, k, resamples=args.resamples), 20)
    timed("one fit, 9 levels x 20 trials, no bootstrap", lambda: fit_levels(x, [20] * 9, k, resamples=0), 200)
    xs = rng.uniform(-0.2, 0.2, 2000)
    ks = rng.random(2000) < 1 / (1 + np.exp(-(xs - 0.08) / 0.05))
    timed(
        "one fit, 2000 trials at 2000 distinct x, bootstrap",
        lambda: fit_levels(xs, [1] * 2000, ks, resamples=args.resamples),
    )
    results = illusion_results(args.models)
    print(f"{len(results):,} results, {args.models} models x {len(MODES)} modes")
    timed(
        "fit_rows(difference, by=canvas)",
        lambda: fit_rows(results, "difference", by=("canvas",), resamples=args.resamples),
    )
    timed("magnitude_rows(difference)", lambda: magnitude_rows(results, "difference", resamples=args.resamples))


if __name__ == "__main__":
    main()

"""Psychometric fitting speed: what `report --fit` and the Scoreboard chart pay for the fits.

Prints:
- one fit of 9 levels x 20 trials with its 1000 bootstrap resamples (the SPEC's check);
- the same without the bootstrap (the fast path, `resamples=0`);
- one fit whose x is continuous (every trial its own level, as with measured differences);
- `fit_rows` and `magnitude_rows` over a store-sized set of results: the Illusion Game grid
  (8 differences x 7 strengths, both signs) x 20 jittered trials x 8 models x 3 modes, with
  `--by` one group of 2 values.

With `--graded` instead (issue 26): a simulated observer with a known PSE (0.08, slope 0.05,
each item seen with its own jitter of sd 0.03, as jittered nuisance parameters make it) answering
with probabilities:
- items needed for |PSE error| <= 0.02 in 90% of repetitions, by the graded fit (the items'
  probabilities, probes/analysis/graded.py) and by the choice-based fit (its choices);
- the adaptive sweep (probes/analysis/adaptive.py) against the full grid: the PSE interval the
  full grid's graded answers reach, and how many requests the adaptive design needs to reach
  it, by the same posterior and stopping rule (only the order of the differences differs);
- the same through the command line (`run --until-pse-width W`, the real OpenAI SDK against a
  local server answering as that observer, tests/support/observer.py): the requests a full-grid
  run sends, the width its stored answers give the sweep's posterior, and the requests the
  adaptive run sends to reach that width.

Run from the repository root:  python -m bench.psychometric [--models 8] [--resamples 1000]
                               python -m bench.psychometric --graded [--repetitions 200] [--cli-repetitions 3]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from probes.analysis.adaptive import Design
from probes.analysis.graded import graded_fit
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


PSE, SLOPE, JITTER = 0.08, 0.05, 0.03
LEVELS = np.round(np.linspace(-0.2, 0.3, 11), 3)


def observe(x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The observer's probability of the positive answer at each x, and its choice (sampled)."""
    p = 1 / (1 + np.exp(-(x + rng.normal(0, JITTER, len(x)) - PSE) / SLOPE))
    return p, rng.random(len(x)) < p


def items_needed(repetitions: int) -> None:
    sizes = (10, 20, 40, 80, 160, 320, 640, 1280)
    needed: dict[str, int | None] = {"probabilities": None, "choices": None}
    print(f"observer: PSE {PSE}, slope {SLOPE}, jitter sd {JITTER}; x cycles {len(LEVELS)} levels in "
          f"[{LEVELS[0]}, {LEVELS[-1]}]; {repetitions} repetitions per size")  # fmt: skip
    print("items  graded: share |err|<=0.02  choices: share |err|<=0.02")
    for size in sizes:
        hits = {"probabilities": 0, "choices": 0}
        for repetition in range(repetitions):
            rng = np.random.default_rng([size, repetition])
            x = np.resize(LEVELS, size)
            p, chosen = observe(x, rng)
            graded = graded_fit(x, p, resamples=0)
            choices = fit_levels(x, np.ones(size), chosen.astype(int), resamples=0)
            for name, fit in (("probabilities", graded), ("choices", choices)):
                hits[name] += fit.pse is not None and abs(fit.pse - PSE) <= 0.02
        shares = {name: hits[name] / repetitions for name in hits}
        print(f"{size:5d}  {shares['probabilities']:26.2f}  {shares['choices']:27.2f}")
        for name, share in shares.items():
            if share >= 0.9 and needed[name] is None:
                needed[name] = size
        if all(needed.values()):
            break
    print(f"items needed for |PSE error| <= 0.02 in 90% of repetitions: graded {needed['probabilities']}, "
          f"choices {needed['choices'] or f'> {sizes[-1]}'}")  # fmt: skip


def adaptive_against_grid(repetitions: int, per_level: int = 8) -> None:
    grid_size = len(LEVELS) * per_level
    widths, grid_errors, asked, adaptive_errors, ordered = [], [], [], [], []
    for repetition in range(repetitions):
        rng = np.random.default_rng([7, repetition])
        full = Design(LEVELS)
        order = rng.permutation(np.resize(LEVELS, grid_size))
        trace = []
        for x in order:
            full.update(float(x), float(observe(np.array([x]), rng)[0][0]))
            trace.append(full.pse_interval())
        low, high = full.pse_interval()
        width = high - low
        widths.append(width)
        grid_errors.append(abs(full.pse() - PSE))
        # The grid in its random order reaches that width only when (nearly) all of it is asked:
        ordered.append(next(i + 1 for i, (lo, hi) in enumerate(trace) if hi - lo <= width))
        design = Design(LEVELS)
        while not design.done(width + 1e-9) and design.asked < 4 * grid_size:
            x = design.next_difference()
            design.update(x, float(observe(np.array([x]), rng)[0][0]))
        asked.append(design.asked)
        adaptive_errors.append(abs(design.pse() - PSE))
    print(f"full grid: {len(LEVELS)} levels x {per_level} = {grid_size} requests; PSE 95% interval width "
          f"median {np.median(widths):.4f}, median |PSE error| {np.median(grid_errors):.4f}; the grid in random "
          f"order first reaches that width after median {np.median(ordered):.0f} requests")  # fmt: skip
    print(f"adaptive (--until-pse-width that width): median {np.median(asked):.0f} requests (mean "
          f"{np.mean(asked):.1f}, max {np.max(asked)}), median |PSE error| {np.median(adaptive_errors):.4f}; "
          f"{repetitions} repetitions")  # fmt: skip


CLI_SEEDS = 4  # pictures per difference (x 2 wordings) in the full grid: 11 x 4 x 2 = 88 items, as above
POOL_SEEDS = 12  # ... and in the adaptive run's pool, with items to spare where it asks most


def adaptive_cli(repetitions: int) -> None:
    """The adaptive run through `python -m probes run`, against the full grid run the same way:
    once from the grid's own 88 items, once from a pool of 3 times as many (a run keeps asking
    near the PSE only while items there last)."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from probes.analysis.graded import positive_probability
    from probes.running.store import Store
    from tests.support.observer import Observer, drawn_differences

    def sweep(seeds: int) -> dict[str, list[str]]:
        return {"difference": [f"{x:g}" for x in LEVELS], "illusion_strength": ["30"], "inducers": ["with"],
                "canvas": ["384"], "seed": [str(s) for s in range(seeds)]}  # fmt: skip

    drawn = drawn_differences(sweep(POOL_SEEDS))  # the grid's pictures are among the pool's
    with tempfile.TemporaryDirectory() as folder, Observer(drawn, {"observer": PSE}, SLOPE, JITTER) as server:
        env = dict(os.environ, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-bench", PROBE_HOME=folder)

        def cli(seeds: int, *args: str) -> tuple[int, str]:
            params = [a for name, values in sweep(seeds).items() for a in ("--param", f"{name}={','.join(values)}")]
            before = server.request_count
            done = subprocess.run([sys.executable, "-m", "probes", "run", "illusion/mueller-lyer", *params, "--model",
                                   "openai/observer", *args], env=env, capture_output=True, text=True, check=True)  # fmt: skip
            return server.request_count - before, done.stdout

        grid_store = Path(folder) / "grid.sqlite"
        grid_requests, _ = cli(CLI_SEEDS, "--probabilities", "--store", str(grid_store))
        with Store(grid_store, read_only=True) as store:
            results = store.results()
        design = Design.over([float(v) for v in sweep(CLI_SEEDS)["difference"]])
        for result in results:
            design.update(float(result.item_ref.params["difference"]), positive_probability(result))
        low, high = design.pse_interval()
        width = high - low
        print(f"CLI, full grid: {grid_requests} requests; the sweep's posterior from its answers: PSE "
              f"{design.pse():.4f}, 95% interval width {width:.4f}")  # fmt: skip
        for seeds in (CLI_SEEDS, POOL_SEEDS):
            for repetition in range(repetitions):
                store = Path(folder) / f"adaptive-{seeds}-{repetition}.sqlite"
                sent, out = cli(seeds, "--until-pse-width", f"{width + 1e-6:.6f}", "--seed", str(repetition),
                                "--store", str(store))  # fmt: skip
                line = next(line for line in out.splitlines() if line.startswith("until PSE width"))
                print(f"CLI, --until-pse-width {width + 1e-6:.4f} --seed {repetition}, pool of {len(LEVELS) * seeds * 2}:"
                      f" {sent} requests; {line.partition('none: ')[2]}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--graded", action="store_true", help="graded answers and the adaptive sweep (issue 26)")
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--cli-repetitions", type=int, default=3, help="adaptive runs through the command line")
    args = parser.parse_args()
    if args.graded:
        started = time.perf_counter()
        items_needed(args.repetitions)
        adaptive_against_grid(max(20, args.repetitions // 5))
        if args.cli_repetitions:
            adaptive_cli(args.cli_repetitions)
        print(f"({time.perf_counter() - started:.1f} s)")
        return
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

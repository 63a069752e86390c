"""The fits of `report --fit` over every cell of a million results, without the store: the
parts `probes.running.fit_kept` reads (per cell and level the choices' counts, per item the
positive answer's probability) made here in the shape of bench/scoreboard.py's million (678
choice fits of 16 levels, about 1,500 items each; 168 graded fits of 1,500 items), then fitted as
`report --fit` fits them (probes.analysis.fit_points.fit_rows_of, 1,000 resamples each).

Measured in the same run: the fits in one process and spread over this machine's cores; and a
graded fit's bootstrap drawn level by level (graded._resampled_levels) against one multinomial
over every item (the draw before, kept here as the baseline), on the same 1,500 items.

Run from the repository root:  python -m bench.report_fits [--choices 678] [--graded 168]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from probes.analysis.fit_points import Tally, _cores, fit_rows_of
from probes.analysis.graded import _resampled_levels

LEVELS = np.round(np.linspace(-0.3, 0.3, 16), 2)
PER_LEVEL = 94  # items a level: 16 x 94 = 1,504


def parts(choices: int, graded: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(0)
    tallies, points = {}, {}
    for cell in range(max(choices, graded)):
        key = ("illusion/ponzo", f"model-{cell % 4}", f"mode-{cell // 4 % 4}", "none", f"g={cell}")
        pse, slope = rng.uniform(-0.15, 0.15), rng.uniform(0.03, 0.2)
        truth = 1 / (1 + np.exp(-(LEVELS - pse) / slope))
        if cell < choices:
            tally = Tally()
            for x, p in zip(LEVELS, truth, strict=True):
                tally.add(float(x), PER_LEVEL, int(rng.binomial(PER_LEVEL, p)), 0, 0, 0)
            tallies[key] = tally
        if cell < graded:
            x = np.repeat(LEVELS, PER_LEVEL)
            y = np.clip(np.repeat(truth, PER_LEVEL) + rng.normal(0, 0.1, len(x)), 0, 1)
            points[key] = list(zip(x.tolist(), y.tolist(), strict=True))
    return tallies, points


def _one_multinomial(rng: np.random.Generator, y: np.ndarray, counts: np.ndarray, resamples: int):
    """The draw before: one multinomial over every item, pooled per level."""
    weights = rng.multinomial(len(y), np.full(len(y), 1 / len(y)), size=resamples).astype(float)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return np.add.reduceat(weights, starts, axis=1), np.add.reduceat(weights * y, starts, axis=1)


def _timed(work, repeats: int = 1) -> float:
    started = time.perf_counter()
    for _ in range(repeats):
        work()
    return (time.perf_counter() - started) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--choices", type=int, default=678)
    parser.add_argument("--graded", type=int, default=168)
    args = parser.parse_args()
    tallies, points = parts(args.choices, args.graded)
    cores = _cores()
    print(f"{len(tallies)} choice fits and {len(points)} graded fits, 1,000 resamples each; {cores} cores; "
          f"load {' '.join(f'{v:.1f}' for v in os.getloadavg())}\n")  # fmt: skip

    y = np.array([p[1] for p in next(iter(points.values()))])
    counts = np.full(len(LEVELS), PER_LEVEL)
    before = _timed(lambda: _one_multinomial(np.random.default_rng(1), y, counts, 1000), 10)
    now = _timed(lambda: _resampled_levels(np.random.default_rng(1), y, counts, 1000), 10)
    print(f"- a graded fit's 1,000 resamples of 1,504 items drawn: one multinomial over every item {before * 1000:.1f} ms, "
          f"level by level {now * 1000:.1f} ms ({before / now:.1f}x)")  # fmt: skip

    alone = _timed(lambda: fit_rows_of(tallies, points, "difference", workers=1))
    spread = _timed(lambda: fit_rows_of(tallies, points, "difference", workers=cores))
    print(f"- every fit, one process: {alone:.1f} s; spread over {cores} processes: {spread:.1f} s "
          f"({alone / spread:.1f}x)")  # fmt: skip


if __name__ == "__main__":
    main()

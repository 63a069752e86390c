"""`report --fit` over many cells spreads its fits over processes (fit_points.fit_rows_of): the
rows are the very rows one process makes, and the bootstrap drawn level by level (graded.py) is
the bootstrap over items it stands for."""

from __future__ import annotations

import numpy as np

from probes.analysis.fit_points import PARALLEL_FROM, Tally, fit_rows_of
from probes.analysis.graded import _resampled_levels


def _parts(cells: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(7)
    levels = np.round(np.linspace(-0.3, 0.3, 9), 2)
    tallies, graded = {}, {}
    for cell in range(cells):
        key = ("illusion/ponzo", f"model-{cell % 5}", "0-shot", "none", "overall" if cell < 5 else f"g={cell}")
        pse, slope = rng.uniform(-0.2, 0.2), rng.uniform(0.03, 0.2)
        truth = 1 / (1 + np.exp(-(levels - pse) / slope))
        tally = Tally()
        for x, p in zip(levels, truth, strict=True):
            n = int(rng.integers(5, 30))
            tally.add(float(x), n, int(rng.binomial(n, p)), int(rng.integers(0, 2)), 0, 0)
        tallies[key] = tally
        if cell % 3 == 0:
            x = np.repeat(levels, 12)
            y = np.clip(np.repeat(truth, 12) + rng.normal(0, 0.1, len(x)), 0, 1)
            graded[key] = list(zip(x.tolist(), y.tolist(), strict=True))
    return tallies, graded


def test_fits_made_in_processes_are_the_rows_one_process_makes():
    tallies, graded = _parts(PARALLEL_FROM)
    alone = fit_rows_of(tallies, graded, "difference", resamples=200, workers=1)
    spread = fit_rows_of(tallies, graded, "difference", resamples=200, workers=2)
    assert len(alone) == len(tallies) + len(graded) >= PARALLEL_FROM
    assert [row.as_dict() for row in spread] == [row.as_dict() for row in alone]


def test_resamples_drawn_level_by_level_are_items_drawn_with_replacement():
    rng = np.random.default_rng(3)
    counts = np.array([3, 1, 5, 2])
    y = rng.random(counts.sum())
    level = np.repeat(np.arange(len(counts)), counts)
    pooled, hits = _resampled_levels(np.random.default_rng(11), y, counts, 100_000)
    assert (pooled.sum(axis=1) == counts.sum()).all()  # every resample as many items as the data
    # Each level drawn in its share of the items, its drawn items' mean that of its own items.
    assert np.allclose(pooled.mean(axis=0), counts, rtol=0.01)
    for index in range(len(counts)):
        own = y[level == index]
        drawn = pooled[:, index]
        assert ((hits[:, index] >= own.min() * drawn - 1e-12) & (hits[:, index] <= own.max() * drawn + 1e-12)).all()
        assert abs(hits[:, index].sum() / drawn.sum() - own.mean()) < 0.01
    # The spread of a level's count is the multinomial's: n p (1 - p).
    share = counts / counts.sum()
    assert np.allclose(pooled.var(axis=0), counts.sum() * share * (1 - share), rtol=0.03)

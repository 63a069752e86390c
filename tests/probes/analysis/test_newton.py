"""The maximum-likelihood search every fit uses (probes.analysis.logistic._newton): a Newton step
is taken whole where concavity proves the likelihood does not fall, compared only elsewhere,
halved where it would fall; rows stop on their own. Checked against statsmodels' binomial GLM row
by row, from good starts and far-off ones, on designs with one trial a level (measured x) and
with many, and on the bootstrap's refits (which start each resample one shared-weight step from
the fit), since those give every interval a report prints."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm

from probes.analysis.logistic import _newton, _refit, _separation, _sigmoid, fit_levels


def _glm(u: np.ndarray, n: np.ndarray, k: np.ndarray) -> tuple[float, float, float]:
    fitted = sm.GLM(np.column_stack([k, n - k]), sm.add_constant(u), family=sm.families.Binomial()).fit(tol=1e-14)
    a, b = fitted.params
    # Its log-likelihood counts the binomial coefficients, which the fit's leaves out (constant in a, b).
    coefficients = sum(
        math.lgamma(m + 1) - math.lgamma(j + 1) - math.lgamma(m - j + 1) for m, j in zip(n, k, strict=True)
    )
    return float(a), float(b), float(fitted.llf) - coefficients


def _overlapping(rng: np.random.Generator, u: np.ndarray, n: np.ndarray, rows: int, slope: float) -> np.ndarray:
    """Rows of counts with a finite maximum (neither all one way nor a clean step)."""
    found = []
    while len(found) < rows:
        k = rng.binomial(n.astype(np.int64), _sigmoid(rng.normal(0, 1) + slope * u)).astype(float)
        if _separation(u, n, k[None, :])[0][0] == 0 and 0 < k.sum() < n.sum():
            found.append(k)
    return np.array(found)


@pytest.mark.parametrize(
    ("levels", "trials", "slope"),
    [(16, 94, 6.0), (9, 20, 3.0), (40, 1, 4.0), (5, 3, 1.0)],  # a sweep; the SPEC's; measured x; few
)
def test_every_row_reaches_the_glm_maximum_from_near_and_far(levels, trials, slope):
    rng = np.random.default_rng(levels * 100 + trials)
    u = np.sort(rng.uniform(-0.5, 0.5, levels)) if trials == 1 else np.linspace(-0.5, 0.5, levels)
    n = np.full(levels, float(trials))
    k = _overlapping(rng, u, n, 40, slope)
    # The fits' own start (flat) and starts a few units off (steps then halved); from much further,
    # where every P is 0 or 1 and the curvature vanishes, no start is ever made.
    starts = [(np.zeros(40), np.zeros(40)), (rng.normal(0, 3, 40), rng.normal(0, 10, 40))]
    for a0, b0 in starts:
        a, b, ll = _newton(u, n, k, a0, b0)
        for row in range(len(k)):
            ra, rb, rll = _glm(u, n, k[row])
            assert (a[row], b[row]) == pytest.approx((ra, rb), rel=1e-7, abs=1e-7)
            assert ll[row] == pytest.approx(rll, rel=1e-10, abs=1e-9)


def test_rows_with_their_own_counts_per_level_reach_the_maximum():
    # The graded fit's bootstrap: each resample has its own number of items at each level.
    rng = np.random.default_rng(7)
    u = np.linspace(-0.5, 0.5, 8)
    n = rng.integers(5, 40, size=(30, 8)).astype(float)
    k = np.round(n * np.clip(_sigmoid(0.3 + 5 * u) + rng.normal(0, 0.1, n.shape), 0.01, 0.99), 6)
    a, b, _ = _newton(u, n, k, np.zeros(30), np.zeros(30), likelihood=False)
    for row in range(30):
        # A fractional response: statsmodels' binomial GLM takes proportions with var_weights.
        fitted = sm.GLM(k[row] / n[row], sm.add_constant(u), family=sm.families.Binomial(), var_weights=n[row])
        assert (a[row], b[row]) == pytest.approx(tuple(fitted.fit(tol=1e-14).params), rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("steepness", [0.08, 0.012])  # a sweep's observer; one close to a step
def test_the_bootstraps_refits_are_each_resamples_own_maximum(steepness):
    x = np.round(np.linspace(-0.3, 0.3, 16), 2)
    n = np.full(16, 94.0)
    rng = np.random.default_rng(11)
    k = rng.binomial(94, _sigmoid((x - 0.05) / steepness)).astype(float)
    fit = fit_levels(x, n, k, resamples=0)
    centre, scale = float(np.average(x, weights=n)), float(np.ptp(x))
    u = (x - centre) / scale
    b = scale / fit.slope  # logit P = a + b u at the fit
    a = -(fit.pse - centre) / scale * b
    drawn = rng.binomial(n.astype(np.int64), _sigmoid(a + b * u), size=(60, 16)).astype(float)
    pses, slopes = _refit(x, u, n, drawn, a, b, centre, scale)
    checked = 0
    for row in range(len(drawn)):
        if _separation(x, n, drawn[row][None, :])[0][0] != 0:
            continue  # a step: no maximum to compare (the module's note says what it counts as)
        ra, rb, _ = _glm(u, n, drawn[row])
        assert pses[row] == pytest.approx(centre - ra * scale / rb, abs=1e-9)
        assert slopes[row] == pytest.approx(scale / rb, rel=1e-8)
        checked += 1
    assert checked >= 20


def test_the_probabilities_it_steps_by_are_the_logistic_at_every_logit():
    """P = 1 / (1 + exp(-eta)) as the search computes it (in place, exp left to overflow below
    eta = -709) against the form that never overflows, over the whole range of a double's logits:
    within a few units in the last place where P is a normal number, 0 where it is not, no warning."""
    from probes.analysis.logistic import _probability

    rng = np.random.default_rng(11)
    eta = np.concatenate([rng.normal(0, 3, 5000), rng.uniform(-800, 800, 5000), [0.0, -709.8, -745.2, 800.0, -1e308]])
    e = np.exp(-np.abs(eta))
    stable = np.where(eta >= 0, 1.0, e) / (1.0 + e)
    with np.errstate(all="raise"):
        found = _probability(eta.copy())
    normal = stable > np.finfo(float).tiny
    assert np.all(np.abs(found[normal] - stable[normal]) <= 4 * np.spacing(stable[normal]))
    assert np.all(found[~normal] <= np.finfo(float).tiny) and np.all(found >= 0) and np.all(found <= 1)

"""Maximum-likelihood logistic psychometric functions with bootstrap intervals (numpy only).

The model: P(positive | x) = 1 / (1 + exp(-(x - pse) / slope)), i.e. logit P = a + b x with
pse = -a / b and slope = 1 / b (a scale in x units; negative for a falling curve). `width` is the
x distance from the 25% to the 75% point, 2 ln(3) |slope| (half of it, ln(3) |slope|, is the
classic JND from the PSE to 75%); psignifit's default width (5% to 95%) is 2 ln(19) |slope|.
No lapse or guess rate: the curve runs from 0 to 1, as a two-alternative "which is bigger"
judgement against a signed difference does (SPEC section 5, checked there against statsmodels'
binomial GLM and psignifit with lapse and guess fixed).

The fit is Newton-Raphson on (a, b) with step halving, in centred and scaled x, run on all
bootstrap resamples at once. Where no finite maximum exists it says so instead of returning
numbers: `separated` (a step: the PSE lies between the highest level with a negative reply and
the lowest with a positive one, or the reverse for a falling curve; slope unidentified),
`all positive` / `all negative`, `too few levels` (fewer than two distinct x), `flat` (no
detectable dependence on x: likelihood-ratio test of b = 0, p > 0.05; `slope_test` holds the test
that every fit, of choices or of probabilities, uses), and `outside the sweep` (a slope, but the
PSE's interval reaches beyond the lowest or highest level swept: the data bound the PSE on one side
at most, so no PSE is reported; `pinned`).

Intervals: parametric bootstrap, percentile 95%. Each resample draws every level's positives
from Binomial(n, fitted P(x)) and is refitted; a resample that comes out separated counts with
the PSE at the middle of its step and slope 0, one that comes out all-positive or all-negative
with the PSE at -inf or +inf, so a bound set by such resamples is reported as None (unbounded).
Parametric rather than resampling trials within each level because a level with one trial (a
measured, continuous x) would then never vary. Seeded: the same data and seed give the same
interval.

One notion of "no PSE" for every fit (issue 34): a PSE is reported only when the slope differs
from zero at the 5% level (`slope_test`) and its 95% interval lies within the levels swept
(`pinned`); otherwise the status says which, and pse, pse_low and pse_high are None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from probes.stimuli.lazy_numpy import np

RESAMPLES = 1000
CURVE_POINTS = 101
LEVEL = 0.05  # every fit's test of its slope against zero, choices and probabilities alike
WIDTH_PER_SLOPE = 2 * math.log(3)  # 25% to 75%


class FitStatus(StrEnum):
    OK = "ok"
    FLAT = "flat"
    SEPARATED = "separated"
    ALL_POSITIVE = "all positive"
    ALL_NEGATIVE = "all negative"
    TOO_FEW_LEVELS = "too few levels"
    OUTSIDE = "outside the sweep"


@dataclass(frozen=True)
class Level:
    """One stimulus value: how many usable replies, how many positive, with a Wilson 95% interval."""

    x: float
    n: int
    positives: int
    proportion: float
    low: float
    high: float


@dataclass(frozen=True)
class Fit:
    status: FitStatus
    pse: float | None
    pse_low: float | None
    pse_high: float | None
    slope: float | None
    slope_low: float | None
    slope_high: float | None
    width: float | None
    width_low: float | None
    width_high: float | None
    n: int
    levels: tuple[Level, ...]
    curve_x: tuple[float, ...]  # the fitted curve on a grid over the levels' range
    curve_p: tuple[float, ...]
    p_slope: float | None = None  # the slope test's p-value (`slope_test`); None where there was no test
    # Bootstrap PSEs (ok fits), for differences between fits; not part of the row.
    draws: np.ndarray | None = field(default=None, repr=False, compare=False)


def wilson_arrays(k: np.ndarray, n: np.ndarray, z: float = 1.959963984540054) -> tuple[np.ndarray, np.ndarray]:
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)


def fit_levels(
    x: Any, n: Any, positives: Any, *, resamples: int = RESAMPLES, seed: int | Any = 0, curve_points: int = CURVE_POINTS
) -> Fit:
    """Fit P(positive) against x from per-level counts (repeated x values are pooled).
    `resamples=0` skips the bootstrap (intervals None; the PSE itself must then lie within the
    levels). `seed`: anything numpy's default_rng takes."""
    x, n, k = _levels(x, n, positives)
    levels = tuple(Level(float(a), int(b), int(c), float(c / b), float(lo), float(hi))
                   for a, b, c, lo, hi in zip(x, n, k, *wilson_arrays(k, n), strict=True))  # fmt: skip
    total = int(n.sum())
    empty = dict.fromkeys(("pse", "pse_low", "pse_high", "slope", "slope_low", "slope_high", "width",
                           "width_low", "width_high"))  # fmt: skip
    grid = np.linspace(x[0], x[-1], curve_points) if len(x) else np.empty(0)

    def result(
        status: FitStatus, curve: np.ndarray | None = None, draws: np.ndarray | None = None, **values: Any
    ) -> Fit:
        curve_x = tuple(grid.tolist()) if curve is not None else ()
        curve_p = tuple(curve.tolist()) if curve is not None else ()
        return Fit(status, **(empty | values), n=total, levels=levels, curve_x=curve_x, curve_p=curve_p, draws=draws)

    if len(x) < 2:
        return result(FitStatus.TOO_FEW_LEVELS)
    if k.sum() in (0, total):
        status = FitStatus.ALL_POSITIVE if k.sum() else FitStatus.ALL_NEGATIVE
        return result(status, np.full(len(grid), 1.0 if k.sum() else 0.0))
    kind, low, high = _separation(x, n, k[None, :])
    null = _null_loglik(n, k)
    if kind[0]:  # a perfect step fits every reply: the likelihood's supremum is 1 (log 0)
        p_slope = slope_test(-2 * null)
        if p_slope > LEVEL:
            return result(FitStatus.FLAT, np.full(len(grid), k.sum() / total), p_slope=p_slope)
        pse, low, high = float(low[0] + high[0]) / 2, float(low[0]), float(high[0])
        step = np.where(grid < pse, 0.0, 1.0) if kind[0] > 0 else np.where(grid < pse, 1.0, 0.0)
        return result(FitStatus.SEPARATED, np.where(grid == pse, 0.5, step), pse=pse, pse_low=low, pse_high=high,
                      p_slope=p_slope)  # fmt: skip
    centre, scale = float(np.average(x, weights=n)), float(np.ptp(x))
    u = (x - centre) / scale
    start = np.log(k.sum() / (total - k.sum()))
    (a,), (b,), (ll,) = _newton(u, n, k[None, :], np.array([start]), np.array([0.0]))
    p_slope = slope_test(2 * (ll - null))
    if p_slope > LEVEL:
        return result(FitStatus.FLAT, np.full(len(grid), k.sum() / total), p_slope=p_slope)
    pse, slope = float(centre - a * scale / b), float(scale / b)
    curve = _sigmoid((grid - pse) / slope)
    found = {"pse": pse, "slope": slope, "width": WIDTH_PER_SLOPE * abs(slope), "p_slope": p_slope}
    if resamples <= 0:
        status, found = placed(found, x[0], x[-1])
        return result(status, curve, **found)
    rng = np.random.default_rng(seed)
    # Drawn level by level (each level's draws in a run: numpy sets its binomial sampler up once
    # per run of the same n and p, not once per draw), then laid out a resample to a row.
    fitted = _sigmoid(a + b * u)
    drawn = rng.binomial(n.astype(np.int64)[:, None], fitted[:, None], size=(len(x), resamples)).T.astype(float)
    pses, slopes = _refit(x, u, n, drawn, a, b, centre, scale)
    found |= intervals(pses, slopes)
    status, found = placed(found, x[0], x[-1])
    return result(status, curve, draws=pses if status is FitStatus.OK else None, **found)


def slope_test(drop: float, residual_df: int | None = None, dispersion: float = 1.0) -> float:
    """The p-value of every fit's test of its slope against zero: the (quasi-)likelihood-ratio
    test, `drop` being twice the log-likelihood gained over the flat fit (b = 0).

    Choices (`residual_df` None): binomial replies, whose dispersion is 1 by definition, so
    `drop` is referred to chi-squared with one degree of freedom. Probabilities: a graded
    response's spread is not the binomial's (an item's probability of 0.7 is not a coin that
    comes up 0 or 1), so the dispersion is estimated (Pearson's X^2 over the residual degrees of
    freedom) and `drop / dispersion` is referred to F(1, residual_df), the quasi-likelihood F test
    of McCullagh and Nelder (1989, section 9.3), R's `anova(glm(family = quasibinomial), test =
    "F")`. Chosen over a Wald test (its standard error leans on the variance model at the fitted
    slope; a robust sandwich estimate is unsteady with 20 items) and a permutation test (exact,
    but random: a fit near the line could say flat in one run and not in the next) because it
    holds its level where it matters, deterministically: under the null hypothesis the
    responses do not depend on x, so their mean and spread are constant and the Bernoulli
    variance function, scaled by the estimated dispersion, holds whatever the responses'
    distribution (0.7 or 0.3 by the option's place, uniform noise, mostly sure); the F
    reference rather than chi-squared pays for estimating the dispersion from few items.
    tests/probes/analysis/test_flat_fits.py checks it against statsmodels, and its level by
    simulation."""
    drop = max(float(drop), 0.0)
    if residual_df is None:
        return math.erfc(math.sqrt(drop / 2))  # chi-squared(1)'s upper tail
    if dispersion <= 0:  # the fit runs through every response: no spread to test against
        return 0.0 if drop > 0 else 1.0
    return _beta_regularized(residual_df / 2, 0.5, residual_df / (residual_df + drop / dispersion))


def intervals(pses: np.ndarray, slopes: np.ndarray) -> dict[str, float | None]:
    """The percentile intervals of a fit's bootstrap PSEs and slopes, and of the width."""
    found: dict[str, float | None] = {}
    found["pse_low"], found["pse_high"] = _percentile_interval(pses)
    found["slope_low"], found["slope_high"] = _percentile_interval(slopes)
    found["width_low"], found["width_high"] = _percentile_interval(WIDTH_PER_SLOPE * np.abs(slopes))
    return found


def pinned(low: float | None, high: float | None, lowest: float, highest: float) -> bool:
    """Whether a PSE interval lies within the levels swept [lowest, highest]: beyond them the
    data bound the PSE on one side only, however narrow the bootstrap makes the interval look."""
    return low is not None and high is not None and lowest <= low and high <= highest


def placed(found: dict[str, Any], lowest: float, highest: float) -> tuple[FitStatus, dict[str, Any]]:
    """`ok` with the PSE, or `outside the sweep` with it withheld (the slope kept): the PSE's
    interval (the point itself when there was no bootstrap) must lie within [lowest, highest]."""
    low, high = (found["pse_low"], found["pse_high"]) if "pse_low" in found else (found["pse"], found["pse"])
    if pinned(low, high, lowest, highest):
        return FitStatus.OK, found
    return FitStatus.OUTSIDE, found | {"pse": None, "pse_low": None, "pse_high": None}


def _beta_regularized(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) by its continued fraction (Numerical
    Recipes 6.4): F(1, m)'s upper tail at f is I_{m / (m + f)}(m / 2, 1 / 2). Here rather than
    scipy, which the analysis does not load."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):  # fmt: skip
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _levels(x: Any, n: Any, positives: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, n, k = (np.asarray(v, dtype=float).ravel() for v in (x, n, positives))
    if not (len(x) == len(n) == len(k)):
        raise ValueError(f"x, n and positives differ in length ({len(x)}, {len(n)}, {len(k)})")
    if not np.all(np.isfinite(x)):
        raise ValueError("every x must be a finite number")
    if np.any(n < 0) or np.any(k < 0) or np.any(k > n) or np.any(n != np.round(n)) or np.any(k != np.round(k)):
        raise ValueError("n and positives must be whole counts with 0 <= positives <= n")
    keep = n > 0
    values, index = np.unique(x[keep], return_inverse=True)
    return values, np.bincount(index, n[keep], len(values)), np.bincount(index, k[keep], len(values))


def _sigmoid(z: np.ndarray | float) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z)))  # overflow-free logistic


def _null_loglik(n: np.ndarray, k: np.ndarray) -> float:
    p = k.sum() / n.sum()
    return float(k.sum() * np.log(p) + (n.sum() - k.sum()) * np.log1p(-p)) if 0 < p < 1 else 0.0


def _separation(x: np.ndarray, n: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of k (x sorted ascending): +1 for a rising step, -1 for a falling one, 0 when the
    replies overlap (a finite maximum exists); with the step's bracket [low, high]. Rows with no
    positive or no negative reply come out as steps too; callers test for them first."""
    has_negative, has_positive = k < n, k > 0
    inf = np.inf
    max_neg = np.where(has_negative, x, -inf).max(axis=1)
    min_neg = np.where(has_negative, x, inf).min(axis=1)
    max_pos = np.where(has_positive, x, -inf).max(axis=1)
    min_pos = np.where(has_positive, x, inf).min(axis=1)
    rising, falling = max_neg <= min_pos, max_pos <= min_neg
    kind = np.where(rising, 1, np.where(falling, -1, 0))
    return kind, np.where(rising, max_neg, max_pos), np.where(rising, min_pos, min_neg)


def _probability(eta: np.ndarray) -> np.ndarray:
    """P at logits `eta`: 1 / (1 + exp(-eta)), in place in one array. exp overflows to inf below
    eta = -709, where P is then 0 to the last place anyway. A third of the time of the form that
    avoids the overflow (P = 1 / (1 + e) or e / (1 + e) by eta's sign, e = exp(-|eta|): 0.6 ms
    against 0.2 ms for a bootstrap's 1,000 x 16 logits), which was most of a choice fit's time."""
    p = np.negative(eta)
    with np.errstate(over="ignore", under="ignore"):
        np.exp(p, out=p)
        p += 1.0
        return np.reciprocal(p, out=p)


def _loglik(eta: np.ndarray, n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Each row's log-likelihood at logits `eta`: log(1 + exp(eta)) = max(eta, 0) + log(1 + e),
    e = exp(-|eta|), exact to the last place in absolute terms, which is what a sum needs."""
    e = np.exp(-np.abs(eta))
    return (k * eta - n * (np.maximum(eta, 0.0) + np.log(1.0 + e))) @ np.ones(eta.shape[1])


def _newton(
    u: np.ndarray,
    n: np.ndarray,
    k: np.ndarray,
    a0: np.ndarray,
    b0: np.ndarray,
    iterations: int = 100,
    likelihood: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Maximum likelihood (a, b) of logit P = a + b u for every row of k at once; the rows must
    not be separated (then the log-likelihood is strictly concave and has a finite maximum).
    `n` is one row for all, or a row each.

    A Newton step is taken whole unless the likelihood would fall (then halved until it does
    not). By concavity, L(candidate) - L(here) >= t s . g(candidate) for a step t s, and the
    candidate's gradient g is needed for the next step anyway (it is kept for it): where that
    bound is not negative the candidate is taken without working the likelihood out (its
    logarithms are most of a step's cost); only the other rows compare likelihoods. A row stops
    once its step is below 1e-12 of its parameters (or a whole step below 1e-8); the rest go on.
    The maximum log-likelihoods are returned when `likelihood` (else None: a bootstrap has no use
    for them)."""
    theta = np.stack([a0, b0], axis=1).astype(float)
    shared = n.ndim == 1 or n.shape[0] == 1
    rows = np.arange(len(theta))
    powers = np.stack([np.ones_like(u), u, u * u], axis=1)  # sums over levels as products (BLAS), not .sum
    eta = theta[:, :1] + theta[:, 1:] * u
    p = _probability(eta)
    gradient = (k - n * p) @ powers[:, :2]
    # A fall this small is rounding: |log-likelihood| is of the order of the replies (or items).
    tolerance = 1e-12 * (1 + np.broadcast_to(n, k.shape) @ np.ones(k.shape[1]))
    ll = np.full(len(theta), np.nan)  # worked out only where a comparison needs it
    for _ in range(iterations):
        nn, kk, th = (n if shared else n[rows]), k[rows], theta[rows]
        (g0, g1), (h00, h01, h11) = gradient.T, ((nn * p * (1 - p)) @ powers).T
        det = np.maximum(h00 * h11 - h01 * h01, 1e-300)
        step = np.stack([(h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det], axis=1)
        t = np.ones(len(rows))
        for _ in range(50):  # halve the step where it would lower the likelihood
            candidate = th + t[:, None] * step
            new_eta = candidate[:, :1] + candidate[:, 1:] * u
            new_p = _probability(new_eta)
            new_gradient = (kk - nn * new_p) @ powers[:, :2]
            worse = t * (new_gradient * step).sum(axis=1) < -tolerance[rows]
            if worse.any():
                doubt = np.flatnonzero(worse)
                here = ll[rows[doubt]]
                unknown = np.isnan(here)
                if unknown.any():
                    at = doubt[unknown]
                    here[unknown] = ll[rows[at]] = _loglik(eta[at], nn if shared else nn[at], kk[at])
                there = _loglik(new_eta[doubt], nn if shared else nn[doubt], kk[doubt])
                worse[doubt] = ~(there >= here - tolerance[rows[doubt]])
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
        if worse.any():  # those rows stay where they are
            kept = ~worse
            th[kept], eta[kept], p[kept] = candidate[kept], new_eta[kept], new_p[kept]
            gradient[kept] = new_gradient[kept]
            ll[rows[kept]] = np.nan  # moved: to be worked out again if a comparison needs it
        else:
            th, eta, p, gradient = candidate, new_eta, new_p, new_gradient
            ll[rows] = np.nan
        theta[rows] = th
        size, scale = np.abs(t[:, None] * step).max(axis=1), 1 + np.abs(th).min(axis=1)
        # Done: a step below 1e-12, or a whole Newton step below 1e-8 (quadratic convergence leaves
        # an error of the order of its square, below what a double holds; a halved step is no sign).
        going = (size > 1e-12 * scale) & ((t < 1) | (size > 1e-8 * scale))
        if not going.any():
            break
        if not going.all():
            rows, eta, p, gradient = rows[going], eta[going], p[going], gradient[going]
    if not likelihood:
        return theta[:, 0], theta[:, 1], None
    return theta[:, 0], theta[:, 1], _loglik(theta[:, :1] + theta[:, 1:] * u, n, k)


def _refit(
    x: np.ndarray, u: np.ndarray, n: np.ndarray, drawn: np.ndarray, a: float, b: float, centre: float, scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """PSE and slope of each bootstrap resample (see the module's note on degenerate ones)."""
    rows = len(drawn)
    pses, slopes = np.empty(rows), np.empty(rows)
    total = drawn.sum(axis=1)
    constant = (total == 0) | (total == n.sum())
    kind, low, high = _separation(x, n, drawn)
    rising = b > 0
    # All-negative resample of a rising curve: the PSE is beyond the highest level, and so on.
    pses[constant] = np.where((total[constant] == 0) == rising, np.inf, -np.inf)
    slopes[constant] = np.inf if rising else -np.inf
    step = (kind != 0) & ~constant
    pses[step], slopes[step] = (low[step] + high[step]) / 2, 0.0
    fit = ~constant & (kind == 0)
    if fit.any():
        # Every resample's first Newton step from the fit (a, b) shares its weights, so it is one
        # product, without a logarithm or exponential; the search goes on from there.
        p = _sigmoid(a + b * u)
        basis = np.stack([np.ones_like(u), u], axis=1)
        hessian = basis.T @ (basis * (n * p * (1 - p))[:, None])
        start = np.array([a, b]) + np.linalg.solve(hessian, ((drawn[fit] - n * p) @ basis).T).T
        fa, fb, _ = _newton(u, n, drawn[fit], start[:, 0], start[:, 1], likelihood=False)
        pses[fit], slopes[fit] = centre - fa * scale / fb, scale / fb
    return pses, slopes


def _percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float | None, float | None]:
    """Nearest-rank percentile interval; a bound that is not a finite number is None (unbounded)."""
    ordered = np.sort(values)
    tail = (1 - level) / 2
    low = ordered[int(math.floor(tail * len(ordered)))]
    high = ordered[int(math.ceil((1 - tail) * len(ordered))) - 1]
    return (float(low) if np.isfinite(low) else None), (float(high) if np.isfinite(high) else None)


def combine(first: Fit, second: Fit, factor: float = 1.0, sign: int = -1) -> tuple[float | None, ...]:
    """factor * (first.pse + sign * second.pse) with a 95% interval: (value, low, high). The
    interval is the percentile interval of the bootstrap combinations when both fits are ok; when
    one or both are steps, the range spanned by the ends of each fit's interval (a step's is its
    bracket), which is conservative. All None where either fit has no PSE."""
    if first.pse is None or second.pse is None:
        return None, None, None
    value = factor * (first.pse + sign * second.pse)
    if first.draws is not None and second.draws is not None:
        count = min(len(first.draws), len(second.draws))
        return (value, *_percentile_interval(factor * (first.draws[:count] + sign * second.draws[:count])))
    ends = (first.pse_low, first.pse_high, second.pse_low, second.pse_high)
    if any(end is None for end in ends):
        return value, None, None
    corners = [factor * (a + sign * b) for a in ends[:2] for b in ends[2:]]
    return value, min(corners), max(corners)

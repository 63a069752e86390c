"""Psychometric fits from answer probabilities: each item's probability of the answer a positive
parameter favours is a graded response (0 to 1, not a choice), fitted by a fractional-response
logistic regression (Papke and Wooldridge 1996: the Bernoulli quasi-likelihood, maximised by the
same Newton steps as `probes.analysis.logistic`), with percentile bootstrap intervals over items
(items drawn with replacement, refitted). A graded response carries how close the call was, so
far fewer items pin the PSE than choices do (bench/psychometric.py measures how many).

"No PSE" means what it means for choices (`probes.analysis.logistic`): `flat` when the slope does
not differ from zero at the 5% level, here by the quasi-likelihood F test with the dispersion
estimated (`logistic.slope_test` says why that test), and `outside the sweep` when the PSE's
bootstrap interval reaches beyond the levels swept. A model whose probabilities ignore the
picture (always 0.7 on the first option) gets neither a PSE nor a slope from its noise.

Which probability: the item's `positive_answer` param names the answer (as the choice-based
fit reads it, probes/analysis/psychometric.py); else, for yes/no, "yes". Results without
probabilities (or without that answer among them) make no graded point; the rows say `source`
= `probabilities` beside the choice-based rows' `choices`.
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from probes.analysis.logistic import (
    CURVE_POINTS,
    LEVEL,
    RESAMPLES,
    WIDTH_PER_SLOPE,
    Fit,
    FitStatus,
    Level,
    _newton,
    _sigmoid,
    intervals,
    placed,
    slope_test,
)
from probes.analysis.psychometric import FitRow, as_row, number
from probes.core.types import POSITIVE_ANSWER, Result, Status
from probes.stimuli.lazy_numpy import np

EDGE = 1e-4  # graded responses are kept inside (EDGE, 1 - EDGE): a certain 0 or 1 would let a step run to infinity


def positive_probability(result: Result) -> float | None:
    """The probability the result gives the answer a positive parameter favours, or None."""
    if not result.probabilities:
        return None
    params = result.item_ref.params if result.item_ref is not None else {}
    key = params.get(POSITIVE_ANSWER)
    name = str(key).strip().casefold() if key is not None else "yes"
    value = result.probabilities.get(name)
    return None if value is None else float(value)


def graded_fit(x: Any, y: Any, *, resamples: int = RESAMPLES, seed: Any = 0, curve_points: int = CURVE_POINTS) -> Fit:
    """Fit P(positive) = sigmoid((x - pse) / slope) to graded responses `y` at `x` (one per item)."""
    x, y = np.asarray(x, dtype=float).ravel(), np.clip(np.asarray(y, dtype=float).ravel(), EDGE, 1 - EDGE)
    # The bootstrap draws items by position: in one order, the same items give the same interval
    # however they were read (the run's closing line and `report --fit` read them differently).
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    values, index = np.unique(x, return_inverse=True)
    counts = np.bincount(index, minlength=len(values))
    sums = np.bincount(index, y, minlength=len(values))
    levels = tuple(Level(float(v), int(c), float(s), float(s / c), float(s / c), float(s / c))
                   for v, c, s in zip(values, counts, sums, strict=True))  # fmt: skip
    empty = dict.fromkeys(("pse", "pse_low", "pse_high", "slope", "slope_low", "slope_high", "width",
                           "width_low", "width_high"))  # fmt: skip
    if len(values) < 2:
        return Fit(FitStatus.TOO_FEW_LEVELS, **empty, n=len(x), levels=levels, curve_x=(), curve_p=())
    centre, scale = float(x.mean()), float(np.ptp(x))
    u = (x - centre) / scale
    start = float(np.log(y.mean() / (1 - y.mean())))
    (a,), (b,), (ll,) = _newton(u, np.ones((1, len(x))), y[None, :], np.array([start]), np.array([0.0]))
    grid = np.linspace(values[0], values[-1], curve_points)
    p_slope = _slope_p(u, y, a, b, ll, start)
    if p_slope is None or p_slope > LEVEL:
        flat = tuple(np.full(len(grid), y.mean()).tolist())
        return Fit(FitStatus.FLAT, **empty, n=len(x), levels=levels, curve_x=tuple(grid.tolist()), curve_p=flat,
                   p_slope=p_slope)  # fmt: skip
    pse, slope = centre - a * scale / b, scale / b
    found = {"pse": pse, "slope": slope, "width": WIDTH_PER_SLOPE * abs(slope)}
    draws = None
    if resamples > 0:
        pooled, hits = _resampled_levels(np.random.default_rng(seed), y, counts, resamples)
        levels_u = (values - centre) / scale
        fa, fb, _ = _newton(levels_u, pooled, hits, np.full(resamples, a), np.full(resamples, b), likelihood=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            draws, slopes = centre - fa * scale / fb, scale / fb
        draws = np.where(np.isfinite(draws), draws, np.inf)
        found |= intervals(draws, slopes)
    status, found = placed(found, float(values[0]), float(values[-1]))
    curve = tuple(_sigmoid((grid - pse) / slope).tolist())
    return Fit(status, **(empty | found), n=len(x), levels=levels, curve_x=tuple(grid.tolist()), curve_p=curve,
               p_slope=p_slope, draws=draws if status is FitStatus.OK else None)  # fmt: skip


def _resampled_levels(
    rng: np.random.Generator, y: np.ndarray, counts: np.ndarray, resamples: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per bootstrap resample (len(y) items drawn with replacement) and level: how many items
    were drawn there, and the sum of their responses. Each resample's likelihood pooled per level
    (the items are in x's order, so each level's are adjacent): sum_i w_i (y_i eta - log(1 +
    e^eta)) = S_l eta - W_l log(1 + e^eta) at each level's eta, the same maximum as item by item,
    to float rounding, in a fraction of the time (a resample is then a few levels, not every item).

    Drawn level by level, which is the same bootstrap: the number drawn at each level is
    multinomial over the levels by their share of the items, and the items drawn at a level are
    uniform among its own. One multinomial over every item (1,000 resamples of 1,500 items) took
    0.1 s of the fit's 0.115 s; this takes about 10 ms (bench/report_fits.py), most of it the one
    uniform draw per item drawn."""
    items = len(y)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    pooled = rng.multinomial(items, counts / items, size=resamples)  # (resamples, levels)
    hits = np.zeros(pooled.shape)
    for level, (start, count) in enumerate(zip(starts.tolist(), counts.tolist(), strict=True)):
        drawn_here = pooled[:, level]  # per resample, in resample order
        # Positions within the level, in the narrowest type that holds them (a third of the time).
        narrow = np.uint16 if count <= 1 << 16 else np.int64
        values = y[start : start + count][rng.integers(0, count, size=int(drawn_here.sum()), dtype=narrow)]
        some = drawn_here > 0  # the resamples that drew here at all: their draws are adjacent
        if some.any():
            hits[some, level] = np.add.reduceat(values, (np.cumsum(drawn_here) - drawn_here)[some])
    return pooled.astype(float), hits


def _slope_p(u: np.ndarray, y: np.ndarray, a: float, b: float, ll: float, a0: float) -> float | None:
    """The quasi-likelihood F test of b = 0 (`logistic.slope_test`, which says why this test),
    the dispersion estimated from the fit's Pearson residuals; None with no residual degree of
    freedom (two items: any two points lie on a curve, nothing is left to test it by)."""
    residual_df = len(y) - 2
    if residual_df < 1:
        return None
    null = float(y.sum() * a0 - len(y) * np.logaddexp(0.0, a0))  # the flat fit: every P at the mean response
    drop = 2 * (ll - null)
    # Responses that do not vary at all gain nothing but rounding: that is no evidence of a slope.
    drop = drop if drop > 1e-10 * (1 + abs(null)) else 0.0
    fitted = _sigmoid(a + b * u)
    dispersion = float(((y - fitted) ** 2 / (fitted * (1 - fitted))).sum()) / residual_df
    return slope_test(drop, residual_df, dispersion)


def graded_fit_rows(
    results: Iterable[Result], param: str, by: Sequence[str] = (), *, resamples: int = RESAMPLES, seed: int = 0
) -> list[FitRow]:
    """As `psychometric.fit_rows`, from the results' probabilities (`source` "probabilities")."""
    points: dict[tuple[str, ...], list[tuple[float, float]]] = defaultdict(list)
    for result in results:
        x = number((result.item_ref.params if result.item_ref else {}).get(param))
        y = positive_probability(result) if result.status is not Status.ERROR else None
        if x is None or y is None:
            continue
        head = (result.benchmark, result.model, result.mode, result.perturbation)
        for group in ["overall"] + [f"{n}={result.groups[n]}" for n in by if n in result.groups]:
            points[(*head, group)].append((x, y))
    rows = []
    for key, pairs in points.items():
        stream = [seed, zlib.crc32("\x1f".join((*key, param, "probabilities")).encode("utf-8"))]
        fit = graded_fit([p[0] for p in pairs], [p[1] for p in pairs], resamples=resamples, seed=stream)
        rows.append(as_row(key[:4], key[4], param, fit, source="probabilities"))
    return rows

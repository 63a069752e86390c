"""Psychometric fits (issue 13, SPEC section 5): simulated observers with known PSE and slope are
recovered within their bootstrap intervals, the intervals cover at about their nominal rate, the
fit agrees with statsmodels' binomial GLM, degenerate observers (a step, a guesser) are named as
such, and the illusion magnitude from stored results has the right sign with a side bias
cancelled."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import statsmodels.api as sm

from probes.analysis.logistic import WIDTH_PER_SLOPE, fit_levels
from probes.analysis.psychometric import FIT_COLUMNS, MAGNITUDE_COLUMNS, fit_rows, magnitude_rows, polarity
from probes.core.types import ItemRef, Result, Status
from tests.conftest import run_python

TRIALS = 20
# (pse, slope) of simulated observers: PSEs as the brief lists them, slopes 0.02 to 0.1.
OBSERVERS = [(-0.1, 0.03), (0.0, 0.1), (0.08, 0.05), (0.2, 0.02)]


def logistic(x, pse, slope):
    return 0.5 * (1 + np.tanh((np.asarray(x) - pse) / (2 * slope)))


def design(pse: float, slope: float) -> np.ndarray:
    """9 levels over about +/- 4 slopes, deliberately not centred on the true PSE."""
    return np.round(pse + 0.3 * slope + slope * np.linspace(-4, 4, 9), 6)


def simulate(pse, slope, x, seed, trials=TRIALS):
    rng = np.random.default_rng(seed)
    return rng.binomial(trials, logistic(x, pse, slope))


def glm(x, n, k):
    model = sm.GLM(np.column_stack([k, n - k]), sm.add_constant(np.asarray(x, float)), family=sm.families.Binomial())
    a, b = model.fit().params
    return -a / b, 1 / b


def test_recovers_each_observer_within_its_intervals_at_about_the_nominal_rate():
    """50 seeded experiments per observer. A 95% interval misses one time in twenty, so the test
    asks for the rate: each observer's PSE and slope inside their intervals in at least 80% of
    its experiments, at least 85% over all of them, and the estimates centred on the truth."""
    covered: dict[str, list[bool]] = {"pse": [], "slope": []}
    for observer, (pse, slope) in enumerate(OBSERVERS):
        x = design(pse, slope)
        fits = [fit_levels(x, np.full(9, TRIALS), simulate(pse, slope, x, seed=[2, run, observer]), seed=run)
                for run in range(50)]  # fmt: skip
        ok = [fit for fit in fits if fit.status == "ok"]
        # A sharp observer sometimes gives a step; it has no slope to cover, only a bracket.
        assert all(
            fit.status == "separated" and fit.pse_low <= fit.pse <= fit.pse_high for fit in fits if fit not in ok
        )
        assert len(ok) >= 45, (pse, slope, len(ok))
        pse_hits = [_within(pse, fit.pse_low, fit.pse_high) for fit in ok]
        slope_hits = [_within(slope, fit.slope_low, fit.slope_high) for fit in ok]
        assert np.mean(pse_hits) >= 0.8 and np.mean(slope_hits) >= 0.8, (pse, slope)
        assert abs(np.median([fit.pse for fit in ok]) - pse) < 0.25 * slope
        assert abs(np.median([fit.slope for fit in ok]) - slope) < 0.25 * slope
        covered["pse"] += pse_hits
        covered["slope"] += slope_hits
    for name, hits in covered.items():
        assert np.mean(hits) >= 0.85, (name, np.mean(hits))


def _within(value, low, high):
    return (low is None or low <= value) and (high is None or value <= high)


def test_spec_observer_matches_statsmodels_and_its_curve_crosses_where_it_says():
    # SPEC section 5's check: PSE 0.08, slope 0.05, 9 levels x 20 trials.
    x = np.linspace(-0.2, 0.2, 9)
    k = simulate(0.08, 0.05, x, seed=3)
    fit = fit_levels(x, np.full(9, TRIALS), k)
    pse, slope = glm(x, np.full(9, TRIALS), k)
    assert fit.status == "ok"
    assert fit.pse == pytest.approx(pse, abs=1e-4) and fit.slope == pytest.approx(slope, abs=1e-4)
    assert fit.pse_low <= 0.08 <= fit.pse_high and fit.slope_low <= 0.05 <= fit.slope_high
    # The chart's curve: 50% at the PSE, 25% and 75% half a width either side.
    assert np.interp(fit.pse, fit.curve_x, fit.curve_p) == pytest.approx(0.5, abs=2e-3)
    assert fit.width == pytest.approx(WIDTH_PER_SLOPE * fit.slope)
    assert np.interp(fit.pse + fit.width / 2, fit.curve_x, fit.curve_p) == pytest.approx(0.75, abs=5e-3)
    assert np.interp(fit.pse - fit.width / 2, fit.curve_x, fit.curve_p) == pytest.approx(0.25, abs=5e-3)


@pytest.mark.parametrize(("pse", "slope"), OBSERVERS)
def test_agrees_with_statsmodels_on_every_observer(pse, slope):
    x = design(pse, slope)
    n = np.array([TRIALS, 7, 30, TRIALS, 12, TRIALS, 25, 3, TRIALS])  # unequal counts per level
    k = np.random.default_rng(4).binomial(n, logistic(x, pse, slope))
    fit = fit_levels(x, n, k, resamples=0)
    if fit.status == "ok":
        reference = glm(x, n, k)
        assert (fit.pse, fit.slope) == pytest.approx(reference, abs=1e-4)
    else:  # no finite maximum: the GLM itself diverges here
        assert fit.status == "separated"


def test_falling_curves_fit_with_a_negative_slope():
    # P(yes, "the circles touch") falls as the gap widens.
    x = np.linspace(-0.1, 0.3, 9)
    k = simulate(0.1, -0.05, x, seed=5)
    fit = fit_levels(x, np.full(9, TRIALS), k)
    assert fit.status == "ok" and fit.slope < 0 and fit.width > 0
    assert (fit.pse, fit.slope) == pytest.approx(glm(x, np.full(9, TRIALS), k), abs=1e-4)
    assert fit.pse_low <= 0.1 <= fit.pse_high and fit.slope_low <= -0.05 <= fit.slope_high


def test_a_geometry_only_observer_is_a_step_bracketing_zero():
    x = np.linspace(-0.2, 0.2, 9)
    n = np.full(9, TRIALS)
    with_tie = fit_levels(x, n, np.where(x > 0, TRIALS, np.where(x < 0, 0, 9)))  # a coin at d = 0
    assert with_tie.status == "separated" and with_tie.slope is None
    assert with_tie.pse_low == with_tie.pse == with_tie.pse_high == 0.0
    no_zero = fit_levels(x[x != 0], n[:8], np.where(x[x != 0] > 0, TRIALS, 0))
    assert no_zero.status == "separated"
    assert no_zero.pse_low == pytest.approx(-0.05) and no_zero.pse_high == pytest.approx(0.05) and no_zero.pse == 0.0
    assert set(no_zero.curve_p) <= {0.0, 0.5, 1.0}  # the chart draws a step


def test_a_guesser_is_flat_and_gets_no_pse():
    x = np.linspace(-0.2, 0.2, 9)
    fits = [fit_levels(x, np.full(9, TRIALS), simulate(0, 1e9, x, seed=[6, run])) for run in range(20)]
    flat = [fit for fit in fits if fit.status == "flat"]
    assert len(flat) >= 17  # the likelihood-ratio test's 5% false alarms allow a few
    assert all(fit.pse is None and fit.slope is None and fit.pse_low is None for fit in flat)
    assert all(len(set(fit.curve_p)) == 1 for fit in flat)


def test_degenerate_designs_are_named():
    assert fit_levels([0.1, 0.1], [10, 10], [3, 6]).status == "too few levels"  # one level, pooled
    assert fit_levels([0.0, 0.1, 0.2], [5, 5, 5], [5, 5, 5]).status == "all positive"
    assert fit_levels([0.0, 0.1, 0.2], [5, 5, 5], [0, 0, 0]).status == "all negative"
    assert fit_levels([], [], []).n == 0
    with pytest.raises(ValueError, match="length"):
        fit_levels([0.0, 0.1], [5], [1])
    with pytest.raises(ValueError, match="positives <= n"):
        fit_levels([0.0, 0.1], [5, 5], [6, 1])


def test_the_same_seed_gives_the_same_interval():
    x = np.linspace(-0.2, 0.2, 9)
    k = simulate(0.08, 0.05, x, seed=7)
    first, again, other = (fit_levels(x, np.full(9, TRIALS), k, seed=s) for s in (11, 11, 12))
    assert (first.pse_low, first.pse_high, first.slope_low) == (again.pse_low, again.pse_high, again.slope_low)
    assert first.pse == other.pse and first.pse_low != other.pse_low


# --- from stored results ---------------------------------------------------------------------


def result(params, parsed, status=Status.ANSWERED, model="m", groups=None, benchmark="illusion/mueller-lyer", n=0):
    item_id = f"{sorted(params.items())}#{n}"
    ref = ItemRef(benchmark, item_id, params=params)
    return Result(benchmark, item_id, model, "0-shot", "none", status, parsed=parsed, groups=groups or {}, item_ref=ref)


LEVELS = tuple(np.round(np.linspace(-0.3, 0.3, 13), 3))


def observer_results(rng, pse_of, slope=0.04, levels=LEVELS, strengths=(-30, 0, 30), explicit_polarity=False):
    """Two-alternative replies of an observer whose PSE depends on the inducers as drawn; option
    order alternates, so `positive_answer` (the option index of the target d > 0 favours) does too."""
    results = []
    for strength in strengths:
        for d in levels:
            drawn = 0 if strength == 0 else int(np.sign(strength) * (np.sign(d) or 1))
            for trial in range(TRIALS):
                params = {"difference": float(d), "illusion_strength": strength, "positive_answer": trial % 2}
                if explicit_polarity:
                    params["polarity"] = drawn
                chose_positive = rng.random() < logistic(d, pse_of(drawn), slope)
                parsed = params["positive_answer"] if chose_positive else 1 - params["positive_answer"]
                results.append(result(params, parsed, n=trial))
    return results


@pytest.mark.parametrize("direction", [+1, -1])
@pytest.mark.parametrize("explicit_polarity", [False, True])
def test_illusion_magnitude_has_the_observers_sign_and_cancels_a_side_bias(direction, explicit_polarity):
    # PSE +0.1 under one polarity, -0.1 under the other, plus a constant preference of +0.03.
    results = observer_results(np.random.default_rng(8), lambda side: direction * 0.1 * side + 0.03,
                               explicit_polarity=explicit_polarity)  # fmt: skip
    [row] = magnitude_rows(results, "difference")
    assert row.status == "ok"
    assert row.magnitude_low <= direction * 0.1 <= row.magnitude_high
    assert math.copysign(1, row.magnitude) == direction and abs(row.magnitude - direction * 0.1) < 0.02
    assert row.bias_low <= 0.03 <= row.bias_high  # the side bias, reported apart
    assert row.shift_plus_low <= direction * 0.1 <= row.shift_plus_high
    assert row.shift_minus_low <= -direction * 0.1 <= row.shift_minus_high
    assert set(row.fits) == {"+1", "-1", "0"} and row.fits["0"].group == "polarity=0"
    # Without a `polarity` param, d = 0 under inducers cannot be told apart: left out, counted.
    assert row.ambiguous == (0 if explicit_polarity else 2 * TRIALS)
    assert json.loads(json.dumps(row.as_dict(), allow_nan=False))["fits"]["+1"]["pse"] == row.fits["+1"].pse


def test_a_geometry_only_observer_has_no_illusion():
    results = observer_results(np.random.default_rng(9), lambda side: 0.0, slope=1e-6, explicit_polarity=True)
    [row] = magnitude_rows(results, "difference")
    assert row.status == "bracketed" and row.fits["+1"].status == "separated"
    assert row.magnitude_low <= 0 <= row.magnitude_high and row.magnitude == 0


def test_pyllusion_polarity_follows_the_inducers_as_drawn():
    assert polarity({"difference": 0.1, "illusion_strength": 30}) == 1
    assert polarity({"difference": -0.1, "illusion_strength": -30}) == 1  # same fins on the top line
    assert polarity({"difference": -0.1, "illusion_strength": 30}) == -1
    assert polarity({"difference": 0.1, "illusion_strength": 0}) == 0
    assert polarity({"difference": 0.1, "illusion_strength": 30, "target_only": True}) == 0
    assert polarity({"difference": 0.0, "illusion_strength": 30}) is None
    assert polarity({"difference": 0.0, "illusion_strength": 30, "polarity": "-1"}) == -1


def test_fit_rows_from_results_count_what_they_leave_out():
    rng = np.random.default_rng(10)
    results = observer_results(rng, lambda side: 0.05, strengths=(0,))
    results += [
        result({"difference": 0.1, "positive_answer": 0}, None, Status.UNPARSED),
        result({"difference": 0.1, "positive_answer": 0}, None, Status.REFUSED),
        result({"difference": -0.1, "positive_answer": 0}, None, Status.ERROR),
        result({"difference": 0.1}, 1),  # a choice with no positive_answer: no reading
        result({"size": 3}, 1),  # not in this sweep
        result({"difference": "wide"}, 1),  # no number
    ]
    [row] = fit_rows(results, "difference")
    assert (row.n, row.excluded, row.errors, row.unrated) == (13 * TRIALS, 2, 1, 1)
    assert row.status == "ok" and row.pse_low <= 0.05 <= row.pse_high and row.levels == 13
    level = next(p for p in row.points if p["x"] == 0.1)
    assert level["n"] == TRIALS and level["low"] <= level["proportion"] <= level["high"]
    assert row.pse == fit_levels(*_counts(row)).pse  # the row is the fit of its own points
    assert fit_rows(results, "absent") == []


def _counts(row):
    return [p["x"] for p in row.points], [p["n"] for p in row.points], [p["positives"] for p in row.points]


def test_fit_rows_group_like_the_scoreboard_and_take_x_from_params():
    yes_no = []
    for model, pse in (("a", 0.1), ("b", -0.1)):
        rng = np.random.default_rng(11)
        for gap in np.round(np.linspace(-0.3, 0.3, 9), 2):
            for trial in range(TRIALS):
                canvas = ("384", "768")[trial % 2]
                answer = "yes" if rng.random() < logistic(gap, pse, 0.06) else "no"
                # The group label is text ("+0.10"); x comes from the params' number.
                groups = {"gap": f"{gap:+.2f}", "canvas": canvas}
                yes_no.append(result({"gap": float(gap)}, answer, model=model, groups=groups,
                                     benchmark="blind/touching-circles", n=trial))  # fmt: skip
    rows = fit_rows(yes_no, "gap", by=("canvas",))
    assert [(r.model, r.group) for r in rows] == [(m, g) for m in "ab" for g in ("overall", "canvas=384", "canvas=768")]
    overall = {r.model: r for r in rows if r.group == "overall"}
    assert (
        overall["a"].pse_low <= 0.1 <= overall["a"].pse_high and overall["b"].pse_low <= -0.1 <= overall["b"].pse_high
    )
    assert {r.n for r in rows if r.group != "overall"} == {9 * TRIALS // 2}
    # A row's interval is its own: fitting one model alone gives the same numbers.
    [alone] = fit_rows([r for r in yes_no if r.model == "a"], "gap")
    assert alone == overall["a"]
    for row in rows:
        data = json.loads(json.dumps(row.as_dict(), allow_nan=False))
        assert set(FIT_COLUMNS) <= set(data) and len(data["curve"]["x"]) == len(data["curve"]["p"]) > 2
        assert all(not isinstance(data[c], list | dict) for c in FIT_COLUMNS)
    assert "magnitude" in MAGNITUDE_COLUMNS and "fits" not in MAGNITUDE_COLUMNS


def test_the_analysis_loads_neither_scipy_nor_statsmodels():
    code = "import sys, probes.analysis.psychometric; print(sorted({'scipy', 'statsmodels'} & set(sys.modules)))"
    assert run_python(code).strip() == "[]"

"""A fit with no PSE draws no PSE (issue 34): on the Scoreboard's Curves and on the class's curve,
a model whose answers ignore the picture gets its points and a flat line but no PSE diamond, from
its choices and from its probabilities alike, and a dash in the fits table; a fooled observer
beside it keeps both its diamonds. No browser: the figures as the pages are given them."""

from __future__ import annotations

import numpy as np

from probes.analysis.fits import fit_table
from probes.classroom.results import curve_fits
from tests.probes.analysis.test_flat_fits import ignoring, logistic, results_of
from ui.classroom.views import curve_figure
from ui.scoreboard.curves import _figure, _fit_table
from ui.scoreboard.style import Colours
from ui.scoreboard.tables import DASH

BLIND, FOOLED = "sim/blind", "sim/fooled"


def observers() -> list:
    x, y, chose = ignoring("first", (-0.2, 0.2), 120, seed=1)
    rng = np.random.default_rng(2)
    fooled_x = rng.choice(np.linspace(-0.2, 0.2, 9), 120)
    fooled_y = logistic(fooled_x + rng.normal(0, 0.02, 120), 0.06, 0.04)
    return results_of(x, y, chose, model=BLIND) + results_of(fooled_x, fooled_y, rng.random(120) < fooled_y, FOOLED)


def pse_markers(figure) -> dict[str, int]:
    """How many PSE diamonds each observer has (a diamond at 50% whose hover names the PSE)."""
    found: dict[str, int] = {}
    for trace in figure.data:
        if trace.mode == "markers" and list(trace.y) == [0.5] and "PSE" in (trace.hovertext or [""])[0]:
            who = BLIND if BLIND in trace.hovertext[0] else FOOLED
            found[who] = found.get(who, 0) + 1
    return found


def test_the_scoreboard_draws_no_pse_for_a_flat_fit_of_either_source():
    rows = fit_table(observers(), "difference")
    status = {(row.model, row.source): row.status for row in rows}
    assert status[(BLIND, "choices")] == status[(BLIND, "probabilities")] == "flat"
    assert status[(FOOLED, "choices")] == status[(FOOLED, "probabilities")] == "ok"
    figure = _figure(rows, "difference", Colours([BLIND, FOOLED]), 2)
    assert pse_markers(figure) == {FOOLED: 2}  # the fooled observer's two sources; nothing for the blind one
    blind_lines = [t for t in figure.data if t.mode == "lines" and BLIND in t.name]
    assert len(blind_lines) == 2 and all(len(set(t.y)) == 1 for t in blind_lines)  # flat, and still drawn
    table = _fit_table(rows, 2)
    blind = table[table.model == BLIND]
    assert list(blind["PSE"]) == [DASH, DASH] and list(blind["PSE 95% CI"]) == [DASH, DASH]
    assert list(blind["fit"]) == ["flat", "flat"]


def test_the_class_curve_draws_no_pse_for_a_model_that_ignores_the_picture():
    results = observers()
    students = [r for r in results if r.model == FOOLED]
    fits = {fit["who"]: fit for fit in curve_fits(students, [r for r in results if r.model == BLIND])}
    assert fits[BLIND]["status"] == "flat" and fits[BLIND]["pse"] is None
    assert fits["class"]["status"] == "ok" and fits["class"]["pse_low"] <= 0.06 <= fits["class"]["pse_high"]
    diamonds = [t for t in curve_figure(list(fits.values())).data if t.mode == "markers" and list(t.y) == [0.5]]
    assert [t.hovertext[0].split(":")[0] for t in diamonds] == ["class"]

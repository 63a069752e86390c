"""Illusion magnitude from answer probabilities: a simulated observer fooled by the inducers by a
known shift, answering with probabilities; the graded magnitude recovers the shift, is the graded
polarity fits' PSEs combined as the choice magnitude combines its fits, and pins it more tightly
than the same items' choices do."""

from __future__ import annotations

import numpy as np
import pytest

from probes.analysis.graded import graded_fit_rows
from probes.analysis.graded_magnitude import graded_magnitude_rows
from probes.analysis.psychometric import magnitude_rows
from probes.core.types import POSITIVE_ANSWER, ItemRef, Result, Status

SHIFT, SLOPE = 0.06, 0.04


def fooled(count: int, seed: int, probabilities: bool = True) -> list[Result]:
    """Items at differences in [-0.25, 0.25] under inducers +1, -1 and none (polarity), the
    observer's probability of the positive target a logistic of the difference moved by SHIFT
    against the inducers; its choice drawn from that probability."""
    rng = np.random.default_rng(seed)
    made = []
    for index in range(count):
        x, side, positive = float(rng.uniform(-0.25, 0.25)), (1, -1, 0)[index % 3], index % 2
        p = float(1 / (1 + np.exp(-(x - SHIFT * side) / SLOPE)))
        choice = positive if rng.random() < p else 1 - positive
        made.append(Result(
            "illusion/sim", f"i{index}", "sim/fooled", "0-shot", "none", Status.ANSWERED, reply="x", parsed=choice,
            correct=None, target=None,
            item_ref=ItemRef("illusion/sim", f"i{index}", params={"difference": x, "polarity": side,
                                                                  POSITIVE_ANSWER: positive}),
            probabilities={str(positive): p, str(1 - positive): 1 - p} if probabilities else None,
        ))  # fmt: skip
    return made


def test_the_graded_magnitude_recovers_the_shift_and_combines_the_polarity_fits():
    results = fooled(150, 1)
    [row] = graded_magnitude_rows(results, resamples=300)
    assert row.status == "ok" and row.magnitude == pytest.approx(SHIFT, abs=0.02)
    assert row.magnitude_low < row.magnitude < row.magnitude_high
    assert {fit.source for fit in row.fits.values()} == {"probabilities"} and set(row.fits) == {"+1", "-1", "0"}
    # The same graded fits `report --fit` makes, per polarity, combined as (pse(+1) - pse(-1)) / 2.
    pse = {}
    for side, name in ((1, "+1"), (-1, "-1")):
        members = [r for r in results if r.item_ref.params["polarity"] == side]
        [fitted] = graded_fit_rows(members, "difference", resamples=0)
        pse[name] = fitted.pse
        assert row.fits[name].pse == pytest.approx(fitted.pse, abs=1e-9)
    assert row.magnitude == pytest.approx((pse["+1"] - pse["-1"]) / 2, abs=1e-9)
    assert row.bias == pytest.approx((pse["+1"] + pse["-1"]) / 2, abs=1e-9)


def test_probabilities_pin_the_magnitude_more_tightly_than_choices_of_the_same_items():
    widths = {"choices": [], "probabilities": []}
    for seed in range(5):
        results = fooled(90, seed)
        [choices] = magnitude_rows(results, resamples=300)
        [graded] = graded_magnitude_rows(results, resamples=300)
        for source, row in (("choices", choices), ("probabilities", graded)):
            if row.magnitude_low is not None:
                widths[source].append(row.magnitude_high - row.magnitude_low)
    assert len(widths["probabilities"]) == 5
    assert np.median(widths["probabilities"]) < np.median(widths["choices"])


def test_results_without_probabilities_make_no_graded_row():
    assert graded_magnitude_rows(fooled(30, 2, probabilities=False)) == []

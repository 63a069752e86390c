"""Graded psychometric fits: a simulated observer with a known PSE answering with probabilities."""

from __future__ import annotations

import json

import numpy as np
import pytest

from probes.analysis.graded import graded_fit_rows
from probes.core.types import POSITIVE_ANSWER, ItemRef, Result, Status
from probes.running.store import Store
from tests.conftest import run_cli

PSE, SLOPE = 0.08, 0.05


def observer(count: int, seed: int) -> list[Result]:
    """Items at differences in [-0.2, 0.3], each seen with its own jitter (sd 0.03); the
    observer's probability of the positive answer is a logistic of what it saw, and its choice
    the more probable answer. The positive answer is option 0 or 1, counterbalanced."""
    rng = np.random.default_rng(seed)
    made = []
    for index in range(count):
        x = float(rng.uniform(-0.2, 0.3))
        p = float(1 / (1 + np.exp(-(x + rng.normal(0, 0.03) - PSE) / SLOPE)))
        positive = index % 2
        choice = positive if rng.random() < p else 1 - positive
        made.append(Result(
            "illusion/sim", f"i{index}", "sim/observer", "0-shot", "none", Status.ANSWERED, reply="x", parsed=choice,
            correct=None, target=None, item_ref=ItemRef("illusion/sim", f"i{index}",
                                                        params={"difference": x, POSITIVE_ANSWER: positive}),
            probabilities={str(positive): p, str(1 - positive): 1 - p}, probability_mass=1.0,
        ))  # fmt: skip
    return made


def test_the_graded_fit_recovers_a_known_pse_from_40_items():
    errors = []
    for seed in range(10):
        [row] = graded_fit_rows(observer(40, seed), "difference", resamples=200, seed=seed)
        assert row.source == "probabilities" and row.status == "ok" and row.n == 40
        errors.append(abs(row.pse - PSE))
        assert row.pse_low < row.pse < row.pse_high
    assert np.quantile(errors, 0.9) <= 0.02
    assert row.slope == pytest.approx(SLOPE, rel=0.5)


def test_report_fit_shows_both_sources(tmp_path):
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        store.record_many([(result, None, "") for result in observer(60, 3)])
    done = run_cli("report", "--store", str(path), "--fit", "difference", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = {row["source"]: row for row in json.loads(done.stdout)}
    assert set(rows) == {"choices", "probabilities"}
    assert rows["probabilities"]["n"] == rows["choices"]["n"] == 60
    assert abs(rows["probabilities"]["pse"] - PSE) < 0.03
    # Graded answers pin the PSE more tightly than choices from the same items.
    width = {s: r["pse_high"] - r["pse_low"] for s, r in rows.items()}
    assert width["probabilities"] < width["choices"]


def test_the_adaptive_design_pins_the_pse_with_fewer_requests_than_the_grid():
    from probes.analysis.adaptive import Design

    levels = np.round(np.linspace(-0.2, 0.3, 11), 3)
    rng = np.random.default_rng(11)

    def answer(x):
        return float(1 / (1 + np.exp(-(x + rng.normal(0, 0.03) - PSE) / SLOPE)))

    grid = Design(levels)
    for x in rng.permutation(np.resize(levels, 88)):
        grid.update(float(x), answer(x))
    low, high = grid.pse_interval()
    adaptive = Design(levels)
    while not adaptive.done(high - low + 1e-9) and adaptive.asked < 200:
        x = adaptive.next_difference()
        adaptive.update(x, answer(x))
    assert adaptive.asked < 88
    assert abs(adaptive.pse() - PSE) < 0.02 and abs(grid.pse() - PSE) < 0.02

"""Calibration in `report`: the figures equal a direct computation from the stored probabilities
and targets; a report without probabilities keeps the columns it always had."""

from __future__ import annotations

import csv
import io
import random

import numpy as np
import pytest

from probes.analysis.calibration import calibration_by_row, reliability
from probes.core.types import ItemRef, Result, Status
from probes.running.store import Store
from tests.conftest import run_cli


def results(rng: random.Random, model: str, count: int, probabilities: bool) -> list[Result]:
    made = []
    for index in range(count):
        target = rng.randrange(3)
        raw = [rng.random() ** 2 for _ in range(3)]
        p = {str(k): v / sum(raw) for k, v in enumerate(raw)}
        status = Status.UNPARSED if index % 7 == 0 else Status.ANSWERED
        parsed = None if status is Status.UNPARSED else max(range(3), key=lambda k: raw[k] + rng.random() * 0.3)
        made.append(Result(
            "custom:set", f"q{index}", model, "0-shot", "none", status, reply="x", parsed=parsed,
            correct=parsed == target, score=float(parsed == target), target=target,
            groups={"shape": "round" if index % 2 else "square"}, item_ref=ItemRef("custom:set", f"q{index}"),
            probabilities=p if probabilities else None, probability_mass=0.9 if probabilities else None,
        ))  # fmt: skip
    return made


def direct(members: list[Result]) -> dict[str, float]:
    """The figures written out from their definitions, with numpy."""
    p = np.array([[r.probabilities[str(k)] for k in range(3)] for r in members])
    right = np.array([r.target for r in members])
    truth = np.eye(3)[right]
    chosen = np.array([r.parsed if r.parsed is not None else int(np.argmax(p[i])) for i, r in enumerate(members)])
    confidence = p[np.arange(len(members)), chosen]
    correct = np.array([r.parsed is not None and r.parsed == r.target for r in members])
    bins = np.minimum((confidence * 10).astype(int), 9)
    ece = sum(
        (bins == b).mean() * abs(correct[bins == b].mean() - confidence[bins == b].mean())
        for b in range(10)
        if (bins == b).any()
    )
    return {
        "mean_p_right": float(p[np.arange(len(members)), right].mean()),
        "brier": float(((p - truth) ** 2).sum(axis=1).mean()),
        "ece": float(ece),
        "n_prob": len(members),
    }


@pytest.fixture
def filled(tmp_path):
    rng = random.Random(5)
    path = tmp_path / "r.sqlite"
    made = results(rng, "openai/graded", 120, True) + results(rng, "anthropic/plain", 40, False)
    with Store(path) as store:
        store.record_many([(result, None, "") for result in made])
    return path, made


def test_figures_equal_a_direct_computation_from_the_stored_probabilities(filled):
    path, made = filled
    graded = [r for r in made if r.model == "openai/graded"]
    with Store(path) as store:
        found = calibration_by_row(store.probability_rows(), by=["shape"])
    overall = found[("custom:set", "openai/graded", "0-shot", "none", "overall")]
    assert overall.as_dict() == pytest.approx(direct(graded))
    square = found[("custom:set", "openai/graded", "0-shot", "none", "shape=square")]
    assert square.as_dict() == pytest.approx(direct([r for r in graded if r.groups["shape"] == "square"]))
    assert not any(head[1] == "anthropic/plain" for head in found)  # no probabilities, no figures
    with Store(path) as store:
        diagram = reliability(store.probability_rows(), "openai/graded")
    assert len(diagram) == 10 and sum(b["n"] for b in diagram) == len(graded)


def test_report_carries_them_in_json_csv_and_table(filled):
    path, made = filled
    done = run_cli("report", "--store", str(path), "--format", "json", "--by", "shape")
    assert done.returncode == 0, done.stderr
    import json

    rows = {(r["model"], r["group"], r["source"]): r for r in json.loads(done.stdout)}
    graded = [r for r in made if r.model == "openai/graded"]
    row = rows[("openai/graded", "overall", "measured")]
    assert {k: row[k] for k in ("mean_p_right", "brier", "ece", "n_prob")} == pytest.approx(direct(graded))
    assert rows[("anthropic/plain", "overall", "measured")]["brier"] is None
    csv_rows = list(csv.DictReader(io.StringIO(run_cli("report", "--store", str(path), "--format", "csv").stdout)))
    measured = next(r for r in csv_rows if r["model"] == "openai/graded")
    assert float(measured["brier"]) == pytest.approx(direct(graded)["brier"])
    text = run_cli("report", "--store", str(path)).stdout
    assert "brier" in text.splitlines()[0] and f"{direct(graded)['brier']:.3f}" in text


def test_a_report_without_probabilities_keeps_its_columns(tmp_path):
    path = tmp_path / "plain.sqlite"
    with Store(path) as store:
        store.record_many([(r, None, "") for r in results(random.Random(1), "anthropic/plain", 10, False)])
    done = run_cli("report", "--store", str(path), "--format", "csv")
    assert "brier" not in done.stdout.splitlines()[0]

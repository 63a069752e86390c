"""Calibration kept as sums per cell (what the Scoreboard adds up per view) gives the figures of
probes/analysis/calibration.py, and of a direct numpy computation, for the same stored results:
overall and per group, whatever order cells are added in; and the store reads the results with
probabilities through an index of those alone."""

from __future__ import annotations

import json
import random

import pytest

from probes.analysis.calibration import bins, calibration, calibration_by_row, scored
from probes.analysis.calibration_cells import Sums, answers_p, by_row, calibrations, cell_sums, pooled
from probes.core.types import ItemRef, Origin, Result
from probes.running.cells import Where
from probes.running.store import Store
from tests.probes.analysis.test_calibration import direct, results


@pytest.fixture
def stored(tmp_path):
    """Two origins of one model with probabilities, one model without, in one store."""
    rng = random.Random(11)
    made = results(rng, "openai/graded", 150, True) + results(rng, "anthropic/plain", 30, False)
    imported = [
        Result(**{**r.__dict__, "item_id": f"i{r.item_id}", "item_ref": ItemRef("custom:set", f"i{r.item_id}", Origin.IMPORT)})
        for r in results(rng, "openai/graded", 60, True)
    ]  # fmt: skip
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        store.record_many([(result, None, "") for result in made + imported])
    return path, made, imported


def read_cells(path, origins=("run", "import")):
    with Store(path) as store:
        return pooled(cell_sums(store.probability_rows(Where("custom:set", origins=(o,))), o) for o in origins)


def test_cells_give_the_figures_of_calibration_py_and_of_numpy(stored):
    path, made, imported = stored
    cells = read_cells(path)
    found = calibrations(cells)
    with Store(path) as store:
        reference = calibration_by_row(store.probability_rows(), by=["shape"])
    assert set(found) == set(reference)  # the same rows: overall and each shape, the graded model's only
    for head, expected in reference.items():
        assert found[head].as_dict() == pytest.approx(expected.as_dict(), rel=1e-12, abs=1e-15)
    graded = [r for r in made + imported if r.model == "openai/graded"]
    assert found[("custom:set", "openai/graded", "0-shot", "none", "overall")].as_dict() == pytest.approx(
        direct(graded)
    )
    square = [r for r in graded if r.groups["shape"] == "square"]
    head = ("custom:set", "openai/graded", "0-shot", "none", "shape=square")
    assert found[head].as_dict() == pytest.approx(direct(square))
    # A model that gave no probabilities has no cell at all: nothing derived from its choices.
    assert not any(key[1] == "anthropic/plain" for key in cells)


def test_each_origin_is_its_own_cell_and_they_add_up(stored):
    path, made, imported = stored
    runs = calibrations(read_cells(path, ("run",)))
    head = ("custom:set", "openai/graded", "0-shot", "none", "overall")
    assert runs[head].as_dict() == pytest.approx(direct([r for r in made if r.model == "openai/graded"]))
    assert runs[head].n_prob == 150 and calibrations(read_cells(path))[head].n_prob == 210


def test_the_order_cells_are_added_in_changes_nothing(stored):
    path, *_ = stored
    cells = read_cells(path)
    keys = list(cells)
    once = by_row(cells)
    for seed in range(3):
        random.Random(seed).shuffle(keys)
        again = by_row({key: cells[key] for key in keys})
        for head, sums in once.items():  # compensated sums: the same to the last bit or so
            assert again[head].calibration().as_dict() == pytest.approx(sums.calibration().as_dict(), rel=1e-15)


def test_sums_of_items_equal_calibration_and_its_bins():
    rng = random.Random(3)
    items = []
    for _ in range(400):
        raw = [rng.random() ** 3 for _ in range(4)]
        p = {str(k): v / sum(raw) for k, v in enumerate(raw)}
        answered = rng.random() < 0.85
        items.append(scored(rng.randrange(4), rng.randrange(5) if answered else None, answered, p))
    sums = Sums()
    for item in items:
        sums.add_item(item)
    assert sums.calibration().as_dict() == pytest.approx(calibration(items).as_dict(), rel=1e-12)
    for mine, theirs in zip(sums.bins(), bins(items), strict=True):
        assert (mine.low, mine.high, mine.n, mine.accuracy) == (theirs.low, theirs.high, theirs.n, theirs.accuracy)
        assert mine.confidence == pytest.approx(theirs.confidence, rel=1e-12)
    assert Sums().calibration() is None


def _row(target, parsed, status, probabilities, groups=None):
    stored = json.dumps({"p": probabilities, "mass": 0.9, "top": [["A", 0.5]]})
    return ("b", "m", "0-shot", "none", json.dumps(groups or {}), json.dumps(target),
            None if parsed is None else json.dumps(parsed), status, stored)  # fmt: skip


def test_the_fast_reading_keeps_calibration_py_rules():
    rows = [
        _row(0, 1, "answered", {"0": 0.3, "1": 0.7}),  # wrong, confident in the chosen
        _row(1, None, "unparsed", {"0": 0.2, "1": 0.8}),  # no answer read: the most probable, wrong
        _row("Yes", "no", "answered", {"yes": 0.6, "no": 0.4}),  # keys case-folded: the chosen "no" at 0.4
        _row(2, 0, "answered", {"0": 0.5, "1": 0.5}),  # the right answer is not among them: left out
        _row(True, "true", "answered", {"true": 0.9, "false": 0.1}),  # JSON true reads as "true"
        _row(0, 3, "answered", {"0": 0.65, "1": 0.35}),  # chose an answer without a probability: the most probable
        _row(0, 0, "refused", {"0": 0.9, "1": 0.1}),  # refused: wrong, whatever it leaned to
    ]
    mine = calibrations(cell_sums(rows, "run"))[("b", "m", "0-shot", "none", "overall")]
    reference = calibration_by_row(rows)[("b", "m", "0-shot", "none", "overall")]
    assert mine.as_dict() == pytest.approx(reference.as_dict(), rel=1e-12)
    assert mine.n_prob == 6


def test_probabilities_written_in_another_key_order_are_read_whole():
    assert answers_p('{"mass": 0.5, "p": {"0": 0.25, "1": 0.75}}') == {"0": 0.25, "1": 0.75}
    assert answers_p('{"p": {"0": 0.25, "1": 0.75}, "mass": 0.5, "top": [["x", 1.0]]}') == {"0": 0.25, "1": 0.75}


def test_the_store_reads_only_the_results_with_probabilities_by_their_own_index(tmp_path):
    """A million results without probabilities cost the calibration read nothing: the read walks
    an index holding only those with probabilities (counted through SQLite's plan, not timed)."""
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        store.record_many([(r, None, "") for r in results(random.Random(2), "openai/graded", 5, True)])
        clause, values = Where("custom:set", origins=("run",)).sql()
        plan = store._db.execute(
            "EXPLAIN QUERY PLAN SELECT probabilities FROM results WHERE "
            f"{clause} AND probabilities IS NOT NULL AND status != 'error' AND correct IS NOT NULL",
            values,
        ).fetchall()
        indexed = store._db.execute(
            "SELECT COUNT(*) FROM results INDEXED BY results_with_probabilities WHERE probabilities IS NOT NULL"
        ).fetchone()[0]
    assert any("results_with_probabilities" in str(step) for step in plan)
    assert indexed == 5

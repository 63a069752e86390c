"""Perceive or recall (`report --polarity`): on the illusions' incongruent items, whether a choice
tracks the drawn difference, the inducers, or neither; and on matched pairs of polarities,
whether it moved with the inducers. Observers with known behaviour, answering real items of the
default Mueller-Lyer design through the benchmark's own parsing and grading."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from probes.analysis.polarity import polarity_rows, pooled
from probes.asking import perturb
from probes.core.registry import get_benchmark
from probes.core.types import Condition, Item, ItemRef, Mode
from probes.reading.grading import grade_reply
from probes.running.store import Store
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def sweep():
    return get_benchmark("illusion/mueller-lyer", params={"canvas": ["384"], "seed": ["0", "1", "2"]})


def inducers_answer(item: Item) -> int:
    """The option the inducers make look true: against the truth where they are incongruent."""
    if item.params["congruence"] == "congruent":
        return item.target
    return 1 - item.target


def answers(sweep, choose: Callable[[Item], str], perturbation: str = "none", model: str = "sim/observer"):
    results = []
    for original in sweep.items():
        item = perturb.apply(sweep, original, perturbation)
        reply = choose(item)
        ref = ItemRef.of(item)
        results.append(grade_reply(sweep, item, reply, model, Condition(Mode(), perturbation), ref))
    return results


def label(item: Item, index: int) -> str:
    return item.labels[index]


def overall(results):
    (row,) = [r for r in polarity_rows(results) if r.group == "overall"]
    return row


def test_a_geometry_only_observer_tracks_the_difference_on_every_item_and_never_moves(sweep):
    row = overall(answers(sweep, lambda item: label(item, item.target) if item.target is not None else "a"))
    assert row.n > 100 and row.difference == row.n and row.difference_share == 100.0
    assert row.inducers == row.neither == 0 and row.difference_low > 97
    assert row.pairs > 50 and row.moved == 0 and row.fixed == row.pairs
    assert row.control_accuracy == 100.0 and row.control_n > 0


def fooled(item: Item) -> str:
    if item.params["congruence"] in ("congruent", "incongruent"):
        return label(item, inducers_answer(item))
    return label(item, item.target) if item.target is not None else "a"


def test_an_observer_that_follows_the_inducers_moves_with_every_flip(sweep):
    row = overall(answers(sweep, fooled))
    assert row.inducers == row.n and row.difference == 0 and row.inducers_share == 100.0
    assert row.moved == row.pairs and row.fixed == 0


def test_an_observer_fixed_on_one_word_keeps_its_choice_and_tracks_the_truth_only_where_it_agrees(sweep):
    results = answers(sweep, lambda item: "Top")
    row = overall(results)
    incongruent = [r for r in results if r.item_ref.params["congruence"] == "incongruent" and r.target is not None]
    top_is_true = sum(1 for r in incongruent if r.target == r.item_ref.params["positive_answer"])
    assert row.n == len(incongruent) and row.difference == top_is_true and 0 < top_is_true < len(incongruent)
    assert row.fixed == row.pairs and row.moved == 0


def test_people_pooled_keep_each_persons_pairs_apart(sweep):
    """Two people answering the same items: their pairs add up (a pair is never made of one
    person's congruent answer and another's incongruent one)."""
    one = overall(answers(sweep, fooled))
    results = answers(sweep, fooled, model="human/ada") + answers(sweep, lambda item: "Top", model="human/bo")
    fixed_one = overall(answers(sweep, lambda item: "Top"))
    (people,) = pooled([r for r in polarity_rows(results) if r.group == "overall"], "people")
    assert people.model == "people" and people.n == 2 * one.n and people.pairs == 2 * one.pairs
    assert people.moved == one.moved + fixed_one.moved and people.fixed == one.fixed + fixed_one.fixed
    assert people.inducers == one.inducers + fixed_one.inducers
    assert people.inducers_share == round(100 * people.inducers / people.n, 2)


def test_unreadable_replies_are_neither(sweep):
    row = overall(answers(sweep, lambda item: "I cannot tell."))
    assert row.neither == row.n and row.neither_share == 100.0 and row.pairs == 0


def test_upside_down_the_geometry_observer_still_tracks_the_difference(sweep):
    """The truth and the congruence follow the flipped picture: nothing moves for a perceiver."""
    row = overall(
        answers(sweep, lambda item: label(item, item.target) if item.target is not None else "a", "flip-vertical")
    )
    assert row.perturbation == "flip-vertical" and row.difference == row.n and row.moved == 0


def test_report_polarity_on_the_command_line(sweep, tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.record_many([(r, None, "") for r in answers(sweep, lambda item: "Top", model="sim/top")])
    done = run_cli("report", "--polarity", "--store", str(path), "--format", "json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    assert row["model"] == "sim/top" and row["fixed"] == row["pairs"] > 0
    assert row["difference"] + row["inducers"] + row["neither"] == row["n"]
    table = run_cli("report", "--polarity", "--store", str(path))
    assert "difference" in table.stdout and "%" in table.stdout
    other = tmp_path / "blind.sqlite"
    with Store(other):
        pass
    run_cli("run", "blind/nested-squares", "--model", "baseline/chance", "--limit", "3", "--store", str(other))
    refused = run_cli("report", "--polarity", "--store", str(other))
    assert refused.returncode == 2 and "illusion" in refused.stderr

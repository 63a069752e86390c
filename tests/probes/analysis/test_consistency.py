import math
import random
from types import SimpleNamespace

import pytest

from probes.analysis.consistency import (
    ALL_PERTURBATIONS,
    consistency,
    position_bias,
    position_summary,
)
from probes.asking import perturb
from probes.core.benchmark import Benchmark
from probes.core.types import AnswerKind, Item, Result, Status


class _Plain(Benchmark):
    def load_items(self) -> list[Item]:
        return []


ANY_BENCHMARK = _Plain()  # rotating options never asks the benchmark about its truth


def _item(number, k, target, benchmark="bench"):
    return Item(benchmark, f"q{number}", "Which?", (), AnswerKind.CHOICE, target, options=tuple(f"option {j}" for j in range(k)))  # fmt: skip


def _ask(item, answerer, rotations=None, model="m", mode="0-shot", carry_count=True, name=None):
    """Results of one answerer on the item as perturb.apply shows it under each rotation. The
    answerer sees the shown item and returns a shown place, or None for an unreadable reply."""
    k = len(item.options)
    results = []
    for r in range(k) if rotations is None else rotations:
        perturbation = name or f"rotate-options-{r}"
        shown = perturb.apply(ANY_BENCHMARK, item, f"rotate-options-{r}")
        choice = answerer(shown)
        status = Status.ANSWERED if choice is not None else Status.UNPARSED
        ref = {"benchmark": item.benchmark, "item_id": item.id, **({"options_count": k} if carry_count else {})}
        results.append(
            Result(item.benchmark, item.id, model, mode, perturbation, status, parsed=choice,
                   correct=choice == shown.target, target=shown.target, item_ref=ref)
        )  # fmt: skip
    return results


def always_first(shown):
    return 0


def perfect(shown):
    return shown.target


def _items(count, k, benchmark="bench", seed=0):
    rng = random.Random(seed)
    return [_item(i, k, rng.randrange(k), benchmark) for i in range(count)]


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_always_the_first_label_gets_one_in_k_and_is_never_consistent(k):
    results = [r for item in _items(12, k) for r in _ask(item, always_first)]
    [row] = consistency(results)
    assert (row.items, row.n, row.incomplete) == (12, 12 * k, 0)
    assert row.accuracy == pytest.approx(100 / k, abs=0.01)
    assert row.consistent == 0 and row.consistency == 0.0


def test_a_perfect_answerer_is_right_and_consistent_everywhere():
    results = [r for k in (2, 3, 4) for item in _items(10, k, seed=k) for r in _ask(_renamed(item, k), perfect)]
    [row] = consistency(results)
    assert (row.items, row.consistent, row.consistency, row.accuracy) == (30, 30, 100.0, 100.0)


def _renamed(item, k):
    return item.with_changes(id=f"{item.id}-k{k}")


def test_an_answerer_who_reads_the_option_text_is_consistent_exactly_when_right():
    # Always names "option 0" wherever it is shown: right under every rotation or under none.
    def loyal(shown):
        return shown.options.index("option 0")

    items = _items(40, 4, seed=3)
    [row] = consistency(r for item in items for r in _ask(item, loyal))
    right = sum(1 for item in items if item.target == 0)
    assert row.consistent == right and row.consistency == pytest.approx(row.accuracy, abs=0.01)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_a_uniform_guesser_is_consistent_about_one_in_k_to_the_k(k):
    rng = random.Random(100 + k)

    def guesser(shown):
        return rng.randrange(len(shown.options))

    count = 3000
    [row] = consistency(r for item in _items(count, k, seed=k) for r in _ask(item, guesser))
    chance = (1 / k) ** k
    # Four binomial standard deviations of the consistent count, and of the right count.
    assert abs(row.consistent - count * chance) <= 4 * math.sqrt(count * chance * (1 - chance))
    n = count * k
    assert abs(row.accuracy / 100 * n - n / k) <= 4 * math.sqrt(n * (1 / k) * (1 - 1 / k))


def test_items_missing_a_rotation_are_counted_apart_and_left_out():
    items = _items(10, 4, seed=5)
    results = [r for item in items[:7] for r in _ask(item, perfect)]
    results += _ask(items[7], perfect, rotations=[0, 1, 2])  # the last rotation never asked (count carried)
    results += _ask(items[8], perfect, rotations=[1, 2, 3])  # no rotation 0 and no `none`
    errored = _ask(items[9], perfect)
    errored[2].status, errored[2].correct = Status.ERROR, None  # no reply under one rotation
    results += errored
    [row] = consistency(results)
    assert (row.items, row.consistent, row.n, row.incomplete) == (7, 7, 28, 3)
    assert row.accuracy == 100.0


def test_without_the_count_k_is_the_largest_rotation_plus_one():
    item = _item(1, 3, 1)
    [row] = consistency(_ask(item, perfect, carry_count=False))
    assert (row.items, row.n) == (1, 3)
    gap = _ask(_item(2, 3, 1), perfect, rotations=[0, 2], carry_count=False)  # rotation 1 missing
    lone = _ask(_item(3, 3, 1), perfect, rotations=[0], carry_count=False)  # one order only
    [row] = consistency(gap + lone)
    assert (row.items, row.incomplete) == (0, 2) and row.consistency is None and row.accuracy is None


def test_none_stands_for_rotation_zero_only_when_rotate_options_0_is_missing():
    item = _item(1, 3, 2)
    rotated = _ask(item, perfect, rotations=[1, 2])
    as_asked = _ask(item, perfect, rotations=[0], name="none")
    [row] = consistency(rotated + as_asked)
    assert (row.items, row.consistent, row.n) == (1, 1, 3)
    wrong_as_asked = _ask(item, always_first, rotations=[0], name="none")  # target 2: wrong at place a
    [row] = consistency(rotated + _ask(item, perfect, rotations=[0]) + wrong_as_asked)
    assert (row.consistent, row.n) == (1, 3)  # rotate-options-0 is used, `none` is not counted twice
    [row] = consistency(rotated + wrong_as_asked)
    assert row.consistent == 0


def test_a_run_without_rotations_gives_no_row_and_lone_none_items_are_not_incomplete():
    plain = [r for item in _items(5, 3) for r in _ask(item, perfect, rotations=[0], name="none")]
    assert consistency(plain) == []
    rotated = [r for item in _items(4, 3, seed=9) for r in _ask(_renamed(item, 9), perfect)]
    [row] = consistency(plain + rotated)
    assert (row.items, row.incomplete) == (4, 0)


def test_unparsed_is_wrong_and_ungraded_is_missing():
    item = _item(1, 3, 0)
    results = _ask(item, perfect)
    results[1].status, results[1].parsed, results[1].correct = Status.UNPARSED, None, False
    [row] = consistency(results)
    assert (row.items, row.consistent, row.accuracy) == (1, 0, pytest.approx(200 / 3, abs=0.01))
    results[1].correct = None
    [row] = consistency(results)
    assert (row.items, row.incomplete) == (0, 1)


def test_a_rotation_past_k_is_taken_modulo_k():
    item = _item(1, 3, 1)
    results = _ask(item, perfect, rotations=[0, 1]) + _ask(item, perfect, rotations=[5])  # 5 mod 3 = 2
    [row] = consistency(results)
    assert (row.items, row.consistent, row.n) == (1, 1, 3)


def test_rows_per_benchmark_model_and_mode_and_a_typed_item_reference():
    results = []
    for model, answerer in (("first", always_first), ("oracle", perfect)):
        for mode in ("0-shot", "4-shot+CoT"):
            results += [r for item in _items(6, 3) for r in _ask(item, answerer, model=model, mode=mode)]
    rows = consistency(results)
    assert [(row.model, row.mode, row.consistency) for row in rows] == [
        ("first", "0-shot", 0.0), ("first", "4-shot+CoT", 0.0), ("oracle", "0-shot", 100.0), ("oracle", "4-shot+CoT", 100.0),
    ]  # fmt: skip
    typed = _ask(_item(1, 4, 0), perfect, rotations=[0, 1, 2])
    for result in typed:
        result.item_ref = SimpleNamespace(benchmark="bench", item_id="q1", options_count=4)
    [row] = consistency(typed)
    assert row.incomplete == 1  # the typed reference's count (4) shows rotation 3 is missing
    assert set(rows[0].as_dict()) == {
        "benchmark", "model", "mode", "items", "consistent", "consistency", "n", "accuracy", "incomplete"
    }  # fmt: skip


# --- position bias ---------------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 4])
def test_always_first_chooses_place_a_every_time(k):
    results = [r for item in _items(20, k) for r in _ask(item, always_first)]
    biases = position_bias(results, by_perturbation=False)
    [bias] = biases
    assert bias.perturbation == ALL_PERTURBATIONS and bias.n == 20 * k
    assert [p.label for p in bias.positions] == ["a", "b", "c", "d"][:k]
    assert [p.chosen_share for p in bias.positions] == [1.0] + [0.0] * (k - 1)
    # Under all rotations every place holds the answer equally often.
    assert [p.right for p in bias.positions] == [20] * k
    assert bias.over_chosen == "a" and bias.excess == pytest.approx(100 * (1 - 1 / k), abs=0.01)
    per_rotation = position_bias(results)
    assert len(per_rotation) == k and all(b.positions[0].chosen_share == 1.0 for b in per_rotation)


def test_a_perfect_answerer_chooses_each_place_as_often_as_it_is_right():
    results = [r for item in _items(30, 3, seed=4) for r in _ask(item, perfect, rotations=[0])]
    [bias] = position_bias(results)
    assert all(p.chosen == p.right for p in bias.positions)
    assert bias.excess == 0.0 and sum(p.chosen_share for p in bias.positions) == pytest.approx(1.0)


def test_only_answered_places_are_counted():
    results = _ask(_item(1, 3, 1), always_first, rotations=[0])
    results += _ask(_item(2, 3, 1), lambda shown: None, rotations=[0])  # unparsed: chose nothing
    odd = _ask(_item(3, 3, 1), always_first, rotations=[0])[0]
    odd.parsed = True  # a yes/no answer is no place
    yes_no = Result("bench", "q4", "m", "0-shot", "rotate-options-0", Status.ANSWERED, parsed="yes", correct=True, target="yes")  # fmt: skip
    out_of_range = _ask(_item(5, 3, 1), lambda shown: 7, rotations=[0])
    [bias] = position_bias([*results, odd, yes_no, *out_of_range])
    assert bias.n == 1 and [p.chosen for p in bias.positions] == [1, 0, 0]
    assert [p.right for p in bias.positions] == [0, 1, 0]


def test_flat_rows_and_the_summary():
    [bias] = position_bias(r for item in _items(8, 3) for r in _ask(item, always_first, rotations=[0]))
    rows = bias.rows()
    assert [row["label"] for row in rows] == ["a", "b", "c"] and all(row["n"] == 8 for row in rows)
    [summary] = position_summary([bias])
    assert summary["over_chosen"] == "a" and summary["n"] == 8

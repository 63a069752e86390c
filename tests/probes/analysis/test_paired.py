import itertools
import random

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from probes.analysis.paired import (
    BOOTSTRAP_RESAMPLES,
    OVERALL,
    CompareError,
    Comparison,
    all_pairs,
    bootstrap_diff_interval,
    compare,
    compare_many,
    detect_axis,
    holm,
    mcnemar_exact,
    values_of,
)
from probes.core.errors import ProbeError
from probes.core.types import Result, Status
from tests.conftest import run_python

FIELDS = ["benchmark", "a", "b", "n_shared", "a_only", "b_only", "diff", "diff_low", "diff_high", "p_value", "p_holm"]


def _result(item, correct, model="m1", mode="0-shot", perturbation="none", benchmark="bench", status=None):
    if status is None:
        status = Status.ANSWERED if correct else Status.UNPARSED
    return Result(benchmark, str(item), model, mode, perturbation, status, correct=correct)


def _table(a_only, b_only, both=0, neither=0, a="m1", b="m2", axis="model", benchmark="bench", start=0):
    """Results of A and B on the same items with these counts of each outcome pair."""
    outcomes = [(True, False)] * a_only + [(False, True)] * b_only + [(True, True)] * both + [(False, False)] * neither
    results = []
    for i, (right_a, right_b) in enumerate(outcomes, start):
        for name, right in ((a, right_a), (b, right_b)):
            results.append(_result(i, right, benchmark=benchmark, **{axis: name}))
    return results


def _scipy_p(k, n):
    return 1.0 if n == 0 else binomtest(k, n, 0.5).pvalue


CASES = [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (2, 3), (5, 5), (0, 10), (3, 17), (12, 12), (40, 60), (49, 51)]
CASES += [(0, 2000), (900, 1100), (1000, 1000), (970, 1030), (1, 1999), (333, 667)]


@pytest.mark.parametrize("a_only,b_only", CASES)
def test_a_table_with_known_discordant_counts_gives_the_exact_binomial_p_value(a_only, b_only):
    [row] = compare(_table(a_only, b_only, both=7, neither=4), "m1", "m2")
    assert (row.n_shared, row.a_only, row.b_only) == (a_only + b_only + 11, a_only, b_only)
    expected = _scipy_p(a_only, a_only + b_only)
    assert row.p_value == pytest.approx(expected, rel=1e-9, abs=1e-300)
    assert row.p_value == pytest.approx(_scipy_p(b_only, a_only + b_only), rel=1e-9, abs=1e-300)  # symmetric


def test_mcnemar_matches_scipy_over_a_grid_of_counts():
    for n in list(range(0, 41)) + [99, 100, 257, 1000, 2000, 4001]:
        ks = range(n + 1) if n <= 40 else sorted({0, 1, n // 3, n // 2 - 1, n // 2, n // 2 + 1, n - 1, n})
        for k in ks:
            assert mcnemar_exact(k, n - k) == pytest.approx(_scipy_p(k, n), rel=1e-9, abs=1e-300), (k, n)


def test_no_discordant_pairs_give_p_one_and_no_difference():
    [row] = compare(_table(0, 0, both=5, neither=3), "m1", "m2")
    assert row.p_value == 1.0 and row.p_holm == 1.0
    assert row.diff == row.diff_low == row.diff_high == 0.0


def test_holm_gives_the_textbook_values_and_agrees_with_statsmodels():
    p = [0.01, 0.04, 0.03, 0.005]
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> 0.06 (step-down monotone).
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]))
    rng = random.Random(7)
    for size in (1, 2, 5, 13, 40):
        values = [rng.random() ** 3 for _ in range(size)] + [0.2] * 2  # ties too
        assert holm(values) == pytest.approx(list(multipletests(values, method="holm")[1]))
    assert holm([0.6, 0.9]) == [1.0, 1.0] and holm([]) == []


def test_one_table_of_several_comparisons_is_holm_adjusted_across_all_its_rows():
    results = _table(30, 12, both=40, neither=10, a="m1", b="m2")
    results += [_result(i, right, model="m3") for i, right in enumerate([True] * 35 + [False] * 57)]
    rows = compare_many(results, all_pairs(values_of(results, "model")))
    assert [(row.a, row.b) for row in rows] == [("m1", "m2"), ("m1", "m3"), ("m2", "m3")]
    expected = multipletests([row.p_value for row in rows], method="holm")[1]
    assert [row.p_holm for row in rows] == pytest.approx(list(expected))
    assert all(row.p_holm >= row.p_value for row in rows)


def test_pairs_are_only_the_shared_items():
    results = _table(4, 2, both=3, neither=1)
    results += [_result(100 + i, True, model="m1") for i in range(20)]  # only A answered these
    results += [_result(200 + i, False, model="m2") for i in range(5)]  # only B
    [row] = compare(results, "m1", "m2")
    assert (row.n_shared, row.a_only, row.b_only) == (10, 4, 2)
    assert row.diff == pytest.approx(100 * (4 - 2) / 10)


def test_errors_and_ungraded_results_are_left_out_and_unparsed_is_wrong():
    results = _table(3, 1, both=2)
    results.append(_result("e", None, model="m1", status=Status.ERROR))
    results.append(_result("e", True, model="m2"))
    results.append(_result("u", None, model="m1", status=Status.ANSWERED))  # ungraded
    results.append(_result("u", True, model="m2"))
    results.append(_result("r", False, model="m1", status=Status.REFUSED))
    results.append(_result("r", True, model="m2"))
    [row] = compare(results, "m1", "m2")
    assert (row.n_shared, row.a_only, row.b_only) == (7, 3, 2)


def test_the_other_axes_must_match_for_a_pair():
    results = [_result(i, True, model="m1", mode="0-shot") for i in range(5)]
    results += [_result(i, False, model="m2", mode="4-shot") for i in range(5)]
    [row] = compare(results, "m1", "m2")
    assert row.n_shared == 0 and row.diff is None and row.diff_low is None and row.p_value == 1.0
    # With both modes on both sides, each (item, mode) is one pair.
    results += [_result(i, True, model="m1", mode="4-shot") for i in range(5)]
    results += [_result(i, True, model="m2", mode="0-shot") for i in range(5)]
    [row] = compare(results, "m1", "m2")
    assert (row.n_shared, row.a_only, row.b_only) == (10, 5, 0)


def test_the_axis_is_found_from_the_results():
    models = _table(2, 1, a="m1", b="m2", axis="model")
    modes = _table(2, 1, a="0-shot", b="4-shot+CoT", axis="mode")
    perturbations = _table(2, 1, a="none", b="flip-vertical", axis="perturbation")
    assert detect_axis(models, "m1", "m2") == "model"
    assert detect_axis(modes, "4-shot+CoT", "0-shot") == "mode"
    assert detect_axis(perturbations, "none", "flip-vertical") == "perturbation"
    [row] = compare(modes, "0-shot", "4-shot+CoT")
    assert (row.a, row.b, row.a_only, row.b_only) == ("0-shot", "4-shot+CoT", 2, 1)


def test_conditions_on_different_axes_unknown_or_the_same_are_refused():
    results = _table(2, 1) + _table(1, 1, a="none", b="flip-vertical", axis="perturbation", start=50)
    with pytest.raises(CompareError, match="'m1' \\(a model\\).*'flip-vertical' \\(a perturbation\\)"):
        compare(results, "m1", "flip-vertical")
    with pytest.raises(CompareError, match="not in these results"):
        compare(results, "m1", "gpt-9")
    with pytest.raises(CompareError, match="two different"):
        compare(results, "m1", "m1")
    with pytest.raises(CompareError, match="unknown axis"):
        compare(results, "m1", "m2", axis="colour")
    with pytest.raises(CompareError, match="no results with model 'gpt-9'"):
        compare(results, "m1", "gpt-9", axis="model")
    assert issubclass(CompareError, ProbeError)  # a user's mistake: one line, exit 2


def test_a_name_on_one_axis_is_enough_and_names_on_two_axes_need_the_axis_said():
    results = _table(2, 1, a="none", b="m2") + _table(1, 0, a="none", b="grayscale", axis="perturbation")
    assert detect_axis(results, "none", "m2") == "model"  # "none" is also a perturbation; "m2" only a model
    results += _table(0, 0, neither=1, a="m2", b="grayscale", axis="perturbation", start=90)
    with pytest.raises(CompareError, match="each a model and a perturbation; say which axis"):
        compare(results, "none", "m2")
    [row] = compare(results, "none", "m2", axis="model")
    assert (row.a_only, row.b_only) == (2, 1)


def test_several_benchmarks_give_a_row_each_and_an_overall_row_of_all_pairs():
    results = _table(5, 1, both=4, benchmark="x") + _table(0, 3, neither=2, benchmark="y")
    rows = compare(results, "m1", "m2")
    assert [row.benchmark for row in rows] == ["x", "y", OVERALL]
    overall = rows[-1]
    assert (overall.n_shared, overall.a_only, overall.b_only) == (15, 5, 4)
    assert overall.p_value == pytest.approx(_scipy_p(4, 9))
    assert [row.p_holm for row in rows] == pytest.approx(
        list(multipletests([r.p_value for r in rows], method="holm")[1])
    )


def test_a_benchmark_without_shared_items_is_shown_but_not_in_holms_family():
    results = _table(9, 0, benchmark="x") + [_result(1, True, model="m1", benchmark="y")]
    rows = compare(results, "m1", "m2")
    assert [(row.benchmark, row.n_shared) for row in rows] == [("x", 9), ("y", 0), (OVERALL, 9)]
    assert rows[1].p_holm == 1.0
    assert [rows[0].p_holm, rows[2].p_holm] == pytest.approx(holm([rows[0].p_value, rows[2].p_value]))


def test_rows_carry_exactly_the_json_fields_and_where_restrictions_when_asked():
    [row] = compare(_table(2, 1), "m1", "m2")
    assert list(row.as_dict()) == FIELDS
    results = _table(3, 0, a="none", b="flip-vertical", axis="perturbation")
    results += [_result(i, False, model="m2", perturbation=p) for i in range(3) for p in ("none", "flip-vertical")]
    comparisons = [Comparison("none", "flip-vertical", where={"model": m}) for m in values_of(results, "model")]
    rows = compare_many(results, comparisons)
    assert [row.as_dict()["model"] for row in rows] == ["m1", "m2"]
    assert [(row.a_only, row.n_shared) for row in rows] == [(3, 3), (0, 3)]
    assert list(rows[0].as_dict()) == ["benchmark", "model", *FIELDS[1:]]
    with pytest.raises(CompareError, match="also fixing"):
        compare_many(results, [Comparison("none", "flip-vertical", "perturbation", {"perturbation": "none"})])


def test_the_bootstrap_interval_is_the_same_for_the_same_input_and_brackets_the_difference():
    results = _table(37, 21, both=100, neither=42)
    [first] = compare(results, "m1", "m2")
    [again] = compare(list(reversed(results)), "m1", "m2")
    assert (first.diff_low, first.diff_high) == (again.diff_low, again.diff_high)
    assert first.diff_low < first.diff < first.diff_high
    # Another seed moves the ends by resampling noise only.
    for seed in range(1, 6):
        [other] = compare(results, "m1", "m2", seed=seed)
        assert abs(other.diff_low - first.diff_low) <= 1.0 and abs(other.diff_high - first.diff_high) <= 1.0
    # Large n: the percentile interval is the normal one, diff +- 1.96 se of a paired difference.
    n, a_only, b_only = 4000, 700, 560
    low, high = bootstrap_diff_interval(a_only, b_only, n)
    d = (a_only - b_only) / n
    se = 100 * np.sqrt(((a_only + b_only) / n - d * d) / n)
    assert low == pytest.approx(100 * d - 1.96 * se, abs=0.1 * se)
    assert high == pytest.approx(100 * d + 1.96 * se, abs=0.1 * se)


def test_the_bootstrap_interval_covers_the_true_difference_about_95_percent_of_the_time():
    # Simulated pairs: A right with p 0.70, B right with p 0.62, correlated through a shared draw.
    rng = np.random.default_rng(2024)
    simulations, n = 300, 300
    probabilities = {(True, False): 0.20, (False, True): 0.12, (True, True): 0.50, (False, False): 0.18}
    true_diff = 100 * (probabilities[(True, False)] - probabilities[(False, True)])
    outcomes = list(probabilities)
    covered = 0
    for s in range(simulations):
        drawn = rng.choice(len(outcomes), size=n, p=list(probabilities.values()))
        counts = {o: int(np.sum(drawn == i)) for i, o in enumerate(outcomes)}
        low, high = bootstrap_diff_interval(counts[(True, False)], counts[(False, True)], n, resamples=2000, seed=s)
        covered += low <= true_diff <= high
    # Four binomial standard deviations of a 95% coverage over this many simulations.
    tolerance = 4 * np.sqrt(0.95 * 0.05 / simulations)
    assert abs(covered / simulations - 0.95) < tolerance
    assert BOOTSTRAP_RESAMPLES >= 2000


def test_all_pairs_lists_each_pair_once():
    assert [(c.a, c.b) for c in all_pairs(["a", "b", "c"])] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert list(itertools.chain(all_pairs(["only"]))) == []


def test_the_statistics_need_no_scipy_at_run_time():
    code = "import sys, probes.analysis.paired, probes.analysis.consistency; print('scipy' in sys.modules)"
    assert run_python(code).strip() == "False"


def test_the_same_tables_from_a_stores_index_as_from_results(tmp_path):
    """The Scoreboard pairs what a store's index gives (VERDICT_COLUMNS, no Result made): every
    table, with errors, refusals, unparsed and ungraded replies among them, and along every axis,
    is the one the Results give."""
    from probes.analysis.paired import VERDICT_COLUMNS, compare_verdicts
    from probes.running.cells import EVERYTHING
    from probes.running.store import Store

    rng = random.Random(11)
    results = []
    for benchmark, item, model, mode, perturbation in itertools.product(
        ("b1", "b2"), range(60), ("m1", "m2", "m3"), ("0-shot", "4-shot"), ("none", "flip-vertical")
    ):
        status = rng.choice([Status.ANSWERED] * 6 + [Status.UNPARSED, Status.REFUSED, Status.ERROR])
        correct = None if status is Status.ERROR or rng.random() < 0.05 else (
            status is Status.ANSWERED and rng.random() < 0.6)  # fmt: skip
        if rng.random() < 0.1:  # some items never asked under some conditions
            continue
        results.append(Result(benchmark, f"i{item}", model, mode, perturbation, status, correct=correct))
    with Store(tmp_path / "results.sqlite") as store:
        store.record_many([(result, None, "") for result in results])
        verdicts = store.rows(VERDICT_COLUMNS, EVERYTHING)
        stored = store.results()
    assert len(verdicts) == len(stored) == len(results)
    tables = [
        all_pairs(["m1", "m2", "m3"], "model"),
        [Comparison("0-shot", "4-shot", "mode"), Comparison("4-shot", "0-shot", None, {"model": "m2"})],
        [Comparison("none", "flip-vertical", "perturbation", {"model": m}) for m in ("m1", "m3")],
    ]
    for comparisons in tables:
        from_index = compare_verdicts(verdicts, comparisons)
        assert from_index == compare_many(stored, comparisons) == compare_many(results, comparisons)
        assert any(row.n_shared > 0 and row.a_only and row.b_only for row in from_index)
    with pytest.raises(CompareError, match="no results with model 'm9'"):
        compare_verdicts(verdicts, [Comparison("m1", "m9", "model")])


def _pairs_by_hand(results, comparison):
    """The pairing spelled out: per benchmark, each side's verdict per (item, other axes); the
    counts of the keys both sides have. ("duplicate", side) where a compared side has a key twice."""
    axis = comparison.axis
    others = [o for o in ("model", "mode", "perturbation") if o != axis]
    chosen = [r for r in results if all(getattr(r, k) == v for k, v in comparison.where.items())]
    sides = {comparison.a: {}, comparison.b: {}}
    for r in chosen:
        side = getattr(r, axis)
        if side not in sides:
            continue
        per = sides[side].setdefault(r.benchmark, {})
        if r.status is Status.ERROR or r.correct is None:
            continue
        key = (r.item_id, *(getattr(r, o) for o in others))
        if key in per:
            return ("duplicate", side)
        per[key] = bool(r.correct) and r.status is Status.ANSWERED
    counts = {}
    for benchmark in sorted(sides[comparison.a].keys() | sides[comparison.b].keys()):
        a, b = sides[comparison.a].get(benchmark, {}), sides[comparison.b].get(benchmark, {})
        shared = a.keys() & b.keys()
        counts[benchmark] = (
            len(shared),
            sum(a[k] and not b[k] for k in shared),
            sum(b[k] and not a[k] for k in shared),
        )
    if len(counts) > 1:
        counts[OVERALL] = tuple(sum(c[i] for c in counts.values()) for i in range(3))
    return counts


@pytest.mark.parametrize("seed", range(30))
def test_the_pairing_counts_what_a_pairing_by_hand_counts(seed):
    """On random results (several benchmarks, every status, ungraded replies, sometimes a key given
    twice, comparisons restricted by `where`), every row's shared, A-only and B-only counts are those
    of a pairing spelled out item by item, and a key given twice under a compared side is refused."""
    rng = random.Random(seed)
    values = {"model": ["m1", "m2", "m3"], "mode": ["0-shot", "4-shot"], "perturbation": ["none", "grayscale"]}
    results = []
    for benchmark in rng.sample(["b1", "b2", "b3"], rng.randint(1, 3)):
        for item in range(rng.randint(0, 30)):
            for model, mode, perturbation in itertools.product(*values.values()):
                if rng.random() < 0.6:
                    status = rng.choice(list(Status) + [Status.ANSWERED] * 3)
                    correct = None if status is Status.ERROR or rng.random() < 0.1 else rng.random() < 0.5
                    results.append(Result(benchmark, f"i{item}", model, mode, perturbation, status, correct=correct))
    if results and rng.random() < 0.3:
        results.append(rng.choice(results))  # the same key twice
    rng.shuffle(results)
    for axis, names in values.items():
        others = {o: rng.choice(v) for o, v in values.items() if o != axis}
        for where in ({}, dict([next(iter(others.items()))])):
            a, b = rng.sample(names, 2)
            comparison = Comparison(a, b, axis, where)
            expected = _pairs_by_hand(results, comparison)
            try:
                rows = compare_many(results, [comparison], resamples=50)
            except CompareError as refused:
                twice = isinstance(expected, tuple)
                assert twice or "no results with" in str(refused), str(refused)
                if twice:
                    assert f"under {expected[1]!r}" in str(refused)
                continue
            assert {r.benchmark: (r.n_shared, r.a_only, r.b_only) for r in rows} == expected

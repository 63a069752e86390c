"""baseline/chance sits at each benchmark's chance rate, within its 95% interval."""

import asyncio

import pytest

from probes.analysis.scoring import aggregate
from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.running.answerers import create
from probes.running.runner import RunPlan, run


@pytest.mark.parametrize(
    ("benchmark_id", "limit"),
    [("blind/touching-circles", None), ("blind/line-intersections", None), ("blind/nested-squares", None),
     ("blind/olympic-circles", None), ("blind/subway-paths", None), ("blind/grid-count", 400)],
)  # fmt: skip
def test_chance_is_within_its_interval_of_the_chance_rate(store, benchmark_id, limit):
    benchmark = get_benchmark(benchmark_id)
    items = select_items(benchmark.items(), limit, seed=11)
    asyncio.run(run(RunPlan(benchmark, items, [create("baseline/chance")]), store))
    [row] = aggregate(store.results())
    expected = benchmark.chance if benchmark.chance is not None else 100 / len(items[0].possible_answers())
    assert row.n == len(items)
    assert row.ci_low <= expected <= row.ci_high, (row.accuracy, expected)

"""Which items a run asks: all of a benchmark's items, or a seeded sample of them.

One sampler for every way a set is named: `run BENCH --param ... --limit N --seed S`,
`generate BENCH --param ... --n N --seed S` (and the Stimulus lab's export), a folder `generate`
wrote asked again (its `probe_set.json`), and the playground's Evaluate tab, so the same
description picks the same items everywhere (and so hits the same cached answers).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from probes.core.benchmark import Benchmark
from probes.core.registry import get_benchmark
from probes.core.types import Item


def select_items(items: list[Item], limit: int | None, seed: int) -> list[Item]:
    """All items, or `limit` of them sampled with `seed`. A larger limit with the same seed
    keeps the smaller sample and adds to it, so runs can grow without re-asking."""
    if limit is None or limit >= len(items):
        return list(items)
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    return [items[i] for i in sorted(order[:limit])]


def draw_set(
    benchmark_id: str,
    params: Mapping[str, Sequence[str]],
    limit: int | None,
    seed: int,
    data: str | None = None,
) -> tuple[Benchmark, list[Item]]:
    """The benchmark as `params` (NAME -> values) build it, and `limit` of its items sampled
    with `seed` (all of them for None). `seed` picks the sample and nothing else: a family drawn
    with random positions takes its design seed as a parameter like any other (`seed=3`), so
    `generate --n N --seed S` and `run --limit N --seed S` of one description ask the same items."""
    benchmark = get_benchmark(benchmark_id, data=data, params={name: list(values) for name, values in params.items()})
    return benchmark, select_items(benchmark.items(), limit, seed)

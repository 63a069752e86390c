"""One benchmark's results read as arrays (ui/scoreboard/answers.py) say what the results say, and
the views counted from them (mode agreement's coverage, latencies, the comparisons' keys and
pairs) agree with the same counted from the stores' plain rows, on random stores: two of them
(an operator's and a visitor's, sharing some keys), every status, ungraded replies, missing
latencies, other benchmarks and origins around."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from probes.analysis.paired import CODED_COLUMNS, CompareError, Comparison, compare_coded, compare_verdicts
from probes.core.types import Result, Status
from probes.running.cells import Where
from probes.running.store import Store
from ui.scoreboard import answers as arrays
from ui.scoreboard import items
from ui.scoreboard.data import ALL, Filters

BENCHMARK = "illusion/mueller-lyer"
MODELS = ["openai/gpt-4o", "anthropic/claude", "hf/qwen", "sim/odd name, with comma"]
MODES = ["0-shot", "4-shot", "0-shot+CoT", "4-shot+CoT"]
PERTURBATIONS = ["none", "grayscale", "flip-horizontal"]
PLAIN = ("model", "mode", "perturbation", "item_id", "status", "correct", "latency")


def fill(store: Store, rng: random.Random, items_: int, share: float) -> None:
    results = []
    for model in rng.sample(MODELS, rng.randint(2, len(MODELS))):
        for mode in rng.sample(MODES, rng.randint(1, len(MODES))):
            for perturbation in rng.sample(PERTURBATIONS, rng.randint(1, len(PERTURBATIONS))):
                for i in range(items_):
                    if rng.random() > share:
                        continue
                    status = rng.choice([*Status] + [Status.ANSWERED] * 4)
                    correct = None if status is Status.ERROR or rng.random() < 0.1 else rng.random() < 0.6
                    latency = None if rng.random() < 0.15 else rng.lognormvariate(0, 1)
                    origin_benchmark = BENCHMARK if rng.random() < 0.9 else "blind/touching-circles"
                    results.append(Result(origin_benchmark, f"item-{i}", model, mode, perturbation, status,
                                          correct=correct, score=None if correct is None else float(correct),
                                          latency=latency))  # fmt: skip
    store.record_many([(r, None, "") for r in results])


@pytest.fixture
def stores(tmp_path):
    opened = []

    def make(seed: int) -> list[Store]:
        rng = random.Random(seed)
        for name, size in (("operator", rng.randint(5, 40)), ("visitor", rng.randint(0, 10))):
            store = Store(tmp_path / f"{seed}-{name}.sqlite")
            fill(store, rng, size, rng.uniform(0.3, 1.0))
            opened.append(store)
        return opened[-2:]

    yield make
    for store in opened:
        store.close()


def plain(stores: list[Store]) -> list[tuple]:
    where = Where(BENCHMARK, origins=("run",))
    return [row for store in stores for row in store.rows(PLAIN, where)]


@pytest.mark.parametrize("seed", range(12))
def test_the_arrays_hold_every_result_as_the_store_does(stores, seed, monkeypatch):
    opened = stores(seed)
    read = arrays.read(opened, BENCHMARK, ["run", "human"])
    rows = plain(opened)
    decoded = [
        (read.models[read.model[i]], read.modes[read.mode[i]], read.perturbations[read.perturbation[i]],
         read.item_ids[read.item[i]], read.statuses[read.status[i]],
         None if read.correct[i] == arrays.NO_VERDICT else int(read.correct[i]),
         None if math.isnan(read.latency[i]) else float(read.latency[i]))
        for i in range(len(read))
    ]  # fmt: skip
    assert decoded == [(*r[:5], None if r[5] is None else int(r[5] != 0), r[6]) for r in rows]
    monkeypatch.setattr(items, "answers", lambda *_: read)
    check_views(read, rows)


def check_views(read, rows) -> None:
    graded = [r for r in rows if r[4] != "error" and r[5] is not None]
    # mode agreement's coverage: per model, how many (item, perturbation) each set of modes graded
    coverage = items.graded_items(None, BENCHMARK, ALL, ["run"])
    for model, (modes, masks) in coverage.items():
        held: dict[tuple, int] = {}
        for m, mode, perturbation, item_id, *_ in graded:
            if m == model:
                held[(item_id, perturbation)] = held.get((item_id, perturbation), 0) | 1 << modes.index(mode)
        assert masks == Counter(held.values())
    assert set(coverage) == {r[0] for r in graded}
    # latencies under a filter
    for filters in (
        Filters(BENCHMARK),
        Filters(BENCHMARK, perturbation="grayscale"),
        Filters(BENCHMARK, mode="4-shot"),
    ):
        seconds: dict[tuple, list[float]] = {}
        for m, mode, perturbation, _, status, _, latency in rows:
            if (
                status != "error"
                and latency is not None
                and filters.perturbation in (ALL, perturbation)
                and (filters.mode in (ALL, mode))
            ):
                seconds.setdefault((m, mode), []).append(latency)
        expected = {k: (len(v), math.fsum(v) / len(v), sorted(v)[len(v) // 2]) for k, v in seconds.items()}
        assert items.latencies(None, filters, ["run"]) == expected
    # the comparisons' keys and pairs, along each axis
    for axis, ignore, at in (("model", "models", 0), ("mode", "mode", 1), ("perturbation", "perturbation", 2)):
        others = [i for i in range(3) if i != at]
        keys: dict[str, set] = {}
        for r in graded:
            keys.setdefault(r[at], set()).add((r[3], *(r[i] for i in others)))
        found = items.graded_keys(None, Filters(BENCHMARK), ["run"], ignore, axis)
        assert {v: len(k) for v, k in found.items()} == {v: len(k) for v, k in keys.items()}
        for a in keys:
            for b in keys:
                shared = len(set(found[a].tolist()) & set(found[b].tolist()))
                assert shared == len(keys[a] & keys[b])
        chosen = sorted(keys)[:3]
        coded = items.compared(None, Filters(BENCHMARK), ["run"], ignore, axis, chosen)
        decoded = [
            tuple(coded.names[c][coded.codes[c][i]] for c in CODED_COLUMNS) + (coded.usable[i], coded.right[i])
            for i in range(len(coded.usable))
        ]
        verdicts = [(BENCHMARK, r[3], *r[:3], r[4], r[5]) for r in rows if r[at] in chosen]
        assert Counter(decoded) == Counter(
            (*v[:5], v[5] != "error" and v[6] is not None, bool(v[6]) and v[5] == "answered") for v in verdicts
        )
        if len(chosen) >= 2:  # a key in both stores is two results: an error both ways
            comparisons = [Comparison(chosen[0], b, axis) for b in chosen[1:]]
            assert outcome(compare_coded, coded, comparisons) == outcome(compare_verdicts, verdicts, comparisons)


def outcome(compare, verdicts, comparisons):
    try:
        return compare(verdicts, comparisons)
    except CompareError:
        return "two results for one key"


def test_a_value_written_between_the_names_and_the_rows_is_read_again(stores, monkeypatch):
    """A model first written after the names were read comes back without a number: the read is
    made again, and where the store keeps changing it says so rather than showing a wrong view."""
    opened = stores(99)
    names = arrays._names
    calls = []

    def stale(stores_, where):
        calls.append(1)
        found = names(stores_, where)
        return {**found, "model": found["model"][1:]} if len(calls) == 1 else found

    monkeypatch.setattr(arrays, "_names", stale)
    read = arrays.read(opened, BENCHMARK, ["run"])
    assert len(calls) == 2 and len(read) == len(plain(opened))
    monkeypatch.setattr(arrays, "_names", lambda s, w: {**names(s, w), "model": []})
    with pytest.raises(arrays.ChangingStore, match="changed while they were read"):
        arrays.read(opened, BENCHMARK, ["run"])


def test_no_benchmark_reads_nothing():
    empty = arrays.answers(None, None, ["run"])
    assert len(empty) == 0 and empty.graded().size == 0


def test_what_is_read_is_kept_for_the_same_counts_and_within_a_bound(stores, monkeypatch):
    """Read once per state of the stores (the same tally), again for a new one; the oldest reads
    let go once more than KEPT_ROWS results are kept, the newest always kept."""
    from contextlib import contextmanager

    opened = stores(7)

    class Tally:
        @contextmanager
        def opened(self):
            yield opened

    monkeypatch.setattr(arrays, "_kept", type(arrays._kept)())
    first, second = Tally(), Tally()
    read = arrays.answers(first, BENCHMARK, ["run"])
    assert arrays.answers(first, BENCHMARK, ["run"]) is read and len(read) > 0
    assert arrays.answers(second, BENCHMARK, ["run"]) is not read  # the stores changed: a new tally
    assert len(arrays._kept) == 2
    monkeypatch.setattr(arrays, "KEPT_ROWS", len(read))
    other = arrays.answers(first, "blind/touching-circles", ["run"])
    assert [kept for _, kept in arrays._kept.values()] == [other] and len(other) > 0

"""The Scoreboard's views of single results: which items each mode gets right (mode agreement),
latencies with their medians, and the items a comparison pairs. Counts cannot answer these, so
each reads the single results it needs, and only those: one benchmark, the series shown, from
every store a visitor reads (public mode: the operator's, then their own), by the stores'
`results_series` index, as a few columns rather than Results where it can. They run only while
their view is open (ui/scoreboard/__init__.py), and what they read is kept with the counts' state
(`derived`), so reopening a view costs nothing until a store changes."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from probes.analysis.paired import VERDICT_COLUMNS, Verdict
from probes.analysis.scoring import agreement_of
from probes.running.cells import Where
from ui.scoreboard.data import ALL, Filters, Tally, derived, mode_order

Coverage = dict[str, tuple[list[str], Counter]]  # model -> (its modes, graded (item, perturbation)s per mask)


def _rows(tally: Tally, columns: Sequence[str], where: Where, graded: bool = False,
          timed: bool = False) -> list[tuple]:  # fmt: skip
    with tally.opened() as stores:
        return [row for store in stores for row in store.rows(columns, where, graded=graded, timed=timed)]


# --- mode agreement ------------------------------------------------------------------------------


def graded_items(tally: Tally, benchmark: str | None, perturbation: str, origins: Iterable[str]) -> Coverage:
    """model -> (its modes, how many (item, perturbation) each set of those modes graded: a mask
    of the modes' positions in that list -> count). A set of modes shares the items whose mask
    holds all of them: a sum over a few masks, where intersecting sets of every item took a
    third of a second at a million results."""
    wanted = tuple(sorted(origins))

    def read(t: Tally) -> Coverage:
        where = Where(benchmark, perturbations=() if perturbation == ALL else (perturbation,), origins=wanted)
        bits: dict[str, dict[str, int]] = {}
        masks: dict[str, dict[tuple[str, str], int]] = {}
        for model, mode, item_id, perturbed in _rows(t, ("model", "mode", "item_id", "perturbation"), where, True):
            own = bits.setdefault(model, {})
            bit = own.get(mode)
            if bit is None:
                bit = own[mode] = 1 << len(own)
            held = masks.setdefault(model, {})
            key = (item_id, perturbed)
            held[key] = held.get(key, 0) | bit
        return {model: (list(bits[model]), Counter(held.values())) for model, held in masks.items()}

    return derived(tally, f"graded\x1f{benchmark}\x1f{perturbation}\x1f{wanted}", read)


def agreement_defaults(
    tally: Tally, benchmark: str | None, model: str | None, origins: Iterable[str], perturbation: str = ALL
) -> tuple[str | None, list[str], list[str]]:
    """The model and the two or three modes whose agreement is worth showing: those sharing the
    most graded items (a model and modes with no item in common draw an empty diagram). A model
    given and asked in several modes is kept. Returns (model, its modes, the modes chosen)."""
    items = graded_items(tally, benchmark, perturbation, origins)
    if not items:
        return None, [], []
    return _best_modes(items, model)


def _best_modes(items: Coverage, model: str | None) -> tuple[str, list[str], list[str]]:
    def best(name: str) -> tuple[int, int, list[str]]:
        asked, counts = items[name]
        bit = {mode: 1 << position for position, mode in enumerate(asked)}
        modes = sorted(asked, key=mode_order)
        found = (0, 0, modes[:3])
        for size in (2, 3):
            for combo in itertools.combinations(modes, size):
                want = sum(bit[m] for m in combo)
                shared = sum(count for mask, count in counts.items() if mask & want == want)
                if (shared, size) > found[:2]:
                    found = (shared, size, list(combo))
        return found

    candidates = [model] if model in items and len(items[model][0]) > 1 else sorted(items)
    chosen = max(candidates, key=lambda name: (best(name)[0], -candidates.index(name)))
    return chosen, sorted(items[chosen][0], key=mode_order), best(chosen)[2]


def agreement(tally: Tally, filters: Filters, origins: Iterable[str], model: str, modes: Sequence[str]) -> dict:
    """`probes.analysis.scoring.mode_agreement` of one model in these modes, on the filters'
    benchmark and perturbation, from the graded replies' verdicts alone."""
    perturbations = () if filters.perturbation == ALL else (filters.perturbation,)
    where = Where(filters.benchmark, (model,), tuple(modes), perturbations, tuple(sorted(origins)))
    rows = _rows(tally, ("item_id", "perturbation", "mode", "correct"), where, graded=True)
    graded = (
        ((filters.benchmark, model, perturbed, item_id), mode, correct) for item_id, perturbed, mode, correct in rows
    )
    return agreement_of(graded, sorted(modes, key=mode_order))


# --- latency ---------------------------------------------------------------------------------------


def latencies(
    tally: Tally, filters: Filters, origins: Iterable[str]
) -> dict[tuple[str, str], tuple[int, float, float]]:
    """(model, mode) -> (replies, mean seconds, median seconds), errors left out (they never got
    a reply). The median is the upper one of an even count, as the table always showed it."""
    seconds: dict[tuple[str, str], list[float]] = defaultdict(list)
    for model, mode, latency in _rows(tally, ("model", "mode", "latency"), filters.where(origins), timed=True):
        seconds[(model, mode)].append(latency)
    found = {}
    for key, values in seconds.items():
        values.sort()
        found[key] = (len(values), math.fsum(values) / len(values), values[len(values) // 2])
    return found


# --- comparisons -----------------------------------------------------------------------------------


def graded_keys(tally: Tally, where: Where, axis: str) -> dict[str, set[tuple]]:
    """Per value of the axis (model, mode or perturbation), the (item, other axes) it has a graded
    answer for."""
    others = [a for a in ("model", "mode", "perturbation") if a != axis]

    def read(t: Tally) -> dict[str, set[tuple]]:
        found: dict[str, set[tuple]] = {}
        for value, item_id, *rest in _rows(t, (axis, "item_id", *others), where, graded=True):
            found.setdefault(value, set()).add((item_id, *rest))
        return found

    return derived(tally, f"keys\x1f{axis}\x1f{where}", read)


def compared(tally: Tally, where: Where) -> list[Verdict]:
    """What pairing reads of the results a comparison pairs (VERDICT_COLUMNS), from the stores'
    results_series index alone: no Result is made (a million results' benchmark pairs in about
    a second, where making Results took eight)."""
    return _rows(tally, VERDICT_COLUMNS, where)

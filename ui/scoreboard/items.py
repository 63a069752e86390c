"""The Scoreboard's views of single results: which items each mode gets right (mode agreement),
latencies with their medians, and the items a comparison pairs. Counts cannot answer these, so
each works from the single results of one benchmark, from every store a visitor reads (public
mode: the operator's, then their own), read once as arrays (ui/scoreboard/answers.py) and kept
until a store changes: the views select and count there. They run only while their view is open
(ui/scoreboard/__init__.py)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from probes.analysis.paired import Coded, dense_keys
from probes.analysis.scoring import agreement_of
from ui.scoreboard.answers import answers
from ui.scoreboard.data import ALL, Filters, Tally, mode_order

Coverage = dict[str, tuple[list[str], Counter]]  # model -> (its modes, graded (item, perturbation)s per mask)


# --- mode agreement ------------------------------------------------------------------------------


def graded_items(tally: Tally, benchmark: str | None, perturbation: str, origins: Iterable[str]) -> Coverage:
    """model -> (its modes, how many (item, perturbation) each set of those modes graded: a mask
    of the modes' positions in that list -> count). A set of modes shares the items whose mask
    holds all of them: a sum over a few masks, where intersecting sets of every item took a
    third of a second at a million results."""
    found = answers(tally, benchmark, origins)
    graded = found.graded() & found.passing(Filters(benchmark, perturbation=perturbation))
    coverage: Coverage = {}
    for model in np.unique(found.model[graded]).tolist():
        rows = graded & (found.model == model)
        modes, position = np.unique(found.mode[rows], return_inverse=True)
        key_of = dense_keys(found.item[rows], found.perturbation[rows])  # one number per (item, perturbation)
        masks = [0] * (int(key_of.max()) + 1)
        for key, bit in zip(key_of.tolist(), position.tolist(), strict=True):
            masks[key] |= 1 << bit
        coverage[found.models[model]] = ([found.modes[m] for m in modes.tolist()], Counter(masks))
    return coverage


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
    found = answers(tally, filters.benchmark, origins)
    rows = np.flatnonzero(
        found.graded() & found.passing(Filters(filters.benchmark, (model,), perturbation=filters.perturbation))
        & np.isin(found.mode, found.codes("mode", modes))
    )  # fmt: skip
    keys = zip(found.perturbation[rows].tolist(), found.item[rows].tolist(), strict=True)  # one model, one benchmark
    names = [found.modes[m] for m in found.mode[rows].tolist()]
    return agreement_of(zip(keys, names, found.correct[rows].tolist(), strict=True), sorted(modes, key=mode_order))


# --- latency ---------------------------------------------------------------------------------------


def latencies(
    tally: Tally, filters: Filters, origins: Iterable[str]
) -> dict[tuple[str, str], tuple[int, float, float]]:
    """(model, mode) -> (replies, mean seconds, median seconds), errors left out (they never got
    a reply). The median is the upper one of an even count, as the table always showed it."""
    found = answers(tally, filters.benchmark, origins)
    rows = np.flatnonzero(found.timed() & found.passing(filters))
    series = found.model[rows].astype(np.int64) * len(found.modes) + found.mode[rows]
    order = np.lexsort((found.latency[rows], series))
    series, seconds = series[order], found.latency[rows][order]
    starts = np.flatnonzero(np.diff(series, prepend=-1)).tolist()  # where each series begins
    latency = {}
    for start, end in itertools.pairwise([*starts, len(series)]):
        model, mode = divmod(int(series[start]), len(found.modes))
        values = seconds[start:end].tolist()
        latency[(found.models[model], found.modes[mode])] = (len(values), math.fsum(values) / len(values),
                                                              values[len(values) // 2])  # fmt: skip
    return latency


# --- comparisons -----------------------------------------------------------------------------------

OTHERS = {"model": ("mode", "perturbation"), "mode": ("model", "perturbation"), "perturbation": ("model", "mode")}


def graded_keys(
    tally: Tally, filters: Filters, origins: Iterable[str], ignore: str, axis: str
) -> dict[str, np.ndarray]:
    """Per value of the axis (model, mode or perturbation), the (item, other axes) it has a graded
    answer for, as distinct numbers (two values share an item where they share a number), among
    the results the filters pass with the axis's own filter (`ignore`) left out."""
    found = answers(tally, filters.benchmark, origins)
    rows = found.graded() & found.passing(filters, ignore=(ignore,))
    keys = dense_keys(found.item[rows], *(found.positions(other)[rows] for other in OTHERS[axis]))
    values, names = found.positions(axis)[rows], found.names(axis)
    return {names[v]: np.unique(keys[values == v]) for v in np.unique(values).tolist()}


def compared(tally: Tally, filters: Filters, origins: Iterable[str], ignore: str, axis: str,
             chosen: Sequence[str]) -> Coded:  # fmt: skip
    """What pairing reads of the results of the chosen values of the axis that the other filters
    pass, as arrays: no Result or tuple is made (a million results' benchmark pairs in a tenth of
    a second, where making Results took eight)."""
    found = answers(tally, filters.benchmark, origins)
    rows = found.passing(filters, ignore=(ignore,)) & np.isin(found.positions(axis), found.codes(axis, chosen))
    return found.pairing(np.flatnonzero(rows))

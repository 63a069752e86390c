"""Paired comparisons: is condition A really better than condition B on the same items?

A and B are two models, two modes ("0-shot", "4-shot+CoT") or two perturbations ("none",
"flip-vertical", "rotate-options-1"). A pair is one item answered under both: same benchmark and
item id, and the same values on the two axes not compared (comparing models, an item asked in
0-shot and in 4-shot is two pairs). Each row reports, on the shared items only:

- `a_only` / `b_only`: the discordant pairs (A right and B wrong, and the reverse);
- `diff`: accuracy of A minus accuracy of B, in percentage points;
- `diff_low`, `diff_high`: a paired bootstrap 95% percentile interval of `diff`
  (`BOOTSTRAP_RESAMPLES` resamples of the shared items with replacement, seeded: the same input
  always gives the same interval);
- `p_value`: McNemar's exact test, the two-sided binomial test of the discordant pairs
  (McNemar 1947; Fagerland, Lydersen & Laake 2013, BMC Med Res Methodol 13:91),
  p = min(1, 2 P(X <= min(a_only, b_only))) with X ~ Bin(a_only + b_only, 1/2);
- `p_holm`: Holm's (1979) step-down adjustment over every row of one table.

As in scoring.py, a result with status `error` (no reply) is no answer and is left out; an
unparsed or refused reply is wrong; an ungraded result (`correct` None) is left out.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from probes.core.errors import ProbeError
from probes.core.types import Result, Status

AXES = ("model", "mode", "perturbation")
# What pairing reads of one result, in this order: a Result's fields, or a store's columns.
VERDICT_COLUMNS = ("benchmark", "item_id", "model", "mode", "perturbation", "status", "correct")
Verdict = tuple[str, str, str, str, str, str, Any]  # correct: a bool, 0/1 as stored, or None (ungraded)
AT = {name: index for index, name in enumerate(VERDICT_COLUMNS)}
ERROR, ANSWERED = Status.ERROR.value, Status.ANSWERED.value
OVERALL = "overall"  # the `benchmark` of the row pooling every benchmark's pairs
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_240_917


class CompareError(ProbeError):
    """A comparison cannot be made as asked (unknown or mismatched A and B); the message says why."""


@dataclass(frozen=True)
class Comparison:
    """One comparison of a table: `a` against `b` along `axis` (None: found from the results),
    on the results whose other axes have the values in `where` (e.g. {"model": "openai/gpt-4o"}
    to compare two perturbations for one model only)."""

    a: str
    b: str
    axis: str | None = None
    where: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PairedRow:
    benchmark: str  # a benchmark id, or OVERALL for all the comparison's pairs together
    a: str
    b: str
    n_shared: int
    a_only: int
    b_only: int
    diff: float | None  # percentage points; None with no shared items
    diff_low: float | None
    diff_high: float | None
    p_value: float
    p_holm: float
    where: Mapping[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The JSON row: the fields above, plus the `where` restrictions (e.g. "model") if any."""
        row = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "where"}
        return {"benchmark": row.pop("benchmark"), **self.where, **row}


# --- statistics ----------------------------------------------------------------------------


def binomial_cdf_half(k: int, n: int) -> Fraction:
    """P(X <= k) for X ~ Bin(n, 1/2), exactly: a sum of binomial coefficients over 2**n, in
    integers (so n in the tens of thousands loses nothing to rounding)."""
    if n < 0:
        raise ValueError(f"n must be at least 0, got {n}")
    if k < 0:
        return Fraction(0)
    if k >= n:
        return Fraction(1)
    total, term = 0, 1  # term = comb(n, i), updated in place: one multiply and one exact divide per step
    for i in range(k + 1):
        total += term
        term = term * (n - i) // (i + 1)
    return Fraction(total, 1 << n)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts; 1.0 with none."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = binomial_cdf_half(min(a_only, b_only), n)
    return min(1.0, float(2 * tail))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given: the i-th smallest (from 0) is
    multiplied by m - i, then made non-decreasing in that order, and capped at 1."""
    m = len(p_values)
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def bootstrap_diff_interval(
    a_only: int, b_only: int, n: int, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float]:
    """95% percentile interval of the paired accuracy difference (in percentage points) when the n
    shared items are resampled with replacement.

    A pair adds +1 (A only right), -1 (B only right) or 0 to the difference, so a resample's
    difference depends only on how many of each it draws: a multinomial draw of n over the three
    observed shares. That is the same distribution as drawing item indices, in memory that does not
    grow with n.
    """
    if n <= 0:
        raise ValueError("a bootstrap needs at least one shared item")
    shares = [a_only / n, b_only / n, (n - a_only - b_only) / n]
    counts = np.random.default_rng(seed).multinomial(n, shares, size=resamples)
    diffs = 100.0 * (counts[:, 0] - counts[:, 1]) / n
    low, high = np.percentile(diffs, [2.5, 97.5])
    return float(low), float(high)


# --- pairing -------------------------------------------------------------------------------


def verdict_of(result: Result) -> Verdict:
    return (result.benchmark, result.item_id, result.model, result.mode, result.perturbation, result.status.value,
            result.correct)  # fmt: skip


def values_of(results: Iterable[Result], axis: str) -> list[str]:
    """The distinct values of one axis in these results, sorted (to build comparisons from)."""
    _check_axis(axis)
    return sorted({getattr(r, axis) for r in results})


def all_pairs(
    values: Sequence[str], axis: str | None = None, where: Mapping[str, str] | None = None
) -> list[Comparison]:
    """Every pair of `values` once, in the order given: all_pairs(values_of(results, "model"))."""
    return [Comparison(a, b, axis, dict(where or {})) for a, b in itertools.combinations(values, 2)]


def detect_axis(results: Iterable[Result], a: str, b: str) -> str:
    """The one axis on which both A and B occur in these results; CompareError if none or several."""
    verdicts = [verdict_of(r) for r in results]
    return _detect_axis({axis: {v[AT[axis]] for v in verdicts} for axis in AXES}, a, b)


def _detect_axis(seen: Mapping[str, set[str]], a: str, b: str) -> str:
    """The axis A and B are both values of, given each axis's values `seen`."""
    if a == b:
        raise CompareError(f"compare two different conditions; both are {a!r}")
    both = [axis for axis in AXES if a in seen[axis] and b in seen[axis]]
    if len(both) == 1:
        return both[0]
    if len(both) > 1:
        raise CompareError(f"{a!r} and {b!r} are each a {' and a '.join(both)}; say which axis to compare")

    def where_found(name: str) -> str:
        axes = [axis for axis in AXES if name in seen[axis]]
        return f"a {' and a '.join(axes)}" if axes else "not in these results"

    known = "; ".join(f"{axis}s: {', '.join(sorted(seen[axis])) or '(none)'}" for axis in AXES)
    raise CompareError(
        f"cannot compare {a!r} ({where_found(a)}) with {b!r} ({where_found(b)}): name two models, two modes "
        f"or two perturbations that both have results. Known {known}"
    )


def compare(
    results: Iterable[Result],
    a: str,
    b: str,
    axis: str | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[PairedRow]:
    """`report --compare A B`: one row per benchmark with pairs of A and B (plus an OVERALL row
    when there are several), Holm-adjusted over those rows."""
    return compare_many(results, [Comparison(a, b, axis)], resamples, seed)


def compare_many(
    results: Iterable[Result],
    comparisons: Sequence[Comparison],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[PairedRow]:
    """Several comparisons in one table, Holm-adjusted over all its rows. E.g. all pairs of
    models: compare_many(rs, all_pairs(values_of(rs, "model"))); each model's "none" against
    "flip-vertical": [Comparison("none", "flip-vertical", "perturbation", {"model": m}) for m in
    values_of(rs, "model")].

    A benchmark where A or B has results but no item is shared gets a row with n_shared 0 (so the
    user sees nothing was paired); such a row tests nothing, keeps p = 1 and is not counted in
    Holm's family.
    """
    return compare_verdicts([verdict_of(r) for r in results], comparisons, resamples, seed)


def compare_verdicts(
    verdicts: Sequence[Verdict],
    comparisons: Sequence[Comparison],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[PairedRow]:
    """`compare_many` on what pairing reads of each result (VERDICT_COLUMNS, as a store's `rows`
    gives them from its index): a million results need no Result made."""
    return compare_coded(Coded.of(verdicts), comparisons, resamples, seed)


def compare_coded(
    coded: Coded,
    comparisons: Sequence[Comparison],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[PairedRow]:
    """`compare_verdicts` on verdicts already coded as arrays (the Scoreboard's Compare view)."""
    rows: list[PairedRow] = []
    keys: dict[tuple, np.ndarray] = {}  # each selection's pairing keys, worked out once for the table
    for comparison in comparisons:
        rows += _rows(coded, comparison, resamples, seed, keys)
    family = [i for i, row in enumerate(rows) if row.n_shared > 0]
    adjusted = holm([rows[i].p_value for i in family])
    holm_of = dict(zip(family, adjusted, strict=True))
    return [replace(row, p_holm=holm_of.get(i, 1.0)) for i, row in enumerate(rows)]


CODED_COLUMNS = ("benchmark", "item_id", *AXES)


@dataclass(frozen=True)
class Coded:
    """Verdicts as arrays: per verdict the position of its benchmark, item and axes' values in
    `names[column]` (`codes[column]`), whether it is `usable` (a reply graded right or wrong) and
    whether it is `right` (graded right, and answered rather than unparsed or refused)."""

    names: Mapping[str, Sequence[str]]
    codes: Mapping[str, np.ndarray]
    usable: np.ndarray
    right: np.ndarray

    @classmethod
    def of(cls, verdicts: Sequence[Verdict]) -> Coded:
        names, codes = {}, {}
        for column in CODED_COLUMNS:
            names[column], codes[column] = positions([v[AT[column]] for v in verdicts])
        usable = np.array([v[5] != ERROR and v[6] is not None for v in verdicts], dtype=bool)
        right = np.array([bool(v[6]) and v[5] == ANSWERED for v in verdicts], dtype=bool)
        return cls(names, codes, usable, right)

    def position(self, column: str, value: str) -> int:
        """`value`'s position among the column's names (-1: not there)."""
        names = self.names[column]
        return names.index(value) if value in names else -1

    def values(self, column: str, rows: np.ndarray) -> set[str]:
        return {self.names[column][c] for c in np.unique(self.codes[column][rows]).tolist()}


def positions(values: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """(the distinct values in order of first appearance, each value's position among them)."""
    index = {value: position for position, value in enumerate(dict.fromkeys(values))}
    return list(index), np.fromiter(map(index.__getitem__, values), np.int64, len(values))


def _check_axis(axis: str) -> None:
    if axis not in AXES:
        raise CompareError(f"unknown axis {axis!r}: one of {', '.join(AXES)}")


def dense_keys(*columns: np.ndarray) -> np.ndarray:
    """One number per distinct combination of the columns' values (0, 1, ...): each step keeps the
    numbers below rows x values, so no product of many columns' sizes can overflow."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        key = np.unique(key * (int(column.max(initial=0)) + 1) + column, return_inverse=True)[1].astype(np.int64)
    return key


def _rows(coded: Coded, comparison: Comparison, resamples: int, seed: int,
          kept: dict[tuple, np.ndarray]) -> list[PairedRow]:  # fmt: skip
    a, b = comparison.a, comparison.b
    for name in comparison.where:
        _check_axis(name)
    if comparison.axis in comparison.where:
        raise CompareError(
            f"cannot compare along {comparison.axis} while also fixing {comparison.axis}="
            f"{comparison.where[comparison.axis]!r}"
        )
    chosen = np.ones(len(coded.usable), dtype=bool)
    for name, value in comparison.where.items():
        chosen &= coded.codes[name] == coded.position(name, value)
    if comparison.axis is None:
        axis = _detect_axis({name: coded.values(name, chosen) for name in AXES}, a, b)
    else:
        _check_axis(comparison.axis)
        if a == b:
            raise CompareError(f"compare two different conditions; both are {a!r}")
        axis = comparison.axis
        present = coded.values(axis, chosen)
        missing = [name for name in (a, b) if name not in present]
        if missing:
            raise CompareError(
                f"no results with {axis} {' or '.join(map(repr, missing))}; known: {', '.join(sorted(present)) or '(none)'}"
            )
    memo = (axis, tuple(sorted(comparison.where.items())))
    if memo not in kept:  # a pair is one item under both sides: same benchmark, item and other two axes
        kept[memo] = dense_keys(*(coded.codes[c] for c in CODED_COLUMNS if c != axis))
    key = kept[memo]
    side_a, side_b = (chosen & (coded.codes[axis] == coded.position(axis, side)) for side in (a, b))
    usable_a, usable_b = (_usable(coded, key, side, name, axis) for side, name in ((side_a, a), (side_b, b)))
    shared, at_a, at_b = np.intersect1d(key[usable_a], key[usable_b], assume_unique=True, return_indices=True)
    right_a, right_b = coded.right[usable_a][at_a], coded.right[usable_b][at_b]
    benchmark = coded.codes["benchmark"][usable_a][at_a]
    size = len(coded.names["benchmark"])
    n = np.bincount(benchmark, minlength=size)
    a_only = np.bincount(benchmark[right_a & ~right_b], minlength=size)
    b_only = np.bincount(benchmark[right_b & ~right_a], minlength=size)
    shown = coded.values("benchmark", side_a | side_b)  # a benchmark shows even with nothing usable
    rows = []
    for name in sorted(shown):
        at = coded.position("benchmark", name)
        rows.append(_row(name, comparison, int(n[at]), int(a_only[at]), int(b_only[at]), resamples, seed))
    if len(rows) > 1:
        rows.append(_row(OVERALL, comparison, len(shared), int(a_only.sum()), int(b_only.sum()), resamples, seed))
    return rows


def _usable(coded: Coded, key: np.ndarray, side: np.ndarray, name: str, axis: str) -> np.ndarray:
    """The rows of one side graded right or wrong, in order; CompareError where one item has two."""
    rows = np.flatnonzero(side & coded.usable)
    _, first = np.unique(key[rows], return_index=True)
    if len(first) < len(rows):
        again = rows[np.setdiff1d(np.arange(len(rows)), first)[0]]
        benchmark, item_id, *others = (coded.names[c][coded.codes[c][again]] for c in CODED_COLUMNS if c != axis)
        raise CompareError(f"two results for {benchmark} item {item_id} under {name!r}: {(item_id, *others)}")
    return rows


def _row(benchmark: str, comparison: Comparison, n: int, a_only: int, b_only: int, resamples: int,
         seed: int) -> PairedRow:  # fmt: skip
    diff = low = high = None
    if n:
        diff = round(100 * (a_only - b_only) / n, 2)
        low, high = (round(x, 2) for x in bootstrap_diff_interval(a_only, b_only, n, resamples, seed))
    p = mcnemar_exact(a_only, b_only)
    return PairedRow(benchmark, comparison.a, comparison.b, n, a_only, b_only, diff, low, high, p, p,
                     dict(comparison.where))  # fmt: skip

"""Grading single answers and aggregating results into scoreboard rows.

Accuracy is the mean score of every result the model replied to: an unparsed or refused reply
is wrong (score 0), as a person's unreadable answer would be. Results with status `error` (no
reply at all) are not the model's answer and are left out of n; they are counted in `errors` and
retried by the next run. A benchmark may score other than right/wrong (texture generation's match
rate) and may leave malformed replies out of n, as its paper does.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from probes.core.types import Result, Status

Z_95 = 1.959963984540054


def wilson(correct: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a proportion, as fractions in [0, 1]."""
    if n == 0:
        return 0.0, 0.0
    p = correct / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Row:
    benchmark: str
    model: str
    mode: str
    perturbation: str
    group: str  # "overall", or "name=value"
    n: int | None  # None on reference rows: a paper's percentage, not our count
    correct: int | None
    accuracy: float | None  # percent
    ci_low: float | None
    ci_high: float | None
    unparsed: int | None
    errors: int | None
    refused: int | None = 0
    ungraded: int | None = 0  # replies left out of n: no right answer under this condition (the reason is stored)
    mean_latency: float | None = None
    source: str = "measured"  # measured | published | chance
    paper: str | None = None  # for published rows
    # What a reader must know before comparing a published row with ours, from its JSON file:
    # measured on another item set (DiscriBench's 100 items, grid count's stated range) or
    # another question (VLMBias's pooled yes/no figures). None: nothing to add.
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        # Every field is a plain value: dataclasses.asdict's deep copies cost a CSV/JSON download
        # of a few hundred rows tens of milliseconds.
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def bucketed(results: Iterable[Result], by: Sequence[str] = ()) -> dict[tuple[str, str, str, str, str], list[Result]]:
    """Results by (benchmark, model, mode, perturbation, group): `overall`, and one bucket per
    value of each group name in `by`."""
    buckets: dict[tuple[str, str, str, str, str], list[Result]] = defaultdict(list)
    for result in results:
        head = (result.benchmark, result.model, result.mode, result.perturbation)
        buckets[(*head, "overall")].append(result)
        for name in by:
            if name in result.groups:
                buckets[(*head, f"{name}={result.groups[name]}")].append(result)
    return buckets


def aggregate(results: Iterable[Result], by: Sequence[str] = ()) -> list[Row]:
    """One `overall` row per (benchmark, model, mode, perturbation), plus one row per value of
    each group name in `by`."""
    return rows_from_counts({key: Counts.of(members) for key, members in bucketed(results, by).items()})


def rows_from_counts(counts: Mapping[tuple[str, str, str, str, str], Counts]) -> list[Row]:
    """The rows of counts per (benchmark, model, mode, perturbation, group), in report order:
    what `aggregate` gives for the results counted (the store keeps such counts: see
    probes/running/cells.py)."""
    return sorted((counts[key].row(*key) for key in counts), key=_row_order)


def _two_sum(high: float, low: float, value: float) -> tuple[float, float]:
    """(high, low) + value, kept as an unevaluated pair whose exact sum is the exact sum (Neumaier):
    a score's or latency's sum then does not depend on the order of adding, nor on what was added
    and taken away again, so counts kept in the store and merged give the row a sum of the same
    results gives."""
    total = high + value
    error = (high - total) + value if abs(high) >= abs(value) else (value - total) + high
    return total, low + error


@dataclass(slots=True)  # kept by the thousand per view (ui/scoreboard/data.py): no __dict__ each
class Counts:
    """What a scoreboard row is built from, for any set of results: addable, so counts kept per
    cell (origin, store) merge into the row of their union. Sums are (high, low) pairs whose
    exact sum is the sum of the values (see `_two_sum`)."""

    results: int = 0
    scored: int = 0  # replies with a score: n
    score: tuple[float, float] = (0.0, 0.0)
    graded: int = 0  # correct not None (right/wrong tasks)
    correct: int = 0
    unparsed: int = 0
    refused: int = 0
    errors: int = 0
    ungraded: int = 0
    timed: int = 0  # replies with a latency
    latency: tuple[float, float] = (0.0, 0.0)

    @classmethod
    def of(cls, members: Iterable[Result]) -> Counts:
        counts = cls()
        scores: list[float] = []
        latencies: list[float] = []
        for r in members:
            counts.results += 1
            replied = r.status is not Status.ERROR
            if replied and r.score is not None:
                scores.append(r.score)
            if r.correct is not None:
                counts.graded += 1
                counts.correct += bool(r.correct)
            counts.unparsed += r.status is Status.UNPARSED
            counts.refused += r.status is Status.REFUSED
            counts.errors += not replied
            counts.ungraded += bool(r.ungraded) and replied
            if replied and r.latency is not None:
                latencies.append(r.latency)
        counts.scored, counts.score = len(scores), _exact(scores)
        counts.timed, counts.latency = len(latencies), _exact(latencies)
        return counts

    def add(self, other: Counts) -> None:
        for name in _COUNTED:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.score = _merge(self.score, other.score)
        self.latency = _merge(self.latency, other.latency)

    def row(self, benchmark: str, model: str, mode: str, perturbation: str, group: str) -> Row:
        n = self.scored
        total = self.score[0] + self.score[1]  # the exactly rounded sum of the scores
        # Wilson needs whole successes; for right/wrong scores `total` is exactly the count.
        low, high = wilson(round(total), n)
        latency = self.latency[0] + self.latency[1]
        return Row(
            benchmark, model, mode, perturbation, group,
            n=n,
            correct=self.correct if self.graded else None,  # None: a match-rate task
            accuracy=round(100 * total / n, 2) if n else None,
            ci_low=round(100 * low, 2) if n else None,
            ci_high=round(100 * high, 2) if n else None,
            unparsed=self.unparsed,
            errors=self.errors,
            refused=self.refused,
            ungraded=self.ungraded,
            mean_latency=round(latency / self.timed, 3) if self.timed else None,
        )  # fmt: skip


_COUNTED = ("results", "scored", "graded", "correct", "unparsed", "refused", "errors", "ungraded", "timed")


def _exact(values: Sequence[float]) -> tuple[float, float]:
    """The exact sum of `values` as a (high, low) pair: fsum rounds it once, the rest is low."""
    high = math.fsum(values)
    return high, math.fsum([*values, -high]) if values else 0.0


def _merge(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return _two_sum(a[0], a[1] + b[1], b[0])


def _group_sort_key(group: str) -> tuple:
    """Overall first, then by group name, numeric values (including "1/4") in numeric order."""
    if group == "overall":
        return (0, "", 0.0, "")
    name, _, value = group.partition("=")
    try:
        return (1, name, float(Fraction(value)), "")
    except (ValueError, ZeroDivisionError):
        return (1, name, math.inf, value)


def _row_order(row: Row) -> tuple:
    return (row.benchmark, row.model, row.mode, row.perturbation, _group_sort_key(row.group))


PUBLISHED = Path(__file__).resolve().parents[2] / "assets" / "published"


@functools.cache
def _published() -> tuple[tuple[str, dict[str, Any]], ...]:
    rows = []
    for path in sorted(PUBLISHED.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        rows += [(document["paper"], row) for row in document["rows"]]
    return tuple(rows)


def published_rows(benchmarks: Iterable[str], by: Sequence[str] = ()) -> list[Row]:
    """The papers' own numbers for these benchmarks: overall rows, and group rows for `by`."""
    wanted = set(benchmarks)
    rows = []
    for paper, row in _published():
        name = row["group"].partition("=")[0]
        if row["benchmark"] in wanted and (row["group"] == "overall" or name in by):
            rows.append(reference_row(row["benchmark"], row["model"], row["accuracy"], "published",
                                      mode=row.get("mode", "0-shot"), group=row["group"], paper=paper,
                                      note=row.get("note")))  # fmt: skip
    return sorted(rows, key=lambda r: (r.benchmark, _group_sort_key(r.group)))


def reference_row(
    benchmark: str,
    model: str,
    accuracy: float,
    source: str,
    mode: str = "any",
    group: str = "overall",
    paper: str | None = None,
    note: str | None = None,
) -> Row:
    return Row(benchmark, model, mode, "none", group, None, None, accuracy, None, None, None, None, None,
               ungraded=None, source=source, paper=paper, note=note)  # fmt: skip


def mode_agreement(results: Iterable[Result], modes: Sequence[str]) -> dict[str, Any]:
    """Which items each mode gets right, as the regions of IllusionVQA's Venn diagrams: for every
    subset of `modes`, how many items exactly those modes answered correctly (the empty subset:
    none did).

    An item is one (benchmark, model, perturbation, item id), so several models may be passed at
    once and are counted apart. Only items graded right or wrong in every one of `modes` count:
    an error (no reply) or an ungraded reply in any mode leaves the item out, so the regions add
    up to `items` and compare like with like. An unparsed or refused reply is wrong, as in
    `aggregate`.

    Returns {"modes": [...], "items": N, "right": {mode: count}, "regions": {(mode, ...): count}},
    every region keyed by the tuple of modes (in the order given) that got the item right, all
    2**len(modes) regions present.
    """
    graded = (
        ((r.benchmark, r.model, r.perturbation, r.item_id), r.mode, r.correct)
        for r in results
        if r.status is not Status.ERROR and r.correct is not None
    )
    return agreement_of(graded, modes)


def agreement_of(graded: Iterable[tuple[Hashable, str, bool]], modes: Sequence[str]) -> dict[str, Any]:
    """`mode_agreement` from (item key, mode, correct) of graded replies (no errors, `correct`
    not None), as a store reads them without making Results; a later verdict on the same item
    and mode replaces an earlier one."""
    modes = list(modes)
    if not modes or len(set(modes)) != len(modes):
        raise ValueError(f"mode_agreement needs distinct modes; got {modes}")
    wanted = set(modes)
    verdicts: dict[Hashable, dict[str, bool]] = defaultdict(dict)
    for key, mode, correct in graded:
        if mode in wanted:
            verdicts[key][mode] = bool(correct)
    regions: dict[tuple[str, ...], int] = {
        subset: 0 for size in range(len(modes) + 1) for subset in itertools.combinations(modes, size)
    }
    right = dict.fromkeys(modes, 0)
    items = 0
    for verdict in verdicts.values():
        if len(verdict) < len(modes):
            continue
        items += 1
        subset = tuple(mode for mode in modes if verdict[mode])
        regions[subset] += 1
        for mode in subset:
            right[mode] += 1
    return {"modes": modes, "items": items, "right": right, "regions": regions}

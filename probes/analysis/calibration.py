"""Calibration of answer probabilities, per (benchmark, model, mode, perturbation, group):

- `mean_p_right`: the mean probability given to the right answer;
- `brier`: the mean over items of the sum over the item's answers of (p - [that answer is
  right])^2 (0 is perfect; a uniform guess between two answers scores 0.5);
- `ece`: expected calibration error of the chosen answer's probability, over 10 equal-width
  bins of that probability: sum over bins of (share of items in the bin) x |accuracy in the bin
  - mean probability in the bin|. The chosen answer is the parsed one; a reply whose answer was
  not read (unparsed, refused) counts its most probable answer, wrong;
- `n_prob`: the graded results that carry probabilities (only those enter the figures).
`reliability` gives a model's bins for a reliability diagram.

Results without probabilities, errors and ungraded replies (no right answer) are left out;
so is a result whose right answer is not among its probabilities' answers.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

BINS = 10
COLUMNS = ("mean_p_right", "brier", "ece", "n_prob")


@dataclass(frozen=True)
class Scored:
    """One graded result with probabilities, as calibration reads it."""

    p: Mapping[str, float]  # answer key -> probability (normalised)
    right: str  # the right answer's key
    chosen: str | None  # the parsed answer's key, None when no answer was read

    @property
    def pick(self) -> str:
        return self.chosen if self.chosen in self.p else max(self.p, key=self.p.__getitem__)

    @property
    def correct(self) -> bool:
        return self.chosen is not None and self.chosen == self.right


@dataclass(frozen=True)
class Calibration:
    mean_p_right: float
    brier: float
    ece: float
    n_prob: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    n: int
    confidence: float | None  # mean probability of the chosen answer
    accuracy: float | None  # share right


def key(value: Any) -> str:
    """As probes.reading.probabilities.answer_key (analysis reads stored values only)."""
    return str(value).strip().casefold()


def scored(target: Any, parsed: Any, answered: bool, probabilities: Mapping[str, float]) -> Scored | None:
    right = key(target)
    if target is None or right not in probabilities:
        return None
    return Scored(probabilities, right, key(parsed) if answered and parsed is not None else None)


def bins(items: Sequence[Scored]) -> list[Bin]:
    members: list[list[Scored]] = [[] for _ in range(BINS)]
    for item in items:
        confidence = item.p[item.pick]
        members[min(BINS - 1, int(confidence * BINS))].append(item)
    found = []
    for index, inside in enumerate(members):
        confidence = sum(i.p[i.pick] for i in inside) / len(inside) if inside else None
        accuracy = sum(i.correct for i in inside) / len(inside) if inside else None
        found.append(Bin(index / BINS, (index + 1) / BINS, len(inside), confidence, accuracy))
    return found


def calibration(items: Sequence[Scored]) -> Calibration | None:
    if not items:
        return None
    n = len(items)
    mean_p_right = sum(i.p[i.right] for i in items) / n
    brier = sum(sum((p - (answer == i.right)) ** 2 for answer, p in i.p.items()) for i in items) / n
    ece = sum(b.n / n * abs(b.accuracy - b.confidence) for b in bins(items) if b.n)
    return Calibration(mean_p_right, brier, ece, n)


Head = tuple[str, str, str, str, str]  # benchmark, model, mode, perturbation, group


def grouped(rows: Iterable[tuple], by: Sequence[str] = ()) -> dict[Head, list[Scored]]:
    """Rows of (benchmark, model, mode, perturbation, groups JSON, target JSON, parsed JSON,
    status, probabilities JSON), as `Store.probability_rows` reads them, by row of the report:
    `overall` and one per value of each group name in `by`."""
    found: dict[Head, list[Scored]] = defaultdict(list)
    decoded: dict[str, dict[str, str]] = {}
    for benchmark, model, mode, perturbation, groups, target, parsed, status, probabilities in rows:
        kept = json.loads(probabilities)
        item = scored(json.loads(target) if target else None, json.loads(parsed) if parsed else None,
                      status == "answered", kept.get("p") or {})  # fmt: skip
        if item is None:
            continue
        head = (benchmark, model, mode, perturbation)
        found[(*head, "overall")].append(item)
        names = decoded[groups] if groups in decoded else decoded.setdefault(groups, json.loads(groups))
        for name in by:
            if name in names:
                found[(*head, f"{name}={names[name]}")].append(item)
    return found


def calibration_by_row(rows: Iterable[tuple], by: Sequence[str] = ()) -> dict[Head, Calibration]:
    return {head: found for head, items in grouped(rows, by).items() if (found := calibration(items))}


def reliability(rows: Iterable[tuple], model: str) -> list[dict[str, Any]]:
    """A model's reliability diagram over every row it has (all its benchmarks, modes and
    conditions pooled): per bin of the chosen answer's probability, its items, mean
    probability and accuracy. For the Scoreboard's chart."""
    found = grouped(row for row in rows if row[1] == model)
    items = [item for head, members in found.items() if head[4] == "overall" for item in members]
    return [asdict(b) for b in bins(items)]

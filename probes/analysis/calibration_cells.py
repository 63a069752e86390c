"""Calibration as sums that add up, per cell (benchmark, model, mode, perturbation, origin, group
value), as the store's counts are kept (probes/running/cells.py): a view's row is the sum of its
cells, so `report` and the Scoreboard read the sums the store keeps per cell and bin
(probes/running/calibration_kept.py, from each result's `item_numbers` as it is written) and
answer every filter, breakdown and origin choice by adding a few hundred cells, never reading
results. `cell_sums` sums them from the results themselves, for a store whose kept sums cannot be
trusted (an older one opened read-only).

Every figure of probes/analysis/calibration.py is a sum over items divided by their count:
mean_p_right (the right answer's probability), brier (per item, the squared distances over its
answers), and ece, whose bins each need their count, the sum of the chosen answer's probability
and how many were right. `Sums` keeps exactly those (cells are merged as compensated pairs, so
the order in which they are added changes a figure by no more than a rounding of its last bit),
and gives the `Calibration` and `Bin`s calibration.py gives for the same items, to float
rounding (tests/probes/analysis/test_calibration_cells.py).
Which results enter, and how an item's answers are read, is calibration.py's `scored`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from probes.analysis.calibration import BINS, Bin, Calibration, Scored
from probes.analysis.calibration import key as answer_key
from probes.stimuli.lazy_numpy import np

Key = tuple[str, str, str, str, str, str]  # benchmark, model, mode, perturbation, origin, grp ('' or name=value)


def _plus(pair: tuple[float, float], value: float) -> tuple[float, float]:
    """(high, low) + value, Neumaier's compensated sum (as probes.analysis.scoring keeps sums)."""
    high, low = pair
    total = high + value
    error = (high - total) + value if abs(high) >= abs(value) else (value - total) + high
    return total, low + error


def _joined(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return _plus((a[0], a[1] + b[1]), b[0])


def _value(pair: tuple[float, float]) -> float:
    return pair[0] + pair[1]


@dataclass(slots=True)
class Sums:
    """What calibration figures are made of, for any set of scored items: addable."""

    n: int = 0
    p_right: tuple[float, float] = (0.0, 0.0)
    brier: tuple[float, float] = (0.0, 0.0)
    bin_n: list[int] = field(default_factory=lambda: [0] * BINS)
    bin_confidence: list[tuple[float, float]] = field(default_factory=lambda: [(0.0, 0.0)] * BINS)
    bin_right: list[int] = field(default_factory=lambda: [0] * BINS)

    def add_item(self, item: Scored) -> None:
        p = item.p
        right = item.right
        confidence = p[item.pick]
        index = min(BINS - 1, int(confidence * BINS))  # as calibration.bins places it
        self.n += 1
        self.p_right = _plus(self.p_right, p[right])
        self.brier = _plus(self.brier, sum((value - (answer == right)) ** 2 for answer, value in p.items()))
        self.bin_n[index] += 1
        self.bin_confidence[index] = _plus(self.bin_confidence[index], confidence)
        self.bin_right[index] += item.correct

    def add(self, other: Sums) -> None:
        self.n += other.n
        self.p_right = _joined(self.p_right, other.p_right)
        self.brier = _joined(self.brier, other.brier)
        for index in range(BINS):
            self.bin_n[index] += other.bin_n[index]
            self.bin_confidence[index] = _joined(self.bin_confidence[index], other.bin_confidence[index])
            self.bin_right[index] += other.bin_right[index]

    def bins(self) -> list[Bin]:
        """calibration.bins of the items summed."""
        found = []
        for index in range(BINS):
            n = self.bin_n[index]
            confidence = _value(self.bin_confidence[index]) / n if n else None
            accuracy = self.bin_right[index] / n if n else None
            found.append(Bin(index / BINS, (index + 1) / BINS, n, confidence, accuracy))
        return found

    def calibration(self) -> Calibration | None:
        """calibration.calibration of the items summed (None: no item)."""
        if not self.n:
            return None
        n = self.n
        ece = sum(b.n / n * abs(b.accuracy - b.confidence) for b in self.bins() if b.n)
        return Calibration(_value(self.p_right) / n, _value(self.brier) / n, ece, n)


_P = '{"p": '  # how the store writes probabilities (probes/running/store.py): the answers' first
_DECODER = json.JSONDecoder()


def answers_p(stored: str) -> dict[str, float]:
    """The answers' probabilities of a stored probabilities JSON ({"p": ..., "mass": ...,
    "top": [...]}): only the "p" object is decoded where the text starts with it (the
    alternatives at the answer token are most of the text, and calibration never reads them)."""
    if stored.startswith(_P):
        found = _DECODER.raw_decode(stored, len(_P))[0]
    else:
        found = json.loads(stored).get("p")
    return found if isinstance(found, dict) else {}


class _Keys(dict):
    """A stored JSON value's answer key (calibration.key), decoded once per distinct text:
    targets and parsed answers repeat. None for a missing value."""

    def __missing__(self, text: str | None) -> str | None:
        value = json.loads(text) if text else None
        self[text] = found = None if value is None else answer_key(value)
        return found


Numbers = tuple[int, float, float, float, int]  # bin, p(right), Brier, chosen answer's p, right (1 or 0)


def item_numbers(target: str | None, parsed: str | None, status: str, probabilities: str | None) -> Numbers | None:
    """What one stored result adds to its cell's sums (the columns `Store` keeps beside it, see
    probes/running/calibration_kept.py), from its stored JSON as `cell_sums` reads it; None for
    a result that makes no calibration item (no probabilities, no right answer among them).
    Whether it counts at all (a graded reply) is the store's to say, as `probability_rows` says."""
    if probabilities is None:
        return None
    p = answers_p(probabilities)
    wanted = _key_of(target)
    if wanted is None or wanted not in p:  # as calibration.scored: no right answer among them
        return None
    chosen = _key_of(parsed) if status == "answered" else None
    pick = chosen if chosen in p else max(p, key=p.__getitem__)
    sure = p[pick]
    brier = sum((value - (answer == wanted)) ** 2 for answer, value in p.items())
    return min(BINS - 1, int(sure * BINS)), p[wanted], brier, sure, int(chosen is not None and chosen == wanted)


def _key_of(text: str | None) -> str | None:
    value = json.loads(text) if text else None
    return None if value is None else answer_key(value)


def from_bins(rows: Iterable[tuple]) -> Sums:
    """Sums of kept rows (bin, n, right, p_right high, low, brier high, low, confidence high, low)."""
    sums = Sums()
    for index, n, right, p_high, p_low, b_high, b_low, c_high, c_low in rows:
        sums.add(Sums(n, (p_high, p_low), (b_high, b_low), [n if i == index else 0 for i in range(BINS)],
                      [(c_high, c_low) if i == index else (0.0, 0.0) for i in range(BINS)],
                      [right if i == index else 0 for i in range(BINS)]))  # fmt: skip
    return sums


WIDTH = 3 + 3 * BINS  # a cell's sums as one row of numbers: n, p_right, brier, then per bin n, confidence, right


def _sums(row: np.ndarray) -> Sums:
    bins = slice(3, 3 + BINS), slice(3 + BINS, 3 + 2 * BINS), slice(3 + 2 * BINS, WIDTH)
    return Sums(int(row[0]), (float(row[1]), 0.0), (float(row[2]), 0.0), [int(v) for v in row[bins[0]]],
                [(float(v), 0.0) for v in row[bins[1]]], [int(v) for v in row[bins[2]]])  # fmt: skip


def cell_sums(rows: Iterable[tuple], origin: str) -> dict[Key, Sums]:
    """Sums per cell of rows shaped as `Store.probability_rows` reads them (benchmark, model,
    mode, perturbation, groups JSON, target JSON, parsed JSON, status, probabilities JSON), all
    of one `origin`: the overall cell (grp '') and one per entry of each result's groups.

    The loop is calibration.scored and Sums.add_item written out for speed (a million-result
    store may hold hundreds of thousands with probabilities); tests check it against them. It
    reads each result's numbers once; numpy then sums them per distinct group set and adds each
    set into its cells (an item sweep's group sets are nearly one per item, so adding them one by
    one in Python cost more than reading the results)."""
    sets: dict[tuple[str, str, str, str, str], int] = {}
    member, p_right, brier, place, confidence, right = [], [], [], [], [], []
    keys = _Keys()
    top = BINS - 1
    for benchmark, model, mode, perturbation, groups, target, parsed, status, probabilities in rows:
        p = answers_p(probabilities)
        wanted = keys[target]
        if wanted is None or wanted not in p:  # as calibration.scored: no right answer among them
            continue
        chosen = keys[parsed] if status == "answered" else None
        pick = chosen if chosen in p else max(p, key=p.__getitem__)
        sure = p[pick]
        head = (benchmark, model, mode, perturbation, groups)
        index = sets.get(head)
        if index is None:
            index = sets[head] = len(sets)
        member.append(index)
        p_right.append(p[wanted])
        brier.append(sum((value - (answer == wanted)) ** 2 for answer, value in p.items()))
        place.append(index * BINS + min(top, int(sure * BINS)))
        confidence.append(sure)
        right.append(chosen is not None and chosen == wanted)
    if not sets:
        return {}
    count = len(sets)
    binned = count * BINS
    per_set = np.zeros((count, WIDTH))
    per_set[:, 0] = np.bincount(member, minlength=count)
    per_set[:, 1] = np.bincount(member, p_right, minlength=count)
    per_set[:, 2] = np.bincount(member, brier, minlength=count)
    for column, weights in ((3, None), (3 + BINS, confidence), (3 + 2 * BINS, right)):
        per_set[:, column : column + BINS] = np.bincount(place, weights, minlength=binned).reshape(count, BINS)
    cells: dict[Key, int] = {}
    pairs: list[tuple[int, int]] = []  # (cell, set): each set added into each of its cells
    for (benchmark, model, mode, perturbation, groups), index in sets.items():
        names = json.loads(groups) if groups else {}
        # Group values named as calibration.grouped names them (and report's rows: "name=value").
        for grp in ["", *(f"{name}={value}" for name, value in names.items())]:
            cell = cells.setdefault((benchmark, model, mode, perturbation, origin, grp), len(cells))
            pairs.append((cell, index))
    added = np.array(pairs)
    totals = np.zeros((len(cells), WIDTH))
    np.add.at(totals, added[:, 0], per_set[added[:, 1]])
    return {key: _sums(totals[index]) for key, index in cells.items()}


def pooled(parts: Iterable[Mapping[Key, Sums]]) -> dict[Key, Sums]:
    """Cells of several reads (origins, stores) added cell by cell, into new Sums."""
    found: dict[Key, Sums] = {}
    for part in parts:
        for key, sums in part.items():
            found.setdefault(key, Sums()).add(sums)
    return found


Head = tuple[str, str, str, str, str]  # benchmark, model, mode, perturbation, group ("overall" or name=value)


def by_row(cells: Mapping[Key, Sums]) -> dict[Head, Sums]:
    """Cells of every origin in `cells` pooled into report rows' heads (grp '' as "overall")."""
    merged: dict[Head, Sums] = {}
    for (benchmark, model, mode, perturbation, _, grp), sums in cells.items():
        merged.setdefault((benchmark, model, mode, perturbation, grp or "overall"), Sums()).add(sums)
    return merged


def calibrations(cells: Mapping[Key, Sums]) -> dict[Head, Calibration]:
    """calibration.calibration_by_row of the results the cells summed (rows with no item left out)."""
    return {head: found for head, sums in by_row(cells).items() if (found := sums.calibration())}

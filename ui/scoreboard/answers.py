"""One benchmark's single results as arrays, read once for the views that need them one by one
(mode agreement, latencies, the comparisons' defaults and pairs): the stores' results_series
index gives each result's model, mode, perturbation, item, status, verdict and latency, and every
text is kept once, as a number into its list of names. A view then selects and counts with numpy
instead of reading the results again: at a million results one read of a benchmark's 144,000
took 0.3-0.5 s, and each view read it two or three times (BENCHMARKS.md, issue 34).

What is read is kept while the counts' state is the same object (until a store changes), up to
KEPT_ROWS results in all (a million results' benchmark of 144,000 is about 4 MB of arrays)."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from probes.analysis.paired import CODED_COLUMNS, Coded
from probes.analysis.paired import positions as value_positions
from probes.core.errors import ProbeError
from probes.core.types import Status
from probes.running.cells import Where
from ui.scoreboard.data import ALL, Filters, Tally

KEPT_ROWS = 4_000_000  # results kept as arrays, about 30 bytes each (the newest read always kept)
ERROR, ANSWERED = Status.ERROR.value, Status.ANSWERED.value
NO_VERDICT = -1  # `correct` NULL: ungraded


@dataclass(frozen=True)
class Answers:
    """Each result of one benchmark as a row of arrays; `models[model[i]]` is row i's model."""

    benchmark: str
    models: list[str]
    modes: list[str]
    perturbations: list[str]
    item_ids: list[str]
    statuses: list[str]
    model: np.ndarray  # int64 positions into the lists above
    mode: np.ndarray
    perturbation: np.ndarray
    item: np.ndarray
    status: np.ndarray
    correct: np.ndarray  # int8: 1 right, 0 wrong, NO_VERDICT ungraded
    latency: np.ndarray  # float64, NaN where none was recorded

    @classmethod
    def of(cls, benchmark: str, rows: Sequence[tuple]) -> Answers:
        """From plain rows of (model, mode, perturbation, item_id, status, correct, latency)."""
        model, mode, perturbation, item_id, status, correct, latency = (
            list(map(itemgetter(i), rows)) for i in range(7)
        )
        lists, codes = zip(
            *(value_positions(column) for column in (model, mode, perturbation, item_id, status)), strict=True
        )
        return cls(benchmark, *lists, *codes, _verdicts(correct), np.array(latency, dtype=np.float64))

    def __len__(self) -> int:
        return len(self.model)

    def names(self, column: str) -> list[str]:
        """A column's distinct values ("model": `models`)."""
        return getattr(self, _LISTS[column])

    def positions(self, column: str) -> np.ndarray:
        """A column's values as positions in `names(column)`."""
        return getattr(self, "item" if column == "item_id" else column)

    def codes(self, column: str, names: Iterable[str]) -> np.ndarray:
        """The positions of these names in a column's list (names it does not hold left out)."""
        index = {name: position for position, name in enumerate(self.names(column))}
        return np.array([index[n] for n in names if n in index], dtype=np.int64)

    def answered(self) -> np.ndarray:
        """Which results are replies (not errors)."""
        error = self.statuses.index(ERROR) if ERROR in self.statuses else -1
        return self.status != error

    def graded(self) -> np.ndarray:
        """Replies graded right or wrong (what agreement and pairing count)."""
        return self.answered() & (self.correct != NO_VERDICT)

    def timed(self) -> np.ndarray:
        """Replies with a latency."""
        return self.answered() & ~np.isnan(self.latency)

    def passing(self, filters: Filters, ignore: Iterable[str] = ()) -> np.ndarray:
        """Which results the filters pass (`ignore` as Filters.where: "models", "mode", "perturbation")."""
        skip = set(ignore)
        kept = np.ones(len(self), dtype=bool)
        if filters.models and "models" not in skip:
            kept &= np.isin(self.model, self.codes("model", filters.models))
        if filters.mode != ALL and "mode" not in skip:
            kept &= np.isin(self.mode, self.codes("mode", [filters.mode]))
        if filters.perturbation != ALL and "perturbation" not in skip:
            kept &= np.isin(self.perturbation, self.codes("perturbation", [filters.perturbation]))
        return kept

    def pairing(self, rows: np.ndarray) -> Coded:
        """These rows as pairing reads them (probes/analysis/paired.py), without a tuple made."""
        names = {"benchmark": [self.benchmark], **{column: self.names(column) for column in CODED_COLUMNS[1:]}}
        codes = {column: self.positions(column)[rows] for column in CODED_COLUMNS[1:]}
        answered = self.statuses.index(ANSWERED) if ANSWERED in self.statuses else -1
        right = (self.correct == 1) & (self.status == answered)
        return Coded(names, {"benchmark": np.zeros(len(rows), np.int64), **codes}, self.graded()[rows], right[rows])


_LISTS = {"model": "models", "mode": "modes", "perturbation": "perturbations", "item_id": "item_ids",
          "status": "statuses"}  # fmt: skip


CODED = ("model", "mode", "perturbation", "status")  # read as one number (Store.packed_rows)
PLAIN = ("item_id", "correct", "latency")
STATUSES = [status.value for status in Status]
TRIES = 3  # reads in a row that may meet a value written after its names were read


class ChangingStore(ProbeError):
    """Values were written faster than a view could read them."""


def _names(stores: Sequence, where: Where) -> dict[str, list[str]]:
    """The models, modes and perturbations of the results that pass `where` (from the counts
    each store keeps), and every status, as a read of the results will code them."""
    heads = {key[1:4] for store in stores for key in store.cells(where)}
    found = {column: sorted({head[i] for head in heads}) for i, column in enumerate(CODED[:3])}
    return {**found, "status": STATUSES}


def _verdicts(correct: Sequence[int | None]) -> np.ndarray:
    verdict = np.array(correct, dtype=np.float64)  # None -> NaN
    return np.where(np.isnan(verdict), NO_VERDICT, verdict != 0).astype(np.int8)


def read(stores: Sequence, benchmark: str, origins: Iterable[str]) -> Answers:
    """Every result of the benchmark from these origins, from each store in turn."""
    where = Where(benchmark, origins=tuple(sorted(origins)))
    for _ in range(TRIES):
        names = _names(stores, where)
        if math.prod(max(len(n), 1) for n in names.values()) >= 2**62:  # SQLite would go on in floating point
            raise ProbeError(f"{benchmark} has too many distinct models, modes and perturbations to show here")
        rows = [row for store in stores for row in store.packed_rows(where, names, PLAIN)]
        packed, item_id, correct, latency = (list(map(itemgetter(i), rows)) for i in range(4))
        if None not in packed:  # else a value was written after `names` were read: read again
            break
    else:
        raise ChangingStore(f"{benchmark}'s results changed while they were read, {TRIES} times: try again")
    digits, remaining = {}, np.array(packed, dtype=np.int64)
    for column in reversed(CODED):
        remaining, digits[column] = np.divmod(remaining, max(len(names[column]), 1))
    item_ids, items = value_positions(item_id)
    coded = [digits[column] for column in CODED]
    return Answers(benchmark, names["model"], names["mode"], names["perturbation"], item_ids, STATUSES, coded[0],
                   coded[1], coded[2], items, coded[3], _verdicts(correct), np.array(latency, dtype=np.float64))  # fmt: skip


_lock = threading.Lock()
_kept: OrderedDict[tuple, tuple[Tally, Answers]] = OrderedDict()


def answers(tally: Tally, benchmark: str | None, origins: Iterable[str]) -> Answers:
    """The benchmark's results from these origins in every store the tally counts, kept while the
    tally is the same object."""
    key = (id(tally), benchmark, tuple(sorted(origins)))
    with _lock:
        hit = _kept.get(key)
        if hit is not None and hit[0] is tally:
            _kept.move_to_end(key)
            return hit[1]
    if benchmark is None:  # no results to show
        return read([], "", ())
    with tally.opened() as stores:
        found = read(stores, benchmark, key[2])
    with _lock:
        _kept[key] = (tally, found)
        while len(_kept) > 1 and sum(len(kept) for _, kept in _kept.values()) > KEPT_ROWS:
            _kept.popitem(last=False)
    return found

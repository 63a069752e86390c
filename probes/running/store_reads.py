"""What the store gives readers: results whole (`results`), results with only what is counted
(`scored`), columns of single results for the views that need them (`rows`), and the counts
scoreboards are built from (`cells`, see probes/running/cells.py), with a `version` that changes
whenever the results may have. A mixin of `Store` (probes/running/store.py), which opens the
database and writes it."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from probes.analysis import calibration_cells
from probes.analysis.calibration_cells import Sums
from probes.analysis.scoring import Counts
from probes.core.types import ItemRef, Result, Status
from probes.running import calibration_kept, cells, fit_kept
from probes.running.cells import EVERYTHING, Key, Where

# 2: results.score; 3: results.origin; 4: results.ungraded; 5: cells (probes/running/cells.py);
# 6: results.probabilities (JSON: {"p": {answer: probability}, "mass": share, "top": [[token, p]]});
# 7: results' calibration columns and calibration_cells (probes/running/calibration_kept.py),
#    results.fit_points and fit_levels (probes/running/fit_kept.py); 8: fit_graded (the same module)
SCHEMA_VERSION = 8
RESULT_COLUMNS = (
    "benchmark", "item_id", "model", "mode", "perturbation", "status", "reply", "parsed", "correct", "score", "target",
    "latency", "input_tokens", "output_tokens", "error", "prompt_hash", "cache_key", "groups", "item_ref", "created_at",
    "origin", "ungraded", "probabilities",
)  # fmt: skip
_RESULT_ORDER = itemgetter(
    *(RESULT_COLUMNS.index(c) for c in ("benchmark", "model", "mode", "perturbation", "item_id"))
)
RESULT_KEY = ("benchmark", "item_id", "model", "mode", "perturbation")  # one result per cell and item
# What a write sets: a result's columns, then what it adds to the calibration sums (worked out
# from them as it is written, `calibration_kept.numbers`).
WRITE_COLUMNS = (*RESULT_COLUMNS, *calibration_kept.COLUMNS, fit_kept.COLUMN)


def written(row: Sequence) -> tuple:
    """A result row (RESULT_COLUMNS' order) as it is written: with what it adds to the kept sums."""
    return (*calibration_kept.numbers(row), fit_kept.point_text(row))


class StoreReads:
    """Reading a results store; `Store` provides the connection and its lock."""

    _db: sqlite3.Connection
    _lock: threading.Lock
    _counted: tuple[tuple[int, int, int], dict[Key, Counts]] | None = None  # cells counted in Python (see `cells`)
    _serial: int = 0  # which Store this is (see `version`)
    _absent: frozenset[str] = frozenset()  # newer columns a store opened read-only lacks (read as NULL)

    def _columns(self, columns: Sequence[str]) -> str:
        return ", ".join(f"NULL AS {c}" if c in self._absent else c for c in columns)

    def results(
        self,
        benchmark: str | None = None,
        model: str | None = None,
        mode: str | None = None,
        perturbation: str | None = None,
    ) -> list[Result]:
        clauses, values = [], []
        for column, value in (
            ("benchmark", benchmark),
            ("model", model),
            ("mode", mode),
            ("perturbation", perturbation),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                values.append(value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._lock:
            rows = self._db.execute(f"SELECT {self._columns(RESULT_COLUMNS)} FROM results {where}", values).fetchall()
        # Sorted here, not by ORDER BY: that made SQLite walk the primary key of every result of the
        # benchmark (its order) instead of the results_series index, 2.5 times slower for one series.
        rows.sort(key=_RESULT_ORDER)
        # Each distinct group set, reading, target and item reference decoded once (a series'
        # results repeat a few group sets and answers, and every model's and mode's series the same
        # items' references) and shared by the Results that hold it, which never change them:
        # 40% less time making them.
        seen: dict[str, Any] = {}
        refs_seen: dict[str, ItemRef] = {}
        return [_result(row, seen, refs_seen) for row in rows]

    def rows(self, columns: Sequence[str], where: Where) -> list[tuple]:
        """These columns of the results that pass `where`, without making Results."""
        unknown = set(columns) - set(RESULT_COLUMNS)
        if unknown:
            raise ValueError(f"not a result column: {sorted(unknown)}")
        clause, values = where.sql()
        with self._lock:
            return self._db.execute(f"SELECT {self._columns(columns)} FROM results WHERE {clause}", values).fetchall()

    def packed_rows(self, where: Where, coded: Mapping[str, Sequence[str]], columns: Sequence[str]) -> list[tuple]:
        """Per result that passes `where`: one number made of the position of each `coded` column's
        value in its list (mixed radix, the first column most significant; NULL where a value is in
        none of its list), then `columns` as stored. A benchmark's model, mode, perturbation and
        status read as one small number cost a third of reading them as text (issue 34)."""
        unknown = (set(coded) | set(columns)) - set(RESULT_COLUMNS)
        if unknown:
            raise ValueError(f"not a result column: {sorted(unknown)}")
        clause, values = where.sql()
        packed, parameters = "0", []
        for column, names in coded.items():
            whens = " ".join(f"WHEN ? THEN {position}" for position in range(len(names)))
            packed = f"({packed}) * {max(len(names), 1)} + (CASE {column} {whens} END)" if names else "NULL"
            parameters += names
        with self._lock:
            return self._db.execute(
                f"SELECT {packed}, {self._columns(columns)} FROM results WHERE {clause}", [*parameters, *values]
            ).fetchall()

    def probability_rows(self, where: Where = EVERYTHING) -> list[tuple]:
        """(benchmark, model, mode, perturbation, groups, target, parsed, status, probabilities)
        of the graded replies that pass `where` and carry probabilities, as stored (JSON): what
        calibration reads (probes/analysis/calibration.py), and nothing of the other results."""
        if "probabilities" in self._absent:
            return []
        clause, values = where.sql()
        with self._lock:
            return self._db.execute(
                "SELECT benchmark, model, mode, perturbation, groups, target, parsed, status, probabilities FROM results"
                f" WHERE {clause} AND probabilities IS NOT NULL AND status != 'error' AND correct IS NOT NULL",
                values,
            ).fetchall()

    def cells(self, where: Where = EVERYTHING, groups: Iterable[str] | None = ()) -> dict[Key, Counts]:
        """What scoreboard rows are built from, per (benchmark, model, mode, perturbation, origin,
        grp) that passes `where`: the overall cells (grp ''), with the entries ('name=value') of
        the group names in `groups` (None: of every group). Read from the counts the store keeps,
        or counted from the results where those cannot be trusted (probes/running/cells.py)."""
        with self._lock:
            if self._cells_kept():
                return cells.as_counts(cells.read(self._db, where, groups))
            stamp = self._version()
            if self._counted is None or self._counted[0] != stamp:
                self._counted = (stamp, cells.as_counts(cells.count(self._db)))
            counted = self._counted[1]
        names = None if groups is None else set(groups)
        return {k: c for k, c in counted.items() if c.results and where.keeps(k) and cells.wanted_grp(k[5], names)}

    def calibration_sums(self, where: Where = EVERYTHING, groups: Iterable[str] | None = ()) -> dict[Key, Sums]:
        """Calibration sums per cell that passes `where` (as `cells`: overall, and the entries of
        `groups`; None: every group): read from the sums the store keeps, or, where those cannot be
        trusted, summed from the results that carry probabilities (probes/running/calibration_kept.py)."""
        with self._lock:
            if self._cells_kept():
                return calibration_kept.read(self._db, where, groups)
        origins = where.origins
        if origins is None:
            with self._lock:
                origins = [row[0] for row in self._db.execute("SELECT DISTINCT origin FROM results")]
        names = None if groups is None else set(groups)
        found = calibration_cells.pooled(
            calibration_cells.cell_sums(self.probability_rows(Where(where.benchmark, where.models, where.modes,
                                                                    where.perturbations, (origin,))), origin)
            for origin in origins
        )  # fmt: skip
        return {key: sums for key, sums in found.items() if cells.wanted_grp(key[5], names)}

    def fit_parts(self, where: Where, param: str, by: Sequence[str] = ()) -> tuple[dict, dict] | None:
        """What `report --fit param` fits (probes/analysis/fit_points.py): the choices' kept counts
        per level and the probabilities' points, per report row; None where the kept counts cannot
        be trusted (the fits are then made from Results, probes/running/fit_kept.py)."""
        with self._lock:
            if not self._cells_kept():
                return None
            return fit_kept.tallies(self._db, where, param, by), fit_kept.graded_points(self._db, where, param, by)

    def version(self) -> tuple[int, int, int]:
        """Changes whenever the results may have: a commit by another connection (SQLite's
        data_version) or by this one (its count of changes); the first number tells this
        connection from any other (those two count per connection). Reads no table."""
        with self._lock:
            return self._version()

    def _version(self) -> tuple[int, int, int]:
        return self._serial, self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes

    def _cells_kept(self) -> bool:
        """Whether the kept counts are current: the table is there and no older version has
        written the store since (it would have marked its own version)."""
        kept = {"cells", "calibration_cells", "fit_levels", "fit_graded", "meta"}
        names = {row[0] for row in self._db.execute(
            f"SELECT name FROM sqlite_master WHERE name IN ({', '.join('?' * len(kept))})", sorted(kept))}  # fmt: skip
        if names != kept:
            return False
        marked = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return marked is not None and marked[0] == str(SCHEMA_VERSION)

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0]


_decode = json.JSONDecoder().decode  # json.loads without its checks of arguments, per stored field


def _seen(seen: dict[str, Any], text: str) -> Any:
    """`text` decoded, once per distinct text in `seen`."""
    found = seen.get(text, _UNSEEN)
    if found is _UNSEEN:
        found = seen[text] = _decode(text)
    return found


_UNSEEN = object()
_STATUSES = {status.value: status for status in Status}  # a look-up, not the Enum's call, per result


def _result(row: tuple[Any, ...], seen: dict[str, Any], refs_seen: dict[str, ItemRef]) -> Result:
    (benchmark, item_id, model, mode, perturbation, status, reply, parsed, correct, score, target,
     latency, input_tokens, output_tokens, error, prompt_hash, cache_key, groups, item_ref, created_at, _,
     ungraded, probabilities) = row  # fmt: skip
    probabilities = _decode(probabilities) if probabilities else None
    group_set = _seen(seen, groups)
    ref = refs_seen.get(item_ref)
    if ref is None:
        ref = refs_seen[item_ref] = ItemRef.from_dict(_decode(item_ref))
    return Result(
        benchmark=benchmark,
        item_id=item_id,
        model=model,
        mode=mode,
        perturbation=perturbation,
        status=_STATUSES.get(status) or Status(status),  # an unknown value: the Enum says so
        reply=reply,
        parsed=_seen(seen, parsed) if parsed else None,
        correct=None if correct is None else bool(correct),
        score=score,
        target=_seen(seen, target) if target else None,
        latency=latency,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        error=error,
        ungraded=ungraded,
        probabilities=probabilities["p"] if probabilities else None,
        probability_mass=probabilities.get("mass") if probabilities else None,
        alternatives=tuple((str(t), float(p)) for t, p in probabilities.get("top", ())) if probabilities else None,
        prompt_hash=prompt_hash,
        cache_key=cache_key,
        groups=group_set,
        item_ref=ref,
        created_at=created_at,
    )

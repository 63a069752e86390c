"""The store's running counts, so that a scoreboard over a million results never decodes them.

`cells` holds, per (benchmark, group, model, mode, perturbation, origin), what a scoreboard row
is built from (`probes.analysis.scoring.Counts`): how many results, replies scored and their
score sum, right/wrong grades, unparsed, refused, errors, ungraded, latencies and their sum.
`grp` is '' for the overall cell and 'name=value' for each entry of a result's `groups`, so a
breakdown by any group is a read of a few cells, not a pass over results.

Why SQL counts kept by triggers (measured with bench/scoreboard.py, see BENCHMARKS.md): a
GROUP BY over a benchmark's 140,000 results of a million took 0.3 to 0.6 s on this machine, and
the breakdowns by a group need json_each over each of them on top; reading the kept counts takes
milliseconds. An embedded analytical engine (DuckDB) would still scan or copy the results for
each view and is a dependency with its own file format; counts kept as results are written make
every view a small read. Triggers rather than Python: every way into `results` (runs, imports,
people, deletions, an older version's migrations) keeps the counts right, in the same
transaction.

Sums are kept as (high, low) pairs (Neumaier's compensated sum, done in SQL), so adding and
taking away results, in any order, leaves the exact sum of what is there: `report` gives the
same rows from the counts as from the results themselves (tests/probes/test_cells.py).

A store the triggers may have missed writes to (one opened read-only from an older version, or
one an older version has written since: its schema marker says so) is counted with a GROUP BY
instead (`count`), exactly as the triggers count, and upgraded by the next writer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from probes.analysis.scoring import Counts

Key = tuple[str, str, str, str, str, str]  # benchmark, model, mode, perturbation, origin, grp
_INTS = ("results", "scored", "graded", "correct", "unparsed", "refused", "errors", "ungraded", "timed")
_PAIRS = ("score", "latency")
_COLUMNS = ("benchmark", "model", "mode", "perturbation", "origin", "grp", *_INTS, "score_high", "score_low",
            "latency_high", "latency_low")  # fmt: skip

TABLE = """
CREATE TABLE IF NOT EXISTS cells (
    benchmark TEXT NOT NULL, grp TEXT NOT NULL, model TEXT NOT NULL, mode TEXT NOT NULL,
    perturbation TEXT NOT NULL, origin TEXT NOT NULL,
    results INTEGER NOT NULL, scored INTEGER NOT NULL, graded INTEGER NOT NULL, correct INTEGER NOT NULL,
    unparsed INTEGER NOT NULL, refused INTEGER NOT NULL, errors INTEGER NOT NULL, ungraded INTEGER NOT NULL,
    timed INTEGER NOT NULL, score_high REAL NOT NULL, score_low REAL NOT NULL, latency_high REAL NOT NULL,
    latency_low REAL NOT NULL,
    PRIMARY KEY (benchmark, grp, model, mode, perturbation, origin)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cells_overall ON cells (grp, benchmark) WHERE grp = '';
CREATE INDEX IF NOT EXISTS results_series ON results (benchmark, model, mode, perturbation, origin, status, correct,
                                                      latency, item_id)
"""
# results_series: the views that need single results (curves, comparisons, mode agreement,
# latency medians) read one benchmark's series by it, from the index alone where they can.

# A group's value as Python writes it into a row's name ("inducers=with"): groups are strings;
# JSON's true, false and null as Python would print them after json.loads.
_GROUP = (
    "key || '=' || CASE type WHEN 'true' THEN 'True' WHEN 'false' THEN 'False' WHEN 'null' THEN 'None' ELSE value END"
)


def _counted(row: str) -> dict[str, str]:
    """What one result adds to its cells, as SQL over the row `row` (NEW, OLD or a table)."""
    replied = f"{row}.status != 'error'"
    return {
        "results": "1",
        "scored": f"({replied} AND {row}.score IS NOT NULL)",
        "graded": f"({row}.correct IS NOT NULL)",
        "correct": f"coalesce({row}.correct != 0, 0)",
        "unparsed": f"({row}.status = 'unparsed')",
        "refused": f"({row}.status = 'refused')",
        "errors": f"({row}.status = 'error')",
        "ungraded": f"({replied} AND coalesce({row}.ungraded, '') != '')",
        "timed": f"({replied} AND {row}.latency IS NOT NULL)",
        "score": f"CASE WHEN {replied} AND {row}.score IS NOT NULL THEN {row}.score ELSE 0.0 END",
        "latency": f"CASE WHEN {replied} AND {row}.latency IS NOT NULL THEN {row}.latency ELSE 0.0 END",
    }


def _pair_sum(high: str, low: str, value: str) -> tuple[str, str]:
    """SQL for (high, low) + value, as probes.analysis.scoring._two_sum computes it."""
    total = f"({high} + {value})"
    error = (
        f"CASE WHEN abs({high}) >= abs({value}) THEN ({high} - {total}) + {value} ELSE ({value} - {total}) + {high} END"
    )
    return total, f"{low} + {error}"


def _upsert(row: str, sign: str) -> str:
    """The statement that adds (sign '') or takes away (sign '-') the result `row` in every cell
    it counts in: the overall one and one per entry of its groups."""
    counted = _counted(row)
    values = [f"{sign}{counted[name]}" for name in _INTS]
    values += [f"{sign}{counted['score']}", "0.0", f"{sign}{counted['latency']}", "0.0"]
    updates = [f"{name} = {name} + excluded.{name}" for name in _INTS]
    for column in _PAIRS:
        high, low = _pair_sum(f"{column}_high", f"{column}_low", f"excluded.{column}_high")
        updates += [f"{column}_high = {high}", f"{column}_low = {low}"]
    return (
        f"INSERT INTO cells ({', '.join(_COLUMNS)}) SELECT {row}.benchmark, {row}.model, {row}.mode, "
        f"{row}.perturbation, {row}.origin, g.grp, {', '.join(values)} "
        f"FROM (SELECT '' AS grp UNION ALL SELECT {_GROUP} FROM json_each({row}.groups)) AS g WHERE true "
        f"ON CONFLICT DO UPDATE SET {', '.join(updates)};"
    )


def _tidy(row: str) -> str:
    """Cells left with no result go (a deleted model no longer shows as a choice)."""
    return (
        f"DELETE FROM cells WHERE benchmark = {row}.benchmark AND model = {row}.model AND mode = {row}.mode AND "
        f"perturbation = {row}.perturbation AND origin = {row}.origin AND results = 0;"
    )


def _in_place(old: str, new: str) -> str:
    """The statement for a result whose cells stay the same (its head and groups unchanged: a
    re-run with another answer, a regrade): each of its cells updated once by the difference,
    rather than taken away from and added to again (half the writes). Sums add the new value and
    then the old one's negative, each compensated as `_pair_sum` does, so they stay exact."""
    before, after = _counted(old), _counted(new)
    updates = [f"{name} = {name} + ({after[name]}) - ({before[name]})" for name in _INTS]
    for column, value in (("score", "score"), ("latency", "latency")):
        high, low = _pair_sum(f"{column}_high", f"{column}_low", f"({after[value]})")
        high, low = _pair_sum(high, low, f"(-({before[value]}))")
        updates += [f"{column}_high = {high}", f"{column}_low = {low}"]
    keys = " AND ".join(f"{name} = {new}.{name}" for name in ("benchmark", "model", "mode", "perturbation", "origin"))
    return (
        f"UPDATE cells SET {', '.join(updates)} WHERE {keys} AND grp IN "
        f"(SELECT '' UNION ALL SELECT {_GROUP} FROM json_each({new}.groups));"
    )


# Where a result's cells are: a change of any of these moves it to other cells.
_PLACED = ("benchmark", "model", "mode", "perturbation", "origin", "groups")
# What a cell counts from a result: an update that changes none of these (a cached re-run saving
# the same answer again) leaves the cells alone.
_COUNTED_FROM = ("status", "score", "correct", "ungraded", "latency")
_STAYS = " AND ".join(f"old.{name} IS new.{name}" for name in _PLACED)
TRIGGER_NAMES = ("cells_after_insert", "cells_after_delete", "cells_after_update", "cells_after_move")
TRIGGERS = (
    f"CREATE TRIGGER cells_after_insert AFTER INSERT ON results BEGIN {_upsert('new', '')} END",
    f"CREATE TRIGGER cells_after_delete AFTER DELETE ON results BEGIN {_upsert('old', '-')} {_tidy('old')} END",
    f"CREATE TRIGGER cells_after_update AFTER UPDATE ON results WHEN {_STAYS} AND ("
    + " OR ".join(f"old.{name} IS NOT new.{name}" for name in _COUNTED_FROM)
    + f") BEGIN {_in_place('old', 'new')} END",
    f"CREATE TRIGGER cells_after_move AFTER UPDATE ON results WHEN NOT ({_STAYS}) "
    f"BEGIN {_upsert('old', '-')} {_upsert('new', '')} {_tidy('old')} END",
)


# --- counting without the triggers ----------------------------------------------------------------


class _ExactSum:
    """SQLite aggregate: the exact sum of its values as 'high low' (see scoring._two_sum)."""

    def __init__(self) -> None:
        self.high, self.low = 0.0, 0.0

    def step(self, value: float | None) -> None:
        if value is not None:
            total = self.high + value
            error = (self.high - total) + value if abs(self.high) >= abs(value) else (value - total) + self.high
            self.high, self.low = total, self.low + error

    def finalize(self) -> str:
        return f"{self.high!r} {self.low!r}"


class _PairSum(_ExactSum):
    """SQLite aggregate: the exact sum of 'high low' pairs, as 'high low'."""

    def step(self, value: str | None) -> None:  # type: ignore[override]
        if value is not None:
            high, low = map(float, value.split())
            super().step(high)
            self.low += low


def _pair(text: str | None) -> tuple[float, float]:
    if not text:
        return 0.0, 0.0
    high, low = map(float, text.split())
    return high, low


def count(db: sqlite3.Connection) -> list[tuple]:
    """Every cell of the store, counted from `results` as the triggers count them, in the order
    and shape of the `cells` table's columns (_COLUMNS). Used to build the table when a store is
    upgraded, and to read a store whose cells cannot be trusted (see the module's docstring).

    Results are first counted per distinct group set (a few per series, whatever the number of
    results), then each set's entries expanded: the GROUP BY sorts the results once and json_each
    reads each group set once. Whole scores are summed by SQLite (exactly: they are integers);
    fractional scores and latencies by _ExactSum, so the sums are those the triggers keep."""
    db.create_aggregate("probe_exact_sum", 1, _ExactSum)
    db.create_aggregate("probe_pair_sum", 1, _PairSum)
    counted = _counted("results")
    replied = "status != 'error'"
    inner = ", ".join(f"SUM({counted[name]}) AS {name}" for name in _INTS)
    outer = ", ".join(f"SUM({name})" for name in _INTS)
    rows = db.execute(
        f"""WITH sets AS (
            SELECT benchmark, model, mode, perturbation, origin, groups, {inner},
                   TOTAL(score) FILTER (WHERE {replied} AND score = round(score)) AS whole,
                   probe_exact_sum(score) FILTER (WHERE {replied} AND score != round(score)) AS part,
                   probe_exact_sum(latency) FILTER (WHERE {replied} AND latency IS NOT NULL) AS seconds
            FROM results GROUP BY benchmark, model, mode, perturbation, origin, groups
        ), entries AS (
            SELECT *, '' AS grp FROM sets
            UNION ALL SELECT sets.*, {_GROUP} AS grp FROM sets, json_each(sets.groups)
        )
        SELECT benchmark, model, mode, perturbation, origin, grp, {outer}, TOTAL(whole), probe_pair_sum(part),
               probe_pair_sum(seconds)
        FROM entries GROUP BY benchmark, model, mode, perturbation, origin, grp"""
    ).fetchall()
    found = []
    for row in rows:
        whole, part, seconds = row[-3:]
        counts = Counts(score=(whole, 0.0))
        counts.add(Counts(score=_pair(part)))
        found.append((*row[:-3], *counts.score, *_pair(seconds)))
    return found


def rebuild(db: sqlite3.Connection) -> None:
    """(Re)make the table and its triggers from the results there (inside the caller's transaction)."""
    for name in TRIGGER_NAMES:
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    for statement in TABLE.split(";"):
        db.execute(statement)
    db.execute("DELETE FROM cells")
    db.executemany(f"INSERT INTO cells ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})", count(db))
    for statement in TRIGGERS:
        db.execute(statement)


# --- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Where:
    """Which results or cells a view reads: each field None (or empty) for every value."""

    benchmark: str | None = None
    models: Sequence[str] = ()
    modes: Sequence[str] = ()
    perturbations: Sequence[str] = ()
    origins: Sequence[str] | None = None  # None: every origin

    def sql(self) -> tuple[str, list[str]]:
        clauses: list[str] = []
        values: list[str] = []
        if self.benchmark is not None:
            clauses.append("benchmark = ?")
            values.append(self.benchmark)
        for column, chosen in (("model", self.models), ("mode", self.modes), ("perturbation", self.perturbations),
                               ("origin", self.origins)):  # fmt: skip
            if chosen is not None and (column == "origin" or chosen):
                chosen = sorted(set(chosen))
                clauses.append(f"{column} IN ({', '.join('?' * len(chosen))})")
                values += chosen
        return " AND ".join(clauses) or "1", values

    def keeps(self, key: Key) -> bool:
        """Whether a cell's key passes (for cells counted in Python)."""
        benchmark, model, mode, perturbation, origin, _ = key
        return (
            self.benchmark in (None, benchmark)
            and (not self.models or model in self.models)
            and (not self.modes or mode in self.modes)
            and (not self.perturbations or perturbation in self.perturbations)
            and (self.origins is None or origin in self.origins)
        )


EVERYTHING = Where()


def grp_sql(groups: Iterable[str] | None) -> tuple[str, list[str]]:
    """The cells' `grp` clause: overall only (()), overall and the entries of these group names,
    or every cell (None)."""
    if groups is None:
        return "1", []
    clauses, values = ["grp = ''"], []
    for name in sorted(set(groups)):
        clauses.append("(grp >= ? AND grp < ?)")  # 'name=' up to 'name>': one range of the key
        values += [f"{name}=", f"{name}>"]
    return f"({' OR '.join(clauses)})", values


def wanted_grp(grp: str, groups: Iterable[str] | None) -> bool:
    return groups is None or grp == "" or grp.partition("=")[0] in set(groups)


def read(db: sqlite3.Connection, where: Where, groups: Iterable[str] | None) -> list[tuple]:
    """The kept cells that pass, as rows shaped like _COLUMNS."""
    clause, values = where.sql()
    grp_clause, grp_values = grp_sql(groups)
    return db.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM cells WHERE {clause} AND {grp_clause} AND results != 0",
        [*values, *grp_values],
    ).fetchall()


def as_counts(rows: Iterable[tuple]) -> dict[Key, Counts]:
    """Rows shaped like _COLUMNS as Counts by cell."""
    found: dict[Key, Counts] = {}
    width = len(_INTS)
    for row in rows:
        counted = dict(zip(_INTS, row[6 : 6 + width], strict=True))
        score_high, score_low, latency_high, latency_low = row[6 + width :]
        found[row[:6]] = Counts(**counted, score=(score_high, score_low), latency=(latency_high, latency_low))
    return found

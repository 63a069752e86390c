"""The store's running calibration sums, so that `report` and the Scoreboard never decode a
result's probabilities to show how sure the models were (issue 34).

`calibration_cells` holds, per cell (benchmark, group, model, mode, perturbation, origin, as
probes/running/cells.py keys its counts) and per bin of the chosen answer's probability
(calibration.BINS), what probes/analysis/calibration_cells.Sums is made of: how many graded
replies with probabilities, how many of them right, and the sums of p(right), of the Brier score
and of the chosen answer's probability. A cell's calibration is the sum of its bins' rows.

How it is kept: what one result adds (its bin and its four numbers) is worked out in Python when
the result is written (`calibration_cells.item_numbers`, from the same JSON `report` decoded
before) and stored in five columns of its row (`COLUMNS`); SQL triggers add those columns into
the cells, as cells.py's triggers add counts, in the same transaction, on every insert,
replacement, regrade, move and deletion. Not decoded in SQL with json functions: the right
answer is Python's `str(value).strip().casefold()` of the stored target (True, 1e-05, a list,
non-ASCII text), which SQLite's lower() and number formatting do not give, so a SQL reading would
drop or misplace some items; and triggers calling a Python function would fail in any connection
that has not registered it (an older version, the sqlite3 shell). The numbers cost a few
microseconds per result with probabilities at write time and nothing for the others.

Sums are compensated (high, low) pairs, added in SQL as cells.py adds its sums, so the figures
equal those computed from the results to float rounding (tests/probes/test_calibration_kept.py).

A store whose kept sums cannot be trusted (opened read-only from an older version, or written
by an older version since: the schema marker says so, as for cells) is read from its results as
before (`calibration_cells.cell_sums`); the next writer recomputes the columns and the sums.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from probes.analysis.calibration_cells import Key, Sums, from_bins, item_numbers
from probes.running.cells import _GROUP, Where, _ExactSum, _pair, _pair_sum, _PairSum, grp_sql

COLUMNS = ("cal_bin", "cal_p_right", "cal_brier", "cal_confidence", "cal_right")
COLUMN_TYPES = ("INTEGER", "REAL", "REAL", "REAL", "INTEGER")
# The result row's columns numbers are made from, by position in RESULT_COLUMNS' order.
_STATUS, _PARSED, _TARGET, _PROBABILITIES = 5, 7, 10, 22
_NONE = (None,) * len(COLUMNS)

TABLE = """
CREATE TABLE IF NOT EXISTS calibration_cells (
    benchmark TEXT NOT NULL, grp TEXT NOT NULL, model TEXT NOT NULL, mode TEXT NOT NULL,
    perturbation TEXT NOT NULL, origin TEXT NOT NULL, bin INTEGER NOT NULL,
    n INTEGER NOT NULL, hits INTEGER NOT NULL, p_right_high REAL NOT NULL, p_right_low REAL NOT NULL,
    brier_high REAL NOT NULL, brier_low REAL NOT NULL, confidence_high REAL NOT NULL, confidence_low REAL NOT NULL,
    PRIMARY KEY (benchmark, grp, model, mode, perturbation, origin, bin)
) WITHOUT ROWID
"""
_HEAD = ("benchmark", "model", "mode", "perturbation", "origin")
_CELL = (*_HEAD, "grp", "bin")
_SUMS = ("p_right", "brier", "confidence")
_VALUES = ("n", "hits", "p_right_high", "p_right_low", "brier_high", "brier_low", "confidence_high",
           "confidence_low")  # fmt: skip


def numbers(row: Sequence) -> tuple:
    """A result row (RESULT_COLUMNS' order) with its calibration columns after it."""
    found = item_numbers(row[_TARGET], row[_PARSED], row[_STATUS], row[_PROBABILITIES])
    return (*row, *(found or _NONE))


def _counts(row: str) -> str:
    """Whether the result `row` is a calibration item: a graded reply with numbers (as
    `Store.probability_rows` chooses the results calibration reads)."""
    return f"({row}.cal_bin IS NOT NULL AND {row}.status != 'error' AND {row}.correct IS NOT NULL)"


def _upsert(row: str, sign: str) -> str:
    values = [f"{sign}1", f"{sign}{row}.cal_right"]
    for name in ("cal_p_right", "cal_brier", "cal_confidence"):
        values += [f"{sign}{row}.{name}", "0.0"]
    updates = [f"{name} = {name} + excluded.{name}" for name in ("n", "hits")]
    for name in _SUMS:
        high, low = _pair_sum(f"{name}_high", f"{name}_low", f"excluded.{name}_high")
        updates += [f"{name}_high = {high}", f"{name}_low = {low}"]
    return (
        f"INSERT INTO calibration_cells ({', '.join((*_CELL, *_VALUES))}) SELECT "
        f"{', '.join(f'{row}.{name}' for name in _HEAD)}, g.grp, {row}.cal_bin, {', '.join(values)} "
        f"FROM (SELECT '' AS grp UNION ALL SELECT {_GROUP} FROM json_each({row}.groups)) AS g WHERE {_counts(row)} "
        f"ON CONFLICT DO UPDATE SET {', '.join(updates)};"
    )


def _tidy(row: str) -> str:
    """Bins left with no item go."""
    keys = " AND ".join(f"{name} = {row}.{name}" for name in _HEAD)
    return f"DELETE FROM calibration_cells WHERE {keys} AND bin = {row}.cal_bin AND n = 0;"


# What moves a result's numbers, or its cells: an update changing none of these leaves the sums.
_WATCHED = ("benchmark", "model", "mode", "perturbation", "origin", "groups", "status", "correct", *COLUMNS)
TRIGGER_NAMES = ("calibration_after_insert", "calibration_after_delete", "calibration_after_update")
TRIGGERS = (
    f"CREATE TRIGGER calibration_after_insert AFTER INSERT ON results WHEN {_counts('new')} "
    f"BEGIN {_upsert('new', '')} END",
    f"CREATE TRIGGER calibration_after_delete AFTER DELETE ON results WHEN {_counts('old')} "
    f"BEGIN {_upsert('old', '-')} {_tidy('old')} END",
    f"CREATE TRIGGER calibration_after_update AFTER UPDATE ON results WHEN ({_counts('old')} OR {_counts('new')}) "
    f"AND ({' OR '.join(f'old.{name} IS NOT new.{name}' for name in _WATCHED)}) "
    f"BEGIN {_upsert('old', '-')} {_tidy('old')} {_upsert('new', '')} END",
)


def add_columns(db: sqlite3.Connection) -> None:
    """The results' calibration columns, on a store from before them (schema 7)."""
    present = {row[1] for row in db.execute("PRAGMA table_info(results)")}
    for name, kind in zip(COLUMNS, COLUMN_TYPES, strict=True):
        if name not in present:
            db.execute(f"ALTER TABLE results ADD COLUMN {name} {kind}")


def fill_columns(db: sqlite3.Connection) -> None:
    """Every result's calibration columns worked out again from its stored JSON (inside the
    caller's transaction): once when a store is upgraded, or after an older version wrote it."""
    db.execute(f"UPDATE results SET {', '.join(f'{name} = NULL' for name in COLUMNS)} WHERE cal_bin IS NOT NULL")
    rows = db.execute(
        "SELECT rowid, target, parsed, status, probabilities FROM results WHERE probabilities IS NOT NULL"
    )
    assign = f"UPDATE results SET {', '.join(f'{name} = ?' for name in COLUMNS)} WHERE rowid = ?"
    while batch := rows.fetchmany(10_000):
        found = [(*made, rowid) for rowid, *row in batch if (made := item_numbers(*row)) is not None]
        db.executemany(assign, found)


def count(db: sqlite3.Connection) -> list[tuple]:
    """Every (cell, bin) of the store summed from the results' calibration columns, as the
    triggers sum them, in the table's column order (_CELL then _VALUES): each distinct group set
    summed first, then its entries expanded (as cells.count does)."""
    db.create_aggregate("probe_exact_sum", 1, _ExactSum)
    db.create_aggregate("probe_pair_sum", 1, _PairSum)
    head = ", ".join(_HEAD)
    rows = db.execute(
        f"""WITH sets AS (
            SELECT {head}, groups, cal_bin AS bin, COUNT(*) AS n, SUM(cal_right) AS hits,
                   probe_exact_sum(cal_p_right) AS p_right, probe_exact_sum(cal_brier) AS brier,
                   probe_exact_sum(cal_confidence) AS confidence
            FROM results WHERE {_counts("results")} GROUP BY {head}, groups, cal_bin
        ), entries AS (
            SELECT *, '' AS grp FROM sets
            UNION ALL SELECT sets.*, {_GROUP} AS grp FROM sets, json_each(sets.groups)
        )
        SELECT {head}, grp, bin, SUM(n), SUM(hits), probe_pair_sum(p_right), probe_pair_sum(brier),
               probe_pair_sum(confidence)
        FROM entries GROUP BY {head}, grp, bin"""
    ).fetchall()
    return [(*row[:9], *_pair(row[9]), *_pair(row[10]), *_pair(row[11])) for row in rows]


def rebuild(db: sqlite3.Connection) -> None:
    """(Re)make the columns, the table and its triggers from the results there (inside the
    caller's transaction)."""
    for name in TRIGGER_NAMES:
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    add_columns(db)
    fill_columns(db)
    db.execute(TABLE)
    db.execute("DELETE FROM calibration_cells")
    db.executemany(
        f"INSERT INTO calibration_cells ({', '.join((*_CELL, *_VALUES))}) VALUES ({', '.join('?' * 15)})", count(db)
    )
    for statement in TRIGGERS:
        db.execute(statement)


def read(db: sqlite3.Connection, where: Where, groups: Iterable[str] | None) -> dict[Key, Sums]:
    """The kept sums of the cells that pass (overall, and the entries of `groups`; None: every
    group), as Sums per cell."""
    clause, values = where.sql()
    grp_clause, grp_values = grp_sql(groups)
    rows = db.execute(
        f"SELECT {', '.join(_CELL)}, {', '.join(_VALUES)} FROM calibration_cells WHERE {clause} AND {grp_clause}"
        " AND n != 0 ORDER BY benchmark, model, mode, perturbation, origin, grp",
        [*values, *grp_values],
    ).fetchall()
    by_cell: dict[Key, list[tuple]] = {}
    for row in rows:
        by_cell.setdefault(row[:6], []).append(row[6:])
    return {key: from_bins(bins) for key, bins in by_cell.items()}

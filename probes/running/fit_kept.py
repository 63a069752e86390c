"""The store's running psychometric counts, so that `report --fit PARAM` (and the closing line of
`run --until-pse-width`, which is the same fit) never makes a Result of every stored answer.

When a result is written, what it gives every fit it can join is worked out in Python
(probes/analysis/fit_points.points: per numeric parameter of its item, its level, whether its
reply is positive, negative, left out, an error or without a reading, and the probability of the
positive answer) and kept as JSON in its row's `fit_points` column. SQL triggers add the choices up
in `fit_levels`, per (parameter, benchmark, model, mode, perturbation, origin, group set, level):
replies rated, positive ones, left out, errors, unrated, and results in all. Keyed by the result's
whole group set (its `groups` JSON) rather than by each group's value as cells.py keys counts: a
result then adds one row per parameter, not one per parameter and group (a sweep's items hold
five or six numeric parameters and as many groups: thirty upserts a result), and a `--by`
breakdown adds the group sets up in Python, decoding each set once. Levels are kept as the text
of their float (repr), so the level a fit reads is exactly the one Python computed.

A graded fit (of the probabilities) bootstraps over items (probes/analysis/graded.py): it needs
each item's probability, not sums, so the same triggers keep every result's graded points, (x, y)
per parameter, in the narrow `fit_graded`, one row a result and parameter, keyed by the report's
head first: `graded_points` reads a parameter's points there as one joined text per cell and group
set. (Read from the results' own `fit_points` they cost 1.6-2.8 s at a million: a row lookup and two
json_extract calls for each of 250,000 results; from `fit_graded`, 0.2-0.7 s.)

A store whose counts cannot be trusted (opened read-only from an older version, or written by one
since: the schema marker says so) is fitted from its Results, as before; the next writer works
the column and the counts out again (`rebuild`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Protocol

from probes.analysis import fit_points
from probes.analysis.calibration_cells import answers_p
from probes.analysis.fit_points import Head, Tally, fit_rows_of, heads, points
from probes.analysis.fits import fit_table
from probes.analysis.logistic import RESAMPLES
from probes.analysis.psychometric import FitRow
from probes.core.types import Result
from probes.running.cells import Where

COLUMN = "fit_points"
_STATUS, _PARSED, _ITEM_REF, _PROBABILITIES = 5, 7, 18, 22  # positions in RESULT_COLUMNS' order

TABLE = """
CREATE TABLE IF NOT EXISTS fit_levels (
    param TEXT NOT NULL, benchmark TEXT NOT NULL, model TEXT NOT NULL, mode TEXT NOT NULL,
    perturbation TEXT NOT NULL, origin TEXT NOT NULL, groups TEXT NOT NULL, x TEXT NOT NULL,
    results INTEGER NOT NULL, n INTEGER NOT NULL, positives INTEGER NOT NULL, excluded INTEGER NOT NULL,
    errors INTEGER NOT NULL, unrated INTEGER NOT NULL,
    PRIMARY KEY (param, benchmark, model, mode, perturbation, origin, groups, x)
) WITHOUT ROWID
"""
GRADED_TABLE = """
CREATE TABLE IF NOT EXISTS fit_graded (
    param TEXT NOT NULL, benchmark TEXT NOT NULL, model TEXT NOT NULL, mode TEXT NOT NULL,
    perturbation TEXT NOT NULL, origin TEXT NOT NULL, groups TEXT NOT NULL, item_id TEXT NOT NULL,
    x TEXT NOT NULL, y TEXT NOT NULL,
    PRIMARY KEY (param, benchmark, model, mode, perturbation, origin, groups, item_id)
) WITHOUT ROWID
"""
_HEAD = ("benchmark", "model", "mode", "perturbation", "origin", "groups")
_COUNTS = ("results", "n", "positives", "excluded", "errors", "unrated")


def point_text(row: Sequence) -> str | None:
    """A result row's `fit_points` (RESULT_COLUMNS' order): None when its item has no numeric parameter."""
    return _text(row[_STATUS], row[_PARSED], row[_ITEM_REF], row[_PROBABILITIES])


def _text(status: str, parsed: str | None, item_ref: str | None, probabilities: str | None) -> str | None:
    ref = json.loads(item_ref) if item_ref else {}
    params = ref.get("params") if isinstance(ref, dict) else None
    if not params:
        return None
    answers = answers_p(probabilities) if probabilities else None
    found = points(status, json.loads(parsed) if parsed else None, params, answers)
    return json.dumps(found, separators=(",", ":")) if found else None


_CODE = "json_extract(j.value, '$[1]')"  # a point's code (fit_points.POSITIVE ...), j: json_each of fit_points
_COUNTED = {
    "results": "1",
    "n": f"({_CODE} IN ('{fit_points.POSITIVE}', '{fit_points.NEGATIVE}'))",
    "positives": f"({_CODE} = '{fit_points.POSITIVE}')",
    "excluded": f"({_CODE} = '{fit_points.EXCLUDED}')",
    "errors": f"({_CODE} = '{fit_points.ERROR}')",
    "unrated": f"({_CODE} = '{fit_points.UNRATED}')",
}


def _upsert(row: str, sign: str) -> str:
    counted = _COUNTED
    values = ", ".join(f"{sign}{counted[name]}" for name in _COUNTS)
    updates = ", ".join(f"{name} = {name} + excluded.{name}" for name in _COUNTS)
    return (
        f"INSERT INTO fit_levels (param, {', '.join(_HEAD)}, x, {', '.join(_COUNTS)}) SELECT j.key, "
        f"{', '.join(f'{row}.{name}' for name in _HEAD)}, json_extract(j.value, '$[0]'), {values} "
        f"FROM json_each({row}.fit_points) AS j WHERE {row}.fit_points IS NOT NULL "
        f"ON CONFLICT DO UPDATE SET {updates};"
    )


def _keep_graded(row: str) -> str:
    """The row's graded points (those with a y) into fit_graded. OR REPLACE: an older version's
    INSERT OR REPLACE of results removes the row it replaces without the delete trigger, and its
    write must not fail on the points left behind (the schema marker has the counts redone)."""
    return f"INSERT OR REPLACE INTO fit_graded {_graded_points_of(row, '')};"


def _graded_points_of(row: str, source: str) -> str:
    """fit_graded's columns, then the SELECT of the graded points of `row` (a result's alias),
    read from `source` (a FROM term ending in a comma, or '' in a trigger)."""
    return (
        f"(param, {', '.join(_HEAD)}, item_id, x, y) SELECT j.key, {', '.join(f'{row}.{name}' for name in _HEAD)}, "
        f"{row}.item_id, json_extract(j.value, '$[0]'), json_extract(j.value, '$[2]') "
        f"FROM {source} json_each({row}.fit_points) AS j "
        f"WHERE {row}.fit_points IS NOT NULL AND json_extract(j.value, '$[2]') IS NOT NULL"
    )


def _drop_graded(row: str) -> str:
    keys = " AND ".join(f"{name} = {row}.{name}" for name in (*_HEAD, "item_id"))
    return (
        f"DELETE FROM fit_graded WHERE {row}.fit_points IS NOT NULL AND param IN (SELECT key FROM "
        f"json_each({row}.fit_points)) AND {keys};"
    )


def _tidy(row: str) -> str:
    keys = " AND ".join(f"{name} = {row}.{name}" for name in _HEAD)
    return (
        f"DELETE FROM fit_levels WHERE {row}.fit_points IS NOT NULL AND param IN (SELECT key FROM "
        f"json_each({row}.fit_points)) AND {keys} AND results = 0;"
    )


_WATCHED = (*_HEAD, "item_id", COLUMN)
TRIGGER_NAMES = ("fit_levels_after_insert", "fit_levels_after_delete", "fit_levels_after_update")
TRIGGERS = (
    f"CREATE TRIGGER fit_levels_after_insert AFTER INSERT ON results WHEN new.fit_points IS NOT NULL "
    f"BEGIN {_upsert('new', '')} {_keep_graded('new')} END",
    f"CREATE TRIGGER fit_levels_after_delete AFTER DELETE ON results WHEN old.fit_points IS NOT NULL "
    f"BEGIN {_upsert('old', '-')} {_tidy('old')} {_drop_graded('old')} END",
    f"CREATE TRIGGER fit_levels_after_update AFTER UPDATE ON results WHEN "
    f"({' OR '.join(f'old.{name} IS NOT new.{name}' for name in _WATCHED)}) "
    f"BEGIN {_upsert('old', '-')} {_tidy('old')} {_drop_graded('old')} {_upsert('new', '')} {_keep_graded('new')} END",
)


def fill_column(db: sqlite3.Connection) -> None:
    """Every result's `fit_points` worked out again from its stored JSON (inside the caller's transaction)."""
    present = {row[1] for row in db.execute("PRAGMA table_info(results)")}
    if COLUMN not in present:
        db.execute(f"ALTER TABLE results ADD COLUMN {COLUMN} TEXT")
    rows = db.execute("SELECT rowid, status, parsed, item_ref, probabilities FROM results")
    while batch := rows.fetchmany(10_000):
        found = [(_text(*row), rowid) for rowid, *row in batch]
        db.executemany(f"UPDATE results SET {COLUMN} = ? WHERE rowid = ?", found)


_ROW_HEAD = ", ".join(f"r.{name}" for name in _HEAD)


def rebuild(db: sqlite3.Connection) -> None:
    """(Re)make the column, the table and its triggers from the results there (inside the
    caller's transaction): the table filled by one GROUP BY, counting as the triggers count."""
    for name in TRIGGER_NAMES:
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    fill_column(db)
    db.execute(TABLE)
    db.execute("DELETE FROM fit_levels")
    db.execute(
        f"INSERT INTO fit_levels (param, {', '.join(_HEAD)}, x, {', '.join(_COUNTS)}) "
        f"SELECT j.key, {_ROW_HEAD}, json_extract(j.value, '$[0]'), "
        f"{', '.join(f'SUM({_COUNTED[c]})' for c in _COUNTS)} "
        f"FROM results AS r, json_each(r.fit_points) AS j WHERE r.fit_points IS NOT NULL "
        f"GROUP BY j.key, {_ROW_HEAD}, json_extract(j.value, '$[0]')"
    )
    _fill_graded(db)
    for statement in TRIGGERS:
        db.execute(statement)


def add_graded(db: sqlite3.Connection) -> None:
    """Upgrade a store version 7 left (inside the caller's transaction): its `fit_points` and
    fit_levels are current (that version kept them), so only fit_graded is made, and the
    triggers that keep it with the rest: about 30 s at a million, where `rebuild` and the other
    counts made again take minutes."""
    for name in TRIGGER_NAMES:
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    _fill_graded(db)
    for statement in TRIGGERS:
        db.execute(statement)


def _fill_graded(db: sqlite3.Connection) -> None:
    db.execute(GRADED_TABLE)
    db.execute("DELETE FROM fit_graded")
    db.execute(f"INSERT INTO fit_graded {_graded_points_of('r', 'results AS r,')}")


def tallies(db: sqlite3.Connection, where: Where, param: str, by: Sequence[str]) -> dict[Head, Tally]:
    """The choice fits' parts per report row (overall, and each value of the groups in `by`),
    every origin pooled, as psychometric.fit_rows buckets results."""
    clause, values = where.sql()
    if by:
        columns, tail = "groups, x, n, positives, excluded, errors, unrated", ""
    else:  # overall rows alone: the group sets (and origins) added up by SQLite, a tenth of the rows
        columns = "'{}', x, SUM(n), SUM(positives), SUM(excluded), SUM(errors), SUM(unrated)"
        tail = " GROUP BY benchmark, model, mode, perturbation, x"
    rows = db.execute(
        f"SELECT benchmark, model, mode, perturbation, {columns} FROM fit_levels WHERE param = ? AND {clause}{tail}",
        [param, *values],
    )
    found: dict[Head, Tally] = {}
    decoded: dict[str, dict] = {}
    for benchmark, model, mode, perturbation, groups, x, *counts in rows:
        names = decoded.get(groups)
        if names is None:
            names = decoded[groups] = json.loads(groups)
        level = float(x)
        for head in heads((benchmark, model, mode, perturbation), names, by):
            tally = found.get(head)
            if tally is None:
                tally = found[head] = Tally()
            tally.add(level, *counts)
    return found


def graded_points(db: sqlite3.Connection, where: Where, param: str, by: Sequence[str]) -> dict[Head, list]:
    """The graded fits' (x, y) per report row, from fit_graded: each cell's (and, for a breakdown,
    each origin's and group set's) points come back as two joined texts, grouped in the table's
    own order (no sort), so SQLite hands Python a few hundred strings, not 250,000 rows."""
    clause, values = where.sql()
    keys = f"benchmark, model, mode, perturbation{', origin, groups' if by else ''}"
    rows = db.execute(
        f"SELECT benchmark, model, mode, perturbation, {'groups' if by else 'NULL'}, group_concat(x), group_concat(y) "
        f"FROM fit_graded WHERE param = ? AND {clause} GROUP BY {keys}",
        [param, *values],
    )
    found: dict[Head, list] = {}
    for benchmark, model, mode, perturbation, groups, xs, ys in rows:
        names = json.loads(groups) if groups is not None else {}
        # Made floats here, not by SQLite, whose reading of a repr is off by a unit in the last
        # place about once in 10,000 (the fits must equal those from Results). A repr holds no comma.
        points = list(zip(map(float, xs.split(",")), map(float, ys.split(",")), strict=True))
        for head in heads((benchmark, model, mode, perturbation), names, by):
            found.setdefault(head, []).extend(points)
    return found


class _Store(Protocol):  # what of probes.running.store.Store this reads
    def fit_parts(self, where: Where, param: str, by: Sequence[str] = ()) -> tuple[dict, dict] | None: ...

    def results(self, benchmark: str | None = None) -> list[Result]: ...


def stored_fits(
    store: _Store, where: Where, param: str, by: Sequence[str] = (), *, resamples: int = RESAMPLES, seed: int = 0
) -> list[FitRow]:
    """`report --fit param` of the results that pass `where`, every origin: from the kept counts
    and the probabilities' points, or, where the counts cannot be trusted, from Results by
    fits.fit_table (the same rows either way). The closing line of `run --until-pse-width` is
    this very call."""
    parts = store.fit_parts(where, param, by)
    if parts is None:
        results = [r for r in store.results(where.benchmark) if where.keeps(
            (r.benchmark, r.model, r.mode, r.perturbation, r.origin.value, ""))]  # fmt: skip
        return fit_table(results, param, by, resamples=resamples, seed=seed)
    return fit_rows_of(*parts, param, resamples=resamples, seed=seed)

"""Stores as older versions of the playground left them, made from a current one: the tests of
upgrades and of reading old stores start from these."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from probes.running import calibration_kept, fit_kept
from probes.running.cells import TRIGGER_NAMES


def before_calibration_sums(db: sqlite3.Connection, version: int = 6) -> None:
    """Take the store open in `db` back to before the kept calibration sums and fit counts (schema
    version 7): no calibration or fit columns on the results, no calibration_cells nor fit_levels,
    no triggers keeping them."""
    for name in (*calibration_kept.TRIGGER_NAMES, *fit_kept.TRIGGER_NAMES):
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    db.execute("DROP TABLE IF EXISTS calibration_cells")
    db.execute("DROP TABLE IF EXISTS fit_levels")
    db.execute("DROP TABLE IF EXISTS fit_graded")
    for name in (*calibration_kept.COLUMNS, fit_kept.COLUMN):
        db.execute(f"ALTER TABLE results DROP COLUMN {name}")
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))


def before_graded_points(db: sqlite3.Connection) -> None:
    """Take the store open in `db` back to version 7: the fit counts kept by its triggers, which
    then kept no graded points, and no fit_graded."""
    for name in fit_kept.TRIGGER_NAMES:
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    db.execute("DROP TABLE IF EXISTS fit_graded")
    for statement in fit_kept.TRIGGERS:
        for row in ("new", "old"):
            statement = statement.replace(fit_kept._keep_graded(row), "").replace(fit_kept._drop_graded(row), "")
        assert "fit_graded" not in statement
        db.execute(statement)
    db.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")


def before_counts(db: sqlite3.Connection, version: int = 4) -> None:
    """Take the store open in `db` back to before the kept counts (schema version 5): no cells
    table, no triggers keeping it, no index for the series views, and an older version's mark."""
    before_calibration_sums(db, version)
    for name in TRIGGER_NAMES:
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    db.execute("DROP TABLE IF EXISTS cells")
    db.execute("DROP INDEX IF EXISTS results_series")
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))


def as_version_3(path: Path) -> None:
    """The store at `path` as version 3 left it: before the counts, and no `ungraded` column."""
    with sqlite3.connect(path) as db:
        before_counts(db, 3)
        db.execute("ALTER TABLE results DROP COLUMN ungraded")
    db.close()

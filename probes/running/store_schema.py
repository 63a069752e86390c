"""The results store's layout (probes/running/store.py) and how a store an older version left is
brought up to date as it is opened for writing: columns added, grades an older version got wrong
taken out, and the kept counts (cells.py, calibration_kept.py, fit_kept.py) made again, or, from
version 7, only what that version did not keep."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from probes.running import calibration_kept, cells, fit_kept
from probes.running.store_reads import SCHEMA_VERSION

_log = logging.getLogger(__name__)
UPGRADE_NOTICE_FROM = 20_000  # results from which an upgrade says so first (a second or more)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS responses (
    cache_key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    reply TEXT NOT NULL,
    latency REAL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    raw TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    benchmark TEXT NOT NULL,
    item_id TEXT NOT NULL,
    model TEXT NOT NULL,
    mode TEXT NOT NULL,
    perturbation TEXT NOT NULL,
    status TEXT NOT NULL,
    reply TEXT,
    parsed TEXT,
    correct INTEGER,
    score REAL,
    target TEXT,
    latency REAL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    error TEXT,
    prompt_hash TEXT,
    cache_key TEXT,
    groups TEXT NOT NULL,
    item_ref TEXT NOT NULL,
    created_at REAL NOT NULL,
    origin TEXT NOT NULL DEFAULT 'run',
    ungraded TEXT,
    probabilities TEXT,
    PRIMARY KEY (benchmark, item_id, model, mode, perturbation)
);
CREATE INDEX IF NOT EXISTS results_by_model ON results (model, benchmark);
CREATE TABLE IF NOT EXISTS image_hashes (ref TEXT PRIMARY KEY, sha256 TEXT NOT NULL);
"""


# Before version 4 a transformed picture was graded against the upright picture's answer. The
# benchmarks whose truth the transform cannot change kept right grades; every other result under
# it is taken out of the scores until it is graded again (a re-run regrades it from the cache).
_TRUTH_KEPT_BEFORE_V4 = {
    "flip-vertical": (
        "blind/touching-circles", "blind/line-intersections", "blind/olympic-circles", "blind/olympic-pentagons",
        "blind/nested-squares", "blind/grid-count", "blind/subway-paths", "illusion/ebbinghaus", "illusion/delboeuf",
        "illusion/vertical-horizontal", "illusion/zoellner", "illusionvqa/soft-localization",
    ),
    "grayscale": ("blind/%", "illusion/%", "illusionvqa/soft-localization"),
}  # fmt: skip
REGRADE = "graded before its truth followed the picture sent: run (or import) it again to regrade it"


def bring_up_to_date(db: sqlite3.Connection, path: Path) -> None:
    """Make the store's tables, or bring an older layout up to this version's (inside the
    caller's transaction), and mark it with this version."""
    marked = "meta" in {row[0] for row in db.execute("SELECT name FROM sqlite_master")} and (
        db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    )
    version = marked[0] if marked else None  # None: a new store, or one from before the marks
    for statement in SCHEMA.strip().split(";"):
        if statement.strip():
            db.execute(statement)
    columns = {row[1] for row in db.execute("PRAGMA table_info(results)")}
    if "score" not in columns:  # a version 1 store: every score was right/wrong
        db.execute("ALTER TABLE results ADD COLUMN score REAL")
        db.execute("UPDATE results SET score = correct WHERE status != 'error'")
    if "origin" not in columns:  # before version 3: the origin is read off the item reference
        db.execute("ALTER TABLE results ADD COLUMN origin TEXT NOT NULL DEFAULT 'run'")
        for key, origin in (("imported_from", "import"), ("judge", "judgement"), ("taken_by", "human")):
            db.execute(
                "UPDATE results SET origin = ? WHERE json_extract(item_ref, ?) IS NOT NULL",
                (origin, f"$.{key}"),
            )
    if "ungraded" not in columns:
        db.execute("ALTER TABLE results ADD COLUMN ungraded TEXT")
        _ungrade_transformed_before_v4(db)
    if "probabilities" not in columns:  # before version 6: no answer had probabilities
        db.execute("ALTER TABLE results ADD COLUMN probabilities TEXT")
    # Calibration (report, the Scoreboard) reads only the results with probabilities, by
    # benchmark and origin: this index holds those alone, so a million results without
    # any cost that read nothing, and none of the writes of results without them.
    db.execute(
        "CREATE INDEX IF NOT EXISTS results_with_probabilities ON results (benchmark, origin)"
        " WHERE probabilities IS NOT NULL"
    )
    if version is not None and version != str(SCHEMA_VERSION):
        _say_upgrading(db, path, version)
    if version == "7":  # kept every count but the graded points: those alone
        fit_kept.add_graded(db)
    elif version != str(SCHEMA_VERSION):
        # A new store, one from before the counts, or one an older version wrote since
        # (it marks its own version, and its INSERT OR REPLACE fires no delete trigger;
        # nor does it set the calibration columns of what it writes).
        cells.rebuild(db)
        calibration_kept.rebuild(db)
        fit_kept.rebuild(db)
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))


def _ungrade_transformed_before_v4(db: sqlite3.Connection) -> None:
    for perturbation, kept in _TRUTH_KEPT_BEFORE_V4.items():
        keep = " AND ".join("benchmark NOT LIKE ?" for _ in kept)
        db.execute(
            f"UPDATE results SET correct = NULL, score = NULL, ungraded = ? WHERE perturbation = ? AND status != 'error'"
            f" AND {keep}",
            (REGRADE, perturbation, *kept),
        )


def _say_upgrading(db: sqlite3.Connection, path: Path, version: str) -> None:
    """A line on the log (stderr, where nothing else handles it) before a long upgrade: the
    counts are made again from every result, seconds to minutes at a million."""
    (count,) = db.execute("SELECT COUNT(*) FROM results").fetchone()
    if count >= UPGRADE_NOTICE_FROM:
        _log.warning(
            "upgrading the results store %s (%s results, written by version %s of its layout) to version %s: "
            "its kept counts are made once, which takes %s", path, f"{count:,}", version, SCHEMA_VERSION,
            "about 30 s a million results" if version == "7" else "a few minutes a million results",
        )  # fmt: skip

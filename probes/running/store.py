"""The results store: SQLite in WAL mode, one row per result, committed as each arrives.

Two tables:
- `responses`: raw replies keyed by the cache key (model, endpoint, settings, messages with
  images as content hashes). Only real replies are kept, never errors, so a failed request is
  sent again next time and an answered deterministic one never is.
- `results`: the graded answer per (benchmark, item, model, mode, perturbation); a new run of the
  same cell replaces the old row, so nothing is counted twice, except that an error (no reply at
  all) never replaces a reply: a failing re-run cannot spoil an answered result.
- `image_hashes`: content hash per image reference (a generator's version and parameters, or a
  file's path, size and modification time), so a cached re-run finds its answers without
  drawing or decoding a single image.

It holds item references (ids, seeds, parameters, image hashes), never image bytes or keys.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from models.types import Output, Usage
from probes.core.errors import InputRejected
from probes.core.types import Result, Status
from probes.running import cells, store_schema
from probes.running.store_access import (
    DISK_FULL,
    StoreReadOnly,
    connect_read_only,
    disk_full,
    is_full,
    uncreatable,
    unwritable,
)
from probes.running.store_bulk import StoreBulk
from probes.running.store_reads import RESULT_COLUMNS, RESULT_KEY, WRITE_COLUMNS, StoreReads, written

# A new run of a cell replaces its row by an UPSERT, not INSERT OR REPLACE: the replaced row then
# fires the update triggers that keep the counts (a REPLACE deletes it without firing any). The key
# is left out of the SET: assigning it, even to itself, rewrites the indexes that hold it.
_KEY = RESULT_KEY
_INSERT_RESULT = (
    f"INSERT INTO results ({', '.join(WRITE_COLUMNS)}) VALUES ({', '.join('?' * len(WRITE_COLUMNS))})"
    f" ON CONFLICT ({', '.join(_KEY)}) DO UPDATE SET "
    + ", ".join(f"{column} = excluded.{column}" for column in WRITE_COLUMNS if column not in _KEY)
)
# An error (no reply at all) never replaces a reply: it only fills an empty cell or an earlier error.
_INSERT_ERROR = _INSERT_RESULT + " WHERE results.status = 'error'"


_BATCH = 500  # values per IN (...) query, well under SQLite's limit on bound parameters
# What a reader looks up beyond the results, as store_schema.SCHEMA creates them (a read-only
# store opened from an early version may lack them).
_READ_ONLY_STAND_INS = {
    "responses": "cache_key TEXT PRIMARY KEY, model TEXT, endpoint TEXT, reply TEXT, latency REAL, "
    "input_tokens INTEGER, output_tokens INTEGER, raw TEXT, created_at REAL",
    "image_hashes": "ref TEXT PRIMARY KEY, sha256 TEXT NOT NULL",
}


def _enter_wal(db: sqlite3.Connection) -> None:
    """Switch to WAL. A process opening a new store while another switches it finds it locked
    (SQLite's busy handler does not cover this), so the switch is retried for as long as the
    busy timeout would wait."""
    deadline = time.monotonic() + 60
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


_SERIALS = itertools.count(1)
_PROBABILITIES = "probabilities"  # the key of a cached reply's raw fields that holds its probabilities


def _raw(output: Output) -> str:
    """A reply's raw fields as kept in the cache, with its probabilities (if any) among them."""
    kept = output.probability_fields()
    return json.dumps(output.raw | {_PROBABILITIES: kept} if kept else output.raw, default=str)


def _output(
    reply: str, latency: float | None, input_tokens: int | None, output_tokens: int | None, raw: str | None
) -> Output:
    fields = json.loads(raw or "{}")
    probabilities = fields.pop(_PROBABILITIES, None) if isinstance(fields, dict) else None
    output = Output(reply, latency or 0.0, Usage(input_tokens, output_tokens), fields)
    return output.with_probability_fields(probabilities) if probabilities is not None else output


def _probabilities(result: Result) -> str | None:
    if result.probabilities is None:
        return None
    data: dict = {"p": result.probabilities, "mass": result.probability_mass}
    if result.alternatives:
        data["top"] = [list(pair) for pair in result.alternatives]
    return json.dumps(data)


def default_path() -> Path:
    return Path(os.environ.get("PROBE_HOME", ".probe")) / "results.sqlite"


class Store(StoreReads, StoreBulk):
    """Safe to share between threads; several processes may write one file at once."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        image_cache_bytes: int | None = None,
        *,
        read_only: bool | None = None,
    ):
        """`image_cache_bytes`: the bound of the encoded images kept beside this store (None: the
        image cache's own default, PROBE_IMAGE_CACHE_MB or 512 MB).

        `read_only`: None (the default: `report`, the playground) writes where it can and opens
        a store it cannot write (a read-only file, folder or file system) for reading only, its
        writes then refused with StoreReadOnly; False (`run`, `import`) refuses such a store at
        once, before any work; True never writes."""
        self.path = Path(path) if path else default_path()
        self.image_cache_bytes = image_cache_bytes
        self.read_only = False
        self._read_only_reason = ""
        self._lock = threading.Lock()
        self._counted = None  # cells counted in Python (StoreReads.cells)
        self._serial = next(_SERIALS)
        # A store that cannot be opened (a folder, a file that is not a database, a damaged or
        # unwritable one) is the user's to fix: one clear message, never a traceback.
        try:
            if self.path.parent.exists() and not self.path.parent.is_dir():
                raise NotADirectoryError(0, f"{self.path.parent} is a file, not a folder")
            if self.path.is_dir():
                raise IsADirectoryError(0, "it is a folder, not a file")
            reason = "opened for reading only" if read_only else unwritable(self.path)
            if reason is not None:
                if read_only is False:
                    raise StoreReadOnly(
                        f"results store {self.path} is read-only ({reason}): results cannot be saved there; "
                        "give --store a file you can write (report reads this one as it is)"
                    )
                self._open_read_only(reason)
                return
            blocked = None if self.path.exists() else uncreatable(self.path)
            if blocked is not None:
                raise StoreReadOnly(
                    f"results store {self.path} cannot be made there ({blocked}): give --store a file in a folder "
                    "you can write"
                )
            try:
                self._open_for_writing()
            except (sqlite3.Error, OSError) as exc:
                # A full disk leaves what is stored readable: `report` and the Scoreboard read it.
                if not is_full(exc) or read_only is False or not self.path.exists():
                    raise
                try:
                    self._open_read_only(DISK_FULL)
                except (sqlite3.Error, OSError):  # nothing readable there yet: the disk is still the news
                    raise exc from None
        except (sqlite3.Error, OSError) as exc:
            if is_full(exc):
                raise InputRejected(disk_full(self.path, exc)) from None
            if (getattr(exc, "sqlite_errorname", "") or "").startswith("SQLITE_CORRUPT"):
                # Damage met while opening (the schema, its triggers' text spanning several pages),
                # worded as the command line words damage met later (probes/cli/checks.py).
                raise InputRejected(
                    f"results store {self.path}: it is damaged ({exc}); give --store a new file name, or repair it "
                    "(sqlite3 FILE .recover)"
                ) from None
            reason = getattr(exc, "strerror", None) or str(exc)
            raise InputRejected(
                f"results store {self.path}: cannot be opened ({reason}); give --store a new file name "
                "or a results store this playground wrote"
            ) from None

    def _open_for_writing(self) -> None:
        """Open (or make) the store in WAL mode and bring its schema up to date."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # A long busy timeout: a second writer (the UI while a CLI run goes on) waits for the
        # other's short transaction instead of failing with "database is locked".
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        try:
            self._db.execute("PRAGMA busy_timeout = 60000")
            _enter_wal(self._db)
            # NORMAL in WAL mode: a killed process loses nothing committed; only power loss can
            # drop the last few commits. FULL would fsync every result.
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._transaction():
                store_schema.bring_up_to_date(self._db, self.path)
        except BaseException:
            self._db.close()
            raise

    def _open_read_only(self, reason: str) -> None:
        """Open the store for reading only; every write is then refused (see `_transaction`)."""
        if not self.path.exists():
            raise FileNotFoundError(0, "there is no such file")
        self._db = connect_read_only(self.path)
        try:
            tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "results" not in tables:
                raise sqlite3.DatabaseError("it has no results table")
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(results)")}
            # A store from before probabilities is read as it is: its answers have none.
            self._absent = frozenset({"probabilities"} - columns)
            if not set(RESULT_COLUMNS) - self._absent <= columns:  # an older store: upgrading it would write
                raise InputRejected(
                    f"results store {self.path} is read-only ({reason}) and was written by an older version of "
                    "the playground: copy it to a folder you can write and read the copy (it is upgraded there)"
                )
            # Tables a reader may look in that an early store lacks: empty, in this connection only.
            for table, columns_sql in _READ_ONLY_STAND_INS.items():
                if table not in tables:
                    self._db.execute(f"CREATE TEMP TABLE {table} ({columns_sql})")
        except BaseException:
            self._db.close()
            raise
        self.read_only, self._read_only_reason = True, reason

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        if self.read_only:  # every write comes through here
            fix = (
                "free space on its disk"
                if self._read_only_reason == DISK_FULL
                else "make its file and folder writable, or set PROBE_HOME to a writable folder"
            )
            raise StoreReadOnly(
                f"the results store is read-only here ({self._read_only_reason}): results are shown but new ones "
                f"cannot be saved ({fix})"
            )
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")  # in WAL mode a full disk may show only here
            except BaseException:
                # SQLite rolls back by itself on some errors (a full disk among them): a second
                # ROLLBACK would fail and hide the error that matters behind "no transaction".
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- cache ---------------------------------------------------------------------------

    def cached(self, cache_key: str) -> Output | None:
        with self._lock:
            row = self._db.execute(
                "SELECT reply, latency, input_tokens, output_tokens, raw FROM responses WHERE cache_key = ?",
                (cache_key,),
            ).fetchone()
        if row is None:
            return None
        return _output(*row)

    def cached_many(self, cache_keys: Sequence[str]) -> dict[str, Output]:
        """`cached` for many keys, one query per 500 (a run's feeder looks up a chunk at once)."""
        found: dict[str, Output] = {}
        unique = list(dict.fromkeys(cache_keys))
        for start in range(0, len(unique), _BATCH):
            batch = unique[start : start + _BATCH]
            with self._lock:
                rows = self._db.execute(
                    "SELECT cache_key, reply, latency, input_tokens, output_tokens, raw FROM responses"
                    f" WHERE cache_key IN ({', '.join('?' * len(batch))})",
                    batch,
                ).fetchall()
            for key, *row in rows:
                found[key] = _output(*row)
        return found

    def image_hash(self, ref: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT sha256 FROM image_hashes WHERE ref = ?", (ref,)).fetchone()
        return row[0] if row else None

    def image_hashes(self, refs: Sequence[str]) -> dict[str, str]:
        """`image_hash` for many references, one query per 500: those known, by reference."""
        found: dict[str, str] = {}
        unique = list(dict.fromkeys(refs))
        for start in range(0, len(unique), _BATCH):
            batch = unique[start : start + _BATCH]
            with self._lock:
                rows = self._db.execute(
                    f"SELECT ref, sha256 FROM image_hashes WHERE ref IN ({', '.join('?' * len(batch))})", batch
                ).fetchall()
            found.update(rows)
        return found

    def remember_image_hashes(self, hashes: dict[str, str]) -> None:
        if not hashes or self.read_only:  # only a shortcut for the next run: nothing is lost
            return
        with self._transaction():
            self._db.executemany("INSERT OR REPLACE INTO image_hashes VALUES (?, ?)", hashes.items())

    # --- results -------------------------------------------------------------------------

    def record(self, result: Result, response: Output | None = None, endpoint: str = "") -> None:
        """Save one result (and the fresh response behind it) in one short transaction."""
        self.record_many([(result, response, endpoint)])

    def record_many(
        self, entries: list[tuple[Result, Output | None, str]], image_hashes: Mapping[str, str] | None = None
    ) -> None:
        """Save several results in one transaction (a cached re-run writes hundreds at once), with
        the content hashes of images seen for the first time (see `remember_image_hashes`)."""
        if not entries and not image_hashes:
            return
        now = time.time()
        responses = [
            (result.cache_key, result.model, endpoint, response.text, response.latency, response.usage.input_tokens,
             response.usage.output_tokens, _raw(response), now)
            for result, response, endpoint in entries
            if response is not None and result.cache_key
        ]  # fmt: skip
        results = [
            (result.benchmark, result.item_id, result.model, result.mode, result.perturbation, result.status.value,
             result.reply, json.dumps(result.parsed), None if result.correct is None else int(result.correct),
             result.score, json.dumps(result.target), result.latency, result.input_tokens, result.output_tokens, result.error,
             result.prompt_hash, result.cache_key, json.dumps(dict(result.groups), sort_keys=True),
             json.dumps(result.item_ref.as_dict() if result.item_ref else {}, sort_keys=True, default=str), now,
             result.origin.value, result.ungraded, _probabilities(result))
            for result, _, _ in entries
        ]  # fmt: skip
        results = [written(row) for row in results]
        replies = [row for row in results if row[5] != Status.ERROR.value]
        errors = [row for row in results if row[5] == Status.ERROR.value]
        # Only the statements with rows: each call lets go of the GIL, and getting it back can
        # take milliseconds while other threads work (this one holding the store meanwhile).
        with self._transaction():
            if responses:
                self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", responses)
            if replies:
                self._db.executemany(_INSERT_RESULT, replies)
            if errors:
                self._db.executemany(_INSERT_ERROR, errors)
            if image_hashes:
                self._db.executemany("INSERT OR REPLACE INTO image_hashes VALUES (?, ?)", image_hashes.items())

    def delete(self, where: cells.Where, *, dry_run: bool = False) -> int:
        """Take away the results that pass `where`, which must name at least a model (a slip never
        empties the store); how many there were. The cells follow by their delete trigger, in the
        same transaction. Cached replies stay: they are answers already paid for, and a re-run
        that wants them back costs nothing. `dry_run`: only count them."""
        if not where.models:
            raise InputRejected("say which model's results to delete")
        clause, values = where.sql()
        if dry_run:
            with self._lock:
                return self._db.execute(f"SELECT COUNT(*) FROM results WHERE {clause}", values).fetchone()[0]
        with self._transaction():
            return self._db.execute(f"DELETE FROM results WHERE {clause}", values).rowcount

    def record_responses(self, entries: Sequence[tuple[str, str, str, Output]]) -> None:
        """Keep replies as a cache only, with no result rows: (cache key, model, endpoint, output)
        each (the shared cache of a public Space: answers bought with its keys, for any visitor)."""
        if not entries:
            return
        now = time.time()
        rows = [
            (key, model, endpoint, output.text, output.latency, output.usage.input_tokens, output.usage.output_tokens,
             _raw(output), now)
            for key, model, endpoint, output in entries
        ]  # fmt: skip
        with self._transaction():
            self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

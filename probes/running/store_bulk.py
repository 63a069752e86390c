"""Writing many results at once (an import of a million lines): a mixin of `Store`
(probes/running/store.py), which opens the database and owns its transactions.

Rows arrive already built, in `RESULT_COLUMNS`' order (an import makes them without a `Result`
each, see probes/running/import_writing.py). They are first put in a temporary table of this
connection, then moved into `results` by one statement per transaction: the move writes every
row as `Store.record_many` does (the same upsert, an error never replacing a reply, the cells
kept by the same triggers), but as one SQLite call, so the thread that makes it lets go of the
GIL for the whole move and the rows of the next batch are read and graded meanwhile.

While an import writes, the connection is tuned for it (`bulk`): a million-result store's indexes
are hundreds of MB, more than SQLite's default 2 MB page cache, and the write-ahead log is
copied back less often (measured with bench/importing.py, see BENCHMARKS.md).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from probes.running.store_reads import RESULT_KEY, WRITE_COLUMNS, written

_STAGE = "temp.results_arriving"
_COLUMNS = ", ".join(WRITE_COLUMNS)  # the rows' columns, and what each adds to the kept sums
_SET = ", ".join(f"{column} = excluded.{column}" for column in WRITE_COLUMNS if column not in RESULT_KEY)
# As store._INSERT_RESULT and _INSERT_ERROR, but from the staged rows, in the order they came.
# (The WHERE before ON CONFLICT also keeps SQLite from reading ON as a join's.)
_MOVE = (
    f"INSERT INTO results ({_COLUMNS}) SELECT {_COLUMNS} FROM {_STAGE} WHERE status {{}} 'error' ORDER BY rowid"
    f" ON CONFLICT ({', '.join(RESULT_KEY)}) DO UPDATE SET {_SET}"
)
_MOVE_REPLIES = _MOVE.format("!=")
_MOVE_ERRORS = _MOVE.format("=") + " WHERE results.status = 'error'"
BULK_CACHE_KIB = 256 * 1024
BULK_CHECKPOINT_PAGES = 20_000


class StoreBulk:
    """`stage` rows, then `commit_staged` them, one batch at a time."""

    _db: sqlite3.Connection
    _lock: threading.Lock
    read_only: bool
    _transaction: Callable[[], AbstractContextManager[None]]  # Store's: every write to the store goes through it

    def stage(self, rows: Sequence[tuple]) -> None:
        """Keep `rows` (each in RESULT_COLUMNS' order) for the next `commit_staged`. Nothing is
        written to the store yet: the table is this connection's own, in its temporary database."""
        if self.read_only:
            with self._transaction():  # refuses, saying why, before any row is made
                pass
        with self._transaction_on_stage():
            self._db.executemany(
                f"INSERT INTO {_STAGE} VALUES ({', '.join('?' * len(WRITE_COLUMNS))})",
                map(written, rows),
            )

    def commit_staged(self) -> int:
        """Write the staged rows into `results` in one transaction, as `record_many` writes
        results (replies first, then errors); how many were written."""
        with self._transaction():
            count = self._db.execute(f"SELECT count(*) FROM {_STAGE}").fetchone()[0]
            self._db.execute(_MOVE_REPLIES)
            self._db.execute(_MOVE_ERRORS)
            self._db.execute(f"DELETE FROM {_STAGE}")
        return count

    def discard_staged(self) -> None:
        with self._transaction_on_stage():
            self._db.execute(f"DELETE FROM {_STAGE}")

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """This connection tuned for many writes, then set back: a larger page cache, and the
        write-ahead log copied back into the store every BULK_CHECKPOINT_PAGES rather than every
        1,000 pages (each batch dirties index pages that the next batches dirty again)."""
        settings = {"cache_size": -BULK_CACHE_KIB, "wal_autocheckpoint": BULK_CHECKPOINT_PAGES}
        with self._lock:
            before = {name: self._db.execute(f"PRAGMA {name}").fetchone()[0] for name in settings}
            for name, value in settings.items():
                self._db.execute(f"PRAGMA {name} = {int(value)}")
        try:
            yield
        finally:
            with self._lock:
                for name, value in before.items():
                    self._db.execute(f"PRAGMA {name} = {int(value)}")

    @contextmanager
    def _transaction_on_stage(self) -> Iterator[None]:
        """A transaction on the temporary table alone: it takes no lock on the store itself, so
        another process writing meanwhile neither waits for it nor is waited for."""
        with self._lock:
            # Columns without a type: a value is kept exactly as bound, and takes `results`'
            # column types only when it is moved there, as a bound value would.
            self._db.execute(f"CREATE TABLE IF NOT EXISTS {_STAGE} ({_COLUMNS})")
            self._db.execute("BEGIN")
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

"""Replies kept for shared links: what a visitor of a public Space paid for with their own key,
kept under their probe's link so that anyone who opens the link sees the same answers, with
nothing sent.

Kept by (link id, cache key): only a holder of the link (its id is random, 128 bits) reads them,
never another visitor who happens to ask the same thing (who would otherwise get the first
visitor's paid answers for free). Bounded: replies older than `KEEP_DAYS` days are swept, and at
most `MAX_REPLIES` are kept in all (the oldest go first). A link names the day it was made, so a
replay whose replies were swept can say the link expired rather than that they were never there.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from models.types import Output

KEEP_DAYS = 30
MAX_REPLIES = 5_000  # each at most 50,000 characters (models/replies.py): a bound on the file too
DAY = 86_400.0
# A reply's probabilities (its tokens' alternatives, or a local model's scores) are kept with it
# up to this size, so that a replay shows the same bars; a long chain of thought's are not (the
# replay then shows none, never made-up ones): 5,000 replies stay within ~400 MB.
MAX_PROBABILITY_BYTES = 32_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS link_replies (
    link TEXT NOT NULL,
    cache_key TEXT NOT NULL,
    reply TEXT NOT NULL,
    latency REAL,
    created_at REAL NOT NULL,
    probabilities TEXT,
    PRIMARY KEY (link, cache_key)
);
CREATE INDEX IF NOT EXISTS link_replies_by_age ON link_replies (created_at);
"""


def new_link_id() -> str:
    return secrets.token_urlsafe(16)


def today() -> int:
    """The day a link is made on (days since 1970), which it carries."""
    return int(time.time() // DAY)


def expired(day: int | None, now: float | None = None) -> bool:
    """Whether a link made on `day` is past the days its replies are kept."""
    if day is None:
        return False
    return ((time.time() if now is None else now) // DAY) - day > KEEP_DAYS


class LinkStore:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._lock = threading.Lock()
        with self._lock:
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(link_replies)")}
            if "probabilities" not in columns:  # a file kept before replies kept their probabilities
                self._db.execute("ALTER TABLE link_replies ADD COLUMN probabilities TEXT")

    def keep(self, link: str, replies: Sequence[tuple[str, Output]]) -> None:
        """Keep `replies` (cache key, output) under `link`, then hold the bounds."""
        if not replies:
            return
        now = time.time()
        rows = [(link, key, output.text, output.latency, now, _probabilities(output)) for key, output in replies]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO link_replies (link, cache_key, reply, latency, created_at, probabilities)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )
                self._sweep(now)
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def reader(self, link: str) -> LinkReplies:
        return LinkReplies(self, link)

    def cached(self, link: str, cache_key: str) -> Output | None:
        with self._lock:
            row = self._db.execute(
                "SELECT reply, latency, created_at, probabilities FROM link_replies WHERE link = ? AND cache_key = ?",
                (link, cache_key),
            ).fetchone()
        if row is None or expired(int(row[2] // DAY)):
            return None
        output = Output(row[0], row[1] or 0.0)
        return output.with_probability_fields(json.loads(row[3])) if row[3] else output

    def sweep(self, now: float | None = None) -> None:
        with self._lock:
            self._sweep(time.time() if now is None else now)

    def _sweep(self, now: float) -> None:
        self._db.execute("DELETE FROM link_replies WHERE created_at < ?", (now - (KEEP_DAYS + 1) * DAY,))
        count = self._db.execute("SELECT COUNT(*) FROM link_replies").fetchone()[0]
        if count > MAX_REPLIES:
            self._db.execute(
                "DELETE FROM link_replies WHERE rowid IN (SELECT rowid FROM link_replies ORDER BY created_at LIMIT ?)",
                (count - MAX_REPLIES,),
            )

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM link_replies").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _probabilities(output: Output) -> str | None:
    fields = output.probability_fields()
    kept = json.dumps(fields) if fields else None
    return kept if kept is not None and len(kept) <= MAX_PROBABILITY_BYTES else None


class LinkReplies:
    """One link's kept replies, read like a store's cache (`cached(key)`)."""

    def __init__(self, store: LinkStore, link: str):
        self.store, self.link = store, link

    def cached(self, cache_key: str) -> Output | None:
        return self.store.cached(self.link, cache_key)

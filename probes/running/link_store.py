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

_SCHEMA = """
CREATE TABLE IF NOT EXISTS link_replies (
    link TEXT NOT NULL,
    cache_key TEXT NOT NULL,
    reply TEXT NOT NULL,
    latency REAL,
    created_at REAL NOT NULL,
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

    def keep(self, link: str, replies: Sequence[tuple[str, Output]]) -> None:
        """Keep `replies` (cache key, output) under `link`, then hold the bounds."""
        if not replies:
            return
        now = time.time()
        rows = [(link, key, output.text, output.latency, now) for key, output in replies]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT OR REPLACE INTO link_replies VALUES (?, ?, ?, ?, ?)", rows)
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
                "SELECT reply, latency, created_at FROM link_replies WHERE link = ? AND cache_key = ?",
                (link, cache_key),
            ).fetchone()
        if row is None or expired(int(row[2] // DAY)):
            return None
        return Output(row[0], row[1] or 0.0)

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


class LinkReplies:
    """One link's kept replies, read like a store's cache (`cached(key)`)."""

    def __init__(self, store: LinkStore, link: str):
        self.store, self.link = store, link

    def cached(self, cache_key: str) -> Output | None:
        return self.store.cached(self.link, cache_key)

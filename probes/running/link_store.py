"""Replies kept for shared links: what a visitor of a public Space paid for with their own key,
kept under their probe's link so that anyone who opens the link sees the same answers, with
nothing sent.

A link names cache keys (`link_names`), each with the reply its maker saw; a reply is kept once
(`kept_replies`, by a digest of its cache key, text and probabilities), however many links name
it (a probe asked again, the same answers under other links), and read only through a link that
names it: only a holder of the
link (its id is unguessable) reads it, never another visitor who happens to ask the same thing
(who would otherwise get the first visitor's paid answers for free).

Bounded without letting one visitor push out another: each name is its owner's (the session and
the address that kept it); a session keeps at most `PER_VISITOR` names and an address
`PER_ADDRESS`, each losing its own oldest first; past `MAX_NAMES` in all, nothing new is kept
(the link then replays what the caches hold) rather than anyone's link emptied. Names older than
`KEEP_DAYS` days are swept, and with them the replies no link names any more. A link names the
day it was made, so a replay whose replies were swept can say the link expired rather than that
they were never there.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from models.types import Output

KEEP_DAYS = 30
PER_VISITOR = 200  # names one session keeps: its six latest probes of four models under eight conditions
PER_ADDRESS = 400  # names one address keeps (a class behind one router shares it)
# Names in all. Each reply is at most 50,000 characters (models/replies.py) and kept once however
# many names it has: at most ~500 MB of replies, and far less where links name the same answers.
MAX_NAMES = 10_000
DAY = 86_400.0
# A reply's probabilities (its tokens' alternatives, or a local model's scores) are kept with it
# up to this size, so that a replay shows the same bars; a long chain of thought's are not (the
# replay then shows none, never made-up ones).
MAX_PROBABILITY_BYTES = 32_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kept_replies (
    reply_id TEXT PRIMARY KEY,
    reply TEXT NOT NULL,
    latency REAL,
    probabilities TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS link_names (
    link TEXT NOT NULL,
    cache_key TEXT NOT NULL,
    reply_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    address TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (link, cache_key)
);
CREATE INDEX IF NOT EXISTS link_names_by_owner ON link_names (owner, created_at);
CREATE INDEX IF NOT EXISTS link_names_by_address ON link_names (address, created_at);
CREATE INDEX IF NOT EXISTS link_names_by_reply ON link_names (reply_id);
CREATE INDEX IF NOT EXISTS link_names_by_age ON link_names (created_at);
"""
# A file kept before replies were kept once: its rows, each reply once, owned by nobody (no
# visitor's quota counts them; they go with their days).
_MIGRATE = """
INSERT OR IGNORE INTO kept_replies (reply_id, reply, latency, probabilities, created_at)
    SELECT 'old:' || link || ':' || cache_key, reply, latency, {probabilities}, created_at FROM link_replies;
INSERT OR IGNORE INTO link_names (link, cache_key, reply_id, owner, address, created_at)
    SELECT link, cache_key, 'old:' || link || ':' || cache_key, '', '', created_at FROM link_replies;
DROP TABLE link_replies;
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
    def __init__(self, path: Path, clock=time.time):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.clock = clock
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._lock = threading.Lock()
        with self._lock:
            self._db.executescript(_SCHEMA)
            tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "link_replies" in tables:
                columns = {row[1] for row in self._db.execute("PRAGMA table_info(link_replies)")}
                probabilities = "probabilities" if "probabilities" in columns else "NULL"
                self._db.executescript("BEGIN;" + _MIGRATE.format(probabilities=probabilities) + "COMMIT;")

    def keep(self, link: str, replies: Sequence[tuple[str, Output]], owner: str = "", address: str = "") -> int:
        """Name `replies` (cache key, output) under `link` for `owner` at `address`, each reply
        kept once; then hold the owner's and the address's bounds (their own oldest names go).
        Returns how many names the link holds of these (fewer when the store is full)."""
        if not replies:
            return 0
        now = self.clock()
        rows = {}  # cache key -> (reply id, reply, latency, probabilities): the last given for a key
        for key, output in replies:
            probabilities = _probabilities(output)
            rows[key] = (_reply_id(key, output.text, probabilities), output.text, output.latency, probabilities)
        keys = list(rows)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._sweep(now)
                named = {row[0] for row in self._db.execute(
                    f"SELECT cache_key FROM link_names WHERE link = ? AND cache_key IN ({','.join('?' * len(keys))})",
                    [link, *keys])}  # fmt: skip
                room = MAX_NAMES - self._db.execute("SELECT COUNT(*) FROM link_names").fetchone()[0]
                wanted = [key for key in keys if key in named] + [key for key in keys if key not in named][
                    : max(0, room)
                ]
                self._db.execute("CREATE TEMP TABLE IF NOT EXISTS dropped (reply_id TEXT)")
                self._db.execute("DELETE FROM dropped")
                self._db.executemany(
                    "INSERT INTO dropped SELECT reply_id FROM link_names WHERE link = ? AND cache_key = ?",
                    [(link, key) for key in wanted if key in named],
                )
                self._db.executemany(
                    "INSERT OR IGNORE INTO kept_replies (reply_id, reply, latency, probabilities, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [(*rows[key], now) for key in wanted],
                )
                # A name asked again is its owner's latest (the last of theirs to go), with the reply seen now.
                self._db.executemany(
                    "INSERT INTO link_names (link, cache_key, reply_id, owner, address, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (link, cache_key)"
                    " DO UPDATE SET reply_id = excluded.reply_id, created_at = excluded.created_at",
                    [(link, key, rows[key][0], owner, address, now) for key in wanted],
                )
                self._forget_orphans()
                if owner:
                    self._trim("owner", owner, PER_VISITOR)
                if address:
                    self._trim("address", address, PER_ADDRESS)
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        return len(wanted)

    def _trim(self, column: str, value: str, bound: int) -> None:
        """The oldest names of one owner (or address) past `bound`, and the replies no name keeps."""
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS dropped (reply_id TEXT)")
        self._db.execute("DELETE FROM dropped")
        over = f"SELECT rowid FROM link_names WHERE {column} = ? ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?"
        self._db.execute(f"INSERT INTO dropped SELECT reply_id FROM link_names WHERE rowid IN ({over})", (value, bound))
        self._db.execute(f"DELETE FROM link_names WHERE rowid IN ({over})", (value, bound))
        self._forget_orphans()

    def _forget_orphans(self) -> None:
        self._db.execute(
            "DELETE FROM kept_replies WHERE reply_id IN (SELECT reply_id FROM dropped)"
            " AND reply_id NOT IN (SELECT reply_id FROM link_names)"
        )

    def reader(self, link: str) -> LinkReplies:
        return LinkReplies(self, link)

    def cached(self, link: str, cache_key: str) -> Output | None:
        with self._lock:
            row = self._db.execute(
                "SELECT r.reply, r.latency, n.created_at, r.probabilities FROM link_names n"
                " JOIN kept_replies r ON r.reply_id = n.reply_id WHERE n.link = ? AND n.cache_key = ?",
                (link, cache_key),
            ).fetchone()
        if row is None or expired(int(row[2] // DAY), self.clock()):
            return None
        output = Output(row[0], row[1] or 0.0)
        return output.with_probability_fields(json.loads(row[3])) if row[3] else output

    def sweep(self, now: float | None = None) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._sweep(self.clock() if now is None else now)
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def _sweep(self, now: float) -> None:
        """Names past their days, and the replies no name keeps (inside a transaction)."""
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS dropped (reply_id TEXT)")
        self._db.execute("DELETE FROM dropped")
        cutoff = now - (KEEP_DAYS + 1) * DAY
        self._db.execute("INSERT INTO dropped SELECT reply_id FROM link_names WHERE created_at < ?", (cutoff,))
        self._db.execute("DELETE FROM link_names WHERE created_at < ?", (cutoff,))
        self._forget_orphans()

    def count(self) -> int:
        """Names kept, over every link."""
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM link_names").fetchone()[0]

    def replies(self) -> int:
        """Replies kept (each once, however many links name it)."""
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM kept_replies").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _reply_id(cache_key: str, text: str, probabilities: str | None) -> str:
    """One reply as kept: the same answer to the same request is kept once, however many links name it."""
    return hashlib.sha256(json.dumps([cache_key, text, probabilities]).encode()).hexdigest()[:32]


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

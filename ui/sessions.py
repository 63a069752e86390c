"""Who is asking, and where their results go.

Locally, every result goes to the operator's store (`$PROBE_HOME`). In public mode a visitor's
evaluations, probes and answers go to a store of that browser session's own (a file under the
temp folder, deleted after an hour unused): nothing a visitor does appears on another visitor's
scoreboard or replaces the operator's results, and the scoreboard shows the operator's store plus
the visitor's own. A session's store holds at most `max_visitor_results` results.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from probes.core.errors import LimitExceeded
from probes.running.budget import Budget
from probes.running.limits import current as limits
from probes.running.store import Store

SESSION_DIR = Path(tempfile.gettempdir()) / "probe-sessions"
IDLE_SECONDS = 3600.0
MAX_OPEN = 256  # session stores kept open at once; older ones are closed (reopened on use)
# A session's encoded images (what its runs sent): a visitor cannot fill the disk through them.
SESSION_IMAGE_CACHE_BYTES = 32 * 2**20


@dataclass(frozen=True)
class Visitor:
    session: str  # Gradio's session hash (one browser tab)
    client: str  # the address the request came from (a Space forwards it in X-Forwarded-For)


def visitor(request: gr.Request | None) -> Visitor:
    if request is None:
        return Visitor("anonymous", "unknown")
    headers = getattr(request, "headers", None) or {}
    forwarded = headers.get("x-forwarded-for", "") if hasattr(headers, "get") else ""
    peer = getattr(getattr(request, "client", None), "host", None) or "unknown"
    client = client_address(forwarded, peer, limits().trusted_proxies)
    return Visitor(getattr(request, "session_hash", None) or "anonymous", client[:64])


def client_address(forwarded: str, peer: str, trusted_proxies: int) -> str:
    """The address of the client: the one the outermost trusted proxy saw and appended to
    X-Forwarded-For. Entries further left are the client's own words (anyone can send the
    header), so they are never taken: a client cannot name a new address for a fresh budget."""
    if trusted_proxies <= 0:
        return peer
    entries = [entry.strip() for entry in forwarded.split(",") if entry.strip()]
    return entries[-trusted_proxies] if len(entries) >= trusted_proxies else peer


@functools.cache
def shared_store() -> Store:
    """The operator's store (thread-safe), under $PROBE_HOME."""
    return Store()


class SessionStores:
    def __init__(self, folder: Path = SESSION_DIR):
        self.folder = folder
        self._open: dict[str, tuple[Store, float]] = {}
        self._lock = threading.Lock()

    def path(self, session: str) -> Path:
        # Hashed: a session hash comes from the client and must not shape a path.
        return self.folder / f"{hashlib.sha256(session.encode()).hexdigest()[:32]}.sqlite"

    def get(self, session: str, create: bool = True) -> Store | None:
        with self._lock:
            opened = self._open.get(session)
            if opened is not None:
                self._open[session] = (opened[0], time.monotonic())
                return opened[0]
            path = self.path(session)
            if not create and not path.exists():
                return None
            self.folder.mkdir(parents=True, exist_ok=True)
            store = Store(path, image_cache_bytes=SESSION_IMAGE_CACHE_BYTES)
            self._open[session] = (store, time.monotonic())
            if len(self._open) > MAX_OPEN:
                oldest = min(self._open, key=lambda s: self._open[s][1])
                self._open.pop(oldest)[0].close()
        self.sweep()
        return store

    def sweep(self, idle: float = IDLE_SECONDS) -> None:
        """Close and delete the stores of sessions unused for `idle` seconds."""
        cutoff = time.time() - idle
        with self._lock:
            for session, (store, _) in list(self._open.items()):
                if _modified(store.path) < cutoff:
                    self._open.pop(session)
                    store.close()
        if not self.folder.exists():
            return
        open_paths = {s.path for s, _ in self._open.values()}
        for path in self.folder.glob("*.sqlite*"):
            # A store's files: the database, its -wal/-shm, and its image cache (a folder).
            store_path = path.with_name(path.name.split(".sqlite")[0] + ".sqlite")
            if store_path in open_paths or _modified(path) >= cutoff:
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def _modified(path: Path) -> float:
    try:
        return max(p.stat().st_mtime for p in (path, path.with_name(path.name + "-wal")) if p.exists())
    except ValueError:
        return 0.0


SESSIONS = SessionStores()


def store_for(request: gr.Request | None) -> Store:
    """Where this visitor's results go: their session's store in public mode, else the operator's."""
    if limits().public:
        store = SESSIONS.get(visitor(request).session)
        assert store is not None
        return store
    return shared_store()


def stores_to_read(request: gr.Request | None) -> list[Store]:
    """What this visitor's scoreboard shows: the operator's store, plus their own in public mode."""
    stores = [shared_store()]
    if limits().public:
        own = SESSIONS.get(visitor(request).session, create=False)
        if own is not None:
            stores.append(own)
    return stores


def session_tag(request: gr.Request | None) -> str:
    """A short mark of this browser session, shown after a person's name in public mode."""
    return hashlib.sha256(visitor(request).session.encode()).hexdigest()[:4]


# People's answers go to the operator's store (a class's pooled curve), so in public mode they are
# rationed: per session, per address and hour, and for everyone per hour.
PEOPLE = Budget(session_limit=1_000, client_limit=5_000, global_limit=100_000)


def people_quota(request: gr.Request | None) -> None:
    if limits().public:
        who = visitor(request)
        try:
            PEOPLE.take(who.session, who.client, 1)
        except LimitExceeded:
            raise LimitExceeded(
                "this Space has taken as many people's answers as it can for now; try again later"
            ) from None


def room_for(request: gr.Request | None, results: int) -> None:
    """In public mode, refuse work that would take a session's store past its cap."""
    if not limits().public:
        return
    cap = limits().max_visitor_results
    store = SESSIONS.get(visitor(request).session, create=False)
    held = store.count() if store is not None else 0
    if held + results > cap:
        raise LimitExceeded(
            f"this session's results would pass {cap:,} ({held:,} held, {results:,} more asked): "
            "run fewer items here, or run the playground on your own machine for large evaluations"
        )

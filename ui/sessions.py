"""Who is asking, and where their results go.

Locally, every result goes to the operator's store (`$PROBE_HOME`). In public mode a visitor's
evaluations, probes and answers go to a store of that browser session's own (a file under the
temp folder, deleted a day after its last use; a browser keeps who it is across reloads): nothing a visitor does appears on another visitor's
scoreboard or replaces the operator's results, and the scoreboard shows the operator's store plus
the visitor's own. A session's store holds at most `max_visitor_results` results; how stores
are held, bounded and swept is ui/session_stores.py, how a session's marks are keyed ui/identity.py.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import gradio as gr

from probes.core.errors import LimitExceeded
from probes.running.budget import Budget
from probes.running.limits import client_address
from probes.running.limits import current as limits
from probes.running.link_store import LinkStore
from probes.running.store import Store, default_path
from probes.running.store_chain import CacheReader, StoreChain
from ui import identity
from ui.session_stores import SESSION_DIR as SESSION_DIR  # where tests and the bench look
from ui.session_stores import Lease, SessionStore, SessionStores


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
    session = getattr(request, "session_hash", None) or "anonymous"
    return Visitor(VISITORS.known(session), client[:64])


class Visitors:
    """Which visitor each page load belongs to: a browser keeps a token (gr.BrowserState) and gives
    it back as its page loads, so a reload (a new Gradio session) finds the same session store,
    budgets and tag. A token is a random part signed with the server's secret: anyone can read the
    browser state's own secret in `/config`, so a token a browser holds is believed only if this
    server signed it (a made-up or another server's token starts a fresh visitor). The map is
    bounded (the oldest page loads are forgotten first: such a page falls back to its own Gradio
    session until it is reloaded)."""

    BOUND = 100_000

    def __init__(self) -> None:
        self._by_page: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, page: str, held: str | None) -> str:
        """The visitor of page load `page`: the token its browser holds if it is one we made,
        else a new one (for the browser to keep)."""
        token = held if signed(held) else new_visitor_token()
        with self._lock:
            self._by_page[page] = token
            self._by_page.move_to_end(page)
            while len(self._by_page) > self.BOUND:
                self._by_page.popitem(last=False)
        return token

    def known(self, page: str) -> str:
        with self._lock:
            return self._by_page.get(page, page)


TOKEN = re.compile(r"v-([A-Za-z0-9_-]{32})\.([0-9a-f]{32})")
VISITORS = Visitors()


def new_visitor_token() -> str:
    """`v-<random>.<signature>`: 192 random bits (a visitor's store is theirs alone), signed."""
    random_part = secrets.token_urlsafe(24)
    return f"v-{random_part}.{_signature(random_part)}"


def signed(held: object) -> bool:
    """Whether `held` is a visitor token this server made (its signature checks out)."""
    found = TOKEN.fullmatch(held) if isinstance(held, str) else None
    return found is not None and hmac.compare_digest(found.group(2), _signature(found.group(1)))


def _signature(random_part: str) -> str:
    return identity.keyed("visitor token", random_part)[:32]  # 128 bits of HMAC-SHA256


def visitor_state() -> gr.BrowserState:
    """The token a browser keeps across reloads (made outside every tab, so it is read at load;
    its secret is the server's, so it survives a restart of the app)."""
    key = hashlib.sha256(b"browser-state\0" + identity.server_secret()).hexdigest()[:32]
    return gr.BrowserState("", storage_key="probe-visitor", secret=key)


def remember_visitor(held: str, request: gr.Request) -> str:
    """On page load: this page is the visitor its browser says it is (a new one on a first visit)."""
    page = getattr(request, "session_hash", None) or "anonymous"
    return VISITORS.remember(page, held)


@functools.cache
def shared_store() -> Store:
    """The operator's store (thread-safe), under $PROBE_HOME."""
    return Store()


@functools.cache
def shared_cache() -> Store:
    """A public Space's shared cache: replies bought with its own keys, for every visitor (no
    result rows: see probes/running/store_chain.py), beside the operator's store."""
    return Store(default_path().with_name("shared-cache.sqlite"))


def run_store(lease: Lease, paid: Iterable[str] = (), private: bool = False) -> Store | StoreChain:
    """Where a run reads cached replies and writes its results: locally the operator's store; in
    public mode the visitor's own store, read through the shared cache and the operator's
    (a prepared demo), and the replies `paid` for with the Space's keys shared (unless `private`:
    an upload's)."""
    if not limits().public:
        return lease.store
    return StoreChain(lease.store, shared_cache(), shared_store(), paid=frozenset(paid), private=private)


@functools.cache
def link_store() -> LinkStore:
    """Replies a public Space keeps for shared links (probes/running/link_store.py)."""
    return LinkStore(default_path().with_name("links.sqlite"))


def link_id(request: gr.Request | None, probe: str) -> str:
    """The id under which this visitor's answers to `probe` (the probe's description) are kept for
    its link: keyed by the server's secret, so nobody else can name it, and the same for the same
    probe asked again, so a press of Ask never makes a second copy."""
    return identity.keyed("link", f"{visitor(request).session}\0{probe}")[:32]


def sweep_links() -> None:
    """Replies kept for links past their days go (on a public Space: only it keeps any)."""
    if limits().public:
        link_store().sweep()


@contextmanager
def cache_reading(request: gr.Request | None, link: str | None = None) -> Iterator[CacheReader]:
    """Where a replay looks answers up, in the order a run reads them (the visitor's own store,
    the shared cache, the replies kept for this link, the operator's), for the length of the block."""
    if not limits().public:
        yield CacheReader([(None, shared_store())])
        return
    own = SESSIONS.lease(visitor(request).session, create=False)
    try:
        mine = [(None, own.store)] if own is not None else []
        kept = [("link", link_store().reader(link))] if link else []
        yield CacheReader([*mine, ("shared", shared_cache()), *kept, ("demo", shared_store())])
    finally:
        if own is not None:
            own.release()


SESSIONS = SessionStores()


def lease_for(request: gr.Request | None) -> Lease:
    """Where this visitor's results go, held until released: their session's store in public
    mode, else the operator's (whose lease holds nothing). Opens a file: call it off the event loop."""
    if limits().public:
        lease = SESSIONS.lease(visitor(request).session)
        assert lease is not None
        return lease
    return Lease(shared_store())


async def lease_off_loop(request: gr.Request | None) -> Lease:
    """`lease_for` on a worker thread; a lease taken for a request cancelled meanwhile is let go."""
    taking = asyncio.get_running_loop().run_in_executor(None, lease_for, request)
    try:
        return await asyncio.shield(taking)
    except asyncio.CancelledError:
        taking.add_done_callback(lambda done: done.cancelled() or done.exception() or done.result().release())
        raise


def release_after(lease: Lease, tasks: Iterable[asyncio.Future]) -> None:
    """Release `lease` once every one of `tasks` has ended (a cancelled run still saves the
    replies already in a thread), at once if they all have."""
    pending = [task for task in tasks if not task.done()]
    if not pending:
        lease.release()
        return
    asyncio.gather(*pending, return_exceptions=True).add_done_callback(lambda _: lease.release())


@contextmanager
def reading(request: gr.Request | None) -> Iterator[list[Store]]:
    """What this visitor's scoreboard shows, for the length of the block: the operator's store,
    plus their own in public mode (held, so it is not closed under the reader)."""
    with reading_session(reader_session(request)) as stores:
        yield stores


def reader_session(request: gr.Request | None) -> str | None:
    """The session whose own store a reader sees beside the operator's (public mode), else None."""
    return visitor(request).session if limits().public else None


@contextmanager
def reading_session(session: str | None) -> Iterator[list[Store]]:
    """`reading` for a session named beforehand (what is kept between requests keeps the name,
    never the store, which may be closed once nobody holds it)."""
    own = SESSIONS.lease(session, create=False) if session is not None else None
    try:
        yield [shared_store()] + ([own.store] if own is not None else [])
    finally:
        if own is not None:
            own.release()


def session_tag(request: gr.Request | None) -> str:
    """A mark of this browser session, shown after a person's name in public mode: keyed by the
    server's secret, so no one can pick a session that carries another person's mark."""
    return identity.tag(visitor(request).session)


def claim(request: gr.Request | None, name: str) -> None:
    """In public mode, `name` (a tagged person or judge) is this session's alone: the first
    session to use it keeps it; another one with the same tag is refused (NameRejected)."""
    if limits().public:
        identity.OWNERS.claim(name, visitor(request).session)


# People's answers go to the operator's store (the pooled "people" curve), so in public mode they
# are rationed: per session, per address and hour, and for everyone per hour. An address gets four
# 16-item tests an hour: measured in tests/ui/test_people_rows.py, beside 40 honest people one
# address's flood of answers against the truth moves the pooled PSE by 0.036 (the test holds it
# under 0.05); at 400 an hour it moved it by 0.22. A class's students, where the operator lets
# classes publish, are rationed alike: each by the page and address they joined from
# (`pooled_answer`), never by the teacher's.
PEOPLE_LIMITS = {"session_limit": 64, "client_limit": 64, "global_limit": 20_000}
PEOPLE = Budget(**PEOPLE_LIMITS)


class AnsweredOnce:
    """Which items each visitor has answered (public mode): a person's answer counts once per item
    per session, whatever name they type. Bounded (the oldest visitors forgotten first)."""

    BOUND = 50_000

    def __init__(self) -> None:
        self._seen: OrderedDict[str, set[tuple[str, str]]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, who: str, benchmark: str, item: str) -> None:
        with self._lock:
            seen = self._seen.pop(who, set())
            self._seen[who] = seen
            while len(self._seen) > self.BOUND:
                self._seen.popitem(last=False)
            if (benchmark, item) in seen:
                raise LimitExceeded("you have answered this item already: each item counts once per visitor")
            seen.add((benchmark, item))


ANSWERED = AnsweredOnce()


def answered_once(request: gr.Request | None, benchmark: str, item: str) -> None:
    ANSWERED.take(visitor(request).session, benchmark, item)


def people_quota(request: gr.Request | None, answers: int = 1) -> None:
    """In public mode, take `answers` people's answers from this visitor's allowance, or refuse them all."""
    if limits().public:
        who = visitor(request)
        try:
            PEOPLE.take(who.session, who.client, answers)
        except LimitExceeded:
            raise LimitExceeded(
                "this Space has taken as many people's answers as it can for now; try again later"
            ) from None


def pooled_answer(session: str, client: str, benchmark: str, item: str) -> bool:
    """Whether one more answer, by the visitor of `session` at `client` to this item, may join the
    pooled people rows on a public Space (taken from their allowance if so): within the Human
    tab's bounds, and once per item per visitor."""
    try:
        ANSWERED.take(session, benchmark, item)
        PEOPLE.take(session, client, 1)
    except LimitExceeded:
        return False
    return True


def room_for(request: gr.Request | None, results: int) -> None:
    """In public mode, refuse work that would take a session's store past its cap of results, or
    that would start on a store already at its bound on disk."""
    if not limits().public:
        return
    cap = limits().max_visitor_results
    own = SESSIONS.lease(visitor(request).session, create=False)
    if own is None:
        held = 0
    else:
        with own:
            held = own.store.count()
            if isinstance(own.store, SessionStore):
                own.store.check_room()
    if held + results > cap:
        raise LimitExceeded(
            f"this session's results would pass {cap:,} ({held:,} held, {results:,} more asked): "
            "run fewer items here, or run the playground on your own machine for large evaluations"
        )

"""Replies kept for shared links (probes/running/link_store.py), attacked as a visitor of a public
Space would: pressing Ask again and again on answers from their own cache, and on probe after probe
with their own key, must neither grow the store without bound nor push another visitor's link out.
The store's rules first (no app), then the same attack through the real `/probe` endpoint."""

from __future__ import annotations

import sqlite3

import pytest

from models.types import Output
from probes.running import link_store as links
from probes.running.store_chain import CacheReader
from tests.support.clock import Clock
from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import patient_client
from ui.probe import share

DAY = links.DAY


def replies(prefix: str, n: int, text: str = "Yes") -> list[tuple[str, Output]]:
    return [(f"{prefix}-{k}", Output(text, 0.1)) for k in range(n)]


@pytest.fixture
def store(tmp_path):
    kept = links.LinkStore(tmp_path / "links.sqlite", clock=Clock(1_000 * DAY))
    yield kept
    kept.close()


def test_a_reply_is_kept_once_however_many_links_name_it(store):
    for press in range(50):  # one probe's answers, named by fifty links
        assert store.keep(f"link-{press}", replies("key", 4), owner="v1", address="10.0.0.1") == 4
    assert store.replies() == 4 and store.count() == 50 * 4
    for _ in range(50):  # the same link again: nothing more
        store.keep("link-0", replies("key", 4), owner="v1", address="10.0.0.1")
    assert store.replies() == 4 and store.count() == 200
    assert store.cached("link-7", "key-3").text == "Yes"
    assert store.cached("link-7", "other") is None and store.cached("no-link", "key-3") is None
    # Another answer to the same request (a sampled reply, another server) is its link's own.
    store.keep("link-other", replies("key", 1, text="No"), owner="v2", address="10.0.0.2")
    assert store.cached("link-other", "key-0").text == "No" and store.cached("link-0", "key-0").text == "Yes"


def test_each_visitor_and_address_loses_only_its_own_oldest(store, monkeypatch):
    monkeypatch.setattr(links, "PER_VISITOR", 10)
    monkeypatch.setattr(links, "PER_ADDRESS", 25)
    store.keep("victim", replies("victim", 8), owner="victim", address="192.0.2.1")
    for n in range(200):  # the flood: probe after probe, each a link of its own
        store.clock.now += 1
        store.keep(f"flood-{n}", replies(f"flood-{n}", 3), owner="flooder", address="203.0.113.9")
    assert all(store.cached("victim", f"victim-{k}") is not None for k in range(8))
    kept = [(n, k) for n in range(200) for k in range(3) if store.cached(f"flood-{n}", f"flood-{n}-{k}") is not None]
    assert kept == [(196, 2)] + [(n, k) for n in (197, 198, 199) for k in range(3)]  # its latest ten names
    # Fresh sessions from the flooder's address share the address's bound, and lose their own oldest.
    for n in range(20):
        store.clock.now += 1
        store.keep(f"fresh-{n}", replies(f"fresh-{n}", 2), owner=f"fresh-{n}", address="203.0.113.9")
    assert store.count() - 8 <= 25
    assert all(store.cached("victim", f"victim-{k}") is not None for k in range(8))
    assert store.replies() == store.count()  # replies no name keeps are gone with their names


def test_a_full_store_keeps_nothing_new_rather_than_emptying_a_link(store, monkeypatch):
    monkeypatch.setattr(links, "MAX_NAMES", 30)
    store.keep("victim", replies("victim", 10), owner="victim", address="192.0.2.1")
    taken = sum(store.keep(f"f{n}", replies(f"f{n}", 5), owner=f"s{n}", address=f"203.0.113.{n}") for n in range(10))
    assert taken == 20 and store.count() == 30
    assert all(store.cached("victim", f"victim-{k}") is not None for k in range(10))
    store.clock.now += (links.KEEP_DAYS + 2) * DAY  # a month on: swept, room again
    assert store.keep("later", replies("later", 5), owner="s", address="198.51.100.1") == 5
    assert store.count() == 5 and store.replies() == 5


def test_a_file_kept_before_replies_were_kept_once_opens_with_its_links(tmp_path):
    path = tmp_path / "links.sqlite"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE link_replies (link TEXT NOT NULL, cache_key TEXT NOT NULL, reply TEXT NOT NULL,"
        " latency REAL, created_at REAL NOT NULL, probabilities TEXT, PRIMARY KEY (link, cache_key));"
    )
    old.executemany("INSERT INTO link_replies VALUES (?, ?, ?, 0.1, strftime('%s','now'), NULL)",
                    [("a", "k", "Yes"), ("b", "k", "No")])  # fmt: skip
    old.commit()
    old.close()
    store = links.LinkStore(path)
    assert store.cached("a", "k").text == "Yes" and store.cached("b", "k").text == "No"
    store.close()
    assert (
        sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE name = 'link_replies'").fetchone() is None
    )


def _ask(client, seed: int, key: str = "sk-own-key") -> str:
    """A probe of its own for each seed (its own gap): two conditions asked with the visitor's key."""
    client.predict("blind/touching-circles", f"gap={0.01 * seed:.2f} canvas=384", seed, api_name="/generate_stimulus")
    status, _, _, query = client.predict("openai/gpt-own", None, None, None, ["as asked", "upside down"], key, "",
                                         api_name="/probe")  # fmt: skip
    assert "2 of 2 answered" in status, status
    return query


def _replayed(query: str) -> dict:
    shared = share.decode(query.removeprefix("?probe="))
    from ui.sessions import link_store

    reader = CacheReader([("link", link_store().reader(shared.link))])
    return share.replay(shared.spec, shared.models, shared.conditions, reader)


def test_presses_on_ones_own_key_never_push_out_another_visitor_s_link(serve, monkeypatch):
    monkeypatch.setattr(links, "PER_VISITOR", 12)
    with FakeOpenAIServer(responder=lambda body: "Yes") as server:
        url = serve(PROBE_PUBLIC="1", PROBE_TRUSTED_PROXIES="1", OPENAI_BASE_URL=server.base_url,
                    OPENAI_API_KEY="sk-space")  # fmt: skip
        victim = patient_client(url, headers={"X-Forwarded-For": "192.0.2.10"})
        victims = _ask(victim, seed=1)
        assert all(cell.state == "done" for cell in _replayed(victims).values())
        from ui.sessions import link_store

        flooder = patient_client(url, headers={"X-Forwarded-For": "203.0.113.20"})
        first = _ask(flooder, seed=2)
        held = link_store().count()
        sent = server.request_count
        for _ in range(40):  # free presses: the same probe, its answers from the flooder's own cache
            assert _ask(flooder, seed=2) == first  # the same link every time
        assert server.request_count == sent and link_store().count() == held
        for seed in range(3, 23):  # probe after probe with their own key
            _ask(flooder, seed=seed)
        assert link_store().count() <= 2 + 12  # the victim's two names and the flooder's twelve
        cells = _replayed(victims)
        assert cells and all(cell.state == "done" for cell in cells.values())  # the victim's link replays whole
        lost = _replayed(first)
        assert all(cell.state == "missing" for cell in lost.values()), lost  # the flooder lost its own oldest

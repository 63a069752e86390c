"""People rows worth trusting on a public Space (issue 23): a person's answer counts once per item
per visitor; the pooled people curve takes a test's answers only once it is finished; and one
address's scripted flood is bounded, so it moves the shared curve by a bounded amount, measured
here against honest people answering through the same handlers."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from types import SimpleNamespace

import pytest

from probes.analysis.psychometric import fit_rows
from probes.people.human import is_human
from tests.ui.conftest import reset_caches

BENCHMARK = "illusion/mueller-lyer"
ITEMS = 16
# The bound this test holds the flood to: the pooled PSE (every person as one observer, the
# Scoreboard's "people" curve) moves by at most this much, in `difference` units, under one
# address's flood of answers against the truth, beside HONEST people.
HONEST = 40
PSE_BOUND = 0.05


@pytest.fixture
def public(monkeypatch, tmp_path):
    monkeypatch.setenv("PROBE_PUBLIC", "1")
    monkeypatch.setenv("PROBE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROBE_TRUSTED_PROXIES", "0")
    from ui import session_stores, sessions

    monkeypatch.setattr(sessions, "SESSIONS", session_stores.SessionStores(tmp_path / "sessions"))
    monkeypatch.setattr(sessions, "PEOPLE", sessions.Budget(**sessions.PEOPLE_LIMITS))
    monkeypatch.setattr(sessions, "ANSWERED", sessions.AnsweredOnce())
    reset_caches()
    import ui.human as human_tab

    monkeypatch.setattr(human_tab, "SESSIONS", sessions.SESSIONS)
    yield human_tab
    reset_caches()


def request(session: str, address: str) -> SimpleNamespace:
    return SimpleNamespace(session_hash=session, headers={}, client=SimpleNamespace(host=address))


def take(human_tab, who: SimpleNamespace, name: str, seed: int, choose, finish: bool = True) -> list[str]:
    """A person's test: Start, then an answer per item (`choose(item) -> label`); the statuses."""
    state = human_tab.start_session(name, BENCHMARK, "", ITEMS, seed, who)[0]
    statuses = []
    for _ in range(ITEMS if finish else ITEMS // 2):
        _, item = human_tab._current(state)
        out = human_tab.submit_answer(state, choose(item), None, who)
        statuses.append(out[11])
        if isinstance(out[0], type(state)):
            state = out[0]
        if "⚠" in out[11]:
            break
    return statuses


def honest(rng: random.Random, pse: float = 0.08, scale: float = 0.06):
    def choose(item) -> str:
        positive = rng.random() < 1 / (
            1 + math.exp(-(item.params["difference"] - pse * item.params["polarity"]) / scale)
        )
        index = item.params["positive_answer"] if positive else 1 - item.params["positive_answer"]
        return item.labels[index]

    return choose


def always_positive(item) -> str:
    return item.labels[item.params["positive_answer"]]


def pooled_pse() -> tuple[float, int]:
    from ui.sessions import shared_store

    people = [replace(r, model="people") for r in shared_store().results(BENCHMARK) if is_human(r.model)]
    (row,) = [r for r in fit_rows(people, "difference") if r.group == "overall"]
    return row.pse, row.n


def test_an_answer_counts_once_per_item_and_only_a_finished_test_joins_the_people(public):
    from ui.sessions import shared_store

    who = request("visitor-1", "10.0.0.1")
    rng = random.Random(1)
    half = take(public, who, "Ada", seed=3, choose=honest(rng), finish=False)
    assert all("saved" in status for status in half)
    assert shared_store().count() == 0  # half a test: nothing in the people rows yet
    # The same items again under another name, from the same visitor: each counts once.
    again = take(public, who, "Bo", seed=3, choose=honest(rng))
    assert "answered this item already" in again[0]
    fresh = take(public, request("visitor-2", "10.0.0.2"), "Cy", seed=5, choose=honest(rng))
    assert "join the people" in fresh[-1]
    assert shared_store().count() == ITEMS  # a finished test, all of it


def test_one_address_flooding_the_people_rows_moves_the_curve_by_at_most_the_bound(public):
    from ui.sessions import PEOPLE_LIMITS

    rng = random.Random(7)
    for person in range(HONEST):
        take(public, request(f"honest-{person}", f"10.1.{person // 250}.{person % 250}"), f"p{person}", person,
             honest(rng))  # fmt: skip
    before, counted = pooled_pse()
    assert counted == HONEST * ITEMS
    # A script: one address, fresh sessions, every test finished, every answer against the truth
    # where it can push the curve (always the positive option), until the address is refused.
    refused, tests = False, 0
    while not refused and tests < 200:
        statuses = take(public, request(f"flood-{tests}", "10.9.9.9"), f"bot{tests}", 1000 + tests, always_positive)
        refused = any("⚠" in s and "answers" in s for s in statuses)
        tests += 1
    after, total = pooled_pse()
    flooded = total - counted
    assert refused and flooded <= PEOPLE_LIMITS["client_limit"]
    shift = abs(after - before)
    print(f"people PSE {before:+.4f} -> {after:+.4f} (shift {shift:.4f}) with {flooded} flood answers "
          f"beside {counted} honest ones; bound {PSE_BOUND}")  # fmt: skip
    assert shift <= PSE_BOUND

"""Budgets of requests on the server's keys (per session, per client address, per hour for
everyone), held under concurrent requests."""

from __future__ import annotations

import threading

from probes.running.budget import Budget, BudgetExceeded
from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import patient_client


def test_budget_counts_under_a_lock():
    budget = Budget(session_limit=50)
    granted, refused = [], []

    def spend():
        try:
            budget.take("one-session", "127.0.0.1", 3)
            granted.append(3)
        except BudgetExceeded:
            refused.append(3)

    threads = [threading.Thread(target=spend) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(granted) == 48 and len(refused) == 24  # 16 x 3 fit in 50; never more
    assert budget.left("one-session", "127.0.0.1") == 2 and budget.left("another", "127.0.0.2") == 50
    assert Budget().left("anyone", "anywhere") is None


def test_the_address_and_hourly_budgets_hold_across_sessions_and_recover_after_the_hour():
    now = [0.0]
    budget = Budget(client_limit=4, global_limit=6, clock=lambda: now[0])
    budget.take("s1", "10.0.0.1", 2)
    budget.take("s2", "10.0.0.1", 2)  # a fresh session from the same address shares its budget
    try:
        budget.take("s3", "10.0.0.1", 1)
        raise AssertionError("the address budget was overdrawn")
    except BudgetExceeded as exc:
        assert "per visitor address" in str(exc)
    budget.take("s4", "10.0.0.2", 2)
    try:
        budget.take("s5", "10.0.0.3", 1)
        raise AssertionError("the hourly budget was overdrawn")
    except BudgetExceeded as exc:
        assert "for the hour" in str(exc)
    now[0] = 3601.0
    budget.take("s5", "10.0.0.3", 1)  # an hour later there is room again


def test_concurrent_probes_from_one_session_stop_at_the_budget(serve):
    """Twelve probes at once from one session with a budget of five requests: at most five are
    sent; each other one is either refused with the budget's message (and what to do about it)
    or, having come after an answer was cached, served from the cache for nothing."""
    with FakeOpenAIServer(responder=lambda body: "No", latency=0.3) as server:
        url = serve(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-server-Q7xZ2mW9", PROBE_SESSION_BUDGET="5")
        client = patient_client(url)
        client.predict("blind/touching-circles", "", 1, api_name="/generate_stimulus")
        jobs = [client.submit("openai/gpt-4o", None, None, None, ["as asked"], "", "", api_name="/probe")
                for _ in range(12)]  # fmt: skip
        grids = [job.result()[1] for job in jobs]
        sent = server.request_count
        # Another session has its own budget (the item differs: nothing of it is cached).
        other = patient_client(client.src)
        other.predict("blind/touching-circles", "", 2, api_name="/generate_stimulus")
        assert other.predict("openai/gpt-4o", None, None, None, ["as asked"], "", "", api_name="/probe")[0].count(
            "1 of 1"
        )
    refused = [grid for grid in grids if "budget" in grid]
    answered = [grid for grid in grids if 'td class="cell right"' in grid or 'td class="cell wrong"' in grid]
    assert 1 <= sent <= 5 and len(refused) + len(answered) == 12
    assert len(answered) >= sent  # each one sent was answered; the rest from the cache
    assert all("Paste your own OpenAI key under API keys to ask openai/gpt-4o" in grid for grid in refused)

"""PROBE_SESSION_BUDGET: requests on the server's keys per browser session, held under
concurrent requests from one session."""

from __future__ import annotations

import threading

from gradio_client import Client

from tests.support.fake_servers import FakeOpenAIServer
from ui.common import BudgetExceeded, SessionBudget


def test_budget_counts_under_a_lock():
    budget = SessionBudget(limit=50)
    granted, refused = [], []

    def spend():
        try:
            budget.take("one-session", 3)
            granted.append(3)
        except BudgetExceeded:
            refused.append(3)

    threads = [threading.Thread(target=spend) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(granted) == 48 and len(refused) == 24  # 16 x 3 fit in 50; never more
    assert budget.left("one-session") == 2 and budget.left("another") == 50
    assert SessionBudget(None).left("anyone") is None


def test_concurrent_probes_from_one_session_stop_at_the_budget(serve, monkeypatch):
    monkeypatch.setattr("ui.common.BUDGET", SessionBudget(limit=5))
    monkeypatch.setattr("ui.probe.BUDGET", SessionBudget(limit=5))
    with FakeOpenAIServer(responder=lambda body: "No", latency=0.3) as server:
        client = Client(serve(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-server-budget"), verbose=False)
        client.predict("blind/touching-circles", "", 1, api_name="/generate_stimulus")
        jobs = [client.submit("openai/spend", None, None, None, 0, False, "none", "", "", api_name="/probe")
                for _ in range(12)]  # fmt: skip
        statuses = [job.result()[0] for job in jobs]
        sent = server.request_count
        # Another session has its own budget.
        other = Client(client.src, verbose=False)
        other.predict("blind/touching-circles", "", 2, api_name="/generate_stimulus")
        assert other.predict("openai/spend", None, None, None, 0, False, "none", "", "", api_name="/probe")[
            0
        ].startswith("1 of 1")
    assert sent == 5
    assert sum("budget" in status for status in statuses) == 7
    assert all("paste your own key" in status for status in statuses if "budget" in status)

"""Fair evaluation slots: several visitors at once up to a bound, one run per visitor, a visitor's
second run behind everyone else's first, and the wait shown to whoever waits."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import reset_caches
from ui.evaluate.slots import FairSlots


def test_two_slots_one_per_visitor_and_a_second_run_waits_behind_others_first():
    slots = FairSlots(lambda: 2)
    a1, b1 = slots.join("a"), slots.join("b")
    a2 = slots.join("a")  # a's second run comes before c's first ...
    c1, d1 = slots.join("c"), slots.join("d")
    assert slots.poll(a1) == 0 and slots.poll(b1) == 0  # two at once
    assert slots.poll(c1) > 0 and slots.poll(a2) > 0  # no slot left
    slots.release("b")
    assert slots.poll(a2) > 0  # ... but a is running: one per visitor
    assert slots.poll(c1) == 0  # c's first goes before a's second
    slots.release("a")
    assert slots.poll(a2) > 0 and slots.poll(d1) == 0  # d had run nothing: before a's second
    slots.release("c")
    assert slots.poll(a2) == 0
    assert slots.running() == 2


def test_a_visitor_who_leaves_the_line_frees_their_place():
    slots = FairSlots(lambda: 1)
    first, second, third = slots.join("a"), slots.join("b"), slots.join("c")
    assert slots.poll(first) == 0
    assert slots.poll(third) == 2
    slots.leave(second)
    assert slots.poll(third) == 1
    slots.release("a")
    assert slots.poll(third) == 0


def test_slots_hold_under_many_threads():
    slots = FairSlots(lambda: 3)
    granted, peak, lock = [], [0], threading.Lock()

    def visitor(name: str) -> None:
        ticket = slots.join(name)
        while slots.poll(ticket):
            pass
        with lock:
            granted.append(name)
            peak[0] = max(peak[0], slots.running())
        slots.release(name)

    threads = [threading.Thread(target=visitor, args=(f"v{n}",)) for n in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(granted) == 40 and peak[0] <= 3


def test_a_second_visitors_evaluation_says_it_waits_then_runs(monkeypatch):
    from ui import evaluate

    monkeypatch.setattr(evaluate, "SLOTS", FairSlots(lambda: 1))
    monkeypatch.setattr(evaluate, "WAIT_POLL", 0.05)
    reset_caches()
    no_bar = lambda *args, **kwargs: None  # noqa: E731
    inputs = (["blind/touching-circles"], "", "", ["openai/x"], ["0-shot"], ["none"])

    async def both() -> tuple[list, list]:
        first = evaluate.run_eval(SimpleNamespace(session_hash="visitor-a"), no_bar, *inputs, 6, 0, 1, "", "")
        second = evaluate.run_eval(SimpleNamespace(session_hash="visitor-b"), no_bar, *inputs, 6, 1, 1, "", "")
        first_frames: list = [await first.__anext__()]  # a holds the slot now
        second_frames: list = [await second.__anext__()]  # b is told it waits
        first_frames += [frame async for frame in first]
        second_frames += [frame async for frame in second]
        return first_frames, second_frames

    with FakeOpenAIServer(responder=lambda body: "No", latency=0.05) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-server-test")
        # On a thread of its own: the browser tests' sync Playwright keeps a loop running on this one.
        with ThreadPoolExecutor(1) as own_thread:
            first, second = own_thread.submit(asyncio.run, both()).result()
    assert "**Running**" in first[0][0] and "**Finished**" in first[-1][0]
    assert "**Waiting** for an evaluation slot: 1 ahead of yours" in second[0][0]
    assert "**Finished**" in second[-1][0] and "6 / 6 results" in second[-1][0]

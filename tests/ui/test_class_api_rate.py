"""The rate per address on the class's named endpoints (ui/class_api_rate.py): a script's burst is
held to its turn, then refused with when to come back; another address, the class's own page and
a script that waits for each reply are not refused."""

from __future__ import annotations

import json
import secrets
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from probes.classroom import Classes
from probes.running.limits import Limits
from tests.ui.conftest import reset_caches
from ui.class_api_rate import BURST_SECONDS, MAX_WAIT, NEW_SESSION_COST, CallRate
from ui.classroom import lessons


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_goes_at_once_the_next_calls_wait_their_turn_and_then_are_refused():
    clock = Clock()
    rate = CallRate(clock)
    burst, held = int(BURST_SECONDS * 10), int(MAX_WAIT * 10)
    taken = [rate.take("a", 10) for _ in range(burst + held + 5)]
    at_once = [n for n, (admitted, seconds) in enumerate(taken) if admitted and seconds == 0]
    held_back = [seconds for admitted, seconds in taken if admitted and seconds > 0]
    refused = [seconds for admitted, seconds in taken if not admitted]
    assert at_once == list(range(burst + 1))  # the call due now and BURST_SECONDS' worth ahead of it
    assert len(held_back) == held and held_back == sorted(held_back)
    assert held_back[0] == pytest.approx(0.1) and held_back[-1] == pytest.approx(MAX_WAIT)
    assert len(refused) == 4 and all(seconds == pytest.approx(0.1) for seconds in refused)
    assert rate.take("b", 10) == (True, 0.0)  # another address has its own turn
    clock.now += refused[-1] + 0.01  # when the refusal said to come back
    admitted, seconds = rate.take("a", 10)
    assert admitted and seconds <= MAX_WAIT


def test_a_script_that_waits_for_each_reply_is_slowed_never_refused():
    clock = Clock()
    rate = CallRate(clock)
    for _ in range(500):
        admitted, seconds = rate.take("a", 10)
        assert admitted
        clock.now += seconds + 0.001  # held, then the call itself


def test_a_call_that_opens_a_session_takes_the_turns_of_several():
    clock = Clock()
    rate = CallRate(clock)
    opened = 0
    while rate.take("a", 10, cost=NEW_SESSION_COST) == (True, 0.0):
        opened += 1
    plain = CallRate(clock)
    cheap = 0
    while plain.take("a", 10) == (True, 0.0):
        cheap += 1
    assert cheap == int(BURST_SECONDS * 10) + 1 and opened == int(BURST_SECONDS * 10 / NEW_SESSION_COST) + 1


def test_the_rate_is_read_like_the_other_bounds():
    assert Limits.from_environment({"PROBE_PUBLIC": "1"}).class_api_rate == 5
    assert Limits.from_environment({"PROBE_PUBLIC": "0"}).class_api_rate is None
    assert Limits.from_environment({"PROBE_PUBLIC": "1", "PROBE_CLASS_API_RATE": "50"}).class_api_rate == 50
    with pytest.raises(Exception, match="PROBE_CLASS_API_RATE"):
        Limits.from_environment({"PROBE_PUBLIC": "1", "PROBE_CLASS_API_RATE": "0"})


@pytest.fixture
def app_at_one_call_a_second(serve, monkeypatch):
    monkeypatch.setattr(lessons, "CLASSES", Classes())
    yield serve(PROBE_PUBLIC="1", PROBE_TRUSTED_PROXIES="1", PROBE_CLASS_API_RATE="1")
    reset_caches()


def _class_status_number(url: str) -> int:
    config = httpx.get(f"{url}/config", timeout=60).json()
    return next(d["id"] for d in config["dependencies"] if d.get("api_name") == "class_status")


def _status(client: httpx.Client, url: str, address: str, route: str = "run/class_status", number: int | None = None):
    body = {"data": ["no-such-teacher"], "session_hash": secrets.token_hex(8)}
    if number is not None:
        body["fn_index"] = number
    headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
    return client.post(f"{url}/gradio_api/{route}", content=json.dumps(body), headers=headers)


# By name in the address, by number under another name (Gradio takes the number), by number in
# the queue (as gradio_client calls).
WAYS = {"by name": ("run/class_status", False), "by number": ("run/predict", True), "queued": ("queue/join", True)}


@pytest.mark.parametrize("way", WAYS)
def test_a_burst_from_one_address_is_refused_past_its_turn_and_others_are_served(app_at_one_call_a_second, way):
    url = app_at_one_call_a_second
    route, by_number = WAYS[way]
    number = _class_status_number(url) if by_number else None
    with httpx.Client(timeout=120, limits=httpx.Limits(max_connections=40)) as client:
        with ThreadPoolExecutor(40) as pool:
            replies = list(pool.map(lambda _: _status(client, url, "198.51.100.7", route, number), range(40)))
        refused = [reply for reply in replies if reply.status_code == 429]
        served = [reply for reply in replies if reply.status_code == 200]
        assert len(refused) + len(served) == 40
        # At one a second, each opening a session (5 turns): 1 goes at once and 1 more within 2 s;
        # 40 sent together cannot all pass.
        assert len(refused) >= 20
        for reply in refused:
            said = reply.json()["error"]
            assert "at most 1 a second" in said and "/class/CODE" in said
            assert int(reply.headers["retry-after"]) >= 1
        # Meanwhile another address, and the class's own page from the same one, are served.
        assert _status(client, url, "203.0.113.9", route, number).status_code == 200
        page = client.get(f"{url}/class/api/state", params={"token": "x"}, headers={"X-Forwarded-For": "198.51.100.7"})
        assert page.status_code == 200 and "error" in page.json()

"""New sessions are bounded in public mode: Gradio keeps at most `max_sessions` sessions' state
(each ~0.7 MB), and one address opens at most `new_sessions` new ones in ten minutes; a session
once opened goes on past the bound, another address is not held back, what a client writes into
X-Forwarded-For earns no fresh count, and the window slides. Locally nothing is bounded.

The middleware is driven directly (ASGI messages, a clock of the test's own) for its rules, and
through a public app on 127.0.0.1 for what a script making up session ids meets and what the app
then keeps."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import secrets
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from probes.core.errors import UsageError
from probes.running import limits
from probes.running.limits import NEW_SESSION_WINDOW, PUBLIC_NEW_SESSIONS, PUBLIC_SESSIONS, Limits
from tests.support.clock import Clock
from tests.ui.conftest import WAIT_MS, screenshot
from ui.about import mode_text
from ui.session_bound import NewSessions, SessionBound

# --- the middleware's rules, driven directly --------------------------------------------------------


@pytest.fixture
def bounded(monkeypatch):
    """set(**limits) -> a SessionBound around an app that records what reached it."""
    reached: list[bytes] = []
    clock = Clock()

    async def app(scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        reached.append(body)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    def make(**fields) -> SessionBound:
        current = dataclasses.replace(Limits.from_environment({"PROBE_PUBLIC": "1"}), **fields)
        monkeypatch.setattr(limits, "_current", current)
        return SessionBound(app, NewSessions(known=1_000, clock=clock))

    make.reached, make.clock = reached, clock
    return make


def post(middleware, body: bytes | list[bytes], peer: str = "203.0.113.7", forwarded: str | None = None,
         path: str = "/gradio_api/queue/join", method: str = "POST") -> tuple[int, dict, dict]:  # fmt: skip
    """One request through the middleware: (status, headers, JSON reply)."""
    parts = body if isinstance(body, list) else [body]
    messages = [{"type": "http.request", "body": part, "more_body": i < len(parts) - 1} for i, part in enumerate(parts)]
    headers = [(b"content-type", b"application/json")]
    if forwarded is not None:
        headers.append((b"x-forwarded-for", forwarded.encode()))
    scope = {"type": "http", "method": method, "path": path, "headers": headers, "client": (peer, 50_000)}
    sent: list[dict] = []

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    # In a thread of its own: a browser test earlier in the run leaves its event loop running here.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, middleware(scope, receive, send)).result()
    start, reply = sent[0], sent[1]
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, json.loads(reply["body"] or b"{}")


def joined(session: str | None) -> bytes:
    body = {"data": [], "fn_index": 3, "trigger_id": 7}
    return json.dumps(body if session is None else {**body, "session_hash": session}).encode()


def test_an_address_opens_at_most_its_bound_then_is_told_when_to_come_back(bounded):
    middleware = bounded(new_sessions=5)
    statuses = [post(middleware, joined(f"s{n}"))[0] for n in range(5)]
    assert statuses == [200] * 5
    status, headers, reply = post(middleware, joined("s5"))
    assert status == 429
    assert "too many new sessions from your address (5 in 10 minutes)" in reply["error"]
    assert "try again in 10 minutes" in reply["error"] and headers["retry-after"] == str(int(NEW_SESSION_WINDOW))
    assert len(bounded.reached) == 5  # the refused request never reached the app


def test_a_session_once_opened_goes_on_past_the_bound_and_the_body_reaches_the_app_whole(bounded):
    middleware = bounded(new_sessions=2)
    assert post(middleware, joined("mine"))[0] == 200
    assert post(middleware, joined("other"))[0] == 200
    assert post(middleware, joined("third"))[0] == 429
    body = joined("mine")
    for _ in range(50):  # a page's every event, and a body that comes in pieces
        assert post(middleware, [body[:10], body[10:30], body[30:]])[0] == 200
    assert bounded.reached[-1] == body and len(bounded.reached) == 52


def test_a_request_naming_no_session_or_not_json_counts_as_a_new_one_each_time(bounded):
    middleware = bounded(new_sessions=3)
    replies = [post(middleware, body)[0] for body in (joined(None), b"not json", b'{"session_hash": 7}', b"")]
    assert replies == [200, 200, 200, 429]


def test_another_address_is_not_held_back_and_a_forged_forwarded_for_earns_nothing(bounded):
    middleware = bounded(new_sessions=2, trusted_proxies=1)
    # Behind a Space's proxy: the address the proxy appended is the client's.
    for n in range(2):
        assert post(middleware, joined(f"a{n}"), peer="10.0.0.1", forwarded=f"198.51.100.{n}, 203.0.113.7")[0] == 200
    assert post(middleware, joined("a2"), peer="10.0.0.1", forwarded="198.51.100.9, 203.0.113.7")[0] == 429
    assert post(middleware, joined("b0"), peer="10.0.0.1", forwarded="203.0.113.8")[0] == 200


def test_the_window_slides(bounded):
    middleware = bounded(new_sessions=2)
    assert [post(middleware, joined(f"s{n}"))[0] for n in range(3)] == [200, 200, 429]
    bounded.clock.now += NEW_SESSION_WINDOW / 2
    status, headers, _ = post(middleware, joined("s3"))
    assert status == 429 and headers["retry-after"] == str(int(NEW_SESSION_WINDOW / 2))
    bounded.clock.now += NEW_SESSION_WINDOW / 2
    assert [post(middleware, joined(f"t{n}"))[0] for n in range(3)] == [200, 200, 429]


def test_a_page_load_past_the_bound_is_one_plain_page_and_opens_nothing(bounded):
    middleware = bounded(new_sessions=1)
    status, headers, _ = post(middleware, b"", path="/", method="GET")
    assert status == 200  # room left: the page is served (its session is opened by its events)
    assert post(middleware, joined("s0"))[0] == 200
    sent: list[dict] = []
    scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "client": ("203.0.113.7", 50_000),
             "query_string": b"probe=x"}  # fmt: skip

    async def receive():
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, middleware(scope, receive, send)).result()
    assert sent[0]["status"] == 429 and dict(sent[0]["headers"])[b"content-type"].startswith(b"text/html")
    page = sent[1]["body"].decode()
    assert page.count("oo many new sessions from your address (1 in 10 minutes): try again in 10 minutes") == 1
    assert "<script" not in page
    assert post(middleware, joined("s0"))[0] == 200  # the session already open goes on
    assert len(bounded.reached) == 3  # the refused page never reached the app


def test_uploads_page_loads_and_local_use_are_not_counted(bounded):
    middleware = bounded(new_sessions=1)
    assert post(middleware, joined("s0"))[0] == 200
    assert post(middleware, b"--multipart--", path="/gradio_api/upload")[0] == 200
    assert post(middleware, b"", path="/config", method="GET")[0] == 200
    local = bounded(new_sessions=None)
    assert all(post(local, joined(f"l{n}"))[0] == 200 for n in range(20))


def test_the_bounds_public_and_local_and_from_the_environment():
    public = Limits.from_environment({"PROBE_PUBLIC": "1"})
    assert (public.max_sessions, public.new_sessions) == (PUBLIC_SESSIONS, PUBLIC_NEW_SESSIONS)
    local = Limits.from_environment({})
    assert (local.max_sessions, local.new_sessions) == (10_000, None)
    set_ = Limits.from_environment({"PROBE_PUBLIC": "1", "PROBE_MAX_SESSIONS": "2000", "PROBE_NEW_SESSIONS": "600"})
    assert (set_.max_sessions, set_.new_sessions) == (2000, 600)
    assert "240 new ones per address in 10 minutes" in mode_text(public)  # the About tab says so
    with pytest.raises(UsageError, match="PROBE_NEW_SESSIONS='many' is not a whole number of sessions"):
        Limits.from_environment({"PROBE_NEW_SESSIONS": "many"})
    with pytest.raises(UsageError, match="PROBE_MAX_SESSIONS='3': write a number of sessions from 10"):
        Limits.from_environment({"PROBE_MAX_SESSIONS": "3"})


# --- a public app on 127.0.0.1 -----------------------------------------------------------------------


def test_a_script_making_up_session_ids_is_refused_past_the_bound_and_the_app_keeps_at_most_its_capacity(serve):
    # (The class API's own rate, tests/ui/test_class_api_rate.py, lifted: the bound on new sessions
    # is what this script meets, on whichever endpoint.)
    url = serve(PROBE_PUBLIC="1", PROBE_NEW_SESSIONS="30", PROBE_MAX_SESSIONS="20", PROBE_CLASS_API_RATE="100000")
    demo = serve.launched[-1]
    with httpx.Client(timeout=120) as client:
        # A visitor already here (their page's session) before the script starts.
        visitor = secrets.token_hex(8)
        first = client.post(f"{url}/gradio_api/run/class_status", json={"data": ["x"], "session_hash": visitor})
        assert first.status_code == 200
        answered = []
        for _ in range(45):  # each call under a session never seen, as a script makes them up
            reply = client.post(f"{url}/gradio_api/run/class_status",
                                json={"data": [secrets.token_urlsafe(18)], "session_hash": secrets.token_hex(8)})  # fmt: skip
            answered.append(reply.status_code)
        assert answered.count(200) == 29 and answered[29:] == [429] * 16  # the visitor's was the 30th
        assert "too many new sessions" in reply.json()["error"]
        assert len(demo.state_holder.session_data) <= 20  # the capacity: at most ~20 x 0.7 MB kept
        # The visitor already here goes on (their session is known), though Gradio may have
        # forgotten its state: a fresh one is made for it, not refused.
        again = client.post(f"{url}/gradio_api/run/class_status", json={"data": ["x"], "session_hash": visitor})
        assert again.status_code == 200 and "error" in again.json()["data"][0]


def test_a_page_past_the_bound_says_why_and_a_page_already_open_goes_on(serve, page, browser, tmp_path):
    url = serve(PROBE_PUBLIC="1", PROBE_NEW_SESSIONS="2")
    page.goto(url)
    page.get_by_role("tab", name="About").click()  # an event of the first page's session
    page.locator("#about-mode").get_by_text("2 new ones per address").wait_for()
    second = browser.new_page()
    second.goto(url)
    second.get_by_text("Perception playground").wait_for(timeout=WAIT_MS)
    third = browser.new_page()  # a third page load from this address in ten minutes
    refused = third.goto(url)
    # One message, on a plain page, before Gradio's client starts: not one error per load event.
    assert refused is not None and refused.status == 429 and refused.headers["retry-after"]
    said = third.get_by_text("too many new sessions from your address (2 in 10 minutes)")
    said.wait_for(timeout=WAIT_MS)
    assert said.count() == 1 and third.get_by_text("try again in").count() == 1
    assert third.locator("gradio-app, .toast-body, [data-testid='toast-body']").count() == 0
    screenshot(third, tmp_path, "past-the-bound")
    # The first page's session is known: its next event reaches the app as before.
    page.get_by_role("tab", name="Probe").click()
    with page.expect_response(lambda response: "/queue/join" in response.url) as joined_:
        page.get_by_text("How often do the lines cross?").click()
    assert joined_.value.status == 200
    assert page.get_by_text("too many new sessions").count() == 0
    second.close()
    third.close()

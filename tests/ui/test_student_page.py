"""The students' own page (`/class/CODE`), on phones in a real browser: joined from the QR's link,
the question, the picture and every way to answer fit the first screen at 390 x 844 and 360 x 640
for each kind of answer (options, Yes/No, a number pad, a typed answer), with no scrolling; and
its routes refuse what a page must not get (an item ahead, a forged token, a body past its bound)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from probes.classroom import Classes
from tests.ui.conftest import patient_client, screenshot
from ui.classroom import lessons

PHONES = {"390x844": {"width": 390, "height": 844}, "360x640": {"width": 360, "height": 640}}
KINDS = {  # an item of each kind of answer, as class_open's benchmark and parameters
    "options": ("illusion/mueller-lyer", "difference=0.1 inducers=with illusion_strength=30"),
    "yes-no": ("blind/touching-circles", "gap=0.2 canvas=768"),
    "number": ("blind/olympic-circles", ""),
    "typed": ("blind/circled-letter", ""),
}
FITS = """() => {
  const inside = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.top >= 0 && r.bottom <= innerHeight + 0.5 && r.left >= 0 && r.right <= innerWidth + 0.5; };
  const answers = [...document.querySelectorAll('#answers button, #pad button, #pad output, #typed input, #typed button')].filter((el) => el.getBoundingClientRect().width > 0);
  const picture = document.getElementById('picture').getBoundingClientRect();
  return {answers: answers.length, outside: answers.filter((el) => !inside(el)).map((el) => el.textContent || el.id),
          question: inside(document.getElementById('question')), picture: Math.round(picture.height),
          scroll: document.scrollingElement.scrollHeight - innerHeight, sideways: document.scrollingElement.scrollWidth - innerWidth};
}"""


@pytest.fixture
def classes(monkeypatch):
    fresh = Classes()
    monkeypatch.setattr(lessons, "CLASSES", fresh)
    return fresh


def open_on_first_item(url: str, benchmark: str, params: str) -> dict:
    client = patient_client(url)
    opened = client.predict(benchmark, params, 1, 0, "", api_name="/class_open")
    assert "code" in opened, opened
    client.predict(opened["teacher_token"], api_name="/class_next")
    return opened


@pytest.mark.parametrize("phone", sorted(PHONES))
def test_every_way_to_answer_is_on_the_first_screen(serve, browser, classes, tmp_path, phone):
    url = serve()
    for kind, (benchmark, params) in KINDS.items():
        opened = open_on_first_item(url, benchmark, params)
        context = browser.new_context(viewport=PHONES[phone], is_mobile=True, has_touch=True)
        try:
            page = context.new_page()
            page.goto(f"{url}/class/{opened['code']}")  # what the QR code opens
            page.locator("#join button").click()
            expect(page.locator("#picture")).to_be_visible()
            page.wait_for_function("() => document.getElementById('picture').complete")
            fits = page.evaluate(FITS)
            screenshot(page, tmp_path, f"student-{kind}-{phone}")
            assert fits["answers"] >= 2 and not fits["outside"], (kind, fits)
            assert fits["question"] and fits["scroll"] <= 1 and fits["sideways"] <= 1, (kind, fits)
            assert fits["picture"] >= 150, (kind, fits)  # the picture takes the room that is left
        finally:
            context.close()


def request(url: str, path: str, body: bytes | None = None) -> tuple[int, dict | bytes]:
    sent = urllib.request.Request(url + path, body, {"Content-Type": "application/json"} if body is not None else {})
    try:
        with urllib.request.urlopen(sent, timeout=60) as response:
            raw, status = response.read(), response.status
    except urllib.error.HTTPError as error:
        raw, status = error.read(), error.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def test_the_routes_refuse_what_a_page_must_not_get(serve, classes):
    url = serve(PROBE_PUBLIC="1")
    client = patient_client(url)
    opened = client.predict("blind/touching-circles", "gap=0.2 canvas=384", 2, 0, "", api_name="/class_open")
    status, page = request(url, f"/class/{opened['code']}")
    assert status == 200 and len(page) < 12_000  # the whole page, script and style in it
    _, joined = request(
        url, "/class/api/join", json.dumps({"code": opened["code"], "name": "Ada", "page": "ab" * 16}).encode()
    )
    token = joined["student_token"]
    _, again = request(url, "/class/api/join", json.dumps({"code": opened["code"], "page": "ab" * 16}).encode())
    assert again["student_token"] == token  # the same page: the same seat
    assert request(url, f"/class/api/picture?token={token}&index=0")[0] == 404  # not before the teacher shows it
    client.predict(opened["teacher_token"], api_name="/class_next")
    status, png = request(url, f"/class/api/picture?token={token}&index=0")
    assert status == 200 and png[:8] == b"\x89PNG\r\n\x1a\n"
    assert request(url, f"/class/api/picture?token={token}&index=1")[0] == 404  # never an item ahead
    status, forged = request(url, "/class/api/events?token=forged")
    assert status == 404 and "not valid" in forged["error"]
    assert request(url, f"/class/api/state?token={token}")[1]["state"] == "answering"
    assert request(url, "/class/api/answer", b"{" + b" " * 10_000 + b"}")[0] in (400, 413)
    assert request(url, "/class/api/answer", b"[1, 2]")[0] == 400
    for forged in ({"token": "x"}, ["x"], 7, None):  # a token of any JSON type: refused as a stale one is
        _, refused = request(url, "/class/api/answer", json.dumps({"token": forged, "answer": "Yes"}).encode())
        assert "not valid" in refused["error"], forged
    _, taken = request(url, "/class/api/answer", json.dumps({"token": token, "answer": "Yes"}).encode())
    assert taken["received"]
    _, twice = request(url, "/class/api/answer", json.dumps({"token": token, "answer": "No"}).encode())
    assert "already answered" in twice["error"]
    assert request(url, "/class/not%20a%20code")[0] == 404


def test_a_hall_behind_one_address_is_not_refused_by_the_apps_bound_on_new_sessions(serve, classes):
    """The student page's routes open no Gradio session: a class behind one router joins past the
    app's bound on new sessions per address (here 5), which still guards the app's own page."""
    url = serve(PROBE_PUBLIC="1", PROBE_NEW_SESSIONS="5")
    opened = patient_client(url).predict(
        "blind/touching-circles", "gap=0.2 canvas=384", 1, 0, "", api_name="/class_open"
    )
    seats = set()
    for n in range(20):
        status, joined = request(
            url, "/class/api/join", json.dumps({"code": opened["code"], "page": f"{n:032x}"}).encode()
        )
        assert status == 200 and "student_token" in joined, joined
        seats.add(joined["student_token"])
        assert request(url, f"/class/{opened['code']}")[0] == 200
    assert len(seats) == 20

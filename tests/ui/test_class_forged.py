"""Forged tokens against the class's named endpoints, as a script posts them (one JSON request
each, `/gradio_api/run/<name>`, the way the phones' pages call): random ones, empty ones, and
values of any JSON type in place of the token. Each is refused with the words a stale link
gets, the same whether or not a class is open (they say nothing of which classes exist), and
none is an internal error with a traceback in the server's log. A real student's answer of the
wrong type is refused as unreadable, and leaves them free to answer."""

from __future__ import annotations

import json
import logging
import secrets
import urllib.request

import pytest

from probes.classroom import Classes
from tests.ui.conftest import patient_client
from ui.classroom import lessons, teacher

STUDENT_ENDPOINTS = {"class_item": [None], "class_answer": ["Yes"]}  # what follows the token
TEACHER_ENDPOINTS = ("class_status", "class_next", "class_reveal", "class_results")
FORGED = [secrets.token_urlsafe(18), "", None, 7, 2.5, True, ["a-token"], {"token": "x"}, "t" * 10_000]


def posted(url: str, name: str, data: list) -> dict:
    request = urllib.request.Request(f"{url}/gradio_api/run/{name}", json.dumps({"data": data}).encode(),
                                     {"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["data"][0]


def forged_replies(url: str) -> dict[tuple[str, str], dict]:
    replies = {}
    for value in FORGED:
        for name, rest in STUDENT_ENDPOINTS.items():
            replies[(name, repr(value))] = posted(url, name, [value, *rest])
        for name in TEACHER_ENDPOINTS:
            replies[(name, repr(value))] = posted(url, name, [value])
    return replies


@pytest.fixture
def no_classes(monkeypatch):
    """A registry of this test's own: no class of another test is open in it."""
    fresh = Classes()
    monkeypatch.setattr(lessons, "CLASSES", fresh)  # the one registry every endpoint and page reads
    return fresh


def test_forged_tokens_of_any_type_are_refused_alike_with_or_without_a_class(serve, no_classes, caplog):
    # A hundred calls, each under a new session: the class API's rate (tests/ui/test_class_api_rate.py)
    # lifted, so they take seconds, not two minutes.
    url = serve(PROBE_PUBLIC="1", PROBE_CLASS_API_RATE="100000")
    caplog.set_level(logging.ERROR)
    without = forged_replies(url)
    refusals = {json.dumps(reply, sort_keys=True) for reply in without.values()}
    assert len(refusals) == 1, refusals  # one message for every forged token, of every type
    assert "link is not valid" in next(iter(without.values()))["error"]

    client = patient_client(url)
    opened = client.predict("blind/touching-circles", "gap=0.2 canvas=384", 2, 0, "", api_name="/class_open")
    joined = posted(url, "class_join", [opened["code"], "Eve"])
    assert posted(url, "class_next", [opened["teacher_token"]])["index"] == 0
    with_class = forged_replies(url)
    assert with_class == without  # a class open changes nothing a forger reads
    assert not any(opened["code"] in json.dumps(reply) for reply in with_class.values())
    # A code of any type is refused as an unknown code is.
    unknown = posted(url, "class_join", ["ZZZZZZ", "Mallory"])
    assert "no open class has this code" in unknown["error"]
    for code in (7, ["ZZZZZZ"], {"code": opened["code"]}, None):
        assert posted(url, "class_join", [code, {"name": 1}]) == unknown

    # The real student: answers that are not text (nor a number) are refused as unreadable ...
    token = joined["student_token"]
    for wrong in ({"answer": "Yes"}, ["Yes", "No"]):
        assert "an answer is an option's letter or text" in posted(url, "class_answer", [token, wrong])["error"]
    # ... and cost them nothing: their answer still counts.
    assert posted(url, "class_answer", [token, "Yes"])["received"]
    assert [r.getMessage() for r in caplog.records if "internal error" in r.getMessage()] == []


def test_class_open_refuses_fields_that_are_not_text(serve, caplog):
    url = serve(PROBE_PUBLIC="1")
    caplog.set_level(logging.ERROR)
    client = patient_client(url)
    for arguments, said in (
        ([["blind/touching-circles"], "", 2, 0, ""], "benchmark: write it as text"),
        (["blind/touching-circles", {"gap": "0.2"}, 2, 0, ""], "params: write it as text"),
        (["blind/touching-circles", "", 2, 0, ["baseline/chance"]], "models: write it as text"),
        (["blind/touching-circles", "", 2, {"s": 10}, ""], "seconds per item: a number"),
    ):
        assert said in client.predict(*arguments, api_name="/class_open").get("error", ""), arguments
    assert [r.getMessage() for r in caplog.records if "internal error" in r.getMessage()] == []


@pytest.mark.parametrize("forged", [{"token": "x"}, ["x"], 7])
def test_a_forged_token_kept_in_the_browser_is_refused_by_the_pages_handlers(forged, no_classes):
    """gr.BrowserState hands the handlers whatever the browser's storage holds."""
    assert "link is not valid" in teacher.refresh(forged, None)[0]
    assert "link is not valid" in teacher.reveal(forged)
    assert "link is not valid" in teacher.next_item(forged, None)[0]
    assert "link is not valid" in teacher.publish(forged, None)

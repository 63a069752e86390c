"""A class attacked as one visitor of a public Space would, through the class's real endpoints (one
JSON request each to `/gradio_api/run/<name>`, as a phone's page or a script posts them): classes
opened until refused and closed again, a page joining 1,200 times, codes guessed until the
address is throttled, and a scripted class of 120 made-up students published to the people rows."""

from __future__ import annotations

import json
import secrets
import urllib.request
from types import SimpleNamespace

import pytest

from probes.classroom import Classes
from probes.people.human import is_human
from tests.ui.conftest import patient_client, reset_caches
from ui import sessions
from ui.classroom import lessons, teacher

LESSON = ("blind/touching-circles", "gap=-0.1,0.2 canvas=384 prompt=touching", 3, 0, "")  # class_open's arguments


@pytest.fixture
def public(serve, monkeypatch, tmp_path):
    """A public app of this test's own (the class registry, the people allowances) behind one
    trusted proxy, so each request names its address in X-Forwarded-For as a Space's would. These
    attacks are on the class itself: the rate on its endpoints (tests/ui/test_class_api_rate.py)
    is lifted so a thousand calls take seconds, not minutes."""

    def start(**env: str) -> str:
        monkeypatch.setattr(lessons, "CLASSES", Classes())
        monkeypatch.setattr(sessions, "PEOPLE", sessions.Budget(**sessions.PEOPLE_LIMITS))
        monkeypatch.setattr(sessions, "ANSWERED", sessions.AnsweredOnce())
        monkeypatch.setattr(sessions, "SESSIONS", sessions.SessionStores(tmp_path / "sessions"))
        monkeypatch.delenv("PROBE_CLASS_PUBLISH", raising=False)
        return serve(PROBE_PUBLIC="1", PROBE_TRUSTED_PROXIES="1", PROBE_CLASS_API_RATE="100000", **env)

    yield start
    reset_caches()


def posted(url: str, name: str, data: list, session: str | None = None, address: str = "198.51.100.1") -> dict:
    body = json.dumps({"data": data, "session_hash": session or secrets.token_hex(8)}).encode()
    headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
    with urllib.request.urlopen(urllib.request.Request(f"{url}/gradio_api/run/{name}", body, headers), timeout=60) as r:
        return json.loads(r.read())["data"][0]


def test_one_visitor_holds_two_classes_at_most_and_closing_one_frees_it(public):
    url = public()
    hoarder = patient_client(url)
    opened = [hoarder.predict(*LESSON, api_name="/class_open") for _ in range(8)]
    held = [reply for reply in opened if "code" in reply]
    refusals = {reply.get("error") for reply in opened if "code" not in reply}
    assert len(held) == 2, opened
    assert refusals == {"you have 2 classes open already: close one (Close the class) before opening another"}
    # Another teacher is not refused for the hoarder's classes.
    assert "code" in patient_client(url).predict(*LESSON, api_name="/class_open")
    # Closing: a forged token is refused as any forged token is; the teacher's ends the class.
    assert "not valid" in posted(url, "class_close", [secrets.token_urlsafe(18)])["error"]
    student = posted(url, "class_join", [held[0]["code"], "Ada"])["student_token"]
    assert "teacher" in posted(url, "class_close", [student])["error"]
    assert hoarder.predict(held[0]["teacher_token"], api_name="/class_close") == {"closed": True}
    assert "over or the link is not valid" in posted(url, "class_item", [student, None])["error"]
    assert "no open class has this code" in posted(url, "class_join", [held[0]["code"], "Bo"])["error"]
    assert "code" in hoarder.predict(*LESSON, api_name="/class_open")  # the place is the hoarder's again


def test_a_page_joining_1200_times_takes_one_seat_and_a_real_student_still_joins(public):
    url = public()
    opened = patient_client(url).predict(*LESSON, api_name="/class_open")
    page = secrets.token_hex(8)
    tokens = {posted(url, "class_join", [opened["code"], f"bot{n}"], page, "203.0.113.7")["student_token"]
              for n in range(1_200)}  # fmt: skip
    assert len(tokens) == 1
    ada = posted(url, "class_join", [opened["code"], "Ada"], address="192.0.2.40")
    assert ada["name"] == "Ada" and ada["student_token"] not in tokens
    assert posted(url, "class_status", [opened["teacher_token"]])["students"] == 2


def test_guessing_codes_is_throttled_per_address(public):
    url = public()
    opened = patient_client(url).predict(*LESSON, api_name="/class_open")
    guesses = {"".join(secrets.choice("ABCDEFGHJKMNPQRSTUVWXYZ23456789") for _ in range(8)) for _ in range(100)}
    guesses.discard(opened["code"])
    for guess in list(guesses)[:100]:
        assert (
            "no open class has this code" in posted(url, "class_join", [guess, None], address="203.0.113.66")["error"]
        )
    for guess in (*list(guesses)[:3], opened["code"]):  # past the throttle: refused, the right code too
        refused = posted(url, "class_join", [guess, None], address="203.0.113.66")
        assert refused["error"].startswith("too many wrong class codes from your network: try again in"), refused
    assert "student_token" in posted(url, "class_join", [opened["code"], "Ada"], address="192.0.2.41")


def run_scripted_class(url: str, students: int, addresses: list[str]) -> tuple[dict, SimpleNamespace, int]:
    """A class opened by a script, `students` made-up students (each its own page, from the
    addresses in turn) answering every item against the truth; (opened, the teacher's request, answers)."""
    client = patient_client(url)
    opened = client.predict(*LESSON, api_name="/class_open")
    pages = [(secrets.token_hex(8), addresses[n % len(addresses)]) for n in range(students)]
    tokens = [posted(url, "class_join", [opened["code"], f"bot{n}"], *page)["student_token"]
              for n, page in enumerate(pages)]  # fmt: skip
    room = lessons.CLASSES.by_code(opened["code"])
    desk = secrets.token_hex(8)  # the teacher's script: one page of its own
    answers = 0
    for _, item in room.lesson.items:
        posted(url, "class_next", [opened["teacher_token"]], desk)
        wrong = "No" if item.target_text() == "Yes" else "Yes"
        answers += sum(bool(posted(url, "class_answer", [token, wrong], *page).get("received"))
                       for token, page in zip(tokens, pages, strict=True))  # fmt: skip
    request = SimpleNamespace(session_hash=client.session_hash, headers={}, client=SimpleNamespace(host="127.0.0.1"))
    return opened, request, answers


def people_rows() -> list:
    return [r for r in sessions.shared_store().results() if is_human(r.model)]


def test_a_scripted_class_stays_in_its_teacher_s_results_unless_the_operator_allows(public):
    url = public()
    opened, request, answers = run_scripted_class(url, 120, ["203.0.113.5"])
    assert answers == 360
    said = teacher.publish(opened["teacher_token"], request)
    assert said.startswith("Kept the class's 360 answers in your own results") and "operator" in said
    assert people_rows() == []  # nothing in everyone's people rows
    with sessions.reading(request) as (shared, own):
        assert shared.count() == 0 and own.count() == 360  # the teacher's own Scoreboard has them
    assert teacher.publish(opened["teacher_token"], request) == "Already published."


def test_where_classes_may_publish_each_address_adds_what_the_human_tab_allows(public):
    url = public(PROBE_CLASS_PUBLISH="1")
    addresses = ["203.0.113.5", "203.0.113.6"]
    opened, request, answers = run_scripted_class(url, 120, addresses)
    assert answers == 360
    said = teacher.publish(opened["teacher_token"], request)
    bound = sessions.PEOPLE_LIMITS["client_limit"]
    pooled = people_rows()
    assert len(pooled) == bound * len(addresses)  # 64 an address: 128 of 360
    assert (
        said.startswith(f"Published {len(pooled)} answers to the people rows") and f"{360 - len(pooled)} more" in said
    )
    # Each student counted once an item, and no student past the Human tab's bounds.
    assert len({(r.model, r.item_id) for r in pooled}) == len(pooled)
    with sessions.reading(request) as (_, own):
        assert own.count() == 360 - len(pooled)

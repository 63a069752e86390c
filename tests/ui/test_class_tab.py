"""The Class tab in a real browser: a teacher's presenter page (1920 x 1080) and three students'
phones (390 px) on the class's own page, each in its own browser context; joining by the code
typed in the app, by the QR's link and by an old `?class=` address, answering with taps, the
presenter's count and the tally at the reveal against what they tapped, the truth reaching
students only after the reveal, a reloaded student rejoining, and a student refused the teacher's
endpoints."""

from __future__ import annotations

import json
import re
import urllib.request

from playwright.sync_api import expect

from tests.ui.conftest import patient_client, screenshot
from tests.ui.navigation import open_tab
from ui.classroom.lessons import CLASSES

PROJECTOR = {"width": 1920, "height": 1080}
PHONE = {"width": 390, "height": 844}


def teacher_opens(page, url: str, params: str, count: int, seconds: int = 0) -> str:
    page.goto(url)
    open_tab(page, "Class")
    open_tab(page, "Teach")
    page.locator("#class-benchmark input").fill("blind/touching-circles")
    page.locator("#class-benchmark input").press("Enter")
    page.locator("#class-params textarea, #class-params input").first.fill(params)
    page.locator("#class-count input").fill(str(count))
    page.locator("#class-seconds input").fill(str(seconds))
    page.click("#class-open")
    code = page.locator("#class-presenter .class-code b")
    expect(code).to_have_text(re.compile(r"^[A-Z2-9]{8}$"))
    expect(page.locator("#class-qr svg")).to_have_count(1)
    return code.inner_text()


def student_joins(browser, url: str, code: str, name: str, way: str = "code"):
    """A phone joining: `way` "code" (typed in the app's Join view), "link" (the QR's address) or
    "old-link" (the whole app's `?class=` address): each ends on the class's own page."""
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    if way == "link":
        page.goto(f"{url}/class/{code}")
    elif way == "old-link":
        page.goto(f"{url}/?class={code}")
    else:
        page.goto(url)
        open_tab(page, "Class")
        page.locator("#class-code input, #class-code textarea").first.fill(code.lower())
        page.click("#class-join-button")
    expect(page).to_have_url(re.compile(rf"/class/{code}$"))
    page.locator("#name").fill(name)
    page.locator("#join button").click()
    expect(page.locator("#message")).to_contain_text("Waiting for the teacher")
    return context, page


def test_a_class_answers_on_phones_and_the_reveal_shows_what_they_tapped(serve, browser, tmp_path):
    url = serve()
    teacher = browser.new_context(viewport=PROJECTOR)
    board = teacher.new_page()
    contexts = []
    try:
        code = teacher_opens(board, url, "gap=-0.1,0.2 canvas=384 prompt=touching", 2)
        screenshot(board, tmp_path, "class-lobby-projector")
        phones = []
        for name, way in (("Ada", "link"), ("Bo", "code"), ("Cy", "old-link")):
            context, phone = student_joins(browser, url, code, name, way)
            contexts.append(context)
            phones.append(phone)
        expect(board.locator("#class-presenter")).to_contain_text("3 joined")
        board.click("#class-next")
        expect(board.locator("#class-presenter")).to_contain_text("0 of 3 answered")
        room = CLASSES.by_code(code)
        truth = room.lesson.items[0][1].target_text()
        tapped = {"Ada": "Yes", "Bo": "No", "Cy": "Yes"}
        for count, (phone, name) in enumerate(zip(phones, tapped, strict=True), start=1):
            button = phone.locator("#answers button", has_text=tapped[name])
            expect(button).to_be_visible()
            expect(phone.locator("#picture")).to_be_visible()
            if name == "Ada":
                screenshot(phone, tmp_path, "class-answering-phone")
            expect(phone.locator("main")).not_to_contain_text("Right answer")
            button.click()
            expect(phone.locator("#message")).to_contain_text(f"Answer received: {tapped[name]}")
            # The presenter's count moves with each tap (pushed to it, not waited for).
            expect(board.locator("#class-presenter")).to_contain_text(f"{count} of 3 answered")
        screenshot(phones[0], tmp_path, "class-answered-phone")
        for phone in phones:  # nothing of the truth before the reveal
            expect(phone.locator("main")).not_to_contain_text("Right answer")
        # A reloaded phone finds its class again, at the same place, and cannot answer twice.
        phones[1].reload()
        expect(phones[1].locator("#message")).to_contain_text("Answer received: No")
        expect(phones[1].locator("#answers button")).to_have_count(0)
        board.click("#class-reveal")
        bars = board.locator("#class-revealed .class-bar")
        expect(bars).to_have_count(2)
        counts = {bars.nth(i).locator(".label").inner_text().lstrip("✓ "): int(bars.nth(i).locator(".count").inner_text())
                  for i in range(2)}  # fmt: skip
        assert counts == {"Yes": 2, "No": 1}
        expect(board.locator("#class-revealed .class-truth")).to_contain_text(truth)
        expect(board.locator("#class-revealed .class-models")).to_contain_text("baseline/pixels")
        for phone, name in zip(phones, tapped, strict=True):
            expect(phone.locator("#message")).to_contain_text(f"Right answer: {truth}")
            verdict = "✓ right" if tapped[name] == truth else "✗ not this time"
            expect(phone.locator("#message")).to_contain_text(verdict)
        screenshot(board, tmp_path, "class-reveal-projector")
        screenshot(phones[0], tmp_path, "class-reveal-phone")
        board.click("#class-next")
        expect(board.locator("#class-presenter")).to_contain_text("item 2 of 2")
        for phone in phones:
            expect(phone.locator("#where")).to_contain_text("Item 2 of 2")
        board.click("#class-end")
        expect(board.locator("#class-results")).to_contain_text("the class")
        expect(board.locator("#class-results")).to_contain_text("baseline/pixels")
        screenshot(board, tmp_path, "class-results-projector")
    finally:
        for context in contexts:
            context.close()
        teacher.close()


def test_a_student_cannot_drive_the_class_through_the_api(serve):
    url = serve()
    client = patient_client(url)
    opened = client.predict("blind/touching-circles", "gap=0.2 canvas=384", 2, 0, "", api_name="/class_open")
    assert set(opened) >= {"code", "teacher_token"}, opened
    joined = client.predict(opened["code"], "Eve", api_name="/class_join")
    student = joined["student_token"]
    for endpoint in ("/class_next", "/class_reveal", "/class_results"):
        refused = client.predict(student, api_name=endpoint)
        assert "teacher" in refused.get("error", ""), (endpoint, refused)
    assert client.predict("forged", api_name="/class_next")["error"]
    item = client.predict(student, api_name="/class_item")
    assert item["state"] == "lobby" and "truth" not in item
    client.predict(opened["teacher_token"], api_name="/class_next")
    item = client.predict(student, api_name="/class_item")
    assert item["state"] == "answering" and item["image"].startswith("data:image/png;base64,")
    assert "truth" not in item and "tally" not in item
    # A poll from a page that has this item's picture is not sent it again ...
    again = client.predict(student, item["index"], api_name="/class_item")
    assert again["image"] is None and again["image_unchanged"] and again["question"] == item["question"]
    # ... and a script may POST straight to the endpoint, without the queue (as the phones' pages do).
    direct = urllib.request.Request(f"{url}/gradio_api/run/class_item", json.dumps({"data": [student, None]}).encode(),
                                    {"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(direct, timeout=60) as response:
        posted = json.loads(response.read())["data"][0]
    assert posted["index"] == item["index"] and posted["image"] == item["image"]
    assert client.predict(student, "No", api_name="/class_answer")["received"]
    assert "already answered" in client.predict(student, "Yes", api_name="/class_answer")["error"]
    shown = client.predict(opened["teacher_token"], api_name="/class_reveal")
    assert {t["answer"]: t["count"] for t in shown["tally"]} == {"Yes": 0, "No": 1}
    assert client.predict(student, api_name="/class_item")["truth"] == shown["truth"]


def test_a_class_of_examples_ticked_in_the_form(serve, page):
    """The form's "Items from the Examples": its list replaces the benchmark's fields, and the
    class holds the ticked examples, in the order they were ticked."""
    page.goto(serve())
    open_tab(page, "Class")
    open_tab(page, "Teach")
    expect(page.locator("#class-examples")).to_be_hidden()
    page.locator("#class-source").get_by_text("Items from the Examples", exact=True).click()
    expect(page.locator("#class-benchmark")).to_be_hidden()
    for title in ("Squares in squares", "Two circles that almost touch"):
        page.locator("#class-examples").get_by_text(title, exact=True).click()
    page.click("#class-open")
    code = page.locator("#class-presenter .class-code b")
    expect(code).to_have_text(re.compile(r"^[A-Z2-9]{8}$"))
    items = CLASSES.by_code(code.inner_text()).lesson.items
    assert [benchmark.id for benchmark, _ in items] == ["blind/nested-squares", "blind/touching-circles"]

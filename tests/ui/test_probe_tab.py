"""The Probe tab in a real browser: side by side answers, uploads, inert model text, private keys."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.conftest import shapes_image
from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import screenshot

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> **bold** [link](http://example.invalid) Yes'


def choose_model(page, slot: int, model_id: str) -> None:
    field = page.locator(f"#probe-model-{slot} input")
    field.click()
    field.fill(model_id)
    field.press("Enter")
    page.locator("body").click(position={"x": 5, "y": 5})


def test_generate_then_ask_two_models_side_by_side(serve, page, tmp_path):
    with FakeOpenAIServer(responder=lambda body: "The circles are clearly apart.\nAnswer: No") as server:
        url = serve(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-server-test")
        page.goto(url)
        page.locator("#probe-params textarea, #probe-params input").first.fill("gap=0.5 canvas=384")
        page.click("#probe-generate")
        expect(page.locator("#probe-item-text")).to_contain_text("Are the two circles")
        choose_model(page, 1, "openai/gpt-test")
        page.click("#probe-ask")
        expect(page.locator("#probe-pane-0")).to_contain_text("baseline/chance")
        expect(page.locator("#probe-pane-1")).to_contain_text("openai/gpt-test")
        expect(page.locator("#probe-pane-1")).to_contain_text("✓ correct")  # gap 0.5: apart, "No" is right
        expect(page.locator("#probe-pane-0")).to_contain_text(re.compile("✓ correct|✗ wrong"))  # chance: graded
        expect(page.locator("#probe-reply-1 textarea")).to_have_value("The circles are clearly apart.\nAnswer: No")
        expect(page.locator("#probe-status")).to_contain_text("2 of 2 answered")
        screenshot(page, tmp_path, "probe")
    assert server.request_count == 1
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-server-test"


def test_model_text_with_html_and_markdown_shows_as_inert_text(serve, page):
    with FakeOpenAIServer(responder=lambda body: HOSTILE) as server:
        url = serve(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-server-test")
        page.goto(url)
        page.click("#probe-generate")
        expect(page.locator("#probe-item-text")).to_contain_text("circles")
        choose_model(page, 0, "openai/hostile")
        page.click("#probe-ask")
        expect(page.locator("#probe-pane-0")).to_contain_text("openai/hostile")
        expect(page.locator("#probe-reply-0 textarea")).to_have_value(HOSTILE)
        page.wait_for_timeout(500)
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#probe-pane-0 img, #probe-reply-0 img, #probe-pane-0 a").count() == 0


def test_upload_with_own_question_and_answer(serve, page, tmp_path):
    image = tmp_path / "circle.png"
    shapes_image("circle").save(image)
    page.goto(serve())
    page.get_by_label("Upload").check()
    page.locator("#probe-files input[type=file]").set_input_files(str(image))
    page.locator("#probe-question textarea, #probe-question input").first.fill(
        "Is there a red circle? Answer yes or no."
    )
    page.get_by_label("Answer: option text or letter (optional)").fill("yes")
    page.click("#probe-use-upload")
    expect(page.locator("#probe-item-text")).to_contain_text("Is there a red circle?")
    page.click("#probe-ask")
    expect(page.locator("#probe-pane-0")).to_contain_text("expected: Yes")


def test_a_rejected_upload_gets_a_clear_message(serve, page, tmp_path):
    fake = tmp_path / "notes.png"
    fake.write_text("not really an image")
    page.goto(serve())
    page.get_by_label("Upload").check()
    page.locator("#probe-files input[type=file]").set_input_files(str(fake))
    page.locator("#probe-question textarea, #probe-question input").first.fill("What is this?")
    page.click("#probe-use-upload")
    expect(page.locator("#probe-status")).to_contain_text("not a PNG, JPEG")


def test_a_key_typed_in_one_session_is_neither_usable_nor_visible_in_another(serve, browser):
    visitor_key = "sk-VISITOR-only-123456"
    with FakeOpenAIServer(responder=lambda body: "No") as server:
        url = serve(OPENAI_BASE_URL=server.base_url)  # no server key
        first, second = browser.new_context(), browser.new_context()
        try:
            one, two = first.new_page(), second.new_page()
            for page in (one, two):
                page.goto(url)
                page.click("#probe-generate")
                expect(page.locator("#probe-item-text")).to_contain_text("circles")
                choose_model(page, 0, "openai/gpt-test")
            one.get_by_text("API keys (used for this session only, never stored)").click()
            one.locator("#probe-openai-key input").fill(visitor_key)
            one.click("#probe-ask")
            expect(one.locator("#probe-pane-0")).to_contain_text(re.compile("✓ correct|✗ wrong"))
            two.click("#probe-ask")
            expect(two.locator("#probe-pane-0")).to_contain_text("OPENAI_API_KEY")
            assert visitor_key not in two.content()
        finally:
            first.close()
            second.close()
    assert [r["headers"]["authorization"] for r in server.requests] == [f"Bearer {visitor_key}"]

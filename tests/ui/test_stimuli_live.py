"""The Stimulus lab as a live instrument, in a real browser at desktop and phone widths: the
preview follows a slider while it is dragged, a typed value is applied on Enter (not at each
key), every generated family is listed (the illusions with their own controls and the ground
truth measured in the pixels drawn). "Ask models about this", from the lab to the Probe stage and
on to the Scoreboard's curves, is tests/ui/test_illusion_journey.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from probes.core.registry import generated_families
from tests.ui.conftest import screenshot
from tests.ui.navigation import DESKTOP, PHONE, Sent, open_tab

SHOWS_A_PICTURE = """() => [...document.querySelectorAll('#stim-image img')].every(
    (img) => (img.complete && img.naturalWidth > 0) || img.style.background.includes('url('))"""


def open_lab(page, url: str) -> None:
    page.goto(url)
    open_tab(page, "Stimulus lab")
    expect(page.locator("#stim-image img")).to_be_visible()


def choose(page, elem_id: str, value: str) -> None:
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=value, exact=True).click()


def image_src(page) -> str:
    return page.locator("#stim-image img").get_attribute("src") or ""


def type_and_enter(page, elem_id: str, text: str) -> None:
    """Click a number box, replace its text key by key as a person types (ten keys a second:
    Gradio's slider box turns a "-0" typed within the same few milliseconds into "0"), and
    press Enter."""
    box = page.locator(f"#{elem_id} input[type=number]")
    box.click()
    box.press("Control+a")
    box.press_sequentially(text, delay=100)
    box.press("Enter")


def measured(page) -> dict[str, float]:
    """The answer line's measured targets: {"top": 124.0, "bottom": 96.0}."""
    text = page.locator("#stim-answer").inner_text()
    line = text.split("Measured in the pixels drawn:", 1)[1]
    return {name.strip(): float(value) for name, value in re.findall(r"([a-z ]+?) (-?[\d.]+) px", line)}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_preview_follows_a_slider_while_it_is_dragged(serve, browser, tmp_path, viewport):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    try:
        open_lab(page, serve())
        expect(page.locator("#stim-answer")).to_contain_text("Ground truth: Yes")  # gap -0.15: overlapping
        first = image_src(page)
        track = page.locator("#stim-param-gap input[type=range]")
        track.scroll_into_view_if_needed()
        box = track.bounding_box()
        y = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + 2, y)
        page.mouse.down()
        for step in range(1, 21):  # to the right end: from -0.15 to +0.5
            page.mouse.move(box["x"] + 2 + step * (box["width"] - 4) / 20, y, steps=2)
            # Never a blank between frames: a picture still loading has the last one behind it.
            assert page.evaluate(SHOWS_A_PICTURE), f"blank preview at step {step}"
            if step == 10:  # halfway, the button still held: the picture has already moved on
                expect(page.locator("#stim-image img")).not_to_have_attribute("src", first)
                screenshot(page, tmp_path, f"stimuli-drag-{viewport['width']}")
        expect(page.locator("#stim-answer")).to_contain_text("Ground truth: No")  # still held
        page.mouse.up()
        expect(page.locator("#stim-values")).to_contain_text("0.5")
    finally:
        context.close()


def test_a_typed_value_is_applied_on_enter_not_at_each_key(serve, page, tmp_path):
    sent = Sent().watch(page)
    open_lab(page, serve())
    before = image_src(page)
    type_and_enter(page, "stim-param-canvas", "500")  # a slider's box
    expect(page.locator("#stim-image img")).not_to_have_attribute("src", before)
    expect(page.locator("#stim-values")).to_contain_text("500")
    redraws = [data for data in sent.events if len(data) == 6]  # [variant, canvas, diameter, gap, ...]
    assert [data[1] for data in redraws] == [500]  # once, on Enter: not 5, not 50, not on the click

    choose(page, "stim-task", "illusion/ponzo")
    expect(page.locator("#stim-param-size_min")).to_be_visible()
    expect(page.locator("#stim-question")).to_contain_text("Which red line is longer")  # its first preview
    before = image_src(page)
    page.locator("#stim-param-size_min input").fill("0.8")  # a number box: sent with Enter
    page.locator("#stim-param-size_min input").press("Enter")
    expect(page.locator("#stim-values")).to_contain_text('"size_min": 0.8')
    expect(page.locator("#stim-image img")).not_to_have_attribute("src", before)
    screenshot(page, tmp_path, "stimuli-typed")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_an_illusion_with_its_ground_truth_measured_in_the_pixels(serve, browser, tmp_path, viewport):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    try:
        open_lab(page, serve())
        page.locator("#stim-task input").click()
        listed = {option.inner_text().split("\n")[-1].strip() for option in page.get_by_role("option").all()}
        assert listed == set(generated_families())  # every generated family, the illusions too
        page.get_by_role("option", name="illusion/mueller-lyer", exact=True).click()
        for name in ("difference", "illusion_strength", "inducers", "canvas", "seed", "size_min"):
            expect(page.locator(f"#stim-param-{name}")).to_be_visible()
        expect(page.locator("#stim-question")).to_contain_text("Which red line is longer")
        expect(page.locator("#stim-answer")).to_contain_text("Bottom")  # the design's first: -0.46

        type_and_enter(page, "stim-param-difference", "0.3")  # pyllusion: > 0 makes the top line longer
        expect(page.locator("#stim-answer")).to_contain_text("Top")
        lengths = measured(page)
        assert lengths["top"] > lengths["bottom"]
        screenshot(page, tmp_path, f"stimuli-illusion-{viewport['width']}")

        type_and_enter(page, "stim-param-difference", "-0.3")
        expect(page.locator("#stim-answer")).to_contain_text("Bottom")
        lengths = measured(page)
        assert lengths["top"] < lengths["bottom"]
    finally:
        context.close()


"""The Probe grid under conditions that change the picture or the options (issue 21): each
condition's column shows the picture it sent and the right answer for it; each cell names the
option in the order that condition showed; a reply whose truth the condition cannot keep is
shown ungraded, with the reason."""

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import expect

from probes.asking import perturb
from probes.demo.conditions import CONDITIONS
from tests.conftest import shapes_image
from tests.ui.conftest import screenshot
from tests.ui.test_probe_tab import PHONE, tick, upload
from ui import examples
from ui.items import resolve
from ui.probe.grid import shown_answer

MUELLER_LYER = "Mueller-Lyer: which line is longer?"


def decoded(src: str) -> np.ndarray:
    data = base64.b64decode(src.split(",", 1)[1])
    return np.asarray(Image.open(io.BytesIO(data)).convert("L"), dtype=np.int16)


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
def test_mueller_lyer_upside_down_and_rotated_names_the_options_as_shown(serve, browser, tmp_path, viewport):
    benchmark, item = resolve(examples.spec_of(examples.BY_TITLE[MUELLER_LYER]))
    asked = {name: perturb.apply(benchmark, item, CONDITIONS[name].perturbation) for name in
             ("as asked", "upside down", "options rotated")}  # fmt: skip
    # What a perfect observer answers under each condition, as that condition shows the options.
    right = {name: shown_answer(one, one.target) for name, one in asked.items()}
    assert right["upside down"] != right["as asked"]  # the longer line is now the bottom one
    assert asked["options rotated"].options == item.options[::-1]

    context = browser.new_context(viewport=viewport or {"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(serve())
        page.locator("#probe-examples img").nth(examples.EXAMPLES.index(examples.BY_TITLE[MUELLER_LYER])).click()
        expect(page.locator("#probe-item-text")).to_contain_text("longer")
        tick(page, "upside down")
        tick(page, "options rotated")
        page.click("#probe-ask")
        expect(page.locator("#probe-status")).to_contain_text("6 of 6 answered")
        grid = page.locator("#probe-grid table")
        heads = grid.locator("thead th.condition")
        expect(heads).to_have_count(3)
        pixels = grid.locator("tbody tr", has_text="baseline/pixels").locator("td")
        for column, name in enumerate(("as asked", "upside down", "options rotated")):
            head = heads.nth(column)
            expect(head).to_contain_text(name)
            expect(head.locator("small.truth")).to_have_text(f"right: {right[name]}")
            expect(head.locator("img.sent-picture")).to_have_count(1)
            expect(pixels.nth(column)).to_have_class("cell right")
            expect(pixels.nth(column).locator("b")).to_have_text(f"✓ {right[name]}")
        pictures = {name: decoded(heads.nth(i).locator("img").get_attribute("src")) for i, name in
                    enumerate(("as asked", "upside down", "options rotated"))}  # fmt: skip
        # The upside-down thumbnail is the picture sent: the upright one turned over.
        upright, flipped = pictures["as asked"], pictures["upside down"]
        assert upright.shape == flipped.shape
        assert np.abs(upright - flipped[::-1]).mean() < 2 < np.abs(upright - flipped).mean()
        assert np.array_equal(pictures["options rotated"], upright)
        page.locator("#probe-grid").scroll_into_view_if_needed()
        screenshot(page, tmp_path, f"probe-conditions-{'phone' if viewport else 'desktop'}")
    finally:
        context.close()


def test_an_upload_that_says_left_is_ungraded_when_mirrored_with_the_reason(serve, page, tmp_path):
    page.goto(serve())
    upload(page, tmp_path, [shapes_image("circle")], "Is the red disc on the left side? Answer yes or no.")
    page.get_by_label("Answer: option text or letter (optional)").fill("yes")
    page.click("#probe-use-upload")
    tick(page, "mirror")
    tick(page, "grayscale")
    page.click("#probe-ask")
    # The pixels baseline knows no such question: counted apart, not as answered.
    expect(page.locator("#probe-status")).to_contain_text("3 of 6 answered · 3 cannot be answered by their model")
    heads = page.locator("#probe-grid thead th.condition")
    expect(heads.nth(1)).to_contain_text("mirror")  # the conditions' own order
    expect(heads.nth(2)).to_contain_text("grayscale")
    expect(heads.nth(1).locator("small.truth")).to_have_text("truth unknown mirrored: the item says 'left'")
    expect(heads.nth(2).locator("small.truth")).to_have_text("truth unknown in grayscale: the item says 'red'")
    chance = page.locator("#probe-grid tbody tr", has_text="baseline/chance").locator("td")
    expect(chance.nth(0)).to_have_class(re.compile(r"cell (right|wrong)"))
    for column in (1, 2):
        expect(chance.nth(column)).to_have_class("cell ungraded")
        expect(chance.nth(column).locator("small.why")).to_contain_text("truth unknown")
    # The mirrored thumbnail is the upload turned left to right.
    sources = [heads.nth(i).locator("img").get_attribute("src") for i in (0, 1)]
    upright, mirrored = decoded(sources[0]), decoded(sources[1])
    assert np.abs(upright - mirrored[:, ::-1]).mean() < 2
    screenshot(page, tmp_path, "probe-upload-mirrored")


def test_no_image_shows_that_no_picture_was_sent(serve, page):
    page.goto(serve())
    tick(page, "no image")
    page.click("#probe-ask")
    # The pixels baseline reads the picture: with none sent it cannot answer, and the status says so.
    expect(page.locator("#probe-status")).to_contain_text("3 of 4 answered · 1 cannot be answered by its model")
    heads = page.locator("#probe-grid thead th.condition")
    expect(heads.nth(1).locator(".sent-picture.none")).to_have_text("no picture")
    expect(heads.nth(0).locator("img.sent-picture")).to_have_count(1)

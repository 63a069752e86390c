"""The phone (390x844) as a first-class screen: every tab one tap away (no "•••" menu), the
Probe tab's Examples wrapped to the width with whole captions, and the Human tab's picture and
answer buttons on screen together while the clock runs (at a desktop size too)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.ui.conftest import WAIT_MS, screenshot
from tests.ui.navigation import DESKTOP, PHONE
from tests.ui.test_human_tab import answer
from ui import examples

TABS = ["Probe", "Stimulus lab", "Evaluate", "Scoreboard", "Look-alikes", "Human", "Class", "About"]
IN_VIEW = """(el) => { const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth + 0.5 && r.bottom <= innerHeight + 0.5; }"""


def test_every_tab_is_one_tap_away_on_a_phone(serve, browser, tmp_path):
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        page.goto(serve())
        expect(page.locator("#probe-item-text")).to_contain_text("Are the two circles")
        screenshot(page, tmp_path, "phone-tabs")
        expect(page.locator('button[aria-label="More tabs"]:visible')).to_have_count(0)
        for name in TABS:
            page.evaluate("window.scrollTo(0, 0)")
            tab = page.get_by_role("tab", name=name, exact=True)
            expect(tab).to_be_visible()
            assert tab.evaluate(IN_VIEW), f"{name}: the tab is not on screen"
            tab.tap()  # one tap, nothing opened first
            expect(tab).to_have_attribute("aria-selected", "true")
        # The Human tab's own two sections, both on screen.
        page.evaluate("window.scrollTo(0, 0)")
        page.get_by_role("tab", name="Human", exact=True).tap()
        for name in ("Judge texture words", "Take a benchmark"):
            section = page.get_by_role("tab", name=name, exact=True)
            expect(section).to_be_visible()
            assert section.evaluate(IN_VIEW), name
            section.tap()
            expect(section).to_have_attribute("aria-selected", "true")
        # The Scoreboard's views and the Class tab's two sides, each one tap away too.
        for main, inner in (("Scoreboard", "#score-views"), ("Class", "#class-tabs")):
            page.evaluate("window.scrollTo(0, 0)")
            page.get_by_role("tab", name=main, exact=True).tap()
            views = page.locator(f"{inner} [role=tab]")
            expect(views.first).to_be_visible()
            expect(page.locator(f'{inner} button[aria-label="More tabs"]:visible')).to_have_count(0)
            assert views.count() >= 2, inner
            for index in range(views.count()):
                view = views.nth(index)
                view.scroll_into_view_if_needed()
                assert view.evaluate(IN_VIEW), f"{inner}: {view.inner_text()} is not on screen"
                view.tap()
                expect(view).to_have_attribute("aria-selected", "true")
        screenshot(page, tmp_path, "phone-inner-tabs")
    finally:
        context.close()


def test_the_examples_wrap_to_a_phone_s_width_with_whole_captions(serve, browser, tmp_path):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        page.goto(serve())
        gallery = page.locator("#probe-examples")
        expect(gallery.locator("img")).to_have_count(len(examples.EXAMPLES))
        gallery.scroll_into_view_if_needed()
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        for k in range(len(examples.EXAMPLES)):
            thumb = gallery.locator(".thumbnail-item").nth(k)
            thumb.scroll_into_view_if_needed()
            box = thumb.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (k, box)
            # Its caption whole: nothing cut off sideways or below, nothing hidden by the gallery.
            caption = thumb.locator(".caption-label")
            expect(caption).to_have_text(examples.EXAMPLES[k].title)
            fits = caption.evaluate(
                "(c) => c.scrollWidth <= c.clientWidth + 1 && c.scrollHeight <= c.clientHeight + 1 && "
                "getComputedStyle(c).textOverflow !== 'ellipsis'"
            )
            assert fits, examples.EXAMPLES[k].title
            assert caption.evaluate(IN_VIEW) or caption.evaluate(
                "(c) => { c.scrollIntoView({block: 'center'}); return true; }"
            )
            assert caption.evaluate(IN_VIEW), examples.EXAMPLES[k].title
        columns = {round(gallery.locator(".thumbnail-item").nth(k).bounding_box()["x"]) for k in range(3)}
        assert len(columns) >= 2  # side by side, not one long column
        screenshot(page, tmp_path, "phone-examples")
    finally:
        context.close()


@pytest.mark.parametrize(
    "viewport", [PHONE, {"width": 1400, "height": 900}, DESKTOP], ids=["phone", "1400x900", "desktop"]
)
def test_the_human_tab_shows_the_picture_and_the_answer_buttons_together(serve, browser, tmp_path, viewport):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        page.goto(serve())
        page.get_by_role("tab", name="Human", exact=True).click()
        page.locator("#human-name textarea, #human-name input").first.fill("Ada")
        page.click("#human-start")
        for number in (1, 2):
            expect(page.locator("#human-progress")).to_contain_text(f"Item {number} of 10")
            page.wait_for_function(
                "parseFloat(document.querySelector('#human-clock .human-seconds').textContent) >= 0.5"
            )
            picture = page.locator("#human-images img").first
            expect(picture).to_be_visible()
            page.wait_for_function(f"() => ({IN_VIEW})(document.querySelector('#human-images img')) && "
                                   f"({IN_VIEW})(document.querySelector('#human-choice'))")  # fmt: skip
            for option in ("Yes", "No"):
                assert page.locator("#human-choice").get_by_label(option, exact=True).evaluate(IN_VIEW), option
            assert page.locator("#human-clock .human-bar").evaluate(IN_VIEW)
            assert picture.bounding_box()["height"] >= 150
            screenshot(page, tmp_path, f"human-together-{viewport['width']}-{number}")
            answer(page, "Yes")  # clicked again only if the click was lost (a loaded machine)
    finally:
        context.close()


def test_a_chart_s_toolbar_never_covers_its_title_on_a_phone(serve, browser, tmp_path):
    context = browser.new_context(viewport=PHONE, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        page.goto(serve())
        # Someone on the board: a person takes two items (people are shown beside the models).
        page.get_by_role("tab", name="Human", exact=True).click()
        page.locator("#human-count input").fill("2")
        page.locator("#human-name textarea, #human-name input").first.fill("Ada")
        page.click("#human-start")
        for number in (1, 2):
            expect(page.locator("#human-progress")).to_contain_text(f"Item {number} of 2")
            answer(page, "Yes")
        expect(page.locator("#human-progress")).to_contain_text("Finished")
        page.evaluate("window.scrollTo(0, 0)")
        page.get_by_role("tab", name="Scoreboard", exact=True).click()
        title = page.locator("#score-bars .gtitle")
        expect(title).to_be_visible()
        chart = page.locator("#score-bars .js-plotly-plot")
        chart.scroll_into_view_if_needed()
        chart.hover()  # the toolbar shows on hover (a tap on a phone)
        toolbar = page.locator("#score-bars .modebar")
        expect(toolbar).to_be_visible()
        page.wait_for_function("getComputedStyle(document.querySelector('#score-bars .modebar')).opacity === '1'")
        bar, text = toolbar.bounding_box(), title.bounding_box()
        apart = bar["y"] + bar["height"] <= text["y"] or text["y"] + text["height"] <= bar["y"] or \
            bar["x"] >= text["x"] + text["width"] or text["x"] >= bar["x"] + bar["width"]  # fmt: skip
        screenshot(page, tmp_path, "phone-chart-toolbar")
        assert apart, (bar, text)
    finally:
        context.close()

"""The Human tab never drops a key without a word: one pressed while the last answer is on its
way (the 0.4-1 s between two items) answers the next item as soon as it shows, and the page says
so; one that is no answer to the next item is said to be not taken."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.ui.conftest import screenshot
from tests.ui.navigation import open_tab


def _start(page, name: str) -> None:
    open_tab(page, "Human")
    page.locator("#human-name textarea, #human-name input").first.fill(name)
    page.click("#human-start")
    expect(page.locator("#human-progress")).to_contain_text("Item 1 of 10")
    expect(page.locator("#human-choice").get_by_label("Yes", exact=True)).to_be_visible()


def test_a_key_pressed_between_items_answers_the_next_item(serve, page, tmp_path):
    page.goto(serve())
    _start(page, "Ada")
    page.locator("body").click(position={"x": 5, "y": 5})
    # Y answers item 1; N follows at once, while Y is on its way and item 2 not yet shown.
    page.keyboard.press("y")
    page.keyboard.press("n")
    expect(page.locator("#human-pending")).to_contain_text("answered item 2")
    expect(page.locator("#human-progress")).to_contain_text("Item 3 of 10")
    screenshot(page, tmp_path, "human-between-items")
    page.click("#human-finish")
    expect(page.locator("#human-progress")).to_contain_text("Finished · 2 of 10 items answered")
    answers = page.locator("#human-table tbody tr td:nth-child(3)")
    assert [a.inner_text() for a in answers.all()] == ["Yes", "No"]


def test_a_key_that_is_no_answer_to_the_next_item_is_said_to_be_not_taken(serve, page, tmp_path):
    page.goto(serve())
    _start(page, "Bea")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("y")
    page.keyboard.press("q")  # not an answer to a yes/no item
    expect(page.locator("#human-progress")).to_contain_text("Item 2 of 10")
    expect(page.locator("#human-pending")).to_contain_text("not taken")
    screenshot(page, tmp_path, "human-between-items-not-taken")
    # Item 2 still waits for its answer, and takes the next key as usual.
    expect(page.locator("#human-progress")).to_contain_text("Item 2 of 10")
    page.keyboard.press("n")
    expect(page.locator("#human-progress")).to_contain_text("Item 3 of 10")


def test_a_number_typed_between_items_answers_the_next_item(serve, page, tmp_path):
    page.goto(serve())
    open_tab(page, "Human")
    page.locator("#human-benchmark input").click()
    page.get_by_role("option", name="blind/olympic-circles", exact=True).click()
    page.locator("#human-name textarea, #human-name input").first.fill("Cy")
    page.click("#human-start")
    expect(page.locator("#human-progress")).to_contain_text("Item 1 of 10")
    box = page.locator("#human-answer textarea, #human-answer input").first
    expect(box).to_be_focused()
    # Two answers typed straight after each other: the second while the first is on its way.
    page.keyboard.type("7")
    page.keyboard.press("Enter")
    page.keyboard.type("8")
    page.keyboard.press("Enter")
    expect(page.locator("#human-progress")).to_contain_text("Item 3 of 10")
    page.click("#human-finish")
    expect(page.locator("#human-progress")).to_contain_text("Finished · 2 of 10 items answered")
    answers = page.locator("#human-table tbody tr td:nth-child(3)")
    assert [a.inner_text() for a in answers.all()] == ["7", "8"]

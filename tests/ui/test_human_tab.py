"""The Human tab in a real browser: a person takes items blind and timed and is scored like a model;
judges mark a model's texture words natural or not and see the judgement score (Eq. 1)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from probes.analysis.scoring import aggregate
from probes.baselines.chance import ChanceBaseline
from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.running.runner import RunPlan, run
from probes.running.store import Store
from tests.ui.conftest import WAIT_MS, screenshot

TASK = "blind/touching-circles"


def stored_rows(tmp_path, **which: str) -> list:
    """The report's rows from the store the app wrote (serve puts it under tmp_path/home)."""
    with Store(tmp_path / "home" / "results.sqlite") as store:
        return aggregate(store.results(**which))


def open_human_tab(page, url: str) -> None:
    from tests.ui.navigation import open_tab

    page.goto(url)
    open_tab(page, "Human")  # on a phone, through the overflow menu


def start(page, name: str, count: int) -> None:
    page.locator("#human-name textarea, #human-name input").first.fill(name)
    page.locator("#human-count input").fill(str(count))
    page.click("#human-start")


# The option clicked holds, or the answer was taken (the progress moved on).
_TAKEN = """([value, before]) => {
  const radio = document.querySelector(`#human-choice input[type=radio][value="${value}"]`);
  return (radio !== null && radio.checked) || (document.querySelector("#human-progress")?.textContent ?? "") !== before;
}"""


def answer(page, text: str) -> None:
    """Choosing an option is the answer: it is sent at once, no Submit button. On a loaded machine
    a click that lands while the page re-draws the last answer's outputs can be lost (the option
    never checked, nothing sent: a full run beside a CPU hog met it once); it is clicked again only
    then, so an answer taken is never sent twice. Each wait is on the state itself."""
    choice = page.locator("#human-choice").get_by_label(text, exact=True)
    before = page.locator("#human-progress").inner_text()
    for _ in range(3):
        choice.click()
        try:
            page.wait_for_function(_TAKEN, arg=[text, before], timeout=WAIT_MS // 4)
            return
        except PlaywrightTimeout:
            continue
    page.wait_for_function(_TAKEN, arg=[text, before])


def test_a_person_takes_two_items_blind_and_appears_beside_the_models(serve, page, tmp_path):
    items = select_items(get_benchmark(TASK).items(), 2, 0)  # what the tab draws with seed 0
    right = items[0].target_text()
    wrong = "No" if items[1].target_text() == "Yes" else "Yes"
    open_human_tab(page, serve())
    start(page, "Ada", 2)
    expect(page.locator("#human-progress")).to_contain_text("Item 1 of 2")
    expect(page.locator("#human-progress")).to_contain_text("human/Ada")
    expect(page.locator("#human-question")).to_contain_text(items[0].question)
    expect(page.locator("#human-images img").first).to_be_visible()
    expect(page.locator("#human-answer")).to_be_hidden()  # yes/no: a choice, not a text box
    expect(page.locator("#human-submit")).to_be_hidden()  # ...sent as it is chosen
    answer(page, right)
    expect(page.locator("#human-progress")).to_contain_text("Item 2 of 2")
    expect(page.locator("#human-question")).to_contain_text(items[1].question)
    expect(page.locator("#human-table")).to_be_hidden()  # nothing tells the person how they did
    assert "right" not in page.locator("#human-status").inner_text()
    screenshot(page, tmp_path, "human")
    answer(page, wrong)
    expect(page.locator("#human-summary")).to_contain_text("50%")
    expect(page.locator("#human-summary")).to_contain_text("1 of 2 right")
    table = page.locator("#human-table")
    expect(table).to_contain_text("✓ right")
    expect(table).to_contain_text("✗ wrong")
    expect(table.locator("img")).to_have_count(2)  # each item as a thumbnail, its id kept on it
    expect(table.locator("img").nth(1)).to_have_attribute("title", items[1].id)
    expect(page.locator("#human-finish")).to_be_hidden()
    screenshot(page, tmp_path, "human-end")

    [row] = stored_rows(tmp_path, model="human/Ada")  # saved as answered, as `report` reads them
    assert (row.benchmark, row.mode, row.n, row.correct, row.accuracy) == (TASK, "0-shot", 2, 1, 50.0)
    assert row.mean_latency > 0  # timed on the server, from showing the item to the answer

    page.get_by_role("tab", name="Judge texture words", exact=True).click()
    expect(page.locator("#human-judge-available")).to_contain_text("No texture-generation results")

    page.get_by_role("tab", name="Scoreboard", exact=True).click()  # people beside models
    line = page.locator("#score-table").get_by_role("row").filter(has_text="human/Ada").first
    expect(line).to_contain_text("50.0")


def test_a_bad_name_is_refused_and_two_people_do_not_share_a_session(serve, browser):
    url = serve()
    first, second = browser.new_context(), browser.new_context()
    try:
        one, two = first.new_page(), second.new_page()
        for page, name in ((one, "A|da"), (two, "Bo")):
            open_human_tab(page, url)
            start(page, name, 3)
        expect(one.locator("#human-status")).to_contain_text("letters, digits, spaces")
        expect(one.locator("#human-progress")).not_to_contain_text("Item")
        start(one, "Ada", 3)
        expect(one.locator("#human-progress")).to_contain_text("Item 1 of 3")
        expect(two.locator("#human-progress")).to_contain_text(
            "Item 1 of 3 · blind/touching-circles · answering as human/Bo"
        )
        answer(one, "Yes")
        expect(one.locator("#human-progress")).to_contain_text("Item 2 of 3")
        answer(two, "No")
        expect(two.locator("#human-progress")).to_contain_text(
            "Item 2 of 3 · blind/touching-circles · answering as human/Bo"
        )
        one.click("#human-finish")
        expect(one.locator("#human-summary")).to_contain_text("1 item answered")
        expect(two.locator("#human-choice")).to_be_visible()  # Bo goes on
        expect(two.locator("#human-progress")).to_contain_text("Item 2 of 3")
    finally:
        first.close()
        second.close()


def test_judging_two_of_three_words_natural_gives_a_judgement_score_of_66_67(serve, page, tmp_path):
    with Store(tmp_path / "home" / "results.sqlite") as store:  # the store the app will open
        benchmark = get_benchmark("shitsukan/generation")  # the bundled sample folder, offline
        plan = RunPlan(benchmark, benchmark.items()[:2], [ChanceBaseline()])
        # In a thread of its own: playwright's sync API already runs an event loop in this one.
        with ThreadPoolExecutor(1) as pool:
            results = pool.submit(asyncio.run, run(plan, store)).result()
    words = results[0].parsed
    open_human_tab(page, serve())
    page.get_by_role("tab", name="Judge texture words", exact=True).click()
    expect(page.locator("#human-judge-model input")).to_have_value("baseline/chance · 0-shot · 2 items")
    page.locator("#human-judge-name textarea, #human-judge-name input").first.fill("Ada")
    page.click("#human-judge-start")
    expect(page.locator("#human-judge-progress")).to_contain_text("Item 1 of 2")
    for i, word in enumerate(words):
        expect(page.locator(f"#human-judge-word-{i} textarea, #human-judge-word-{i} input").first).to_have_value(word)
    expect(page.locator("#human-judge-image img")).to_be_visible()
    for i, verdict in enumerate(["natural", "not natural", "natural"]):
        page.locator(f"#human-judge-verdict-{i}").get_by_label(verdict, exact=True).check()
    page.click("#human-judge-submit")
    expect(page.locator("#human-judge-score")).to_contain_text("66.67")
    expect(page.locator("#human-judge-score")).to_contain_text("1 judgement(s) of 1 item(s) by 1 judge(s)")
    expect(page.locator("#human-judge-progress")).to_contain_text("Item 2 of 2")
    screenshot(page, tmp_path, "human-judge")

    [row] = stored_rows(tmp_path, benchmark="shitsukan/judgement")
    assert (row.model, row.n, row.accuracy) == ("baseline/chance", 1, 66.67)

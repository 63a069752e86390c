"""The Probe stage as a presenter uses it, in a real browser at 1400x900, 1920x1080 and 390x844:
after Ask the picture, the question and every answer cell are on screen together (the picture
shrinks, never crops); a shared link opens with both in view; another item (an Example, a
benchmark item, the Stimulus lab's "Ask models about this") clears the last item's answers at
once, and the page address always names what is on stage."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import WAIT_MS, screenshot
from tests.ui.navigation import open_tab
from tests.ui.test_probe_tab import VISIBLE_SHARE, choose_model, choose_source, tick
from ui import examples
from ui.probe.share import decode

SCREENS = {
    "1400x900": {"width": 1400, "height": 900},
    "1920x1080": {"width": 1920, "height": 1080},
    "phone": {"width": 390, "height": 844},
}
# The share of the stage picture that is drawn inside the window, measured where the page is
# (no scrolling): the same measure as the first-visit test's, minus its scrollIntoView.
SHARE_HERE = VISIBLE_SHARE.replace("img.scrollIntoView({block: 'center'});", "")
# Everything a presenter needs at once: the picture whole, the question, and every answer cell,
# each inside the window; the picture at least 150 px tall (shrunk, still worth looking at).
ONE_VIEW = """() => {
  const inside = (el) => { const r = el.getBoundingClientRect();
    return r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight + 0.5 && r.right <= innerWidth + 0.5; };
  const img = document.querySelector('#probe-image-0 img');
  const question = document.querySelector('#probe-item-text');
  const cells = [...document.querySelectorAll('#probe-grid td.cell')];
  const share = (SHARE)(img);
  return {share, tall: img.getBoundingClientRect().height, question: inside(question),
          cells: cells.length, outside: cells.filter((c) => !inside(c)).length};
}""".replace("(SHARE)", f"({SHARE_HERE})")


def _one_view(page) -> dict:
    try:  # the picture is sized a moment after the grid is drawn: wait for it, then measure
        page.wait_for_function(
            f"() => {{ const v = ({ONE_VIEW})(); return v.share >= 0.98 && v.question && v.cells && !v.outside; }}"
        )
    except PlaywrightTimeout:
        pass  # measured below; the assertion says what fell short
    return page.evaluate(ONE_VIEW)


def _address(page) -> dict:
    """What the page address names: the item, and the models of a probe (none: an item alone)."""
    values = parse_qs(urlparse(page.url).query).get("probe")
    assert values, f"the address names nothing: {page.url}"
    shared = decode(values[0])
    return {"spec": shared.spec, "models": shared.models}


@pytest.mark.parametrize("screen", list(SCREENS))
def test_after_ask_the_picture_the_question_and_every_answer_are_in_view(serve, browser, tmp_path, screen):
    context = browser.new_context(viewport=SCREENS[screen])
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        with FakeOpenAIServer(responder=lambda body: "They do not touch.\nAnswer: No") as server:
            page.goto(serve(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-server-test"))
            expect(page.locator("#probe-item-text")).to_contain_text("Are the two circles touching")
            models = 2
            if screen != "phone":  # a presenter's full table: four models x three conditions
                choose_model(page, 2, "openai/gpt-one")
                choose_model(page, 3, "openai/gpt-two")
                for condition in ("upside down", "grayscale"):
                    tick(page, condition)
                models = 4
            conditions = 3 if screen != "phone" else 1
            page.click("#probe-ask")
            expect(page.locator("#probe-status")).to_contain_text(
                f"{models * conditions} of {models * conditions} answered"
            )
            view = _one_view(page)
            screenshot(page, tmp_path, f"one-view-{screen}")
            page.screenshot(path=str(tmp_path / f"one-view-{screen}-window.png"))  # what the window shows
            assert view["cells"] == models * conditions
            assert view["share"] >= 0.98 and view["question"] and view["outside"] == 0, view
            assert view["tall"] >= 150, view
            if screen == "phone":  # the grid follows the picture
                picture = page.locator("#probe-image-0").bounding_box()
                grid = page.locator("#probe-grid table").bounding_box()
                assert grid["y"] >= picture["y"] + picture["height"]

            # The address replays the probe: a fresh browser opens it with picture and answers in view.
            address = page.url
            assert _address(page)["models"]
            fresh = browser.new_context(viewport=SCREENS[screen])
            try:
                other = fresh.new_page()
                other.set_default_timeout(WAIT_MS)
                other.goto(address)
                expect(other.locator("#probe-status")).to_contain_text("Replayed")
                expect(other.locator("#probe-grid td.cell")).to_have_count(models * conditions)
                expect(other.locator("#probe-png")).to_be_visible()  # a replayed grid exports too
                shared = _one_view(other)
                other.screenshot(path=str(tmp_path / f"one-view-{screen}-shared-window.png"))
                assert shared["share"] >= 0.98 and shared["outside"] == 0 and shared["question"], shared
            finally:
                fresh.close()
    finally:
        context.close()


def _no_answers_left(page) -> None:
    """Nothing of the last probe anywhere on the page: no cell, no right answer as asked, no
    prompt, no share link, no download, no 'answered' status."""
    expect(page.locator("#probe-grid td, #probe-grid table")).to_have_count(0)
    expect(page.locator("#probe-prompts details")).to_have_count(0)
    expect(page.locator("#probe-link")).to_be_hidden()
    expect(page.locator("#probe-png")).to_be_hidden()
    expect(page.locator("#probe-csv")).to_be_hidden()
    body = page.locator("body")
    expect(body).not_to_contain_text("Right answer as asked")
    expect(body).not_to_contain_text("answered")
    expect(body).not_to_contain_text("Replayed")


def _ask(page) -> None:
    page.click("#probe-ask")
    expect(page.locator("#probe-status")).to_contain_text("2 of 2 answered")
    expect(page.locator("#probe-grid td.cell")).to_have_count(2)
    expect(page.locator("#probe-link")).to_be_visible()
    assert _address(page)["models"] == ["baseline/chance", "baseline/pixels"]


@pytest.mark.parametrize("screen", ["1400x900", "phone"])
def test_another_example_clears_the_last_answers_and_the_address_names_it(serve, browser, tmp_path, screen):
    context = browser.new_context(viewport=SCREENS[screen])
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        page.goto(serve())
        expect(page.locator("#probe-item-text")).to_contain_text("Are the two circles touching")
        _ask(page)
        chosen = next(i for i, e in enumerate(examples.EXAMPLES) if e.title.startswith("Mueller-Lyer"))
        page.locator("#probe-examples img").nth(chosen).click()
        _no_answers_left(page)  # at once: before the new item is even drawn
        expect(page.locator("#probe-item-text")).to_contain_text("longer")
        _no_answers_left(page)
        page.wait_for_function("() => new URL(location.href).searchParams.has('probe')")
        named = _address(page)
        assert named["spec"] == examples.spec_of(examples.EXAMPLES[chosen]) and named["models"] == []
        screenshot(page, tmp_path, f"another-example-{screen}")
        # A reload brings the item on stage, not the one asked before, and no answers.
        page.reload()
        expect(page.locator("#probe-item-text")).to_contain_text("longer")
        _no_answers_left(page)
    finally:
        context.close()


def test_a_benchmark_item_and_the_lab_s_stimulus_clear_the_last_answers_too(serve, page, tmp_path):
    page.set_viewport_size(SCREENS["1400x900"])
    page.goto(serve())
    expect(page.locator("#probe-item-text")).to_contain_text("Are the two circles touching")
    _ask(page)
    # A benchmark item: Load.
    choose_source(page, "Benchmark item")
    page.locator("#probe-index input").fill("3")
    page.click("#probe-load")
    _no_answers_left(page)
    page.wait_for_function("() => new URL(location.href).searchParams.has('probe')")
    named = _address(page)
    assert (named["spec"].source, named["spec"].index, named["models"]) == ("benchmark", 3, [])
    _ask(page)
    # The Stimulus lab's "Ask models about this": the Probe tab opens with the lab's stimulus alone.
    asked = page.url
    open_tab(page, "Stimulus lab")
    page.click("#stim-ask")
    expect(page.get_by_role("tab", name="Probe", exact=True)).to_have_attribute("aria-selected", "true")
    _no_answers_left(page)
    page.wait_for_function(
        "(asked) => location.href !== asked && new URL(location.href).searchParams.has('probe')", arg=asked
    )
    named = _address(page)
    assert named["spec"].source == "generated" and named["models"] == []
    screenshot(page, tmp_path, "lab-to-probe")


def test_an_item_alone_has_an_address_and_models_without_conditions_do_not():
    from probes.core.errors import UsageError
    from ui.probe.share import encode

    spec = examples.spec_of(examples.FIRST)
    alone = decode(encode(spec, [], []))
    assert (alone.spec, alone.models, alone.conditions) == (spec, [], [])
    with pytest.raises(UsageError):  # both or neither: a link naming models but no condition is broken
        decode(encode(spec, ["baseline/chance"], []))
    with pytest.raises(UsageError):
        decode(encode(spec, [], ["as asked"]))


# Latches whether the PNG button was ever drawn visible from now on.
WATCH_PNG = """() => {
  window.__pngShown = false;
  const check = () => { const b = document.querySelector('#probe-png');
    if (b && b.offsetParent !== null) { window.__pngShown = true; } };
  new MutationObserver(check).observe(document.body, {subtree: true, childList: true, attributes: true});
  check();
}"""


def test_downloads_made_while_another_item_comes_on_stage_do_not_stay(serve, page, monkeypatch):
    """The grid's downloads of the last item, still being made when another item comes on stage
    (a presenter moving on at once, or a busy machine: a full run beside a CPU hog met it), are
    taken away again once they arrive: never left beside the new item."""
    import threading

    from ui.probe import export

    release, made = threading.Event(), threading.Event()
    real = export.write

    def held_write(probed):
        release.wait(WAIT_MS / 1000)  # made only once the next item is on stage
        try:
            return real(probed)
        finally:
            made.set()

    monkeypatch.setattr(export, "write", held_write)
    page.set_viewport_size(SCREENS["1400x900"])
    page.goto(serve())
    expect(page.locator("#probe-item-text")).to_contain_text("Are the two circles touching")
    _ask(page)
    chosen = next(i for i, e in enumerate(examples.EXAMPLES) if e.title.startswith("Mueller-Lyer"))
    page.locator("#probe-examples img").nth(chosen).click()
    expect(page.locator("#probe-item-text")).to_contain_text("longer")
    _no_answers_left(page)
    page.wait_for_function("() => new URL(location.href).searchParams.has('probe')")  # the new item's chain ran
    page.evaluate(WATCH_PNG)
    release.set()
    assert made.wait(WAIT_MS / 1000), "the held export never ran"
    page.wait_for_function("() => window.__pngShown")  # the last item's downloads did arrive ...
    expect(page.locator("#probe-png")).to_be_hidden()  # ... and were taken away
    _no_answers_left(page)

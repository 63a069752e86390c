"""An illusion from the Stimulus lab to the Scoreboard's curves, as a teacher would show it, in a
real browser on the app itself: a Mueller-Lyer figure made in the lab is asked on the Probe stage
("Ask models about this"), the geometry-only observer is run over a sweep on the Evaluate tab, a
person answers items on the Human tab, and the Scoreboard draws the fitted curves with the people
(the class's earlier answers and this person's, pooled) beside the model."""

from __future__ import annotations

import random
from dataclasses import replace

from playwright.sync_api import expect

from probes.analysis.psychometric import magnitude_rows
from probes.core.types import Origin
from probes.people.human import answer_result
from probes.running.store import Store
from tests.ui.conftest import WAIT_MS, screenshot
from tests.ui.test_evaluate_tab import add_model, fill
from tests.ui.test_scoreboard_store import DIFFERENCES, ILLUSION, PEOPLE_SHIFT, choosing, illusion, seen_longer
from tests.ui.test_scoreboard_tab import FIRST_LOAD, choose, open_tab
from tests.ui.test_stimuli_live import choose as choose_in_lab
from tests.ui.test_stimuli_live import open_lab, type_and_enter

CLASS = ("Ada", "Bo")  # people who took the sweep before: a class's answers already in the store
PERSON = "Dee"  # who answers in the browser
ANSWERED = 6


def seat_the_class(path) -> None:
    """The class's answers, stored as the Human tab stores them (fooled as people are)."""
    benchmark, rng = illusion(), random.Random(0)
    person = choosing(seen_longer(PEOPLE_SHIFT), rng)
    with Store(path) as store:
        store.record_many(
            [
                (answer_result(benchmark, item, person(item, item), name, 2.0), None, "")
                for name in CLASS
                for item in benchmark.items()
            ]  # fmt: skip
        )


def people_results(path) -> list:
    with Store(path) as store:
        results = store.results(benchmark=ILLUSION)
    return [r for r in results if r.origin is not Origin.PROBE]


def test_an_illusion_from_the_lab_to_the_probe_stage_to_a_fitted_curve_with_people_beside(serve, page, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    seat_the_class(home / "results.sqlite")
    url = serve()

    # The lab: a Mueller-Lyer figure whose top line is longer, handed to the Probe stage.
    open_lab(page, url)
    choose_in_lab(page, "stim-task", ILLUSION)
    type_and_enter(page, "stim-param-difference", "0.3")
    expect(page.locator("#stim-answer")).to_contain_text("Top")
    page.click("#stim-ask")
    expect(page.get_by_role("tab", name="Probe", exact=True)).to_have_attribute("aria-selected", "true")
    expect(page.locator("#probe-item-text")).to_contain_text("Which red line is longer")
    page.get_by_role("button", name="Right answer").click()
    expect(page.locator("#probe-item-answer")).to_contain_text("Top")
    expect(page.locator("#probe-image-0 img")).to_be_visible()

    # Asked of the geometry-only observer (measures the lines: not fooled) beside chance.
    expect(page.locator("#probe-model-1 input")).to_have_value("baseline/pixels")
    page.click("#probe-ask")
    grid = page.locator("#probe-grid")
    expect(grid).to_contain_text("baseline/pixels", timeout=WAIT_MS)
    expect(grid).to_contain_text("Top")
    screenshot(page, tmp_path, "journey-probe")

    # The same observer over a sweep of differences (the class's items), on the Evaluate tab.
    open_tab(page, "Evaluate")
    choose(page, "eval-benchmarks", ILLUSION)
    page.locator("#eval-benchmarks .token").filter(has_text="blind/touching-circles").locator(".token-remove").click()
    fill(page, "eval-limit", "0")  # every item of the sweep
    fill(page, "eval-params", f"difference={','.join(DIFFERENCES)} illusion_strength=30 canvas=384 seed=0,1")
    add_model(page, "baseline/pixels")
    page.locator("#eval-models .token").filter(has_text="baseline/chance").locator(".token-remove").click()
    page.click("#eval-start")
    expect(page.locator("#eval-status")).to_contain_text("Finished", timeout=WAIT_MS)
    expect(page.locator("#eval-status")).to_contain_text("baseline/pixels 96/96")

    # A person takes items of the same family, blind.
    open_tab(page, "Human")
    page.locator("#human-name textarea, #human-name input").first.fill(PERSON)
    choose(page, "human-benchmark", ILLUSION)
    page.locator("#human-count input").fill(str(ANSWERED))
    page.click("#human-start")
    for number in range(1, ANSWERED + 1):
        expect(page.locator("#human-progress")).to_contain_text(f"Item {number} of {ANSWERED}")
        page.locator("#human-choice label", has_text="Top").click()  # "a. Top" or "b. Top", in the order shown
    expect(page.locator("#human-summary")).to_contain_text(f"of {ANSWERED} right")

    # The Scoreboard: the observer's fitted curves, the people's beside them.
    open_tab(page, "Scoreboard")
    page.click("#score-refresh")
    choose(page, "score-benchmark", ILLUSION)
    open_tab(page, "Curves", "#score-views")
    plot = page.locator("#score-curves")
    expect(plot.locator(".js-plotly-plot")).to_be_visible(timeout=FIRST_LOAD)
    expect(page.locator("#score-param input")).to_have_value("difference")
    expect(page.locator("#score-fits")).to_contain_text("people")
    expect(page.locator("#score-fits")).to_contain_text("baseline/pixels")
    names = set(page.evaluate("() => document.querySelector('#score-curves .js-plotly-plot').data.map(t => t.name)"))
    assert "people" in names and "baseline/pixels · 0-shot" in names
    screenshot(page, tmp_path, "journey-curves")

    # The people's curve pools the class and the person who answered just now, as the analysis fits it.
    results = people_results(home / "results.sqlite")
    assert sum(r.model == f"human/{PERSON}" for r in results) == ANSWERED
    pooled = [replace(r, model="people") if r.model.startswith("human/") else r for r in results]
    people = next(m for m in magnitude_rows([r for r in pooled if r.perturbation == "none"], "difference")
                  if m.model == "people")  # fmt: skip
    header, *rows = page.evaluate(
        """() => [...document.querySelectorAll('#score-fits [role=row]')].map(row =>
             [...row.querySelectorAll('[role=columnheader], [role=gridcell]')].map(c => c.innerText.trim()))
             .filter(cells => cells.length)"""
    )
    fits = {r["inducers"]: r for r in (dict(zip(header, row, strict=False)) for row in rows) if r["model"] == "people"}
    assert fits["with inducers"]["PSE"] == f"{people.fits['+1'].pse:+.3f}"
    assert int(fits["with inducers"]["n"]) == people.fits["+1"].n
    # The geometry-only observer answers by the lines alone: a step at no difference, whatever the inducers.
    pixels = next(m for m in magnitude_rows(pooled, "difference") if m.model == "baseline/pixels")
    for fit in pixels.fits.values():
        assert all(p["proportion"] == (1.0 if p["x"] > 0 else 0.0) for p in fit.points if p["x"] != 0)

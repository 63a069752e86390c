"""The Scoreboard's views in a real browser (Chromium, 1400 px and 390 px wide, light and dark), on
the store of tests/ui/test_scoreboard_store.py: the leaderboard first, single probe clicks one
filter away, charts that read in dark mode, psychometric curves with people beside the models,
the compare panel, and a phone's stacked rows."""

from __future__ import annotations

import itertools
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from playwright.sync_api import expect

from probes.analysis.consistency import consistency
from probes.analysis.paired import Comparison, compare_many
from probes.analysis.polarity import polarity_rows
from probes.analysis.psychometric import magnitude_rows
from probes.analysis.scoring import aggregate
from probes.core.types import Origin
from probes.running.store import Store
from tests.ui.conftest import WAIT_MS, screenshot
from tests.ui.test_scoreboard_store import FIRST, FOOLED, ILLUSION, PROBED, STEADY, TOUCHING, fill
from tests.ui.test_scoreboard_tab import FIRST_LOAD, choose, open_scoreboard, open_tab


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "results.sqlite"
    fill(path)
    return path


@pytest.fixture
def url(serve, tmp_path, demo_store) -> str:
    """The app serving a copy of the demo store as its own."""
    home = tmp_path / "home"
    home.mkdir()
    for part in demo_store.parent.glob(demo_store.name + "*"):
        shutil.copy(part, home / part.name)
    return serve()


def shown_results(path: Path) -> list:
    """What the tab's own view counts: every result but single probe clicks."""
    with Store(path) as store:
        return [r for r in store.results() if r.origin is not Origin.PROBE]


def grid(page, elem_id: str) -> list[list[str]]:
    """A Gradio table's header and rows as text (the rows its scroll box has drawn)."""
    return page.evaluate(
        """(id) => [...document.querySelectorAll(`#${id} [role=row]`)].map(row =>
             [...row.querySelectorAll('[role=columnheader], [role=gridcell]')].map(c => c.innerText.trim()))
             .filter(cells => cells.length)""",
        elem_id,
    )


def records(page, elem_id: str) -> list[dict[str, str]]:
    header, *rows = grid(page, elem_id)
    return [dict(zip(header, row, strict=False)) for row in rows]


def luminance(colour: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", colour)[:3])
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


CHART_COLOURS = """(id) => {
  const plot = document.querySelector(`#${id} .js-plotly-plot`);
  const label = plot.querySelector('g[class$="tick"] > text');
  let element = plot, page = null;
  while (element && !page) {  // the first colour behind the transparent chart
    const colour = getComputedStyle(element).backgroundColor;
    if (colour && colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') page = colour;
    element = element.parentElement;
  }
  return {paper: plot._fullLayout.paper_bgcolor, plot: plot._fullLayout.plot_bgcolor,
          text: getComputedStyle(label).fill, behind: page || 'rgb(255, 255, 255)',
          dark: document.body.classList.contains('dark')};
}"""


def test_the_leaderboard_comes_first_and_probe_clicks_wait_behind_a_filter(page, url, tmp_path, demo_store):
    open_scoreboard(page, url)
    board = page.locator("#score-leaderboard")
    expect(board).to_contain_text(FOOLED, timeout=FIRST_LOAD)
    rows = records(page, "score-leaderboard")
    assert [r["model"] for r in rows[:2]] == ["chance", "people (3 persons)"]  # references pinned first
    assert {TOUCHING, ILLUSION} <= set(rows[0]) and "upload" not in rows[0]
    results = shown_results(demo_store)
    for row in aggregate([r for r in results if r.perturbation == "none" and not r.model.startswith("human/")]):
        cell = next(r for r in rows if (r["model"], r["mode"]) == (row.model, row.mode))
        # The report's own numbers, one rounding, with the Wilson interval and n.
        assert cell[row.benchmark] == f"{row.accuracy:.1f} [{row.ci_low:.1f}–{row.ci_high:.1f}] n={row.n}"
    assert any(r["source"].startswith("published") for r in rows)
    expect(page.locator("#score-origins")).to_contain_text("2 single probe clicks are left out")
    expect(board).not_to_contain_text(PROBED)
    screenshot(page, tmp_path, "scoreboard-leaderboard")

    # A click in a benchmark's column opens that benchmark below.
    pixels = board.get_by_role("row").filter(has=page.get_by_role("gridcell", name="baseline/pixels", exact=True))
    column = list(rows[0]).index(TOUCHING)  # the header order
    pixels.get_by_role("gridcell").nth(column).click()
    table = page.locator("#score-table")
    expect(page.locator("#score-status")).to_contain_text(TOUCHING)
    expect(table).to_contain_text("baseline/pixels")
    expect(table).not_to_contain_text(PROBED)  # the default view holds no probe-click rows

    page.locator("#score-probes input").check()
    expect(table).to_contain_text(PROBED)
    expect(board).to_contain_text(PROBED)
    expect(page.locator("#score-origins")).to_contain_text("single probes 2")
    page.locator("#score-probes input").uncheck()
    expect(table).not_to_contain_text(PROBED)


def test_charts_read_in_dark_mode_and_in_light_mode(browser, url, tmp_path):
    for scheme in ("dark", "light"):
        context = browser.new_context(viewport={"width": 1400, "height": 1400}, color_scheme=scheme)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        open_scoreboard(page, url)
        expect(page.locator("#score-bars .js-plotly-plot")).to_be_visible(timeout=FIRST_LOAD)
        charts = {"score-bars": page.evaluate(CHART_COLOURS, "score-bars")}
        open_tab(page, "Curves", "#score-views")
        expect(page.locator("#score-curves .js-plotly-plot")).to_be_visible(timeout=FIRST_LOAD)
        charts["score-curves"] = page.evaluate(CHART_COLOURS, "score-curves")
        for name, found in charts.items():
            assert found["dark"] is (scheme == "dark"), name
            assert found["paper"] == found["plot"] == "rgba(0, 0, 0, 0)", name  # the page shows through
            assert contrast(found["text"], found["behind"]) >= 4.5, (scheme, name, found)
            assert (luminance(found["behind"]) < 0.1) is (scheme == "dark"), (scheme, name, found)
        screenshot(page, tmp_path, f"scoreboard-curves-{scheme}")
        context.close()


def test_psychometric_curves_show_people_beside_the_models(page, url, tmp_path, demo_store):
    open_scoreboard(page, url)
    expect(page.locator("#score-status")).to_contain_text(ILLUSION, timeout=FIRST_LOAD)
    open_tab(page, "Curves", "#score-views")
    plot = page.locator("#score-curves")
    expect(plot.locator(".js-plotly-plot")).to_be_visible(timeout=FIRST_LOAD)
    for title in ("with inducers", "flipped inducers", "no inducers (control)"):
        expect(plot).to_contain_text(title)
    names = set(page.evaluate("() => document.querySelector('#score-curves .js-plotly-plot').data.map(t => t.name)"))
    assert "people" in names and f"{FOOLED} · 0-shot" in names
    expect(page.locator("#score-fits")).to_contain_text("people")

    # The people's curves as the analysis fits them (everyone pooled), to the table's rounding.
    results = [r for r in shown_results(demo_store) if r.benchmark == ILLUSION and r.perturbation == "none"]
    pooled = [replace(r, model="people") if r.model.startswith("human/") else r for r in results]
    people = next(m for m in magnitude_rows(pooled, "difference") if m.model == "people")
    fits = {r["inducers"]: r for r in records(page, "score-fits") if r["model"] == "people"}
    assert fits["with inducers"]["PSE"] == f"{people.fits['+1'].pse:+.3f}"
    assert fits["flipped inducers"]["PSE"] == f"{people.fits['-1'].pse:+.3f}"
    # Fooled as people are: the inducers move the PSE one way, flipped ones the other.
    assert (
        float(fits["with inducers"]["PSE"])
        > float(fits["no inducers (control)"]["PSE"])
        > float(fits["flipped inducers"]["PSE"])
    )
    magnitude = next(r for r in records(page, "score-magnitudes") if r["model"] == "people")
    assert magnitude["illusion magnitude"] == f"{people.magnitude:+.3f}" and people.magnitude > 0

    # Perceive or recall: what each choice tracked where the inducers oppose the truth, as the report computes it.
    expect(page.locator("#score-polarity .js-plotly-plot")).to_be_visible()
    tracked = {(r.model, r.mode): r for r in polarity_rows(pooled) if r.group == "overall"}
    shown = {(r["model"], r["mode"]): r for r in records(page, "score-polarity-table")}
    for key in (("people", "0-shot"), (FOOLED, "0-shot"), ("baseline/pixels", "0-shot")):
        row = tracked[key]
        assert shown[key]["tracks the inducers"] == (
            f"{row.inducers_share:.1f}% ({row.inducers_low:.1f} to {row.inducers_high:.1f})"
        )
        assert shown[key]["n"] == str(row.n)
    assert tracked[("baseline/pixels", "0-shot")].difference_share == 100.0
    assert tracked[(FOOLED, "0-shot")].inducers_share > tracked[(STEADY, "0-shot")].inducers_share
    screenshot(page, tmp_path, "scoreboard-curves")

    choose(page, "score-benchmark", TOUCHING)
    expect(page.locator("#score-param input")).to_have_value("gap")
    expect(page.locator("#score-curves-note")).to_contain_text("gap")
    expect(page.locator("#score-fits")).to_contain_text("baseline/pixels")


def test_the_compare_panel_pairs_two_models_and_shows_consistency(page, url, tmp_path, demo_store):
    open_scoreboard(page, url)
    expect(page.locator("#score-status")).to_contain_text(ILLUSION, timeout=FIRST_LOAD)
    open_tab(page, "Compare", "#score-views")
    expect(page.locator("#score-compare-table")).to_contain_text("shared items")
    choose(page, "score-a", FOOLED)
    table = page.locator("#score-compare-table")
    expect(table).to_contain_text(FOOLED)
    expect(table).to_contain_text(STEADY)  # B: the model sharing the most items with A

    results = [r for r in shown_results(demo_store) if r.benchmark == ILLUSION]
    (expected,) = compare_many(results, [Comparison(FOOLED, STEADY, "model")])
    (row,) = records(page, "score-compare-table")
    assert (row["A"], row["B"]) == (FOOLED, STEADY)
    assert (int(row["shared items"]), int(row["A only right"]), int(row["B only right"])) == (
        expected.n_shared, expected.a_only, expected.b_only,
    )  # fmt: skip
    assert row["A − B (points)"] == f"{expected.diff:+.1f}"
    assert row["95% CI"] == f"{expected.diff_low:+.1f} to {expected.diff_high:+.1f}"
    expect(page.locator("#score-compare-plot .js-plotly-plot")).to_be_visible()
    expect(page.locator("#score-compare-plot")).to_contain_text(f"{FOOLED} − {STEADY}")

    # Under both option orders: the model naming the first option is right once per item, never twice.
    rotation = {(r["model"], r["mode"]): r for r in records(page, "score-consistency")}
    expected_rows = {(c.model, c.mode): c for c in consistency(results)}
    first = rotation[(FIRST, "0-shot")]
    assert (first["accuracy"], first["consistency"], first["most over-chosen place"]) == ("50.0", "0.0", "a")
    steady = expected_rows[(STEADY, "0-shot")]
    assert rotation[(STEADY, "0-shot")]["consistency"] == f"{steady.consistency:.1f}"
    expect(page.locator("#score-position-bias .js-plotly-plot")).to_be_visible()
    screenshot(page, tmp_path, "scoreboard-compare")


def test_a_phone_sees_model_mode_accuracy_interval_and_n(browser, url, tmp_path, demo_store):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    open_scoreboard(page, url)
    expect(page.locator("#score-status")).to_contain_text(ILLUSION, timeout=FIRST_LOAD)
    phone = page.locator("#score-phone")
    expect(phone).to_be_visible()
    expect(page.locator("#score-table")).to_be_hidden()
    expected = {
        (r.model, r.mode, r.perturbation): r
        for r in aggregate([r for r in shown_results(demo_store) if r.benchmark == ILLUSION])
    }
    lines = phone.locator("li")
    expect(lines.filter(has_text=FOOLED)).to_have_count(2)
    for index in range(lines.count()):
        line = lines.nth(index)
        who = line.locator(".score-who").inner_text()
        detail = line.locator(".score-detail").inner_text().split(" · ")
        key = (who, detail[0], detail[1] if len(detail) > 1 else "none")
        if key in expected:
            row = expected[key]
            assert line.locator(".score-acc").inner_text() == f"{row.accuracy:.1f}%"
            assert line.locator(".score-ci").inner_text() == f"95% CI {row.ci_low:.1f}–{row.ci_high:.1f}"
            assert line.locator(".score-n").inner_text() == f"n {row.n}"
        assert line.bounding_box()["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
    screenshot(page, tmp_path, "scoreboard-phone")
    open_tab(page, "Curves", "#score-views")
    expect(page.locator("#score-curves .js-plotly-plot")).to_be_visible(timeout=FIRST_LOAD)
    screenshot(page, tmp_path, "scoreboard-phone-curves")
    context.close()


@pytest.mark.parametrize("modes", [["0-shot+CoT", "4-shot+CoT"], ["0-shot", "4-shot+CoT", "4-shot"]])
def test_mode_agreement_names_do_not_run_into_each_other_on_a_phone(browser, tmp_path, modes):
    """The Venn diagram's mode names (each with its count of items right) as a phone draws the
    figure, 390 px wide: no two overlap, and none leaves the screen."""
    from ui.scoreboard.charts import agreement_figure

    regions = {combo: 5 for size in range(len(modes) + 1) for combo in itertools.combinations(modes, size)}
    agreement = {"modes": modes, "regions": regions, "items": 40, "right": dict.fromkeys(modes, 100)}
    figure = agreement_figure(agreement, "provider/a-long-model-name: items right per mode")
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    drawn = figure.to_html(full_html=False, include_plotlyjs=True, default_width="100%", config={"responsive": True})
    phone = "<meta name='viewport' content='width=device-width, initial-scale=1'>"  # as the app's page says
    page.set_content(f"<head>{phone}</head><body style='margin:0 16px'>{drawn}</body>")  # a phone's card
    names = page.locator(".annotation-text", has_text="right)")
    expect(names).to_have_count(len(modes), timeout=WAIT_MS)
    boxes = [names.nth(index).bounding_box() for index in range(len(modes))]
    for one, other in itertools.combinations(boxes, 2):
        apart = (one["x"] + one["width"] <= other["x"] or other["x"] + other["width"] <= one["x"]
                 or one["y"] + one["height"] <= other["y"] or other["y"] + other["height"] <= one["y"])  # fmt: skip
        assert apart, (one, other)
    assert all(0 <= box["x"] and box["x"] + box["width"] <= 390 for box in boxes), boxes
    screenshot(page, tmp_path, "agreement-phone")
    context.close()

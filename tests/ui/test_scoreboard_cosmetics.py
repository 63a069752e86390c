"""What a presenter sees on the Scoreboard: hints rather than empty tables and charts, x labels
that do not print over each other, a leaderboard whose every column reads whole with its n and
interval, and the Human tab's "See everyone on the Scoreboard" opening the benchmark just taken."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from probes.analysis.scoring import Counts, Row
from tests.ui.conftest import reset_caches, screenshot
from tests.ui.test_human_tab import answer
from tests.ui.test_scoreboard_store import ILLUSION, TOUCHING, fill
from tests.ui.test_scoreboard_tab import FIRST_LOAD, choose, open_scoreboard, open_tab


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cosmetics") / "results.sqlite"
    fill(path)
    return path


@pytest.fixture
def url(serve, tmp_path, filled) -> str:
    home = tmp_path / "home"
    home.mkdir()
    for part in filled.parent.glob(filled.name + "*"):
        shutil.copy(part, home / part.name)
    return serve()


# --- without a browser ------------------------------------------------------------------------------


def test_compare_with_nothing_chosen_hides_its_table_and_chart(filled, monkeypatch):
    from ui.scoreboard.views import compare

    monkeypatch.setenv("PROBE_HOME", str(filled.parent))
    reset_caches()
    try:
        note, table, plot, rotation_note, rotation_table, bias = compare(TOUCHING, "models", None, [], [], None, None)
    finally:
        reset_caches()
    assert "Choose A and at least one B" in note
    assert "rotate-options-all" in rotation_note  # touching circles has no rotation results
    for hidden in (table, plot, rotation_table, bias):
        assert hidden == {"__type__": "update", "visible": False}


def _rows(values: list[str]) -> list[Row]:
    counts = Counts(results=10, scored=10, score=(5.0, 0.0), graded=10, correct=5)
    return [counts.row(ILLUSION, "sim/x", "0-shot", "none", f"difference={v}") for v in values]


def test_x_labels_are_spaced_and_the_rounder_one_kept():
    from ui.scoreboard.charts import group_figure, spaced_ticks
    from ui.scoreboard.style import Colours

    values = ["-0.3", "-0.2", "-0.15", "-0.1457", "-0.1", "-0.05", "0", "+0.05", "+0.1", "+0.1457", "+0.2", "+0.3"]
    figure, _ = group_figure(_rows(values), "difference", Colours(["sim/x"]), False)
    ticks = list(figure.layout.xaxis.tickvals)
    texts = list(figure.layout.xaxis.ticktext)
    span = max(ticks) - min(ticks)
    assert all(b - a >= span / 10 * 0.999 for a, b in zip(ticks, ticks[1:], strict=False))
    assert "-0.1457" not in texts and "+0.1457" not in texts and {"-0.3", "0", "+0.3"} <= set(texts)
    # Of two close values the rounder is labelled.
    assert spaced_ticks({-0.3: "-0.3", -0.15: "-0.15", -0.1457: "-0.1457", 0.0: "0"}) == [-0.3, -0.15, 0.0]
    assert len(figure.data[0].x) == len(values)  # every point still drawn
    # Values evenly spaced as a sweep writes them keep every label.
    even = {x / 20: f"{x / 20:+.2f}" for x in range(-4, 5)}
    assert spaced_ticks(even) == sorted(even)


# --- in the browser -------------------------------------------------------------------------------


def test_no_empty_charts_or_tables_and_a_whole_leaderboard(page, url, tmp_path):
    open_scoreboard(page, url)
    board = page.locator("#score-leaderboard")
    expect(board).to_contain_text("baseline/pixels", timeout=FIRST_LOAD)
    # No group chosen: a hint, no chart.
    expect(page.locator("#score-group-note")).to_contain_text("Choose a group under Break down by")
    expect(page.locator("#score-group-plot")).to_be_hidden()
    choose(page, "score-group", "difference")
    expect(page.locator("#score-group-plot .js-plotly-plot")).to_be_visible()
    choose(page, "score-group", "overall only")
    expect(page.locator("#score-group-plot")).to_be_hidden()

    # Every leaderboard cell reads whole (the source column wraps, never cut), with n and interval.
    header = [h.strip() for h in board.get_by_role("columnheader").all_inner_texts() if h.strip()]
    assert header[:5] == ["model", "mode", "source", "rank", "mean"]
    cut = page.evaluate(
        """() => [...document.querySelectorAll('#score-leaderboard [role=gridcell]')]
             .filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.innerText)"""
    )
    assert cut == []
    expect(board).to_contain_text("published (Rahmanzadehgervi et al.)")
    pixels = board.get_by_role("row").filter(has=page.get_by_role("gridcell", name="baseline/pixels", exact=True))
    expect(pixels).to_contain_text("n=")
    expect(pixels).to_contain_text("–")
    screenshot(page, tmp_path, "scoreboard-leaderboard-whole")

    # Compare on a benchmark without rotations: its note, no table headed "1 2 3", no blank chart.
    page.locator("#score-benchmark input").first.click()
    page.get_by_role("option", name=TOUCHING, exact=True).click()
    expect(page.locator("#score-status")).to_contain_text(TOUCHING)
    open_tab(page, "Compare", "#score-views")
    expect(page.locator("#score-rotation-note")).to_contain_text("rotate-options-all")
    expect(page.locator("#score-consistency")).to_be_hidden()
    expect(page.locator("#score-position-bias")).to_be_hidden()
    expect(page.locator("#score-compare-table")).to_contain_text("shared items")  # defaults chose A and B
    # A and B emptied: the hint alone.
    page.locator("#score-b").get_by_role("button", name="Clear", exact=False).or_(
        page.locator("#score-b .token-remove")
    ).first.click()
    expect(page.locator("#score-compare-note")).to_contain_text("Choose A and at least one B")
    expect(page.locator("#score-compare-table")).to_be_hidden()
    expect(page.locator("#score-compare-plot")).to_be_hidden()
    screenshot(page, tmp_path, "scoreboard-compare-nothing")


def test_see_everyone_opens_the_benchmark_just_taken(page, url, tmp_path):
    open_scoreboard(page, url)
    expect(page.locator("#score-status")).to_contain_text(ILLUSION, timeout=FIRST_LOAD)  # the default: most results
    open_tab(page, "Human")
    choose(page, "human-benchmark", TOUCHING)
    page.locator("#human-name textarea, #human-name input").first.fill("Dee")
    page.locator("#human-count input").fill("1")
    page.click("#human-start")
    expect(page.locator("#human-progress")).to_contain_text("Item 1 of 1")
    answer(page, "Yes")  # clicked again only if the click was lost (a loaded machine met it)
    expect(page.locator("#human-progress")).to_contain_text("Finished")
    page.click("#human-to-scoreboard")
    expect(page.get_by_role("tab", name="Scoreboard", exact=True)).to_have_attribute("aria-selected", "true")
    expect(page.locator("#score-status")).to_contain_text(TOUCHING)
    expect(page.locator("#score-table")).to_contain_text("human/Dee")
    screenshot(page, tmp_path, "scoreboard-after-human")

"""How sure the models were, on the Scoreboard (issue 26): calibration columns equal to a direct
computation from the stored probabilities and targets, a reliability diagram per model, graded
psychometric fits beside the choice fits, and dashes (never numbers made from choices) where a
model gave no probabilities. On a store written through the real store API: Mueller-Lyer items
answered by an observer fooled by the inducers that gives its answers' probabilities (as a local
hf/ model does) and by one that gives only its choices (as Anthropic's models do)."""

from __future__ import annotations

import csv
import io
import math
import random
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from probes.analysis.graded import graded_fit_rows
from probes.analysis.graded_magnitude import graded_magnitude_rows
from probes.analysis.psychometric import polarity
from probes.core.types import Condition, ItemRef, Mode, Result
from probes.reading.grading import grade_reply
from probes.reading.probabilities import answer_key
from probes.running.store import Store
from tests.ui.conftest import reset_caches, screenshot
from tests.ui.navigation import PHONE
from tests.ui.test_scoreboard_store import ILLUSION, illusion, seen_longer
from tests.ui.test_scoreboard_tab import FIRST_LOAD, choose, open_scoreboard, open_tab
from tests.ui.test_scoreboard_views import CHART_COLOURS, contrast, records

SURE = "hf/sim-sure"  # gives its answers' probabilities
PLAIN = "anthropic/sim-plain"  # gives its choices only
SHIFT = 0.08  # how far the inducers move both observers' PSE
DESKTOP = {"width": 1400, "height": 900}
ORIGINS = ["human", "import", "judgement", "run"]  # what the page's own view counts


def _reported(p: float, by: float, rng: random.Random) -> float:
    """What a model says its probability is: `p` pushed away from a half (over-confident for
    `by` > 1) and a little noisy, as a model's logits are."""
    logit = math.log(p / (1 - p)) * by + rng.gauss(0, 0.6)
    return min(0.995, max(0.005, 1 / (1 + math.exp(-logit))))


def fill(path: Path, probabilities: bool = True, seed: int = 0) -> list[Result]:
    """Each Mueller-Lyer item answered by SURE in 0-shot and 4-shot (with probabilities, its
    choice drawn from them) and by PLAIN in 0-shot (choices only), graded by the benchmark."""
    rng = random.Random(seed)
    benchmark = illusion()
    seen = seen_longer(SHIFT)
    entries = []
    for model, modes in ((SURE, (0, 4)), (PLAIN, (0,))):
        for shots in modes:
            for item in benchmark.items():
                p_positive = _reported(seen(item), 1.8 if shots == 0 else 1.2, rng)
                positive = item.params["positive_answer"]
                chosen = positive if rng.random() < p_positive else 1 - positive
                result = grade_reply(benchmark, item, item.options[chosen], model, Condition(Mode(shots)),
                                     ItemRef.of(item), latency=0.3)  # fmt: skip
                if model == SURE and probabilities:
                    p = {answer_key(positive): p_positive, answer_key(1 - positive): 1 - p_positive}
                    result = replace(result, probabilities=p, probability_mass=0.97,
                                     alternatives=((item.options[chosen], 0.9), ("The", 0.01)))  # fmt: skip
                entries.append((result, None, ""))
    with Store(path) as store:
        store.record_many(entries)
        return store.results()


def direct(members: list[Result]) -> dict[str, float]:
    """calibration.py's figures written out from their definitions with numpy, from what the
    store holds: each answer's probability, the target and the parsed answer."""
    keys = sorted(members[0].probabilities)
    p = np.array([[r.probabilities[k] for k in keys] for r in members])
    right = np.array([keys.index(answer_key(r.target)) for r in members])
    chosen = np.array([keys.index(answer_key(r.parsed)) for r in members])
    n = np.arange(len(members))
    confidence, correct = p[n, chosen], chosen == right
    bins = np.minimum((confidence * 10).astype(int), 9)
    ece = sum((bins == b).mean() * abs(correct[bins == b].mean() - confidence[bins == b].mean())
              for b in range(10) if (bins == b).any())  # fmt: skip
    return {"mean_p_right": float(p[n, right].mean()), "brier": float(((p - np.eye(len(keys))[right]) ** 2).sum(1).mean()),
            "ece": float(ece), "n_prob": len(members), "bins": bins, "confidence": confidence, "correct": correct}  # fmt: skip


def shown_cells(found: dict) -> list[str]:
    """The table's four calibration cells for these figures, as a person reads them."""
    return [f"{found['mean_p_right']:.3f}", f"{found['brier']:.3f}", f"{found['ece']:.3f}", str(found["n_prob"])]


CALIBRATION = ["mean p(right)", "Brier", "ECE", "n with p"]


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, tuple[Path, list[Result]]]:
    folder = tmp_path_factory.mktemp("calibration")
    made = {}
    for name, probabilities in (("graded", True), ("plain", False)):
        path = folder / name / "results.sqlite"
        path.parent.mkdir()
        made[name] = (path, fill(path, probabilities))
    return made


def _home(tmp_path: Path, store: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    for part in store.parent.glob(store.name + "*"):
        shutil.copy(part, home / part.name)
    return home


@pytest.fixture
def opened(stores, tmp_path, monkeypatch):
    """The Scoreboard's handlers reading a copy of one of the stores, without a browser."""

    def open_(name: str) -> list[Result]:
        monkeypatch.setenv("PROBE_HOME", str(_home(tmp_path, stores[name][0])))
        reset_caches()
        return stores[name][1]

    yield open_
    reset_caches()


# --- without a browser ----------------------------------------------------------------------------


def _with_p(results: list[Result], **where: str) -> list[Result]:
    return [r for r in results if r.probabilities and all(getattr(r, k) == v for k, v in where.items())]


def test_the_table_and_downloads_carry_figures_equal_to_numpy(opened):
    from ui.scoreboard.handlers import scoreboard

    results = opened("graded")
    out = scoreboard(ILLUSION, [], "all", "all", "overall only", None, [], ORIGINS, view="table")
    table = out[1].data
    for mode in ("0-shot", "4-shot"):
        row = table[(table.model == SURE) & (table["mode"] == mode)].iloc[0]
        assert [row[c] for c in CALIBRATION] == shown_cells(direct(_with_p(results, model=SURE, mode=mode)))
    plain = table[table.model == PLAIN].iloc[0]
    assert [plain[c] for c in CALIBRATION] == ["–"] * 4  # choices only: a dash, never a number made from them
    assert all(table[table.source != "measured"][c].eq("–").all() for c in CALIBRATION)  # chance, papers

    rows = list(csv.DictReader(io.StringIO(Path(out[2]).read_text(encoding="utf-8"))))
    found = next(r for r in rows if (r["model"], r["mode"], r["group"]) == (SURE, "0-shot", "overall"))
    expected = direct(_with_p(results, model=SURE, mode="0-shot"))
    assert [float(found[k]) for k in ("mean_p_right", "brier", "ece")] == pytest.approx(
        [expected[k] for k in ("mean_p_right", "brier", "ece")], rel=1e-9
    )
    assert int(found["n_prob"]) == expected["n_prob"]
    assert next(r for r in rows if r["model"] == PLAIN)["brier"] == ""  # as `report --format csv` leaves it

    # A breakdown: each value's row from its own answers.
    out = scoreboard(ILLUSION, [SURE], "0-shot", "all", "inducers", None, [], ORIGINS, view="table")
    table = out[1].data
    for value in ("with", "flipped", "none"):
        row = table[table.inducers == value].iloc[0]
        members = [r for r in _with_p(results, model=SURE, mode="0-shot") if r.groups["inducers"] == value]
        assert [row[c] for c in CALIBRATION] == shown_cells(direct(members))


def test_the_reliability_diagram_bins_each_models_answers(opened):
    from ui.scoreboard.handlers import scoreboard

    results = opened("graded")
    out = scoreboard(ILLUSION, [], "all", "all", "overall only", None, [], ORIGINS, view="table")
    note, plot = out[15], out[16]
    assert plot["visible"] is True and "diagonal" in note
    figure = plot["value"]
    points = [t for t in figure.data if t.type == "scatter" and t.name != "as sure as right"]
    assert [t.name for t in points] == [SURE]  # PLAIN gave no probabilities: no line
    expected = direct(_with_p(results, model=SURE))  # both modes pooled, as the note says
    filled = [b for b in range(10) if (expected["bins"] == b).any()]
    mean = [expected["confidence"][expected["bins"] == b].mean() for b in filled]
    right = [expected["correct"][expected["bins"] == b].mean() for b in filled]
    assert list(points[0].x) == pytest.approx(mean) and list(points[0].y) == pytest.approx(right)
    counts = [int((expected["bins"] == b).sum()) for b in filled]
    sizes = list(points[0].marker.size)
    assert sorted(range(len(counts)), key=counts.__getitem__) == sorted(range(len(sizes)), key=sizes.__getitem__)
    bars = next(t for t in figure.data if t.type == "bar")
    assert list(bars.y) == [int((expected["bins"] == b).sum()) for b in range(10)]
    (diagonal,) = [t for t in figure.data if t.name == "as sure as right"]
    assert (list(diagonal.x), list(diagonal.y)) == ([0, 1], [0, 1])


def test_graded_fits_are_drawn_beside_the_choice_fits(opened):
    from ui.scoreboard.views import psychometric

    results = opened("graded")
    figure, note, fits, magnitudes, *_ = psychometric(ILLUSION, "difference", [], "0-shot", "all")
    names = {t.name for t in figure.data}
    assert {f"{SURE} · 0-shot · probabilities", f"{SURE} · 0-shot · choices", f"{PLAIN} · 0-shot · choices"} <= names
    assert f"{PLAIN} · 0-shot · probabilities" not in names and "probabilities" in note
    graded = [t for t in figure.data if t.name.endswith("probabilities") and t.mode == "lines"]
    assert graded and all(t.opacity < 1 and t.line.width > 2 for t in graded)  # broad and pale: told apart
    assert set(fits[fits.model == SURE].source) == {"choices", "probabilities"}
    assert set(fits[fits.model == PLAIN].source) == {"choices"}
    # The graded PSE per inducer panel, as probes/analysis/graded.py fits the stored results.
    panels = {1: "with inducers", -1: "flipped inducers", 0: "no inducers (control)"}
    members = _with_p(results, model=SURE, mode="0-shot")
    for side, panel in panels.items():
        (row,) = graded_fit_rows([r for r in members if polarity(r.item_ref.params) == side], "difference")
        shown = fits[(fits.model == SURE) & (fits.source == "probabilities") & (fits.inducers == panel)].iloc[0]
        assert shown["PSE"] == f"{row.pse:+.3f}" and shown["n"] == str(row.n)
    pse = {panel: float(fits[(fits.model == SURE) & (fits.source == "probabilities") & (fits.inducers == panel)]
                        .iloc[0]["PSE"]) for panel in panels.values()}  # fmt: skip
    assert pse["with inducers"] > pse["no inducers (control)"] > pse["flipped inducers"]  # fooled, as drawn
    # The illusion magnitude from probabilities beside the one from choices, as the analysis computes it.
    [graded] = graded_magnitude_rows(members, "difference")
    shown = magnitudes[(magnitudes.model == SURE) & (magnitudes.source == "probabilities")].iloc[0]
    assert shown["illusion magnitude"] == f"{graded.magnitude:+.3f}" and graded.magnitude > 0
    assert set(magnitudes[magnitudes.model == PLAIN].source) == {"choices"}


def test_a_store_without_probabilities_shows_dashes_and_says_why(opened):
    from ui.scoreboard.handlers import scoreboard

    opened("plain")
    out = scoreboard(ILLUSION, [], "all", "all", "overall only", None, [], ORIGINS, view="table")
    table = out[1].data
    columns = list(table.columns)
    assert columns[columns.index("n") + 1 :][:4] == CALIBRATION and all(table[c].eq("–").all() for c in CALIBRATION)
    assert out[16] == {"__type__": "update", "visible": False}  # no empty diagram
    assert "No answer probabilities are stored" in out[15] and "--" not in out[15]  # page words, no flags
    assert "brier" not in Path(out[2]).read_text(encoding="utf-8").splitlines()[0]  # as `report` prints it


# --- in the browser -------------------------------------------------------------------------------


def seen(page, tmp_path: Path, name: str, locator) -> Path:
    """What the screen shows with `locator` scrolled to its top (the viewport, not the whole page)."""
    locator.scroll_into_view_if_needed()
    locator.evaluate("element => element.scrollIntoView({block: 'start'})")
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def _page(browser, viewport: dict):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.set_default_timeout(FIRST_LOAD)
    return context, page


def test_a_visitor_sees_how_sure_each_model_was(browser, serve, stores, tmp_path):
    path, results = stores["graded"]
    _home(tmp_path, path)
    url = serve()
    context, page = _page(browser, DESKTOP)
    try:
        open_scoreboard(page, url)
        table = page.locator("#score-table")
        expect(table).to_contain_text(SURE, timeout=FIRST_LOAD)
        for column in CALIBRATION:
            expect(table.get_by_role("columnheader", name=column, exact=True)).to_have_count(1)
        shown = {(r["model"], r["mode"]): r for r in records(page, "score-table")}
        for mode in ("0-shot", "4-shot"):
            expected = shown_cells(direct(_with_p(results, model=SURE, mode=mode)))
            assert [shown[(SURE, mode)][c] for c in CALIBRATION] == expected
        assert [shown[(PLAIN, "0-shot")][c] for c in CALIBRATION] == ["–"] * 4
        expect(page.locator("#score-notes")).to_contain_text("mean p(right)")

        diagram = page.locator("#score-reliability .js-plotly-plot")
        expect(diagram).to_be_visible()
        expect(page.locator("#score-reliability")).to_contain_text("Reliability")
        drawn = page.evaluate(
            "() => document.querySelector('#score-reliability .js-plotly-plot').data.map(t => [t.type, t.name, t.y])"
        )
        assert {name for kind, name, _ in drawn if kind == "scatter"} == {SURE, "as sure as right"}
        counted = sum(sum(y) for kind, _, y in drawn if kind == "bar")
        assert counted == len(_with_p(results, model=SURE))  # every answer with probabilities in a bin
        screenshot(page, tmp_path, "scoreboard-calibration-1400-page")
        seen(page, tmp_path, "scoreboard-table-1400", page.locator("#score-status"))
        seen(page, tmp_path, "scoreboard-reliability-1400", page.locator("#score-calibration-note"))

        open_tab(page, "Curves", "#score-views")
        expect(page.locator("#score-curves .js-plotly-plot")).to_be_visible(timeout=FIRST_LOAD)
        choose(page, "score-mode", "0-shot")
        expect(page.locator("#score-fits")).to_contain_text("probabilities")
        names = set(
            page.evaluate("() => document.querySelector('#score-curves .js-plotly-plot').data.map(t => t.name)")
        )
        assert {f"{SURE} · 0-shot · probabilities", f"{SURE} · 0-shot · choices"} <= names
        legend = page.locator("#score-curves .legendtext")
        expect(legend.filter(has_text="probabilities")).to_have_count(1)
        fits = records(page, "score-fits")
        assert {r["source"] for r in fits if r["model"] == SURE} == {"choices", "probabilities"}
        assert {r["source"] for r in fits if r["model"] == PLAIN} == {"choices"}
        members = [r for r in _with_p(results, model=SURE, mode="0-shot") if polarity(r.item_ref.params) == 1]
        (row,) = graded_fit_rows(members, "difference")
        graded = next(r for r in fits if (r["model"], r["source"], r["inducers"]) == (SURE, "probabilities",
                                                                                      "with inducers"))  # fmt: skip
        assert graded["PSE"] == f"{row.pse:+.3f}"
        screenshot(page, tmp_path, "scoreboard-graded-curves-1400-page")
        seen(page, tmp_path, "scoreboard-graded-curves-1400", page.locator("#score-curves"))
        seen(page, tmp_path, "scoreboard-fits-1400", page.locator("#score-fits"))
    finally:
        context.close()


def test_a_phone_gets_the_figures_and_the_diagram(browser, serve, stores, tmp_path):
    path, results = stores["graded"]
    _home(tmp_path, path)
    url = serve()
    context, page = _page(browser, PHONE)
    try:
        open_scoreboard(page, url)
        phone = page.locator("#score-phone")
        expect(phone).to_contain_text(SURE, timeout=FIRST_LOAD)
        expected = direct(_with_p(results, model=SURE, mode="0-shot"))
        line = phone.locator("li", has_text=SURE).filter(has_text="0-shot").locator(".score-cal")
        expect(line).to_have_text(
            f"p(right) {expected['mean_p_right']:.3f} · Brier {expected['brier']:.3f} · ECE {expected['ece']:.3f} · "
            f"n with p {expected['n_prob']}"
        )
        expect(phone.locator("li", has_text=PLAIN).locator(".score-cal")).to_have_count(0)
        diagram = page.locator("#score-reliability .js-plotly-plot")
        expect(diagram).to_be_visible()
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= PHONE["width"]  # nothing wider than the phone
        screenshot(page, tmp_path, "scoreboard-calibration-390-page")
        seen(page, tmp_path, "scoreboard-phone-rows-390", phone.locator("li", has_text=PLAIN))
        seen(page, tmp_path, "scoreboard-reliability-390", page.locator("#score-reliability"))
        open_tab(page, "Curves", "#score-views")
        expect(page.locator("#score-curves .js-plotly-plot")).to_be_visible(timeout=FIRST_LOAD)
        expect(page.locator("#score-fits")).to_contain_text("probabilities")
        seen(page, tmp_path, "scoreboard-graded-curves-390", page.locator("#score-curves"))
    finally:
        context.close()


def test_without_probabilities_a_visitor_sees_dashes_and_why(browser, serve, stores, tmp_path):
    path, _ = stores["plain"]
    _home(tmp_path, path)
    url = serve()
    context, page = _page(browser, DESKTOP)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        open_scoreboard(page, url)
        expect(page.locator("#score-table")).to_contain_text(PLAIN, timeout=FIRST_LOAD)
        row = next(r for r in records(page, "score-table") if r["model"] == PLAIN)
        assert [row[c] for c in CALIBRATION] == ["–"] * 4
        note = page.locator("#score-calibration-note")
        expect(note).to_contain_text("No answer probabilities are stored for these models")
        assert "--" not in note.inner_text()
        expect(page.locator("#score-reliability")).to_be_hidden()
        expect(page.locator("#score-bars .js-plotly-plot")).to_be_visible()
        seen(page, tmp_path, "scoreboard-no-probabilities-table-1400", page.locator("#score-status"))
        seen(page, tmp_path, "scoreboard-no-probabilities-note-1400", page.locator("#score-group-note"))
        open_tab(page, "Curves", "#score-views")
        expect(page.locator("#score-fits")).to_contain_text("choices", timeout=FIRST_LOAD)
        expect(page.locator("#score-fits")).not_to_contain_text("probabilities")
        assert not errors
        assert not page.get_by_text("Error", exact=True).count()
    finally:
        context.close()


def test_the_diagram_reads_in_dark_mode(browser, serve, stores, tmp_path):
    path, _ = stores["graded"]
    _home(tmp_path, path)
    url = serve()
    context = browser.new_context(viewport=DESKTOP, color_scheme="dark")
    page = context.new_page()
    page.set_default_timeout(FIRST_LOAD)
    try:
        open_scoreboard(page, url)
        expect(page.locator("#score-reliability .js-plotly-plot")).to_be_visible(timeout=FIRST_LOAD)
        found = page.evaluate(CHART_COLOURS, "score-reliability")
        assert found["dark"] and found["paper"] == found["plot"] == "rgba(0, 0, 0, 0)"  # the page shows through
        assert contrast(found["text"], found["behind"]) >= 4.5, found
        seen(page, tmp_path, "scoreboard-reliability-dark-1400", page.locator("#score-calibration-note"))
    finally:
        context.close()

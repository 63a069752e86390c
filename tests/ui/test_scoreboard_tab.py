"""The Scoreboard tab in a real browser, on a store filled by the real engine: baseline/chance and a
model behind a local OpenAI-protocol server, each in 0-shot and 4-shot."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from concurrent.futures import ThreadPoolExecutor

from playwright.sync_api import expect

from probes.analysis.scoring import aggregate
from probes.core.registry import get_benchmark
from probes.core.types import Mode, Result, Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store
from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import patient_client, screenshot

SECRET = "sk-scoreboard-secret-123"
GAPS = ["-0.1", "0", "0.1", "0.3"]
# ms: the first refresh builds plotly figures (plotly loads lazily) and the page then loads
# plotly.js; both take seconds on a busy machine.
FIRST_LOAD = 90_000  # plotly's first import in the served process, on a loaded machine


def fill_store(path, base_url: str, monkeypatch) -> list:
    """16 touching-circles items (four gaps, two orientations, two prompts) asked by two models in
    0-shot and 4-shot."""
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    benchmark = get_benchmark(
        "blind/touching-circles",
        params={"gap": GAPS, "canvas": ["384"], "diameter": ["1/4"], "orientation": ["vertical", "horizontal"]},
    )
    items = benchmark.items()
    assert len(items) == 16
    with Store(path) as store:
        for shots in (0, 4):
            backends = [create("baseline/chance"), create("openai/fake-vlm", api_key=SECRET)]
            plan = RunPlan(benchmark, items, backends, Mode(shots))
            # Playwright's sync API holds this thread's event loop: the run gets a thread of its own.
            with ThreadPoolExecutor(1) as thread:
                thread.submit(asyncio.run, run(plan, store)).result()
        return store.results()


def choose(page, elem_id: str, value: str) -> None:
    field = page.locator(f"#{elem_id} input").first
    field.click()
    field.fill(value)
    page.get_by_role("option", name=value, exact=True).click()
    page.locator("body").click(position={"x": 5, "y": 5})


def open_tab(page, name: str, within: str = "body") -> None:
    """A tab by its name; on a narrow screen Gradio folds the tabs that do not fit into "More tabs"."""
    scope = page.locator(within).first
    tab = scope.get_by_role("tab", name=name, exact=True)
    scope.get_by_role("tablist").first.wait_for()
    if tab.count() and tab.first.is_visible():
        tab.first.click()
        return
    scope.get_by_role("button", name="More tabs").first.click()
    scope.locator(".overflow-dropdown button").filter(has_text=name).first.click()


def open_scoreboard(page, url: str) -> None:
    page.goto(url)
    open_tab(page, "Scoreboard")


def test_scoreboard_shows_models_references_curve_agreement_and_downloads(serve, page, tmp_path, monkeypatch):
    with FakeOpenAIServer(responder=lambda body: "They do not touch.\nAnswer: No") as server:
        results = fill_store(tmp_path / "home" / "results.sqlite", server.base_url, monkeypatch)
        url = serve(OPENAI_BASE_URL=server.base_url)
    assert len(results) == 64 and server.request_count == 32

    open_scoreboard(page, url)
    table = page.locator("#score-table")
    expect(table).to_contain_text("openai/fake-vlm", timeout=FIRST_LOAD)
    expect(table).to_contain_text("baseline/chance")
    expect(table).to_contain_text("published (Rahmanzadehgervi et al.)")
    rows = table.get_by_role("row")
    chance_row = rows.filter(has=page.get_by_role("gridcell", name="chance", exact=True))
    expect(chance_row).to_have_count(1)
    expect(chance_row).to_contain_text("50.0")
    expect(rows.nth(1)).to_contain_text("chance")  # pinned under the header, not hidden at the bottom
    expect(page.locator("#score-status")).to_contain_text("64 results")
    expect(page.locator("#score-bars .js-plotly-plot")).to_be_visible(timeout=FIRST_LOAD)
    expect(page.locator("#score-bars")).to_contain_text("chance 50.0%")

    choose(page, "score-group", "gap")
    # The group's values under its own name, not "gap=" on every row.
    expect(table.get_by_role("columnheader", name="gap", exact=True)).to_have_count(1)
    expect(table.get_by_role("gridcell", name="+0.30", exact=True).first).to_be_visible()
    expect(page.locator("#score-group-note")).to_contain_text("Accuracy against gap")
    # A curve per model and mode: four lines against the gap, its ticks as the benchmark writes them.
    expect(page.locator("#score-group-plot .scatterlayer .trace")).to_have_count(4)
    expect(page.locator("#score-group-plot")).to_contain_text("+0.30")
    colours = page.evaluate(
        """() => document.querySelector('#score-group-plot .js-plotly-plot').data
                 .map(t => [t.name, t.line.color, t.line.dash])"""
    )
    by_model: dict[str, set] = {}
    for name, colour, _ in colours:
        by_model.setdefault(name.split(" · ")[0], set()).add(colour)
    assert all(len(c) == 1 for c in by_model.values()) and len(set().union(*by_model.values())) == 2  # a colour a model
    assert {dash for *_, dash in colours} == {"solid", "dash"}  # a dash a mode

    # Always "No": right on every overlapping-prompt item with a gap >= 0 and touching item with gap > 0.
    open_tab(page, "Modes & latency", "#score-views")
    expect(page.locator("#score-latency")).to_contain_text("openai/fake-vlm")
    agreement = page.locator("#score-agree-table")
    expect(page.locator("#score-agree-plot")).to_contain_text("items: 16")
    choose(page, "score-agree-model", "openai/fake-vlm")
    both = agreement.get_by_role("row").filter(has=page.get_by_role("gridcell", name="both", exact=True))
    expect(both).to_contain_text("10")  # identical replies in both modes: every right item is right twice
    expect(page.locator("#score-agree-plot")).to_contain_text("0-shot")
    expect(page.locator("#score-agree-plot")).to_contain_text("(10 right)")
    screenshot(page, tmp_path, "scoreboard")

    expected = {
        (r.model, r.mode, r.group): (r.n, r.accuracy) for r in aggregate(results, by=["gap"]) if r.source == "measured"
    }
    open_tab(page, "Table", "#score-views")
    with page.expect_download() as download:
        page.click("#score-csv")
    text = open(download.value.path(), encoding="utf-8").read()
    rows = list(csv.DictReader(io.StringIO(text)))
    measured = {(r["model"], r["mode"], r["group"]): (int(r["n"]), float(r["accuracy"])) for r in rows
                if r["source"] == "measured"}  # fmt: skip
    assert measured == expected and len(measured) == 4 * 5
    assert {r["source"] for r in rows} == {"measured", "chance", "published"}

    with page.expect_download() as download:
        page.click("#score-json")
    document = json.loads(open(download.value.path(), encoding="utf-8").read())
    assert {(r["model"], r["mode"], r["group"]): (r["n"], r["accuracy"]) for r in document
            if r["source"] == "measured"} == expected  # fmt: skip
    assert all(r["paper"] for r in document if r["source"] == "published")
    assert SECRET not in text and SECRET not in json.dumps(document)


HOSTILE = 'human/<img src=x onerror="window.__pwned=1">'


def hand_filled_store(path) -> None:
    """A person (as the Human tab stores them) with a name meant to break the page, and a model."""
    with Store(path) as store:
        store.record_many(
            [
                (
                    Result(
                        "blind/touching-circles",
                        str(i),
                        model,
                        "0-shot",
                        "none",
                        Status.ANSWERED,
                        correct=i % 2 == 0,
                        score=float(i % 2 == 0),
                        latency=0.5,
                        groups={"prompt": "touching"},
                    ),
                    None,
                    "",
                )  # fmt: skip
                for i in range(4)
                for model in (HOSTILE, "baseline/chance")
            ]
        )


def test_a_hostile_person_name_shows_as_text_and_is_marked_human(serve, page, tmp_path):
    hand_filled_store(tmp_path / "home" / "results.sqlite")
    open_scoreboard(page, serve())
    table = page.locator("#score-table")
    expect(table).to_contain_text(HOSTILE, timeout=FIRST_LOAD)
    person = table.get_by_role("row").filter(has=page.get_by_role("gridcell", name=HOSTILE, exact=True))
    expect(person).to_contain_text("human")
    # The name as text in the chart, never as markup.
    expect(page.locator("#score-bars")).to_contain_text("human/<img", timeout=FIRST_LOAD)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#score-table img, #score-bars img, #score-phone img, #score-leaderboard img").count() == 0


def test_the_scoreboard_api_answers_gradio_client(serve, tmp_path):

    url = serve()
    client = patient_client(url)
    empty = client.predict(None, [], "all", "all", "overall only", None, [], api_name="/scoreboard")
    assert "store is empty" in empty[0]
    hand_filled_store(tmp_path / "home" / "results.sqlite")
    status, table, csv_path, json_path, *_ = client.predict(
        "blind/touching-circles", ["baseline/chance"], "all", "all", "prompt", None, [], api_name="/scoreboard"
    )
    assert "**8** results" not in status and "**4** results" in status  # one model chosen of two
    rows = json.loads(open(json_path, encoding="utf-8").read())
    measured = [r for r in rows if r["source"] == "measured"]
    assert {(r["model"], r["group"], r["n"], r["accuracy"]) for r in measured} == {
        ("baseline/chance", "overall", 4, 50.0),
        ("baseline/chance", "prompt=touching", 4, 50.0),
    }
    assert open(csv_path, encoding="utf-8").read().startswith("benchmark,model,mode,perturbation,group,n,correct")

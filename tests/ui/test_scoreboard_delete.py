"""Deleting a model's stored results from the Scoreboard (private mode only): a count and a
confirmation first, then the leaderboard, the table and the choices without that model, their
numbers those of the results that remain. A public Space neither offers nor performs it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from probes.analysis.report import report_rows
from probes.running.store import Store
from tests.ui.conftest import reset_caches, screenshot
from tests.ui.test_scoreboard_store import FOOLED, ILLUSION, TOUCHING, fill
from tests.ui.test_scoreboard_tab import FIRST_LOAD, choose, open_scoreboard


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("delete") / "results.sqlite"
    fill(path)
    return path


@pytest.fixture
def home(filled, tmp_path, monkeypatch) -> Path:
    """A copy of the filled store as the app's own (each test deletes from its own copy)."""
    folder = tmp_path / "home"
    folder.mkdir()
    for part in filled.parent.glob(filled.name + "*"):
        shutil.copy(part, folder / part.name)
    monkeypatch.setenv("PROBE_HOME", str(folder))
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("PROBE_PUBLIC", raising=False)
    reset_caches()
    yield folder / "results.sqlite"
    reset_caches()


def _remaining(path: Path, benchmark: str) -> list:
    with Store(path) as store:
        return [r for r in store.results() if r.benchmark == benchmark and r.origin.value != "probe"]


def test_deleting_a_model_leaves_the_rows_of_what_remains(home):
    from ui.common import escape
    from ui.scoreboard.data import Filters, facets, origins_for, scoreboard_rows, stored_tally
    from ui.scoreboard.delete import EVERY_BENCHMARK, delete_asked, delete_choices, delete_confirmed

    models, benchmarks = delete_choices(None, None)
    assert FOOLED in models["choices"] and "baseline/pixels" in models["choices"]
    with Store(home) as store:
        doomed = sum(1 for r in store.results() if r.model == FOOLED)
    note, confirm = delete_asked(FOOLED, EVERY_BENCHMARK)
    assert f"**{doomed:,}** results of **{escape(FOOLED)}**" in note and confirm["visible"] is True
    note, confirm = delete_confirmed(FOOLED, EVERY_BENCHMARK)
    assert f"Deleted **{doomed:,}** results" in note and confirm["visible"] is False

    tally, origins = stored_tally(), origins_for(False)
    for benchmark in (ILLUSION, TOUCHING):
        rows = scoreboard_rows(tally, Filters(benchmark, group="difference" if benchmark == ILLUSION else "gap"),
                               origins)  # fmt: skip
        by = ["difference"] if benchmark == ILLUSION else ["gap"]
        assert rows == report_rows(_remaining(home, benchmark), by, [benchmark])
        assert FOOLED not in facets(tally, benchmark, origins).models
    assert FOOLED not in delete_choices(None, None)[0]["choices"]


def test_one_benchmark_only_and_nothing_without_a_model(home):
    from ui.scoreboard.delete import delete_asked, delete_confirmed

    with Store(home) as store:
        before = store.results()
    note, confirm = delete_asked(None, None)
    assert "choose the model" in note and confirm["visible"] is False
    delete_confirmed("baseline/pixels", TOUCHING)
    with Store(home) as store:
        after = store.results()
    gone = {(r.benchmark, r.model) for r in before} - {(r.benchmark, r.model) for r in after}
    assert gone == {(TOUCHING, "baseline/pixels")}
    assert any(r.model == "baseline/pixels" and r.benchmark == ILLUSION for r in after)


def test_a_public_space_refuses_to_delete(home, monkeypatch):
    from ui.scoreboard.delete import delete_asked, delete_confirmed

    monkeypatch.setenv("PROBE_PUBLIC", "1")
    reset_caches()
    with Store(home) as store:
        before = store.count()
    for handler in (delete_asked, delete_confirmed):
        note, confirm = handler(FOOLED, None)
        assert "public" in note and confirm["visible"] is False
    with Store(home) as store:
        assert store.count() == before


def test_delete_from_the_page_with_a_confirmation(serve, page, home, tmp_path):
    url = serve()
    open_scoreboard(page, url)
    board = page.locator("#score-leaderboard")
    expect(board).to_contain_text(FOOLED, timeout=FIRST_LOAD)
    page.locator("#score-delete").get_by_text("Delete stored results").click()
    choose(page, "score-delete-model", FOOLED)
    page.click("#score-delete-ask")
    expect(page.locator("#score-delete-note")).to_contain_text("will be deleted")
    confirm = page.locator("#score-delete-confirm")
    expect(confirm).to_be_visible()
    screenshot(page, tmp_path, "scoreboard-delete-confirm")
    with Store(home) as store:
        assert any(r.model == FOOLED for r in store.results())  # asking deleted nothing
    confirm.click()
    expect(page.locator("#score-delete-note")).to_contain_text("Deleted")
    expect(confirm).to_be_hidden()
    expect(board).not_to_contain_text(FOOLED)
    expect(board).to_contain_text("baseline/pixels")
    page.locator("#score-models input").first.click()
    expect(page.get_by_role("option", name="baseline/pixels", exact=True)).to_be_visible()
    expect(page.get_by_role("option", name=FOOLED, exact=True)).to_have_count(0)
    with Store(home) as store:
        assert not any(r.model == FOOLED for r in store.results())


def test_a_public_page_offers_no_delete(serve, page, home):
    url = serve(PROBE_PUBLIC="1")
    open_scoreboard(page, url)
    expect(page.locator("#score-leaderboard")).to_contain_text("baseline/pixels", timeout=FIRST_LOAD)
    expect(page.locator("#score-delete-ask")).to_have_count(0)
    expect(page.get_by_text("Delete stored results")).to_have_count(0)

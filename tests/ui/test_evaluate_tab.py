"""The Evaluate tab in a real browser: a batch run with live progress and a summary, Cancel that
keeps what finished, Resume that asks only what is left, and clear messages for bad input."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import screenshot


def open_tab(page, url: str) -> None:
    page.goto(url)
    page.get_by_role("tab", name="Evaluate", exact=True).click()
    expect(page.locator("#eval-start")).to_be_visible()


def add_model(page, model_id: str) -> None:
    field = page.locator("#eval-models input")
    field.click()
    field.fill(model_id)
    field.press("Enter")
    page.locator("#eval-status").click()  # close the list


def remove_model(page, model_id: str) -> None:
    page.locator("#eval-models .token").filter(has_text=model_id).locator(".token-remove").click()


def fill(page, elem_id: str, value: str) -> None:
    page.locator(f"#{elem_id} input, #{elem_id} textarea").first.fill(value)


def stored(model_id: str) -> int:
    from ui.common import store

    return len(store().results(model=model_id))


def test_a_run_shows_progress_then_its_summary(serve, page, tmp_path):
    with FakeOpenAIServer(responder=lambda body: "Answer: No", latency=0.2) as server:
        url = serve(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-server-test")
        open_tab(page, url)
        add_model(page, "openai/x")
        fill(page, "eval-limit", "12")
        page.click("#eval-start")
        status = page.locator("#eval-status")
        expect(status).to_contain_text("Finished")
        expect(status).to_contain_text("24 / 24 results")
        expect(status).to_contain_text("openai/x 12/12")
        expect(status).to_contain_text("baseline/chance 12/12")
        expect(status).to_contain_text("Scoreboard")
        rows = page.locator("#eval-summary [role=row]").filter(has_not=page.locator("th"))
        expect(rows).to_have_count(2)
        for model_id in ("openai/x", "baseline/chance"):
            row = rows.filter(has_text=model_id)
            expect(row).to_contain_text("blind/touching-circles")
            expect(row.get_by_role("gridcell").nth(4)).to_have_text("12")  # n
        screenshot(page, tmp_path, "evaluate")

        # The same run on the Scoreboard: its rows, the references beside them, and a chart.
        page.get_by_role("tab", name="Scoreboard", exact=True).click()
        page.click("#score-refresh")
        table = page.locator("#score-table")
        expect(table).to_contain_text("openai/x")
        expect(table).to_contain_text("baseline/chance")
        expect(table).to_contain_text("published")
        expect(page.locator("#score-bars .js-plotly-plot")).to_be_visible()
        screenshot(page, tmp_path, "scoreboard-after-evaluate")
    assert server.request_count == 12
    assert stored("openai/x") == 12 and stored("baseline/chance") == 12


def test_cancel_keeps_finished_results_and_resume_asks_only_the_rest(serve, page, tmp_path):
    with FakeOpenAIServer(responder=lambda body: "No", latency=0.3) as server:
        url = serve(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-server-test")
        open_tab(page, url)
        remove_model(page, "baseline/chance")
        page.click("#eval-start")
        status = page.locator("#eval-status")
        expect(status).to_contain_text("choose at least one model")

        add_model(page, "openai/x")
        fill(page, "eval-limit", "40")
        fill(page, "eval-concurrency", "2")
        page.click("#eval-start")
        expect(status).to_contain_text(re.compile(r"openai/x ([4-9]|1\d)/40"))
        expect(status).to_contain_text("about")  # an estimated time left while it runs
        bar = page.locator("#eval-summary [data-testid=status-tracker]")
        expect(bar).to_contain_text(re.compile(r"\d+/40 results"))  # the progress bar, over the table-to-be
        page.click("#eval-cancel")
        expect(status).to_contain_text("Stopped")
        expect(status).to_contain_text("Resume")
        saved = stored("openai/x")
        assert 0 < saved < 40
        assert f"{saved} of 40 results saved" in status.inner_text()
        assert server.request_count == saved  # the requests in flight were let finish and kept
        screenshot(page, tmp_path, "evaluate-stopped")

        page.click("#eval-resume")
        expect(status).to_contain_text("Finished")
        expect(status).to_contain_text("40 / 40 results")
        expect(status).to_contain_text(f"cached {saved}")
        expect(page.locator("#eval-summary [role=row]").filter(has_text="openai/x")).to_have_count(1)
    assert stored("openai/x") == 40
    assert server.request_count == 40  # nothing finished was asked again


def test_an_unknown_or_unavailable_model_gets_a_clear_message(serve, page):
    open_tab(page, serve())
    add_model(page, "nowhere/x")
    page.click("#eval-start")
    status = page.locator("#eval-status")
    expect(status).to_contain_text("unknown provider 'nowhere'")
    remove_model(page, "nowhere/x")
    add_model(page, "openai/gpt-4o")
    page.click("#eval-start")
    expect(status).to_contain_text("openai/gpt-4o is unavailable: set OPENAI_API_KEY")
    remove_model(page, "openai/gpt-4o")
    fill(page, "eval-params", "gap")
    page.click("#eval-start")
    expect(status).to_contain_text("write NAME=VALUE")
    assert stored("baseline/chance") == 0

"""The Space a demo maker can publish (issue 23), in public mode as a Space runs: a demo prepared in
advance is served to any visitor for nothing; answers bought with the Space's key are shared with
the next visitor; a link replays for anyone, the sharer's own-key answers included, with nothing
sent; and a key with no budget set is metered by default."""

from __future__ import annotations

import csv
import io
import re
import shutil

from playwright.sync_api import expect

from probes.running.limits import DEFAULT_BUDGETS
from tests.conftest import run_cli
from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import patient_client, screenshot
from tests.ui.test_probe_tab import choose_model, tick

ANSWERED_BEFORE = "answered before"  # how every answer the Space already had reads
# Models on the Space's key come from the catalogue or this list (as an operator lists theirs).
PUBLIC = {"PROBE_PUBLIC": "1", "PROBE_TRUSTED_PROXIES": "0",
          "PROBE_ALLOWED_MODELS": "openai/gpt-demo,openai/gpt-bought,openai/gpt-x"}  # fmt: skip


def prepare(home, server, models=("openai/gpt-demo",), conditions=("as asked", "upside down")) -> None:
    """The operator's demo, prepared on their machine (the command line), into the store the Space serves."""
    args = [
        "prepare-demo",
        *(a for m in models for a in ("--model", m)),
        *(a for c in conditions for a in ("--condition", c)),
    ]
    env = {"PROBE_HOME": str(home), "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-operator"}
    done = run_cli(*args, env=env, timeout=600)
    assert done.returncode == 0, done.stderr


def test_a_prepared_demo_is_served_to_a_fresh_visitor_with_nothing_sent(serve, page, tmp_path):
    with FakeOpenAIServer(responder=lambda body: "No") as server:
        prepare(tmp_path / "home", server)
        prepared = server.request_count
        assert prepared > 0
        url = serve(**PUBLIC, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-space")
        page.goto(url)
        choose_model(page, 1, "openai/gpt-demo")
        tick(page, "upside down")
        page.click("#probe-ask")
        expect(page.locator("#probe-status")).to_contain_text("4 of 4 answered")
        row = page.locator("#probe-grid tbody tr", has_text="openai/gpt-demo")
        expect(row.locator("td.right, td.wrong")).to_have_count(2)
        # Answered before, nothing sent: the one label for every answer the Space already had
        # (the tooltip says where: here the demo its maker prepared).
        expect(row.locator(".source")).to_have_text([ANSWERED_BEFORE] * 2)
        expect(row.locator(".source").first).to_have_attribute("title", re.compile("prepared"))
        screenshot(page, tmp_path, "demo-served")
        assert server.request_count == prepared  # nothing sent for the visitor


def test_answers_bought_with_the_space_key_are_shared_and_a_link_replays_for_anyone(serve, browser, tmp_path):
    typed = "sk-visitor-own-key-123"
    with FakeOpenAIServer(responder=lambda body: "Yes") as server:
        url = serve(**PUBLIC, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-space")
        first, second, third = (browser.new_context() for _ in range(3))
        try:
            a = first.new_page()
            a.goto(url)
            choose_model(a, 1, "openai/gpt-bought")  # the Space's key
            a.click("#probe-ask")
            expect(a.locator("#probe-status")).to_contain_text("2 of 2 answered")
            bought = server.request_count
            # Visitor A again, on another item, with their own key (for every OpenAI model).
            a.locator("#probe-examples img").nth(3).click()
            expect(a.locator("#probe-item-text")).to_contain_text("squares")
            a.get_by_text("API keys (used for this session only, never stored)").click()
            a.locator("#probe-openai-key input").fill(typed)
            choose_model(a, 1, "openai/gpt-own")
            a.click("#probe-ask")
            expect(a.locator("#probe-status")).to_contain_text("the address now replays this probe")
            link = a.locator("#probe-link input, #probe-link textarea").first.input_value()
            assert re.search(r"\?probe=", link)
            sent = server.request_count
            assert sent == bought + 1

            # Visitor B asks what A bought with the Space's key: shared, nothing sent.
            b = second.new_page()
            b.goto(url)
            choose_model(b, 1, "openai/gpt-bought")
            b.click("#probe-ask")
            expect(b.locator("#probe-status")).to_contain_text("2 of 2 answered")
            expect(b.locator("#probe-grid tbody tr", has_text="openai/gpt-bought")).to_contain_text(ANSWERED_BEFORE)
            # Visitor C opens A's link: every cell, the own-key answer included, nothing sent.
            c = third.new_page()
            c.goto(link)
            expect(c.locator("#probe-status")).to_contain_text("Replayed from the cache: nothing was sent")
            row = c.locator("#probe-grid tbody tr", has_text="openai/gpt-own")
            expect(row.locator("td.right, td.wrong")).to_have_count(1)
            expect(row).to_contain_text(ANSWERED_BEFORE)
            expect(
                c.locator("#probe-grid tbody tr", has_text="baseline/chance").locator("td.right, td.wrong")
            ).to_have_count(1)
            screenshot(c, tmp_path, "demo-link-replayed")
            assert server.request_count == sent
            assert all(typed not in record["headers"].get("authorization", "") for record in server.requests[:bought])
        finally:
            for context in (first, second, third):
                context.close()


def test_without_budget_variables_a_public_space_meters_its_key_by_default(serve, tmp_path):
    from probes.running.limits import current
    from ui.about import mode_text

    session_budget = DEFAULT_BUDGETS["PROBE_SESSION_BUDGET"]
    with FakeOpenAIServer(responder=lambda body: "No") as server:
        url = serve(**PUBLIC, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-space")
        visitor = patient_client(url)
        grids = []
        for seed in range(session_budget + 10):  # distinct items: none is in any cache
            visitor.predict("blind/circled-letter", "", seed, api_name="/generate_stimulus")
            grids.append(visitor.predict("openai/gpt-x", None, None, None, ["as asked"], "", "", api_name="/probe")[1])
        assert server.request_count == session_budget
    refused = [grid for grid in grids if "budget" in grid]
    assert refused and all("Paste your own OpenAI key under API keys to ask openai/gpt-x" in grid for grid in refused)
    about = mode_text(current())
    for name, value in DEFAULT_BUDGETS.items():
        assert f"{value:,}" in about, name
    assert "the defaults: the operator set no budget" in about


def test_the_demo_store_is_read_but_never_written_by_visitors(serve, tmp_path):
    """A visitor's results stay in their session: the operator's prepared store is unchanged."""
    with FakeOpenAIServer(responder=lambda body: "No") as server:
        home = tmp_path / "home"
        prepare(home, server, conditions=("as asked",))
        before = (home / "results.sqlite").read_bytes()
        shutil.copy(home / "results.sqlite", tmp_path / "before.sqlite")
        url = serve(**PUBLIC, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-space")
        visitor = patient_client(url)
        visitor.predict("blind/touching-circles", "", 5, api_name="/generate_stimulus")
        visitor.predict("openai/gpt-demo", None, None, None, ["as asked"], "", "", api_name="/probe")
    from probes.running.store import Store

    with Store(home / "results.sqlite") as after, Store(tmp_path / "before.sqlite") as then:
        assert after.count() == then.count()
    assert before  # the premise: there was a demo to read


def test_a_reload_keeps_the_visitors_results_and_they_can_take_them_home(serve, page, tmp_path):
    from tests.ui.navigation import open_tab

    url = serve(**PUBLIC)
    page.goto(url)
    page.click("#probe-ask")  # chance and pixels: free, answered at once
    expect(page.locator("#probe-status")).to_contain_text("2 of 2 answered")
    # The Ask's last step names the probe in the address; a reload started before it is aborted
    # by it (net::ERR_ABORTED on a loaded machine): wait for it, as a person sees the link first.
    expect(page.locator("#probe-link")).to_be_visible()  # shown once the address names the probe
    page.goto(url)  # a reload: a new Gradio session, the same visitor
    open_tab(page, "About")
    page.get_by_text("Your results").click()
    page.click("#about-download")
    expect(page.locator("#about-download-note")).to_contain_text("2 results.")
    with page.expect_download() as caught:
        page.locator("#about-my-csv a").first.click()
    text = tmp_path / "mine.csv"
    caught.value.save_as(text)
    rows = list(csv.DictReader(io.StringIO(text.read_text(encoding="utf-8"))))
    assert {row["model"] for row in rows} == {"baseline/chance", "baseline/pixels"} and len(rows) == 2
    assert all(row["benchmark"] == "blind/touching-circles" and row["reply"] for row in rows)
    # Another browser is another visitor: nothing of the first one's.
    other = page.context.browser.new_context()
    try:
        fresh = other.new_page()
        fresh.goto(url)
        open_tab(fresh, "About")
        fresh.get_by_text("Your results").click()
        fresh.click("#about-download")
        expect(fresh.locator("#about-download-note")).to_contain_text("Nothing yet")
    finally:
        other.close()


def test_a_link_to_a_model_of_the_models_file_replays(serve, browser, tmp_path):
    with FakeOpenAIServer(responder=lambda body: "Yes") as lab:
        models_file = tmp_path / "models.toml"
        models_file.write_text(f'[[endpoints]]\nname = "lab"\nbase_url = "{lab.base_url}"\nmodels = ["vlm-1"]\n')
        url = serve(PROBE_MODELS=str(models_file))
        first, second = browser.new_context(), browser.new_context()
        try:
            a = first.new_page()
            a.goto(url)
            choose_model(a, 1, "lab/vlm-1")
            a.click("#probe-ask")
            expect(a.locator("#probe-status")).to_contain_text("the address now replays this probe")
            link = a.locator("#probe-link input, #probe-link textarea").first.input_value()
            sent = lab.request_count
            b = second.new_page()
            b.goto(link)
            expect(b.locator("#probe-status")).to_contain_text("Replayed from the cache: nothing was sent")
            row = b.locator("#probe-grid tbody tr", has_text="lab/vlm-1")
            expect(row.locator("td.right, td.wrong")).to_have_count(1)
            assert lab.request_count == sent == 1
        finally:
            first.close()
            second.close()

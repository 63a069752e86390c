"""What a Space's visitor reads tells the truth at a glance (issue 37): the status line counts each
outcome (answered, answered before, refused by a budget, failed, beyond the model), a refused cell
says in full which budget, whether it refills and what this visitor can do (a key only where a key
box takes one); every answer given before reads the same, wherever it was found; a replayed link
shows a failure that always fails again with its reason; and the small untruths are mended (the
Examples' highlight, an empty upload, a model name that may be wrong, prepare-demo's counts)."""

from __future__ import annotations

import csv
import io
import re

from playwright.sync_api import expect

from tests.conftest import run_cli
from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import screenshot
from tests.ui.test_probe_tab import choose_model, choose_source, tick

ANSWERED_BEFORE = "answered before"
PUBLIC = {"PROBE_PUBLIC": "1", "PROBE_TRUSTED_PROXIES": "0",
          "PROBE_ALLOWED_MODELS": "openai/gpt-x,openai/gpt-demo,openai/gpt-bought"}  # fmt: skip
NO_REFILL = "and it does not refill."
STILL_FREE = "Answers this Space already has, and the offline baselines, still cost nothing."
# Each cell of the grid as a person reads it: its row, column, classes, head and small lines.
CELLS = """() => [...document.querySelectorAll('#probe-grid tbody tr')].flatMap((row) => {
  const heads = [...document.querySelectorAll('#probe-grid thead th.condition')].map((th) => th.childNodes[0].textContent.trim());
  const model = row.querySelector('th.model').textContent.trim();
  return [...row.querySelectorAll('td.cell')].map((td, i) => ({model, condition: heads[i], classes: td.className,
    head: td.querySelector('b')?.textContent.trim() || '',
    sources: [...td.querySelectorAll('.source')].map((s) => s.textContent.trim()),
    advice: td.querySelector('small.advice')?.textContent.trim() || null,
    clipped: [...td.querySelectorAll('small')].some((s) => s.scrollHeight > s.clientHeight + 1
                                                         || s.scrollWidth > s.clientWidth + 1),
    reason: td.querySelector('small.reason')?.textContent.trim() || null,
    text: td.innerText}));
})"""


def models_file(tmp_path, server) -> str:
    path = tmp_path / "models.toml"
    path.write_text(f'[[endpoints]]\nname = "lab"\nbase_url = "{server.base_url}"\nmodels = ["vlm-1"]\n')
    return str(path)


def cells_of(page) -> dict[tuple[str, str], dict]:
    return {(cell["model"], cell["condition"]): cell for cell in page.evaluate(CELLS)}


# --- budgets: counted, and said in full ---------------------------------------------------------------


def test_past_the_budget_the_status_line_counts_each_outcome_and_refused_cells_say_all(serve, page, tmp_path):
    with FakeOpenAIServer(responder=lambda body: "No") as server:
        url = serve(**PUBLIC, PROBE_SESSION_BUDGET="1", OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-space",
                    PROBE_MODELS=models_file(tmp_path, server))  # fmt: skip
        page.goto(url)
        choose_model(page, 2, "openai/gpt-x")
        page.click("#probe-ask")
        status = page.locator("#probe-status")
        expect(status).to_contain_text("3 of 3 answered · the address now replays this probe")
        assert server.request_count == 1  # the whole budget

        # The same probe under one more condition and with a model of the operator's models file:
        # what was asked before is answered for nothing, the rest is past the budget.
        choose_model(page, 3, "lab/vlm-1")
        tick(page, "mirror")  # not "upside down": the first Example's two circles look the same upside down
        page.click("#probe-ask")
        expect(status).to_contain_text("the address now replays this probe")
        expect(status.locator(".probe-status")).to_have_text(
            "5 of 8 answered (2 asked now, 3 answered before, nothing sent) · 3 refused: this session's budget of "
            "1 request is used up (each refused cell says what you can do) · the address now replays this probe"
        )
        assert server.request_count == 1
        cells = cells_of(page)
        refused = {key: cell for key, cell in cells.items() if "refused" in cell["classes"].split()}
        assert set(refused) == {("openai/gpt-x", "mirror"), ("lab/vlm-1", "as asked"), ("lab/vlm-1", "mirror")}
        budget = "Not sent: this session's budget of 1 request on this Space's keys is used up, " + NO_REFILL
        for (model, _), cell in refused.items():
            assert cell["head"] == "⚠ refused"
            if model == "openai/gpt-x":  # a key box takes an OpenAI key: pasting one helps
                assert (
                    cell["advice"]
                    == f"{budget} Paste your own OpenAI key under API keys to ask openai/gpt-x. {STILL_FREE}"
                )
            else:  # the operator's own server: no key of the visitor's can be used, and none is offered
                assert cell["advice"] == (f"{budget} lab/vlm-1 is asked on this Space's own server, where no key of "
                                          f"yours can be used. {STILL_FREE}")  # fmt: skip
                assert "Paste" not in cell["advice"]
            assert not cell["clipped"], cell  # read whole, never cut to "paste your own..."
        screenshot(page, tmp_path, "refused-cells")

        # The same words in the downloads, where the answers came from beside each.
        page.locator("#probe-csv").wait_for()
        with page.expect_download() as caught:
            page.click("#probe-csv")
        rows = list(csv.DictReader(io.StringIO(caught.value.path().read_text(encoding="utf-8"))))
        by_cell = {(row["model"], row["condition"]): row for row in rows}
        for key, cell in cells.items():
            row = by_cell[key]
            if key in refused:
                assert row["verdict"] == "refused" and row["note"] == cell["advice"] and row["source"] == ""
            else:
                assert row["source"] == cell["sources"][0]
        assert {row["source"] for row in rows} == {"asked now", ANSWERED_BEFORE, ""}


def test_the_address_budget_says_when_it_refills_and_a_key_helps_only_where_a_box_takes_one():
    from probes.running.budget import Budget, BudgetExceeded
    from ui.common import refused_words

    now = [0.0]
    budget = Budget(client_limit=2, clock=lambda: now[0])
    budget.take("s1", "10.0.0.1", 1)
    now[0] = 600.0
    budget.take("s1", "10.0.0.1", 1)
    now[0] = 1200.0
    try:
        budget.take("s2", "10.0.0.1", 1)
        raise AssertionError("the address budget was overdrawn")
    except BudgetExceeded as exc:
        refused = exc
    assert refused.refills_in == 2400.0  # the first request leaves the hour's window
    said = refused_words(refused, "anthropic/claude-haiku-4-5")
    assert said == (
        "Not sent: the budget per visitor address and hour of 2 requests on this Space's keys is used up; it has room "
        "again in 40 minutes. Paste your own Anthropic key under API keys to ask anthropic/claude-haiku-4-5 now, or "
        "come back then."
    )
    assert refused_words(refused, "lab/vlm-1").endswith(
        "in 40 minutes. lab/vlm-1 is asked on this Space's own server, where no key of yours can be used: come back then."
    )


# --- answered before, one label; a permanent failure replays with its reason -------------------------


def test_a_link_replays_every_answer_given_before_alike_and_a_permanent_failure_with_its_reason(
    serve, browser, tmp_path
):
    home = tmp_path / "home"
    with FakeOpenAIServer(responder=lambda body: "No") as server:
        # The operator's demo, with an offline baseline that cannot answer without a picture.
        env = {"PROBE_HOME": str(home), "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-operator"}
        done = run_cli("prepare-demo", "--model", "openai/gpt-demo", "--model", "baseline/pixels", "--condition",
                       "as asked", "--condition", "no image", env=env, timeout=600)  # fmt: skip
        # No failure of the demo: the baseline's "no picture" is counted apart, and the exit is clean.
        assert done.returncode == 0, done.stderr
        assert "failed" not in done.stdout + done.stderr, done.stdout + done.stderr
        assert re.search(r"\d+ that baseline/pixels cannot answer \(no picture to read", done.stdout), done.stdout
        url = serve(**PUBLIC, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-space")
        first, second = browser.new_context(), browser.new_context()
        try:
            a = first.new_page()
            a.goto(url)
            choose_model(a, 2, "openai/gpt-demo")  # prepared: from the operator's store
            choose_model(a, 3, "openai/gpt-bought")  # bought now with the Space's key: shared
            tick(a, "no image")
            a.click("#probe-ask")
            status = a.locator("#probe-status")
            expect(status).to_contain_text("the address now replays this probe")
            expect(status).to_contain_text("7 of 8 answered")
            expect(status).to_contain_text("1 cannot be answered by its model")
            seen = cells_of(a)
            failure = seen[("baseline/pixels", "no image")]
            assert failure["head"] == "cannot answer" and "no image" in failure["reason"], failure
            link = a.locator("#probe-link input, #probe-link textarea").first.input_value()
            sent = server.request_count

            b = second.new_page()
            b.goto(link)
            replayed = b.locator("#probe-status")
            expect(replayed.locator(".probe-status")).to_have_text(
                "Replayed from the cache: nothing was sent · 7 of 8 answered (7 answered before, nothing sent) · "
                "1 cannot be answered by its model. Press Ask to ask again."
            )
            shown = cells_of(b)
            # The sharer's reason, not "not in the cache: press Ask".
            assert shown[("baseline/pixels", "no image")]["head"] == "cannot answer"
            assert shown[("baseline/pixels", "no image")]["reason"] == failure["reason"]
            answers = [cell for cell in shown.values() if cell["head"][:1] in "✓✗–"]
            assert len(answers) == 7
            # The demo's, the Space's shared cache and the link's: one label each, the same one.
            assert all(cell["sources"] == [ANSWERED_BEFORE] for cell in answers), answers
            for words in ("demo's cache", "Space's cache", "kept with the link", "not in the cache"):
                expect(b.locator("#probe-grid")).not_to_contain_text(words)
            screenshot(b, tmp_path, "replayed-one-label")
            assert server.request_count == sent
        finally:
            first.close()
            second.close()


# --- the small untruths ----------------------------------------------------------------------------------


def test_generate_takes_the_examples_highlight_away_and_an_empty_upload_says_no_image(serve, page, tmp_path):
    page.goto(serve())
    examples = page.locator("#probe-examples")
    examples.locator("img").nth(3).click()
    expect(page.locator("#probe-item-text")).to_contain_text("squares")
    chosen = examples.locator("button.thumbnail-item.selected, .thumbnail-item.selected")
    expect(chosen).to_have_count(1)  # the Example on stage is marked
    page.click("#probe-generate")
    expect(page.locator("#probe-item-text")).to_contain_text("circles")
    expect(chosen).to_have_count(0)  # another picture is on stage: no Example is marked
    screenshot(page, tmp_path, "generated-no-example-marked")

    choose_source(page, "Upload")
    page.click("#probe-use-upload")
    expect(page.locator("#probe-status")).to_contain_text(
        "no image was chosen: choose one or more under Images, and write a question about them under Question"
    )
    page.locator("#probe-question textarea, #probe-question input").first.fill("Is it round?")
    examples.locator("img").nth(3).click()
    expect(page.locator("#probe-item-text")).to_contain_text("squares")
    expect(chosen).to_have_count(1)
    page.click("#probe-use-upload")
    expect(page.locator("#probe-status .probe-status")).to_have_text(
        "⚠ no image was chosen: choose one or more under Images"
    )
    # Nothing new came on stage: the Example there is still the one marked.
    expect(page.locator("#probe-item-text")).to_contain_text("squares")
    expect(chosen).to_have_count(1)


def test_a_model_name_that_may_be_wrong_is_said_beside_the_key_message(serve, monkeypatch):
    from tests.ui.conftest import patient_client

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    client = patient_client(serve())
    grid = client.predict("openai/gpt4o", "openai/gpt-4o", None, None, ["as asked"], "", "", api_name="/probe")[1]
    reasons = re.findall(r'<small class="reason"[^>]*>(.*?)</small>', grid)
    assert len(reasons) == 2
    misspelt, listed = reasons
    assert "OPENAI_API_KEY" in misspelt and "the name may be wrong (listed: openai/gpt-4o" in misspelt
    assert "OPENAI_API_KEY" in listed and "may be wrong" not in listed  # a listed name is not doubted

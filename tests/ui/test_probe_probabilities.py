"""Answer probabilities on the Probe tab: each cell's small bars (one per answer, in the order the
condition showed them, the chosen one in the cell's colour, the right one's label underlined), the
reply panel's alternatives at the answer token, the downloads, and the replies a shared link keeps.
A model that gives none shows none: never bars made up from its choice."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sqlite3

from playwright.sync_api import expect

from models.types import Output, TokenChoice
from probes.core.types import AnswerKind, Item, Result, Status
from probes.running import link_store as links
from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import screenshot
from tests.ui.test_probe_tab import choose_model
from ui.probe import export as probe_export
from ui.probe.export import Probed
from ui.probe.grid import Cell, chances, grid_html, percent

# What the local server offers at the reply's final answer token: " No" and " no" are both no.
OFFERED = [(" No", 0.80), (" Yes", 0.15), (" no", 0.03), (" maybe", 0.02)]
REPLY = "They do not touch.\nAnswer: No"


def offered(index, token, tokens):
    if index == len(tokens) - 1:
        return [(name, math.log(p)) for name, p in OFFERED]
    return None


def _choice_item() -> Item:
    return Item("t", "lines-1", "Which line is longer?", (), AnswerKind.CHOICE, 0, options=("Top", "Bottom", "Same"))


def _result(item: Item, parsed, probabilities=None, alternatives=None) -> Result:
    return Result(item_id=item.id, benchmark="t", model="openai/x", mode="zero-shot", perturbation="none",
                  status=Status.ANSWERED, reply="Answer: B", parsed=parsed, correct=parsed == item.target,
                  target=item.target, latency=0.5, probabilities=probabilities, probability_mass=0.9,
                  alternatives=alternatives)  # fmt: skip


def test_bars_follow_the_options_as_shown_with_the_chosen_and_the_right_one_marked():
    item = _choice_item()
    result = _result(item, 1, {"0": 0.25, "1": 0.7, "2": 0.05}, ((" B", 0.63), (" A", 0.22)))
    shown = chances(item, result)
    assert [(c.answer, c.text) for c in shown] == list(
        zip(item.labels, item.options, strict=True)
    )  # as the page labels them
    assert [c.p for c in shown] == [0.25, 0.7, 0.05]
    assert [c.chosen for c in shown] == [False, True, False] and [c.right for c in shown] == [True, False, False]
    page = grid_html(item, ["openai/x"], ["as asked"], {("openai/x", "as asked"): Cell("done", result)})
    bars = re.findall(r'<span class="chance([^"]*)" title="([^"]*)" style="--p:([0-9.]+)">', page)
    assert [(kind.strip(), title, float(p)) for kind, title, p in bars] == [
        ("right", "a. Top: 25%", 0.25), ("chosen", "b. Bottom: 70%", 0.7), ("", "c. Same: 5%", 0.05)
    ]  # fmt: skip
    assert '<small class="p-chosen">70%</small>' in page
    assert "At the answer token: &#x27; B&#x27; 63% · &#x27; A&#x27; 22%" in page
    assert "90% of the probability fell on the item's answers" in page


def test_a_model_that_gave_none_shows_no_bars_and_says_so_in_its_reply():
    item = _choice_item()
    page = grid_html(
        item, ["baseline/chance"], ["as asked"], {("baseline/chance", "as asked"): Cell("done", _result(item, 1))}
    )
    assert 'class="chance' not in page and "p-chosen" not in page
    assert "no answer probabilities given" in page


def test_a_count_shows_its_ten_likeliest_answers_in_order():
    item = Item("t", "count", "How many?", (), AnswerKind.NUMBER, 3)
    given = {
        str(n): p
        for n, p in zip(
            range(15),
            [0.01, 0.02, 0.1, 0.4, 0.2, 0.1, 0.05, 0.04, 0.03, 0.02, 0.01, 0.005, 0.005, 0.004, 0.001],
            strict=True,
        )
    }
    shown = chances(item, _result(item, 4, given))
    likeliest = sorted(given, key=lambda key: -given[key])[:10]
    assert [c.answer for c in shown] == sorted(likeliest, key=int)
    assert [c.answer for c in shown if c.chosen] == ["4"] and [c.answer for c in shown if c.right] == ["3"]
    assert percent(0.001) == "<1%" and percent(0.0) == "0%"


def test_the_downloads_carry_the_probabilities_and_the_alternatives():
    item = _choice_item()
    cells = {("openai/x", "as asked"): Cell("done", _result(item, 1, {"0": 0.25, "1": 0.7, "2": 0.05}, (("=B", 0.63),))),
             ("baseline/chance", "as asked"): Cell("done", _result(item, 0))}  # fmt: skip
    probed = Probed(None, item, ["openai/x", "baseline/chance"], ["as asked"], cells, {})
    rows = list(csv.DictReader(io.StringIO(probe_export.csv_text(probed))))
    assert rows[0]["probabilities"] == "a 25% · b 70% · c 5%"
    assert rows[0]["alternatives"] == "'=B' 63%"
    assert rows[1]["probabilities"] == "" and rows[1]["alternatives"] == ""
    probe_export.render(probed)  # the slide draws them in words without failing


def test_a_links_replies_keep_their_probabilities_within_a_bound(tmp_path):
    store = links.LinkStore(tmp_path / "links.sqlite")
    tokens = (TokenChoice(0, "Answer", 0.0, ()), TokenChoice(6, ":", 0.0, ()),
              TokenChoice(7, " No", math.log(0.8), tuple((n, math.log(p)) for n, p in OFFERED)))  # fmt: skip
    short = Output("Answer: No", 0.4, tokens=tokens)
    long_tokens = tuple(TokenChoice(i, " word", -0.1, tuple((f" w{k}", -1.0) for k in range(10))) for i in range(2000))
    long = Output("word " * 2000, 0.4, tokens=long_tokens)
    scored = Output("Yes", 0.2, scores={"yes": 0.9, "no": 0.1})
    store.keep("link-1", [("a", short), ("b", long), ("c", scored)])
    kept = store.cached("link-1", "a")
    assert kept.tokens == short.tokens and kept.text == short.text
    assert store.cached("link-1", "b").tokens is None  # past the bound: the reply alone, no made-up ones
    assert store.cached("link-1", "c").scores == {"yes": 0.9, "no": 0.1}
    assert len(json.dumps(long.probability_fields())) > links.MAX_PROBABILITY_BYTES
    store.close()


def test_a_links_file_kept_before_probabilities_opens_and_keeps_them(tmp_path):
    path = tmp_path / "links.sqlite"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE link_replies (link TEXT NOT NULL, cache_key TEXT NOT NULL, reply TEXT NOT NULL,"
        " latency REAL, created_at REAL NOT NULL, PRIMARY KEY (link, cache_key));"
    )
    old.execute("INSERT INTO link_replies VALUES ('old', 'k', 'Yes', 0.1, strftime('%s','now'))")
    old.commit()
    old.close()
    store = links.LinkStore(path)
    assert store.cached("old", "k").text == "Yes" and store.cached("old", "k").tokens is None
    store.keep("new", [("k", Output("No", 0.1, scores={"yes": 0.2, "no": 0.8}))])
    assert store.cached("new", "k").scores == {"yes": 0.2, "no": 0.8}
    store.close()


CELL_BARS = """(model) => {
  const row = [...document.querySelectorAll('#probe-grid tbody tr')].find((r) => r.querySelector('th.model').textContent.trim() === model);
  return [...row.querySelectorAll('td.cell')].map((td) => ({
    classes: td.className,
    bars: [...td.querySelectorAll('.chance')].map((s) => ({label: s.querySelector('em').textContent, title: s.title,
      kinds: s.className, height: s.querySelector('i').getBoundingClientRect().height})),
    chosen: td.querySelector('.p-chosen') ? td.querySelector('.p-chosen').textContent : null,
  }));
}"""


def test_ask_shows_each_models_answer_probabilities_as_bars_and_its_alternatives(serve, browser, tmp_path):
    for name, viewport in (("desktop", {"width": 1400, "height": 900}), ("phone", {"width": 390, "height": 844})):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        page.set_default_timeout(60_000)
        try:
            with FakeOpenAIServer(responder=lambda body: REPLY, alternatives=offered) as server:
                page.goto(serve(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-server-test"))
                expect(page.locator("#probe-item-text")).to_contain_text("Are the two circles touching")
                choose_model(page, 0, "openai/gpt-sure")
                choose_model(page, 1, "baseline/chance")
                page.click("#probe-ask")
                expect(page.locator("#probe-status")).to_contain_text("2 of 2 answered")
                asked = [r["body"] for r in server.requests]
                assert asked and all(body.get("logprobs") is True for body in asked)  # asked for them
                right = page.locator("#probe-grid .expected b").inner_text().strip()

                sure = page.evaluate(CELL_BARS, "openai/gpt-sure")[0]
                no = sum(p for token, p in OFFERED if token.strip().lower() == "no")
                yes = sum(p for token, p in OFFERED if token.strip().lower() == "yes")
                expected = {"Yes": yes / (yes + no), "No": no / (yes + no)}
                assert [bar["label"] for bar in sure["bars"]] == ["Yes", "No"]
                for bar in sure["bars"]:
                    assert bar["title"] == f"{bar['label']}: {percent(expected[bar['label']])}"
                    assert ("right" in bar["kinds"].split()) == (bar["label"] == right)
                    assert ("chosen" in bar["kinds"].split()) == (bar["label"] == "No")
                heights = {bar["label"]: bar["height"] for bar in sure["bars"]}
                assert heights["No"] > heights["Yes"] * 3  # drawn to scale: 85% against 15%
                assert sure["chosen"] == percent(expected["No"])
                chance = page.evaluate(CELL_BARS, "baseline/chance")[0]
                assert chance["bars"] == [] and chance["chosen"] is None  # gave none: none shown

                cell = page.locator("#probe-grid td.cell").first
                cell.locator("summary").click()
                alternatives = cell.locator("small.alternatives").all_inner_texts()
                assert alternatives[0] == "At the answer token: " + " · ".join(
                    f"{t!r} {percent(p)}" for t, p in OFFERED
                )
                assert any("98% of the probability fell on the item's answers" in line for line in alternatives)
                screenshot(page, tmp_path, f"probe-probabilities-{name}")
                assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"] + 1
        finally:
            context.close()

"""The report's analyses end to end through the command line: paired comparisons checked against
scipy, consistency across every option order and position bias after `rotate-options-all`,
psychometric fits of a swept parameter, and a `--by` group nobody has."""

from __future__ import annotations

import json
import random

import pytest
from scipy.stats import binomtest

from tests.conftest import make_folder, run_cli, shapes_image
from tests.support.fake_servers import FakeOpenAIServer


def choice_folder(root, count: int, options: int, seed: int = 0):
    """`count` multiple-choice items of `options` options each, the answer at a seeded place."""
    rng = random.Random(seed)
    records = [
        {"id": f"q{i}", "image": "shape.png", "question": f"Which word is number {i}?",
         "options": [f"word{i}-{k}" for k in range(options)], "answer": f"word{i}-{rng.randrange(options)}"}
        for i in range(count)
    ]  # fmt: skip
    return make_folder(root, records, {"shape.png": shapes_image("circle")})


def report(store, *args: str) -> list[dict]:
    done = run_cli("report", "--store", str(store), "--format", "json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_always_the_first_label_is_right_one_time_in_k_and_never_consistent(tmp_path):
    folder = choice_folder(tmp_path / "set", count=12, options=3)
    store = tmp_path / "r.sqlite"
    with FakeOpenAIServer(responder=lambda body: "a") as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        done = run_cli("run", f"custom:{folder}", "--model", "openai/first", "--perturb", "rotate-options-all",
                       "--store", str(store), env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert server.request_count == 12 * 3  # every item under each of its three orders
    [row] = report(store, "--consistency")
    assert row["items"] == 12 and row["incomplete"] == 0
    assert row["consistency"] == 0 and row["accuracy"] == pytest.approx(100 / 3, abs=0.01)
    bias = report(store, "--position-bias")
    assert len(bias) == 3  # one per rotation
    for cell in bias:
        first = cell["positions"][0]
        assert first["label"] == "a" and first["chosen_share"] == 1.0 and cell["over_chosen"] == "a"


def test_chance_is_consistent_about_one_time_in_k_to_the_k(tmp_path):
    folder = choice_folder(tmp_path / "set", count=400, options=2, seed=3)
    store = tmp_path / "r.sqlite"
    done = run_cli("run", f"custom:{folder}", "--model", "baseline/chance", "--perturb", "rotate-options-all",
                   "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    [row] = report(store, "--consistency")
    expected, n = 0.5**2, row["items"]
    spread = 4 * 100 * (expected * (1 - expected) / n) ** 0.5
    assert n == 400 and abs(row["consistency"] - 100 * expected) < spread


def test_a_paired_comparison_gives_mcnemars_exact_p_value(tmp_path):
    folder = choice_folder(tmp_path / "set", count=30, options=2, seed=5)
    store = tmp_path / "r.sqlite"
    targets = {}
    for line in (folder / "items.jsonl").read_text().splitlines():
        record = json.loads(line)
        targets[record["question"]] = "ab"[record["options"].index(record["answer"])]

    def always_right(body):
        return targets[next(q for q in targets if q in json.dumps(body))]

    with FakeOpenAIServer(responder=always_right) as right, FakeOpenAIServer(responder=lambda body: "a") as first:
        for server, name in ((right, "right"), (first, "first")):
            env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
            done = run_cli("run", f"custom:{folder}", "--model", f"openai/{name}", "--store", str(store), env=env)
            assert done.returncode == 0, done.stderr
    [row] = report(store, "--compare", "openai/right", "openai/first")
    b_wrong = sum(1 for letter in targets.values() if letter != "a")
    assert (row["n_shared"], row["a_only"], row["b_only"]) == (30, b_wrong, 0)
    assert row["diff"] == pytest.approx(100 * b_wrong / 30, abs=0.01)
    assert row["p_value"] == pytest.approx(binomtest(0, b_wrong, 0.5).pvalue, rel=1e-9)
    assert row["diff_low"] <= row["diff"] <= row["diff_high"]
    mistaken = run_cli("report", "--store", str(store), "--compare", "openai/right", "0-shot")
    assert mistaken.returncode == 2 and "Traceback" not in mistaken.stderr


def test_the_geometry_observer_is_fitted_with_its_point_of_equality_at_zero(tmp_path):
    store = tmp_path / "r.sqlite"
    done = run_cli("run", "illusion/mueller-lyer", "--model", "baseline/pixels", "--limit", "80", "--store",
                   str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    [fit] = report(store, "--fit", "difference")
    assert fit["param"] == "difference" and fit["n"] == 80 and fit["status"] == "separated"
    assert fit["pse_low"] <= 0 <= fit["pse_high"]
    assert {"pse", "pse_low", "pse_high", "slope", "n"} <= set(fit)


def test_a_group_no_result_has_is_named_not_ignored(tmp_path):
    store = tmp_path / "r.sqlite"
    assert run_cli("run", "blind/touching-circles", "--model", "baseline/chance", "--limit", "4", "--store",
                   str(store)).returncode == 0  # fmt: skip
    done = run_cli("report", "--store", str(store), "--by", "thicknes")
    assert done.returncode == 2 and "no result has a group thicknes" in done.stderr and "gap" in done.stderr

"""The texture judgement score (Eq. 1): people's natural / not natural verdicts, stored and averaged."""

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from probes.analysis.scoring import aggregate
from probes.baselines.chance import ChanceBaseline
from probes.benchmarks.shitsukan import judgement
from probes.core.errors import BenchmarkError, NameRejected
from probes.core.registry import get_benchmark
from probes.core.types import ItemRef, Result, Status
from probes.running.runner import RunPlan, run
from tests.conftest import run_cli


def generation(item_id: str, words, status=Status.ANSWERED, model="m/a", mode="0-shot") -> Result:
    return Result("shitsukan/generation", item_id, model, mode, "none", status, parsed=words,
                  groups={"lang": "ja"}, item_ref=ItemRef("shitsukan/generation", item_id, params={"object": "石", "lang": "ja"}))  # fmt: skip


def generated(item_id: str = "stone|ja", model: str = "m/a") -> judgement.Generated:
    return judgement.judgeable([generation(item_id, ["硬い", "冷たい", "重い"], model=model)])[0]


def test_only_well_formed_generations_are_judgeable():
    results = [generation("a|ja", ["x", "y", "z"]), generation("b|ja", None, Status.UNPARSED),
               generation("c|ja", ["x", "y"]), generation("d|ja", ["x", "y", "z"], Status.ERROR)]  # fmt: skip
    [found] = judgement.judgeable(results)
    assert (found.item_id, found.words, found.object, found.lang, found.image) == (
        "a|ja",
        ("x", "y", "z"),
        "石",
        "ja",
        None,
    )
    assert found.key == ("m/a", "0-shot", "none")


def test_a_judgement_scores_its_share_of_natural_words():
    result = judgement.judgement_result(generated(), "Ada", [True, False, True], 2.5)
    assert (result.benchmark, result.item_id, result.model, result.mode) == (
        "shitsukan/judgement",
        "stone|ja|Ada",
        "m/a",
        "0-shot",
    )
    assert result.score == pytest.approx(2 / 3) and result.correct is None
    assert (result.target, result.parsed, result.groups) == (
        ["硬い", "冷たい", "重い"],
        [True, False, True],
        {"judge": "Ada", "lang": "ja"},
    )
    with pytest.raises(BenchmarkError, match="judge all 3 words"):
        judgement.judgement_result(generated(), "Ada", [True], 1.0)
    with pytest.raises(NameRejected, match="letters, digits"):
        judgement.judgement_result(generated(), "A|B", [True, True, True], 1.0)


def test_eq1_is_the_mean_over_judges_and_items_and_a_new_verdict_replaces_the_old(store):
    verdicts = [("stone|ja", "Ada", [True, True, True]), ("stone|ja", "Bo", [True, False, False]),
                ("ball|ja", "Ada", [False, False, False]), ("ball|ja", "Bo", [True, True, False])]  # fmt: skip
    store.record_many([(judgement.judgement_result(generated(i), j, v, 1.0), None, "") for i, j, v in verdicts])
    other = judgement.judgement_result(generated("ball|ja", model="m/b"), "Ada", [True, True, True], 1.0)
    store.record(other)
    key = ("m/a", "0-shot", "none")
    score = judgement.judgement_score(store.results(), key)
    assert (score.value, score.n, score.judges, score.items) == (50.0, 4, 2, 2)  # (3 + 1 + 0 + 2) / 12
    assert judgement.judged_by(store.results(), "Ada", key) == {"stone|ja", "ball|ja"}
    store.record(judgement.judgement_result(generated("ball|ja"), "Ada", [True, True, True], 1.0))  # changed mind
    assert judgement.judgement_score(store.results(), key).value == 75.0  # (3 + 1 + 3 + 2) / 12
    rows = {(r.model, r.group): r for r in aggregate(store.results(), by=["judge"])}
    assert (rows[("m/a", "overall")].accuracy, rows[("m/a", "overall")].n) == (75.0, 4)
    assert rows[("m/a", "judge=Bo")].accuracy == 50.0
    assert judgement.judgement_score([], key).value is None


def test_a_chance_run_on_the_sample_is_judged_and_reported(tmp_path, store):
    benchmark = get_benchmark("shitsukan/generation")
    plan = RunPlan(benchmark, benchmark.items()[:2], [ChanceBaseline()])
    # A thread of its own: after the browser tests, playwright's loop runs in the main thread.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run(plan, store)).result()
    found = judgement.judgeable(store.results("shitsukan/generation"))
    assert len(found) == 2 and all(g.image and g.object for g in found)  # the image the model saw, by path
    store.record(judgement.judgement_result(found[0], "Ada", [True, True, False], 3.0))
    output = run_cli("report", "--store", str(store.path), "--benchmark", "shitsukan/judgement", "--format", "json")
    assert output.returncode == 0, output.stderr
    [row] = [r for r in json.loads(output.stdout) if r["source"] == "measured"]
    assert (row["model"], row["n"], row["accuracy"], row["correct"]) == ("baseline/chance", 1, 66.67, None)

"""`import --from lmms-eval`: samples logs in lmms-eval 0.7's own layout, matched to our items,
graded by our reader, with their scorer's figure beside ours and the replies read differently."""

from __future__ import annotations

import json

import pytest
from datasets import Dataset, Features, Image, Value

from tests.conftest import run_cli, shapes_image
from tests.probes.toolkits.conftest import COMPREHENSION
from tests.support.toolkit_files import blind_sample, illusionvqa_sample, lmms_sample, write_lmms_run


def store_rows(store_path, *args):
    done = run_cli("report", "--store", str(store_path), "--format", "json", "--no-references", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_illusionvqa_log_is_matched_by_doc_id_and_their_exact_match_sits_beside_our_reading(tmp_path, illusionvqa_data):
    replies = {0: "B. Yes.", 1: "The answer is C.", 2: "A staircase"}
    samples = [illusionvqa_sample(i, r["question"], r["options"], r["answer"], replies[i]) for i, r in enumerate(COMPREHENSION)]  # fmt: skip
    assert "resps" in samples[0] and samples[0]["filtered_resps"] == "B"  # the filter kept the letter
    run = write_lmms_run(tmp_path / "out", "Qwen/Qwen2.5-VL-7B-Instruct", "illusionvqa_comprehension", samples)
    store = tmp_path / "s.sqlite"
    done = run_cli("import", str(tmp_path / "out"), "--from", "lmms-eval", "--data", str(illusionvqa_data),
                   "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert (
        "illusionvqa_comprehension -> illusionvqa/comprehension: 3 replies; matched to our items: 3/3 (3 by their doc id)"
        in out
    )
    # Theirs: exact match after their filter (B right; "The answer is C." wrong). Ours reads c.
    assert "their scorer 33.3% (1/3)" in out and "our reader 66.7% (2/3)" in out
    assert "1 replies read differently" in out and "doc 1: theirs wrong, ours right (read 'c')" in out
    assert "imported 3 results as Qwen/Qwen2.5-VL-7B-Instruct (0-shot)" in out
    rows = store_rows(store, "--by", "category")
    overall = next(r for r in rows if r["group"] == "overall")
    assert (overall["model"], overall["n"], overall["correct"]) == ("Qwen/Qwen2.5-VL-7B-Instruct", 3, 2)
    assert {r["group"] for r in rows} >= {"category=Size", "category=Miscellaneous"}  # our items' own groups
    assert run.name == "Qwen__Qwen2.5-VL-7B-Instruct"


def test_a_doc_whose_question_is_not_ours_is_graded_from_the_log_alone(tmp_path, illusionvqa_data):
    other = {"question": "Which way is the staircase going?", "options": ["Up", "Down"], "answer": "Up"}
    samples = [
        illusionvqa_sample(0, COMPREHENSION[0]["question"], COMPREHENSION[0]["options"], "Yes.", "b"),
        illusionvqa_sample(7, other["question"], other["options"], other["answer"], "A"),
    ]
    write_lmms_run(tmp_path / "out", "m", "illusionvqa_comprehension", samples)
    store = tmp_path / "s.sqlite"
    done = run_cli("import", str(tmp_path / "out"), "--from", "lmms-eval", "--data", str(illusionvqa_data),
                   "--model", "mine", "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "matched to our items: 1/2 (1 by their doc id)" in done.stdout
    assert "1 not matched: graded from the file alone" in done.stdout
    assert store_rows(store)[0]["correct"] == 2  # "b" is Yes.; "A" is Up
    done = run_cli("report", "--store", str(store), "--format", "csv")
    assert done.returncode == 0


@pytest.fixture
def release(tmp_path):
    """The BlindTest release (XAI/vlmsareblind) in its schema: rows of the `valid` split."""
    features = Features({"task": Value("string"), "image": Image(), "prompt": Value("string"),
                         "groundtruth": Value("string"), "metadata": Value("string")})  # fmt: skip
    rows = {
        "task": ["Touching Circles", "Touching Circles", "Nested Squares", "Touching Circles"],
        "image": [shapes_image("circle"), shapes_image("square"), shapes_image("square"), shapes_image("circle", 80)],
        "prompt": ["Are the two circles touching each other? Answer with Yes/No.",
                   "Are the two circles overlapping? Answer with Yes/No.",
                   "Count total number of squares in the image. Answer with only the number in numerical format in curly brackets, e.g. {3}.",
                   "Are the two circles touching each other? Answer with Yes/No."],
        "groundtruth": ["Yes", "No", "3", "No"],
        "metadata": ["{}"] * 4,
    }  # fmt: skip
    folder = tmp_path / "vlmsareblind"
    (folder / "data").mkdir(parents=True)
    Dataset.from_dict(rows, features=features).to_parquet(str(folder / "data" / "valid-00000-of-00001.parquet"))
    return folder, rows


def blind_samples(rows, replies):
    return [blind_sample(i, rows["task"][i], rows["prompt"][i], rows["groundtruth"][i], reply)
            for i, reply in replies.items()]  # fmt: skip


def test_vlmsareblind_sub_tasks_land_on_our_release_items_with_their_verdicts(tmp_path, release):
    folder, rows = release
    replies = {0: "Yes.", 1: "No", 2: "I see 2 outer squares and 1 inner one, so {3} in total.", 3: "no"}
    write_lmms_run(tmp_path / "out", "m", "vlmsareblind", blind_samples(rows, replies))
    store = tmp_path / "s.sqlite"
    done = run_cli("import", str(tmp_path / "out"), "--from", "lmms-eval", "--data", str(folder),
                   "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "vlmsareblind -> blind/touching-circles: 3 replies; matched to our items: 3/3 (3 by their doc id)" in out
    assert "vlmsareblind -> blind/nested-squares: 1 replies; matched to our items: 1/1" in out
    # "Yes." is not exactly yes to them; the first number (2) is their count.
    assert "doc 0: theirs wrong, ours right (read 'yes')" in out and "doc 2: theirs wrong, ours right (read 3)" in out
    results = {(r["benchmark"], r["group"]): r for r in store_rows(store)}
    assert results[("blind/touching-circles", "overall")]["correct"] == 3
    assert results[("blind/nested-squares", "overall")]["correct"] == 1
    # The same items as `run blind/... --data` asks: a run of our own pairs with the import.
    done = run_cli("run", "blind/touching-circles", "--data", str(folder), "--model", "baseline/chance",
                   "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    compared = store_rows(store, "--benchmark", "blind/touching-circles", "--compare", "m", "baseline/chance")
    assert compared[0]["n_shared"] == 3


def test_without_the_release_the_replies_are_graded_from_the_log_and_the_note_says_how_to_match(tmp_path, release):
    _, rows = release
    write_lmms_run(tmp_path / "out", "m", "vlmsareblind", blind_samples(rows, {0: "Yes", 2: "{4}"}))
    done = run_cli("import", str(tmp_path / "out"), "--from", "lmms-eval", "--store", str(tmp_path / "s.sqlite"))
    assert done.returncode == 0, done.stderr
    assert "matched to our items: 0/1 (none)" in done.stdout and "pass --data hf" in done.stdout
    assert "their scorer 100.0% (1/1); ours on the same replies 100.0% (1/1)" in done.stdout


def test_lite_docs_are_the_first_hundred_of_each_task(tmp_path, release):
    folder, rows = release
    # vlmsareblind_lite keeps the first 100 rows per task, tasks in order of first appearance:
    # Touching Circles rows 0, 1, 3, then Nested Squares row 2; so lite doc 3 is release row 2.
    samples = [blind_sample(2, rows["task"][3], rows["prompt"][3], rows["groundtruth"][3], "No"),
               blind_sample(3, rows["task"][2], rows["prompt"][2], rows["groundtruth"][2], "{3}")]  # fmt: skip
    write_lmms_run(tmp_path / "out", "m", "vlmsareblind_lite", samples)
    done = run_cli("import", str(tmp_path / "out"), "--from", "lmms-eval", "--data", str(folder),
                   "--store", str(tmp_path / "s.sqlite"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("matched to our items: 1/1 (1 by their doc id)") == 2


def test_failed_requests_are_errors_not_wrong_answers(tmp_path, release):
    _, rows = release
    failed = blind_sample(1, rows["task"][1], rows["prompt"][1], "No", "[LMMS_EVAL_REQUEST_FAILED after 5 retries] 503")
    write_lmms_run(tmp_path / "out", "m", "vlmsareblind", [*blind_samples(rows, {0: "Yes"}), failed])
    store = tmp_path / "s.sqlite"
    done = run_cli("import", str(tmp_path / "out"), "--from", "lmms-eval", "--store", str(store))
    assert done.returncode == 0, done.stderr
    assert "1 requests failed there (no reply)" in done.stdout
    overall = store_rows(store)[0]
    assert (overall["n"], overall["errors"], overall["correct"]) == (1, 1, 1)


def malformed(tmp_path):
    good = lmms_sample(0, "B", "Q?\nA. x\nB. y", "B", "B", {"exact_match": 1.0})
    return {
        "not json": '{"doc_id": 0, "filtered_resps": "B"\n',
        "no doc id": json.dumps({"filtered_resps": "B"}) + "\n",
        "several replies": json.dumps({**good, "filtered_resps": ["A", "B", "C"]}) + "\n",
        "doc twice": (json.dumps(good) + "\n") * 2,
    }


@pytest.mark.parametrize(
    ("case", "message"),
    [("not json", "line 1: not valid JSON"), ("no doc id", "line 1: not an lmms-eval sample: doc_id must be a whole number"),
     ("several replies", "filtered_resps holds a list of 3, not one reply"), ("doc twice", "doc_id 0 appears 2 times")],
)  # fmt: skip
def test_malformed_logs_are_refused_in_one_line(tmp_path, case, message):
    folder = tmp_path / "out" / "m"
    folder.mkdir(parents=True)
    (folder / "20261126_033647_samples_illusionvqa_comprehension.jsonl").write_text(malformed(tmp_path)[case])
    done = run_cli("import", str(tmp_path / "out"), "--from", "lmms-eval", "--model", "m",
                   "--store", str(tmp_path / "s.sqlite"))  # fmt: skip
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "s.sqlite").exists() or store_rows(tmp_path / "s.sqlite") == []


def test_other_refusals_are_one_line_each(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    folder = tmp_path / "out" / "m"
    folder.mkdir(parents=True)
    (folder / "20261126_033647_samples_mmmu_val.jsonl").write_text(
        json.dumps(lmms_sample(0, "B", "Q", "B", "B", {"mmmu_acc": 1})) + "\n"
    )
    broken = tmp_path / "broken" / "m"
    broken.mkdir(parents=True)
    (broken / "20261126_033647_samples_vlmsareblind.jsonl").write_text(
        json.dumps(lmms_sample(0, "Yes", "Q", "Yes", "Yes", {"accuracy": 1.0})) + "\n"
    )
    (broken / "20261126_033647_results.json").write_text("{not json")
    cases = {
        str(empty): "no lmms-eval samples files",
        str(tmp_path / "out"): "task mmmu_val has no benchmark here",
        str(tmp_path / "broken"): "20261126_033647_results.json: not valid JSON",
        str(tmp_path / "nowhere"): "no such file or folder",
    }
    for path, message in cases.items():
        done = run_cli("import", path, "--from", "lmms-eval", "--model", "m", "--store", str(tmp_path / "s.sqlite"))
        assert done.returncode == 2 and message in done.stderr, (path, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1

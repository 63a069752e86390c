"""`import`: replies produced elsewhere, graded by our parser, beside our own runs."""

import json
from pathlib import Path

import pytest

from probes.analysis.scoring import aggregate
from probes.core.registry import get_benchmark
from probes.core.types import Status
from probes.running.importing import RecordError, import_file
from tests.conftest import REPO, make_folder, run_cli, shapes_image

REFERENCE = REPO.parent / "shared" / "reference" / "illusionvqa" / "result_jsons"
OPTIONS = ["No.", "Yes.", "Cannot tell from the image."]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("response", "status", "correct"),
    [("a. No.", Status.ANSWERED, False), ("Yes.", Status.ANSWERED, True), ("b", Status.ANSWERED, True),
     ("The", Status.UNPARSED, False), (".", Status.UNPARSED, False), ("", Status.UNPARSED, False),
     ("I'm sorry, I can't help with that.", Status.REFUSED, False)],
)  # fmt: skip
def test_self_contained_records_grade_with_our_parser(tmp_path, store, response, status, correct):
    path = write_jsonl(tmp_path / "r.jsonl", [{"item_id": 7, "response": response, "target": "Yes.", "options": OPTIONS,
                                                "category": "counting"}])  # fmt: skip
    import_file(path, get_benchmark("illusionvqa/comprehension"), "GPT4V", "4-shot", store)
    [result] = store.results()
    assert (result.status, result.correct) == (status, correct)
    assert result.groups == {"category": "Miscellaneous", "raw_category": "counting"}
    assert (result.model, result.mode, result.item_id) == ("GPT4V", "4-shot", "7")


def test_records_without_target_are_graded_against_local_items(tmp_path, store):
    folder = make_folder(tmp_path / "mine", [{"id": "q1", "image": "c.png", "question": "Round?", "answer": "yes"}],
                         {"c.png": shapes_image("circle")})  # fmt: skip
    path = write_jsonl(tmp_path / "r.jsonl", [{"item_id": "q1", "response": "Yes, it is round."}])
    import_file(path, get_benchmark(f"custom:{folder}"), "notebook", "0-shot", store)
    assert store.results()[0].correct is True
    write_jsonl(path, [{"item_id": "q9", "response": "Yes"}])
    with pytest.raises(RecordError, match="has no item 'q9'"):
        import_file(path, get_benchmark(f"custom:{folder}"), "notebook", "0-shot", store)


@pytest.mark.parametrize(
    ("lines", "message"),
    [(['{"item_id": 1, "response": "a"', ], "r.jsonl line 1: not valid JSON"),
     (['{"item_id": 1}'], "line 1: each record needs item_id and response"),
     (['{"item_id": 1, "response": "a", "target": "x", "options": ["p", "q"]}'], "not one of the options"),
     (['{"item_id": 1, "response": "a", "target": "No.", "options": ["No.", "Yes."]}'] * 2, "appears 2 times")],
)  # fmt: skip
def test_bad_records_are_named(tmp_path, store, lines, message):
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordError, match=message):
        import_file(path, get_benchmark("illusionvqa/comprehension"), "m", "0-shot", store)
    assert store.count() == 0


def test_import_through_the_cli_then_report(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [
        {"item_id": i, "response": reply, "target": "Yes.", "options": OPTIONS, "category": "color"}
        for i, reply in enumerate(["Yes.", "b", "No.", "c"])
    ])  # fmt: skip
    store = tmp_path / "s.sqlite"
    done = run_cli("import", str(path), "--benchmark", "illusionvqa/comprehension", "--model", "elsewhere",
                   "--mode", "4-shot", "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "imported 4 results" in done.stdout
    rows = json.loads(run_cli("report", "--store", str(store), "--format", "json", "--by", "category").stdout)
    measured = {r["group"]: r for r in rows if r["source"] == "measured"}
    assert measured["overall"]["accuracy"] == 50.0 and measured["category=Color"]["n"] == 4
    published = [r for r in rows if r["source"] == "published" and r["group"] == "category=Color"]
    assert published and all("IllusionVQA" in r["paper"] for r in published)
    bad = run_cli("import", str(path), "--benchmark", "illusionvqa/comprehension", "--model", "m", "--mode", "four",
                  "--store", str(store))  # fmt: skip
    assert bad.returncode == 2 and "not a mode label" in bad.stderr and "Traceback" not in bad.stderr


PAPER_TOTALS = [
    ("comprehension", "gemini_gpt4v_comprehension_0shot_4shot_all_results.json", "GPT_0_SHOT", "0-shot", 58.85),
    ("comprehension", "gemini_gpt4v_comprehension_0shot_4shot_all_results.json", "GPT_4_SHOT", "4-shot", 62.99),
    ("comprehension", "gemini_gpt4v_comprehension_0shot_4shot_all_results.json", "GEM_0_SHOT", "0-shot", 51.26),
    ("comprehension", "gemini_gpt4v_comprehension_0shot_4shot_all_results.json", "GEM_4_SHOT", "4-shot", 52.87),
    ("comprehension", "claude_3_5_sonnet_comprehension_0shot.json", "vlm_answer", "0-shot", 59.08),
    ("comprehension", "claude_3_5_sonnet_comprehension_4shot.json", "vlm_answer", "4-shot", 66.44),
    ("comprehension", "internvl2_8B_comprehension.json", "intern_answer", "0-shot", 45.06),
    ("soft-localization", "gemini_gpt4v_sofloc_0shot_4shot_4shotCoT_all_results.json", "GPT_0_SHOT", "0-shot", 40.0),
    ("soft-localization", "gemini_gpt4v_sofloc_0shot_4shot_4shotCoT_all_results.json", "GPT_4_SHOT", "4-shot", 46.0),
    (
        "soft-localization",
        "gemini_gpt4v_sofloc_0shot_4shot_4shotCoT_all_results.json",
        "GPT_4_SHOT_COT",
        "4-shot+CoT",
        49.7,
    ),
    ("soft-localization", "gemini_gpt4v_sofloc_0shot_4shot_4shotCoT_all_results.json", "GEM_0_SHOT", "0-shot", 43.5),
    ("soft-localization", "gemini_gpt4v_sofloc_0shot_4shot_4shotCoT_all_results.json", "GEM_4_SHOT", "4-shot", 41.8),
    (
        "soft-localization",
        "gemini_gpt4v_sofloc_0shot_4shot_4shotCoT_all_results.json",
        "GEM_4_SHOT_COT",
        "4-shot+CoT",
        33.9,
    ),
]


@pytest.mark.skipif(
    not REFERENCE.is_dir(), reason="the papers' reference data (../shared/reference) is not beside the checkout"
)
@pytest.mark.parametrize(("task", "file", "key", "mode", "total"), PAPER_TOTALS)
def test_the_authors_result_files_reproduce_the_papers_totals(tmp_path, store, task, file, key, mode, total):
    """The authors' per-item replies, converted to import records here (never copied into the
    repo), graded by our parser: the paper's totals to two decimals."""
    records = json.loads((REFERENCE / file).read_text(encoding="utf-8"))
    path = write_jsonl(tmp_path / "import.jsonl", [
        {"item_id": r["id"], "response": r.get(key) or "", "target": r["answer"], "options": r["options"],
         "category": r["category"]}
        for r in records
    ])  # fmt: skip
    import_file(path, get_benchmark(f"illusionvqa/{task}"), key, mode, store)
    [overall] = [row for row in aggregate(store.results()) if row.group == "overall"]
    assert overall.n == len(records)
    assert overall.accuracy == total

"""Imports at the store's speed (issues 33, 34): batched, each reply read once per distinct
(reply, item), with a progress line on large imports and the probabilities a log gives kept for
calibration. What is stored is exactly what grading and storing each record on its own stored."""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from probes.asking.perturb import apply as apply_perturbation
from probes.core.registry import get_benchmark
from probes.core.types import Condition, ItemRef, Mode, Origin
from probes.reading.grading import error_result, grade_reply
from probes.running import import_writing
from probes.running.importing import RecordError, import_file, read_records, standalone_item
from probes.running.store import Store
from probes.running.toolkit_import import import_records
from probes.running.toolkit_records import Foreign
from tests.conftest import make_folder, run_cli, shapes_image

OPTIONS = ["No.", "Yes.", "Cannot tell from the image."]
REPLIES = ["Yes.", "b", "a. No.", "The", "", "I'm sorry, I can't help with that.", "Answer: c", "b or c", "Yes."]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def mixed_records(count: int) -> list[dict]:
    """Replies answered, unparsed, refused and hedged; many records describing their item alike
    (and saying the same reply), some with their own question or category, some with
    probabilities."""
    records = []
    for i in range(count):
        record = {"item_id": f"q{i}", "response": REPLIES[i % len(REPLIES)], "target": OPTIONS[i % 2],
                  "options": OPTIONS, "category": ["counting", "color", ""][i % 3]}  # fmt: skip
        if i % 5 == 0:
            record["question"] = f"Is line {i % 4} longer?"
        if i % 4 == 0:
            record["probabilities"] = {"a": 0.2, "b": 0.7, "c": 0.1} if i % 8 else {"Yes.": 0.5, "No.": 0.25}
        records.append(record)
    return records


def stored(path: Path) -> tuple[list[tuple], list[tuple]]:
    """Every result (but the time it was written) and every kept count of the store at `path`."""
    db = sqlite3.connect(path)
    try:
        columns = [
            row[1] for row in db.execute("PRAGMA table_info(results)") if row[1] not in ("created_at", "probabilities")
        ]
        columns.append("probabilities")  # last, where the checks look for it
        results = db.execute(f"SELECT {', '.join(columns)} FROM results ORDER BY benchmark, item_id").fetchall()
        cells = db.execute("SELECT * FROM cells ORDER BY benchmark, grp, model, mode, perturbation, origin").fetchall()
    finally:
        db.close()
    return results, cells


def one_by_one(path: Path, benchmark, model: str, mode: str, store: Store, perturbation: str = "none") -> None:
    """The import as it was: every record graded by grade_reply into a Result, stored by itself."""
    condition = Condition(Mode.parse(mode), perturbation)
    known = {item.id: item for item in benchmark.items()} if benchmark.id.startswith("custom:") else {}
    for number, record in read_records(path):
        if "target" in record:
            item = standalone_item(benchmark, str(record["item_id"]), record, f"line {number}")
        else:
            item = apply_perturbation(benchmark, known[str(record["item_id"])], perturbation)
        ref = replace(ItemRef.of(item, Origin.IMPORT), source_file=path.name)
        result = grade_reply(benchmark, item, record["response"], model, condition, ref)
        if "probabilities" in record:  # kept as they are given (this file's are normalised and named by label)
            given = {str(k).strip(" .").lower(): v for k, v in record["probabilities"].items()}
            by_key = {"a": "0", "b": "1", "c": "2", "no": "0", "yes": "1"}
            p = {"0": 0.0, "1": 0.0, "2": 0.0}
            for name, value in given.items():
                p[by_key[name]] += value
            mass = sum(p.values())
            result.probabilities, result.probability_mass = {k: v / mass for k, v in p.items()}, min(1.0, mass)
        store.record(result)


def test_a_batched_import_stores_exactly_what_grading_each_record_alone_stored(tmp_path, monkeypatch):
    monkeypatch.setattr(import_writing, "BATCH", 7)  # several batches, handed over between threads
    path = write_jsonl(tmp_path / "r.jsonl", mixed_records(60))
    benchmark = get_benchmark("illusionvqa/comprehension")
    with Store(tmp_path / "reference.sqlite") as store:
        one_by_one(path, benchmark, "elsewhere", "4-shot", store)
    with Store(tmp_path / "batched.sqlite") as store:
        summary = import_file(path, benchmark, "elsewhere", "4-shot", store)
    assert summary.imported == 60 and set(summary.statuses) == {"answered", "unparsed", "refused"}
    reference, batched = stored(tmp_path / "reference.sqlite"), stored(tmp_path / "batched.sqlite")
    assert len(reference[0]) == 60 and any(row[-1] for row in reference[0])  # some carry probabilities
    assert batched == reference


def test_items_of_the_benchmark_and_a_perturbation_store_as_before(tmp_path, monkeypatch):
    monkeypatch.setattr(import_writing, "BATCH", 3)
    folder = make_folder(tmp_path / "mine", [
        {"id": f"q{i}", "image": "c.png", "question": "Which shape?", "options": ["circle", "square", "none"],
         "answer": "circle", "category": ["round", "flat"][i % 2]}
        for i in range(8)
    ], {"c.png": shapes_image("circle")})  # fmt: skip
    benchmark = get_benchmark(f"custom:{folder}")
    path = write_jsonl(tmp_path / "r.jsonl", [{"item_id": f"q{i}", "response": ["a", "circle", "b or c", "?"][i % 4]}
                                               for i in range(8)])  # fmt: skip
    for perturbation in ("none", "rotate-options-1"):
        reference, batched = tmp_path / f"reference-{perturbation}.sqlite", tmp_path / f"batched-{perturbation}.sqlite"
        with Store(reference) as store:
            one_by_one(path, benchmark, "m", "0-shot", store, perturbation)
        with Store(batched) as store:
            import_file(path, benchmark, "m", "0-shot", store, perturbation)
        assert stored(batched) == stored(reference)


def foreign(position: int, reply: str, target: str | None = "B", question: str = "Same length?") -> Foreign:
    return Foreign("vlmevalkit", "m_X", f"m_X.tsv row {position + 2}", position, reply, "illusionvqa/comprehension",
                   question, ("No.", "Yes.", "Cannot tell."), target, None, None)  # fmt: skip


def test_a_toolkits_replies_and_failed_requests_store_as_before_over_what_was_there(tmp_path, monkeypatch):
    """Errors are stored as errors, never over a reply already there; a reply replaces an error."""
    monkeypatch.setattr(import_writing, "BATCH", 4)
    records = [foreign(i, reply) for i, reply in enumerate(["B", "Failed to obtain answer via API.", "A", "b or c",
                                                            "C", "Failed to obtain answer via API.", "B", "nothing"])]  # fmt: skip
    benchmark = get_benchmark("illusionvqa/comprehension")
    condition = Condition(Mode.parse("0-shot"), "none")
    # Already stored: a reply to the item whose request fails now, an error for one answered now.
    earlier = [foreign(1, "A"), foreign(2, "Failed to obtain answer via API.")]
    paths = {name: tmp_path / f"{name}.sqlite" for name in ("reference", "batched")}
    for path in paths.values():
        with Store(path) as store:
            import_records(earlier, "m", "0-shot", store, "m_X.tsv")
    with Store(paths["reference"]) as store:
        for record in records:
            fields = {"target": record.target, "question": record.question, "options": list(record.options),
                      "category": None}  # fmt: skip
            item = standalone_item(benchmark, f"vlmevalkit/m_X/{record.position}", fields, record.where)
            ref = replace(ItemRef.of(item, Origin.IMPORT), source_file="m_X.tsv")
            if record.failed:
                result = error_result(item, "m", condition, ref, f"no reply (vlmevalkit): {record.reply[:200]}")
            else:
                result = grade_reply(benchmark, item, record.reply, "m", condition, ref)
            store.record(result)
    with Store(paths["batched"]) as store:
        _, statuses = import_records(records, "m", "0-shot", store, "m_X.tsv")
    assert statuses == {"answered": 4, "unparsed": 2, "error": 2}
    reference, batched = stored(paths["reference"]), stored(paths["batched"])
    assert batched == reference
    by_id = {row[1]: row for row in batched[0]}
    assert by_id["vlmevalkit/m_X/1"][5] == "answered"  # the error did not replace the reply there
    assert by_id["vlmevalkit/m_X/2"][5] == "answered"  # the reply replaced the error


def test_a_bad_line_late_in_a_large_file_stores_nothing(tmp_path, store, monkeypatch):
    monkeypatch.setattr(import_writing, "BATCH", 10)
    records = mixed_records(50) + [{"item_id": "late", "response": "a", "target": "Maybe.", "options": OPTIONS}]
    path = write_jsonl(tmp_path / "r.jsonl", records)
    with pytest.raises(RecordError, match="line 51: target 'Maybe.' is not one of the options"):
        import_file(path, get_benchmark("illusionvqa/comprehension"), "m", "0-shot", store)
    assert store.count() == 0
    write_jsonl(path, [*mixed_records(30), {**mixed_records(1)[0], "probabilities": {"d": 0.5}}])
    with pytest.raises(RecordError, match=r"line 31: probabilities: 'd' is not one answer of this item"):
        import_file(path, get_benchmark("illusionvqa/comprehension"), "m", "0-shot", store)
    assert store.count() == 0


def cli_import(tmp_path: Path, count: int):
    path = write_jsonl(tmp_path / f"r{count}.jsonl", mixed_records(count))
    return run_cli("import", str(path), "--benchmark", "illusionvqa/comprehension", "--model", "m",
                   "--store", str(tmp_path / "s.sqlite"))  # fmt: skip


def test_a_large_import_says_how_far_it_is_and_a_small_one_does_not(tmp_path):
    large = cli_import(tmp_path, 2500)
    assert large.returncode == 0, large.stderr
    assert "imported 2500 results" in large.stdout
    assert "import r2500.jsonl [########################] 2500/2500" in large.stderr  # on stderr, at least its end
    small = cli_import(tmp_path, 40)
    assert small.returncode == 0, small.stderr
    assert "imported 40 results" in small.stdout and "r40.jsonl" not in small.stderr


@pytest.mark.parametrize(
    ("given", "message"),
    [({"a": 0.7, "b": 0.6}, "add up to 1.3, more than 1"), ({"a": 1.5}, "1.5 is not a probability"),
     ({"a": 0.5, "No.": 0.2}, "name the same answer"), ({"a": True}, "not a probability"),
     ({"a": 0.0}, "add up to 0"), ([0.5, 0.5], "must be an object"), ({"maybe": 0.4}, "'maybe' is not one answer")],
)  # fmt: skip
def test_probabilities_that_are_not_probabilities_of_the_items_answers_are_refused(tmp_path, store, given, message):
    path = write_jsonl(tmp_path / "r.jsonl", [{"item_id": 1, "response": "a", "target": "No.", "options": OPTIONS,
                                                "probabilities": given}])  # fmt: skip
    with pytest.raises(RecordError, match=f"line 1: probabilities: .*{message}"):
        import_file(path, get_benchmark("illusionvqa/comprehension"), "m", "0-shot", store)


def report_rows(store: Path, *extra: str) -> list[dict]:
    done = run_cli("report", "--store", str(store), "--format", "json", "--no-references", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_imported_probabilities_show_in_the_reports_calibration(tmp_path):
    """Yes/no items: the probability of the right answer, as the log gave it, normalised over
    yes and no; a record without probabilities stays out of n_prob."""
    records = [
        {"item_id": "a", "response": "Yes", "target": "yes", "probabilities": {"Yes": 0.6, "No": 0.2}},  # p(right) .75
        {"item_id": "b", "response": "No", "target": "yes", "probabilities": {"yes": 0.1, "no": 0.9}},  # .1
        {"item_id": "c", "response": "No", "target": "no", "probabilities": {"no": 1.0}},  # 1.0
        {"item_id": "d", "response": "Yes", "target": "no"},  # none given
    ]
    store = tmp_path / "s.sqlite"
    done = run_cli("import", str(write_jsonl(tmp_path / "r.jsonl", records)), "--benchmark", "blind/touching-circles",
                   "--model", "elsewhere", "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    [row] = [r for r in report_rows(store) if r["group"] == "overall"]
    assert row["n"] == 4 and row["n_prob"] == 3
    assert row["mean_p_right"] == pytest.approx((0.6 / 0.8 + 0.1 + 1.0) / 3)
    [kept] = sqlite3.connect(store).execute("SELECT probabilities FROM results WHERE item_id = 'a'").fetchone()
    kept = json.loads(kept)
    assert kept == {"p": {"yes": pytest.approx(0.75), "no": pytest.approx(0.25)}, "mass": pytest.approx(0.8)}


def test_an_lmms_eval_multiple_choice_log_keeps_its_scores_as_probabilities(tmp_path):
    """A multiple_choice doc has no reply: each option's loss (lmms-eval's models return the
    mean negative log-likelihood, and it takes the smallest). The choice is the likeliest option,
    its probabilities the options' exp(-loss), normalised; their verdict is `acc`."""
    from tests.support.toolkit_files import illusionvqa_input, write_lmms_run

    docs = [
        (["No.", "Yes.", "Cannot tell."], 1, [2.0, 0.5, 3.0], 1.0),  # chooses Yes., right
        (["Up", "Down"], 0, [0.4, 0.2], 0.0),  # chooses Down, wrong
    ]
    samples = []
    for doc_id, (options, gold, losses, acc) in enumerate(docs):
        sample = {"doc_id": doc_id, "target": str(gold), "input": illusionvqa_input(f"Question {doc_id}?", options),
                  "resps": [[[str(loss), "False"]] for loss in losses],
                  "filtered_resps": [[str(loss), str(loss == min(losses))] for loss in losses], "acc": acc}  # fmt: skip
        samples.append(sample)
    write_lmms_run(tmp_path / "out", "llava", "illusionvqa_comprehension", samples)
    store = tmp_path / "s.sqlite"
    done = run_cli("import", str(tmp_path / "out"), "--from", "lmms-eval", "--store", str(store))
    assert done.returncode == 0, done.stderr
    assert "their scorer 50.0% (1/2)" in done.stdout and "our reader 50.0% (1/2)" in done.stdout
    [row] = [r for r in report_rows(store) if r["group"] == "overall"]
    assert (row["n"], row["correct"], row["n_prob"]) == (2, 1, 2)
    first = math.exp(-0.5) / (math.exp(-2.0) + math.exp(-0.5) + math.exp(-3.0))
    second = math.exp(-0.4) / (math.exp(-0.4) + math.exp(-0.2))
    assert row["mean_p_right"] == pytest.approx((first + second) / 2)


def test_an_import_stopped_part_way_keeps_its_batches_and_importing_again_finishes_it(tmp_path, monkeypatch):
    from probes.cli.progress import ImportProgress

    monkeypatch.setattr(import_writing, "BATCH", 10)
    path = write_jsonl(tmp_path / "r.jsonl", mixed_records(35))
    benchmark = get_benchmark("illusionvqa/comprehension")
    shown = ImportProgress("import r.jsonl")

    def stopped_after_the_first_batch(done: int, total: int) -> None:
        shown(done, total)
        if done:
            raise KeyboardInterrupt  # Ctrl-C, heard once the first batch is stored

    with Store(tmp_path / "again.sqlite") as store:
        with pytest.raises(KeyboardInterrupt):
            import_file(path, benchmark, "m", "0-shot", store, progress=stopped_after_the_first_batch)
        assert store.count() == 10
        assert shown.interrupted().startswith("interrupted: 10 of 35 results were stored; import the file again")
        import_file(path, benchmark, "m", "0-shot", store)
    with Store(tmp_path / "once.sqlite") as store:
        import_file(path, benchmark, "m", "0-shot", store)
    assert stored(tmp_path / "again.sqlite") == stored(tmp_path / "once.sqlite")  # nothing counted twice


@pytest.mark.parametrize(
    ("options", "scores", "message"),
    [(["Up", "Down"], ["0.4", "0.2", "0.9"], "3 scores do not fit the item's 2 options"),
     (["Up", "Down"], ["-0.4", "0.2"], "2 scores do not fit the item's 2 options"),  # neither losses nor log-likelihoods
     ([], ["0.4", "0.2"], "read where its input lists its options")],
)  # fmt: skip
def test_scores_that_do_not_fit_the_options_are_refused_before_anything_is_stored(tmp_path, options, scores, message):
    from tests.support.toolkit_files import illusionvqa_input, write_lmms_run

    fine = {"doc_id": 0, "target": "0", "input": illusionvqa_input("Which way?", ["Up", "Down"]),
            "filtered_resps": [["0.1", "True"], ["0.9", "False"]], "acc": 1.0}  # fmt: skip
    prompt = illusionvqa_input("Which way?", options) if options else "Which way?"
    bad = {**fine, "doc_id": 1, "input": prompt, "filtered_resps": [[score, "False"] for score in scores]}
    write_lmms_run(tmp_path / "out", "llava", "illusionvqa_comprehension", [fine, bad])
    store = tmp_path / "s.sqlite"
    done = run_cli("import", str(tmp_path / "out"), "--from", "lmms-eval", "--store", str(store))
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not store.exists() or report_rows(store) == []

"""Our sets out: `generate --format hf` loads with `datasets.load_dataset` with the pictures,
answers and parameters exactly as drawn; `--format lmms-eval` adds a task whose YAML lmms-eval's
loader reads and whose scoring, imported from the written file, reads replies as our reader does."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from datasets import load_dataset

from probes.core.types import AnswerKind, Item, LabelStyle
from probes.files.export import generated_set
from probes.files.hf_export import prompt_layout
from probes.files.set_spec import read_spec
from probes.reading.correctness import is_correct
from probes.reading.parsing import parse_item_reply
from tests.conftest import run_cli
from tests.probes.replies.test_reply_corpus import RECORDS, expected_value

SWEEP = ("illusion/mueller-lyer", {"difference": ["-0.1", "0", "0.1"], "canvas": ["384"]}, 12, 5)


def generate(out: Path, form: str, benchmark: str, params: dict, n: int, seed: int):
    words = [f"--param={name}={','.join(values)}" for name, values in params.items()]
    done = run_cli(
        "generate", benchmark, "--n", str(n), "--seed", str(seed), *words, "--out", str(out), "--format", form
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize(
    "sweep", [SWEEP, ("blind/grid-count", {"canvas": ["500"]}, 6, 2), ("blind/circled-letter", {}, 5, 1)]
)
def test_an_hf_folder_loads_with_the_pictures_answers_and_parameters_as_drawn(tmp_path, sweep):
    benchmark_id, params, n, seed = sweep
    out = tmp_path / "set"
    generate(out, "hf", benchmark_id, params, n, seed)
    benchmark, items = generated_set(benchmark_id, params, n, seed)
    [split] = load_dataset(str(out)).values()
    assert split.num_rows == len(items)
    for row, item in zip(split, items, strict=True):
        assert row["id"] == item.id and row["question"] == item.question and row["benchmark"] == benchmark_id
        assert np.array_equal(np.asarray(row["image"].convert("RGB")), np.asarray(item.images[0].load().convert("RGB")))
        graded = item.target is not None  # equal targets have no right option: kept, without an answer
        assert row["answer"] == (item.target_text() if graded else None) and row["kind"] == item.kind.value
        target = json.loads(row["target"])
        assert (tuple(target) if item.kind is AnswerKind.PAIR and graded else target) == item.target
        if item.kind is AnswerKind.CHOICE and graded:
            assert row["options"] == list(item.options) and row["answer_option"] == item.options[item.target]
        for name, value in item.params.items():
            column = f"param_{name}" if name in ("seed", "id") else name
            assert row[column] == value, (name, row[column], value)  # measured values too, typed
        assert json.loads(row["messages"]) == prompt_layout(benchmark, item)
        assert json.loads(row["groups"]) == dict(item.groups)
    card = (out / "README.md").read_text()
    assert (
        f"- data/{next((out / 'data').glob('test-00000-of-00001-*.parquet')).name}" in card
        and f"python -m probes generate {benchmark_id} --n {n} --seed {seed}" in card
    )
    spec = read_spec(out)
    assert [i.id for i in spec.draw()[1]] == [i.id for i in items]


def test_the_png_format_stays_the_default(tmp_path):
    done = run_cli("generate", "blind/touching-circles", "--n", "2", "--out", str(tmp_path / "png"))
    assert done.returncode == 0, done.stderr
    assert {p.name for p in (tmp_path / "png").iterdir()} == {"00000.png", "00001.png", "metadata.jsonl", "items.jsonl",
                                                              "probe_set.json", ".probe-export.json"}  # fmt: skip


class TaskLoader(yaml.SafeLoader):
    """lmms-eval's YAML loader: `!function utils.name` is `name` from the utils.py beside the YAML."""


def load_task(path: Path) -> dict:
    modules: dict[str, object] = {}

    def function(loader, node):
        module_name, name = loader.construct_scalar(node).rsplit(".", 1)
        if module_name not in modules:
            spec = importlib.util.spec_from_file_location(f"exported_{module_name}", path.parent / f"{module_name}.py")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            modules[module_name] = module
        return getattr(modules[module_name], name)

    TaskLoader.add_constructor("!function", function)
    return yaml.load(path.read_text(), Loader=TaskLoader)


@pytest.fixture
def exported_task(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))  # utils.py puts its folder on the path
    out = tmp_path / "set"
    generate(out, "lmms-eval", *SWEEP)
    [path] = (out / "lmms_eval_task").glob("*.yaml")
    return out, load_task(path), path


def test_the_lmms_eval_task_reads_the_shards_and_asks_our_exact_prompt(exported_task):
    out, task, path = exported_task
    assert task["task"] == path.stem and task["dataset_path"] == "parquet" and task["output_type"] == "generate_until"
    shards = [path.parent / f for f in task["dataset_kwargs"]["data_files"]["test"]]
    assert shards and all(shard.is_file() for shard in shards)  # relative to the YAML: the folder can move
    # the family's design seeds named (its default), so any version draws the same set from it
    params = {**SWEEP[1], "seed": ["0", "1"]}
    assert task["metadata"]["probe_set"] == {"benchmark": SWEEP[0], "params": params, "n": SWEEP[2], "seed": SWEEP[3]}
    docs = task["process_docs"](load_dataset("parquet", data_files=[str(s) for s in shards])["train"])
    benchmark, items = generated_set(*SWEEP)
    gradable = [item for item in items if item.target is not None]
    assert [doc["id"] for doc in docs] == [item.id for item in gradable]  # equal targets left out
    for doc, item in zip(docs, gradable, strict=True):
        [message] = task["doc_to_messages"](doc)
        assert message["role"] == "user" and [p["type"] for p in message["content"]] == ["image", "text"]
        picture = message["content"][0]["url"]
        assert np.array_equal(np.asarray(picture), np.asarray(item.images[0].load().convert("RGB")))
        layout = prompt_layout(benchmark, item)
        assert message["content"][1]["text"] == layout[0]["content"][1]["text"] == task["doc_to_text"](doc)
        assert task["doc_to_target"] == "answer" and doc["answer"] == item.target_text()
    scored = task["process_results"](docs[0], [docs[0]["answer"]])
    assert scored["accuracy"] == 1.0 and scored["probe"]["id"] == docs[0]["id"] and scored["probe"]["correct"]
    summary = [m["aggregation"] for m in task["metric_list"] if m["metric"] == "probe"][0]([scored["probe"]] * 2)
    assert summary == {"items": 2, "correct": 2, "answered": 2}


def corpus_doc(record: dict) -> dict:
    """A corpus reply's item as an exported doc (its answer: the careful reading, where there is one)."""
    kind = AnswerKind(record["kind"])
    value = expected_value(record)
    if value is None:
        value = {AnswerKind.CHOICE: 0, AnswerKind.YES_NO: "yes", AnswerKind.NUMBER: 1, AnswerKind.LETTER: "a",
                 AnswerKind.PAIR: (1, 1)}[kind]  # fmt: skip
    labels = record.get("labels") or ["a"]
    style = {"a": LabelStyle.LETTER, "0": LabelStyle.DIGIT0, "1": LabelStyle.DIGIT1}[labels[0]]
    return {"benchmark": record.get("benchmark") or "corpus", "id": record["id"], "question": record["question"],
            "kind": kind.value, "options": record.get("options", []), "label_style": style.value,
            "target": json.dumps(list(value) if isinstance(value, tuple) else value)}  # fmt: skip


def test_the_exported_scoring_reads_the_reply_corpus_as_our_reader_does(exported_task):
    _, task, path = exported_task
    utils = task["process_results"].__globals__  # the written utils.py, loaded from its file
    assert utils["__file__"] == str(path.parent / "utils.py")
    assert "probe_reader_" in utils["parse_item_reply"].__module__  # the copy beside the task, not ours
    grade, item_of = utils["grade"], utils["item_of"]
    compared = 0
    for record in RECORDS:
        if record.get("rule") == "paper":  # DiscriBench's own regex: not exportable
            continue
        doc = corpus_doc(record)
        item = Item(benchmark=doc["benchmark"], id=doc["id"], question=doc["question"], images=(),
                    kind=AnswerKind(doc["kind"]), target=item_of(doc).target, options=tuple(doc["options"]),
                    label_style=LabelStyle(doc["label_style"]))  # fmt: skip
        parsed = parse_item_reply(record["reply"], item)
        ours = (parsed.status.value, list(parsed.value) if isinstance(parsed.value, tuple) else parsed.value,
                bool(is_correct(item.kind, parsed, item.target)))  # fmt: skip
        assert grade(doc, record["reply"]) == ours, record["where"]
        compared += 1
    assert compared >= 700


def test_benchmarks_with_their_own_rule_are_not_exported_as_lmms_eval_tasks(tmp_path):
    done = run_cli(
        "generate", "shitsukan/generation", "--n", "2", "--out", str(tmp_path / "x"), "--format", "lmms-eval"
    )
    assert done.returncode == 2 and "reads or scores replies its own way" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_tasks_log_comes_back_onto_our_items_with_their_parameters(exported_task, tmp_path):
    from tests.support.toolkit_files import lmms_sample, write_lmms_run

    out, task, path = exported_task
    shards = [str(path.parent / f) for f in task["dataset_kwargs"]["data_files"]["test"]]
    docs = task["process_docs"](load_dataset("parquet", data_files=shards)["train"])
    samples = []
    for doc_id, doc in enumerate(docs):
        reply = ["a", "b", "The answer is (b).", "I cannot tell from this picture."][doc_id % 4]
        metrics = task["process_results"](doc, [reply])
        samples.append(lmms_sample(doc_id, doc["answer"], task["doc_to_text"](doc), reply, reply, metrics))
    # A reply their copy of the reader graded right and ours wrong (a reader that has changed since).
    samples[0]["probe"]["correct"] = not samples[0]["probe"]["correct"]
    write_lmms_run(tmp_path / "log", "vllm-qwen", path.stem, samples)
    store = tmp_path / "s.sqlite"
    done = run_cli("import", str(tmp_path / "log"), "--from", "lmms-eval", "--store", str(store))
    assert done.returncode == 0, done.stderr
    n = len(docs)
    assert f"-> illusion/mueller-lyer: {n} replies; matched to our items: {n}/{n} ({n} by our id)" in done.stdout
    assert "1 replies read differently" in done.stdout and "doc 0: theirs" in done.stdout
    fit = json.loads(run_cli("report", "--store", str(store), "--format", "json", "--fit", "difference").stdout)
    # the items' parameters came back: every reply joins the fit (the unreadable ones counted as excluded)
    assert fit[0]["n"] + fit[0]["excluded"] == n and fit[0]["model"] == "vllm-qwen"

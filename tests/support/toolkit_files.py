"""Files in other toolkits' own layouts, made by the tests.

lmms-eval 0.7 (`lmms_eval/evaluator.py` builds each sample; `loggers/evaluation_tracker.py`
writes it): `OUTPUT/<model>/<date>_samples_<task>.jsonl` and `<date>_results.json`. A sample is
`doc_id`, `doc` (popped before writing), `target`, `arguments` (popped), `resps` (`[[reply]]`),
`filtered_resps` (`[filtered]`), `token_counts`, `doc_hash`, then the task's metrics; on writing,
`input` is set from the first argument, both response lists are flattened when they hold one
request, and `resps` is dropped where it equals the filtered reply.

The verdicts are computed here by the toolkits' own rules (lmms-eval's IllusionVQA filter and
exact match, its vlmsareblind `parse_response`), restated from their source for the tests.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from pathlib import Path
from typing import Any

DATE = "20261126_033647"  # as lmms-eval 0.7.3 names a run (its date_id)
ILLUSIONVQA_PRE = (
    "You'll be given an image, an instruction and some options. You have to select the correct one. Do not "
    "explain your reasoning. Answer with only the letter which corresponds to the correct option. Do not repeat "
    "the entire answer."
)
BLIND_POST = "\nAnswer only in the required format."


def lmms_sample(doc_id: int, target: Any, prompt: str, reply: str, filtered: str, metrics: dict) -> dict:
    """One samples line as evaluation_tracker.save_results_samples writes it."""
    sample = {
        "doc_id": doc_id,
        "doc": {"question": "(popped before writing)"},
        "target": target,
        "arguments": [prompt, {"max_new_tokens": 16}, doc_id, "task", "test"],
        "resps": [[reply]],
        "filtered_resps": [filtered],
        "token_counts": [None],
        "doc_hash": hashlib.sha256(str(doc_id).encode()).hexdigest(),
        **metrics,
    }
    sample["input"] = sample["arguments"][0]
    if isinstance(sample["resps"], list) and len(sample["resps"]) == 1:
        sample["resps"] = sample["resps"][0]
    if isinstance(sample["filtered_resps"], list) and len(sample["filtered_resps"]) == 1:
        sample["filtered_resps"] = sample["filtered_resps"][0]
    if sample["resps"] == sample["filtered_resps"]:
        sample.pop("resps")
    elif (
        isinstance(sample["resps"], list)
        and len(sample["resps"]) == 1
        and sample["resps"][0] == sample["filtered_resps"]
    ):
        sample.pop("resps")
    sample["target"] = str(sample["target"])
    sample.pop("arguments")
    sample.pop("doc")
    return sample


def write_lmms_run(
    output: Path, model: str, task: str, samples: list[dict], config: dict | None = None, n_shot: int = 0
) -> Path:
    """A run's folder: the samples file and the results file beside it; returns the model folder."""
    folder = output / model.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{DATE}_samples_{task}.jsonl").open("a", encoding="utf-8") as handle:
        for sample in samples:
            handle.write(json.dumps(sample, ensure_ascii=False) + "\n")
    results = {"results": {task: {"alias": task}}, "configs": {task: config or {"task": task}},
               "n-shot": {task: n_shot}, "model_name": model, "model_name_sanitized": model.replace("/", "__")}  # fmt: skip
    (folder / f"{DATE}_results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    return folder


def illusionvqa_input(question: str, options: list[str]) -> str:
    """lmms-eval's illusionvqa_doc_to_text: the pre-prompt glued to the question, `A. text` lines."""
    lines = "\n".join(f"{chr(ord('A') + i)}. {option}" for i, option in enumerate(options))
    return f"{ILLUSIONVQA_PRE}{question}\n{lines}"


def illusionvqa_sample(doc_id: int, question: str, options: list[str], answer: str, reply: str) -> dict:
    """Filtered by the task's "flexible-extract" (a reply starting "X." becomes X), scored by
    exact_match with ignore_case and ignore_punctuation."""
    target = chr(ord("A") + options.index(answer))
    match = re.match(r"^\s*([A-Z])\.", reply)
    filtered = match.group(1) if match else reply
    plain = str.maketrans("", "", string.punctuation)
    exact = float(filtered.lower().translate(plain).strip() == target.lower().translate(plain).strip())
    return lmms_sample(doc_id, target, illusionvqa_input(question, options), reply, filtered, {"exact_match": exact})


def blind_sample(doc_id: int, task: str, prompt: str, groundtruth: str, reply: str) -> dict:
    """vlmsareblind_process_results: yes/no must be the whole reply; counts take the first number."""
    response = reply.strip().lower()
    prediction = None
    if task.lower() == "touching circles" and response in ("yes", "no"):
        prediction = response
    elif task.lower() in ("line plot intersections", "subway connections", "olympic counting - circles",
                          "olympic counting - pentagons", "nested squares"):  # fmt: skip
        found = re.search(r"\{?(\d+)\}?", response)
        prediction = found.group(1) if found else None
    correct = prediction is not None and prediction == groundtruth.strip().lower()
    metrics = {"accuracy": float(correct), "accuracy_by_task": {"task": task, "is_correct": correct}}
    return lmms_sample(doc_id, groundtruth, prompt + BLIND_POST, reply, reply, metrics)


def write_vlmevalkit(path: Path, rows: list[dict]) -> Path:
    """A prediction file as vlmeval.smp.dump writes it: csv/tsv quoted throughout, xlsx by pandas."""
    import csv

    import pandas as pd

    table = pd.DataFrame(rows)
    if path.suffix == ".xlsx":
        table.to_excel(path, index=False)
    else:
        table.to_csv(path, sep="\t" if path.suffix == ".tsv" else ",", index=False, encoding="utf-8",
                     quoting=csv.QUOTE_ALL)  # fmt: skip
    return path

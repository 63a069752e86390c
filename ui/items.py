"""Choosing an item to show: from a benchmark, a generated stimulus, or an upload.

An item is remembered between events as a small spec (a dict of plain values, fit for gr.State)
and rebuilt from it: benchmarks are cached, generation is deterministic, uploads stay on disk in
Gradio's own temporary folder.
"""

from __future__ import annotations

import functools
import json
import random
import re
from pathlib import Path
from typing import Any

from PIL import Image

from probes.benchmarks.custom import UploadSet
from probes.core.registry import BenchmarkError, benchmark_ids, get_benchmark
from probes.core.types import AnswerKind, Benchmark, Item

Spec = dict[str, Any]


def generated_ids() -> list[str]:
    return [b for b in benchmark_ids() if b.startswith("blind/")]


@functools.lru_cache(maxsize=32)
def _benchmark(benchmark_id: str, data: str | None, params_json: str) -> Benchmark:
    params = json.loads(params_json) or None
    return get_benchmark(benchmark_id, data=data, params=params)


def benchmark_of(benchmark_id: str, data: str | None = None, params: dict[str, list[str]] | None = None) -> Benchmark:
    return _benchmark(benchmark_id, data or None, json.dumps(params or {}, sort_keys=True))


def parse_params(text: str) -> dict[str, str]:
    """`gap=0.05 canvas=384` (or comma separated) -> {"gap": "0.05", "canvas": "384"}."""
    params = {}
    for token in re.split(r"[\s,;]+", (text or "").strip()):
        if not token:
            continue
        name, sep, value = token.partition("=")
        if not sep or not name or not value:
            raise BenchmarkError(f"parameter {token!r}: write NAME=VALUE, e.g. gap=0.05")
        params[name] = value
    return params


def generated_spec(task: str, params_text: str, seed: int) -> Spec:
    """One stimulus of `task`: the parameters given are fixed; the others are drawn from the
    paper's values with the seed."""
    fixed = parse_params(params_text)
    benchmark = benchmark_of(task)
    known = getattr(benchmark, "params", {})
    unknown = set(fixed) - set(known) - {"prompt"}
    if unknown:
        raise BenchmarkError(f"{task} has no parameter {', '.join(sorted(unknown))}; it has {', '.join(known)}")
    rng = random.Random(f"{task}:{seed}")
    chosen = {
        name: [fixed[name]] if name in fixed else [str(_plain(rng.choice(spec.default)))]
        for name, spec in known.items()
    }
    if "seed" in known and "seed" not in fixed:
        chosen["seed"] = [str(seed)]
    if "prompt" in fixed:
        chosen["prompt"] = [fixed["prompt"]]
    items = benchmark_of(task, params=chosen).items()
    return {"source": "generated", "benchmark": task, "params": chosen, "index": rng.randrange(len(items))}


def benchmark_spec(benchmark_id: str, data: str | None, index: int) -> Spec:
    items = benchmark_of(benchmark_id, data).items()
    if not items:
        raise BenchmarkError(f"{benchmark_id} has no items")
    return {"source": "benchmark", "benchmark": benchmark_id, "data": data or None, "index": int(index) % len(items)}


def upload_spec(paths: list[str], question: str, options_text: str, answer: str) -> Spec:
    options = [line.strip() for line in (options_text or "").splitlines() if line.strip()]
    if not (question or "").strip():
        raise BenchmarkError("write a question for your images")
    UploadSet.from_files([Path(p) for p in paths or []], question, options, answer or "")  # validates now
    return {"source": "upload", "paths": list(paths), "question": question, "options": options, "answer": answer or ""}


def resolve(spec: Spec | None) -> tuple[Benchmark, Item]:
    if not spec:
        raise BenchmarkError("choose an item first: generate a stimulus, pick a benchmark item, or upload images")
    if spec["source"] == "upload":
        benchmark = UploadSet.from_files(
            [Path(p) for p in spec["paths"]], spec["question"], spec["options"], spec["answer"]
        )
        return benchmark, benchmark.items()[0]
    benchmark = benchmark_of(spec["benchmark"], spec.get("data"), spec.get("params"))
    items = benchmark.items()
    return benchmark, items[spec["index"] % len(items)]


def item_count(spec: Spec) -> int:
    return len(resolve(spec)[0].items())


def describe(item: Item) -> tuple[list[Image.Image], str, str]:
    """(images, question with options, answer) for showing an item to a person."""
    images = [source.load() for source in item.images]
    question = item.question
    if item.options:
        question += "\n\n" + "\n".join(
            f"{label}. {text}" for label, text in zip(item.labels, item.options, strict=True)
        )
    if item.target is None:
        answer = "(no answer given: replies are shown, not graded)"
    elif item.kind is AnswerKind.CHOICE:
        answer = f"{item.target_text()}. {item.options[item.target]}"
    else:
        answer = item.target_text()
    return images, question, answer


def _plain(value: Any) -> Any:
    if hasattr(value, "denominator") and not isinstance(value, int):
        return f"{value.numerator}/{value.denominator}"
    return value

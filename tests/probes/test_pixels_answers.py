"""What README says baseline/pixels answers is what it answers (issue 34): its row in the Models
table names the benchmarks (`blind/*`, `illusion/*`); run over a sample of every benchmark that
needs no download, in colour and in grayscale, it answers each of those without an error and
says "does not know this question" to every item of the others, and to nothing else."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

from probes.core.registry import generated_families, get_benchmark
from probes.core.types import Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store

README = Path(__file__).resolve().parents[2] / "README.md"
BUNDLED = ("shitsukan/classification", "shitsukan/generation")  # the benchmarks, besides ours, that need no download
UNKNOWN = "does not know this question"


def claimed() -> tuple[str, ...]:
    row = next(
        line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("| `baseline/pixels`")
    )
    return tuple(re.findall(r"`([a-z]+/)\*`", row))


def test_readme_names_exactly_the_benchmarks_baseline_pixels_answers(tmp_path):
    prefixes = claimed()
    assert prefixes, "README's baseline/pixels row names no benchmarks"
    pixels = create("baseline/pixels")
    answered, refused = set(), set()
    with Store(tmp_path / "results.sqlite") as store:
        for benchmark_id in (*sorted(generated_families()), *BUNDLED):
            benchmark = get_benchmark(benchmark_id)
            items = random.Random(benchmark_id).sample(benchmark.items(), 4)
            for condition in ("none", "grayscale"):
                results = asyncio.run(run(RunPlan(benchmark, items, [pixels], perturbation=condition), store))
                errors = [r.error or "" for r in results if r.status is Status.ERROR]
                if not errors:
                    answered.add(benchmark_id)
                else:
                    assert len(errors) == len(results) and all(UNKNOWN in e for e in errors), (benchmark_id, errors)
                    refused.add(benchmark_id)
    assert not answered & refused
    assert answered == {b for b in (*generated_families(), *BUNDLED) if b.startswith(prefixes)}
    assert refused == {b for b in (*generated_families(), *BUNDLED) if not b.startswith(prefixes)}

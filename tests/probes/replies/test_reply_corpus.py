"""The reply corpus: replies in the styles real models write (terse, verbose, markdown, chain of
thought, `\\boxed{}`, `<think>`, refusals, Japanese), each with the reading a careful person
makes, read through the entry point a run uses.

Each `*.jsonl` record holds the item's context exactly as our benchmarks ask it (`benchmark`,
`question`, `kind`, `options`, `labels`), the `reply`, and the reading: `status` (answered,
unparsed or refused) and `value` (for a choice, the label of the option meant). `case` names the
failure kind it guards (issue 11): self-correction, echoed-template, hedge, sum, predicate,
second-wording, option-text, japanese, refusal, hard-negative, plain. Where a reading is genuinely
ambiguous the record says unparsed. DiscriBench records (`"rule": "paper"`) hold what the paper's
own regex reads, since that benchmark grades as the paper did.

Grow the corpus when a reading is found wrong: add the reply here with the careful reading.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from probes.benchmarks.discribench import PROMPTS as DISCRIBENCH_PROMPTS
from probes.benchmarks.shitsukan.classification import PROMPTS as TEXTURE_PROMPTS
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind, Item, LabelStyle, Parsed, Status
from probes.reading.parsing import parse_item_reply

CORPUS = Path(__file__).parent
CASES = {
    "self-correction", "echoed-template", "hedge", "sum", "predicate", "second-wording", "option-text", "japanese",
    "refusal", "hard-negative", "plain",
}  # fmt: skip
# Benchmarks whose items are generated: a record is read with the benchmark's own item.
GENERATED = {
    "blind/touching-circles", "blind/circled-letter", "blind/line-intersections", "blind/nested-squares",
    "blind/olympic-circles", "blind/olympic-pentagons", "blind/subway-paths", "blind/grid-count",
}  # fmt: skip
SOFT_LOCALIZATION = ("The left object", "The right object", "Both objects", "Neither object")


def load_records() -> list[dict[str, Any]]:
    records = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                record = json.loads(line)
                record["where"] = f"{path.name}:{number}"
                records.append(record)
    return records


RECORDS = load_records()


@cache
def benchmark(benchmark_id: str):
    return get_benchmark(benchmark_id)


@cache
def generated_items(benchmark_id: str) -> dict[str, Item]:
    """The benchmark's own items, one per question wording."""
    return {item.question: item for item in benchmark(benchmark_id).items()}


def item_for(record: dict[str, Any]) -> Item:
    kind = AnswerKind(record["kind"])
    benchmark_id = record.get("benchmark")
    if benchmark_id in GENERATED:
        item = generated_items(benchmark_id).get(record["question"])
        assert item is not None, f"{record['where']}: not one of {benchmark_id}'s own questions"
        assert item.kind is kind
        return item
    labels = record.get("labels", [])
    style = {"a": LabelStyle.LETTER, "0": LabelStyle.DIGIT0, "1": LabelStyle.DIGIT1}[labels[0]] if labels else None
    item = Item(
        benchmark=benchmark_id or "corpus",
        id=record["id"],
        question=record["question"],
        images=(),
        kind=kind,
        target=None,
        options=tuple(record.get("options", ())),
        label_style=style or LabelStyle.LETTER,
    )
    assert item.labels == labels, f"{record['where']}: labels {labels} are not the {style} labels"
    return item


def read(record: dict[str, Any]) -> Parsed:
    """The reading the runner makes: the benchmark's own `parse_reply` on its item."""
    item = item_for(record)
    if record.get("benchmark"):
        return benchmark(record["benchmark"]).parse_reply(record["reply"], item)
    return parse_item_reply(record["reply"], item)


def expected_value(record: dict[str, Any]) -> Any:
    value = record.get("value")
    if record["kind"] == AnswerKind.CHOICE.value and value is not None:
        return record["labels"].index(value)
    if record["kind"] == AnswerKind.PAIR.value and value is not None:
        return tuple(value)
    return value


def test_the_corpus_is_large_and_covers_every_kind_of_failure():
    assert len(RECORDS) >= 400
    ids = [r["id"] for r in RECORDS]
    assert len(ids) == len(set(ids)), "record ids must be unique"
    by_case: dict[str, int] = defaultdict(int)
    for record in RECORDS:
        assert record["case"] in CASES, f"{record['where']}: unknown case {record['case']!r}"
        assert record["status"] in {s.value for s in (Status.ANSWERED, Status.UNPARSED, Status.REFUSED)}
        assert ("value" in record) == (record["status"] == Status.ANSWERED.value), record["where"]
        by_case[record["case"]] += 1
    assert set(by_case) == CASES
    assert all(count >= 10 for count in by_case.values()), dict(by_case)
    for kind in (AnswerKind.YES_NO, AnswerKind.NUMBER, AnswerKind.PAIR, AnswerKind.LETTER, AnswerKind.CHOICE):
        statuses = {r["status"] for r in RECORDS if r["kind"] == kind.value}
        assert statuses == {"answered", "unparsed", "refused"}, (kind, statuses)


def test_every_question_is_asked_as_its_benchmark_asks_it():
    templates = {
        "shitsukan/classification": [p.replace("{object}", "\0") for p in TEXTURE_PROMPTS.values()],
        "discribench": [p.replace("{context}", "\0").replace("{question}", "\0") for p in DISCRIBENCH_PROMPTS.values()],
    }
    for record in RECORDS:
        benchmark_id = record.get("benchmark")
        if benchmark_id in GENERATED:
            item_for(record)  # asserts the question is one of the benchmark's own
        elif benchmark_id in templates:
            patterns = [
                "(?s)" + ".+".join(re.escape(piece) for piece in t.split("\0")) for t in templates[benchmark_id]
            ]
            assert any(re.fullmatch(p, record["question"]) for p in patterns), record["where"]
        elif benchmark_id == "illusionvqa/soft-localization":
            assert record["question"] == "Which object is geometrically impossible?", record["where"]
            assert tuple(record["options"]) == SOFT_LOCALIZATION, record["where"]
        else:
            assert benchmark_id == "illusionvqa/comprehension", record["where"]


def _describe(record: dict[str, Any], parsed: Parsed) -> str:
    got = parsed.status.value + ("" if parsed.value is None else f" {parsed.value!r}")
    wanted = record["status"] + ("" if record.get("value") is None else f" {expected_value(record)!r}")
    return f"    {record['id']} ({record['where']}): {record['reply'][:90]!r}\n        read {got}, a careful reader: {wanted}"


def test_every_reply_reads_as_a_careful_person_reads_it():
    """Zero confident misreads (answered, with a value a careful person would not give), and
    every other reading as the corpus says. Failures are listed by the kind they guard."""
    misreads: dict[str, list[str]] = defaultdict(list)
    missed: dict[str, list[str]] = defaultdict(list)
    for record in RECORDS:
        parsed = read(record)
        wanted = expected_value(record)
        value = tuple(parsed.value) if isinstance(parsed.value, list) else parsed.value
        if parsed.status.value == record["status"] and (parsed.status is not Status.ANSWERED or value == wanted):
            continue
        target = misreads if parsed.status is Status.ANSWERED else missed
        target[record["case"]].append(_describe(record, parsed))
    if misreads or missed:
        lines = [f"{sum(map(len, misreads.values()))} confident misreads, {sum(map(len, missed.values()))} "
                 f"other wrong readings, of {len(RECORDS)} replies"]  # fmt: skip
        for title, failures in (("confident misreads", misreads), ("not read as a careful person reads", missed)):
            for case, found in sorted(failures.items()):
                lines.append(f"  {title}, {case}: {len(found)}")
                lines.extend(found[:8])
        pytest.fail("\n".join(lines))

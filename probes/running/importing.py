"""Replies produced elsewhere (a notebook, another toolkit, a paper's released outputs), graded
by the same parser and scorer as our own runs and stored beside them.

Input is JSON Lines, one record per item: `item_id`, `response` (the raw reply), and, when the
benchmark's items are not available here, `target` (option text or letter, or the answer),
`options` and `category`, so the record grades on its own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from probes.asking.perturb import check as check_perturbation
from probes.core.benchmark import Benchmark
from probes.core.errors import InputRejected
from probes.core.types import AnswerKind, Condition, Item, ItemRef, Mode, Origin, Result, option_labels
from probes.files.jsonl import MAX_OPTION_CHARS, MAX_RESPONSE_CHARS, read_lines, too_long
from probes.reading.grading import grade_reply
from probes.running.store import Store


class RecordError(InputRejected):
    """A record cannot be imported; the message names the file and line."""


@dataclass
class ImportSummary:
    imported: int
    statuses: Counter

    def describe(self) -> str:
        counts = ", ".join(f"{count} {status}" for status, count in sorted(self.statuses.items()))
        return f"imported {self.imported} results ({counts})"


def read_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    records = []
    try:
        for number, record, problem in read_lines(path):
            where = f"{path.name} line {number}"
            if problem is not None:
                raise RecordError(f"{where}: {problem}")
            if not isinstance(record, dict) or "item_id" not in record or "response" not in record:
                raise RecordError(f"{where}: each record needs item_id and response")
            item_id = record["item_id"]
            if not isinstance(item_id, (str, int)) or isinstance(item_id, bool) or str(item_id) == "":
                raise RecordError(f"{where}: item_id must be a non-empty string or number")
            if not isinstance(record["response"], str):
                raise RecordError(f"{where}: response must be the raw reply text")
            if problem := too_long("response", record["response"], MAX_RESPONSE_CHARS):
                raise RecordError(f"{where}: {problem}")
            records.append((number, record))
    except OSError as exc:
        raise RecordError(f"{path}: cannot be read ({exc.strerror})") from None
    if not records:
        raise RecordError(f"{path}: no records")
    return records


def import_file(
    path: Path, benchmark: Benchmark, model: str, mode: str, store: Store, perturbation: str = "none"
) -> ImportSummary:
    """Grade every record of `path` as `model`'s replies under `mode` and `perturbation` (the
    condition they were produced in elsewhere) and store them."""
    condition = Condition(Mode.parse(mode), check_perturbation(perturbation))  # a typo must not make a new column
    records = read_records(path)
    known: dict[str, Item] | None = None
    results: list[Result] = []
    for number, record in records:
        where = f"{path.name} line {number}"
        item_id = str(record["item_id"])
        if "target" in record:
            item = standalone_item(benchmark, item_id, record, where)
        else:
            if known is None:
                known = {item.id: item for item in benchmark.items()}
            if item_id not in known:
                raise RecordError(
                    f"{where}: {benchmark.id} has no item {item_id!r}; give target (and options) in the record"
                )
            item = known[item_id]
        ref = replace(ItemRef.of(item, Origin.IMPORT), source_file=path.name)
        results.append(grade_reply(benchmark, item, record["response"], model, condition, ref))
    ids = Counter(r.item_id for r in results)
    repeated = [item_id for item_id, count in ids.items() if count > 1]
    if repeated:
        raise RecordError(f"{path.name}: item_id {repeated[0]!r} appears {ids[repeated[0]]} times")
    store.record_many([(result, None, "") for result in results])
    return ImportSummary(len(results), Counter(r.status.value for r in results))


def standalone_item(benchmark: Benchmark, item_id: str, record: dict[str, Any], where: str) -> Item:
    """An item built from the record itself: its options, target and category."""
    options = record.get("options")
    category = record.get("category")
    groups = benchmark.groups_for_category(str(category)) if category not in (None, "") else {}
    if options is not None:
        if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
            raise RecordError(f"{where}: options must be a list of at least two strings")
        if len(options) > 26:  # as in custom folders: options are labelled a to z
            raise RecordError(f"{where}: options can hold at most 26 choices")
        for index, option in enumerate(options):
            if problem := too_long(f"options[{index}]", option, MAX_OPTION_CHARS):
                raise RecordError(f"{where}: {problem}")
        target = _option_index(record["target"], options)
        if target is None:
            raise RecordError(f"{where}: target {record['target']!r} is not one of the options (text or letter)")
        return Item(benchmark.id, item_id, "", (), AnswerKind.CHOICE, target, tuple(options), groups=groups)
    target = record["target"]
    try:
        return Item(benchmark.id, item_id, "", (), *_short_target(target), groups=groups)
    except (ValueError, TypeError, OverflowError):  # ["a", "b"] as a pair, null, {"x": 1} ...
        raise RecordError(
            f"{where}: target {target!r} is not an answer (text, a whole number, yes/no or [rows, columns])"
        ) from None


def _short_target(target: Any) -> tuple[AnswerKind, Any]:
    if target is None or isinstance(target, dict):
        raise TypeError
    if isinstance(target, bool) or str(target).strip().lower() in ("yes", "no"):
        return AnswerKind.YES_NO, "yes" if (target is True or str(target).strip().lower() == "yes") else "no"
    if isinstance(target, int) or str(target).strip().isdigit():
        return AnswerKind.NUMBER, int(str(target).strip())
    if isinstance(target, list) and len(target) == 2:
        return AnswerKind.PAIR, (int(target[0]), int(target[1]))
    return AnswerKind.TEXT, str(target).strip()


def _option_index(target: Any, options: list[str]) -> int | None:
    if not isinstance(target, str):
        return None
    if target in options:
        return options.index(target)
    letter = target.strip().lower().rstrip(".)")
    labels = option_labels(len(options))
    return labels.index(letter) if letter in labels else None

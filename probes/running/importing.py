"""Replies produced elsewhere (a notebook, another toolkit, a paper's released outputs), graded
by the same parser and scorer as our own runs and stored beside them.

Input is JSON Lines, one record per item: `item_id`, `response` (the raw reply), and, when the
benchmark's items are not available here, `target` (an option's text or label, or the answer),
`options`, `category` and optionally `question` (its wording helps read replies such as "they do
not overlap"), so the record grades on its own.

A standalone record is built as the benchmark's own items are: its answer kind (circled letter:
a letter; line intersections: a number; grid count: [rows, columns] ...) and its option labels
(IllusionVQA a/b/c, texture classification 0/1/2, DiscriBench 1/2/3/4, whose fixed options
"Image 1".."Image 4" a record may leave out). Replies that name options in another style than
the benchmark's (InstructBLIP's IllusionVQA replies are 1-based digits) are read with
`labels=` (`import --labels digit1`), and a target given as a label is read in that style too.
Categories go through the benchmark's own aliases (`groups_for_category`). A target that is not
a finite number (NaN, Infinity, 1e400) is refused, as `probes.files.jsonl` refuses it anywhere.

A record may carry `probabilities`, {answer: probability} (answers named as replies name them),
kept as a model's are (`probes.reading.probabilities.given_answers`) so calibration reads them.
Every record is checked before anything is stored; then the records are graded and stored a
batch at a time (probes/running/import_writing.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probes.asking.perturb import apply as apply_perturbation
from probes.asking.perturb import check as check_perturbation
from probes.core.benchmark import Benchmark
from probes.core.errors import InputRejected, UsageError
from probes.core.types import AnswerKind, Condition, Item, LabelStyle, Mode, option_labels
from probes.files.jsonl import MAX_OPTION_CHARS, MAX_QUESTION_CHARS, MAX_RESPONSE_CHARS, read_lines, too_long
from probes.reading.probabilities import Probabilities, answer_names, given_answers
from probes.running.import_writing import Grader, Progress, Rows, write
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


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of each record of `path`, checked as it is read (a million lines
    are never all held as dicts); RecordError at the first bad one, or if there is none."""
    read = 0
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
            read += 1
            yield number, record
    except OSError as exc:
        raise RecordError(f"{path}: cannot be read ({exc.strerror})") from None
    if not read:
        raise RecordError(f"{path}: no records")


def import_file(
    path: Path,
    benchmark: Benchmark,
    model: str,
    mode: str,
    store: Store,
    perturbation: str = "none",
    labels: LabelStyle | str | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Grade every record of `path` as `model`'s replies under `mode` and `perturbation` (the
    condition they were produced in elsewhere) and store them. `labels` is how the replies name
    options when that differs from the benchmark's own style (InstructBLIP's IllusionVQA replies
    are 1-based digits where the benchmark asks for letters). Every record is checked before
    anything is stored; then they are graded and stored a batch at a time, `progress` told after
    each (probes/running/import_writing.py)."""
    condition = Condition(Mode.parse(mode), check_perturbation(perturbation))  # a typo must not make a new column
    style = label_style(labels) if labels is not None else None
    entries = _entries(path, benchmark, condition, style)
    ids = Counter(item_id for _, item_id, _, _ in entries)
    if len(ids) < len(entries):
        repeated = next(item_id for item_id, count in ids.items() if count > 1)
        raise RecordError(f"{path.name}: item_id {repeated!r} appears {ids[repeated]} times")
    grader, rows, statuses = Grader(benchmark), Rows(model, condition, path.name), Counter[str]()
    alike = grader.alike_will_do

    def graded() -> Iterator[tuple]:
        for item, item_id, reply, probabilities in entries:
            found = grader.grade(item if alike else item.with_changes(id=item_id), reply)
            statuses[found.status] += 1
            yield rows.reply(item, item_id, reply, found, probabilities)

    write(store, graded(), len(entries), progress)
    return ImportSummary(len(entries), Counter({status.value: count for status, count in statuses.items()}))


# A record's item, its id, its reply and the probabilities it gave (or None).
_Entry = tuple[Item, str, str, Probabilities | None]


def _entries(path: Path, benchmark: Benchmark, condition: Condition, style: LabelStyle | None) -> list[_Entry]:
    """Every record's item, checked (the first bad line is named before anything is stored).
    Records that describe their item alike (target, options, category, question) share one item
    (`Item`s differing only in their id are graded alike: `Grader`)."""
    known: dict[str, Item] | None = None
    alike: dict[tuple, Item] = {}
    names: dict[int, tuple[Item, dict[str, str | None]]] = {}  # what each item's answers are called
    entries: list[_Entry] = []
    for number, record in read_records(path):
        item_id = str(record["item_id"])
        if "target" in record:
            key = _description(record)
            item = alike.get(key) if key is not None else None
            if item is None:
                item = standalone_item(benchmark, item_id, record, f"{path.name} line {number}", style)
                if key is not None:
                    alike[key] = item
        else:
            if known is None:
                known = {item.id: item for item in benchmark.items()}
            if item_id not in known:
                raise RecordError(
                    f"{path.name} line {number}: {benchmark.id} has no item {item_id!r}; give target (and options) "
                    "in the record"
                )
            # The item as that condition showed it: the options in the order shown, the truth of
            # the picture sent (a record's own target is already the truth it was asked under).
            item = apply_perturbation(benchmark, known[item_id], condition.perturbation)
            if style is not None and item.kind is AnswerKind.CHOICE:
                item = item.with_changes(label_style=style)
        given = record.get("probabilities")
        probabilities = None
        if given is not None:
            if names.get(id(item), (None,))[0] is not item:
                names[id(item)] = (item, answer_names(item))
            try:
                probabilities = given_answers(item, given, names[id(item)][1])
            except ValueError as exc:
                raise RecordError(f"{path.name} line {number}: probabilities: {exc}") from None
        entries.append((item, item_id, record["response"], probabilities))
    return entries


_ABSENT = object()
_SCALARS = (str, int, float, bool, type(None))


def _description(record: dict[str, Any]) -> tuple | None:
    """What a standalone record's item is built from (not its id), as a key; None where a part
    cannot be one (that record's item is built on its own). Each value goes with its type: 1,
    1.0 and True are equal keys otherwise."""
    target, options = record.get("target", _ABSENT), record.get("options", _ABSENT)
    category, question = record.get("category", _ABSENT), record.get("question", _ABSENT)
    if type(options) is list:
        if not all(type(option) is str for option in options):
            return None
        options = tuple(options)
    if type(target) is list:
        if not all(type(part) in (str, int) for part in target):
            return None
        target = tuple((type(part), part) for part in target)
    for value in (target, category, question):
        if value is not _ABSENT and type(value) not in _SCALARS and type(value) is not tuple:
            return None
    return type(target), target, type(options), options, type(category), category, type(question), question


def label_style(name: LabelStyle | str) -> LabelStyle:
    """`letter` (a, b, c), `digit0` (0, 1, 2) or `digit1` (1, 2, 3)."""
    try:
        return LabelStyle(str(name).strip().lower())
    except ValueError:
        styles = ", ".join(style.value for style in LabelStyle)
        raise UsageError(f"labels {name!r}: choose one of {styles}") from None


def standalone_item(
    benchmark: Benchmark, item_id: str, record: dict[str, Any], where: str, labels: LabelStyle | None = None
) -> Item:
    """An item built from the record itself (target, options, category, question), with the
    benchmark's own answer kind and option labels, so the reply is read and graded exactly as
    the benchmark's own items are. `labels` overrides the label style (the replies' own)."""
    category = record.get("category")
    groups = benchmark.groups_for_category(str(category)) if category not in (None, "") else {}
    question = record.get("question", "")
    if not isinstance(question, str):
        raise RecordError(f"{where}: question must be text (the item's wording, used to read the reply)")
    if problem := too_long("question", question, MAX_QUESTION_CHARS):
        raise RecordError(f"{where}: {problem}")
    common = dict(benchmark=benchmark.id, id=item_id, question=question, images=(), groups=groups)
    target = record["target"]
    if isinstance(target, float) and not math.isfinite(target):  # read_lines refuses these; a caller may not
        raise RecordError(f"{where}: target {target!r} is not a finite number")
    options = record.get("options")
    if options is None and benchmark.kind in (AnswerKind.CHOICE, None) and benchmark.fixed_options:
        options = list(benchmark.fixed_options)
    if options is not None:
        options = _checked_options(options, where)
        style = labels or benchmark.label_style
        index = _option_index(target, options, style)
        if index is None:
            shown = ", ".join(option_labels(len(options), style))
            raise RecordError(
                f"{where}: target {target!r} is not one of the options (an option's text, or its label: {shown})"
            )
        return Item(kind=AnswerKind.CHOICE, target=index, options=tuple(options), label_style=style, **common)
    if benchmark.kind is AnswerKind.CHOICE:
        raise RecordError(f"{where}: {benchmark.id} is multiple choice: give the item's options in the record")
    kind = benchmark.kind
    try:
        value = _guessed_target(target) if kind is None else (kind, _target_of_kind(kind, target))
    except (ValueError, TypeError, OverflowError):  # ["a", "b"] as a pair, null, {"x": 1} ...
        wanted = KIND_WORDS[kind] if kind else "text, a whole number, yes/no or [rows, columns]"
        raise RecordError(f"{where}: target {target!r} is not an answer of {benchmark.id} ({wanted})") from None
    return Item(kind=value[0], target=value[1], **common)


KIND_WORDS = {
    AnswerKind.NUMBER: "a whole number",
    AnswerKind.YES_NO: "yes or no",
    AnswerKind.LETTER: "a single letter",
    AnswerKind.PAIR: "[rows, columns]",
    AnswerKind.WORDS: "a list of words",
    AnswerKind.TEXT: "text",
}


def _checked_options(options: Any, where: str) -> list[str]:
    if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
        raise RecordError(f"{where}: options must be a list of at least two strings")
    if len(options) > 26:  # as in custom folders: options are labelled a to z
        raise RecordError(f"{where}: options can hold at most 26 choices")
    for index, option in enumerate(options):
        if problem := too_long(f"options[{index}]", option, MAX_OPTION_CHARS):
            raise RecordError(f"{where}: {problem}")
    return options


def _target_of_kind(kind: AnswerKind, target: Any) -> Any:
    """The target as the benchmark's own items hold it; ValueError or TypeError if it is not one."""
    if target is None or isinstance(target, dict):
        raise TypeError
    if kind is AnswerKind.YES_NO:
        if isinstance(target, bool):
            return "yes" if target else "no"
        return _read_text(kind, target)
    if kind is AnswerKind.NUMBER:
        return _whole_number(target)
    if kind is AnswerKind.PAIR:
        if isinstance(target, list):
            if len(target) != 2:
                raise ValueError
            return (_whole_number(target[0]), _whole_number(target[1]))
        if not isinstance(target, str):
            raise TypeError
        return _read_text(kind, target)
    if kind is AnswerKind.LETTER:
        if not isinstance(target, str):
            raise TypeError
        return _read_text(kind, target)
    if kind is AnswerKind.WORDS:
        if not isinstance(target, list) or not target or not all(isinstance(w, str) and w.strip() for w in target):
            raise ValueError
        return tuple(w.strip() for w in target)
    if not isinstance(target, (str, int)) or isinstance(target, bool) or not str(target).strip():
        raise ValueError
    return str(target).strip()


def _read_text(kind: AnswerKind, target: Any) -> Any:
    """A target written as text, as answer keys write them: "Yes", "{3}", "(5, 6)", "5x6", "g"."""
    if not isinstance(target, str):
        raise TypeError
    text = target.strip().strip("{}").strip()
    if kind is AnswerKind.YES_NO:
        word = text.lower().rstrip(".")
        if word not in ("yes", "no"):
            raise ValueError
        return word
    if kind is AnswerKind.PAIR:
        numbers = re.findall(r"\d+", text)
        if len(numbers) != 2:
            raise ValueError
        return (int(numbers[0]), int(numbers[1]))
    if len(text) != 1 or not text.isalnum():  # a letter
        raise ValueError
    return text


def _whole_number(value: Any) -> int:
    if isinstance(value, bool):
        raise TypeError
    if isinstance(value, float):
        if not value.is_integer():  # also NaN and infinities
            raise ValueError
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return int(value.strip().strip("{}").strip())
    raise TypeError


def _guessed_target(target: Any) -> tuple[AnswerKind, Any]:
    """A benchmark whose items differ in kind (a custom folder): the target's shape says."""
    if target is None or isinstance(target, dict):
        raise TypeError
    if isinstance(target, bool) or str(target).strip().lower() in ("yes", "no"):
        return AnswerKind.YES_NO, "yes" if (target is True or str(target).strip().lower() == "yes") else "no"
    if isinstance(target, int) or str(target).strip().isdigit():
        return AnswerKind.NUMBER, int(str(target).strip())
    if isinstance(target, list) and len(target) == 2:
        return AnswerKind.PAIR, (_whole_number(target[0]), _whole_number(target[1]))
    if isinstance(target, (list, float)):
        raise ValueError
    return AnswerKind.TEXT, str(target).strip()


def _option_index(target: Any, options: list[str], style: LabelStyle) -> int | None:
    """The option a target names: its text, or its label in `style`, the labels the replies use
    (a JSON number is a label in a digit style: DiscriBench's answer 2 is its second image)."""
    labels = option_labels(len(options), style)
    if isinstance(target, int) and not isinstance(target, bool) and style is not LabelStyle.LETTER:
        return labels.index(str(target)) if str(target) in labels else None
    if not isinstance(target, str):
        return None
    if target in options:
        return options.index(target)
    label = target.strip().lower().rstrip(".):")
    return labels.index(label) if label in labels else None

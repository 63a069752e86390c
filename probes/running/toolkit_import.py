"""Replies from other toolkits (lmms-eval samples logs, VLMEvalKit prediction files) matched to
our items, graded by our reader and stored beside our own runs; with their scorer's figure beside
ours and the replies the two read differently, because that difference is itself a finding.

Matching, in this order, each checked against what the log says was asked:
- by our id, where the log names it (sets written by `generate --format lmms-eval`): the set is
  drawn again from its description and each item's prompt text compared with the log's input;
- by their doc id / index, where it is the item's place in the data both read (lmms-eval's
  `doc_id` is the row in the task's split: IllusionVQA's test split, the BlindTest release's
  `valid`), kept only if the question, options and answer agree;
- by question and options, where exactly one of our items has them.
A reply that matches none is graded from the file alone (its question, options and answer key)
and stored under an id that says where it came from (`lmms-eval/<task>/<doc_id>`), apart from ours.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from probes.core.benchmark import Benchmark
from probes.core.errors import BenchmarkError, InputRejected
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind, Condition, Item, Mode, Status
from probes.files.hf_export import prompt_layout, prompt_text
from probes.reading.probabilities import from_choice_scores
from probes.running.import_writing import Graded, Grader, Progress, Rows, write
from probes.running.importing import RecordError, standalone_item
from probes.running.store import Store
from probes.running.toolkit_records import LITE_PER_TASK, Foreign

MAX_DIFFERENCES_SHOWN = 10
HOW = {"id": "by our id", "position": "by their doc id", "text": "by question and options"}


@dataclass
class Difference:
    where: str
    position: int | str
    reply: str
    theirs: bool
    ours: bool
    our_reading: str
    their_reading: str | None


@dataclass
class TaskReport:
    toolkit: str
    task: str
    benchmark: str
    replies: int = 0
    matched: Counter = field(default_factory=Counter)
    failed: int = 0
    their_scored: int = 0
    their_correct: int = 0
    our_correct_on_theirs: int = 0
    our_correct: int = 0
    our_graded: int = 0
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def standalone(self) -> int:
        return self.replies - sum(self.matched.values())

    def lines(self) -> list[str]:
        how = ", ".join(f"{count} {HOW[way]}" for way, count in self.matched.items()) or "none"
        total = sum(self.matched.values())
        out = [f"{self.toolkit} {self.task} -> {self.benchmark}: {self.replies} replies; matched to our items: "
               f"{total}/{self.replies} ({how})"]  # fmt: skip
        if self.standalone:
            out.append(f"  {self.standalone} not matched: graded from the file alone, stored as "
                       f"{self.toolkit}/{self.task}/<doc>")  # fmt: skip
        out += [f"  note: {note}" for note in self.notes]
        if self.failed:
            out.append(f"  {self.failed} requests failed there (no reply): stored as errors, left out of n")
        ours = f"our reader {_percent(self.our_correct, self.our_graded)}"
        if self.their_scored:
            theirs = f"their scorer {_percent(self.their_correct, self.their_scored)}"
            same = f"ours on the same replies {_percent(self.our_correct_on_theirs, self.their_scored)}"
            out.append(f"  {theirs}; {same}; {ours}")
            out.append(f"  {len(self.differences)} replies read differently" + (":" if self.differences else ""))
            for d in self.differences[:MAX_DIFFERENCES_SHOWN]:
                theirs_word = "right" if d.theirs else "wrong"
                ours_word = "right" if d.ours else "wrong"
                read = f", theirs read {d.their_reading!r}" if d.their_reading not in (None, d.reply) else ""
                out.append(f"    doc {d.position}: theirs {theirs_word}, ours {ours_word} ({d.our_reading}{read}): "
                           f"{_snippet(d.reply)}")  # fmt: skip
            if len(self.differences) > MAX_DIFFERENCES_SHOWN:
                out.append(f"    ... and {len(self.differences) - MAX_DIFFERENCES_SHOWN} more")
        else:
            out.append(f"  {ours} (the file holds no verdict of theirs)")
        return out


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "n/a (0 graded)"


def _snippet(reply: str, width: int = 80) -> str:
    flat = " ".join(reply.split())
    return repr(flat if len(flat) <= width else flat[: width - 3] + "...")


def import_records(
    records: Sequence[Foreign],
    model: str,
    mode: str,
    store: Store,
    source: str,
    data: str | None = None,
    progress: Progress | None = None,
) -> tuple[list[TaskReport], Counter]:
    """Match, grade and store `records` as `model`'s replies under `mode`; one report per
    (their task, our benchmark), and the stored results' statuses. Every record is matched (and
    checked) before anything is stored; then graded and stored a batch at a time, `progress`
    told after each (probes/running/import_writing.py)."""
    condition = Condition(Mode.parse(mode), "none")
    ours = _OurItems(data)
    reports: dict[tuple[str, str], TaskReport] = {}
    alike: dict[tuple, Item] = {}  # items built from the file alone, by what they are built from
    entries: list[tuple[Foreign, Benchmark, Item, str, TaskReport]] = []
    for record in records:
        key = (record.task, record.benchmark)
        report = reports.get(key) or reports.setdefault(key, TaskReport(record.toolkit, record.task, record.benchmark))
        benchmark, found = ours.find(record, report)
        if found:
            item, how = found
            item_id = item.id
            report.matched[how] += 1
        else:
            item, item_id = _standalone(benchmark, record, alike), _standalone_id(record)
        if record.scores is not None and from_choice_scores(item, record.scores) is None:
            raise RecordError(
                f"{record.where}: {len(record.scores)} scores do not fit the item's {len(item.options)} options "
                "(one loss or log-likelihood per option, all of one kind)"
            )
        report.replies += 1
        entries.append((record, benchmark, item, item_id, report))
    keys = Counter((item.benchmark, item_id) for _, _, item, item_id, _ in entries)
    if len(keys) < len(entries):
        twice = next(key for key, count in keys.items() if count > 1)
        raise InputRejected(f"{source}: {twice[0]} item {twice[1]!r} is answered {keys[twice]} times in these files")
    rows, statuses = Rows(model, condition, source), Counter[str]()
    graders: dict[str, Grader] = {}

    def graded() -> Iterator[tuple]:
        for record, benchmark, item, item_id, report in entries:
            if record.failed:
                report.failed += 1
                statuses[Status.ERROR.value] += 1
                yield rows.error(item, item_id, f"no reply ({record.toolkit}): {record.reply[:200]}")
                continue
            grader = graders.get(benchmark.id) or graders.setdefault(benchmark.id, Grader(benchmark))
            probabilities = None
            if record.scores is not None:
                probabilities = from_choice_scores(item, record.scores)
                if probabilities is None:  # checked in the first pass: never here
                    raise InputRejected(f"{record.where}: its scores do not fit the item's options")
                chosen = max(probabilities.p, key=probabilities.p.__getitem__)
                result = grader.chosen(item, int(chosen))
            else:
                result = grader.grade(item if grader.alike_will_do else item.with_changes(id=item_id), record.reply)
            statuses[result.status.value] += 1
            _tally(report, record, result, item)
            yield rows.reply(item, item_id, record.reply, result, probabilities)

    write(store, graded(), len(entries), progress)
    return list(reports.values()), statuses


def _tally(report: TaskReport, record: Foreign, result: Graded, item: Item) -> None:
    if result.correct is None:
        return
    report.our_graded += 1
    report.our_correct += result.correct
    if record.their_correct is None:
        return
    report.their_scored += 1
    report.their_correct += record.their_correct
    report.our_correct_on_theirs += result.correct
    if record.their_correct != result.correct:
        reading = result.status.value if result.status is not Status.ANSWERED else f"read {_shown(result, item)!r}"
        report.differences.append(Difference(record.where, record.position, record.reply, record.their_correct,
                                             result.correct, reading, record.their_reading))  # fmt: skip


def _shown(result: Graded, item: Item):
    """A parsed answer as the reply would name it: an option by its label."""
    if item.kind is AnswerKind.CHOICE and isinstance(result.parsed, int) and 0 <= result.parsed < len(item.labels):
        return item.labels[result.parsed]
    return result.parsed


def _standalone(benchmark: Benchmark, record: Foreign, alike: dict[tuple, Item] | None = None) -> Item:
    """The item as the file describes it, read as the benchmark reads its own items (one item
    for the records that describe it alike, in `alike`: only its id would differ)."""
    key = (benchmark.id, record.target, record.question, record.category, record.options)
    found = alike.get(key) if alike is not None else None
    if found is None:
        fields = {"target": record.target, "question": record.question, "category": record.category}
        if record.options:
            fields["options"] = list(record.options)
        if fields["target"] is None:
            raise RecordError(f"{record.where}: no answer key (target) to grade against, and no item of ours matched")
        found = standalone_item(benchmark, _standalone_id(record), fields, record.where)
        if alike is not None:
            alike[key] = found
    return found


def _standalone_id(record: Foreign) -> str:
    return f"{record.toolkit}/{record.task}/{record.position}"


class _OurItems:
    """Our benchmarks and their items, loaded once each, indexed for matching."""

    def __init__(self, data: str | None):
        self.data = data
        self.benchmarks: dict[str, Benchmark] = {}
        self.indexes: dict[Hashable, _Index | None] = {}
        self.notes: dict[Hashable, str] = {}

    def find(self, record: Foreign, report: TaskReport) -> tuple[Benchmark, tuple[Item, str] | None]:
        source = _source(record)
        if source not in self.indexes:
            self.indexes[source] = self._load(record)
        index = self.indexes[source]
        benchmark = index.benchmark if index else self._benchmark(record.benchmark)
        if source in self.notes and self.notes[source] not in report.notes:
            report.notes.append(self.notes[source])
        return benchmark, index.match(record) if index else None

    def _benchmark(self, benchmark_id: str) -> Benchmark:
        if benchmark_id not in self.benchmarks:
            self.benchmarks[benchmark_id] = get_benchmark(benchmark_id)
        return self.benchmarks[benchmark_id]

    def _load(self, record: Foreign) -> _Index | None:
        source = _source(record)
        try:
            if record.spec is not None:
                benchmark, items = record.spec.draw()
                # A log naming our ids is matched by id; a table of the set by its rows' places.
                return _Index(benchmark, items, by_place=record.item_id is None)
            if record.benchmark.startswith("blind/") and self.data is None:
                self.notes[source] = ("their docs are the paper's release (XAI/vlmsareblind): pass --data hf, or a "
                                      "local copy, to match them to its items here")  # fmt: skip
                return None
            benchmark = get_benchmark(record.benchmark, data=self.data)
            return _Index(benchmark, benchmark.items(), by_place=True)
        except BenchmarkError as exc:
            self.notes[source] = f"our items could not be loaded, so none is matched: {exc}"
            return None


def _source(record: Foreign) -> Hashable:
    """Where the record's items come from: a set drawn from its description, or a benchmark."""
    spec = record.spec
    if spec is None:
        return record.benchmark
    return (
        spec.benchmark,
        tuple(sorted((name, tuple(values)) for name, values in spec.params.items())),
        spec.n,
        spec.seed,
    )


class _Index:
    def __init__(self, benchmark: Benchmark, items: Sequence[Item], by_place: bool):
        self.benchmark = benchmark
        self.by_id = {item.id: item for item in items}
        rows = [item.params.get("release_row") for item in items]
        released = all(isinstance(row, int) for row in rows) and bool(rows)
        # lmms-eval's doc_id is the doc's row in the split: the release's row for BlindTest
        # items, the place in the split for the others.
        self.by_place = (
            {} if not by_place else dict(zip(rows, items, strict=True)) if released else dict(enumerate(items))
        )
        self.lite = _lite_rows(benchmark) if released else None
        self.by_text: dict[tuple, list[Item]] = {}
        for item in items:
            self.by_text.setdefault(_text_key(item.question, item.options), []).append(item)
        # Our questions by length, longest first: the one a question of theirs ends with is found
        # by one look per length, not by a pass over every item for every row.
        lengths: dict[int, set[str]] = {}
        for question, _ in self.by_text:
            if question:
                lengths.setdefault(len(question), set()).add(question)
        self.questions = sorted(lengths.items(), reverse=True)
        self.alike: dict[tuple, Item] = {}  # their answer keys read as items, for `_agrees`

    def match(self, record: Foreign) -> tuple[Item, str] | None:
        if record.item_id is not None:
            item = self.by_id.get(record.item_id)
            if item is not None and (not record.question or _same(record.question, _asked(self.benchmark, item))):
                return item, "id"
            return None
        place = record.position
        if record.sampled == "lite" and self.lite is not None and isinstance(place, int):
            place = self.lite[place] if place < len(self.lite) else None
        item = self.by_place.get(place)
        if item is not None and _agrees(self.benchmark, record, item, self.alike):
            return item, "position"
        if record.question:
            found = self.by_text.get(_text_key(self.tail(record.question), record.options), [])
            if len(found) == 1 and _agrees(self.benchmark, record, found[0], self.alike):
                return found[0], "text"
        return None

    def tail(self, question: str) -> str:
        """Their question without an instruction glued before it: the longest of our questions
        it ends with (lmms-eval's IllusionVQA prompt is the instruction, then the question,
        unspaced)."""
        theirs = _norm(question)
        for length, ours in self.questions:
            if length <= len(theirs) and theirs[len(theirs) - length :] in ours:
                return theirs[len(theirs) - length :]
        return question


def _lite_rows(benchmark: Benchmark) -> list[int] | None:
    """vlmsareblind_lite's docs as release rows: the first 100 rows of each task, tasks in the
    order they first appear (lmms-eval's `vlmsareblind_sample_100_per_task`)."""
    rows = getattr(benchmark, "rows", None)
    if rows is None:
        return None
    chosen: dict[str, list[int]] = {}
    for index, task in enumerate(rows["task"]):
        kept = chosen.setdefault(str(task), [])
        if task and len(kept) < LITE_PER_TASK:
            kept.append(index)
    return [row for kept in chosen.values() for row in kept]


def _asked(benchmark: Benchmark, item: Item) -> str:
    return prompt_text(prompt_layout(benchmark, item))


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _same(theirs: str, ours: str) -> bool:
    return _norm(theirs) == _norm(ours)


def _text_key(question: str, options: Sequence[str]) -> tuple:
    return (_norm(question), tuple(_norm(o) for o in options))


def _agrees(benchmark: Benchmark, record: Foreign, item: Item, alike: dict[tuple, Item] | None = None) -> bool:
    """Whether the record asks this item: its question ends with ours, its options are ours,
    and its answer key names our answer."""
    if record.question and not _norm(record.question).endswith(_norm(item.question)):
        return False
    if record.options and tuple(map(_norm, record.options)) != tuple(map(_norm, item.options)):
        return False
    if record.target is None:
        return True
    try:
        theirs = _standalone(benchmark, replace(record, options=record.options or item.options), alike)
    except (RecordError, InputRejected):
        return False
    if item.kind is AnswerKind.CHOICE or theirs.kind is AnswerKind.CHOICE:
        return theirs.target == item.target
    return theirs.target == item.target or str(theirs.target).casefold() == str(item.target).casefold()

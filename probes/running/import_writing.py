"""Imports at the store's speed: replies graded as `probes.reading.grading.grade_reply` grades
them and stored as `Store.record_many` stores them, without a `Result` made for each.

- Reading: a reply is read and graded once per distinct (reply, what the benchmark's reading and
  grade look at): logs repeat their short replies ("Yes", "B") over and over. That is only done
  for benchmarks that read and grade as every benchmark does by default (`Benchmark.parse_reply`
  and `Benchmark.grade`, pure functions of the reply and those fields of the item); others read
  every reply.
- Rows: what the results of one item share (its target, groups, reference) is encoded once; a row
  is that plus the reply and its grade (`Rows`).
- Writing: BATCH rows per transaction (other writers wait for one batch, never for the import), a
  batch moved into the store by a thread of its own while the next one is graded
  (`Store.commit_staged`), the store's connection tuned for it meanwhile (`Store.bulk`).

An import checks every record before the first batch is written (the caller's first pass), so a
bad line still stores nothing; an import stopped part way (Ctrl-C, a full disk) keeps the batches
written, and importing the file again replaces them (one result per cell and item).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from probes.core.benchmark import Benchmark
from probes.core.types import Condition, Item, ItemRef, Origin, Parsed, Status, jsonable
from probes.reading.probabilities import Probabilities
from probes.running.store import Store

BATCH = 10_000  # results per transaction: another writer waits for one batch (a second or so on an idle machine)
MEMO_BOUND = 200_000  # distinct replies remembered at once (a log of long, distinct replies gains nothing)
SHARED_BOUND = 20_000  # items whose shared columns are kept encoded at once
Progress = Callable[[int, int], None]  # (results written, results in all), after each batch


class Graded(NamedTuple):
    status: Status
    parsed: Any  # as stored (tuples as lists)
    correct: bool | None
    score: float | None
    ungraded: str | None
    stored: tuple[str, str, int | None, float | None]  # status, parsed, correct, score as the store's columns hold them


class Grader:
    """`grade_reply`'s reading and grade of a reply to an item, remembered where that is safe."""

    def __init__(self, benchmark: Benchmark):
        self.benchmark = benchmark
        kind = type(benchmark)
        self._plain = kind.parse_reply is Benchmark.parse_reply and kind.grade is Benchmark.grade
        self._memo: dict[tuple, Graded] = {}

    @property
    def alike_will_do(self) -> bool:
        """Whether an item alike but for its id grades a reply as the item itself does (a
        benchmark that reads or grades in its own way is given the item itself)."""
        return self._plain

    def grade(self, item: Item, reply: str) -> Graded:
        """The grade of `reply` to `item` (whose id is not looked at: items alike but for their
        id share it)."""
        if not self._plain:
            return self._graded(item, self.benchmark.parse_reply(reply, item))
        # What the default reading (kind, options, labels, question) and grade (kind, target) see.
        key = (reply, item.kind, item.options, item.label_style, item.question, item.target, item.ungraded_because)
        try:
            found = self._memo.get(key)
        except TypeError:  # a target that cannot be a key (a list): read every time
            return self._graded(item, self.benchmark.parse_reply(reply, item))
        if found is None:
            if len(self._memo) >= MEMO_BOUND:
                self._memo.clear()
            found = self._memo[key] = self._graded(item, self.benchmark.parse_reply(reply, item))
        return found

    def chosen(self, item: Item, index: int) -> Graded:
        """The grade of an answer chosen without a reply to read (an option scored most likely)."""
        return self._graded(item, Parsed(index, Status.ANSWERED))

    def _graded(self, item: Item, parsed: Parsed) -> Graded:
        correct, score = self.benchmark.grade(item, parsed)
        value = jsonable(parsed.value)
        ungraded = item.ungraded_because if correct is None and score is None else None
        stored = (parsed.status.value, json.dumps(value), None if correct is None else int(correct), score)
        return Graded(parsed.status, value, correct, score, ungraded, stored)


@dataclass(frozen=True)
class _Shared:
    """What every result of one item (or of items alike but for their id) has in common, encoded
    as `Store.record_many` encodes it."""

    benchmark: str
    target: str
    groups: str
    ref: tuple[str, str] | dict[str, Any]  # the reference's JSON around its item id, or its dict


_ID = "\x00item-id\x00"  # stands for the item id in a reference encoded once


class Rows:
    """Result rows in `RESULT_COLUMNS`' order, for `model`'s replies under `condition`."""

    def __init__(self, model: str, condition: Condition, source_file: str):
        self.model, self.mode, self.perturbation = model, condition.mode.label, condition.perturbation
        self.source_file = source_file
        self._shared: dict[int, tuple[Item, _Shared]] = {}

    def reply(self, item: Item, item_id: str, reply: str, graded: Graded, probabilities: Probabilities | None) -> tuple:
        shared = self._of(item)
        status, parsed, correct, score = graded.stored
        kept = json.dumps({"p": probabilities.p, "mass": probabilities.mass}) if probabilities is not None else None
        return (shared.benchmark, item_id, self.model, self.mode, self.perturbation, status, reply, parsed, correct,
                score, shared.target, None, None, None, None, None, None, shared.groups, _ref(shared, item_id),
                time.time(), _IMPORT, graded.ungraded, kept)  # fmt: skip

    def error(self, item: Item, item_id: str, message: str) -> tuple:
        """No reply at all (a request that failed there): stored as an error, as `error_result`."""
        shared = self._of(item)
        return (shared.benchmark, item_id, self.model, self.mode, self.perturbation, _ERROR, None, "null", None, None,
                shared.target, None, None, None, message, None, None, shared.groups, _ref(shared, item_id),
                time.time(), _IMPORT, None, None)  # fmt: skip

    def _of(self, item: Item) -> _Shared:
        found = self._shared.get(id(item))
        if found is not None and found[0] is item:
            return found[1]
        ref = replace(ItemRef.of(item, Origin.IMPORT), source_file=self.source_file).as_dict()
        encoded = json.dumps(ref | {"item_id": _ID}, sort_keys=True, default=str)
        marker = json.dumps(_ID)
        around = encoded.split(marker) if encoded.count(marker) == 1 else None
        shared = _Shared(
            item.benchmark,
            json.dumps(jsonable(item.target)),
            json.dumps(dict(item.groups), sort_keys=True),
            (around[0], around[1]) if around else ref,
        )
        if len(self._shared) >= SHARED_BOUND:  # a file of a million distinct items shares nothing
            self._shared.clear()
        self._shared[id(item)] = (item, shared)
        return shared


_IMPORT, _ERROR = Origin.IMPORT.value, Status.ERROR.value


def _ref(shared: _Shared, item_id: str) -> str:
    if isinstance(shared.ref, tuple):
        return shared.ref[0] + _quoted(item_id) + shared.ref[1]
    return json.dumps(shared.ref | {"item_id": item_id}, sort_keys=True, default=str)


def _quoted(text: str) -> str:
    """`json.dumps(text)`: plain ASCII (no quote, backslash or control character) is only quoted."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return json.dumps(text)


def write(store: Store, rows: Iterable[tuple], total: int, progress: Progress | None = None) -> int:
    """Store `rows` (`total` of them), BATCH per transaction; how many were written. The rows
    are made (read, graded) as they are taken, the next batch while the last is written."""
    writing = _Writing(store, total, progress)
    if progress is not None:
        progress(0, total)
    batch: list[tuple] = []
    with store.bulk():
        try:
            for row in rows:
                batch.append(row)
                if len(batch) >= BATCH:
                    writing.hand_over(batch)
                    batch = []
            if batch:
                writing.hand_over(batch)
            writing.wait()
        except BaseException:
            writing.wait(quietly=True)  # the batch being written is finished, never cut short
            with suppress(Exception):  # what went wrong is the news, not a table left behind
                store.discard_staged()
            raise
    return writing.written


class _Writing:
    """One batch at a time: staged by the caller's thread, moved into the store by another."""

    def __init__(self, store: Store, total: int, progress: Progress | None):
        self.store, self.total, self.progress = store, total, progress
        self.written = 0
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def hand_over(self, batch: list[tuple]) -> None:
        self.wait()
        self.store.stage(batch)
        self._thread = threading.Thread(target=self._commit, name="import-writer", daemon=True)
        self._thread.start()

    def _commit(self) -> None:
        try:
            self.written += self.store.commit_staged()
            if self.progress is not None:
                self.progress(self.written, self.total)
        except BaseException as exc:  # heard by the caller's thread at its next batch
            self._error = exc

    def wait(self, quietly: bool = False) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        error, self._error = self._error, None
        if error is not None and not quietly:
            raise error

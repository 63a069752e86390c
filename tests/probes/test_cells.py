"""The counts a store keeps (probes/running/cells.py) give exactly the rows the results give.

Every check compares rows built from the kept counts (what `report` and the Scoreboard read)
with `probes.analysis.scoring.aggregate` over `Store.results()` (every result decoded, the way
rows were made before the counts): on stores with groups, every origin, errors, ungraded
replies, match-rate scores (thirds and tenths, whose float sums depend on the order of adding),
re-runs that replace results, errors that must not replace replies, deletions, imports and
people; on a store upgraded from before the counts; on one an older version wrote since; and on
an older store that can only be read.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from probes.analysis.report import measured_rows, report_rows
from probes.analysis.scoring import aggregate
from probes.cli import main
from probes.core.types import ItemRef, Origin, Result, Status
from probes.running import cells, store_access
from probes.running.cells import Where
from probes.running.importing import import_file
from probes.running.store import Store
from probes.running.store_reads import SCHEMA_VERSION
from tests.support.older_stores import before_counts

MODELS = ("openai/a", "anthropic/b", "human/Ada", "human/Bo")
MODES = ("0-shot", "4-shot")
PERTURBATIONS = ("none", "grayscale")
GROUPS = ("gap", "inducers", "lang")


def random_result(rng: random.Random, item: int) -> Result:
    """One result of any kind a store holds: right/wrong or match-rate scores (thirds, tenths),
    unparsed, refused, errors, ungraded replies, any origin, latencies or none, and group sets
    that differ between items (one name, several, none)."""
    benchmark = rng.choice(("bench/right-wrong", "bench/match-rate"))
    model = rng.choice(MODELS)
    origin = Origin.HUMAN if model.startswith("human/") else rng.choice([Origin.RUN, Origin.IMPORT, Origin.PROBE,
                                                                         Origin.JUDGEMENT])  # fmt: skip
    status = rng.choices(list(Status), weights=(6, 1, 1, 1))[0]
    correct = score = ungraded = None
    if status is not Status.ERROR:
        if rng.random() < 0.1:
            ungraded = "no right answer under this condition"
        elif benchmark == "bench/match-rate":
            score = rng.choice((0.0, 1 / 3, 2 / 3, 1.0, 0.1, 0.7))
        else:
            correct = status is Status.ANSWERED and rng.random() < 0.6
            score = float(correct)
    groups = {name: rng.choice(("-0.1", "0", "+0.05", "with", "ja")) for name in rng.sample(GROUPS, rng.randint(0, 3))}
    return Result(
        benchmark, f"item-{item}", model, rng.choice(MODES), rng.choice(PERTURBATIONS), status, reply="r",
        correct=correct, score=score, latency=rng.choice((None, rng.uniform(0.01, 30.0))), groups=groups,
        ungraded=ungraded, item_ref=ItemRef(benchmark, f"item-{item}", origin), error="x" if status is Status.ERROR else None,
    )  # fmt: skip


def fill(store: Store, rng: random.Random, count: int, items: int) -> None:
    """`count` results over `items` items, in batches: a cell written twice is a re-run that
    replaces it (or, for an error, leaves a reply in place)."""
    batch = [(random_result(rng, rng.randrange(items)), None, "") for _ in range(count)]
    for start in range(0, len(batch), 97):
        store.record_many(batch[start : start + 97])


def kept_rows(store: Store, by=GROUPS, where: Where = cells.EVERYTHING):
    return measured_rows(store.cells(where, groups=by), by)


def decoded_rows(store: Store, by=GROUPS, origins=None):
    results = [r for r in store.results() if origins is None or r.origin.value in origins]
    return aggregate(results, by=by)


@pytest.fixture
def varied(tmp_path) -> Path:
    path = tmp_path / "results.sqlite"
    with Store(path) as store:
        fill(store, random.Random(1), 3000, items=40)
    return path


def test_the_kept_counts_give_the_rows_of_the_results_themselves(varied):
    with Store(varied) as store:
        rows = kept_rows(store)
        assert rows == decoded_rows(store)
        assert len(rows) > 100 and any(r.group != "overall" for r in rows)
        # The variety the comparison must cover is there.
        assert any(r.correct is None and r.n and r.accuracy % 1 for r in rows)  # fractional match rates
        assert any(r.errors for r in rows) and any(r.ungraded for r in rows) and any(r.unparsed for r in rows)
        assert any(r.refused for r in rows) and any(r.mean_latency for r in rows)
        for origins in (("run",), ("human", "import", "judgement", "run")):
            assert kept_rows(store, where=Where(origins=origins)) == decoded_rows(store, origins=origins)
        assert kept_rows(store, by=()) == decoded_rows(store, by=())  # overall only


def test_replacements_errors_and_deletions_keep_the_counts_right(varied):
    rng = random.Random(2)
    with Store(varied) as store:
        before = {(r.benchmark, r.item_id, r.model, r.mode, r.perturbation): r for r in store.results()}
        fill(store, rng, 2000, items=40)  # re-runs over the same items: most of these replace a result
        answered = next(r for r in store.results() if r.status is Status.ANSWERED)
        errored = Result(answered.benchmark, answered.item_id, answered.model, answered.mode, answered.perturbation,
                         Status.ERROR, error="timeout", groups={"gap": "9"})  # fmt: skip
        store.record(errored)  # an error never replaces a reply: nothing changes
        after = {(r.benchmark, r.item_id, r.model, r.mode, r.perturbation): r for r in store.results()}
        assert after[(answered.benchmark, answered.item_id, answered.model, answered.mode,
                      answered.perturbation)].status is Status.ANSWERED  # fmt: skip
        assert sum(1 for key in after if key in before and after[key] != before[key]) > 500
        assert kept_rows(store) == decoded_rows(store)
        # Re-runs that keep a result in its cells (same groups and origin) with another answer,
        # score or latency: counted in place (a trigger of its own).
        regraded = []
        for r in rng.sample(store.results(), 400):
            if r.status is Status.ERROR:
                continue
            score = rng.choice((0.0, 1 / 3, 1.0)) if r.correct is None else float(not r.correct)
            correct = None if r.correct is None else not r.correct
            status = rng.choice((Status.ANSWERED, Status.UNPARSED)) if correct is not None else r.status
            regraded.append((replace(r, status=status, correct=correct, score=score, ungraded=None,
                                     latency=rng.choice((None, rng.uniform(0.01, 9.0)))), None, ""))  # fmt: skip
        store.record_many(regraded)
        assert kept_rows(store) == decoded_rows(store)
    # Deletions by another connection (a user deleting a model's results), then every result of a cell.
    with sqlite3.connect(varied) as db:
        db.execute("DELETE FROM results WHERE model = 'anthropic/b'")
        db.execute("DELETE FROM results WHERE benchmark = 'bench/match-rate' AND mode = '4-shot'")
        db.execute("UPDATE results SET groups = '{\"lang\": \"en\"}', origin = 'import' WHERE item_id = 'item-7'")
    db.close()
    with Store(varied) as store:
        rows = kept_rows(store)
        assert rows == decoded_rows(store)
        assert "anthropic/b" not in {r.model for r in rows}
        # Cells left with nothing go, so a deleted model is no longer a choice.
        assert not any(key[1] == "anthropic/b" for key in store.cells(groups=None))


def test_report_prints_the_rows_it_printed_from_decoded_results(varied, capsys):
    with Store(varied) as store:
        expected = report_rows(store.results(), ["gap", "lang"], [])
        one = report_rows(store.results("bench/right-wrong", "openai/a", "0-shot"), ["inducers"], ["bench/right-wrong"])
    assert main(["report", "--store", str(varied), "--format", "json", "--by", "gap", "--by", "lang"]) == 0
    assert json.loads(capsys.readouterr().out) == [row.as_dict() for row in expected]
    assert main(["report", "--store", str(varied), "--format", "json", "--by", "inducers", "--benchmark",
                 "bench/right-wrong", "--model", "openai/a", "--mode", "0-shot"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out) == [row.as_dict() for row in one]
    assert main(["report", "--store", str(varied), "--by", "colour"]) == 2  # a typo, not an empty breakdown
    assert "no result has a group colour; the groups here are: gap, inducers, lang" in capsys.readouterr().err


def test_counting_without_the_triggers_gives_what_they_kept(varied):
    """The GROUP BY that builds the table (an upgrade) and reads stores whose counts cannot be
    trusted counts exactly as the triggers did."""
    with Store(varied) as store:
        kept = store.cells(groups=None)
        counted = cells.as_counts(cells.count(store._db))
    assert set(kept) == {key for key, value in counted.items() if value.results}
    assert measured_rows(kept, GROUPS) == measured_rows(counted, GROUPS)


def test_a_store_from_before_the_counts_is_counted_once_when_opened_for_writing(varied):
    with sqlite3.connect(varied) as db:
        before_counts(db)
    db.close()
    with Store(varied) as store:
        marked = store._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        assert marked == str(SCHEMA_VERSION) == "8"
        assert store._cells_kept()
        assert kept_rows(store) == decoded_rows(store)
        fill(store, random.Random(3), 300, items=500)  # and kept from then on
        assert kept_rows(store) == decoded_rows(store)


def test_writes_by_an_older_version_are_never_miscounted(varied):
    """An older version marks its own version and replaces rows with INSERT OR REPLACE (which
    fires no delete trigger): the counts are then not trusted until a writer counts them again."""
    with sqlite3.connect(varied) as db:
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
        row = db.execute("SELECT * FROM results WHERE status = 'answered' AND correct = 1").fetchone()
        columns = [c[1] for c in db.execute("PRAGMA table_info(results)")]
        replaced = dict(zip(columns, row, strict=True)) | {"correct": 0, "score": 0.0}
        db.execute(f"INSERT OR REPLACE INTO results ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                   list(replaced.values()))  # fmt: skip
    db.close()
    with Store(varied, read_only=True) as store:  # read as it is: counted from the results
        assert not store._cells_kept()
        assert kept_rows(store) == decoded_rows(store)
    with Store(varied) as store:  # a writer counts again
        assert store._cells_kept() and kept_rows(store) == decoded_rows(store)


def test_an_older_store_that_can_only_be_read_is_reported_as_it_is(varied, capsys, monkeypatch):
    with sqlite3.connect(varied) as db:
        before_counts(db)
    db.close()
    digest = hashlib.sha256(varied.read_bytes()).hexdigest()
    with Store(varied, read_only=True) as store:
        assert kept_rows(store) == decoded_rows(store)
        assert kept_rows(store, where=Where("bench/match-rate", modes=["4-shot"])) == [
            row for row in decoded_rows(store) if (row.benchmark, row.mode) == ("bench/match-rate", "4-shot")
        ]
        expected = report_rows(store.results(), ["lang"], [])
    # No permission to write it, as tests/test_store_access.py denies it: `report` reads it as it is.
    monkeypatch.setattr(store_access.os, "access", lambda path, mode, **kw: mode != os.W_OK)
    assert main(["report", "--store", str(varied), "--format", "json", "--by", "lang"]) == 0
    assert json.loads(capsys.readouterr().out) == [row.as_dict() for row in expected]
    assert hashlib.sha256(varied.read_bytes()).hexdigest() == digest


def test_imports_and_people_counted_as_they_are_stored(tmp_path):
    """Replies imported from a file and people's answers, through their own paths."""
    from probes.core.registry import get_benchmark
    from probes.people.human import answer_result

    path = tmp_path / "results.sqlite"
    replies = tmp_path / "replies.jsonl"
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"], "gap": ["-0.1", "0.1", "0.2"]})
    items = benchmark.items()[:12]
    replies.write_text("".join(json.dumps({"item_id": item.id, "response": ("Yes", "No", "maybe")[n % 3]}) + "\n"
                               for n, item in enumerate(items)))  # fmt: skip
    with Store(path) as store:
        import_file(replies, benchmark, "openai/elsewhere", "0-shot", store)
        store.record_many([(answer_result(benchmark, item, "Yes", name, 1.5), None, "") for item in items
                           for name in ("Ada", "Bo")])  # fmt: skip
        origins = {r.origin for r in store.results()}
        assert origins == {Origin.IMPORT, Origin.HUMAN}
        assert kept_rows(store, by=("gap", "prompt")) == decoded_rows(store, by=("gap", "prompt"))

"""The psychometric counts a store keeps (probes/running/fit_kept.py) give the fits the results
themselves give: every check compares what `report --fit` now reads (the kept counts per level and
the probabilities' points) with fits.fit_table over the stored Results (the way the rows were made
before), row for row, on randomized stores of several benchmarks, models, origins, levels and
group sets, with errors, unparsed and refused replies, replies with no positive reading, results
without probabilities, items without the parameter, parameters given as text ("1/4"), re-runs
that replace results, moves and deletions; on a store upgraded from before the counts; on one an
older version wrote since; and through `report --fit` itself."""

from __future__ import annotations

import json
import random
import sqlite3

import pytest

from probes.analysis.fits import fit_table
from probes.cli import main
from probes.core.types import POSITIVE_ANSWER, ItemRef, Origin, Result, Status
from probes.running import calibration_kept, cells, fit_kept, store_schema
from probes.running.cells import EVERYTHING, Where
from probes.running.fit_kept import stored_fits
from probes.running.store import Store
from tests.support.older_stores import before_calibration_sums, before_graded_points

BENCHMARKS = ("illusion/a", "illusion/b", "blind/c")
MODELS = ("openai/a", "hf/b", "anthropic/c")
LEVELS = (-0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2)
RESAMPLES = 40  # the bootstrap as the report runs it, shorter: the rows must match either way


def random_result(rng: random.Random, item: int) -> Result:
    benchmark = rng.choice(BENCHMARKS)
    level = LEVELS[item % len(LEVELS)]
    truth = 1 / (1 + 2.718281828 ** (-(level - 0.02) / 0.05))
    status = rng.choices(list(Status), weights=(12, 1, 1, 1))[0]
    params: dict = {"difference": level if item % 9 else f"{round(level * 4)}/4", "strength": rng.choice((15, 30))}
    if benchmark != "blind/c":
        params[POSITIVE_ANSWER] = item % 2
    if item % 13 == 0:
        params = {"seed": item}  # no `difference`: not part of that sweep
    said_positive = rng.random() < truth
    if benchmark == "blind/c":
        parsed = rng.choice(("yes", "no", "maybe")) if said_positive else "no"
    else:
        parsed = item % 2 if said_positive else 1 - item % 2
    parsed = parsed if status is Status.ANSWERED else None
    probabilities = None
    if status is not Status.ERROR and rng.random() < 0.5:
        p = min(0.99, max(0.01, truth + rng.gauss(0, 0.1)))
        if benchmark == "blind/c":
            probabilities = {"yes": p, "no": 1 - p}
        else:
            probabilities = {str(item % 2): p, str(1 - item % 2): 1 - p}
    groups = {
        name: rng.choice(("with", "flipped", "-0.1")) for name in rng.sample(("inducers", "gap"), rng.randint(0, 2))
    }
    origin = rng.choice((Origin.RUN, Origin.IMPORT, Origin.HUMAN))
    return Result(
        benchmark, f"item-{item}", rng.choice(MODELS), rng.choice(("0-shot", "4-shot")), rng.choice(("none", "grayscale")),
        status, reply="r", parsed=parsed, correct=None, target=None, groups=groups,
        item_ref=ItemRef(benchmark, f"item-{item}", origin, params=params), error="x" if status is Status.ERROR else None,
        probabilities=probabilities, probability_mass=0.95 if probabilities else None,
    )  # fmt: skip


def fill(store: Store, rng: random.Random, count: int, items: int) -> None:
    """`count` results over `items` items in batches: a cell written twice is replaced."""
    batch = [(random_result(rng, rng.randrange(items)), None, "") for _ in range(count)]
    for start in range(0, len(batch), 83):
        store.record_many(batch[start : start + 83])


def from_results(store: Store, where: Where, param: str, by=()) -> list[dict]:
    results = [
        r for r in store.results() if where.keeps((r.benchmark, r.model, r.mode, r.perturbation, r.origin.value, ""))
    ]
    return [row.as_dict() for row in fit_table(results, param, by, resamples=RESAMPLES)]


def kept(store: Store, where: Where, param: str, by=()) -> list[dict]:
    return [row.as_dict() for row in stored_fits(store, where, param, by, resamples=RESAMPLES)]


def kept_tables(store: Store) -> tuple[list, list]:
    """Every row of the kept counts and of the kept graded points, in order."""
    return (
        store._db.execute("SELECT * FROM fit_levels ORDER BY 1, 2, 3, 4, 5, 6, 7, 8").fetchall(),
        store._db.execute("SELECT * FROM fit_graded ORDER BY 1, 2, 3, 4, 5, 6, 7, 8").fetchall(),
    )


def assert_same(store: Store, where: Where = EVERYTHING, param: str = "difference", by=("inducers", "gap")) -> None:
    found, expected = kept(store, where, param, by), from_results(store, where, param, by)
    assert len(found) == len(expected) and found == expected


@pytest.fixture
def varied(tmp_path):
    path = tmp_path / "results.sqlite"
    with Store(path) as store:
        fill(store, random.Random(5), 1000, items=100)
    return path


def test_kept_counts_give_the_rows_of_the_results(varied):
    with Store(varied) as store:
        rows = kept(store, EVERYTHING, "difference", ("inducers",))
        assert {row["source"] for row in rows} == {"choices", "probabilities"}
        assert {row["status"] for row in rows} >= {"ok"}  # real fits among them, not only degenerate ones
        assert any(row["excluded"] and row["errors"] and row["unrated"] for row in rows)
        assert_same(store)
        assert_same(store, param="strength", by=())
        assert_same(store, Where("illusion/a", models=["hf/b"], modes=["0-shot"]), by=("gap",))
        assert_same(store, Where(perturbations=["grayscale"], origins=["run", "human"]))
        assert kept(store, EVERYTHING, "no such parameter") == []


def test_replacements_moves_and_deletions_keep_the_counts_right(varied):
    with Store(varied) as store:
        fill(store, random.Random(8), 400, items=100)  # re-runs: other answers, other probabilities, errors
        assert_same(store)
        with store._transaction():  # moved to other groups, another origin
            store._db.execute("""UPDATE results SET groups = '{"gap": "9"}' WHERE rowid % 7 = 0""")
            store._db.execute("UPDATE results SET origin = 'import' WHERE rowid % 5 = 0")
        assert_same(store)
        store.delete(Where(models=["hf/b"], modes=["4-shot"]))
        assert_same(store)
        store.delete(Where(models=list(MODELS)))
        assert kept_tables(store) == ([], [])


def test_an_unchanged_re_run_leaves_the_counts_alone(varied):
    with Store(varied) as store:
        before = kept_tables(store)
        assert before[1]  # graded points among them
        store.record_many([(r, None, "") for r in store.results()])
        assert kept_tables(store) == before


def test_a_store_from_before_the_counts_is_counted_once_when_opened_for_writing(varied):
    with Store(varied) as store:
        kept_before = kept_tables(store)
    with sqlite3.connect(varied) as db:
        before_calibration_sums(db)
    db.close()
    with Store(varied, read_only=True) as store:  # read as it is: fitted from its Results
        assert store.fit_parts(EVERYTHING, "difference") is None
        assert_same(store)
    with Store(varied) as store:
        assert kept_tables(store) == kept_before
        assert_same(store)
        fill(store, random.Random(3), 300, items=300)  # and kept from then on
        assert_same(store)


def test_a_store_from_before_the_graded_points_gets_them_when_opened_for_writing(varied, monkeypatch, caplog):
    """Version 7 kept the counts, not the graded points: opened for writing, it gets those alone,
    from the results as that version left them (moved and deleted by its own triggers)."""
    with sqlite3.connect(varied) as db:
        before_graded_points(db)
        db.execute("""UPDATE results SET groups = '{"gap": "7"}' WHERE rowid % 6 = 0""")
        db.execute("UPDATE results SET origin = 'import' WHERE rowid % 4 = 0")
        db.execute("DELETE FROM results WHERE rowid % 5 = 0")
    db.close()
    with Store(varied, read_only=True) as store:  # version 7's counts, but no graded points: from Results
        assert store.fit_parts(EVERYTHING, "difference") is None
        assert_same(store)

    def counted_again(db):
        raise AssertionError("a version 7 store is not counted again")

    with monkeypatch.context() as patched:
        for module in (cells, calibration_kept, fit_kept):
            patched.setattr(module, "rebuild", counted_again)
        patched.setattr(store_schema, "UPGRADE_NOTICE_FROM", 500)  # the fixture's ~640 results: said first
        Store(varied).close()
    assert "upgrading the results store" in caplog.text and "about 30 s a million" in caplog.text
    with Store(varied) as store:
        levels, graded = kept_tables(store)
        store._db.execute("DELETE FROM fit_levels")  # the counts, as a full rebuild would make them
        fit_kept.rebuild(store._db)
        assert kept_tables(store) == (levels, graded) and graded
        assert_same(store)
        fill(store, random.Random(4), 300, items=300)
        assert_same(store)


def test_writes_by_an_older_version_are_never_misread(varied):
    """An older version writes no fit_points (the row it replaces keeps the old one) and marks its
    own version: the fits are made from Results until a writer counts again."""
    with sqlite3.connect(varied) as db:
        db.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
        columns = [c[1] for c in db.execute("PRAGMA table_info(results)")]
        row = dict(zip(columns, db.execute("SELECT * FROM results WHERE status = 'answered' AND parsed = '0'"
                                           " AND fit_points IS NOT NULL").fetchone(), strict=True))  # fmt: skip
        older = [c for c in columns if c not in (fit_kept.COLUMN, *calibration_kept.COLUMNS)]
        replaced = row | {"parsed": "1"}
        db.execute(f"INSERT OR REPLACE INTO results ({', '.join(older)}) VALUES ({', '.join('?' * len(older))})",
                   [replaced[c] for c in older])  # fmt: skip
    db.close()
    with Store(varied, read_only=True) as store:
        assert_same(store)
    with Store(varied) as store:
        assert store.fit_parts(EVERYTHING, "difference") is not None
        assert_same(store)


def test_report_fit_prints_the_rows_of_the_results(varied, capsys):
    """The whole command, with its own 1,000 resamples: one model's rows (the filters as `report` takes them)."""
    args = ["--model", "hf/b", "--mode", "0-shot", "--fit", "difference", "--by", "inducers", "--format", "json"]
    assert main(["report", "--store", str(varied), *args]) == 0
    printed = json.loads(capsys.readouterr().out)
    with Store(varied) as store:
        mine = [r for r in store.results() if (r.model, r.mode) == ("hf/b", "0-shot")]
        expected = [row.as_dict() for row in fit_table(mine, "difference", ("inducers",))]
    assert {row["source"] for row in printed} == {"choices", "probabilities"}
    assert printed == json.loads(json.dumps(expected))


def test_imports_keep_the_counts_as_runs_do(tmp_path):
    """Rows staged and moved in bulk (an import's path) add their points as `record_many` does."""
    rng = random.Random(6)
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        store.record_many([(random_result(rng, n), None, "") for n in range(300)])
        rows = store._db.execute(
            "SELECT benchmark, item_id, model, mode, perturbation, status, reply, parsed, correct, score, target, latency,"
            " input_tokens, output_tokens, error, prompt_hash, cache_key, groups, item_ref, created_at, origin, ungraded,"
            " probabilities FROM results"
        ).fetchall()
        expected = kept_tables(store)
        store.delete(Where(models=list(MODELS)))
        store.stage(rows)
        store.commit_staged()
        assert kept_tables(store) == expected
        assert_same(store)

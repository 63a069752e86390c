"""The calibration sums a store keeps (probes/running/calibration_kept.py) give the figures the
results themselves give: every check compares what `report` and the Scoreboard now read (the kept
sums) with calibration.py over the results with probabilities decoded one by one (the way the
figures were made before), on randomized stores of several benchmarks, models, origins and group
sets, with results lacking probabilities, errors, ungraded replies, targets that are not among the
answers, re-runs that replace results (with and without probabilities), regrades, moves and
deletions; on a store upgraded from before the sums; on one an older version wrote since; and
through `report` itself."""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import replace

import pytest

from probes.analysis.calibration import calibration_by_row
from probes.analysis.calibration_cells import cell_sums, pooled
from probes.cli import main
from probes.core.types import ItemRef, Origin, Result, Status
from probes.running import calibration_kept
from probes.running.cells import Where
from probes.running.store import Store
from tests.support.older_stores import before_calibration_sums

BENCHMARKS = ("bench/a", "bench/b", "bench/c")
MODELS = ("openai/a", "hf/b", "anthropic/c")
GROUPS = ("gap", "inducers")


def random_result(rng: random.Random, item: int) -> Result:
    benchmark = rng.choice(BENCHMARKS)
    status = rng.choices(list(Status), weights=(7, 1, 1, 1))[0]
    answers = ("yes", "no") if benchmark != "bench/c" else ("0", "1", "2")
    target = rng.choice((*answers, "Maybe")) if benchmark != "bench/c" else rng.randrange(3)
    parsed = rng.choice(answers) if status is Status.ANSWERED else None
    if benchmark == "bench/c" and parsed is not None:
        parsed = int(parsed)
    graded = status is not Status.ERROR and rng.random() > 0.1
    correct = (str(parsed).casefold() == str(target).casefold()) if graded else None
    probabilities = None
    if status is not Status.ERROR and rng.random() < 0.6:
        raw = [rng.random() ** 2 + 1e-3 for _ in answers]
        probabilities = {a: v / sum(raw) for a, v in zip(answers, raw, strict=True)}
    groups = {name: rng.choice(("-0.1", "0", "+0.05", "with")) for name in rng.sample(GROUPS, rng.randint(0, 2))}
    origin = rng.choice((Origin.RUN, Origin.IMPORT, Origin.PROBE))
    return Result(
        benchmark, f"item-{item}", rng.choice(MODELS), rng.choice(("0-shot", "4-shot")), rng.choice(("none", "grayscale")),
        status, reply="r", parsed=parsed, correct=correct, score=None if correct is None else float(correct),
        target=target, groups=groups, ungraded=None if graded or status is Status.ERROR else "no right answer",
        item_ref=ItemRef(benchmark, f"item-{item}", origin), error="x" if status is Status.ERROR else None,
        probabilities=probabilities, probability_mass=0.9 if probabilities else None,
    )  # fmt: skip


def fill(store: Store, rng: random.Random, count: int, items: int) -> None:
    """`count` results over `items` items in batches: a cell written twice is replaced."""
    batch = [(random_result(rng, rng.randrange(items)), None, "") for _ in range(count)]
    for start in range(0, len(batch), 89):
        store.record_many(batch[start : start + 89])


def from_results(store: Store) -> dict:
    """The sums per cell as they were made before: every result with probabilities decoded."""
    origins = {r.origin.value for r in store.results()}
    return pooled(cell_sums(store.probability_rows(Where(origins=(o,))), o) for o in origins)


def assert_same(kept: dict, decoded: dict) -> None:
    assert set(kept) == set(decoded)
    for key, sums in decoded.items():
        assert kept[key].n == sums.n and kept[key].bin_n == sums.bin_n and kept[key].bin_right == sums.bin_right
        assert kept[key].calibration().as_dict() == pytest.approx(sums.calibration().as_dict(), rel=1e-12, abs=1e-15)
        for a, b in zip(kept[key].bins(), sums.bins(), strict=True):
            assert (a.confidence, a.accuracy) == pytest.approx((b.confidence, b.accuracy), rel=1e-12)


@pytest.fixture
def varied(tmp_path):
    path = tmp_path / "results.sqlite"
    with Store(path) as store:
        fill(store, random.Random(7), 2500, items=60)
    return path


def test_kept_sums_equal_the_sums_of_the_results(varied):
    with Store(varied) as store:
        kept = store.calibration_sums(groups=None)
        assert kept and any(key[5] for key in kept)  # group cells too
        assert_same(kept, from_results(store))
        # A view's filters and breakdowns read the same cells as the results give them.
        where = Where("bench/c", modes=["4-shot"], origins=["run", "probe"])
        found = store.calibration_sums(where, groups=["gap"])
        expected = {
            k: v for k, v in from_results(store).items() if where.keeps(k) and k[5].partition("=")[0] in ("", "gap")
        }
        assert_same(found, expected)


def test_replacements_regrades_moves_and_deletions_keep_the_sums_right(varied):
    rng = random.Random(9)
    with Store(varied) as store:
        fill(store, rng, 800, items=60)  # re-runs: with and without probabilities, errors, other cells
        assert_same(store.calibration_sums(groups=None), from_results(store))
        with store._transaction():  # a regrade, a move to other groups, a probability record taken away
            store._db.execute("UPDATE results SET correct = NULL WHERE rowid % 5 = 0")
            store._db.execute("""UPDATE results SET groups = '{"gap": "9"}' WHERE rowid % 7 = 0""")
            store._db.execute("UPDATE results SET correct = 1 WHERE rowid % 11 = 0 AND status != 'error'")
        assert_same(store.calibration_sums(groups=None), from_results(store))
        store.delete(Where(models=["hf/b"], modes=["0-shot"]))
        assert_same(store.calibration_sums(groups=None), from_results(store))
        store.delete(Where(models=list(MODELS)))
        assert store.calibration_sums(groups=None) == {}
        assert store._db.execute("SELECT COUNT(*) FROM calibration_cells").fetchone()[0] == 0


def test_an_unchanged_re_run_leaves_the_sums_alone(varied):
    with Store(varied) as store:
        before = store._db.execute("SELECT * FROM calibration_cells ORDER BY 1, 2, 3, 4, 5, 6, 7").fetchall()
        results = store.results()
        store.record_many([(r, None, "") for r in results])
        after = store._db.execute("SELECT * FROM calibration_cells ORDER BY 1, 2, 3, 4, 5, 6, 7").fetchall()
    assert after == before


def test_summing_without_the_triggers_gives_what_they_kept(varied):
    with Store(varied) as store:
        kept = store._db.execute("SELECT * FROM calibration_cells ORDER BY 1, 2, 3, 4, 5, 6, 7").fetchall()
        counted = calibration_kept.count(store._db)
    by_key = {row[:7]: row for row in kept}
    assert len(counted) == len(kept)
    for row in counted:
        mine = by_key[(row[0], row[5], row[1], row[2], row[3], row[4], row[6])]
        assert mine[7:9] == row[7:9]  # n, right: exactly
        assert [h + low for h, low in zip(mine[9::2], mine[10::2], strict=True)] == pytest.approx(
            [h + low for h, low in zip(row[9::2], row[10::2], strict=True)], rel=1e-15
        )


def test_a_store_from_before_the_sums_is_summed_once_when_opened_for_writing(varied):
    with sqlite3.connect(varied) as db:
        before_calibration_sums(db)
    db.close()
    with Store(varied, read_only=True) as store:  # read as it is: from its results
        assert not store._cells_kept()
        assert_same(store.calibration_sums(groups=None), from_results(store))
    with Store(varied) as store:
        assert store._cells_kept()
        assert_same(store.calibration_sums(groups=None), from_results(store))
        fill(store, random.Random(3), 400, items=200)  # and kept from then on
        assert_same(store.calibration_sums(groups=None), from_results(store))


def test_writes_by_an_older_version_are_never_misread(varied):
    """An older version writes no calibration columns and marks its own version: the sums are
    read from the results until a writer works them out again."""
    with sqlite3.connect(varied) as db:
        db.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
        row = db.execute("SELECT * FROM results WHERE probabilities IS NOT NULL AND correct IS NOT NULL").fetchone()
        columns = [c[1] for c in db.execute("PRAGMA table_info(results)")]
        old = dict(zip(columns, row, strict=True))
        flipped = {k: 1 - v for k, v in json.loads(old["probabilities"])["p"].items()}
        replaced = old | {"probabilities": json.dumps({"p": flipped, "mass": 1.0}), "cal_bin": None}
        older = [c for c in columns if c not in calibration_kept.COLUMNS]
        db.execute(f"INSERT OR REPLACE INTO results ({', '.join(older)}) VALUES ({', '.join('?' * len(older))})",
                   [replaced[c] for c in older])  # fmt: skip
    db.close()
    with Store(varied, read_only=True) as store:
        assert_same(store.calibration_sums(groups=None), from_results(store))
    with Store(varied) as store:
        assert store._cells_kept()
        assert_same(store.calibration_sums(groups=None), from_results(store))


def test_report_prints_the_calibration_the_results_give(varied, capsys):
    """`report --by` with calibration: the figures calibration.py computes from the results."""
    assert main(["report", "--store", str(varied), "--format", "json", "--by", "gap"]) == 0
    printed = json.loads(capsys.readouterr().out)
    with Store(varied) as store:
        expected = calibration_by_row(store.probability_rows(), by=["gap"])
    shown = {(r["benchmark"], r["model"], r["mode"], r["perturbation"], r["group"]): r for r in printed
             if r.get("n_prob")}  # fmt: skip
    assert set(shown) == set(expected)
    for head, figures in expected.items():
        row = shown[head]
        assert {k: row[k] for k in ("mean_p_right", "brier", "ece", "n_prob")} == pytest.approx(
            figures.as_dict(), rel=1e-12, abs=1e-15
        )


def test_imports_keep_the_sums_as_runs_do(tmp_path):
    """Rows staged and moved in bulk (an import's path) add their numbers as `record_many` does."""
    rng = random.Random(4)
    made = [random_result(rng, n) for n in range(400)]
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        store.record_many([(r, None, "") for r in made[:200]])
        rows = [row for row in store._db.execute(
            "SELECT benchmark, item_id, model, mode, perturbation, status, reply, parsed, correct, score, target, latency,"
            " input_tokens, output_tokens, error, prompt_hash, cache_key, groups, item_ref, created_at, origin, ungraded,"
            " probabilities FROM results")]  # fmt: skip
        store.delete(Where(models=list(MODELS)))
        store.stage(rows)
        store.commit_staged()
        store.record_many([(replace(r, item_id=f"x{r.item_id}"), None, "") for r in made[200:]])
        assert_same(store.calibration_sums(groups=None), from_results(store))

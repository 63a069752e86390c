"""`python -m probes delete`: a count first, the results gone only with --yes, and `report`'s rows
then those of the results that remain (the store's delete trigger keeps its counts right)."""

import json
import random

from probes.analysis.report import report_rows
from probes.running.store import Store
from tests.conftest import run_cli
from tests.probes.test_cells import fill


def measured(store_path, *extra):
    done = run_cli("report", "--store", str(store_path), "--format", "json", "--by", "gap", *extra)
    assert done.returncode == 0, done.stderr
    return [row for row in json.loads(done.stdout) if row["source"] == "measured"]


def test_delete_counts_first_then_deletes_and_report_follows(tmp_path):
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        fill(store, random.Random(5), 1500, items=30)
        before = store.results()
    doomed = [r for r in before if r.model == "anthropic/b" and r.benchmark == "bench/right-wrong"]
    assert doomed and any(r.model == "anthropic/b" and r.benchmark == "bench/match-rate" for r in before)

    counted = run_cli("delete", "--model", "anthropic/b", "--benchmark", "bench/right-wrong", "--store", str(path))
    assert counted.returncode == 0, counted.stderr
    assert f"{len(doomed)} result(s) of anthropic/b on bench/right-wrong would be deleted" in counted.stdout
    assert "--yes" in counted.stdout
    with Store(path) as store:
        assert len(store.results()) == len(before)  # nothing went without --yes

    done = run_cli(
        "delete", "--model", "anthropic/b", "--benchmark", "bench/right-wrong", "--store", str(path), "--yes"
    )
    assert done.returncode == 0, done.stderr
    assert f"deleted {len(doomed)} result(s)" in done.stdout
    with Store(path) as store:
        left = store.results()
    assert len(left) == len(before) - len(doomed)
    expected = [row.as_dict() for row in report_rows(left, ["gap"], []) if row.source == "measured"]
    assert measured(path) == expected
    assert not any(r["model"] == "anthropic/b" and r["benchmark"] == "bench/right-wrong" for r in measured(path))
    assert any(r["model"] == "anthropic/b" for r in measured(path))  # its other benchmark stays

    again = run_cli(
        "delete", "--model", "anthropic/b", "--benchmark", "bench/right-wrong", "--store", str(path), "--yes"
    )
    assert again.returncode == 0 and "nothing deleted" in again.stdout


def test_delete_narrowed_by_mode_and_condition_and_every_benchmark(tmp_path):
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        fill(store, random.Random(6), 800, items=20)
        before = store.results()
    gone = [r for r in before if r.model == "openai/a" and r.mode == "4-shot" and r.perturbation == "grayscale"]
    done = run_cli("delete", "--model", "openai/a", "--mode", "4-shot", "--perturb", "grayscale", "--store", str(path),
                   "--yes")  # fmt: skip
    assert done.returncode == 0 and f"deleted {len(gone)} result(s)" in done.stdout
    with Store(path) as store:
        assert len(store.results()) == len(before) - len(gone)
    run_cli("delete", "--model", "openai/a", "--store", str(path), "--yes")
    rows = measured(path)
    assert rows and "openai/a" not in {r["model"] for r in rows}
    with Store(path) as store:
        assert not any(key[1] == "openai/a" for key in store.cells(groups=None))  # no longer a choice


def test_delete_needs_a_model_and_a_store(tmp_path):
    missing = run_cli("delete", "--store", str(tmp_path / "r.sqlite"), "--yes")
    assert missing.returncode == 2 and "--model" in missing.stderr
    nowhere = run_cli("delete", "--model", "openai/a", "--store", str(tmp_path / "none.sqlite"), "--yes")
    assert nowhere.returncode == 2 and "no results store" in nowhere.stderr
    assert not (tmp_path / "none.sqlite").exists()

import sqlite3
import threading

from models.types import Output, Usage
from probes.core.types import ItemRef, Result, Status
from probes.running.store import Store


def _result(item_id, model="m", status=Status.ANSWERED, key=None):
    return Result("bench", item_id, model, "0-shot", "none", status, reply="Yes", parsed="yes", correct=True,
                  target="yes", cache_key=key, groups={"prompt": "touching"}, item_ref=ItemRef("bench", item_id, images=("abc",)))  # fmt: skip


def test_results_round_trip_and_replace_instead_of_duplicating(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.record(_result("1", key="k1"), Output("Yes", 0.5, Usage(10, 1), {"id": "x"}), "http://e")
        store.record(_result("1", key="k1"))  # the same cell again
        [row] = store.results()
        assert row.groups == {"prompt": "touching"} and row.status is Status.ANSWERED and row.correct is True
        cached = store.cached("k1")
        assert cached.text == "Yes" and cached.usage.input_tokens == 10 and cached.raw == {"id": "x"}
        assert store.cached("other") is None
        assert store.count() == 1


def test_errors_are_results_but_never_cached_responses(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.record(_result("1", status=Status.ERROR, key="k"))
        assert store.cached("k") is None
        assert store.results()[0].status is Status.ERROR


def test_store_is_in_wal_mode_and_holds_no_image_bytes(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.record(_result("1", key="k"), Output("Yes", 0.1))
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    columns = {
        row[1] for table in ("results", "responses") for row in connection.execute(f"PRAGMA table_info({table})")
    }
    assert not any("image" in name and "ref" not in name for name in columns)


def test_two_writers_on_one_file_both_complete(tmp_path):
    path = tmp_path / "s.sqlite"
    failures = []

    def write(model):
        try:
            with Store(path) as store:
                for i in range(200):
                    store.record(_result(str(i), model=model, key=f"{model}{i}"), Output("Yes", 0.1))
        except Exception as exc:  # noqa: BLE001 - the test reports any failure
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    with Store(path) as store:
        assert store.count() == 400


def test_a_version_1_store_gains_scores_from_its_right_and_wrong_answers(tmp_path):
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE results (benchmark TEXT NOT NULL, item_id TEXT NOT NULL, model TEXT NOT NULL, mode TEXT NOT NULL,"
        " perturbation TEXT NOT NULL, status TEXT NOT NULL, reply TEXT, parsed TEXT, correct INTEGER, target TEXT,"
        " latency REAL, input_tokens INTEGER, output_tokens INTEGER, error TEXT, prompt_hash TEXT, cache_key TEXT,"
        " groups TEXT NOT NULL, item_ref TEXT NOT NULL, created_at REAL NOT NULL,"
        " PRIMARY KEY (benchmark, item_id, model, mode, perturbation))"
    )
    old.execute("INSERT INTO results VALUES ('b','1','m','0-shot','none','answered','Yes','\"yes\"',1,'\"yes\"',"
                "0.1,NULL,NULL,NULL,NULL,NULL,'{}','{}',0)")  # fmt: skip
    old.commit()
    old.close()
    with Store(path) as store:
        [result] = store.results()
        assert result.score == 1.0 and result.correct is True
        store.record(_result("2", key="k2"))
        assert store.count() == 2


def test_an_error_never_replaces_a_reply_but_replaces_an_earlier_error(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.record(_result("answered"))
        store.record(_result("answered", status=Status.ERROR))  # a later failing run of the same cell
        store.record(_result("failed", status=Status.ERROR))
        store.record(_result("failed", status=Status.ERROR))
        store.record(_result("failed"))  # an answer replaces an error
        store.record(_result("late", status=Status.ERROR))
        statuses = {r.item_id: r.status for r in store.results()}
        assert statuses == {"answered": Status.ANSWERED, "failed": Status.ANSWERED, "late": Status.ERROR}

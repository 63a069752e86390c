"""A store that cannot be written is still read (`report`, the Scoreboard); only the commands that
write refuse it, with one line saying it is read-only. A disk that fills up is called full, with
the free space and what to free; `.recover` is offered only for a damaged file.

The tests run as root, through whom chmod stops nothing. So read-only is exercised three ways,
each saying what it proves:
- with the kernel refusing: root without CAP_DAC_OVERRIDE (setpriv), for which file modes bind as
  for the owner; and a read-only bind mount in a private mount namespace (EROFS). These skip
  where the machine does not allow them.
- in this process, with the permission check answering "no": the decision, and that SQLite's
  read-only connection then refuses every write even to root.
A full disk is a 256 KB tmpfs in a private mount namespace (real ENOSPC), SQLite's own page limit
(real SQLITE_FULL), and, for the command line's backstop, an OSError(ENOSPC) raised where a
command writes.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from probes.cli import commands, main
from probes.cli.outcome import store_problem
from probes.core.errors import InputRejected
from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.core.types import Result, Status
from probes.running import store_access
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store
from probes.running.store_access import StoreReadOnly
from tests.conftest import REPO, run_cli
from tests.support.confined import cli_calls, in_mount_namespace, run_cli_unprivileged, unprivileged
from tests.support.older_stores import as_version_3
from tests.test_cli_hardening import assert_one_error_line

RUN = ["run", "blind/touching-circles", "--model", "baseline/chance", "--limit", "3"]


def filled(path: Path, items: int | None = 6) -> Path:
    """A store of `items` answered results (None: the 448 of a 384-pixel design), closed."""
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"]} if items is None else None)
    with Store(path) as store:
        asyncio.run(run(RunPlan(benchmark, select_items(benchmark.items(), items, 0), [create("baseline/chance")]),
                        store))  # fmt: skip
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def overall_n(done) -> int:
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    return next(row["n"] for row in rows if row["group"] == "overall")


REPORT = ["report", "--format", "json", "--no-references"]
needs_unprivileged = pytest.mark.skipif(unprivileged() is None, reason="setpriv cannot drop CAP_DAC_OVERRIDE here")


# --- the kernel refuses ----------------------------------------------------------------------


@needs_unprivileged
def test_a_store_file_without_write_permission_is_reported_on_and_refused_by_writers(tmp_path):
    store = filled(tmp_path / "results.sqlite")
    before = digest(store)
    store.chmod(0o444)
    try:
        assert overall_n(run_cli_unprivileged(*REPORT, "--store", str(store))) == 6
        for command in (RUN, ["import", str(tmp_path / "none.jsonl"), "--benchmark", "blind/touching-circles",
                              "--model", "m"]):  # fmt: skip
            done = run_cli_unprivileged(*command, "--store", str(store))
            assert_one_error_line(done, str(store), "is read-only (no permission to write it)", "give --store")
    finally:
        store.chmod(0o644)
    assert digest(store) == before


@needs_unprivileged
def test_a_store_in_a_folder_nobody_may_write_is_read_as_it_is(tmp_path):
    """No -wal or -shm beside it and none can be made: SQLite reads the file as immutable."""
    folder = tmp_path / "shelf"
    folder.mkdir()
    store = filled(folder / "results.sqlite")
    assert not (folder / "results.sqlite-shm").exists()
    before = digest(store)
    store.chmod(0o444)
    folder.chmod(0o555)
    try:
        assert overall_n(run_cli_unprivileged(*REPORT, "--store", str(store))) == 6
        assert_one_error_line(run_cli_unprivileged(*RUN, "--store", str(store)), "is read-only")
        new = folder / "new.sqlite"
        done = run_cli_unprivileged(*RUN, "--store", str(new))
        assert_one_error_line(done, str(new), "cannot be made there (no permission to write", "a folder you can write")
        assert sorted(p.name for p in folder.iterdir()) == ["results.sqlite"]
    finally:
        folder.chmod(0o755)
        store.chmod(0o644)
    assert digest(store) == before


@needs_unprivileged
def test_the_scoreboard_reads_the_operators_store_it_may_not_write(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    store = filled(home / "results.sqlite", items=5)
    store.chmod(0o444)
    home.chmod(0o555)
    code = (
        "import json, app\n"
        "app.build_demo()\n"
        "from ui.scoreboard.data import stored_tally\n"
        "from ui.sessions import shared_store\n"
        "from probes.core.types import Result, Status\n"
        "try:\n"
        "    shared_store().record(Result('b', 'i', 'm', '0-shot', 'none', Status.ANSWERED))\n"
        "    refused = ''\n"
        "except Exception as exc:\n"
        "    refused = f'{type(exc).__name__}: {exc}'\n"
        "print(json.dumps([stored_tally().count(), shared_store().read_only, refused]))\n"
    )
    try:
        done = subprocess.run([*unprivileged(), sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                              timeout=300, env={**os.environ, "PYTHONPATH": str(REPO), "PROBE_HOME": str(home)})  # fmt: skip
    finally:
        home.chmod(0o755)
        store.chmod(0o644)
    assert done.returncode == 0, done.stderr[-3000:]
    shown, read_only, refused = json.loads(done.stdout.strip().splitlines()[-1])
    assert (shown, read_only) == (5, True)
    assert refused.startswith("StoreReadOnly: the results store is read-only here (no permission to write it)")
    assert str(home) not in refused  # a visitor may see this line: it names no server path


def test_a_store_on_a_read_only_file_system(tmp_path):
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    store = filled(shelf / "results.sqlite")
    before = digest(store)
    calls = [[*REPORT, "--store", str(store)], [*RUN, "--store", str(store)],
             ["import", str(shelf / "x.jsonl"), "--benchmark", "blind/touching-circles", "--model", "m",
              "--store", str(store)], [*RUN, "--store", str(shelf / "new.sqlite")]]  # fmt: skip
    setup = f"mount --bind {shelf} {shelf} && mount -o remount,bind,ro {shelf}"
    answers = in_mount_namespace(setup, cli_calls(*calls))
    if answers is None:
        pytest.skip("no private mount namespace here (unshare/mount not allowed)")
    report, running, importing, new = answers
    assert report["rc"] == 0, report["err"]
    assert next(r["n"] for r in json.loads(report["out"]) if r["group"] == "overall") == 6
    for answer in (running, importing):
        assert answer["rc"] == 2 and answer["err"].count("\n") == 1, answer
        assert answer["err"].startswith(f"error: results store {store} is read-only (the file system is read-only)")
    assert new["rc"] == 2 and "cannot be made there (the file system is read-only)" in new["err"], new
    assert digest(store) == before and sorted(p.name for p in shelf.iterdir()) == ["results.sqlite"]


# --- the decision, in this process -----------------------------------------------------------


@pytest.fixture
def deny_writing(monkeypatch):
    """deny_writing(): from then on the permission check answers "no" to writing any path, as it
    does for a user without write permission (root is let through by the kernel, not by SQLite's
    read-only connection)."""
    return lambda: monkeypatch.setattr(store_access.os, "access", lambda path, mode, **kw: mode != os.W_OK)


def test_an_unwritable_store_is_opened_by_sqlite_for_reading_only(tmp_path, deny_writing):
    path = filled(tmp_path / "results.sqlite")
    deny_writing()
    before = digest(path)
    with Store(path) as store:
        assert store.read_only and len(store.results()) == 6 and store.count() == 6
        store.remember_image_hashes({"ref": "0" * 64})  # a shortcut only: quietly not kept
        with pytest.raises(StoreReadOnly, match=r"^the results store is read-only here \(no permission to write it\)"):
            store.record(Result("b", "i", "m", "0-shot", "none", Status.ANSWERED))
        with pytest.raises(sqlite3.OperationalError, match="readonly"):  # SQLite itself, even for root
            store._db.execute("INSERT INTO meta VALUES ('x', 'y')")
    assert digest(path) == before
    with pytest.raises(StoreReadOnly, match=rf"^results store {path} is read-only \(no permission to write it\)"):
        Store(path, read_only=False)


def test_a_store_opened_for_reading_never_writes(tmp_path):
    path = filled(tmp_path / "results.sqlite")
    before = digest(path)
    with Store(path, read_only=True) as store:
        assert store.read_only and store.count() == 6
        with pytest.raises(StoreReadOnly, match=r"\(opened for reading only\)"):
            store.record(Result("b", "i", "m", "0-shot", "none", Status.ANSWERED))
    assert digest(path) == before


def test_report_and_writers_in_process(tmp_path, deny_writing, capsys):
    path = filled(tmp_path / "results.sqlite")
    deny_writing()
    assert main([*REPORT, "--store", str(path)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert next(row["n"] for row in rows if row["group"] == "overall") == 6
    assert main([*RUN, "--store", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"error: results store {path} is read-only")


def test_the_scoreboard_reads_the_operators_store_in_process(tmp_path, monkeypatch, deny_writing):
    from tests.ui.conftest import reset_caches
    from ui.scoreboard import data as scoreboard_data
    from ui.sessions import shared_store

    home = tmp_path / "home"
    filled(home / "results.sqlite", items=5)
    monkeypatch.setenv("PROBE_HOME", str(home))
    reset_caches()
    deny_writing()
    try:
        assert scoreboard_data.stored_tally(reload=True).count() == 5
        assert shared_store().read_only
    finally:
        shared_store().close()
        reset_caches()
        scoreboard_data._tallies.clear()


def test_an_older_read_only_store_says_how_to_read_it(tmp_path, deny_writing):
    path = filled(tmp_path / "results.sqlite")
    as_version_3(path)  # no `ungraded` column
    deny_writing()
    with pytest.raises(InputRejected, match="written by an older version.*copy it to a folder you can write"):
        Store(path)


# --- a full disk -----------------------------------------------------------------------------


def test_a_disk_that_fills_up_during_a_run(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    store = disk / "results.sqlite"
    calls = [["run", "blind/touching-circles", "--model", "baseline/chance", "--param", "canvas=384",
              "--store", str(store)], [*REPORT, "--store", str(store)], [*RUN, "--store", str(store)]]  # fmt: skip
    answers = in_mount_namespace(f"mount -t tmpfs -o size=256k tmpfs {disk}", cli_calls(*calls))
    if answers is None:
        pytest.skip("no private mount namespace here (unshare/mount not allowed)")
    running, report, again = answers
    for answer in (running, again):
        assert answer["rc"] == 2 and answer["err"].count("\n") == 1, answer
        line = answer["err"]
        assert line.startswith(f"error: results store {store}: the disk is full (database or disk is full;"), line
        assert f"free in {disk}" in line and "free some space" in line
        assert ".recover" not in line and "internal error" not in line and "damaged" not in line
    assert report["rc"] == 0, report["err"]  # what was saved before the disk filled is read
    assert next(r["n"] for r in json.loads(report["out"]) if r["group"] == "overall") > 0


def test_sqlites_own_full_is_never_called_damage(tmp_path, monkeypatch, capsys):
    """SQLite's page limit makes it raise SQLITE_FULL as a full disk does, through the whole
    command; the disk here has room, and the message says that too."""
    limited = Store._open_for_writing

    def with_page_limit(self: Store) -> None:
        limited(self)
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        self._db.execute(f"PRAGMA max_page_count = {pages + 2}")

    monkeypatch.setattr(Store, "_open_for_writing", with_page_limit)
    store = tmp_path / "results.sqlite"
    assert main(["run", "blind/touching-circles", "--model", "baseline/chance", "--store", str(store)]) == 2
    line = capsys.readouterr().err
    assert line.count("\n") == 1 and line.startswith(f"error: results store {store}: the store could not grow")
    assert "database or disk is full" in line and f"is free in {tmp_path}" in line and ".recover" not in line


def test_a_nearly_full_disk_is_called_full_and_the_store_goes_on(tmp_path, monkeypatch):
    with Store(tmp_path / "results.sqlite") as store:
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(sqlite3.OperationalError) as full:
            store.record(Result("b", "i", "m", "0-shot", "none", Status.ANSWERED, reply="x" * 100_000))
        store._db.execute(f"PRAGMA max_page_count = {pages + 100}")  # room again: the next write goes through
        store.record(Result("b", "i", "m", "0-shot", "none", Status.ANSWERED, reply="x" * 1_000))
        assert store.count() == 1
    assert full.value.sqlite_errorname == "SQLITE_FULL"
    usage = type("Usage", (), {"total": 100 * 2**30, "used": 100 * 2**30 - 5 * 2**20, "free": 5 * 2**20})
    monkeypatch.setattr(store_access.shutil, "disk_usage", lambda folder: usage)
    (tmp_path / "results.sqlite.images").mkdir()
    message = store_problem(full.value, str(tmp_path / "results.sqlite"))
    assert message.startswith(f"results store {tmp_path / 'results.sqlite'}: the disk is full (database or disk is")
    assert f"5.0 MB free in {tmp_path}" in message and "results.sqlite.images beside the store can go" in message
    assert ".recover" not in message


def test_no_space_met_anywhere_in_a_command_is_one_line(tmp_path, monkeypatch, capsys):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out"))

    monkeypatch.setattr(commands, "import_file", full)
    records = tmp_path / "replies.jsonl"
    records.write_text('{"item_id": "x", "response": "Yes"}\n')
    arguments = ["import", str(records), "--benchmark", "blind/touching-circles", "--model", "m"]
    assert main([*arguments, "--store", str(tmp_path / "s.sqlite")]) == 2
    line = capsys.readouterr().err
    assert line == f"error: the disk is full (No space left on device: {tmp_path / 'out'}): free some space and run " \
                   "the same command again (what was saved is kept)\n"  # fmt: skip


def test_no_space_while_a_store_is_made(tmp_path, monkeypatch):
    def no_room(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "mkdir", no_room)
    with pytest.raises(
        InputRejected, match=r"the (disk is full|store could not grow) \(No space left on device"
    ) as caught:
        Store(tmp_path / "deeper" / "results.sqlite")
    assert ".recover" not in str(caught.value) and "new file name or a results store" not in str(caught.value)


def test_only_a_damaged_store_is_sent_to_recover(tmp_path):
    path = filled(tmp_path / "results.sqlite", items=None)
    data = bytearray(path.read_bytes())
    data[10 * 4096 : 30 * 4096] = b"\x07" * (20 * 4096)
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(bytes(data))
    assert_one_error_line(run_cli("report", "--store", str(broken)), "damaged", "sqlite3 FILE .recover")

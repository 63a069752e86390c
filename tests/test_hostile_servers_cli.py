"""`python -m probes run` against a model server that lies (tests/support/hostile_servers.py): the
run goes to its end with every other item kept (it used to abort as an internal error, 10 of 60
kept), each attacked item says what happened, and the process stays small while 1 GB gzip bombs
and 50 MB replies arrive (measured: the child's own peak RSS, from os.wait4)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

from tests.conftest import KEY_VARIABLES, REPO
from tests.support.fake_servers import FakeOpenAIServer
from tests.support.hostile_servers import MB, OPENAI_KEY, Attacks, leaks

ATTACKS = ["parts", "number", "null", "bomb", "bomb-nested", "huge-chunked", "echo-error"]
HONEST = ["fine", "also-fine", "fine-3", "fine-4", "fine-5", "fine-6", "fine-7"]  # the same shape of run


def run_measured(args: list[str], env: dict[str, str], folder: Path) -> tuple[int, str, str, int]:
    """`python -m probes ARGS`: exit status, stdout, stderr and the process's peak RSS in bytes."""
    environment = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    environment.update(PYTHONPATH=str(REPO), **env)
    out, err = folder / "stdout.txt", folder / "stderr.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "probes", *args], cwd=REPO, env=environment,
                                   stdout=stdout, stderr=stderr)  # fmt: skip
        watchdog = threading.Timer(600, process.kill)  # a hang fails the test instead of holding it
        watchdog.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage, nobody else's
        finally:
            watchdog.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, out.read_text(), err.read_text(), usage.ru_maxrss * 1024


def test_a_run_against_a_lying_server_keeps_every_other_item_and_stays_small(tmp_path):
    attacks = Attacks("openai")
    with FakeOpenAIServer(responder=lambda body: "Yes", fault=attacks) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": OPENAI_KEY, "PROBE_HOME": str(tmp_path / "home")}

        def run(names: list[str], name: str) -> tuple[int, str, str, int, Path]:
            store = tmp_path / f"{name}.sqlite"
            folder = tmp_path / name
            folder.mkdir()
            args = ["run", "blind/nested-squares", "--limit", "10", "--concurrency", "2", "--store", str(store)]
            for model in names:
                args += ["--model", f"openai/{model}"]
            return (*run_measured(args, env, folder), store)

        honest_status, _, honest_err, honest_peak, _ = run(HONEST, "honest")
        status, stdout, stderr, peak, store = run(ATTACKS, "hostile")

    assert honest_status == 0, honest_err
    # Items in error: exit 1 with the one-line summary, not an internal error.
    assert status == 1, stderr
    assert "request(s) failed; first: openai/" in stderr and "run the same command again" in stderr
    assert "internal error" not in stderr and not (tmp_path / "home" / "internal-errors.log").exists()
    for model in ATTACKS:
        assert f"openai/{model}" in stdout  # each model has its row in the table

    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT model, status, reply, error FROM results").fetchall()
        biggest = db.execute("SELECT max(length(reply)), max(length(raw)) FROM responses").fetchone()
    assert len(rows) == 10 * len(ATTACKS)  # every item of every model has its result
    statuses = Counter((model.split("/")[1], status) for model, status, _, _ in rows)
    assert statuses[("parts", "error")] == 0 and statuses[("parts", "unparsed")] + statuses[("parts", "answered")] == 10
    for model in ("number", "null", "bomb", "bomb-nested", "huge-chunked", "echo-error"):
        assert statuses[(model, "error")] == 10, statuses
    errors = {model.split("/")[1]: error for model, _, _, error in rows if error}
    assert "passed 4 MB" in errors["bomb"] and "passed 4 MB" in errors["huge-chunked"]
    assert "not text" in errors["number"]
    assert all(leaks(error, OPENAI_KEY) == [] for error in errors.values())
    assert biggest[0] < 100 and biggest[1] < 1_000

    # Twenty 1 GB bombs and ten 50 MB replies arrived; the process grew by a few MB at most.
    assert attacks.launched["bomb"] == attacks.launched["huge-chunked"] == 10
    print("PEAKS", honest_peak // MB, peak // MB)
    assert peak < honest_peak + 64 * MB, f"peak RSS {peak / MB:.0f} MB against {honest_peak / MB:.0f} MB honest"

"""Runs killed with SIGKILL at several moments, and two processes writing one store at once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

from tests.conftest import REPO
from tests.support.fake_servers import FakeOpenAIServer

ITEMS = 60
CONCURRENCY = 4


def count(store) -> int:
    try:
        with sqlite3.connect(store, timeout=5) as connection:
            return connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def cli(store, base_url: str, model: str = "openai/x", items: int = ITEMS) -> list[str]:
    return [sys.executable, "-m", "probes", "run", "blind/touching-circles", "--model", model, "--limit", str(items),
            "--concurrency", str(CONCURRENCY), "--store", str(store)]  # fmt: skip


def environment(base_url: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-crash-test"}


def test_killed_at_several_moments_and_restarted_nothing_lost_nothing_doubled(tmp_path):
    store = tmp_path / "r.sqlite"
    with FakeOpenAIServer(responder=lambda body: "No", latency=0.1) as server:
        env = environment(server.base_url)
        kept = 0
        for fraction in (0.1, 0.45, 0.8):  # kill at different moments of the run
            process = subprocess.Popen(cli(store, server.base_url), cwd=REPO, env=env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            deadline = time.monotonic() + 90
            while count(store) < int(ITEMS * fraction) and time.monotonic() < deadline:
                time.sleep(0.02)
            sent_at_kill = server.request_count
            process.send_signal(signal.SIGKILL)
            process.wait()
            now = count(store)
            assert now >= kept  # a kill never takes away what an earlier run saved
            assert sent_at_kill - now <= CONCURRENCY * 3  # only requests in flight were lost, each kill
            with sqlite3.connect(store) as connection:
                assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            kept = now
        before = server.request_count
        done = subprocess.run(
            cli(store, server.base_url), cwd=REPO, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert server.request_count - before == ITEMS - kept  # only the unfinished ones
    with sqlite3.connect(store) as connection:
        assert connection.execute("SELECT COUNT(*), COUNT(DISTINCT item_id) FROM results").fetchone() == (ITEMS, ITEMS)
        assert connection.execute("SELECT COUNT(*) FROM results WHERE status != 'answered'").fetchone()[0] == 0


def test_two_processes_write_one_store_at_once_without_locking_errors(tmp_path):
    store = tmp_path / "shared.sqlite"
    with FakeOpenAIServer(responder=lambda body: "Yes") as server:
        env = environment(server.base_url)
        runs = [
            subprocess.Popen(
                cli(store, server.base_url, model=model, items=300),
                cwd=REPO,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for model in ("openai/first", "openai/second")
        ]
        outputs = [process.communicate(timeout=240) for process in runs]
    for process, (_, stderr) in zip(runs, outputs, strict=True):
        assert process.returncode == 0, stderr
        assert "locked" not in stderr
    with sqlite3.connect(store) as connection:
        rows = dict(connection.execute("SELECT model, COUNT(*) FROM results GROUP BY model").fetchall())
    assert rows == {"openai/first": 300, "openai/second": 300}

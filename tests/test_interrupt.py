"""Ctrl-C on `python -m probes run`: the run stops sending, gives replies in flight a moment,
saves every reply it received, exits within 3 s with a message saying how to resume, and the
same command afterwards asks only what was not answered."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import KEY_VARIABLES, REPO, run_cli
from tests.support.fake_http import Fault
from tests.support.fake_servers import FakeOpenAIServer

ITEMS = 40
ANSWERED_FAST = 12  # the server answers this many at once, then hangs on every later request
WAIT_LIMIT = 120.0  # for conditions on a loaded machine; the run itself would take minutes


def stored(path: Path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(path, timeout=30) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM results WHERE status = 'answered'").fetchone()[0]
        except sqlite3.OperationalError:  # the run has not created its tables yet
            return 0


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_LIMIT
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def test_ctrl_c_stops_cleanly_keeps_every_reply_and_the_rerun_asks_only_the_rest(tmp_path):
    store = tmp_path / "results.sqlite"
    hanging = {"from": ANSWERED_FAST}  # requests from this index on hang (until the rerun)

    def hang(record: dict) -> Fault | None:
        return Fault("slow", seconds=600) if record["index"] >= hanging["from"] else None

    command = ["run", "blind/touching-circles", "--model", "openai/x", "--limit", str(ITEMS), "--concurrency", "4",
               "--store", str(store)]  # fmt: skip
    with FakeOpenAIServer(responder=lambda body: "No", fault=hang) as server:
        env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
        env.update(PYTHONPATH=str(REPO), OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test-interrupt")
        process = subprocess.Popen([sys.executable, "-m", "probes", *command], cwd=REPO, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            wait_for(lambda: stored(store) == ANSWERED_FAST, "the fast replies to be stored")
            wait_for(lambda: server.request_count >= ANSWERED_FAST + 4, "requests hanging in flight")
            sent_before = server.request_count
            process.send_signal(signal.SIGINT)
            started = time.monotonic()
            out, err = process.communicate(timeout=WAIT_LIMIT)
            took = time.monotonic() - started
        finally:
            if process.poll() is None:
                process.kill()
        assert took < 3.0, f"took {took:.1f} s to stop"
        assert process.returncode == 130, err
        assert "Traceback" not in err and "Run the same command to continue" in err, err
        assert server.request_count == sent_before  # nothing new went out after Ctrl-C
        assert stored(store) == ANSWERED_FAST  # every reply received was saved; none was invented

        # The same command against the same server (its address is part of the cache key).
        hanging["from"] = 10**9
        server.reset()
        done = run_cli(*command, env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-interrupt"})
        assert done.returncode == 0, done.stderr
        assert server.request_count == ITEMS - ANSWERED_FAST
    assert stored(store) == ITEMS

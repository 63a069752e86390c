"""Load: 20 sessions at once, driven with gradio_client against `python app.py`, each generating
its own stimulus and probing 3 models served by a local OpenAI-protocol server that answers after
300 ms. Reports p50 and p95 of a probe, whether every session saw only its own item, and the time
of a page load taken in the middle of the load.

Run from the repository root:  python -m bench.load [--sessions 20]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.support.fake_servers import serve_in_subprocess

REPO = Path(__file__).resolve().parent.parent
MODELS = ("openai/load-a", "openai/load-b", "openai/load-c")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


def session(url: str, number: int) -> tuple[float, bool]:
    """One visitor: their own stimulus (seed = their number), then three models at once.
    Returns (seconds the probe took, whether every pane showed this visitor's own item)."""
    from gradio_client import Client

    client = Client(url, verbose=False, download_files=False)  # a script wants the answers, not the pictures
    *_, question, answer, _ = client.predict("blind/touching-circles", "", number, api_name="/generate_stimulus")
    started = time.perf_counter()
    status, grid, _, _ = client.predict(*MODELS, None, ["as asked"], "", "", api_name="/probe")
    seconds = time.perf_counter() - started
    own = f"Right answer: <b>{answer.split('.')[0]}" in grid and "3 of 3" in status
    return seconds, own


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20)
    args = parser.parse_args()
    server, base_url, request_count = serve_in_subprocess("openai", "No", latency=0.3)
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-load-test", "PROBE_HOME": home,
               "GRADIO_SERVER_PORT": str(port), "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_ANALYTICS_ENABLED": "False"}  # fmt: skip
        app = subprocess.Popen(
            [sys.executable, "app.py"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            wait_for(url)
            page_load: list[float] = []

            def load_page_midway() -> None:
                time.sleep(2.0)
                started = time.perf_counter()
                with urllib.request.urlopen(url, timeout=60) as response:
                    response.read()
                page_load.append(time.perf_counter() - started)

            loader = threading.Thread(target=load_page_midway)
            started = time.perf_counter()
            loader.start()
            with ThreadPoolExecutor(args.sessions) as pool:
                outcomes = list(pool.map(lambda n: session(url, n), range(args.sessions)))
            wall = time.perf_counter() - started
            loader.join()
            served = request_count()
        finally:
            app.terminate()
            app.wait(timeout=30)
            server.kill()
    times = sorted(seconds for seconds, _ in outcomes)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    print(f"sessions {args.sessions}, 3 models each, server latency 300 ms, cores {os.cpu_count()}")
    print(
        f"all completed: {len(outcomes) == args.sessions}; every session saw only its own item: {all(own for _, own in outcomes)}"
    )
    print(f"probe latency: p50 {statistics.median(times):.2f} s, p95 {p95:.2f} s (ideal 0.30 s); wall {wall:.2f} s")
    print(f"requests served by the model server: {served} (expected {3 * args.sessions})")
    print(f"page load during the load: {page_load[0]:.2f} s")


if __name__ == "__main__":
    main()

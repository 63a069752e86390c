"""Start-up time: seconds from `python app.py` to the first successful HTTP response, against a
bare Gradio "hello" app started the same way in the same run. Median of several starts each.

Run from the repository root:  python -m bench.startup [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HELLO = """
import os, gradio as gr
with gr.Blocks(title="hello") as demo:
    gr.Markdown("hello")
demo.launch(server_name="127.0.0.1", server_port=int(os.environ["GRADIO_SERVER_PORT"]))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def time_to_first_response(command: list[str], home: str) -> float:
    port = free_port()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_SERVER_NAME": "127.0.0.1", "PROBE_HOME": home,
           "GRADIO_ANALYTICS_ENABLED": "False"}  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{command} exited with {process.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1) as response:
                    if response.status == 200:
                        return time.perf_counter() - started
            except OSError:
                time.sleep(0.05)
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        hello_script = Path(home) / "hello.py"
        hello_script.write_text(HELLO)
        app_times, hello_times = [], []
        for _ in range(args.runs):  # interleaved, so both see the same machine load
            hello_times.append(time_to_first_response([sys.executable, str(hello_script)], home))
            app_times.append(time_to_first_response([sys.executable, "app.py"], home))
    app, hello = statistics.median(app_times), statistics.median(hello_times)
    print(f"runs {args.runs}, cores {os.cpu_count()}")
    print(f"bare Gradio hello app: median {hello:.2f} s  (all: {', '.join(f'{t:.2f}' for t in hello_times)})")
    print(f"python app.py:         median {app:.2f} s  (all: {', '.join(f'{t:.2f}' for t in app_times)})")
    print(f"ratio app / hello:     {app / hello:.2f}  (goal: within 1.5)")


if __name__ == "__main__":
    main()

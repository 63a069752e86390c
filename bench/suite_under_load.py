"""The README's test command beside a CPU hog on every core, several times on one commit: the
record that the suite holds on a busy machine (no test that passes only when the box is idle).

    python -m bench.suite_under_load [--runs 3] [--hogs N] [--log-dir DIR]

Each run: N busy processes (default: one per core) spinning at the same priority as the tests,
then `python -m pytest -q -p no:cacheprovider` (the README's command) in this checkout. Prints per
run the outcome, the wall time, the load average seen and the failures' names; and, for a
baseline, nothing: the point is the count of failures, not the time."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMAND = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


def _spin(stop: multiprocessing.Event) -> None:
    value = 0
    while not stop.is_set():
        for _ in range(100_000):
            value = (value * 31 + 7) % 1_000_003


def _load_sampler(samples: list[float], stop: threading.Event) -> None:
    while not stop.wait(30):
        samples.append(os.getloadavg()[0])


def one_run(number: int, hogs: int, log_dir: Path) -> dict:
    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(hogs)]
    for spinner in spinners:
        spinner.start()
    samples: list[float] = []
    sampling = threading.Event()
    sampler = threading.Thread(target=_load_sampler, args=(samples, sampling), daemon=True)
    sampler.start()
    log = log_dir / f"suite-under-load-{number}.log"
    started = time.monotonic()
    try:
        with log.open("w", encoding="utf-8") as out:
            code = subprocess.run(COMMAND, cwd=REPO, stdout=out, stderr=subprocess.STDOUT).returncode
    finally:
        stop.set()
        sampling.set()
        for spinner in spinners:
            spinner.join(timeout=10)
    text = log.read_text(encoding="utf-8", errors="replace")
    summary = next(
        (line for line in reversed(text.splitlines()) if " in " in line and ("passed" in line or "failed" in line)), ""
    )
    return {
        "run": number,
        "code": code,
        "minutes": (time.monotonic() - started) / 60,
        "load": (min(samples), max(samples)) if samples else (0.0, 0.0),
        "summary": summary.strip("= "),
        "failed": re.findall(r"^FAILED (\S+)", text, flags=re.M),
        "log": str(log),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--hogs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--log-dir", type=Path, default=Path("/tmp"))
    args = parser.parse_args()
    args.log_dir.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    print(f"commit {commit}, {args.hogs} CPU hogs, {args.runs} runs of: {' '.join(COMMAND[1:])}", flush=True)
    print("| run | outcome | minutes | load average | failures |\n| --- | --- | --- | --- | --- |", flush=True)
    for number in range(1, args.runs + 1):
        result = one_run(number, args.hogs, args.log_dir)
        low, high = result["load"]
        print(f"| {number} | {result['summary'] or 'exit ' + str(result['code'])} | {result['minutes']:.1f} |"
              f" {low:.1f}-{high:.1f} | {', '.join(result['failed']) or 'none'} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()

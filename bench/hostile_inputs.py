"""Hostile and broken input (issue 6): every kind of tests/support/hostile_corpus.py, built in a
temporary folder and tried through a custom folder (`python -m probes run custom:...`), an import
(`python -m probes import ...`) and an upload (`UploadSet.from_files`, what the UI calls).

Prints one row per kind (the outcome on each path) and the figures: kinds tried, kinds handled
(every path gave a clear message naming the file, or normalised the image correctly), crashes
(a traceback, an unexpected exit status or exception; goal 0).

Run from the repository root:  python -m bench.hostile_inputs
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.support.hostile_corpus import KINDS, PATHS
from tests.support.hostile_trials import Report, try_kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4, help="kinds tried at once (each runs two CLI processes)")
    parser.add_argument("--verbose", action="store_true", help="print each path's message or check")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hostile-") as temp, ThreadPoolExecutor(args.workers) as pool:
        roots = [Path(temp) / f"kind{index:02d}" for index in range(len(KINDS))]
        reports: list[Report] = list(pool.map(try_kind, KINDS, roots))
    elapsed = time.perf_counter() - started

    width = max(len(kind.name) for kind in KINDS)
    print((f"{'kind':<{width}}  " + "  ".join(f"{path:<8}" for path in PATHS)).rstrip())
    for kind, report in zip(KINDS, reports, strict=True):
        status = {outcome.path: outcome.status for outcome in report.outcomes}
        mark = "" if kind.required else "  (extra)"
        print((f"{kind.name:<{width}}  " + "  ".join(f"{status.get(path, '-'):<8}" for path in PATHS) + mark).rstrip())
        for outcome in report.outcomes if args.verbose or not report.handled else []:
            print(f"    {outcome.path}: {outcome.detail[:300]}")

    runs = [outcome for report in reports for outcome in report.outcomes]
    required = [report for kind, report in zip(KINDS, reports, strict=True) if kind.required]
    print()
    print(f"kinds tried:   {len(reports)} ({len(required)} listed in issue 6, {len(reports) - len(required)} more)")
    print(f"paths tried:   {len(runs)} (custom {_count(runs, 'custom')}, import {_count(runs, 'import')}, "
          f"upload {_count(runs, 'upload')})")  # fmt: skip
    print(f"kinds handled: {sum(r.handled for r in reports)} of {len(reports)} "
          f"({sum(r.handled for r in required)} of {len(required)} listed in issue 6)")  # fmt: skip
    print(f"paths handled: {sum(o.status == 'handled' for o in runs)} of {len(runs)}; "
          f"wrong: {sum(o.status == 'wrong' for o in runs)}")  # fmt: skip
    print(f"crashes:       {sum(r.crashes for r in reports)} (goal 0)")
    print(f"wall time:     {elapsed:.1f} s with {args.workers} workers")


def _count(runs, path: str) -> int:
    return sum(outcome.path == path for outcome in runs)


if __name__ == "__main__":
    main()

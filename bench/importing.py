"""Imports at scale (issues 33 and 34): `python -m probes import` of 100,000 and 1,000,000 rows,
each in a fresh process as a person runs it, timed from process start to exit.

Files, made here (a fixed seed; nothing downloaded):
- JSON Lines for blind/touching-circles, every record standalone (`target`, a category, a
  quarter with `probabilities`), in two kinds of replies:
  `jsonl-logs`: replies as logs of a yes/no benchmark hold them, short ones repeating ("Yes",
  "No.", "{No}", "Answer: Yes", a refusal, a hedge; 24 in all);
  `jsonl-distinct`: every reply distinct, a sentence naming its item and a gap before its answer
  (the reader's whole work for every row: the rate a log of reasoning replies would get);
- a VLMEvalKit prediction table (`.tsv`) for illusionvqa/comprehension, every row its own
  question ("... (item N)") and options from four sets, predictions as VLMEvalKit's users get
  them (a letter, "C. Three", "The answer is A", a hedge ...), imported with --benchmark and no
  local copy of IllusionVQA (every row graded from the file alone: the parser's work, not the
  matching's);
- the same table as `.xlsx` (100,000 rows only: openpyxl writes a million rows in about 20 min).

Each is imported into a new store with this checkout's code and, with `--before DIR` (an
exported checkout of the code before, `git archive HEAD | tar -x -C DIR`), with that code, in
the same run, at the sizes in `--before-sizes` (the code before needs about 12 minutes and several
GB for a million JSON lines, and 2 ms a row for the table). Printed per import: wall seconds, CPU
seconds (the child's user + system), results per second of wall time, peak RSS, and the ratio of
the code before's wall time to this code's; and the machine's load before and after, since the
2-core machine these figures come from is shared.

Run from the repository root:  python -m bench.importing [--sizes 100000,1000000] [--before DIR]
    [--before-sizes 100000] [--before-kinds KIND,...] [--kinds jsonl-logs,jsonl-distinct,tsv,xlsx]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KINDS = ("jsonl-logs", "jsonl-distinct", "tsv", "xlsx")
XLSX_MAX_ROWS = 100_000

LOG_REPLIES = [
    "Yes", "No", "yes", "no", "Yes.", "No.", "{Yes}", "{No}", "Answer: Yes", "Answer: No", "YES", "NO",
    "Yes, they are touching.", "No, they are not touching.", "The circles touch.", "The circles do not touch.",
    "Yes, the two circles overlap.", "No, there is a gap between them.", "I cannot tell from the image.",
    "Yes or no, hard to say.", "I'm sorry, I can't help with that.", "hmm", "", "Maybe.",
]  # fmt: skip
TABLE_QUESTIONS = [
    ("Are the two lines the same length?", ["No.", "Yes.", "Cannot tell."]),
    ("How many faces are hidden?", ["One", "Two", "Three", "Four"]),
    ("Which circle is larger?", ["Left", "Right", "Same"]),
    ("Describe this image.", ["A staircase", "A duck"]),
]
PREDICTIONS = ["B", "C. Three", "I'd go with option b", "A", "The answer is A", "Probably B or C", "b", "Yes.", "D",
               "The left one.", "Answer: C", "It is a duck."]  # fmt: skip


def write_jsonl(path: Path, rows: int, distinct: bool) -> None:
    rng = random.Random(rows)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(rows):
            target = rng.choice(["yes", "no"])
            if distinct:
                word = rng.choice(["touching", "apart", "overlapping", "separate"])
                answer = rng.choice(["Yes", "No"])
                reply = f"In image {i} the circles look {word}, with a gap of about {rng.randrange(40)} px. Answer: {answer}"
            else:
                reply = rng.choice(LOG_REPLIES)
            record = {"item_id": f"tc-{i}", "response": reply, "target": target, "category": rng.choice(["", "gap"])}
            if i % 4 == 0:
                yes = round(rng.uniform(0.05, 0.95), 3)
                record["probabilities"] = {"Yes": yes, "No": round(1 - yes, 3)}
            handle.write(json.dumps(record) + "\n")


def table_rows(rows: int) -> list[dict]:
    rng = random.Random(rows)
    found = []
    for i in range(rows):
        question, options = rng.choice(TABLE_QUESTIONS)
        row = {"index": i, "question": f"{question} (item {i})"}
        for place in range(4):
            row["ABCD"[place]] = options[place] if place < len(options) else ""
        row |= {"answer": "ABCD"[rng.randrange(len(options))], "category": rng.choice(["size", "counting", "color"]),
                "prediction": rng.choice(PREDICTIONS)}  # fmt: skip
        found.append(row)
    return found


def write_table(path: Path, rows: int) -> None:
    import pandas as pd

    table = pd.DataFrame(table_rows(rows))
    if path.suffix == ".xlsx":
        table.to_excel(path, index=False)
    else:  # as VLMEvalKit dumps a .tsv: every cell quoted
        table.to_csv(path, sep="\t", index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)


def make_file(folder: Path, kind: str, rows: int) -> Path:
    names = {"jsonl-logs": "logs", "jsonl-distinct": "distinct", "tsv": "M_IllusionVQA", "xlsx": "M_IllusionVQA"}
    suffix = {"tsv": ".tsv", "xlsx": ".xlsx"}.get(kind, ".jsonl")
    path = folder / f"{names[kind]}_{rows}{suffix}"
    if not path.exists():
        started = time.perf_counter()
        if kind.startswith("jsonl"):
            write_jsonl(path, rows, distinct=kind == "jsonl-distinct")
        else:
            write_table(path, rows)
        print(f"  made {path.name} ({path.stat().st_size / 1e6:,.1f} MB) in {time.perf_counter() - started:.0f} s",
              flush=True)  # fmt: skip
    return path


def command(kind: str, path: Path, store: Path) -> list[str]:
    if kind.startswith("jsonl"):
        return ["import", str(path), "--benchmark", "blind/touching-circles", "--model", "bench/model", "--store",
                str(store)]  # fmt: skip
    return ["import", str(path), "--from", "vlmevalkit", "--benchmark", "illusionvqa/comprehension", "--model",
            "bench/model", "--store", str(store)]  # fmt: skip


def timed(code: Path, arguments: list[str], timeout: float) -> dict:
    """One import in a fresh process with the code at `code`: wall and CPU seconds (the child's
    user + system time, from its own rusage), peak RSS, its last line of output."""
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "probes", *arguments], cwd=code, env=env, stdout=out,
                                   stderr=err)  # fmt: skip
        killer = threading.Timer(timeout, process.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            killer.cancel()
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        lines, problems = out.read().decode().strip().splitlines(), err.read().decode().strip().splitlines()
    if process.returncode != 0:
        print(f"    failed ({process.returncode}): {problems[-1:]}", flush=True)
        return {"wall": None}
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
            "last": (lines or [""])[-1], "progress_lines": sum(1 for line in problems if "] " in line)}  # fmt: skip


def machine() -> str:
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    try:
        pressure = Path("/proc/pressure/cpu").read_text().splitlines()[0].split()[1]
    except OSError:
        pressure = "n/a"
    return f"load {load}, cpu pressure {pressure}, {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--before", type=Path, help="an exported checkout of the code before")
    parser.add_argument("--before-sizes", default="100000")
    parser.add_argument("--before-kinds", help="the kinds to import with the code before (default: all of --kinds)")
    parser.add_argument("--files", type=Path, help="a folder to keep the made files in (default: a temporary one)")
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    before_sizes = {int(s) for s in args.before_sizes.split(",")} if args.before else set()
    kinds = [k for k in args.kinds.split(",") if k]
    before_kinds = set(args.before_kinds.split(",")) if args.before_kinds else set(kinds)
    files = args.files or Path(tempfile.mkdtemp(prefix="bench-importing-"))
    files.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-importing-stores-"))
    print(f"machine at start: {machine()}", flush=True)
    rows_out = []
    try:
        for rows in sizes:
            for kind in kinds:
                if kind == "xlsx" and rows > XLSX_MAX_ROWS:
                    continue
                path = make_file(files, kind, rows)
                measured = {}
                for label, code in (("now", REPO), ("before", args.before)):
                    if code is None or (label == "before" and (rows not in before_sizes or kind not in before_kinds)):
                        continue
                    store = work / f"{kind}-{rows}-{label}.sqlite"
                    print(f"  {kind} {rows:,} rows, code {label} ({machine()}) ...", flush=True)
                    found = timed(code, command(kind, path, store), args.timeout)
                    for suffix in ("", "-wal", "-shm"):
                        Path(f"{store}{suffix}").unlink(missing_ok=True)
                    measured[label] = found
                    if found["wall"] is not None:
                        print(f"    {found['wall']:.1f} s wall, {found.get('cpu', 0):.1f} s CPU, "
                              f"{rows / found['wall']:,.0f} results/s, peak {found.get('rss_mb', 0):,.0f} MB: "
                              f"{found['last']}", flush=True)  # fmt: skip
                rows_out.append((kind, rows, measured))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if args.files is None:
            shutil.rmtree(files, ignore_errors=True)
    print(f"\nmachine at end: {machine()}\n")
    print("| file | rows | now: wall s (CPU s) | now: results/s | now: peak RSS | before: wall s (CPU s) "
          "| before: results/s | before: peak RSS | before / now (wall) |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind, rows, measured in rows_out:
        cells = []
        for label in ("now", "before"):
            found = measured.get(label)
            if not found or found["wall"] is None:
                cells += ["-", "-", "-"]
                continue
            cells += [f"{found['wall']:.1f} ({found.get('cpu', 0):.1f})", f"{rows / found['wall']:,.0f}",
                      f"{found.get('rss_mb', 0):,.0f} MB"]  # fmt: skip
        now, before = measured.get("now"), measured.get("before")
        ratio = f"{before['wall'] / now['wall']:.1f}x" if now and before and now["wall"] and before["wall"] else "-"
        print(f"| {kind} | {rows:,} | {' | '.join(cells)} | {ratio} |")


if __name__ == "__main__":
    main()

"""Scoreboard at scale: how long the Scoreboard tab and `report` take on a store of 100,000 and of
1,000,000 results, each measured in a fresh process as a person meets it (the app built, then the
Scoreboard tab opened), and what keeping the counts costs the writes.

Two stores, filled by bench/scoreboard_stores.py:
- 100,000 results: blind/touching-circles, 8 models x 3 modes, grouped by gap (14 values): one
  benchmark holding everything (the harness's store before issue 24); two of the models (a
  quarter of the results) gave answer probabilities (issue 26);
- 1,000,000 results: a researcher's sweep, the seven illusion/* families x 4 models x every
  condition (4 modes x 6 perturbations), 1,500 items each, grouped as the families group them
  (difference, inducers, illusion strength, congruence ...), 1% errors, some ungraded, three
  people on two of them and a few single probe clicks; the local hf/ model's replies (a quarter
  of the results) carry answer probabilities, as `run --probabilities` stores them.

For each store, in a child process: the first view (`sync`, then `scoreboard`, as opening the tab
runs them: the leaderboard, the default benchmark's table, CSV/JSON, its charts), each filter change
(models, mode, perturbation, group breakdown: `scoreboard` again), another benchmark (`sync` and
`scoreboard`), `/scoreboard` called as an API (which also computes mode agreement and latency), the
Modes & latency, Curves and Compare views opened, and `report --format json` (overall, and by a
group). With `--before CHECKOUT` (an exported checkout of the code before, e.g.
`git archive c1537d2 | tar -x -C /tmp/before`), the same first view, filter changes and report are
timed with that code on a copy of the store, in the same run.

Writes: 100,000 results recorded into a store three ways (new cells; every cell again with a
changed answer; every cell again unchanged, as a cached re-run saves it), with this code and (with
`--before`) the code before.

Run from the repository root:  python -m bench.scoreboard [--sizes 100000,1000000] [--before DIR] [--keep DIR]
(--keep: the filled stores are kept in DIR/SIZE/ and reused by the next run, for measuring again.)
"""

from __future__ import annotations

import argparse
import inspect
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

# Its sibling by file, not as bench.scoreboard_stores: the child processes run with the code
# measured (perhaps an older checkout, without it) first on the path.
sys.path.append(str(Path(__file__).resolve().parent))
from scoreboard_stores import scenario_of, sweep_results  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

# --- one process's measures ------------------------------------------------------------------------


def timed(work) -> tuple[float, object]:
    started = time.perf_counter()
    value = work()
    return time.perf_counter() - started, value


def _call(function, *args, **named):
    """A handler as this checkout has it: `view` only where the code has one (the code before
    issue 24 computed every view's data in `scoreboard` and `sync`)."""
    accepted = inspect.signature(function).parameters
    return function(*args, **{k: v for k, v in named.items() if k in accepted})


def child(args: argparse.Namespace) -> None:
    """Run in a fresh process (the code is this checkout's, or the one on PYTHONPATH): the app
    built, then everything a person does on the Scoreboard, timed; JSON on the last line."""
    os.environ["PROBE_HOME"] = str(Path(args.store).parent)
    import app

    app.build_demo()  # the app as it starts: tabs built, plotly imported
    from ui.scoreboard import handlers, scoreboard

    scenario = scenario_of(args.size)
    figures: dict[str, object] = {}
    origins = ["human", "import", "judgement", "run"]

    def value(update: object) -> object:
        return update.get("value") if isinstance(update, dict) else None

    def first_view(benchmark: str | None = None) -> str:
        """What opening the tab runs: `sync` (the view unknown yet), then `scoreboard` with the
        agreement's model and modes `sync` chose (the code before chose them there)."""
        synced = _call(handlers.sync, False, benchmark, [], "all", "all", "overall only", None, [], None, "models", None,
                       [], view=None)  # fmt: skip
        chosen = value(synced[1])
        view = synced[12] if len(synced) > 12 else None  # this code's sync says the view open: the Table
        _call(scoreboard, chosen, [], "all", "all", "overall only", value(synced[6]), value(synced[7]) or [], origins,
              view=view)  # fmt: skip
        return chosen

    def reopen() -> None:
        """A fresh connection to the store and nothing kept from it (as after the app starts)."""
        from ui import sessions
        from ui.scoreboard import data as scoreboard_data

        sessions.shared_store.cache_clear()
        for kept in ("_cache", "_shown", "_derived", "_tallies"):
            getattr(scoreboard_data, kept, {}).clear()

    def forget_results() -> None:
        """Each view timed as the first one opened after the first view: nothing of single results
        kept from another view (what the first view worked out from the counts is kept, as it is
        for a person who opens the tab, then a view)."""
        from ui.scoreboard import curves
        from ui.scoreboard import data as scoreboard_data

        for kept in (getattr(curves, "_details", {}), getattr(curves, "_fits", {})):
            kept.clear()
        for key in [k for k in scoreboard_data._derived if k[1].startswith(("graded\x1f", "keys\x1f"))]:
            del scoreboard_data._derived[key]  # the code before kept single results' reads here
        try:
            from ui.scoreboard import answers
        except ImportError:
            return
        answers._kept.clear()

    figures["first view"], benchmark = timed(first_view)
    figures["benchmark"] = benchmark
    reopen()
    figures["first view, store reopened"] = timed(lambda: first_view(benchmark))[0]
    changes = {
        "models": ([*scenario["models"]], "all", "all", "overall only"),
        "mode": ([], scenario["mode"], "all", "overall only"),
        "perturbation": ([], "all", scenario["perturbation"], "overall only"),
        "group breakdown": ([], "all", "all", scenario["group"]),
        "all four": ([*scenario["models"]], scenario["mode"], scenario["perturbation"], scenario["group"]),
    }
    agree_model, agree_modes = scenario["agreement"]
    for name, (models, mode, perturbation, group) in changes.items():
        # The page's own call on the Table view; the code before computed agreement and latency too.
        figures[f"filter: {name}"] = min(
            timed(lambda m=models, o=mode, p=perturbation, g=group: _call(
                scoreboard, benchmark, m, o, p, g, agree_model, agree_modes, origins, view="table"))[0]
            for _ in range(3)
        )  # fmt: skip
    from ui.scoreboard.data import stored_tally

    if hasattr(stored_tally(), "calibration_of"):  # issue 26: the first view's read of the results with probabilities
        reads = []
        for _ in range(3):  # each time from a fresh read of the store, its cells read first (not timed)
            fresh = stored_tally(reload=True)
            fresh.cells_of(benchmark)
            reads.append(timed(lambda t=fresh: t.calibration_of(benchmark))[0])
        figures["calibration sums read"] = min(reads)
    if scenario["other"]:
        figures["another benchmark"] = timed(lambda: first_view(scenario["other"]))[0]
    figures["/scoreboard API (all views)"] = timed(
        lambda: _call(scoreboard, benchmark, [], "all", "all", "overall only", agree_model, agree_modes))[0]  # fmt: skip
    try:
        from ui.scoreboard.views import compare, modes_opened, psychometric
    except ImportError:  # the code before issue 24: these views' data came with `sync` and `scoreboard`
        modes_opened = None
    if modes_opened is not None:
        forget_results()
        figures["Modes & latency opened"] = timed(
            lambda: modes_opened(benchmark, [], "all", "all", None, [], origins))[0]  # fmt: skip
        param = next(p for p in scenario["curves"] if p in _swept(benchmark))
        forget_results()
        figures["Curves opened"] = timed(lambda: psychometric(benchmark, param, [], "all", "all"))[0]
        figures["Curves, again"] = timed(lambda: psychometric(benchmark, param, [], "all", "all"))[0]
        axis, a, b = scenario["compare"]
        forget_results()
        figures["Compare opened"] = timed(lambda: (
            handlers.compare_choices(benchmark, axis, a, b, [], "all", "all", False),
            compare(benchmark, axis, a, b, [], "all", "all")))[0]  # fmt: skip
        forget_results()
        figures["Compare opened, A and B chosen for you"] = timed(lambda: compare(
            benchmark, axis, *_values(handlers.compare_choices(benchmark, axis, None, [], [], "all", "all", False)),
            [], "all", "all"))[0]  # fmt: skip
        # The alternative to kept counts, timed: every cell counted by a GROUP BY over the results
        # (json_each for the groups), as a read-only store from before the counts is read and as
        # an older store is upgraded once.
        from probes.running import cells
        from ui.sessions import shared_store

        opened = shared_store()
        figures["GROUP BY instead of kept counts"] = timed(lambda: cells.count(opened._db))[0]
    from probes.cli import main

    for name, extra in (("report", []), (f"report --by {scenario['group']}", ["--by", scenario["group"]])):
        with redirect_stdout(io.StringIO()) as printed:
            figures[name] = timed(lambda e=extra: main(["report", "--store", args.store, "--format", "json", *e]))[0]
        figures[f"{name} rows"] = len(json.loads(printed.getvalue()))
    figures["peak RSS MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(figures))


def _values(updates: tuple[dict, dict]) -> tuple[str, list[str]]:
    """The A and B `compare_choices` chose."""
    return updates[0]["value"], updates[1]["value"]


def _swept(benchmark: str) -> list[str]:
    from ui.scoreboard.data import facets, origins_for, stored_tally

    return facets(stored_tally(), benchmark, origins_for(False)).swept


def measured(size: int, store: Path, code: Path, label: str, fit: bool = True) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "--size", str(size), "--store",
                           str(store)], cwd=code, env=env, capture_output=True, text=True, timeout=3600)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{label} failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    # `report` as a person types it, each in a process of its own: its time from start to exit
    # and its own peak memory (the child above holds the app as well). With the package's
    # bytecode written first, as on any machine that has run it once: compiling it again in each
    # process (PYTHONDONTWRITEBYTECODE, set on the machines these figures come from) added 0.3 s.
    subprocess.run([sys.executable, "-m", "compileall", "-q", "probes"], cwd=code, check=True, timeout=600,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})  # fmt: skip
    commands = {"report (own process)": []}
    param = scenario_of(size)["fit"]
    if fit and param:
        commands[f"report --fit {param} (own process)"] = ["--fit", param]
    for name, extra in commands.items():
        seconds, peak, rows = command(code, store, extra)
        figures[name], figures[f"{name} peak MB"], figures[f"{name} rows"] = seconds, peak, rows
    return figures


_PEAK = "peak-rss-kib "
# `python -m probes ARGS` that also writes its own peak RSS on stderr as it exits.
_WITH_PEAK = (
    "import atexit, resource, runpy, sys\n"
    f"atexit.register(lambda: print({_PEAK!r} + str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss), "
    "file=sys.stderr))\n"
    "sys.argv = ['probes', *sys.argv[1:]]\n"
    "runpy.run_module('probes', run_name='__main__')\n"
)


def command(code: Path, store: Path, extra: list[str]) -> tuple[float, float, int]:
    """`python -m probes report --store STORE --format json EXTRA` with `code`, in a process of
    its own: seconds from start to exit, its peak RSS in MB, and the rows printed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"PYTHONPATH": str(code), "PROBE_HOME": str(store.parent)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _WITH_PEAK, "report", "--store", str(store), "--format", "json",
                           *extra], cwd=code, env=env, capture_output=True, text=True, timeout=3600)  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"report {extra} failed:\n{done.stderr[-3000:]}")
    peak = next(int(line[len(_PEAK) :]) for line in done.stderr.splitlines() if line.startswith(_PEAK)) / 1024
    return seconds, peak, len(json.loads(done.stdout))


# --- writes ----------------------------------------------------------------------------------------


def writes(count: int) -> dict:
    """Results/s recording `count` results as new cells, as changed re-runs and as unchanged ones."""
    from probes.running.store import Store

    fresh = list(sweep_results(count, seed=3))
    changed = [r.__class__(**{**r.__dict__, "latency": (r.latency or 0) + 0.5}) for r in sweep_results(count, seed=4)]
    figures = {}
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "writes.sqlite") as store:
        for name, results in (("new", fresh), ("changed", changed), ("unchanged", changed)):
            started = time.perf_counter()
            for start in range(0, len(results), 500):  # the runner's group commits are of this order
                store.record_many([(r, None, "") for r in results[start : start + 500]])
            figures[name] = len(results) / (time.perf_counter() - started)
    return figures


def writes_child(args: argparse.Namespace) -> None:
    print(json.dumps(writes(args.size)))


def writes_in(code: Path, count: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--writes", "--size", str(count)], cwd=code,
                          env=env, capture_output=True, text=True, timeout=3600)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"writes failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- the report ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--before", help="an exported checkout of the code before, timed on a copy of each store")
    parser.add_argument("--write-count", type=int, default=100_000)
    parser.add_argument("--fit-before", action="store_true", help="also time `report --fit` with the code before")
    parser.add_argument("--keep", help="a folder to keep each filled store in (SIZE/results.sqlite), reused when there")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--writes", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.writes:
        return writes_child(args)
    sys.path.insert(0, str(REPO))
    from probes.running.store import Store

    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} at the start")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as home:
            path = (Path(args.keep) / str(size) if args.keep else Path(home)) / "results.sqlite"  # the app's name
            filled = path.exists()
            path.parent.mkdir(parents=True, exist_ok=True)
            with Store(path) as store:
                seconds = 0.0 if filled else timed(lambda s=store, n=size: scenario_of(n)["fill"](s, n))[0]
                stored = store.count()
            how = (
                "kept from an earlier run"
                if filled
                else f"filled in {seconds:.0f} s, {stored / seconds:,.0f} results/s"
            )
            print(f"\n## {stored:,} results ({path.stat().st_size / 2**20:,.0f} MB; {how})")
            runs = {"this code": measured(size, path, REPO, "this code")}
            if args.before:
                copy = Path(home) / "before" / "results.sqlite"
                copy.parent.mkdir()
                shutil.copy(path, copy)
                as_left_by(Path(args.before), copy)
                runs["before"] = measured(size, copy, Path(args.before), "before", fit=args.fit_before)
            _table(runs)
            print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"\n## writes: {args.write_count:,} results, 500 per transaction (results/s)")
    figures = {"this code": writes(args.write_count)}
    if args.before:
        figures["before"] = writes_in(Path(args.before), args.write_count)
    for label, found in figures.items():
        print(f"{label:10} " + "  ".join(f"{name} {rate:,.0f}" for name, rate in found.items()))


def as_left_by(code: Path, store: Path) -> None:
    """The copy as the code before would have left it, where that code predates the kept calibration
    sums and fit counts (schema 6): without their tables and triggers, marked 6, so that it reads
    the copy as its own rather than counting it again on opening (the extra columns it ignores);
    where it predates the kept graded points (schema 7), without fit_graded."""
    import re
    import sqlite3

    from probes.running import calibration_kept, fit_kept

    found = re.search(r"^SCHEMA_VERSION = (\d+)", (code / "probes/running/store_reads.py").read_text(), re.M)
    if found and int(found.group(1)) == 7:  # before fit_graded: the fits' triggers (which write it) go too
        with sqlite3.connect(store) as db:  # (the copy is read, never written, by that code)
            for name in fit_kept.TRIGGER_NAMES:
                db.execute(f"DROP TRIGGER IF EXISTS {name}")
            db.execute("DROP TABLE IF EXISTS fit_graded")
            db.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
        db.close()
    if not found or int(found.group(1)) != 6:
        return
    with sqlite3.connect(store) as db:
        for name in (*calibration_kept.TRIGGER_NAMES, *fit_kept.TRIGGER_NAMES):
            db.execute(f"DROP TRIGGER IF EXISTS {name}")
        db.execute("DROP TABLE IF EXISTS calibration_cells")
        db.execute("DROP TABLE IF EXISTS fit_levels")
        db.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    db.close()


def _table(runs: dict[str, dict]) -> None:
    names = [n for n in next(iter(runs.values())) if n != "benchmark"]
    print(f"default benchmark: {next(iter(runs.values()))['benchmark']}")
    print(f"{'':50}" + "".join(f"{label:>14}" for label in runs))
    for name in names:
        cells = []
        for found in runs.values():
            value = found.get(name)
            cells.append("-" if value is None else f"{value:.3f}" if isinstance(value, float) and "MB" not in name
                         else f"{value:,.0f}")  # fmt: skip
        unit = "" if "rows" in name or "MB" in name else " s"
        print(f"{name + unit:50}" + "".join(f"{cell:>14}" for cell in cells))


if __name__ == "__main__":
    main()

"""`python -m probes run`: ask models a benchmark's items, with a progress bar; Ctrl-C stops
cleanly (nothing new is sent, replies in flight get a moment to arrive and are saved) and says how
to resume."""

from __future__ import annotations

import argparse
import asyncio
import math
import signal
import sys
from pathlib import Path

from models.types import GenerateConfig
from probes.analysis.scoring import aggregate
from probes.asking import perturb
from probes.benchmarks.custom import folder_id
from probes.cli.checks import check_run_options, load_endpoints
from probes.cli.outcome import EXIT_INTERRUPTED, shell_words
from probes.cli.progress import ProgressBar
from probes.cli.table import table
from probes.core.benchmark import Benchmark
from probes.core.errors import UnknownBenchmark, UsageError
from probes.core.params import parse_params
from probes.core.selection import draw_set
from probes.core.types import Item, Mode, Result, Status
from probes.files.set_folder import folder_spec, is_set_folder
from probes.files.set_spec import SPEC_FILE
from probes.running import answerers
from probes.running.adaptive_sweep import Sweeping, SweepOutcome, check_sweep, sweep_models
from probes.running.runner import Progress, RunPlan, Stop, run
from probes.running.store import Store

# After the first Ctrl-C, replies in flight get this long to arrive (and be saved); a second
# Ctrl-C abandons them at once. Abandoned requests are simply asked again by the next run.
GRACE_SECONDS = 1.5


def positive_width(text: str) -> float:
    """`--until-pse-width`: a finite number above 0 (argparse makes a refusal one line, exit 2)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"give a positive number, the PSE interval width to reach (e.g. 0.05), not {text!r}"
        )
    return value


def cmd_run(args: argparse.Namespace) -> int:
    check_run_options(args)
    perturb.check(args.perturb)
    endpoints = load_endpoints(args.models_file)
    backends = [answerers.resolve(model_id, endpoints) for model_id in dict.fromkeys(args.model)]
    benchmark, items = draw_items(args)
    for note in benchmark.notes:  # a custom folder's odd but accepted images
        print(f"note: {note}", file=sys.stderr)
    adaptive = args.until_pse_width is not None
    if args.max_requests is not None and not adaptive:
        raise UsageError("--max-requests goes with --until-pse-width (a run without it asks every item)")
    if args.max_requests is not None and args.max_requests < 1:
        raise UsageError(f"--max-requests must be at least 1, got {args.max_requests}")
    if adaptive:
        check_sweep(benchmark.id, items)
        # A probability-first sweep: each graded answer says how close the call was, which is
        # what lets the design stop early; models that give none are swept by their choices.
        args.probabilities = True
    mode = Mode(args.shots, args.cot)
    config = GenerateConfig(max_tokens=args.max_tokens or mode.max_tokens, temperature=args.temperature, seed=args.seed)
    # One plan per perturbation the name stands for (rotate-options-all: one per rotation).
    plans = [
        RunPlan(
            benchmark,
            chosen,
            backends,
            mode,
            perturbation,
            config,
            args.concurrency,
            probabilities=args.probabilities,
            keep_answers=args.keep_answers,
        )  # fmt: skip
        for perturbation, chosen in perturb.expand(args.perturb, items)
    ]
    stop = Stop()
    with Store(args.store, read_only=False) as store:
        total = sum(len(plan.items) for plan in plans) * len(backends)
        bar = ProgressBar(total, f"{benchmark.id} {mode.label}")
        progress = Progress(total=total)
        outcomes: list[SweepOutcome] = []
        if adaptive:
            bar.label += f" until PSE width {args.until_pse_width:g} (at most)"
            results = asyncio.run(run_stoppable(plans, store, bar, stop, progress, args, outcomes))
        else:
            results = asyncio.run(run_stoppable(plans, store, bar, stop, progress))
        bar.close()
        if stop.requested and adaptive:
            print(f"stopped: {progress.done} result(s) saved in {store.path}. Run the same command to continue "
                  "the sweep: the answers so far come from the store.", file=sys.stderr)  # fmt: skip
            return EXIT_INTERRUPTED
        if stop.requested:
            left = progress.total - progress.done
            print(f"stopped: {progress.done} result(s) saved in {store.path}; {left} not asked. "
                  "Run the same command to continue: only those are asked.", file=sys.stderr)  # fmt: skip
            return EXIT_INTERRUPTED
    print(table(aggregate(results)))
    for outcome in outcomes:  # per model and condition: what the sweep took and where it ended
        print(f"until PSE width {args.until_pse_width:g}: {outcome.describe(args.until_pse_width)}")
    if args.probabilities:  # said once per model: why its answers carry none
        for note in dict.fromkeys(backend.probabilities_note() for backend in backends):
            if note:
                print(f"note: {note}", file=sys.stderr)
    return report_errors(results)


def draw_items(args: argparse.Namespace) -> tuple[Benchmark, list[Item]]:
    """The benchmark and the items `run` asks: BENCH with its --param, --limit and --seed drawn by
    the sampler `generate` draws with too; or a folder (`custom:PATH`, or PATH alone where it is
    no benchmark id): a set generate wrote, in any format, asks exactly its items as its
    benchmark's own, and with its seed unless --seed is given (so `run DIR` is `run BENCH --limit
    N --seed S --param ...` of its description, the requests' seed and cached answers included);
    a folder of your own, its items.jsonl. Sets `args.seed` (default 0)."""
    params = parse_params(args.param)
    benchmark_id: str | None = args.benchmark
    if ":" not in args.benchmark:
        try:
            drawn = draw_set(args.benchmark, params, args.limit, args.seed or 0, data=args.data)
            args.seed = args.seed or 0
            return drawn
        except UnknownBenchmark:  # no benchmark id: a folder, or the unknown id named as before
            benchmark_id = folder_id(args.benchmark)
            if benchmark_id is None:
                raise
    if benchmark_id.startswith("custom:") and (params or args.data):
        option = "--param" if params else "--data"
        raise UsageError(
            f"{option}: {args.benchmark} is a folder, whose items are its own (a set generate wrote is described by "
            f"its {SPEC_FILE}); run it without {option}"
        )
    if args.seed is None:
        folder = Path(benchmark_id.removeprefix("custom:")).expanduser()
        spec = folder_spec(folder) if benchmark_id.startswith("custom:") and is_set_folder(folder) else None
        args.seed = spec.seed if spec is not None else 0
    return draw_set(benchmark_id, params, args.limit, args.seed, data=args.data)


async def run_stoppable(
    plans: list[RunPlan],
    store: Store,
    bar: ProgressBar,
    stop: Stop,
    progress: Progress,
    adaptive: argparse.Namespace | None = None,
    outcomes: list[SweepOutcome] | None = None,
) -> list[Result]:
    """Run the plans one after another; with `adaptive` (the command's options), each plan's
    models are swept until the PSE width instead, and `outcomes` collects how each ended."""
    loop = asyncio.get_running_loop()

    def interrupted() -> None:
        urgent = stop.requested
        stop.request(0.0 if urgent else GRACE_SECONDS)
        if not urgent:
            bar.close()
            print(f"stopping: no new requests; waiting up to {GRACE_SECONDS:g} s for replies in flight "
                  "(Ctrl-C again to stop now)", file=sys.stderr)  # fmt: skip

    try:
        loop.add_signal_handler(signal.SIGINT, interrupted)
    except (NotImplementedError, RuntimeError):  # no signal handlers here (Windows, a thread)
        pass
    results: list[Result] = []
    try:
        for plan in plans:
            if stop.requested:
                break
            shown = lambda result, _: bar.show(progress)  # noqa: E731
            if adaptive is None:
                results += await run(plan, store, shown, stop, progress)
                continue
            how = Sweeping(store, adaptive.until_pse_width, adaptive.max_requests, adaptive.seed, stop, progress, shown)
            swept, ended = await sweep_models(plan, how)
            results += swept
            if outcomes is not None:
                outcomes += ended
        return results
    finally:
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (NotImplementedError, RuntimeError):
            pass


def report_errors(results: list[Result]) -> int:
    """Exit status 1 when items ended in error, saying whether running again can help."""
    errors = [r for r in results if r.status is Status.ERROR]
    if not errors:
        return 0
    print(f"{len(errors)} request(s) failed; first: {shell_words(errors[0].error or '')}", file=sys.stderr)
    # Baselines are offline and deterministic: what failed once fails again.
    if all(answerers.is_deterministic(r.model) for r in errors):
        print("running again will not help: these answerers fail the same way every time", file=sys.stderr)
    else:
        print("run the same command again to retry them (answered items are not asked again)", file=sys.stderr)
    return 1

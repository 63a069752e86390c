"""`python -m probes prepare-demo`: ask models every Example under every condition the Probe tab
offers (and `--benchmark B --limit N` more), into the store a Space will serve (probes/demo/)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from probes.cli.checks import check_asking_options, load_endpoints
from probes.cli.progress import ProgressBar
from probes.cli.run_command import report_errors, run_stoppable
from probes.core.errors import UsageError
from probes.core.params import parse_params
from probes.core.registry import get_benchmark
from probes.demo.conditions import CONDITIONS
from probes.demo.prepare import Prepared, demo_plans
from probes.running import answerers
from probes.running.runner import Progress, Stop
from probes.running.store import Store, default_path


def add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", action="append", required=True, help="provider/model; repeat for several")
    parser.add_argument("--benchmark", help="also ask --limit items of this benchmark under every condition")
    parser.add_argument("--limit", type=int, help="items of --benchmark (a sample drawn with --seed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2", help="for --benchmark")
    parser.add_argument(
        "--condition",
        action="append",
        metavar="NAME",
        help=f"only these conditions (default all: {', '.join(CONDITIONS)})",
    )
    parser.add_argument("--store", help=f"the store the Space will serve (default {default_path()})")
    parser.add_argument("--concurrency", type=int, help="requests at once per model")
    parser.add_argument("--models-file", help="TOML file of OpenAI-compatible endpoints (default: $PROBE_MODELS)")
    parser.set_defaults(handler=cmd_prepare_demo)


def cmd_prepare_demo(args: argparse.Namespace) -> int:
    check_asking_options(args)
    unknown = [name for name in args.condition or [] if name not in CONDITIONS]
    if unknown:
        raise UsageError(f"no condition {', '.join(map(repr, unknown))}: choose from {', '.join(CONDITIONS)}")
    if (args.limit is not None or args.param) and not args.benchmark:
        raise UsageError("--limit and --param are for --benchmark B: name the benchmark to add")
    endpoints = load_endpoints(args.models_file)
    backends = [answerers.resolve(model_id, endpoints) for model_id in dict.fromkeys(args.model)]
    for backend in backends:
        backend.check()
    extra = get_benchmark(args.benchmark, params=parse_params(args.param)) if args.benchmark else None
    prepared = demo_plans(backends, extra, args.limit, args.seed, args.condition)
    for plan in prepared.plans:
        plan.concurrency = args.concurrency
    stop = Stop()
    with Store(args.store, read_only=False) as store:
        bar = ProgressBar(prepared.requests, "prepare-demo")
        progress = Progress(total=prepared.requests)
        results = asyncio.run(run_stoppable(prepared.plans, store, bar, stop, progress))
        bar.close()
        where = store.path
    outcome = Prepared.of(results)
    print(outcome.words(where, len(prepared.skipped)))
    print(
        f"serve it: copy {where} to the Space's PROBE_HOME (see README, 'Publish your own demo Space')", file=sys.stderr
    )
    # A baseline that cannot answer a request is no failure of the demo: only the others are reported.
    return report_errors(outcome.failed)

"""`python -m probes ...`: list, models, generate, run, import, report, delete, mine, ease.

User mistakes (unknown ids, missing keys, malformed folders) print one clear message and exit
with status 2, never a traceback. Anything else is a bug: one line saying so and where its
traceback was written, exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from models import registry as model_registry
from probes.asking import perturb
from probes.cli import report_command
from probes.cli.checks import load_endpoints, writable_folder
from probes.cli.delete_command import add_delete_arguments
from probes.cli.demo_command import add_demo_arguments
from probes.cli.outcome import DESCRIPTION, EXIT_INTERRUPTED, PROG, OneLineParser, handled, shell_words
from probes.cli.progress import importing, reading, writing
from probes.cli.report_command import add_report_arguments
from probes.cli.run_command import cmd_run, positive_width
from probes.cli.toolkits_command import IMPORT_SOURCES, SET_FORMATS, import_toolkit, write_set
from probes.cli.tools_command import add_tool_commands
from probes.core.errors import UsageError
from probes.core.params import parse_params
from probes.core.registry import benchmark_ids, get_benchmark
from probes.core.types import LabelStyle, Mode
from probes.files.export import fits_custom_folder, write_generated
from probes.files.set_spec import spec_of
from probes.running import answerers
from probes.running.heap import give_back_large_buffers
from probes.running.importing import import_file
from probes.running.store import Store, default_path

CUSTOM_HELP = (
    "custom:PATH  your own folder: items.jsonl (id, image or images, question, options optional,\n"
    "             answer, category optional) beside the image files; examples.jsonl for few-shot;\n"
    "             or a folder generate wrote (any format): its very items, as its benchmark's own"
)


def main(argv: Sequence[str] | None = None) -> int:
    give_back_large_buffers()
    args = _parser().parse_args(argv)
    return handled(args, argv)


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True)

    listing = commands.add_parser("list", help="benchmark ids with item counts")
    listing.set_defaults(handler=cmd_list)

    models = commands.add_parser("models", help="model ids, available or why not")
    models.add_argument("--models-file", help="TOML file of OpenAI-compatible endpoints (default: $PROBE_MODELS)")
    models.set_defaults(handler=cmd_models)

    generate = commands.add_parser("generate", help="write a benchmark's items as images + metadata.jsonl")
    generate.add_argument("benchmark")
    generate.add_argument("--n", type=int, required=True, help="how many items")
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--out", required=True, help="output folder (Hugging Face imagefolder layout)")
    generate.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2", help="fix or sweep a parameter")
    generate.add_argument(
        "--format",
        choices=SET_FORMATS,
        default="png",
        help="png: PNGs, metadata.jsonl, items.jsonl (default); hf: a Hugging Face dataset folder (parquet); "
        "lmms-eval: hf plus an lmms-eval task beside it",
    )
    generate.set_defaults(handler=cmd_generate)

    runner = commands.add_parser("run", help="ask models a benchmark's items and grade the replies")
    runner.add_argument("benchmark", help="a benchmark id, custom:PATH, or the PATH of a folder generate wrote")
    runner.add_argument("--model", action="append", required=True, help="provider/model; repeat for several")
    runner.add_argument("--shots", type=int, default=0, help="few-shot examples before each item (0 or e.g. 4)")
    runner.add_argument("--cot", action="store_true", help="ask for reasoning, then a final answer line")
    runner.add_argument(
        "--perturb",
        default="none",
        help=f"one of {', '.join(perturb.FIXED)}, rotate-options-K, {perturb.ALL_ROTATIONS}",
    )
    runner.add_argument("--limit", type=int, help="run N items, sampled with --seed")
    runner.add_argument(
        "--seed", type=int, default=None, help="item sample and sampling seed (default 0; a set folder's own seed)"
    )
    runner.add_argument("--data", help="local copy of the benchmark's data, where it reads one")
    runner.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2", help="fix or sweep a parameter")
    runner.add_argument("--store", help=f"results database (default {default_path()})")
    runner.add_argument("--concurrency", type=int, help="requests in flight per model (default: provider's)")
    runner.add_argument(
        "--max-tokens", type=int, default=None, help="reply length limit (default 512, 2048 with --cot)"
    )
    runner.add_argument("--temperature", type=float, default=0.0)
    runner.add_argument("--models-file", help="TOML file of OpenAI-compatible endpoints (default: $PROBE_MODELS)")
    runner.add_argument(
        "--probabilities",
        action="store_true",
        help="store each answer's probability where the model gives them (cached replies without them are asked again)",
    )
    runner.add_argument(
        "--keep-answers",
        action="store_true",
        help="with --probabilities: keep cached replies as they are, ask nothing again",
    )
    runner.add_argument(
        "--until-pse-width",
        type=positive_width,
        metavar="W",
        help="a swept illusion run, adaptive: per model, ask the difference that tells most next and stop once "
        "the PSE's 95%% interval is narrower than W (asks for probabilities; one request at a time per model)",
    )
    runner.add_argument(
        "--max-requests",
        type=int,
        metavar="N",
        help="with --until-pse-width: at most N items per model and condition (default: all of them)",
    )
    runner.set_defaults(handler=cmd_run)

    importer = commands.add_parser(
        "import", help="grade replies produced elsewhere (JSON Lines, lmms-eval, VLMEvalKit)"
    )
    importer.add_argument(
        "file", help="JSON Lines (item_id, response [, target, options, category]); with --from, the toolkit's output"
    )
    importer.add_argument(
        "--from",
        dest="source",
        choices=IMPORT_SOURCES,
        default="jsonl",
        help="jsonl (default); lmms-eval: a --log_samples output (samples_*.jsonl, or the folder holding them); "
        "vlmevalkit: a prediction file (.xlsx, .tsv, .csv)",
    )
    importer.add_argument("--benchmark", help="the benchmark the replies answer (lmms-eval: read from the task)")
    importer.add_argument("--model", help="the name the results appear under (lmms-eval: default the run's model_name)")
    importer.add_argument("--mode", help="0-shot, 4-shot, 4-shot+CoT ... (default 0-shot; lmms-eval: the run's n-shot)")
    importer.add_argument(
        "--perturbation", default="none", help="the condition the replies were produced under (default none)"
    )
    importer.add_argument(
        "--labels",
        choices=[style.value for style in LabelStyle],
        help="how the replies name options, where not as the benchmark does: letter (a, b, c), "
        "digit0 (0, 1, 2) or digit1 (1, 2, 3); default: the benchmark's own",
    )
    importer.add_argument(
        "--data",
        help="local copy of the benchmark's data, to grade records without target or match a toolkit's items; "
        "a folder written by generate (it holds probe_set.json) for a set exported from here",
    )
    importer.add_argument("--store", help=f"results database (default {default_path()})")
    importer.set_defaults(handler=cmd_import)

    add_demo_arguments(
        commands.add_parser(
            "prepare-demo", help="ask models every Example under every Probe condition, into the store a Space serves"
        )
    )

    add_report_arguments(commands.add_parser("report", help=report_command.HELP))
    add_delete_arguments(commands.add_parser("delete", help="take a model's results out of the store (--yes to do it)"))
    add_tool_commands(commands)
    return parser


# --- commands ---------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    rows = []
    for benchmark_id in benchmark_ids():
        benchmark = get_benchmark(benchmark_id)
        rows.append((benchmark_id, benchmark.size_note(), benchmark.title))
    width = max(len(r[0]) for r in rows)
    size_width = max(len(r[1]) for r in rows)
    for benchmark_id, size, title in rows:
        print(f"{benchmark_id:<{width}}  {size:<{size_width}}  {title}")
    print(CUSTOM_HELP)
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    endpoints = load_endpoints(args.models_file)
    infos = answerers.catalogue(endpoints)
    width = max(len(i.id) for i in infos)
    for info in infos:
        state = "available" if info.available else "unavailable"
        print(f"{info.id:<{width}}  {state:<11}  {shell_words(info.reason)}".rstrip())
    forms = ", ".join(f"{name}/NAME" for name in model_registry.PROVIDERS)
    print(f"Any provider/model id works with run: {forms} (hf/ also takes a FOLDER), ENDPOINT/NAME.")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise UsageError("--n must be at least 1")
    out = writable_folder(args.out, "--out")  # before drawing anything
    # The set's description, the design seed named: `run` draws the same items from it (one sampler).
    spec = spec_of(args.benchmark, parse_params(args.param), args.n, args.seed)
    benchmark, items = spec.draw()
    if args.format != "png":
        return write_set(benchmark, items, spec, out, args.format)
    with writing(args.out, len(items), f"generate {benchmark.id}") as update:
        write_generated(items, out, update, spec=spec)
    print(f"wrote {len(items)} items to {out}; run them with: python -m probes run custom:{out} --model MODEL "
          f"(the same items as run {args.benchmark} --limit {args.n} --seed {args.seed} with these parameters)")  # fmt: skip
    left_out = sum(1 for item in items if not fits_custom_folder(item))
    if left_out:
        print(f"note: {left_out} item(s) are in metadata.jsonl only, not in items.jsonl: a custom folder grades "
              "every item, and these have no single right answer (equal targets) or are word lists", file=sys.stderr)  # fmt: skip
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    if args.source != "jsonl":
        return import_toolkit(args)
    for option in ("benchmark", "model"):
        if not getattr(args, option):
            raise UsageError(f"import needs --{option} (or --from lmms-eval|vlmevalkit for a toolkit's output)")
    args.mode = args.mode or "0-shot"
    Mode.parse(args.mode)
    perturb.check(args.perturbation)
    benchmark = get_benchmark(args.benchmark, data=args.data)
    path = Path(args.file)
    with Store(args.store, read_only=False) as store, importing(f"import {path.name}") as progress:
        reading(path)
        try:
            summary = import_file(
                path, benchmark, args.model, args.mode, store, args.perturbation, labels=args.labels, progress=progress
            )
        except KeyboardInterrupt:
            print(progress.interrupted(), file=sys.stderr)
            return EXIT_INTERRUPTED
    print(summary.describe())
    return 0

"""The command line's meeting points with other toolkits: `generate --format hf|lmms-eval`
(our sets out) and `import --from lmms-eval|vlmevalkit` (their logs in). The work lives in
`probes.files` and `probes.running.toolkit_import`; this module reads options and prints."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from probes.cli.outcome import EXIT_INTERRUPTED
from probes.cli.progress import importing, reading, writing
from probes.core.benchmark import Benchmark
from probes.core.errors import UsageError
from probes.core.registry import get_benchmark
from probes.core.types import Item, Mode
from probes.files.export import CUSTOM_ITEMS, fits_custom_folder
from probes.files.export_folder import ExportFolder
from probes.files.hf_export import write_hf
from probes.files.lmms_eval_export import check_exportable, task_files, task_name, write_lmms_eval_task
from probes.files.set_folder import checked_spec
from probes.files.set_spec import SetSpec
from probes.files.toolkit_logs import read_lmms_eval, read_vlmevalkit
from probes.running.store import Store
from probes.running.toolkit_import import import_records
from probes.running.toolkit_records import lmms_records, vlmevalkit_records

SET_FORMATS = ("png", "hf", "lmms-eval")
IMPORT_SOURCES = ("jsonl", "lmms-eval", "vlmevalkit")


def write_set(benchmark: Benchmark, items: list[Item], spec: SetSpec, out: Path, form: str) -> int:
    """`generate --format hf` or `--format lmms-eval`."""
    if form == "lmms-eval":
        check_exportable(benchmark)  # before drawing anything
    with ExportFolder(out) as into, writing(out, len(items), f"generate {benchmark.id}") as update:
        if form == "lmms-eval":
            into.claim(task_files(spec))  # what is in the task's way is refused before drawing
        shards = write_hf(benchmark, items, spec, into, update, form=form)
        if form == "lmms-eval":
            folder = write_lmms_eval_task(into, spec, benchmark.title, shards, len(items))
        into.finish()
    print(f"wrote {len(items)} items to {out} ({len(shards)} parquet shard{'s' if len(shards) > 1 else ''}); "
          f"load them with datasets.load_dataset({str(out)!r}); run them again with: python -m probes run {out} "
          "--model MODEL")  # fmt: skip
    if form == "lmms-eval":
        name = task_name(spec)
        print(f"lmms-eval task {name} in {folder}: python -m lmms_eval --model openai --model_args "
              f"model=NAME,base_url=URL --include_path {folder} --tasks {name} --log_samples --output_path OUT; "
              "then: python -m probes import OUT --from lmms-eval --model NAME")  # fmt: skip
        ungraded = sum(1 for item in items if not fits_custom_folder(item))
        if ungraded:
            print(f"note: the lmms-eval task leaves out {ungraded} item(s) without a single right answer "
                  "(equal targets); the dataset keeps them", file=sys.stderr)  # fmt: skip
    return 0


def import_toolkit(args: argparse.Namespace) -> int:
    """`import PATH --from lmms-eval|vlmevalkit`."""
    path = Path(args.file)
    if args.labels:
        raise UsageError("--labels is for JSON Lines imports; toolkits' files name their options A, B, C ...")
    if args.perturbation != "none":
        raise UsageError("--from: the toolkits ask each item as it is; --perturbation is for JSON Lines imports")
    if args.mode:
        Mode.parse(args.mode)
    if args.benchmark:
        get_benchmark(args.benchmark)  # an unknown id is named before any file is read
    data = args.data
    reading(path)
    if args.source == "lmms-eval":
        runs = read_lmms_eval(path)
        records = [record for run in runs for record in lmms_records(run, args.benchmark)]
        names = {run.model_name for run in runs if run.model_name}
        model = args.model or (names.pop() if len(names) == 1 else None)
        if model is None:
            raise UsageError(
                "name the model with --model (no single model_name in a *_results.json beside the samples)"
            )
        shots = {run.shots for run in runs if run.shots is not None}
        mode = args.mode or (f"{shots.pop()}-shot" if len(shots) == 1 else "0-shot")
    else:
        rows = read_vlmevalkit(path)
        # A folder generate wrote, in any format: its set, drawn again from its description and
        # checked against its rows; an older PNG export (or a folder of your own): its items.jsonl.
        folder = Path(data) if data and Path(data).is_dir() else None
        spec = checked_spec(folder) if folder is not None else None
        if spec is None and folder is not None and not args.benchmark and (folder / CUSTOM_ITEMS).is_file():
            benchmark, data = f"custom:{data}", None
        else:
            benchmark = args.benchmark or (spec.benchmark if spec else None)
        if benchmark is None:
            raise UsageError(
                "--from vlmevalkit needs --benchmark: a prediction file does not say which benchmark it answers"
            )
        if not args.model:
            raise UsageError("--from vlmevalkit needs --model: the name the results appear under")
        model, mode = args.model, args.mode or "0-shot"
        records = vlmevalkit_records(rows, path.stem, benchmark, path.name)
        if spec is not None:  # a set exported from here: matched to it drawn again
            data = None
            for record in records:
                record.spec = spec
    with Store(args.store) as store, importing(f"import {path.name}") as progress:
        try:
            reports, statuses = import_records(records, model, mode, store, path.name, data, progress)
        except KeyboardInterrupt:
            print(progress.interrupted(), file=sys.stderr)
            return EXIT_INTERRUPTED
    for report in reports:
        print("\n".join(report.lines()))
    counts = ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
    print(f"imported {sum(statuses.values())} results as {model} ({mode}): {counts}")
    return 0

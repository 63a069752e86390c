"""`python -m probes report`: accuracy tables from the store, and beside them on request

- `--compare A B`: paired comparison of two models, modes or perturbations on shared items
  (McNemar's exact test, a paired bootstrap interval, Holm across the table);
- `--fit PARAM`: psychometric fits of P(the positive answer) against a swept parameter;
- `--consistency`: right under every option order (after `run --perturb rotate-options-all`);
- `--position-bias`: how often each shown place is chosen against how often it is right;
- `--polarity`: on the illusions, whether choices track the drawn difference or the inducers
  flipped against it (perceive or recall).

Every view prints as a table, CSV or JSON (a list of rows).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from probes.analysis import calibration_cells, psychometric
from probes.analysis.report import cell_report_rows, to_csv, to_json
from probes.analysis.scoring import Row
from probes.cli.outcome import DESCRIPTION, PROG, OneLineParser, handled
from probes.cli.table import table
from probes.core.errors import UsageError
from probes.core.types import AnswerKind
from probes.files.spreadsheet import csv_text, json_rows
from probes.running.cells import Where
from probes.running.fit_kept import stored_fits
from probes.running.heap import give_back_large_buffers
from probes.running.store import Store, default_path

HELP = "accuracy tables, paired comparisons, fits from the results store"


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m probes report ...` with nothing of the other commands loaded: the command line's
    parser with `report` alone (the same options, help and mistakes as in the whole one)."""
    give_back_large_buffers()
    parser = OneLineParser(prog=PROG, description=DESCRIPTION)
    add_report_arguments(parser.add_subparsers(dest="command", required=True).add_parser("report", help=HELP))
    return handled(parser.parse_args(argv), argv)


def add_report_arguments(report: argparse.ArgumentParser) -> None:
    report.add_argument("--store", help=f"results database (default {default_path()})")
    report.add_argument("--benchmark")
    report.add_argument("--model")
    report.add_argument("--mode")
    report.add_argument("--perturbation")
    report.add_argument("--by", action="append", default=[], metavar="GROUP", help="also break down by this group")
    report.add_argument("--format", choices=("table", "csv", "json"), default="table")
    report.add_argument(
        "--no-references", dest="references", action="store_false", help="leave out chance and published rows"
    )
    views = report.add_mutually_exclusive_group()
    views.add_argument(
        "--compare", nargs=2, metavar=("A", "B"), help="paired test of two models, modes or perturbations"
    )
    views.add_argument("--fit", metavar="PARAM", help="psychometric fit against a swept numeric parameter")
    views.add_argument("--consistency", action="store_true", help="right under every option order")
    views.add_argument("--position-bias", action="store_true", help="each shown place: chosen against right")
    views.add_argument(
        "--polarity", action="store_true", help="illusions: choices tracking the difference, the inducers, or neither"
    )
    report.set_defaults(handler=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    path = Path(args.store) if args.store else default_path()
    if not path.exists():
        raise UsageError(f"no results store at {path}: run something first, or pass --store")
    views = args.compare or args.fit or args.consistency or args.polarity or args.position_bias
    chosen = [[value] if value else [] for value in (args.model, args.mode, args.perturbation)]
    where = Where(args.benchmark, *chosen)
    with Store(path) as store:
        if not views or (args.fit and args.by):  # the groups there, from the counts the store keeps
            cells = store.cells(where, groups=None)
            _check_groups({grp.partition("=")[0] for *_, grp in cells if grp}, args.by, bool(cells))
        if args.fit:
            # The same rows `run --until-pse-width` closes with (fit_kept.stored_fits: one path for
            # both), from the counts per level the store keeps and the probabilities' points.
            return _print_fits(stored_fits(store, where, args.fit, tuple(args.by)), args.fit, args.format)
        if not views:  # accuracy rows: from the counts the store keeps, never decoding a result
            # Calibration from the sums the store keeps per cell, never decoding a result either.
            calibrations = calibration_cells.calibrations(store.calibration_sums(where, groups=args.by))
            return _print_rows(cell_report_rows(cells, args.by, [args.benchmark] if args.benchmark else [],
                                                references=args.references), args.format, calibrations)  # fmt: skip
        # The other views pair, fit or count single results: only those of the filters are read.
        results = store.results(args.benchmark, args.model, args.mode, args.perturbation)
    _check_groups({name for result in results for name in result.groups}, args.by, bool(results))
    return _views_of_results(args, results)


def _views_of_results(args: argparse.Namespace, results: list) -> int:
    """--compare, --consistency, --polarity, --position-bias. Their modules are loaded here, by a
    view that asks: a plain report loads none of them (numpy among them, 0.1-0.2 s of its start)."""
    from probes.analysis import consistency, paired, polarity

    if args.compare:
        rows = [row.as_dict() for row in paired.compare(results, *args.compare)]
        return _print(rows, args.format)
    if args.consistency:
        return _print([row.as_dict() for row in consistency.consistency(results)], args.format)
    if args.polarity:
        rows = polarity.polarity_rows(results, by=tuple(args.by))
        if not rows and results:
            raise UsageError(
                "no illusion results with inducers flipped against the truth: run an illusion/* benchmark whose "
                "design holds both polarities (the default designs do)"
            )
        if args.format == "table":
            return _print([polarity.compact(row) for row in rows], "table")
        return _print([row.as_dict() for row in rows], args.format)
    choices = [r for r in results if r.item_ref is not None and r.item_ref.options_count]  # --position-bias
    biases = consistency.position_bias(choices)
    if args.format == "json":
        return _print([bias.as_dict() for bias in biases], "json")
    return _print([row for bias in biases for row in bias.rows()], args.format)


def _print_fits(fits: Sequence[psychometric.FitRow], param: str, form: str) -> int:
    if not fits:
        raise UsageError(f"no result has a numeric parameter {param!r} to fit against")
    if form == "json":
        return _print([fit.as_dict() for fit in fits], "json")
    return _print([{k: fit.as_dict()[k] for k in psychometric.FIT_COLUMNS} for fit in fits], form)


def _print_rows(rows: list[Row], form: str, calibrations: Mapping | None = None) -> int:
    if form == "json":
        print(to_json(rows, calibrations))
    elif form == "csv":
        print(to_csv(rows, calibrations), end="")
    else:
        print(table(rows, calibrations) if rows else "no results match")
    return 0


def _check_groups(known: set[str], by: Sequence[str], anything: bool) -> None:
    """A `--by` group that no result has is a typo, not an empty breakdown: say so."""
    unknown = [name for name in by if name not in known]
    if unknown and anything:
        listed = ", ".join(sorted(known)) or "none"
        raise UsageError(f"no result has a group {', '.join(unknown)}; the groups here are: {listed}")


def _print(rows: list[Mapping[str, Any]], form: str) -> int:
    if form == "json":
        print(json_rows(_finite(row) for row in rows))
    elif form == "csv":
        print(csv_text(list(rows[0]), rows) if rows else "", end="")
    else:
        print(_plain_table(rows) if rows else "no results match")
    return 0


def _finite(row: Mapping[str, Any]) -> dict[str, Any]:
    """JSON has no NaN or infinity: such a number is printed as null."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in row.items()}


def _plain_table(rows: list[Mapping[str, Any]]) -> str:
    header = list(rows[0])
    cells = [header] + [[_cell(row.get(name)) for name in header] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in cells)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, AnswerKind):
        return value.value
    return str(value)

"""`python -m probes delete`: take a model's results out of the store.

Without `--yes` it only says how many results would go, so a typo in a model id deletes
nothing; with `--yes` they go, and the Scoreboard's and `report`'s counts with them (the store's
delete trigger keeps them right). Cached replies stay, so a re-run that wants them back is free.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from probes.core.errors import UsageError
from probes.running.cells import Where
from probes.running.store import Store, default_path


def add_delete_arguments(delete: argparse.ArgumentParser) -> None:
    delete.add_argument("--model", action="append", required=True, help="whose results go; repeat for several")
    delete.add_argument("--benchmark", help="only this benchmark's (default: every benchmark)")
    delete.add_argument("--mode", action="append", default=[], help="only this mode's, e.g. 0-shot (repeatable)")
    delete.add_argument(
        "--perturbation", "--perturb", dest="perturbation", action="append", default=[],
        help="only this condition's, e.g. grayscale (repeatable)",
    )  # fmt: skip
    delete.add_argument("--store", help=f"results database (default {default_path()})")
    delete.add_argument("--yes", action="store_true", help="delete them (without it: only count them)")
    delete.set_defaults(handler=cmd_delete)


def cmd_delete(args: argparse.Namespace) -> int:
    path = Path(args.store) if args.store else default_path()
    if not path.exists():
        raise UsageError(f"no results store at {path}: nothing to delete (pass --store for another one)")
    where = Where(args.benchmark, args.model, args.mode, args.perturbation)
    what = _describe(args)
    with Store(path, read_only=False if args.yes else None) as store:
        found = store.delete(where, dry_run=True)
        if not found:
            print(f"no stored result of {what}: nothing deleted")
            return 0
        if not args.yes:
            print(f"{found} result(s) of {what} would be deleted; run again with --yes to delete them")
            return 0
        deleted = store.delete(where)
    print(f"deleted {deleted} result(s) of {what}")
    return 0


def _describe(args: argparse.Namespace) -> str:
    parts = [" and ".join(args.model)]
    if args.benchmark:
        parts.append(f"on {args.benchmark}")
    if args.mode:
        parts.append(f"in {', '.join(args.mode)}")
    if args.perturbation:
        parts.append(f"under {', '.join(args.perturbation)}")
    return " ".join(parts)

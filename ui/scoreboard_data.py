"""The Scoreboard tab's data: results from the store (cached until the store changes), the filters'
choices, the rows as `python -m probes report` builds them, and the tables and downloads made of
them. No Gradio here; ui/scoreboard.py wires it to widgets and ui/scoreboard_charts.py draws it."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import pandas as pd

from probes.analysis.report import report_rows, to_csv, to_json
from probes.analysis.scoring import Row
from probes.core.types import Mode, Result, Status
from probes.running.store import Store
from ui.sessions import shared_store, stores_to_read

ALL = "all"
OVERALL = "overall only"
TABLE_COLUMNS = ["benchmark", "model", "mode", "perturbation", "group", "n", "accuracy", "95% CI", "unparsed",
                 "refused", "errors", "mean latency (s)", "source"]  # fmt: skip
EXPORTS = Path(tempfile.gettempdir()) / "probe-scoreboard"


# --- results, cached -------------------------------------------------------------------------

_cache_lock = threading.Lock()
_cache: dict[str, tuple[tuple, list[Result]]] = {}


def _fingerprint(opened: Store) -> tuple:
    """Changes whenever the store does: every commit in WAL mode appends to the -wal file, and a
    checkpoint rewrites the main file. The Refresh button reloads regardless."""
    stamps = []
    for path in (opened.path, opened.path.with_name(opened.path.name + "-wal")):
        try:
            stat = path.stat()
            stamps.append((stat.st_mtime_ns, stat.st_size))
        except FileNotFoundError:
            stamps.append(None)
    return (opened.count(), *stamps)


def stored_results(reload: bool = False, request: Any = None) -> list[Result]:
    """Every result this visitor's scoreboard shows: the operator's store (decoding a large store
    takes seconds, so one copy is kept, without replies, prompts and item references, until it
    changes) and, in public mode, the visitor's own session store (small: read each time)."""
    shared = _shared_results(reload)
    own = [s.scored() for s in stores_to_read(request)[1:]]
    return shared + [result for results in own for result in results] if own else shared


def _shared_results(reload: bool) -> list[Result]:
    opened = shared_store()
    key, fingerprint = str(opened.path), _fingerprint(opened)
    with _cache_lock:
        hit = _cache.get(key)
        if hit and hit[0] == fingerprint and not reload:
            return hit[1]
    results = opened.scored()
    with _cache_lock:
        _cache.clear()  # one store per app: never hold two copies
        _cache[key] = (fingerprint, results)
    return results


# --- filters ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    benchmark: str | None
    models: tuple[str, ...] = ()  # empty: every model
    mode: str = ALL
    perturbation: str = ALL
    group: str = OVERALL

    @property
    def by(self) -> list[str]:
        return [] if self.group in (OVERALL, "", None) else [self.group]


@dataclass(frozen=True)
class Facets:
    """What one benchmark's results hold, for the filters' choices."""

    models: list[str]
    modes: list[str]
    perturbations: list[str]
    groups: list[str]


def benchmarks(results: Sequence[Result]) -> tuple[list[str], str | None]:
    """Benchmarks in the store, and the one written to most recently (what a person who has just
    run something wants to see first)."""
    latest: dict[str, float] = {}
    for result in results:
        latest[result.benchmark] = max(latest.get(result.benchmark, 0.0), result.created_at or 0.0)
    newest = max(latest, key=lambda b: latest[b]) if latest else None
    return sorted(latest), newest


def mode_order(label: str) -> tuple:
    try:
        mode = Mode.parse(label)
        return (0, mode.cot, mode.shots, label)
    except ValueError:
        return (1, False, 0, label)


def facets(results: Sequence[Result], benchmark: str | None) -> Facets:
    models, modes, perturbations, groups = set(), set(), set(), {}
    for result in results:
        if result.benchmark == benchmark:
            models.add(result.model)
            modes.add(result.mode)
            perturbations.add(result.perturbation)
            groups.update(dict.fromkeys(result.groups))
    return Facets(sorted(models), sorted(modes, key=mode_order), sorted(perturbations), sorted(groups))


def select(results: Sequence[Result], filters: Filters, ignore_mode: bool = False) -> list[Result]:
    models = set(filters.models)
    return [
        r
        for r in results
        if r.benchmark == filters.benchmark
        and (not models or r.model in models)
        and (ignore_mode or filters.mode == ALL or r.mode == filters.mode)
        and (filters.perturbation == ALL or r.perturbation == filters.perturbation)
    ]


def scoreboard_rows(selected: Sequence[Result], filters: Filters) -> list[Row]:
    """Measured rows, then chance and published rows: exactly what `report` prints for them."""
    named = [filters.benchmark] if filters.benchmark else []
    return report_rows(selected, filters.by, named)


# --- tables ----------------------------------------------------------------------------------


def is_human(row: Row) -> bool:
    return row.model.casefold().startswith("human") or row.mode == "human"


def source_label(row: Row) -> str:
    label = f"published ({row.paper.split(',')[0]})" if row.source == "published" and row.paper else row.source
    return f"{label} · human" if is_human(row) else label


def _number(value: float | int | None) -> float | int | str:
    return "–" if value is None else value


def table(rows: Sequence[Row]) -> pd.DataFrame:
    records = [
        [row.benchmark, row.model, row.mode, row.perturbation, row.group, _number(row.n),
         "–" if row.accuracy is None else f"{row.accuracy:.2f}",
         "–" if row.ci_low is None else f"{row.ci_low:.1f}–{row.ci_high:.1f}",
         _number(row.unparsed), _number(row.refused), _number(row.errors),
         "–" if row.mean_latency is None else f"{row.mean_latency:.3f}", source_label(row)]
        for row in rows
    ]  # fmt: skip
    return pd.DataFrame(records, columns=TABLE_COLUMNS).astype(str)


def latency_table(selected: Sequence[Result]) -> pd.DataFrame:
    """Mean seconds per reply, per model and mode (errors left out: they never got a reply)."""
    seconds: dict[tuple[str, str], list[float]] = defaultdict(list)
    for result in selected:
        if result.latency is not None and result.status is not Status.ERROR:
            seconds[(result.model, result.mode)].append(result.latency)
    records = [
        [model, mode, len(values), f"{sum(values) / len(values):.3f}", f"{sorted(values)[len(values) // 2]:.3f}"]
        for (model, mode), values in sorted(seconds.items(), key=lambda kv: (kv[0][0], mode_order(kv[0][1])))
    ]
    return pd.DataFrame(records, columns=["model", "mode", "replies", "mean latency (s)", "median (s)"]).astype(str)


def region_name(subset: Sequence[str], modes: Sequence[str]) -> str:
    """ "0-shot only", "0-shot and 4-shot only", "all three", "none"."""
    if not subset:
        return "none"
    if len(subset) == len(modes) > 1:
        return "both" if len(modes) == 2 else f"all {len(modes)}"
    return " and ".join(subset) + " only"


def agreement_table(agreement: dict | None) -> pd.DataFrame:
    """One line per Venn region; no lines (but the headers) before a model and modes are chosen."""
    if agreement is None:
        return pd.DataFrame([], columns=["right in", "items", "% of items"])
    modes, items = agreement["modes"], agreement["items"]
    records = [
        [region_name(subset, modes), count, f"{100 * count / items:.1f}" if items else "–"]
        for subset, count in sorted(agreement["regions"].items(), key=lambda kv: (-len(kv[0]), kv[0]))
    ]
    return pd.DataFrame(records, columns=["right in", "items", "% of items"]).astype(str)


# --- numeric groups --------------------------------------------------------------------------


def numeric(value: str) -> float | None:
    """A group value as a number ("+0.05", "384", "1/4"), or None for a label."""
    try:
        return float(Fraction(value.strip()))
    except (ValueError, ZeroDivisionError):
        return None


# --- downloads -------------------------------------------------------------------------------


def exports(rows: Sequence[Row], benchmark: str | None) -> tuple[str, str]:
    """The rows as shown, as `report --format csv` and `--format json` print them. Kept in a
    folder named by content, so refreshing the same table writes nothing new. The store holds no
    keys, so neither can these."""
    name = "scoreboard-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", benchmark or "empty").strip("-")
    paths = []
    for suffix, text in (("csv", to_csv(rows)), ("json", to_json(rows) + "\n")):
        folder = EXPORTS / hashlib.sha256(text.encode()).hexdigest()[:16]
        path = folder / f"{name}.{suffix}"
        if not path.exists():  # written whole, then renamed: a concurrent reader never sees half
            folder.mkdir(parents=True, exist_ok=True)
            partial = folder / f".{name}.{suffix}.{os.getpid()}.{threading.get_ident()}"
            partial.write_text(text, encoding="utf-8")
            os.replace(partial, path)
        paths.append(str(path))
    return paths[0], paths[1]

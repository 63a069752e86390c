"""The Scoreboard tab's data: results from the store (cached until the store changes), which of
them a view shows (by where they came from), the filters' choices, the rows as `python -m probes
report` builds them, and the downloads made of them. No Gradio here: ui/scoreboard.py wires it to
widgets, ui/scoreboard_tables.py and ui/scoreboard_charts.py show it.

Where results came from (`Result.origin`): evaluation runs, imports, people and their judgements
are what a scoreboard is for; a single item asked on the Probe tab is a look, not a measurement
(one reply, an interval from 3% to 97%), so the tab's own view leaves probe clicks out until the
visitor ticks "include single probes". The `/scoreboard` API, called directly, counts every
origin, as it always has (scripts rely on its numbers)."""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from probes.analysis.report import report_rows, to_csv, to_json
from probes.analysis.scoring import Row
from probes.core.errors import ProbeError
from probes.core.types import Mode, Origin, Result, Status
from probes.running.store import Store
from ui.sessions import reading, shared_store

ALL = "all"
OVERALL = "overall only"
EXPORTS = Path(tempfile.gettempdir()) / "probe-scoreboard"
EVERY_ORIGIN = frozenset(origin.value for origin in Origin)
VIEW_ORIGINS = EVERY_ORIGIN - {Origin.PROBE.value}
ORIGIN_WORDS = {"run": "evaluation runs", "import": "imports", "human": "people", "judgement": "judgements",
                "probe": "single probes"}  # fmt: skip


def origins_for(include_probes: bool | None) -> tuple[str, ...]:
    """The origins a view shows: everything but single probe clicks, unless they are asked for."""
    return tuple(sorted(EVERY_ORIGIN if include_probes else VIEW_ORIGINS))


# --- results, cached -------------------------------------------------------------------------

_cache_lock = threading.Lock()
_cache: dict[str, tuple[tuple, list[Result]]] = {}
_shown: dict[tuple, tuple[list[Result], list[Result]]] = {}


def fingerprint(opened: Store) -> tuple:
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


def stored_results(reload: bool = False, request: Any = None, origins: Iterable[str] | None = None) -> list[Result]:
    """Every result this visitor's scoreboard shows, from the given origins (None: all): the
    operator's store (decoding a large store takes seconds, so one copy is kept, without replies,
    prompts and item references, until it changes) and, in public mode, the visitor's own session
    store (small: read each time). With no results of the visitor's own, the list returned is the
    same object until the store changes, so what is built from it can be cached by identity."""
    wanted = frozenset(origins) if origins is not None else EVERY_ORIGIN
    shared = _from_origins(_shared_results(reload), wanted)
    with reading(request) as stores:
        own = [r for s in stores[1:] for r in s.scored() if r.origin.value in wanted]
    return shared + own if own else shared


def _shared_results(reload: bool) -> list[Result]:
    opened = shared_store()
    key, stamp = str(opened.path), fingerprint(opened)
    with _cache_lock:
        hit = _cache.get(key)
        if hit and hit[0] == stamp and not reload:
            return hit[1]
    results = opened.scored()
    with _cache_lock:
        _cache.clear()  # one store per app: never hold two copies
        _cache[key] = (stamp, results)
    return results


def _from_origins(results: list[Result], wanted: frozenset[str]) -> list[Result]:
    if wanted >= EVERY_ORIGIN:
        return results
    key = (id(results), wanted)
    with _cache_lock:
        hit = _shown.get(key)
        if hit is not None and hit[0] is results:
            return hit[1]
    kept = [r for r in results if r.origin.value in wanted]
    with _cache_lock:
        if len(_shown) > 4:
            _shown.clear()
        _shown[key] = (results, kept)
    return kept


_derived: dict[tuple[int, str], tuple[list[Result], Any]] = {}


def derived(results: list[Result], name: str, compute: Any) -> Any:
    """`compute(results)`, kept while `results` is the same list (they stay the same until the store
    changes): a count over every result costs a tenth of a second on a large store."""
    key = (id(results), name)
    with _cache_lock:
        hit = _derived.get(key)
        if hit is not None and hit[0] is results:
            return hit[1]
    value = compute(results)
    with _cache_lock:
        if len(_derived) > 64:
            _derived.clear()
        _derived[key] = (results, value)
    return value


@dataclass(frozen=True)
class Summary:
    """Everything the views count over all results, from one pass (kept with the results): per
    (benchmark, model, mode, perturbation, origin), how many results, how many scored (errors and
    ungraded left out, as `report` leaves them out of n) and their summed score."""

    cells: dict[tuple[str, str, str, str, str], list]

    def by(self, index: int) -> Counter:
        counts: Counter = Counter()
        for key, (count, _, _) in self.cells.items():
            counts[key[index]] += count
        return counts


def summary(results: list[Result]) -> Summary:
    def count(rs: list[Result]) -> Summary:
        cells: dict[tuple, list] = {}
        error = Status.ERROR
        for r in rs:
            # The origin as the enum itself (a str): its .value per result costs a tenth of the pass.
            key = (r.benchmark, r.model, r.mode, r.perturbation, r.item_ref.origin if r.item_ref else Origin.RUN)
            cell = cells.get(key)
            if cell is None:
                cell = cells[key] = [0, 0, 0.0]
            cell[0] += 1
            if r.status is not error and r.score is not None:
                cell[1] += 1
                cell[2] += r.score
        return Summary({(*key[:4], key[4].value): cell for key, cell in cells.items()})

    return derived(results, "summary", count)


def of_benchmark(results: list[Result], benchmark: str | None) -> list[Result]:
    """The results of one benchmark (all benchmarks' results are grouped once and kept)."""

    def group(rs: list[Result]) -> dict[str, list[Result]]:
        found: dict[str, list[Result]] = {}
        for r in rs:
            found.setdefault(r.benchmark, []).append(r)
        return found

    return derived(results, "by benchmark", group).get(benchmark, [])


def origin_counts(results: list[Result]) -> Counter:
    return summary(results).by(4)


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
    swept: list[str]  # groups whose values are all numbers, at least three of them: a curve's x


def benchmarks(results: list[Result]) -> tuple[list[str], str | None]:
    """Benchmarks in these results, and the one with the most results (the first to show)."""
    counts = summary(results).by(0)
    ranked = sorted(counts, key=lambda b: (-counts[b], b))
    return sorted(counts), ranked[0] if ranked else None


def mode_order(label: str) -> tuple:
    try:
        mode = Mode.parse(label)
        return (0, mode.cot, mode.shots, label)
    except (ValueError, ProbeError):
        return (1, False, 0, label)


def facets(results: list[Result], benchmark: str | None) -> Facets:
    return derived(results, f"facets\x1f{benchmark}", lambda rs: _facets(of_benchmark(rs, benchmark)))


def _facets(results: Sequence[Result]) -> Facets:
    models, modes, perturbations, groups = set(), set(), set(), {}
    group_sets: dict[int, Any] = {}  # results share a few group mappings: read each once
    for result in results:
        models.add(result.model)
        modes.add(result.mode)
        perturbations.add(result.perturbation)
        if id(result.groups) not in group_sets:
            group_sets[id(result.groups)] = result.groups
    for mapping in group_sets.values():
        for name, value in mapping.items():
            groups.setdefault(name, set()).add(value)
    swept = [
        name for name, values in groups.items() if len(values) >= 3 and all(numeric(v) is not None for v in values)
    ]
    first = ("difference", "gap")  # the illusions' and BlindTest's sweeps, when present
    swept.sort(key=lambda name: (first.index(name) if name in first else len(first), name))
    return Facets(sorted(models), sorted(modes, key=mode_order), sorted(perturbations), sorted(groups), swept)


def select(results: list[Result], filters: Filters, ignore: Iterable[str] = ()) -> list[Result]:
    """The results of the filters' benchmark that pass them; `ignore` names filters left out
    ("mode", "models", "perturbation"), for views that compare along them."""
    skip = set(ignore)
    models = set() if "models" in skip else set(filters.models)
    mode = ALL if "mode" in skip else filters.mode
    perturbation = ALL if "perturbation" in skip else filters.perturbation
    chosen = of_benchmark(results, filters.benchmark)
    if not models and mode == ALL and perturbation == ALL:
        return chosen
    return [
        r
        for r in chosen
        if (not models or r.model in models)
        and (mode == ALL or r.mode == mode)
        and (perturbation == ALL or r.perturbation == perturbation)
    ]


def agreement_defaults(
    results: list[Result], benchmark: str | None, model: str | None, perturbation: str = ALL
) -> tuple[str | None, list[str], list[str]]:
    """The model and the two or three modes whose agreement is worth showing: those sharing the
    most graded items (a model and modes with no item in common draw an empty diagram). A model
    given and asked in several modes is kept. Returns (model, its modes, the modes chosen)."""
    items = derived(results, f"graded\x1f{benchmark}\x1f{perturbation}",
                    lambda rs: _graded_items(of_benchmark(rs, benchmark), perturbation))  # fmt: skip
    if not items:
        return None, [], []
    return _best_modes(items, model)


def _graded_items(results: Sequence[Result], perturbation: str) -> dict[str, dict[str, set[tuple[str, str]]]]:
    """model -> mode -> the (item, perturbation) it has a graded answer for."""
    items: dict[str, dict[str, set[tuple[str, str]]]] = {}
    for r in results:
        if r.status is not Status.ERROR and r.correct is not None and perturbation in (ALL, r.perturbation):
            items.setdefault(r.model, {}).setdefault(r.mode, set()).add((r.item_id, r.perturbation))
    return items


def _best_modes(
    items: dict[str, dict[str, set[tuple[str, str]]]], model: str | None
) -> tuple[str, list[str], list[str]]:
    def best(name: str) -> tuple[int, int, list[str]]:
        modes = sorted(items[name], key=mode_order)
        found = (0, 0, modes[:3])
        for size in (2, 3):
            for combo in itertools.combinations(modes, size):
                shared = len(set.intersection(*(items[name][m] for m in combo)))
                if (shared, size) > found[:2]:
                    found = (shared, size, list(combo))
        return found

    candidates = [model] if model in items and len(items[model]) > 1 else sorted(items)
    chosen = max(candidates, key=lambda name: (best(name)[0], -candidates.index(name)))
    return chosen, sorted(items[chosen], key=mode_order), best(chosen)[2]


def scoreboard_rows(selected: Sequence[Result], filters: Filters) -> list[Row]:
    """Measured rows, then chance and published rows: exactly what `report` prints for them."""
    named = [filters.benchmark] if filters.benchmark else []
    return report_rows(selected, filters.by, named)


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

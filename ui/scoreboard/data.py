"""The Scoreboard tab's data: the counts the stores keep (read once per state of the stores),
which of them a view shows (by where they came from), the filters' choices, the rows as `python
-m probes report` builds them, and the downloads made of them. No Gradio here: ui/scoreboard/__init__.py
wires it to widgets, ui/scoreboard/tables.py and ui/scoreboard/charts.py show it, and
ui/scoreboard/items.py reads the single results the views that pair or fit them need.

Nothing here decodes a result: every number is read off the counts per (benchmark, model, mode,
perturbation, origin, group value) that each store keeps as results are written
(probes/running/cells.py), so a store of a million results builds its first view as fast as one
of a thousand (bench/scoreboard.py).

Where results came from (`Result.origin`): evaluation runs, imports, people and their judgements
are what a scoreboard is for; a single item asked on the Probe tab is a look, not a measurement
(one reply, an interval from 3% to 97%), so the tab's own view leaves probe clicks out until the
visitor ticks "include single probes". The `/scoreboard` API, called directly, counts every
origin, as it always has (scripts rely on its numbers)."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from probes.analysis import calibration_cells
from probes.analysis.calibration import Calibration
from probes.analysis.calibration_cells import Sums
from probes.analysis.report import cell_report_rows, measured_rows, to_csv, to_json
from probes.analysis.scoring import Counts, Row
from probes.core.errors import ProbeError
from probes.core.types import Mode, Origin
from probes.people.human import is_human
from probes.running.cells import Key, Where
from probes.running.store import Store
from ui.scoreboard.style import PEOPLE
from ui.sessions import reader_session, reading_session, visitor

ALL = "all"
OVERALL = "overall only"
EXPORTS = Path(tempfile.gettempdir()) / "probe-scoreboard"
EVERY_ORIGIN = frozenset(origin.value for origin in Origin)
VIEW_ORIGINS = EVERY_ORIGIN - {Origin.PROBE.value}
ORIGIN_WORDS = {"run": "evaluation runs", "import": "imports", "human": "people", "judgement": "judgements",
                "probe": "single probes"}  # fmt: skip
Head = tuple[str, str, str, str, str]  # benchmark, model, mode, perturbation, origin


def origins_for(include_probes: bool | None) -> tuple[str, ...]:
    """The origins a view shows: everything but single probe clicks, unless they are asked for."""
    return tuple(sorted(EVERY_ORIGIN if include_probes else VIEW_ORIGINS))


# --- the counts, kept per state of the stores ------------------------------------------------------

_lock = threading.Lock()
_tallies: OrderedDict[tuple[str, ...], Tally] = OrderedDict()
KEPT_TALLIES = 32  # one per set of stores read (the operator's, and each visitor's own beside it)


def fingerprint(opened: Store) -> tuple[int, int, int]:
    """Changes whenever the store's results may have (Store.version: a commit by any connection)."""
    return opened.version()


@dataclass(eq=False)
class Tally:
    """The counts of every store a visitor's scoreboard reads (public mode: the operator's and
    their own), pooled. One object per state of those stores, so what is derived from it can be
    kept with it (`derived`): the overall cells of every benchmark are read at once (a few
    hundred rows for a million results), a benchmark's group cells when it is first shown."""

    session: str | None  # the visitor whose own store is read beside the operator's (public mode)
    versions: tuple[tuple[int, int, int], ...]
    overall: dict[Head, Counts]  # every origin: a view picks its own
    _benchmarks: dict[str, dict[Key, Counts]] = field(default_factory=dict)
    _calibrations: dict[str, dict[Key, Sums]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def cells_of(self, benchmark: str | None) -> dict[Key, Counts]:
        """Every cell of one benchmark (overall and each group value), every origin."""
        if benchmark is None:
            return {}
        with self._lock:
            hit = self._benchmarks.get(benchmark)
        if hit is None:
            with self.opened() as stores:
                hit = _pooled(store.cells(Where(benchmark), groups=None) for store in stores)
            with self._lock:
                self._benchmarks[benchmark] = hit
        return hit

    def calibration_of(self, benchmark: str | None) -> dict[Key, Sums]:
        """Calibration sums per cell of one benchmark (every origin, every group), read when it is
        first shown from the sums the store keeps (probes/running/calibration_kept.py): a read of
        a few hundred rows, whatever the number of results; every filter after it adds them."""
        if benchmark is None:
            return {}
        with self._lock:
            hit = self._calibrations.get(benchmark)
        if hit is None:
            with self.opened() as stores:
                hit = calibration_cells.pooled(
                    store.calibration_sums(Where(benchmark), groups=None) for store in stores
                )
            with self._lock:
                self._calibrations[benchmark] = hit
        return hit

    @contextmanager
    def opened(self) -> Iterator[list[Store]]:
        """The stores counted, open for the length of the block (a visitor's own store is held
        only while read: between requests it may be closed, or swept)."""
        with reading_session(self.session) as stores:
            yield stores

    def count(self, origins: Iterable[str] | None = None) -> int:
        wanted = EVERY_ORIGIN if origins is None else frozenset(origins)
        return sum(c.results for head, c in self.overall.items() if head[4] in wanted)


def _pooled(parts: Iterable[Mapping[Any, Counts]]) -> dict[Any, Counts]:
    """Counts of several stores added cell by cell (a result in two stores counts twice, as it is
    shown twice)."""
    parts = list(parts)
    if len(parts) == 1:
        return dict(parts[0])
    pooled: dict[Any, Counts] = {}
    for part in parts:
        for key, counts in part.items():
            pooled.setdefault(key, Counts()).add(counts)
    return pooled


def stored_tally(reload: bool = False, request: Any = None) -> Tally:
    """The counts this visitor's scoreboard shows: the operator's store and, in public mode, the
    visitor's own; the same object until one of the stores changes (the Refresh button reads
    them again regardless). Visitors with no store of their own share the operator's."""
    with reading_session(reader_session(request)) as opened:
        stores = tuple(opened)
        session = reader_session(request) if len(stores) > 1 else None
        key = tuple(str(store.path) for store in stores)
        versions = tuple(fingerprint(store) for store in stores)
        with _lock:
            hit = _tallies.get(key)
            if hit is not None and hit.versions == versions and not reload:
                _tallies.move_to_end(key)
                return hit
        overall = _pooled({key[:5]: c for key, c in store.cells().items()} for store in stores)
    tally = Tally(session, versions, overall)
    with _lock:
        _tallies[key] = tally
        _tallies.move_to_end(key)
        while len(_tallies) > KEPT_TALLIES:
            _tallies.popitem(last=False)
    return tally


# --- the benchmark to open next, per visitor --------------------------------------------------------

# "See everyone on the Scoreboard" after a Human session opens the benchmark the person took: the
# Human tab leaves its name here for this visitor, and the Scoreboard's next choices take it
# (once). Bounded: a visitor who never opens the Scoreboard leaves one short name behind.
_open_next: OrderedDict[str, str] = OrderedDict()
OPEN_NEXT_BOUND = 10_000


def open_next(request: Any, benchmark: str) -> None:
    """The benchmark this visitor's Scoreboard shows when it is next opened."""
    with _lock:
        _open_next[visitor(request).session] = benchmark
        _open_next.move_to_end(visitor(request).session)
        while len(_open_next) > OPEN_NEXT_BOUND:
            _open_next.popitem(last=False)


def opened_next(request: Any) -> str | None:
    """The benchmark left by `open_next` for this visitor, taken (None when there is none)."""
    with _lock:
        return _open_next.pop(visitor(request).session, None)


_derived: OrderedDict[tuple, tuple[Tally, Any]] = OrderedDict()


def derived(tally: Tally, name: str, compute: Any) -> Any:
    """`compute(tally)`, kept while `tally` is the same object (it is until a store changes)."""
    key = (id(tally), name)
    with _lock:
        hit = _derived.get(key)
        if hit is not None and hit[0] is tally:
            return hit[1]
    value = compute(tally)
    with _lock:
        _derived[key] = (tally, value)
        while len(_derived) > 256:
            _derived.popitem(last=False)
    return value


def shown(tally: Tally, origins: Iterable[str]) -> dict[Head, Counts]:
    """The overall cells of the origins a view shows."""
    wanted = frozenset(origins)
    return derived(tally, f"shown\x1f{sorted(wanted)}",
                   lambda t: {head: c for head, c in t.overall.items() if head[4] in wanted})  # fmt: skip


def counted_by(tally: Tally, origins: Iterable[str], index: int) -> Counter:
    """Results per benchmark (0), model (1), mode (2), perturbation (3) or origin (4)."""
    wanted = frozenset(origins)

    def count(t: Tally) -> Counter:
        counts: Counter = Counter()
        for head, cell in shown(t, wanted).items():
            counts[head[index]] += cell.results
        return counts

    return derived(tally, f"by\x1f{index}\x1f{sorted(wanted)}", count)


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

    def where(self, origins: Iterable[str], ignore: Iterable[str] = ()) -> Where:
        """The filters as a store reads them; `ignore` names filters left out ("mode", "models",
        "perturbation"), for views that compare along them."""
        skip = set(ignore)
        return Where(
            self.benchmark,
            () if "models" in skip else self.models,
            () if "mode" in skip or self.mode == ALL else (self.mode,),
            () if "perturbation" in skip or self.perturbation == ALL else (self.perturbation,),
            tuple(sorted(origins)),
        )


@dataclass(frozen=True)
class Facets:
    """What one benchmark's results hold, for the filters' choices."""

    models: list[str]
    modes: list[str]
    perturbations: list[str]
    groups: list[str]
    swept: list[str]  # groups whose values are all numbers, at least three of them: a curve's x


def benchmarks(tally: Tally, origins: Iterable[str]) -> tuple[list[str], str | None]:
    """Benchmarks with results from these origins, and the one with the most (the first to show)."""
    counts = counted_by(tally, origins, 0)
    ranked = sorted(counts, key=lambda b: (-counts[b], b))
    return sorted(counts), ranked[0] if ranked else None


def mode_order(label: str) -> tuple:
    try:
        mode = Mode.parse(label)
        return (0, mode.cot, mode.shots, label)
    except (ValueError, ProbeError):
        return (1, False, 0, label)


def facets(tally: Tally, benchmark: str | None, origins: Iterable[str]) -> Facets:
    wanted = frozenset(origins)
    return derived(tally, f"facets\x1f{benchmark}\x1f{sorted(wanted)}", lambda t: _facets(t, benchmark, wanted))


def _facets(tally: Tally, benchmark: str | None, origins: frozenset[str]) -> Facets:
    models, modes, perturbations, groups = set(), set(), set(), {}
    for (named, model, mode, perturbation, _, grp), _cell in _of_origins(tally.cells_of(benchmark), origins):
        if named == benchmark:
            models.add(model)
            modes.add(mode)
            perturbations.add(perturbation)
            if grp:
                name, _, value = grp.partition("=")
                groups.setdefault(name, set()).add(value)
    swept = [
        name for name, values in groups.items() if len(values) >= 3 and all(numeric(v) is not None for v in values)
    ]
    first = ("difference", "gap")  # the illusions' and BlindTest's sweeps, when present
    swept.sort(key=lambda name: (first.index(name) if name in first else len(first), name))
    return Facets(sorted(models), sorted(modes, key=mode_order), sorted(perturbations), sorted(groups), swept)


def _of_origins(cells: Mapping[Key, Counts], origins: frozenset[str]) -> Iterable[tuple[Key, Counts]]:
    return ((key, cell) for key, cell in cells.items() if key[4] in origins and cell.results)


def selected(tally: Tally, filters: Filters, origins: Iterable[str], groups: Sequence[str] = (),
             ignore: Iterable[str] = ()) -> dict[Key, Counts]:  # fmt: skip
    """The cells of the filters' benchmark that pass them (but those in `ignore`: see
    Filters.where): overall, and the entries of `groups`."""
    cells = tally.cells_of(filters.benchmark)
    return {key: cell for key, cell in passing(cells, filters, origins, groups, ignore).items() if cell.results}


def passing(cells: Mapping[Key, Any], filters: Filters, origins: Iterable[str], groups: Sequence[str] = (),
             ignore: Iterable[str] = ()) -> dict[Key, Any]:  # fmt: skip
    """Cells (counts or calibration sums) that pass the filters, as `selected` reads them."""
    where = filters.where(origins, ignore)
    names = set(groups)
    return {
        key: cell
        for key, cell in cells.items()
        if where.keeps(key) and (not key[5] or key[5].partition("=")[0] in names)
    }


def selected_count(tally: Tally, filters: Filters, origins: Iterable[str]) -> int:
    """How many results pass the filters."""
    return sum(cell.results for key, cell in selected(tally, filters, origins).items() if not key[5])


def scoreboard_rows(tally: Tally, filters: Filters, origins: Iterable[str]) -> list[Row]:
    """Measured rows, then chance and published rows: exactly what `report` prints for them."""
    named = [filters.benchmark] if filters.benchmark else []
    return cell_report_rows(selected(tally, filters, origins, filters.by), filters.by, named)


def pooled_people(tally: Tally, filters: Filters, origins: Iterable[str]) -> list[Row]:
    """Every human/<name> together as one row per mode and group ("people (3 persons)"): a class's
    answers beside the models, when more than one person took part."""
    cells = {key: cell for key, cell in selected(tally, filters, origins, filters.by).items() if is_human(key[1])}
    persons = {key[1] for key in cells}
    if len(persons) < 2:
        return []
    name = f"{PEOPLE} ({len(persons)} persons)"
    return measured_rows(_renamed(cells, name), filters.by)


def _renamed(cells: Mapping[Key, Counts], name: str) -> dict[Key, Counts]:
    """Cells of several people under one name, those falling on one key added together."""
    pooled: dict[Key, Counts] = {}
    for key, cell in cells.items():
        pooled.setdefault((key[0], name, *key[2:]), Counts()).add(cell)
    return pooled


def numeric(value: str) -> float | None:
    """A group value as a number ("+0.05", "384", "1/4"), or None for a label."""
    try:
        return float(Fraction(value.strip()))
    except (ValueError, ZeroDivisionError):
        return None


# --- downloads -------------------------------------------------------------------------------


def exports(
    rows: Sequence[Row], benchmark: str | None, calibrations: Mapping[tuple, Calibration] | None = None
) -> tuple[str, str]:
    """The rows as shown, as `report --format csv` and `--format json` print them: with the
    calibration columns where some result has probabilities, as `report` adds them. Kept in a
    folder named by content, so refreshing the same table writes nothing new. The store holds no
    keys, so neither can these."""
    name = "scoreboard-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", benchmark or "empty").strip("-")
    paths = []
    for suffix, text in (("csv", to_csv(rows, calibrations)), ("json", to_json(rows, calibrations) + "\n")):
        folder = EXPORTS / hashlib.sha256(text.encode()).hexdigest()[:16]
        path = folder / f"{name}.{suffix}"
        if not path.exists():  # written whole, then renamed: a concurrent reader never sees half
            folder.mkdir(parents=True, exist_ok=True)
            partial = folder / f".{name}.{suffix}.{os.getpid()}.{threading.get_ident()}"
            partial.write_text(text, encoding="utf-8")
            os.replace(partial, path)
        paths.append(str(path))
    return paths[0], paths[1]

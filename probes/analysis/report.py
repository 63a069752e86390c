"""Scoreboard rows as `python -m probes report` and the Scoreboard tab both show them: the measured
rows, the chance and published reference rows beside them, and their CSV and JSON exports (one
code path, so a download from the app and the command's output agree column for column)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence

from probes.analysis.calibration import COLUMNS as CALIBRATION_COLUMNS
from probes.analysis.calibration import Calibration
from probes.analysis.scoring import Counts, Row, aggregate, published_rows, reference_row, rows_from_counts
from probes.core.errors import BenchmarkError
from probes.core.registry import generated_family, get_benchmark, is_benchmark
from probes.core.types import Result
from probes.files.spreadsheet import csv_text, json_rows

COLUMNS = list(Row.__dataclass_fields__)


@functools.cache
def _chance(benchmark_id: str) -> float | None:
    # A generated family's chance is its class's: building one designs its items, which for an
    # illusion measures every stimulus (0.7 s each, the first Scoreboard view of seven illusions
    # paid 5 s). Others build lazily; the app asks on every refresh, hence the cache.
    family = generated_family(benchmark_id)
    if family is not None:
        return family.chance
    try:
        return get_benchmark(benchmark_id).chance
    except BenchmarkError:  # one that cannot be built without its data has no chance row to give
        return None


def reference_rows(benchmarks: Iterable[str], by: Sequence[str] = ()) -> list[Row]:
    """Chance and the papers' published numbers, for these benchmarks (groups named in `by`)."""
    wanted = set(benchmarks)
    rows = []
    for benchmark_id in sorted(b for b in wanted if is_benchmark(b)):  # loading only their modules
        chance = _chance(benchmark_id)
        if chance is not None:
            rows.append(reference_row(benchmark_id, "chance", chance, "chance"))
    return rows + published_rows(wanted, by)


def report_rows(
    results: Iterable[Result],
    by: Sequence[str] = (),
    benchmarks: Iterable[str] = (),
    references: bool = True,
) -> list[Row]:
    """Measured rows, then (with `references`) the reference rows of every benchmark measured or
    named in `benchmarks` (a report asked for one benchmark shows its references even when empty)."""
    return _with_references(aggregate(results, by=by), by, benchmarks, references)


Cell = tuple[str, str, str, str, str, str]  # benchmark, model, mode, perturbation, origin, grp ('' or name=value)


def measured_rows(cells: Mapping[Cell, Counts], by: Sequence[str] = ()) -> list[Row]:
    """The measured rows of counts per cell (as a store keeps them: Store.cells), every origin
    in `cells` pooled: the rows `aggregate(results, by)` gives for the results counted."""
    names = set(by)
    merged: dict[tuple[str, str, str, str, str], Counts] = {}
    for (benchmark, model, mode, perturbation, _, grp), counts in cells.items():
        if grp and grp.partition("=")[0] not in names:
            continue
        key = (benchmark, model, mode, perturbation, grp or "overall")
        merged.setdefault(key, Counts()).add(counts)
    return rows_from_counts(merged)


def cell_report_rows(
    cells: Mapping[Cell, Counts], by: Sequence[str] = (), benchmarks: Iterable[str] = (), references: bool = True
) -> list[Row]:
    """`report_rows` from counts per cell rather than from results."""
    return _with_references(measured_rows(cells, by), by, benchmarks, references)


def _with_references(rows: list[Row], by: Sequence[str], benchmarks: Iterable[str], references: bool) -> list[Row]:
    if references:
        rows += reference_rows({r.benchmark for r in rows} | set(benchmarks), by)
    return rows


Calibrations = Mapping[tuple[str, str, str, str, str], Calibration]  # by (benchmark, model, mode, perturbation, group)


def calibration_of(row: Row, calibrations: Calibrations) -> dict[str, float | int | None]:
    """A row's calibration columns (probes/analysis/calibration.py): None where it has no
    probabilities (a reference row, a model that gave none)."""
    found = calibrations.get((row.benchmark, row.model, row.mode, row.perturbation, row.group))
    return found.as_dict() if found else dict.fromkeys(CALIBRATION_COLUMNS)


def _dicts(rows: Sequence[Row], calibrations: Calibrations | None) -> list[dict]:
    # The calibration columns only when some result has probabilities: a report of choices alone
    # keeps the columns it always had.
    if not calibrations:
        return [row.as_dict() for row in rows]
    return [row.as_dict() | calibration_of(row, calibrations) for row in rows]


def to_json(rows: Sequence[Row], calibrations: Calibrations | None = None) -> str:
    return json_rows(_dicts(rows, calibrations))


def to_csv(rows: Sequence[Row], calibrations: Calibrations | None = None) -> str:
    return csv_text(COLUMNS + (list(CALIBRATION_COLUMNS) if calibrations else []), _dicts(rows, calibrations))

"""Every psychometric fit of a swept parameter, from one function: the rows `report --fit PARAM`
prints (choices, and probabilities where results carry them), and the closing line of
`run --until-pse-width`, which fits the same stored results with the same filters through this
very function, so that one run never has two answers (issue 34). What "no PSE" means is the same
for both sources (probes/analysis/logistic.py: the slope test, the interval within the sweep).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from probes.analysis.graded import graded_fit_rows
from probes.analysis.logistic import RESAMPLES, FitStatus
from probes.analysis.psychometric import FitRow, fit_rows, row_order
from probes.core.types import Result


def fit_table(
    results: Iterable[Result], param: str, by: Sequence[str] = (), *, resamples: int = RESAMPLES, seed: int = 0
) -> list[FitRow]:
    """Beside each choice-based fit, the fit of the answers' probabilities where there are any,
    in the report's order."""
    results = list(results)
    rows = fit_rows(results, param, by, resamples=resamples, seed=seed)
    rows += graded_fit_rows(results, param, by, resamples=resamples, seed=seed)
    return sorted(rows, key=row_order)


def verdict(row: FitRow) -> str:
    """A fit in words, its numbers written as `report --fit`'s table writes them, so a line
    quoting a fit can be checked against the report character for character."""
    pse, low, high = (_number(value) for value in (row.pse, row.pse_low, row.pse_high))
    if row.status == FitStatus.OK:
        return f"{row.source} ok, PSE {pse}, 95% interval [{low}, {high}]"
    if row.status == FitStatus.SEPARATED:  # a step: no slope, the PSE bracketed by two levels
        return f"{row.source} separated, PSE {pse} between {low} and {high}"
    return f"{row.source} {row.status}, no PSE"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"

"""Illusion magnitude from answer probabilities: the graded fits (probes/analysis/graded.py) split
by the inducers as drawn, as probes/analysis/psychometric.magnitude_rows splits the choice fits,
and combined the same way (magnitude = (pse(+1) - pse(-1)) / 2, side bias, shifts from the
control, each with the bootstrap interval of the two fits' draws). A graded fit pins each PSE
from far fewer items, so the magnitude's interval is narrower for the same items; and where a
model's choices step at one level (a `separated` fit, only bracketed), its probabilities still
give a slope and an interval.

Only results with probabilities enter (people, and models that gave none, make no row); errors
are left out; an item whose polarity cannot be told is left out and counted in `ambiguous`.
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from collections.abc import Iterable

from probes.analysis.graded import graded_fit, positive_probability
from probes.analysis.logistic import RESAMPLES, Fit
from probes.analysis.psychometric import (
    POLARITIES,
    FitRow,
    MagnitudeRow,
    _magnitude_row,
    as_row,
    number,
    polarity,
    row_order,
)
from probes.core.types import Result, Status

SOURCE = "probabilities"


def graded_magnitude_rows(
    results: Iterable[Result], param: str = "difference", *, resamples: int = RESAMPLES, seed: int = 0
) -> list[MagnitudeRow]:
    """One magnitude row per (benchmark, model, mode, perturbation) whose results carry
    probabilities, its polarity fits (FitRows with `source` "probabilities") in `fits`."""
    points: dict[tuple[str, ...], dict[int, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    ambiguous: dict[tuple[str, ...], int] = defaultdict(int)
    for result in results:
        if result.status is Status.ERROR:
            continue
        y = positive_probability(result)
        params = result.item_ref.params if result.item_ref is not None else {}
        x = number(params.get(param))
        if x is None or y is None:
            continue
        head = (result.benchmark, result.model, result.mode, result.perturbation)
        side = polarity(params)
        if side is None:
            ambiguous[head] += 1
        else:
            points[head][side].append((x, y))
    rows = []
    for head in points.keys() | ambiguous.keys():
        fits: dict[str, tuple[FitRow, Fit]] = {}
        for side, pairs in sorted(points[head].items()):
            group = f"polarity={POLARITIES[side]}"
            # Each fit's own stream, named by its key and source, as the choice fits name theirs.
            stream = [seed, zlib.crc32("\x1f".join((*head, group, param, SOURCE)).encode("utf-8"))]
            fit = graded_fit([p[0] for p in pairs], [p[1] for p in pairs], resamples=resamples, seed=stream)
            row = as_row(head, group, param, fit, source=SOURCE)
            fits[POLARITIES[side]] = (row, fit)
        rows.append(_magnitude_row((*head, "overall"), param, fits, ambiguous[head]))
    return sorted(rows, key=row_order)

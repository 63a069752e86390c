"""Psychometric curves from stored results: for any numeric sweep, P(positive reply) against the
swept parameter, fitted per (benchmark, model, mode, perturbation) and per group, and the
illusion magnitude from opposite inducer polarities. The fitting is `probes.analysis.logistic`.
Source: issue 13 and SPEC section 5 (psychophysics on pyllusion's parametric illusions).

A result joins the fit of parameter P when its item reference's params hold a number for P (a
group label is never used as x). Its reply is:
- positive when the item's params hold `positive_answer` and the parsed reply equals it (compared
  as text, case-folded, so 0 and "0" agree): the parsed value that means "chose the target that
  `difference > 0` favours". Illusion items set it per item, as the option order is
  counterbalanced (a choice item's parsed value is the option's index);
- otherwise, for a yes/no reply, positive when the reply is "yes";
- otherwise it has no positive/negative reading and is counted in `unrated`, not fitted.
Unparsed and refused replies are left out of the fit and counted in `excluded`; errors (no reply)
in `errors`.

Illusion magnitude. pyllusion flips its inducers with the sign of `difference` (strength > 0 is
always "incongruent": the inducers oppose whichever target is bigger), so a fixed
`illusion_strength` is not a fixed picture of inducers across a signed sweep. The fits are split
instead by the inducers as drawn, the item's `polarity`: +1 when they work against the positive
target (make it look smaller, shorter, less offset or tilted: pyllusion's configuration for
difference > 0 at strength > 0), -1 when they work for it, 0 for controls (no inducers, or strength 0). Without a `polarity` param it is
sign(illusion_strength) * sign(difference), and 0 for `target_only` items or strength 0; an item
with difference 0 and no `polarity` is ambiguous (each family draws d = 0 its own way) and left
out, counted in `ambiguous`. A fooled observer needs a bigger positive target under +1, so
magnitude = (pse(+1) - pse(-1)) / 2 is positive for an illusion in the human direction; a
constant side or position preference moves both PSEs alike and cancels, and is reported as
`bias` = (pse(+1) + pse(-1)) / 2. `shift_plus` / `shift_minus` are each PSE minus the control's.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any

from probes.analysis.logistic import RESAMPLES, Fit, FitStatus, combine, fit_levels
from probes.core.types import POSITIVE_ANSWER, Result, Status

POLARITY = "polarity"
POLARITIES = {1: "+1", -1: "-1", 0: "0"}


@dataclass(frozen=True)
class FitRow:
    benchmark: str
    model: str
    mode: str
    perturbation: str
    group: str  # "overall", or "name=value" (with "; polarity=+1" inside a magnitude row)
    param: str
    status: str  # a FitStatus value
    pse: float | None
    pse_low: float | None
    pse_high: float | None
    slope: float | None  # the logistic scale 1/b in x units; negative for a falling curve
    slope_low: float | None
    slope_high: float | None
    width: float | None  # x distance from 25% to 75%: 2 ln(3) |slope|
    width_low: float | None
    width_high: float | None
    n: int  # replies fitted
    levels: int  # distinct x values fitted
    excluded: int  # unparsed or refused replies, left out
    errors: int  # no reply at all
    unrated: int  # replies with no positive/negative reading (no positive_answer, not yes/no)
    points: tuple[dict[str, float], ...] = ()  # per level: x, n, positives, proportion, low, high
    curve_x: tuple[float, ...] = ()
    curve_p: tuple[float, ...] = ()
    source: str = "choices"  # or "probabilities": graded responses (probes/analysis/graded.py)
    p_slope: float | None = None  # the test of the slope against zero (logistic.slope_test); flat above 0.05

    def as_dict(self) -> dict[str, Any]:
        # Shallow (not dataclasses.asdict, which deep-copies every number of the curve: about a
        # second for `report --fit` over a million results' 846 rows).
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["points"], data["curve"] = (
            [dict(p) for p in self.points],
            {"x": _short(self.curve_x), "p": _short(self.curve_p)},
        )
        del data["curve_x"], data["curve_p"]
        return data


FIT_COLUMNS = [f.name for f in fields(FitRow) if f.name not in ("points", "curve_x", "curve_p")]


@dataclass(frozen=True)
class MagnitudeRow:
    benchmark: str
    model: str
    mode: str
    perturbation: str
    group: str
    param: str
    status: str  # ok | bracketed (a polarity's fit is a step) | why there is no magnitude
    magnitude: float | None  # (pse(+1) - pse(-1)) / 2
    magnitude_low: float | None
    magnitude_high: float | None
    bias: float | None  # (pse(+1) + pse(-1)) / 2: a side or position preference
    bias_low: float | None
    bias_high: float | None
    shift_plus: float | None  # pse(+1) - pse(control)
    shift_plus_low: float | None
    shift_plus_high: float | None
    shift_minus: float | None  # pse(-1) - pse(control)
    shift_minus_low: float | None
    shift_minus_high: float | None
    ambiguous: int  # replies whose inducer polarity cannot be told, left out
    fits: Mapping[str, FitRow] = field(default_factory=dict)  # "+1", "-1", "0" (control)

    def as_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "fits"}
        return data | {"fits": {name: row.as_dict() for name, row in self.fits.items()}}


MAGNITUDE_COLUMNS = [f.name for f in fields(MagnitudeRow) if f.name != "fits"]


def number(value: Any) -> float | None:
    """A finite number from a param value (int, float, Fraction, or text such as "0.1" or "1/4")."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(Fraction(value.strip()) if isinstance(value, str) else value)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _params(result: Result) -> Mapping[str, Any]:
    return result.item_ref.params if result.item_ref is not None else {}


def is_positive(result: Result) -> bool | None:
    """The positive-response rule (module docstring) for an answered reply; None: no reading."""
    params = _params(result)
    if params.get(POSITIVE_ANSWER) is not None:
        return _text(result.parsed) == _text(params[POSITIVE_ANSWER])
    if _text(result.parsed) in ("yes", "no"):
        return _text(result.parsed) == "yes"
    return None


def _text(value: Any) -> str:
    return str(value).strip().casefold()


def polarity(params: Mapping[str, Any]) -> int | None:
    """+1, -1 or 0 (control) for the inducers as drawn (module docstring); None when unknown."""
    if params.get(POLARITY) is not None:
        value = number(params[POLARITY])
        return None if value is None else int(math.copysign(1, value)) if value else 0
    if params.get("target_only") in (True, "true"):
        return 0
    strength, difference = number(params.get("illusion_strength")), number(params.get("difference"))
    if strength == 0:
        return 0
    if strength is None or not difference:
        return None
    return int(math.copysign(1, strength) * math.copysign(1, difference))


@dataclass
class _Trials:
    x: list[float] = field(default_factory=list)
    positive: list[bool] = field(default_factory=list)
    excluded: int = 0
    errors: int = 0
    unrated: int = 0

    def add(self, x: float, result: Result) -> None:
        if result.status is Status.ERROR:
            self.errors += 1
        elif result.status is not Status.ANSWERED or result.parsed is None:
            self.excluded += 1
        elif (positive := is_positive(result)) is None:
            self.unrated += 1
        else:
            self.x.append(x)
            self.positive.append(positive)


def _head(result: Result) -> tuple[str, str, str, str]:
    return result.benchmark, result.model, result.mode, result.perturbation


def _groups(result: Result, by: Sequence[str]) -> list[str]:
    return ["overall"] + [f"{name}={result.groups[name]}" for name in by if name in result.groups]


def _fit(trials: _Trials, key: tuple[str, ...], resamples: int, seed: int) -> Fit:
    x = trials.x
    # Each row's own stream, named by its key, so a row's interval does not depend on what else is fitted.
    stream = [seed, zlib.crc32("\x1f".join(key).encode("utf-8"))]
    return fit_levels(x, [1] * len(x), [int(p) for p in trials.positive], resamples=resamples, seed=stream)


NUMBERS = ("pse", "pse_low", "pse_high", "slope", "slope_low", "slope_high", "width", "width_low", "width_high")


def _fit_row(
    head: tuple[str, ...], group: str, param: str, trials: _Trials, resamples: int, seed: int
) -> tuple[FitRow, Fit]:
    fit = _fit(trials, (*head, group, param), resamples, seed)
    counted = {"excluded": trials.excluded, "errors": trials.errors, "unrated": trials.unrated}
    return as_row(head, group, param, fit, **counted), fit


def as_row(head: tuple[str, ...], group: str, param: str, fit: Fit, source: str = "choices", **counted: int) -> FitRow:
    """A fit as a row, whichever its source: the choices' (`counted`: what was left out) or the
    probabilities' (probes/analysis/graded.py)."""
    points = tuple(
        {"x": p.x, "n": p.n, "positives": p.positives, "proportion": p.proportion, "low": p.low, "high": p.high}
        for p in fit.levels
    )
    left_out = {"excluded": 0, "errors": 0, "unrated": 0} | counted
    return FitRow(*head, group, param, fit.status.value, *(getattr(fit, name) for name in NUMBERS), n=fit.n,
                  levels=len(fit.levels), **left_out, points=points, curve_x=fit.curve_x, curve_p=fit.curve_p,
                  source=source, p_slope=fit.p_slope)  # fmt: skip


def fit_rows(
    results: Iterable[Result], param: str, by: Sequence[str] = (), *, resamples: int = RESAMPLES, seed: int = 0
) -> list[FitRow]:
    """One fit of P(positive) against `param` per (benchmark, model, mode, perturbation): an
    `overall` row and one per value of each group name in `by` (as `scoring.aggregate`). Results
    whose item has no numeric `param` are not part of the sweep and make no row."""
    buckets: dict[tuple[str, ...], _Trials] = defaultdict(_Trials)
    for result in results:
        x = number(_params(result).get(param))
        if x is not None:
            for group in _groups(result, by):
                buckets[(*_head(result), group)].add(x, result)
    rows = [_fit_row(key[:4], key[4], param, trials, resamples, seed)[0] for key, trials in buckets.items()]
    return sorted(rows, key=row_order)


def magnitude_rows(
    results: Iterable[Result],
    param: str = "difference",
    by: Sequence[str] = (),
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> list[MagnitudeRow]:
    """Illusion magnitude, side bias and shifts from the control, per (benchmark, model, mode,
    perturbation) and group, from one fit per inducer polarity (module docstring). Each row
    carries its polarity fits in `fits` for the chart."""
    buckets: dict[tuple[str, ...], dict[int, _Trials]] = defaultdict(lambda: defaultdict(_Trials))
    ambiguous: dict[tuple[str, ...], int] = defaultdict(int)
    for result in results:
        params = _params(result)
        x = number(params.get(param))
        if x is None:
            continue
        side = polarity(params)
        for group in _groups(result, by):
            key = (*_head(result), group)
            if side is None:
                ambiguous[key] += result.status is not Status.ERROR
            else:
                buckets[key][side].add(x, result)
    rows = []
    for key in buckets.keys() | ambiguous.keys():
        inner = f"; {key[4]}" if key[4] != "overall" else ""
        fits = {POLARITIES[side]: _fit_row(key[:4], f"polarity={POLARITIES[side]}{inner}", param, trials, resamples, seed)
                for side, trials in sorted(buckets[key].items())}  # fmt: skip
        rows.append(_magnitude_row(key, param, fits, ambiguous[key]))
    return sorted(rows, key=row_order)


def _magnitude_row(
    key: tuple[str, ...], param: str, fits: dict[str, tuple[FitRow, Fit]], ambiguous: int
) -> MagnitudeRow:
    plus, minus, control = (fits[name][1] if name in fits else None for name in ("+1", "-1", "0"))
    # A polarity with no PSE (flat, or outside the sweep) leaves the magnitude unknown, not zero.
    usable = (FitStatus.OK, FitStatus.SEPARATED)
    none3 = (None, None, None)
    if plus is not None and minus is not None and plus.status in usable and minus.status in usable:
        status = "ok" if plus.status is minus.status is FitStatus.OK else "bracketed"
        magnitude, bias = combine(plus, minus, 0.5, -1), combine(plus, minus, 0.5, +1)
    else:
        status = "; ".join(f"polarity {name}: {fits[name][1].status.value if name in fits else 'no replies'}"
                           for name in ("+1", "-1"))  # fmt: skip
        magnitude = bias = none3
    shift_plus = combine(plus, control) if plus is not None and control is not None else none3
    shift_minus = combine(minus, control) if minus is not None and control is not None else none3
    rows = {name: row for name, (row, _) in fits.items()}
    return MagnitudeRow(*key, param, status, *magnitude, *bias, *shift_plus, *shift_minus, ambiguous, rows)


def row_order(row: FitRow | MagnitudeRow) -> tuple:
    """Overall first, then by group name, numeric values in numeric order (as the scoreboard)."""
    name, _, value = row.group.partition("=")
    numeric = number(value)
    group = (0, "", 0.0, "") if row.group == "overall" else (1, name, math.inf if numeric is None else numeric, value)
    return (row.benchmark, row.model, row.mode, row.perturbation, row.param, group, getattr(row, "source", ""))


def _short(values: Sequence[float]) -> list[float]:
    return [float(f"{v:.6g}") for v in values]

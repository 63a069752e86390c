"""Perceive or recall: on the parametric illusions, does a model's choice follow the difference
drawn, or the inducers?

The polarity-flip control of psychophysics on VLMs (Sun et al., "Do VLMs Perceive or Recall?
Probing Visual Perception vs. Memory with Classic Visual Illusions", 2026): the same targets are
drawn under inducers of both polarities (`--param inducers=with,flipped`, the default designs
hold both), so on some items the inducers push toward the true answer (`congruence` congruent)
and on others they are flipped against it (incongruent). On each incongruent item a reply

- tracks the difference: it chose the target the drawn difference favours (right);
- tracks the inducers: it chose the other one, the answer the inducers make look true;
- neither: no choice could be read (unparsed or refused).

A geometry-only observer tracks the difference every time; a person near threshold tracks the
inducers often; a model that answers from a remembered template tracks neither the picture nor
its inducers, which the pairs show: on matched pairs (the same targets, wording and option order
under both polarities), `moved` counts those whose choice moved with the inducers (right when
they agree with the truth, wrong when they are flipped against it), `fixed` those that gave the
same choice under both polarities. Controls (the same targets without inducers) give the
accuracy the picture allows without any illusion (`control_*`).

Items whose targets measure equal have no truth to track and are left out, as are errors (no
reply at all). Shares are percent of the incongruent items with a reply, with Wilson intervals.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from probes.analysis.scoring import bucketed, wilson
from probes.core.types import Result, Status

# Parameters that differ between the two polarities of the same targets (and labels of them).
_POLARITY_PARAMS = {"illusion_strength", "pyllusion_strength", "polarity", "congruence", "inducers", "design"}


@dataclass(frozen=True)
class PolarityRow:
    benchmark: str
    model: str
    mode: str
    perturbation: str
    group: str  # "overall", or "name=value"
    n: int  # incongruent items with a reply
    difference: int
    difference_share: float | None  # percent of n
    difference_low: float | None
    difference_high: float | None
    inducers: int
    inducers_share: float | None
    inducers_low: float | None
    inducers_high: float | None
    neither: int
    neither_share: float | None
    neither_low: float | None
    neither_high: float | None
    pairs: int  # matched pairs (one congruent, one incongruent item) both answered
    moved: int  # pairs whose choice moved with the inducers
    moved_share: float | None
    moved_low: float | None
    moved_high: float | None
    fixed: int  # pairs with the same choice under both polarities
    control_n: int  # control items (no inducers) with a reply and a truth
    control_right: int
    control_accuracy: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


COLUMNS = list(PolarityRow.__dataclass_fields__)


def _params(result: Result) -> Mapping[str, Any]:
    return result.item_ref.params if result.item_ref is not None else {}


def _graded(result: Result) -> bool:
    """A reply to an item with a truth (errors and equal targets left out)."""
    return result.status is not Status.ERROR and result.target is not None and result.ungraded is None


def _share(count: int, n: int) -> tuple[float | None, float | None, float | None]:
    if not n:
        return None, None, None
    low, high = wilson(count, n)
    return round(100 * count / n, 2), round(100 * low, 2), round(100 * high, 2)


def _pair_key(result: Result) -> tuple:
    """The same targets, wording, option order and strength, whatever the polarity."""
    params = _params(result)
    try:
        strength = abs(float(params.get("illusion_strength", 0)))
    except (TypeError, ValueError):
        strength = None
    return strength, *sorted((k, repr(v)) for k, v in params.items() if k not in _POLARITY_PARAMS)


def polarity_rows(results: Iterable[Result], by: Sequence[str] = ()) -> list[PolarityRow]:
    """One row per (benchmark, model, mode, perturbation) and group of the illusion results that
    hold both congruences; benchmarks without inducer polarity give no row."""
    illusions = (r for r in results if _params(r).get("congruence") in ("congruent", "incongruent", "none"))
    rows = [_row(key, members) for key, members in bucketed(illusions, by).items()]
    return sorted((row for row in rows if row is not None), key=_order)


def _order(row: PolarityRow) -> tuple:
    return row.benchmark, row.model, row.mode, row.perturbation, row.group != "overall", row.group


def _row(key: tuple[str, ...], members: list[Result]) -> PolarityRow | None:
    graded = [r for r in members if _graded(r)]
    against = [r for r in graded if _params(r).get("congruence") == "incongruent"]
    if not against:
        return None
    tracked = sum(1 for r in against if r.correct)
    neither = sum(1 for r in against if r.status is not Status.ANSWERED)
    induced = len(against) - tracked - neither
    moved, fixed, pairs = _pairs(graded)
    controls = [r for r in graded if _params(r).get("congruence") == "none"]
    counts = {"difference": tracked, "inducers": induced, "neither": neither, "pairs": pairs, "moved": moved,
              "fixed": fixed, "control_n": len(controls), "control_right": sum(1 for r in controls if r.correct)}  # fmt: skip
    return _from_counts(key, len(against), counts)


def _from_counts(key: tuple[str, ...], n: int, counts: Mapping[str, int]) -> PolarityRow:
    shares = {}
    for name, of in (("difference", n), ("inducers", n), ("neither", n), ("moved", counts["pairs"])):
        shares.update(zip((f"{name}_share", f"{name}_low", f"{name}_high"), _share(counts[name], of), strict=True))
    controls = counts["control_n"]
    accuracy = round(100 * counts["control_right"] / controls, 2) if controls else None
    return PolarityRow(*key, n=n, **counts, **shares, control_accuracy=accuracy)


def pooled(rows: Sequence[PolarityRow], model: str) -> list[PolarityRow]:
    """Rows of several answerers (people, each matched pair within one person) summed into one
    answerer `model` per (benchmark, mode, perturbation, group)."""
    summed: dict[tuple[str, ...], dict[str, int]] = {}
    sizes: dict[tuple[str, ...], int] = defaultdict(int)
    names = ("difference", "inducers", "neither", "pairs", "moved", "fixed", "control_n", "control_right")
    for row in rows:
        key = (row.benchmark, model, row.mode, row.perturbation, row.group)
        totals = summed.setdefault(key, dict.fromkeys(names, 0))
        for name in names:
            totals[name] += getattr(row, name)
        sizes[key] += row.n
    return [_from_counts(key, sizes[key], totals) for key, totals in summed.items()]


def _pairs(graded: list[Result]) -> tuple[int, int, int]:
    """(moved, fixed, pairs) over matched congruent/incongruent pairs both answered."""
    by_key: dict[tuple, dict[str, Result]] = defaultdict(dict)
    for result in graded:
        congruence = _params(result).get("congruence")
        if congruence in ("congruent", "incongruent") and result.status is Status.ANSWERED:
            by_key[_pair_key(result)].setdefault(congruence, result)
    moved = fixed = pairs = 0
    for pair in by_key.values():
        if len(pair) != 2:
            continue
        pairs += 1
        with_them, against_them = pair["congruent"], pair["incongruent"]
        if with_them.correct and not against_them.correct:
            moved += 1
        if str(with_them.parsed).casefold() == str(against_them.parsed).casefold():
            fixed += 1
    return moved, fixed, pairs


def compact(row: PolarityRow) -> dict[str, Any]:
    """A row for a narrow table: each share with its interval in one column."""

    def shown(share: float | None, low: float | None, high: float | None) -> str:
        return "-" if share is None else f"{share:.1f}% [{low:.1f}, {high:.1f}]"

    return {
        "benchmark": row.benchmark,
        "model": row.model,
        "mode": row.mode,
        "perturbation": row.perturbation,
        "group": row.group,
        "n": row.n,
        "difference": shown(row.difference_share, row.difference_low, row.difference_high),
        "inducers": shown(row.inducers_share, row.inducers_low, row.inducers_high),
        "neither": shown(row.neither_share, row.neither_low, row.neither_high),
        "pairs": row.pairs,
        "moved": shown(row.moved_share, row.moved_low, row.moved_high),
        "fixed": row.fixed,
        "controls": "-" if row.control_accuracy is None else f"{row.control_accuracy:.1f}% of {row.control_n}",
    }

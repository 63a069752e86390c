"""Does a model's answer survive a reordering of the options? Consistency and position bias.

Consistency (after MMBench's CircularEval, Liu et al. 2023, "MMBench: Is Your Multi-modal Model
an All-around Player?"): a multiple-choice item with k options is asked under every rotation
`rotate-options-0` .. `rotate-options-(k-1)` (perturb.py: option i shown at place i - r, the target
follows its option); the item is consistent when every rotation is answered right. A model that
always names the first label is right under exactly one rotation of each item: accuracy 1/k,
consistency 0. A uniform guesser's consistency is (1/k)^k.

Position bias: for each shown place p (0-based, labelled a, b, c ...) how often the model chose
it against how often it held the right answer, on the same replies.

The rules, as in scoring.py: a result with status `error` (no reply) or left ungraded (`correct`
None) is no answer and is left out; an unparsed or refused reply is wrong.

Which rotation and how many options:
- perturbation `rotate-options-r` is rotation r; `none` asks the same prompt as rotation 0 and
  stands for it when an item has no usable `rotate-options-0` result;
- k, the option count, is read from the result's item reference, `options_count` (OPTIONS_COUNT_KEY:
  a key of a mapping or an attribute of a typed reference), when it carries one; otherwise k = the item's largest rotation seen + 1 (a missing last rotation is then
  not noticed, which is why the runner should store the count). An item whose k would be 1 by that
  fallback (only rotation 0 seen) is incomplete: one order says nothing about order.
- with k known, rotation r >= k is rotation r mod k, as perturb.apply shifts it.
Items with some rotation missing (never asked, an error, or ungraded) are counted in `incomplete`
and left out of both `consistency` and the `accuracy` beside it, never silently.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from probes.core.types import Result, Status

OPTIONS_COUNT_KEY = "options_count"  # item_ref[OPTIONS_COUNT_KEY]: how many options the item shows
_ROTATION = re.compile(r"rotate-options-(\d+)")
ALL_PERTURBATIONS = "all"  # the `perturbation` of a position-bias row pooling every perturbation


def rotation_of(perturbation: str) -> int | None:
    """r for `rotate-options-r`, None for anything else (including `none`)."""
    match = _ROTATION.fullmatch(perturbation)
    return int(match.group(1)) if match else None


def options_count(result: Result) -> int | None:
    """The item's option count as the result's item reference carries it, or None. The reference
    may be a plain mapping (key OPTIONS_COUNT_KEY) or a typed one (attribute of that name)."""
    ref = result.item_ref
    count = ref.get(OPTIONS_COUNT_KEY) if isinstance(ref, Mapping) else getattr(ref, OPTIONS_COUNT_KEY, None)
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else None


def _usable(result: Result) -> bool:
    return result.status is not Status.ERROR and result.correct is not None


def _right(result: Result) -> bool:
    return bool(result.correct) and result.status is Status.ANSWERED


# --- consistency across option orders ------------------------------------------------------


@dataclass(frozen=True)
class ConsistencyRow:
    benchmark: str
    model: str
    mode: str
    items: int  # items with every rotation answered (right, wrong, unparsed or refused)
    consistent: int  # of those, right under every rotation
    consistency: float | None  # percent of `items`
    n: int  # rotation results of those items (the sum of their k)
    accuracy: float | None  # percent of `n`, beside consistency
    incomplete: int  # items asked under some rotation but missing others: left out of all the above

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def consistency(results: Iterable[Result]) -> list[ConsistencyRow]:
    """One row per (benchmark, model, mode) with at least one `rotate-options-*` result, sorted.

    An item enters once it has been asked under some `rotate-options-r` (any status); a run of
    `none` alone is not a rotation run and gives no row.
    """
    cells: dict[tuple[str, str, str], dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for result in results:
        if result.perturbation == "none" or rotation_of(result.perturbation) is not None:
            cells[(result.benchmark, result.model, result.mode)][result.item_id].append(result)
    rows = []
    for (benchmark, model, mode), items in sorted(cells.items()):
        complete: list[list[bool]] = []
        incomplete = 0
        for item_results in items.values():
            if all(rotation_of(r.perturbation) is None for r in item_results):
                continue  # only `none`: this item was never asked under rotations
            verdicts = _rotations(item_results)
            if verdicts is None:
                incomplete += 1
            else:
                complete.append(verdicts)
        if not complete and not incomplete:
            continue
        n = sum(len(v) for v in complete)
        right = sum(sum(v) for v in complete)
        consistent = sum(1 for v in complete if all(v))
        rows.append(
            ConsistencyRow(
                benchmark, model, mode, len(complete), consistent,
                round(100 * consistent / len(complete), 2) if complete else None,
                n, round(100 * right / n, 2) if n else None, incomplete,
            )
        )  # fmt: skip
    return rows


def _rotations(item_results: list[Result]) -> list[bool] | None:
    """Right/wrong under rotations 0 .. k-1 of one item, or None when some rotation is missing."""
    counts = {c for c in map(options_count, item_results) if c is not None}
    k = max(counts) if counts else None  # one item has one count; max() only so a conflict cannot crash
    # Explicit rotations before `none`, smaller r first: when several results land on one
    # rotation (r and r + k, or `none` and rotate-options-0) the first usable one stands for it.
    ordered = sorted(
        (r for r in item_results if _usable(r)),
        key=lambda r: (rotation_of(r.perturbation) is None, rotation_of(r.perturbation) or 0),
    )
    verdicts: dict[int, bool] = {}
    for result in ordered:
        rotation = rotation_of(result.perturbation)
        rotation = 0 if rotation is None else rotation
        verdicts.setdefault(rotation % k if k else rotation, _right(result))
    if k is None:
        seen = [rotation_of(r.perturbation) for r in item_results]
        k = max((r for r in seen if r is not None), default=0) + 1
        if k < 2:
            return None
    if any(rotation not in verdicts for rotation in range(k)):
        return None
    return [verdicts[rotation] for rotation in range(k)]


# --- position bias ---------------------------------------------------------------------------


def position_label(position: int) -> str:
    return chr(ord("a") + position) if position < 26 else str(position)


@dataclass(frozen=True)
class PositionShare:
    position: int  # 0-based shown place
    label: str  # a, b, c ...
    chosen: int  # replies choosing this place
    right: int  # replies whose right answer was shown here
    chosen_share: float  # chosen / n, a fraction
    right_share: float  # right / n


@dataclass(frozen=True)
class PositionBias:
    benchmark: str
    model: str
    mode: str
    perturbation: str  # ALL_PERTURBATIONS when pooled
    n: int  # answered replies counted
    positions: tuple[PositionShare, ...]
    over_chosen: str  # the label chosen most above its right share (the earliest on a tie)
    excess: float  # that place's chosen share minus its right share, in percentage points

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per place (for a table or CSV)."""
        head = {k: getattr(self, k) for k in ("benchmark", "model", "mode", "perturbation", "n")}
        return [{**head, **asdict(share)} for share in self.positions]


def _place(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def position_bias(results: Iterable[Result], by_perturbation: bool = True) -> list[PositionBias]:
    """Per (benchmark, model, mode, perturbation) -- or pooling perturbations when
    `by_perturbation` is False -- how often each shown place was chosen and was right.

    Counted: answered results whose `parsed` and `target` are both non-negative ints (shown
    places), within `item_ref["options_count"]` when carried. Unparsed and refused replies chose no
    place and are not counted. A counting task's answers are ints too: pass multiple-choice
    results only. The places run to the largest option count (or place) seen in the cell.
    """
    cells: dict[tuple[str, str, str, str], list[tuple[int, int, int | None]]] = defaultdict(list)
    for result in results:
        if result.status is not Status.ANSWERED:
            continue
        chosen, target, count = _place(result.parsed), _place(result.target), options_count(result)
        if chosen is None or target is None or (count is not None and max(chosen, target) >= count):
            continue
        perturbation = result.perturbation if by_perturbation else ALL_PERTURBATIONS
        cells[(result.benchmark, result.model, result.mode, perturbation)].append((chosen, target, count))
    return [_bias(key, replies) for key, replies in sorted(cells.items())]


def _bias(key: tuple[str, str, str, str], replies: list[tuple[int, int, int | None]]) -> PositionBias:
    places = max(max(chosen + 1, target + 1, count or 0) for chosen, target, count in replies)
    n = len(replies)
    chosen_counts, right_counts = [0] * places, [0] * places
    for chosen, target, _ in replies:
        chosen_counts[chosen] += 1
        right_counts[target] += 1
    shares = tuple(
        PositionShare(
            p, position_label(p), chosen_counts[p], right_counts[p], chosen_counts[p] / n, right_counts[p] / n
        )
        for p in range(places)
    )
    top = max(shares, key=lambda s: (s.chosen_share - s.right_share, -s.position))
    return PositionBias(*key, n, shares, top.label, round(100 * (top.chosen_share - top.right_share), 2))


def position_summary(biases: Iterable[PositionBias]) -> list[Mapping[str, Any]]:
    """One flat row per cell: n, the most over-chosen label and its excess (for a compact table)."""
    return [
        {k: getattr(b, k) for k in ("benchmark", "model", "mode", "perturbation", "n", "over_chosen", "excess")}
        for b in biases
    ]

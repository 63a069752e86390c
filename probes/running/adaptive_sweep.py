"""An adaptive sweep of a swept illusion run (`run --until-pse-width W`): per model and condition,
ask the item whose `difference` the design (probes/analysis/adaptive.py) wants next, update its
posterior with the reply, and stop once the PSE's 95% interval is narrower than W.

- One answer per run (issue 34): the design steers, the report decides. The interval that must
  narrow is that of the fit `report --fit difference` makes of the answers so far (the same
  functions, `fits.fit_table`'s: of the probabilities where most answers gave them, else of the
  choices), a PSE by its rules (a slope that differs from zero, an interval within the levels
  asked), not the design's posterior, which counts each graded answer as one trial and is
  far wider for a model whose probabilities are exact. The closing line is `fit_kept.stored_fits`
  (what `report --fit` calls; `fits.fit_table`'s rows, from the store's kept counts) over the
  stored results of the model and condition, read with `report`'s filters (benchmark,
  model, mode, perturbation): it prints what `report --fit difference --model M --mode L
  --perturbation P` prints, "no PSE" included; where the store held only this sweep's answers,
  the interval that stopped the sweep is the one it prints.
- Each reply updates the posterior graded, by the probability it gives the answer a positive
  difference favours (`graded.positive_probability`), where the result has one; else by its
  choice (`psychometric.is_positive`); an unread reply or a failed request updates nothing.
- The candidates are the differences of the run's items (after `--limit`), as the picture is
  sent: a reflection that exchanges the targets (Mueller-Lyer upside down) negates them, as it
  does in the stored results that `report --fit difference` reads. At a difference the items
  are taken in an order fixed by `--seed`, the same for every model (so models meet the same
  items where they can) and for every re-run (so a re-run asks the same items and finds them
  all in the store: it costs nothing).
- A sweep ends for the width, when the items run out, at `--max-requests` (counting answers
  found in the store: the design cannot tell them apart), or when the run is stopped.
- Sequential per model (each request waits for the answer before it), models side by side.
  Each request goes through the runner as a one-item run, so the cache, budgets, probabilities,
  stopping and storing are the runner's own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from models.base import Backend
from probes.analysis.adaptive import Design
from probes.analysis.fits import verdict
from probes.analysis.graded import graded_fit_rows, positive_probability
from probes.analysis.logistic import FitStatus
from probes.analysis.psychometric import FitRow, fit_rows, is_positive, number
from probes.asking import perturb
from probes.core.errors import UsageError
from probes.core.truth import REFLECTIONS
from probes.core.types import Item, Result, Status
from probes.running.cells import Where
from probes.running.control import Progress, Stop
from probes.running.fit_kept import stored_fits
from probes.running.runner import RunPlan, run
from probes.running.store import Store

PARAM = "difference"  # the illusions' swept parameter, whose PSE the sweep pins


@dataclass(frozen=True)
class SweepOutcome:
    """How one model's sweep under one condition ended."""

    model: str
    mode: str
    perturbation: str
    asked: int  # items asked, answers found in the store included
    sent: int  # of those, requests actually sent
    graded: int  # replies that updated the posterior by their probabilities
    chosen: int  # replies that updated it by their choice alone
    pool: int  # items the sweep could have asked
    ended: str  # "width", "items", "max-requests", "stopped"
    fits: tuple[FitRow, ...] = ()  # `report --fit difference` of the stored results of this model and condition

    def describe(self, target: float) -> str:
        why = {
            "width": f"stopped for the width (< {target:g})",
            "items": f"the items ran out before the width reached {target:g}",
            "max-requests": f"reached --max-requests before the width reached {target:g}",
            "stopped": "interrupted",
        }[self.ended]
        used = f"{self.graded} by probabilities, {self.chosen} by choice"
        if self.graded + self.chosen == 0:
            return (f"{self.model} {self.mode} {self.perturbation}: {self.asked} of {self.pool} items asked "
                    f"({self.sent} sent), no answer could be read: no PSE; {why}")  # fmt: skip
        fitted = "; ".join(verdict(row) for row in self.fits) or "no fit"
        return (f"{self.model} {self.mode} {self.perturbation}: {self.asked} of {self.pool} items asked "
                f"({self.sent} sent; {used}), {why}; report --fit {PARAM}: {fitted}")  # fmt: skip


def differences(items: Sequence[Item]) -> list[float]:
    """The items' distinct differences (ascending)."""
    return sorted({x for item in items if (x := number(item.params.get(PARAM))) is not None})


def check_sweep(benchmark_id: str, items: Sequence[Item]) -> None:
    """Refuse, in one line, a run that has no difference to sweep."""
    values = differences(items)
    if not values:
        raise UsageError(
            f"--until-pse-width needs items with a '{PARAM}' to sweep (the illusion/... benchmarks); {benchmark_id} has none"
        )
    if len(values) < 2:
        raise UsageError(
            f"--until-pse-width needs a swept {PARAM}: give --param {PARAM}=V1,V2,... (two values or more); "
            f"these items all have {PARAM}={values[0]:g}"
        )


def sent_sign(plan: RunPlan) -> float:
    """+1, or -1 where the run's perturbation is a reflection that exchanges the targets (the
    picture sent shows the opposite difference): read off one item as the runner sends it."""
    if plan.perturbation not in REFLECTIONS:
        return 1.0
    for item in plan.items:
        x = number(item.params.get(PARAM))
        if x:
            sent = number(perturb.apply(plan.benchmark, item, plan.perturbation).params.get(PARAM))
            return -1.0 if sent is not None and sent * x < 0 else 1.0
    return 1.0


@dataclass(frozen=True)
class Sweeping:
    """What every model's sweep of one run shares: where results go, when a sweep ends (`width`,
    `max_requests`, `stop`), the order of the items (`seed`), and who hears of each result."""

    store: Store
    width: float
    max_requests: int | None
    seed: int
    stop: Stop
    progress: Progress
    on_result: Callable[[Result, Progress], None] | None = None


async def sweep(plan: RunPlan, backend: Backend, how: Sweeping) -> tuple[list[Result], SweepOutcome]:
    """One model's sweep under `plan`'s condition (its items the pool; its models ignored)."""
    sign = await asyncio.to_thread(sent_sign, plan)
    left: dict[float, list[Item]] = {}
    for item in plan.items:
        x = number(item.params.get(PARAM))
        if x is not None:
            left.setdefault(sign * x + 0.0, []).append(item)
    for x, items in left.items():  # the same order for every model and every re-run
        random.Random(f"{how.seed}:{x!r}").shuffle(items)
    pool = sum(len(items) for items in left.values())
    limit = pool if how.max_requests is None else min(pool, how.max_requests)
    design = Design.over(list(left))
    one = dataclasses.replace(plan, models=[backend], concurrency=1)
    results: list[Result] = []
    sent = graded = chosen = 0
    ended = "items"
    backend.hold()  # one client (its connections) for the whole sweep, not one per request
    try:
        while True:
            if how.stop.requested:
                ended = "stopped"
                break
            if graded + chosen and await asyncio.to_thread(narrow_enough, results, graded, chosen, how.width):
                ended = "width"
                break
            if len(results) >= limit:
                ended = "items" if limit == pool else "max-requests"
                break
            available = [value for value, items in left.items() if items]
            if not available:
                break
            x = design.next_difference(available)
            item = left[x].pop()
            got = await run(dataclasses.replace(one, items=[item]), how.store, how.on_result, how.stop, how.progress)
            if not got:  # stopped before it was asked
                continue
            result = got[0]
            results.append(result)
            sent += not result.cached
            answer_x = number((result.item_ref.params if result.item_ref else {}).get(PARAM))
            y = positive_probability(result)
            if result.status is Status.ERROR:
                y = None
            elif y is not None:
                graded += 1
            elif (
                result.status is Status.ANSWERED
                and result.parsed is not None
                and (choice := is_positive(result)) is not None
            ):
                y, chosen = float(choice), chosen + 1
            if y is not None:
                design.update(x if answer_x is None else answer_x, y)
    finally:
        await backend.release()
    fits = await asyncio.to_thread(closing_fits, how.store, results)
    outcome = SweepOutcome(backend.model_id, plan.mode.label, plan.perturbation, len(results), sent, graded, chosen,
                           pool, ended, fits)  # fmt: skip
    return results, outcome


def narrow_enough(results: Sequence[Result], graded: int, chosen: int, width: float) -> bool:
    """Whether the report's fit of the answers so far gives a PSE whose interval is narrower than
    `width`: the fit of what steered the design (the probabilities where most answers gave them),
    by the very function `fits.fit_table` calls for that source."""
    fitted = graded_fit_rows if graded >= chosen else fit_rows
    rows = fitted(results, PARAM)
    return any(row.status == FitStatus.OK and row.pse_high - row.pse_low < width for row in rows)


def closing_fits(store: Store, results: Sequence[Result]) -> tuple[FitRow, ...]:
    """`report --fit difference` of the model and condition the sweep asked, over what the store
    holds of them (the sweep's answers, and any stored before), read as `report` reads them."""
    if not results:
        return ()
    first = results[0]
    where = Where(first.benchmark, [first.model], [first.mode], [first.perturbation])
    return tuple(row for row in stored_fits(store, where, PARAM) if row.group == "overall")


async def sweep_models(plan: RunPlan, how: Sweeping) -> tuple[list[Result], list[SweepOutcome]]:
    """Every model of `plan` swept side by side, each one request at a time."""
    done = await asyncio.gather(*(sweep(plan, backend, how) for backend in plan.models))
    return [r for results, _ in done for r in results], [outcome for _, outcome in done]

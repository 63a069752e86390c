"""Prepare a demo: ask models every Example of the Probe tab under every condition it offers (and
optionally more items of a benchmark), into the store a Space will serve. On the Space, a visitor
who asks the same thing is answered from that store at once, for nothing (the Space reads its
operator's store through; probes/running/store_chain.py).

The requests are the Probe tab's own (the same items, prompts and settings), so their cache keys
are the ones a visitor's click makes. A condition that does not apply to an item (4-shot on an
upload, rotated options on a yes/no question) is skipped and counted. An offline baseline that
cannot answer a request (no picture to read, a question it does not know) is counted apart from
failures: it fails the same way for every visitor, which is no fault of the demo (`Prepared`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from models.base import Backend
from probes.core.benchmark import Benchmark
from probes.core.errors import RunError
from probes.core.selection import select_items
from probes.core.types import Item, Origin, Result, Status
from probes.demo.conditions import CONDITIONS, probe_config
from probes.demo.examples import EXAMPLES, example_item
from probes.running import answerers
from probes.running.runner import RunPlan, preflight


@dataclass
class DemoPlans:
    plans: list[RunPlan] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "item · condition: why"

    @property
    def requests(self) -> int:
        return sum(len(plan.items) * len(plan.models) for plan in self.plans)


def demo_plans(
    models: Sequence[Backend],
    extra: Benchmark | None = None,
    limit: int | None = None,
    seed: int = 0,
    conditions: Sequence[str] | None = None,
) -> DemoPlans:
    """A plan per (item set, condition): every Example, then `limit` items of `extra` (a seeded
    sample, as `run --limit --seed` takes it)."""
    chosen = list(conditions or CONDITIONS)
    sets: list[tuple[str, Benchmark, list[Item]]] = []
    for example in EXAMPLES:
        benchmark, item = example_item(example)
        sets.append((example.title, benchmark, [item]))
    if extra is not None:
        sets.append((extra.id, extra, select_items(extra.items(), limit, seed)))
    prepared = DemoPlans()
    for title, benchmark, items in sets:
        for name in chosen:
            condition = CONDITIONS[name]
            plan = RunPlan(benchmark, items, list(models), condition.mode, condition.perturbation,
                           probe_config(condition), origin=Origin.PROBE)  # fmt: skip
            try:
                preflight(plan)
            except RunError as exc:  # this condition does not apply to these items
                prepared.skipped.append(f"{title} · {name}: {exc}")
                continue
            prepared.plans.append(plan)
    return prepared


@dataclass
class Prepared:
    """What preparing a demo came to: answers asked now, answers already in the store, requests
    an offline baseline cannot answer (they fail the same way every time: not the demo's fault,
    and running again changes nothing), and failures (a server, a key, a deadline: running again
    retries them)."""

    asked: int = 0
    already: int = 0
    cannot: list[Result] = field(default_factory=list)
    failed: list[Result] = field(default_factory=list)

    @classmethod
    def of(cls, results: Sequence[Result]) -> Prepared:
        prepared = cls()
        for result in results:
            if result.status is Status.ERROR:
                (prepared.cannot if answerers.is_deterministic(result.model) else prepared.failed).append(result)
            elif result.cached:
                prepared.already += 1
            else:
                prepared.asked += 1
        return prepared

    def words(self, where: object, skipped: int) -> str:
        said = f"{self.asked + self.already} answers in {where}: {self.asked} asked now, {self.already} already there"
        if self.cannot:
            models = ", ".join(sorted({r.model for r in self.cannot}))
            said += (f"; {len(self.cannot)} that {models} cannot answer (no picture to read, or a question it does "
                     "not know: every visitor's request fails the same way, which is no failure of the demo)")  # fmt: skip
        if self.failed:
            said += f"; {len(self.failed)} failed"
        return f"{said}; {skipped} item-condition pairs do not apply (e.g. 4-shot on an upload)"

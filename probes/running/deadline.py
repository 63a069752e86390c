"""A run with a deadline: past it, the run is stopped as Cancel stops it (nothing new is sent,
replies in flight are abandoned, every reply already received is saved)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from probes.core.errors import LimitExceeded
from probes.core.types import Result
from probes.running.runner import Progress, RunPlan, Stop, run
from probes.running.store import Store


async def run_within(
    plan: RunPlan,
    store: Store,
    seconds: float,
    on_result: Callable[[Result, Progress], None] | None = None,
) -> list[Result]:
    """`run`, stopped after `seconds`; raises LimitExceeded if it was stopped before the end."""
    stop = Stop()
    timer = asyncio.get_running_loop().call_later(seconds, stop.request, 0.0)
    try:
        results = await run(plan, store, on_result, stop)
    finally:
        timer.cancel()
    if stop.requested:
        raise LimitExceeded(f"stopped after {seconds:g} s, this request's time limit ({len(results)} answers kept)")
    return results

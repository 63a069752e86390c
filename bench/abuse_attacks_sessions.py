"""Attacks by many sessions: budgets (fresh sessions, a thousand clicks, spoofed addresses in
X-Forwarded-For) and five evaluations started at once."""

from __future__ import annotations

import time

from bench.abuse_attacks_common import BUDGETS, PAID, VISITOR_KEY, Context, Outcome, ask
from tests.ui.attacker import generate, submit, texts, warning


def fresh_sessions(ctx: Context) -> Outcome:
    """5 fresh sessions, each asking 4 paid models twice on the server's key."""
    before, messages = ctx.requests(), []
    for number in range(5):
        visitor = ctx.visitor()
        generate(visitor, 100 + number)
        for _ in range(2):
            messages.append(warning(ask(ctx, PAID, client=visitor)[:1]))
    sent = ctx.requests() - before
    budgets = ", ".join(f"{k.removeprefix('PROBE_').removesuffix('_BUDGET').lower()} {v}" for k, v in BUDGETS.items())
    refused = [m for m in messages if m]
    return Outcome(refused[0] if refused else "", note=f"{sent} of 40 wanted sent ({budgets})")


def five_evaluations(ctx: Context) -> Outcome:
    """Five visitors start an evaluation at once (300 items of a paid model each, on their own
    keys): how long each waits before its run starts, and how long each takes in all."""
    visitors = [ctx.visitor() for _ in range(5)]
    started = time.perf_counter()
    jobs = [submit(v, "/run_eval", benchmarks=["blind/touching-circles"], models=["openai/gpt-4o-mini"], limit=300,
                   seed=number, openai_key=VISITOR_KEY) for number, v in enumerate(visitors)]  # fmt: skip
    waits: list[float | None] = [None] * 5
    ends: list[float | None] = [None] * 5
    while any(end is None for end in ends) and time.perf_counter() - started < 600:
        for index, job in enumerate(jobs):
            shown = " ".join(texts(job.outputs()))
            if waits[index] is None and "Running" in shown:
                waits[index] = time.perf_counter() - started
            if ends[index] is None and job.done():
                ends[index] = time.perf_counter() - started
                waits[index] = waits[index] if waits[index] is not None else ends[index]
        time.sleep(0.05)
    finished = [" ".join(texts(job.result(timeout=60)[:1])) for job in jobs]
    fine = sum("Finished" in text for text in finished)
    said = ", ".join(f"{w:.1f}" for w in sorted(w for w in waits if w is not None))
    took = ", ".join(f"{e:.1f}" for e in sorted(e for e in ends if e is not None))
    return Outcome("", note=f"waits before running: {said} s; done after: {took} s; {fine} of 5 finished")


def thousand_clicks(ctx: Context) -> Outcome:
    """4 paid models x 1000 clicks of Ask from one session."""
    before = ctx.requests()
    generate(ctx.client, 7)
    messages = [warning(ask(ctx, PAID)[:1]) for _ in range(1000)]
    refused = [m for m in messages if m]
    return Outcome(
        refused[0] if refused else "", note=f"{ctx.requests() - before} requests sent, {len(refused)} refused"
    )


def spoofed_addresses(ctx: Context) -> Outcome:
    """10 fresh sessions from one machine, each naming another address in X-Forwarded-For."""
    before, messages = ctx.requests(), []
    for number in range(10):
        visitor = ctx.visitor(**{"X-Forwarded-For": f"198.51.100.{number + 1}"})
        generate(visitor, 200 + number)
        messages.append(warning(ask(ctx, PAID, client=visitor)[:1]))
    sent = ctx.requests() - before
    refused = [m for m in messages if m]
    return Outcome(refused[0] if refused else "", note=f"{sent} sent from one address (its budget: 12 an hour)")

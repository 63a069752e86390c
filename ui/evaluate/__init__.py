"""Evaluate tab: batch runs of benchmarks x models x modes x perturbations through the real
runner, with a live progress bar and status, Cancel that keeps every finished result, and Resume
that continues from the store's cache."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import gradio as gr
import pandas as pd

from probes.analysis.scoring import aggregate
from probes.core.registry import benchmark_ids
from probes.running.limits import current as limits
from ui.choices import CheckboxGroup, Dropdown
from ui.common import (
    escape,
    key_boxes,
    model_choices,
    paid_by_server,
    session_keys,
    spender,
    user_message,
    with_key_parameters,
)
from ui.evaluate.runs import (
    MODES,
    PERTURBATIONS,
    EvalConfig,
    EvalRun,
    build_plans,
    make_config,
)
from ui.evaluate.slots import FairSlots
from ui.sessions import lease_off_loop, room_for, run_store, visitor

SUMMARY_HEADERS = ["benchmark", "model", "mode", "perturbation", "n", "accuracy %", "95% CI", "unparsed", "refused",
                   "ungraded", "errors", "mean latency s"]  # fmt: skip
SCOREBOARD_HINT = "Open the **Scoreboard** tab for charts, per-group breakdowns and the papers' reference rows."

# Each session's latest run, so Cancel (a separate event) can reach it. One per session: a new
# run replaces the old entry, and a run's own handler removes it once it has shown the end.
ACTIVE: dict[str, EvalRun] = {}
# Evaluations running at once. Locally, API-bound runs overlap and local models serialise
# themselves behind their lock. On a public Space two: four visitors' CPU-bound runs at once
# (baselines, a new design measured pixel by pixel) left one core's worth of time for everyone
# else, whose replies took 5-18x longer; one made the 4th visitor wait 44 s behind the first.
SLOTS = FairSlots(lambda: 2 if limits().public else 4)
WAITING = 32  # evaluations a Space's queue lets into their handlers at once (running or waiting)
WAIT_POLL = 0.5  # seconds between a waiting run's looks at the line


def build_evaluate() -> dict[str, Any]:
    config = gr.State(None)
    with gr.Row():
        with gr.Column(scale=1):
            benchmarks = Dropdown(
                benchmark_ids(),
                value=["blind/touching-circles"],
                multiselect=True,
                allow_custom_value=True,
                label="Benchmarks",
                info="custom:PATH runs your own folder",
                elem_id="eval-benchmarks",
            )
            data = gr.Textbox(label="Data folder", placeholder="only for benchmarks read from a folder: its path",
                              elem_id="eval-data")  # fmt: skip
            params = gr.Textbox(label="Parameters", placeholder="gap=-0.1,0,0.1 canvas=384",
                                info="NAME=VALUE, or NAME=V1,V2,... to sweep a generator parameter",
                                elem_id="eval-params")  # fmt: skip
            with gr.Row():
                limit = gr.Number(20, precision=0, label="Items per benchmark", info="empty or 0: all; else sampled with the seed",
                                  elem_id="eval-limit")  # fmt: skip
                seed = gr.Number(0, precision=0, label="Seed", elem_id="eval-seed")
                concurrency = gr.Number(None, precision=0, label="Concurrency", info="per model; empty or 0: provider's",
                                        elem_id="eval-concurrency")  # fmt: skip
        with gr.Column(scale=1):
            models = Dropdown(
                model_choices(),
                value=["baseline/chance"],
                multiselect=True,
                allow_custom_value=True,
                label="Models",
                info="provider/model; unavailable ones say why",
                elem_id="eval-models",
            )
            modes = CheckboxGroup(list(MODES), value=["0-shot"], label="Modes", elem_id="eval-modes")
            perturbations = CheckboxGroup(list(PERTURBATIONS), value=["none"], label="Perturbations",
                                             elem_id="eval-perturbations")  # fmt: skip
            with gr.Accordion("API keys (used for this session only, never stored)", open=False):
                keys = key_boxes("eval")
    with gr.Row():
        start = gr.Button("Start", variant="primary", elem_id="eval-start")
        cancel = gr.Button("Cancel", variant="stop", elem_id="eval-cancel")
        resume = gr.Button("Resume", elem_id="eval-resume")
    status = gr.Markdown("Choose benchmarks and models, then **Start**.", elem_id="eval-status")
    summary = gr.Dataframe(headers=SUMMARY_HEADERS, label="Summary (overall rows of this run)", interactive=False,
                           elem_id="eval-summary")  # fmt: skip

    form = [benchmarks, data, params, models, modes, perturbations, limit, seed, concurrency]
    outputs = [status, summary, config]
    # Handlers enter freely and wait for a slot of their own (SLOTS): the wait is theirs to show.
    started = start.click(with_key_parameters(run_eval), [*form, *keys], outputs, api_name="run_eval",
                          concurrency_limit=WAITING, concurrency_id="eval-run", show_progress_on=[summary])  # fmt: skip
    resumed = resume.click(with_key_parameters(resume_eval), [config, *keys], outputs, api_name="resume_eval",
                           concurrency_limit=WAITING, concurrency_id="eval-run", show_progress_on=[summary])  # fmt: skip
    # Off the queue: Cancel must not wait behind other sessions' events.
    cancel.click(stop_eval, None, [status, summary], cancels=[started, resumed], api_name="cancel_eval", queue=False)
    return {"start": start, "cancel": cancel, "resume": resume, "config": config}


async def run_eval(
    request: gr.Request,
    progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's way of asking for a progress bar
    benchmarks: list[str] | None = None,
    data: str = "",
    params: str = "",
    models: list[str] | None = None,
    modes: list[str] | None = None,
    perturbations: list[str] | None = None,
    limit: float | None = None,
    seed: float | None = None,
    concurrency: float | None = None,
    *typed_keys: str,
) -> AsyncIterator[tuple]:
    """Start a run with the form's settings; yields (status, summary, configuration) as results
    arrive. `typed_keys` are the visitor's key boxes (`ui.common.key_boxes`)."""
    try:
        config = make_config(benchmarks, data, params, models, modes, perturbations, limit, seed, concurrency)
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        yield f"⚠ {escape(user_message(exc))}", gr.update(), gr.update()
        return
    async for frame in _execute(config, session_keys(*typed_keys), request, progress):
        yield frame


async def resume_eval(
    request: gr.Request,
    progress: gr.Progress = gr.Progress(),  # noqa: B008
    config: EvalConfig | None = None,
    *typed_keys: str,
) -> AsyncIterator[tuple]:
    """The last configuration again: finished items come from the store's cache, not the model."""
    if not config:
        yield (
            "⚠ nothing to resume on this page yet: set up the run and press **Start** (finished items come from the cache)",
            gr.update(),
            gr.update(),
        )
        return
    async for frame in _execute(config, session_keys(*typed_keys), request, progress):
        yield frame


async def stop_eval(request: gr.Request) -> tuple:
    """Cancel: stop sending, wait for the requests in flight to be saved, say what was kept."""
    session = request.session_hash or "anonymous"
    current = ACTIVE.get(session)
    if current is None:
        return "No run in progress.", gr.update()
    current.stop()
    await current.wait()
    ACTIVE.pop(session, None)
    return status_text(current), summary_table(current)


async def _execute(
    config: EvalConfig, keys: dict[str, str], request: gr.Request, progress: gr.Progress
) -> AsyncIterator:
    session = request.session_hash or "anonymous"
    previous = ACTIVE.get(session)
    if previous is not None and not previous.finished.is_set():
        yield "⚠ a run is already going in this session: **Cancel** it or wait for it", gr.update(), gr.update()
        return
    try:
        # Building benchmarks and checking every plan reads files: off the event loop.
        plans = await asyncio.to_thread(build_plans, config, keys)
        await asyncio.to_thread(room_for, request, sum(len(plan.items) * len(plan.models) for plan in plans))
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        yield f"⚠ {escape(user_message(exc))}", gr.update(), gr.update()
        return
    # A slot of our own (ui/evaluate/slots.py): several visitors at once, one run each, a visitor's second
    # run behind everyone's first; the wait is shown as it goes.
    who = visitor(request).session
    ticket = SLOTS.join(who)
    try:
        shown = None
        while (ahead := SLOTS.poll(ticket)) > 0:
            if ahead != shown:
                shown = ahead
                yield (f"**Waiting** for an evaluation slot: {ahead} ahead of yours ({SLOTS.slots} evaluations run "
                       "at once here, one per visitor). It starts by itself.", gr.update(), gr.update())  # fmt: skip
            await asyncio.sleep(WAIT_POLL)
    except BaseException:
        SLOTS.leave(ticket)
        raise
    try:
        lease = await lease_off_loop(request)
    except BaseException as exc:
        SLOTS.release(who)
        if not isinstance(exc, Exception):
            raise
        yield f"⚠ {escape(user_message(exc))}", gr.update(), gr.update()
        return
    # Each request sent on the server's keys is charged as it goes: answers already in this
    # visitor's store, the Space's cache or a prepared demo cost nothing (a Resume included).
    spend = spender(request, keys)
    plans = [replace(plan, spend=spend) for plan in plans]
    paid = {b.model_id for plan in plans for b in plan.models if paid_by_server(b.model_id, keys)}
    current = EvalRun(plans, run_store(lease, paid))
    ACTIVE[session] = current
    current.start(deadline=limits().deadline)
    # The session's store is held until the run has ended, whoever is still watching: a run
    # outlives its page when the visitor leaves (replies in flight are still saved).
    current.finished_callback(lease.release)
    current.finished_callback(lambda: SLOTS.release(who))
    # Forget the run once it ends, whoever is still watching (a visitor who left keeps nothing here).
    current.finished_callback(lambda: ACTIVE.pop(session, None) if ACTIVE.get(session) is current else None)
    progress((0, current.progress.total), desc=current.current_label(), unit="results")
    yield status_text(current), None, config
    try:
        async for _ in current.updates():
            p = current.progress
            progress((p.done, p.total), desc=current.current_label(), unit="results")
            yield status_text(current), gr.update(), gr.update()
    except (asyncio.CancelledError, GeneratorExit):  # Cancel, or the visitor left: save what is in flight, stop
        current.stop()
        raise
    if ACTIVE.get(session) is current:
        ACTIVE.pop(session)
    yield status_text(current), summary_table(current), gr.update()


def status_text(current: EvalRun) -> str:
    p = current.progress
    outcome = current.outcome
    if outcome == "running":
        where = f" ({current.current + 1} of {len(current.plans)} runs)" if len(current.plans) > 1 else ""
        head = f"**Running** {escape(current.current_label())}{where}"
    elif outcome == "done":
        head = f"**Finished**: {p.done} results in {p.elapsed:.1f} s. {SCOREBOARD_HINT}"
    elif outcome == "stopped":
        head = (f"**Stopped**: {p.done} of {p.total} results saved. Press **Resume** to continue; "
                "finished items are not asked again.")  # fmt: skip
    else:
        head = f"⚠ the run stopped: {escape(current.failure or '')}. {p.done} results saved; **Resume** retries."
    counts = [f"{p.done} / {p.total} results", f"errors {p.errors}", f"cached {p.cached}"]
    if current.accuracy is not None:
        counts.append(f"accuracy{' so far' if outcome == 'running' else ''} {current.accuracy:.1f}%")
    if outcome == "running" and p.eta is not None:
        counts.append(f"about {p.eta:.0f} s left")
    models = " · ".join(f"{escape(m)} {done}/{total}" for m, (done, total) in current.per_model.items())
    lines = [head, " · ".join(counts), models]
    if current.first_error:
        lines.append(f"first error: {escape(current.first_error)} (errors are retried by **Resume**)")
    return "  \n".join(lines)


def summary_table(current: EvalRun) -> pd.DataFrame:
    rows = []
    for row in aggregate(current.results):
        interval = "" if row.ci_low is None else f"{row.ci_low:.1f}–{row.ci_high:.1f}"
        rows.append([row.benchmark, row.model, row.mode, row.perturbation, row.n, row.accuracy, interval, row.unparsed,
                     row.refused, row.ungraded, row.errors, row.mean_latency])  # fmt: skip
    return pd.DataFrame(rows, columns=SUMMARY_HEADERS)

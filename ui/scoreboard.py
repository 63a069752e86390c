"""Scoreboard tab: what the store holds, as `python -m probes report` shows it and more.

Filters (benchmark, models, mode, perturbation, a group to break down by) drive one refresh
(api_name "scoreboard") that fills: the table of models x groups with accuracy, Wilson 95%
interval, n, unparsed, refused and error counts, mean latency, and chance / published / human
rows marked in its `source` column; a bar chart with interval whiskers; accuracy by the chosen
group (a curve per model when the group is a swept number); the agreement between modes for one
model (a Venn diagram, as in the IllusionVQA paper); mean latency per model; and CSV / JSON
downloads of the table, identical to `report --format csv/json` for the same filters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gradio as gr

from probes.analysis.scoring import mode_agreement
from ui import scoreboard_charts as charts
from ui.common import escape
from ui.scoreboard_data import (
    ALL,
    OVERALL,
    TABLE_COLUMNS,
    Filters,
    agreement_table,
    benchmarks,
    exports,
    facets,
    latency_table,
    mode_order,
    scoreboard_rows,
    select,
    stored_results,
    table,
)

# Wide enough for model ids and the paper a published row comes from; counts need little.
COLUMN_WIDTHS = ["13%", "13%", "6%", "8%", "9%", "4%", "6%", "8%", "5%", "5%", "5%", "6%", "12%"]
FREE = {"allow_custom_value": True}
EMPTY_STORE = (
    "The results store is empty. Run something first (the Evaluate tab, or `python -m probes run "
    "BENCHMARK --model MODEL`), then press Refresh."
)


def build_scoreboard() -> dict[str, Any]:
    with gr.Row() as top:
        # Choices come from the store after the page is built: API callers may name values the
        # build-time lists did not hold (the handler falls back to what the store has).
        benchmark = gr.Dropdown([], label="Benchmark", elem_id="score-benchmark", scale=2, **FREE)
        models = gr.Dropdown([], multiselect=True, label="Models (none chosen: all)", elem_id="score-models", scale=3,
                             **FREE)  # fmt: skip
        mode = gr.Dropdown([ALL], value=ALL, label="Mode", elem_id="score-mode", scale=1, **FREE)
        perturbation = gr.Dropdown(
            [ALL], value=ALL, label="Perturbation", elem_id="score-perturbation", scale=1, **FREE
        )
        group = gr.Dropdown([OVERALL], value=OVERALL, label="Break down by", elem_id="score-group", scale=1, **FREE)
        refresh = gr.Button("Refresh", elem_id="score-refresh", scale=0, min_width=100)
    status = gr.Markdown(elem_id="score-status")
    table = gr.Dataframe(headers=TABLE_COLUMNS, interactive=False, wrap=True, max_height=460, elem_id="score-table",
                         column_widths=COLUMN_WIDTHS)  # fmt: skip
    with gr.Row():
        csv_file = gr.DownloadButton("Download CSV", size="sm", elem_id="score-csv")
        json_file = gr.DownloadButton("Download JSON", size="sm", elem_id="score-json")
    bars = gr.Plot(label="Accuracy per model", elem_id="score-bars")
    group_note = gr.Markdown(elem_id="score-group-note")
    group_plot = gr.Plot(label="Accuracy by group", elem_id="score-group-plot")
    gr.Markdown("### Agreement between modes\nWhich items each mode gets right, for one model.")
    with gr.Row():
        agree_model = gr.Dropdown([], label="Model", elem_id="score-agree-model", scale=1, **FREE)
        agree_modes = gr.Dropdown([], multiselect=True, label="Modes (two or three)", elem_id="score-agree-modes",
                                  scale=2, **FREE)  # fmt: skip
    with gr.Row():
        agree_table = gr.Dataframe(interactive=False, elem_id="score-agree-table")
        agree_plot = gr.Plot(label="Items right per mode", elem_id="score-agree-plot")
    gr.Markdown("### Mean latency per model")
    latency = gr.Dataframe(interactive=False, elem_id="score-latency")

    filters = [benchmark, models, mode, perturbation, group, agree_model, agree_modes]
    shown = [status, table, csv_file, json_file, bars, group_plot, group_note, agree_table, agree_plot, latency]
    # Filter choices follow the store (and the chosen benchmark); then everything is redrawn.
    refresh.click(reload_filters, filters, filters, api_visibility="private").then(
        scoreboard, filters, shown, api_name="scoreboard"
    )
    tab = _enclosing_tab(top)
    for trigger in [benchmark.input, agree_model.input] + ([tab.select] if tab is not None else []):
        trigger(refresh_filters, filters, filters, api_visibility="private").then(
            scoreboard, filters, shown, api_visibility="private"
        )
    for component in (models, mode, perturbation, group, agree_modes):
        component.input(scoreboard, filters, shown, api_visibility="private", trigger_mode="always_last")
    return {"refresh": refresh, "table": table}


def _enclosing_tab(block: gr.blocks.Block) -> gr.Tab | None:
    """The tab this one is built in (app.py opens it), to refresh when a person switches to it."""
    parent = block.parent
    while parent is not None and not isinstance(parent, gr.Tab):
        parent = parent.parent
    return parent


def reload_filters(request: gr.Request, *filters: Any) -> list[dict]:
    """The Refresh button: read the store again, then the choices."""
    return refresh_filters(*filters, reload=True, request=request)


def refresh_filters(
    benchmark: str | None,
    models: Sequence[str] | None,
    mode: str | None,
    perturbation: str | None,
    group: str | None,
    agree_model: str | None,
    agree_modes: Sequence[str] | None,
    reload: bool = False,
    request: gr.Request | None = None,
) -> list[dict]:
    """Choices from the store; a choice still offered is kept, else the default takes its place."""
    results = stored_results(reload, request)
    names, newest = benchmarks(results)
    chosen = benchmark if benchmark in names else newest
    found = facets(results, chosen)
    by_model: dict[str, set[str]] = {}
    for result in results:
        if result.benchmark == chosen:
            by_model.setdefault(result.model, set()).add(result.mode)
    if agree_model not in by_model:  # the first model asked in several modes is worth comparing
        agree_model = next((m for m in found.models if len(by_model[m]) > 1), found.models[0] if found.models else None)
    agree_choices = sorted(by_model.get(agree_model, ()), key=mode_order)
    kept_modes = [m for m in agree_modes or [] if m in agree_choices]
    return [
        gr.update(choices=names, value=chosen),
        gr.update(choices=found.models, value=[m for m in models or [] if m in found.models]),
        gr.update(choices=[ALL, *found.modes], value=mode if mode in found.modes else ALL),
        gr.update(choices=[ALL, *found.perturbations], value=perturbation if perturbation in found.perturbations else ALL),
        gr.update(choices=[OVERALL, *found.groups], value=group if group in found.groups else OVERALL),
        gr.update(choices=found.models, value=agree_model),
        gr.update(choices=agree_choices, value=kept_modes if len(kept_modes) >= 2 else agree_choices[:3]),
    ]  # fmt: skip


def scoreboard(
    benchmark: str | None,
    models: Sequence[str] | None,
    mode: str | None,
    perturbation: str | None,
    group: str | None,
    agree_model: str | None,
    agree_modes: Sequence[str] | None,
    request: gr.Request,
) -> list[Any]:
    """The table, its downloads, the charts, mode agreement and latency for these filters."""
    results = stored_results(request=request)
    if not results:
        nothing = charts.empty("No results yet.")
        return [EMPTY_STORE, table([]), None, None, nothing, nothing, "", agreement_table(None), nothing,
                latency_table([])]  # fmt: skip
    if benchmark not in benchmarks(results)[0]:
        benchmark = benchmarks(results)[1]
    filters = Filters(benchmark, tuple(models or ()), mode or ALL, perturbation or ALL, group or OVERALL)
    selected = select(results, filters)
    rows = scoreboard_rows(selected, filters)
    csv_path, json_path = exports(rows, benchmark)
    if filters.by:
        group_plot, group_note = charts.group_figure(rows, filters.group)
    else:
        group_plot, group_note = charts.empty("Choose a group under 'Break down by'."), ""
    agree_rows, agree_plot = _agreement(results, filters, agree_model, agree_modes or [])
    measured = sum(1 for r in rows if r.source == "measured")
    status = (
        f"**{len(selected)}** results in **{measured}** measured rows for **{escape(benchmark or '')}**. "
        "Rows marked *chance* and *published* are reference numbers, not runs; *human* marks people."
    )
    return [status, table(rows), csv_path, json_path, charts.accuracy_bars(rows, benchmark or ""),
            group_plot, group_note, agree_rows, agree_plot, latency_table(selected)]  # fmt: skip


def _agreement(results: Sequence, filters: Filters, model: str | None, modes: Sequence[str]) -> tuple[Any, Any]:
    if not model or len(modes) < 2:
        return agreement_table(None), charts.empty("Choose a model and two or three modes it was run in.")
    chosen = Filters(filters.benchmark, (model,), ALL, filters.perturbation)
    agreement = mode_agreement(select(results, chosen, ignore_mode=True), sorted(modes, key=mode_order))
    return agreement_table(agreement), charts.agreement_figure(agreement, f"{model}: items right per mode")

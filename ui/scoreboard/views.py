"""The Scoreboard's views of single results, as handlers: Modes & latency (mode agreement and
latency medians), Curves (psychometric fits, perceive or recall) and Compare (paired comparisons,
consistency and position bias). Each reads only the benchmark and series it shows, and runs only
while its view is open (`*_if_shown`, `modes_opened`; ui/scoreboard/__init__.py wires them); the API
calls `/psychometric` and `/compare` run them directly."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gradio as gr

from ui.common import escape
from ui.scoreboard import charts
from ui.scoreboard.compare import AXES, consistent, has_rotations, paired, pairs, rotation_heads
from ui.scoreboard.curves import FIT_COLUMNS, MAGNITUDE_COLUMNS, curves
from ui.scoreboard.data import ALL, Filters, Tally, facets, origins_for, selected
from ui.scoreboard.items import agreement as agreement_counts
from ui.scoreboard.items import agreement_defaults, latencies
from ui.scoreboard.polarity import COLUMNS as POLARITY_COLUMNS
from ui.scoreboard.polarity import polarity_view
from ui.scoreboard.requests import chosen_benchmark, colours_of, opened, refused_as, wanted_origins, warned
from ui.scoreboard.style import empty, shown_if
from ui.scoreboard.tables import agreement_table, empty_table, latency_table
from ui.sessions import reading

# --- modes & latency -----------------------------------------------------------------------------


def agreement_choices_for(tally: Tally, origins: Iterable[str], benchmark: str | None, agree_model: str | None,
                       agree_modes: Sequence[str] | None, perturbation: str = ALL) -> list[dict]:  # fmt: skip
    """The agreement's model and modes: those given while still offered, else the defaults."""
    model, model_modes, modes = agreement_defaults(tally, benchmark, agree_model, origins, perturbation)
    kept_modes = [m for m in agree_modes or [] if m in model_modes] if model == agree_model else []
    models = facets(tally, benchmark, origins).models
    return [gr.update(choices=models, value=model),
            gr.update(choices=model_modes, value=kept_modes if len(kept_modes) >= 2 else modes)]  # fmt: skip


def agreement(tally: Tally, origins: Iterable[str], filters: Filters, model: str | None,
              modes: Sequence[str]) -> tuple[Any, Any]:  # fmt: skip
    if not model or len(modes) < 2:
        return agreement_table(None), empty("Choose a model and two or three modes it was run in.")
    counted = agreement_counts(tally, filters, origins, model, modes)
    return agreement_table(counted), charts.agreement_figure(counted, f"{model}: items right per mode")


@refused_as(lambda message: (agreement_table(None), empty(message)))
def agreement_view(benchmark: str | None, perturbation: str | None, agree_model: str | None,
                   agree_modes: Sequence[str] | None, origins: Sequence[str] | None = None,
                   request: gr.Request | None = None) -> tuple[Any, Any]:  # fmt: skip
    tally = opened(request, [benchmark, perturbation, agree_model], [agree_modes])
    wanted = wanted_origins(origins)
    filters = Filters(chosen_benchmark(tally, wanted, benchmark), perturbation=perturbation or ALL)
    return agreement(tally, wanted, filters, agree_model, agree_modes or [])


@refused_as(warned(5))
def modes_opened(benchmark: str | None, models: Sequence[str] | None, mode: str | None, perturbation: str | None,
                 agree_model: str | None, agree_modes: Sequence[str] | None, origins: Sequence[str] | None = None,
                 request: gr.Request | None = None) -> list[Any]:  # fmt: skip
    """The Modes & latency view, when it opens: the agreement's model and modes (kept while still
    offered), its diagram, and the latencies under the filters."""
    tally = opened(request, [benchmark, mode, perturbation, agree_model], [models, agree_modes])
    wanted = wanted_origins(origins)
    chosen = chosen_benchmark(tally, wanted, benchmark)
    model_update, modes_update = agreement_choices_for(tally, wanted, chosen, agree_model, agree_modes)
    filters = Filters(chosen, tuple(models or ()), mode or ALL, perturbation or ALL)
    agree_rows, agree_plot = agreement(tally, wanted, filters, model_update["value"], modes_update["value"] or [])
    return [model_update, modes_update, agree_rows, agree_plot, latency_table(latencies(tally, filters, wanted))]


# --- psychometric curves ---------------------------------------------------------------------------


def _no_curves(message: str, note: str | None = None) -> list[Any]:
    """The Curves view with nothing to draw: why (`message` a failure, `note` what to choose)."""
    said = note if note is not None else f"⚠ {escape(message)}"
    return [empty("No curves." if note is None else message), said, empty_table(FIT_COLUMNS),
            empty_table(MAGNITUDE_COLUMNS), "", empty("Perceive or recall: no illusion replies."),
            empty_table(POLARITY_COLUMNS)]  # fmt: skip


@refused_as(_no_curves, every_failure=True)
def psychometric(
    benchmark: str | None,
    param: str | None,
    models: Sequence[str] | None,
    mode: str | None,
    perturbation: str | None,
    include_probes: bool = False,
    request: gr.Request | None = None,
) -> list[Any]:
    """Curves against a swept parameter of the benchmark, fits and (illusions) magnitudes, and
    (illusions) what each choice tracked where the inducers are flipped against the truth."""
    tally = opened(request, [benchmark, param, mode, perturbation], [models])
    origins = frozenset(origins_for(include_probes))
    benchmark = chosen_benchmark(tally, origins, benchmark)
    swept = facets(tally, benchmark, origins).swept
    if not swept:
        return _no_curves("No swept numeric parameter in this benchmark's results.",
                          "Curves need a benchmark whose items sweep a number (illusion/* `difference`, "
                          "blind/touching-circles `gap`, ...).")  # fmt: skip
    param = param if param in swept else swept[0]
    filters = Filters(benchmark, tuple(models or ()), mode or ALL, perturbation or ALL)
    with reading(request) as stores:
        shown = curves(stores, tally, filters, param, origins, colours_of(tally, origins))
        tracked = polarity_view(stores, tally, filters, origins)
    return [shown.figure, shown.note, shown.fits, shown.magnitudes, tracked.note, tracked.figure, tracked.table]


def psychometric_if_shown(
    view: str,
    benchmark: str | None,
    param: str | None,
    models: Sequence[str] | None,
    mode: str | None,
    perturbation: str | None,
    include_probes: bool,
    request: gr.Request,
) -> list[Any]:
    """The curves only when their view is open: they read item references from the store."""
    if view != "curves":
        return [gr.skip()] * 7
    return psychometric(benchmark, param, models, mode, perturbation, include_probes, request)


# --- compare -------------------------------------------------------------------------------------------


def _no_comparison(message: str) -> list[Any]:
    nothing = [shown_if(None, False), shown_if(None, False)]
    return [f"⚠ {escape(message)}", *nothing, "", *nothing]


@refused_as(_no_comparison, every_failure=True)
def compare(
    benchmark: str | None,
    axis: str | None,
    a: str | None,
    b: Sequence[str] | None,
    models: Sequence[str] | None,
    mode: str | None,
    perturbation: str | None,
    include_probes: bool = False,
    request: gr.Request | None = None,
) -> list[Any]:
    """The paired table and chart of A against each B; consistency and position bias beside.
    A table or chart with nothing in it is hidden, its note saying what to choose or run."""
    tally = opened(request, [benchmark, axis, a, mode, perturbation], [b, models])
    origins = frozenset(origins_for(include_probes))
    axis = axis if axis in AXES else "models"
    filters = Filters(
        chosen_benchmark(tally, origins, benchmark), tuple(models or ()), mode or ALL, perturbation or ALL
    )
    colours = colours_of(tally, origins)
    chosen = [v for v in [a, *(b or [])] if v]
    result = paired(pairs(tally, filters, origins, axis, chosen), axis, a, list(b or []), colours)
    if has_rotations(key[3] for key in selected(tally, filters, origins, ignore=("perturbation",))):
        heads = rotation_heads(tally, filters, origins)
        with reading(request) as stores:
            both = consistent(stores, heads, filters.benchmark or "", origins, colours)
        rotation = [both.note, shown_if(both.table), shown_if(both.figure)]
    else:
        rotation = ["No results under option rotations for this benchmark: evaluate it with the "
                    "*rotate-options-all* perturbation (Evaluate tab) to see consistency and position bias.",
                    shown_if(None, False), shown_if(None, False)]  # fmt: skip
    return [result.note, shown_if(result.table), shown_if(result.figure), *rotation]


def compare_if_shown(
    view: str,
    benchmark: str | None,
    axis: str | None,
    a: str | None,
    b: Sequence[str] | None,
    models: Sequence[str] | None,
    mode: str | None,
    perturbation: str | None,
    include_probes: bool,
    request: gr.Request,
) -> list[Any]:
    """The comparison only when its view is open."""
    if view != "compare":
        return [gr.skip()] * 6
    return compare(benchmark, axis, a, b, models, mode, perturbation, include_probes, request)

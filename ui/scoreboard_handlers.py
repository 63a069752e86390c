"""The Scoreboard tab's handlers: the filters' choices (from the store), and what each view shows
for them. ui/scoreboard.py lays the widgets out and wires these to them.

- `scoreboard` (API `/scoreboard`): the leaderboard across benchmarks, the chosen benchmark's
  table, its downloads, accuracy and group charts, mode agreement and latency;
- `psychometric` (API `/psychometric`): curves against a swept parameter, with their fits;
- `compare` (API `/compare`): the paired comparison of A and B, consistency and position bias.

Every handler reads through `ui.sessions.reading` (public mode: the operator's store and
the visitor's own) and checks its inputs against `probes.running.limits` before any work: a
text past the bound or a list of more than MAX_CHOSEN values is refused with the reason."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gradio as gr

from probes.analysis.scoring import mode_agreement
from probes.core.errors import LimitExceeded
from probes.running.limits import current as limits
from ui import scoreboard_charts as charts
from ui.common import escape, user_message
from ui.scoreboard_compare import AXES, consistent, defaults, has_rotations, paired, values
from ui.scoreboard_curves import FIT_COLUMNS, MAGNITUDE_COLUMNS, curves
from ui.scoreboard_data import (
    ALL,
    EVERY_ORIGIN,
    ORIGIN_WORDS,
    OVERALL,
    Filters,
    agreement_defaults,
    benchmarks,
    derived,
    exports,
    facets,
    mode_order,
    origin_counts,
    origins_for,
    scoreboard_rows,
    select,
    stored_results,
    summary,
)
from ui.scoreboard_leaderboard import leaderboard
from ui.scoreboard_polarity import COLUMNS as POLARITY_COLUMNS
from ui.scoreboard_polarity import polarity_view
from ui.scoreboard_style import Colours, empty
from ui.scoreboard_tables import agreement_table, benchmark_table, empty_table, latency_table, pooled_people
from ui.sessions import reading

MAX_CHOSEN = 64  # values one multiple choice may hold (models, B's)
EMPTY_STORE = (
    "The results store is empty. Run something first (the Evaluate tab, or `python -m probes run "
    "BENCHMARK --model MODEL`), then press Refresh."
)
ONLY_PROBES = "Only single probe clicks so far: tick **include single probes** to see them, or run an evaluation."
TABLE_COLUMNS = ["model", "mode", "source", "accuracy", "95% CI", "n", "unparsed", "refused", "ungraded", "errors",
                 "latency (s)"]  # fmt: skip
# Which filter a comparison along an axis leaves out (comparing models: every model).
IGNORED = {"models": "models", "modes": "mode", "perturbations": "perturbation"}


def check(texts: Sequence[str | None] = (), lists: Sequence[Sequence[str] | None] = ()) -> None:
    """Every field of a request within bounds, before any work (public mode: tighter bounds)."""
    bounds = limits()
    for text in texts:
        bounds.text("scoreboard field", text if isinstance(text, str) else None)
    for chosen in lists:
        chosen = list(chosen or [])
        if len(chosen) > MAX_CHOSEN:
            raise LimitExceeded(f"{len(chosen):,} values chosen in one field; at most {MAX_CHOSEN} here")
        for value in chosen:
            bounds.text("scoreboard choice", value if isinstance(value, str) else str(value))


def _origins(value: Sequence[str] | None) -> frozenset[str]:
    return EVERY_ORIGIN if value is None else frozenset(value) & EVERY_ORIGIN


def colours_of(results: list) -> Colours:
    """One colour per model of everything shown, the same in every chart (kept with the results)."""
    return derived(results, "colours", lambda rs: Colours(summary(rs).by(1)))


def _benchmark(results: Sequence, benchmark: str | None) -> str | None:
    names, default = benchmarks(results)
    return benchmark if benchmark in names else default


# --- the filters' choices ----------------------------------------------------------------------


def sync(
    include_probes: bool,
    benchmark: str | None,
    models: Sequence[str] | None,
    mode: str | None,
    perturbation: str | None,
    group: str | None,
    agree_model: str | None,
    agree_modes: Sequence[str] | None,
    param: str | None,
    axis: str | None,
    a: str | None,
    b: Sequence[str] | None,
    reload: bool = False,
    request: gr.Request | None = None,
) -> list[Any]:
    """Choices from the store; a choice still offered is kept, else the default takes its place.
    Also the origins the views count (the 'include single probes' box)."""
    try:
        check([benchmark, mode, perturbation, group, agree_model, param, axis, a], [models, agree_modes, b])
        origins = origins_for(include_probes)
        results = stored_results(reload, request, origins)
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        gr.Warning(user_message(exc))
        return [gr.skip()] * 12
    names, _ = benchmarks(results)
    chosen = _benchmark(results, benchmark)
    found = facets(results, chosen)
    model, model_modes, modes = agreement_defaults(results, chosen, agree_model)
    kept_modes = [m for m in agree_modes or [] if m in model_modes] if model == agree_model else []
    axis = axis if axis in AXES else "models"
    compare_a, compare_b = _compare_choices(results, chosen, axis, a, b, models, mode, perturbation)
    return [
        list(origins),
        gr.update(choices=names, value=chosen),
        gr.update(choices=found.models, value=[m for m in models or [] if m in found.models]),
        gr.update(choices=[ALL, *found.modes], value=mode if mode in found.modes else ALL),
        gr.update(choices=[ALL, *found.perturbations], value=perturbation if perturbation in found.perturbations else ALL),
        gr.update(choices=[OVERALL, *found.groups], value=group if group in found.groups else OVERALL),
        gr.update(choices=found.models, value=model),
        gr.update(choices=model_modes, value=kept_modes if len(kept_modes) >= 2 else modes),
        gr.update(choices=found.swept, value=param if param in found.swept else (found.swept or [None])[0]),
        axis,
        compare_a,
        compare_b,
    ]  # fmt: skip


def reload_sync(
    include_probes: bool,
    benchmark: str | None,
    models: Sequence[str] | None,
    mode: str | None,
    perturbation: str | None,
    group: str | None,
    agree_model: str | None,
    agree_modes: Sequence[str] | None,
    param: str | None,
    axis: str | None,
    a: str | None,
    b: Sequence[str] | None,
    request: gr.Request,
) -> list[Any]:
    """The Refresh button: read the store again, then the choices."""
    fields = (include_probes, benchmark, models, mode, perturbation, group, agree_model, agree_modes, param, axis, a, b)
    return sync(*fields, reload=True, request=request)


def _compare_choices(results: Sequence, benchmark: str | None, axis: str, a: str | None, b: Sequence[str] | None,
                     models: Sequence[str] | None, mode: str | None, perturbation: str | None) -> tuple[dict, dict]:  # fmt: skip
    filters = Filters(benchmark, tuple(models or ()), mode or ALL, perturbation or ALL)
    selected = select(results, filters, ignore=(IGNORED[axis],))
    choices = values(selected, axis)
    kept_a, default_b = defaults(selected, axis, a if a in choices else None)
    kept_b = [v for v in b or [] if v in choices and v != kept_a]
    return gr.update(choices=choices, value=kept_a), gr.update(choices=choices, value=kept_b or default_b)


def compare_choices(benchmark: str | None, axis: str | None, a: str | None, b: Sequence[str] | None,
                    models: Sequence[str] | None, mode: str | None, perturbation: str | None,
                    include_probes: bool, request: gr.Request | None = None) -> tuple[dict, dict]:  # fmt: skip
    """A's and B's choices for the axis picked (models, modes or perturbations)."""
    try:
        check([benchmark, axis, a, mode, perturbation], [b, models])
        results = stored_results(request=request, origins=origins_for(include_probes))
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        gr.Warning(user_message(exc))
        return gr.skip(), gr.skip()
    axis = axis if axis in AXES else "models"
    return _compare_choices(results, _benchmark(results, benchmark), axis, a, b, models, mode, perturbation)


def agreement_choices(benchmark: str | None, perturbation: str | None, agree_model: str | None,
                      origins: Sequence[str] | None = None, request: gr.Request | None = None) -> dict:  # fmt: skip
    """The modes a newly chosen model was asked in, those sharing the most items chosen."""
    try:
        check([benchmark, perturbation, agree_model])
        results = stored_results(request=request, origins=_origins(origins))
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        gr.Warning(user_message(exc))
        return gr.skip()
    _, model_modes, modes = agreement_defaults(
        results, _benchmark(results, benchmark), agree_model, perturbation or ALL
    )
    return gr.update(choices=model_modes, value=modes)


# --- the leaderboard and one benchmark -------------------------------------------------------------


def benchmark_clicked(table: Any, event: gr.SelectData) -> Any:
    """A click in a leaderboard's benchmark column opens that benchmark below."""
    columns = list(getattr(table, "columns", []))
    index = event.index[1] if isinstance(event.index, list | tuple) else None
    name = columns[index] if index is not None and 0 <= index < len(columns) else None
    if not isinstance(name, str) or name in ("model", "mode", "mean", "of", "source"):
        return gr.skip()
    check([name])
    return gr.update(value=name)


def scoreboard(
    benchmark: str | None,
    models: Sequence[str] | None,
    mode: str | None,
    perturbation: str | None,
    group: str | None,
    agree_model: str | None,
    agree_modes: Sequence[str] | None,
    origins: Sequence[str] | None = None,
    request: gr.Request | None = None,
) -> list[Any]:
    """The leaderboard, and for the chosen benchmark: its table, downloads, charts, mode
    agreement and latency. `origins` None (an API call): every origin counts."""
    try:
        check([benchmark, mode, perturbation, group, agree_model], [models, agree_modes, origins])
        wanted = _origins(origins)
        results = stored_results(request=request, origins=wanted)
        everything = stored_results(request=request) if wanted != EVERY_ORIGIN else results
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return _nothing(f"⚠ {escape(user_message(exc))}")
    origins_note = _origins_note(results, everything, wanted)
    if not results:
        return _nothing(ONLY_PROBES if everything else EMPTY_STORE, origins_note)
    benchmark = _benchmark(results, benchmark)
    filters = Filters(benchmark, tuple(models or ()), mode or ALL, perturbation or ALL, group or OVERALL)
    selected = select(results, filters)
    rows = scoreboard_rows(selected, filters)
    csv_path, json_path = exports(rows, benchmark)
    in_benchmark = {key[1] for key in summary(results).cells if key[0] == benchmark}
    shown_rows = rows + pooled_people(selected, filters.by, in_benchmark)
    colours = colours_of(results)
    table = benchmark_table(shown_rows, filters.group if filters.by else None)
    if filters.by:
        group_plot, group_note = charts.group_figure(shown_rows, filters.group, colours, filters.mode != ALL)
    else:
        group_plot, group_note = empty("Choose a group under 'Break down by' for accuracy by its values.", 120), ""
    agree_rows, agree_plot = agreement(results, filters, agree_model, agree_modes or [])
    board = leaderboard(results)
    measured = sum(1 for r in rows if r.source == "measured")
    status = (
        f"**{len(selected)}** results in **{measured}** measured rows for **{escape(benchmark or '')}**. Tinted rows "
        "are references: *chance*, the papers' *published* numbers, and people."
    )
    return [status, table.table, csv_path, json_path, charts.accuracy_bars(shown_rows, benchmark or "", colours),
            group_plot, group_note, agree_rows, agree_plot, latency_table(selected), table.notes, table.phone,
            board.table, board.note, origins_note]  # fmt: skip


def _nothing(message: str, origins_note: str = "") -> list[Any]:
    nothing = empty("No results yet.")
    return [message, empty_table(TABLE_COLUMNS), None, None, nothing, nothing, "", agreement_table(None), nothing,
            latency_table([]), "", "", empty_table(["model", "mode", "source"]), "", origins_note]  # fmt: skip


def _origins_note(results: Sequence, everything: Sequence, wanted: frozenset[str]) -> str:
    shown = origin_counts(results)
    parts = [f"{ORIGIN_WORDS.get(o, o)} {shown[o]:,}" for o in sorted(shown, key=lambda o: -shown[o])]
    text = f"Showing **{len(results):,}** results" + (f": {' · '.join(parts)}." if parts else ".")
    left = len(everything) - len(results)
    if left and "probe" not in wanted:
        text += f" **{left:,}** single probe clicks are left out: tick *include single probes* to count them."
    return text


def agreement(results: Sequence, filters: Filters, model: str | None, modes: Sequence[str]) -> tuple[Any, Any]:
    if not model or len(modes) < 2:
        return agreement_table(None), empty("Choose a model and two or three modes it was run in.")
    chosen = Filters(filters.benchmark, (model,), ALL, filters.perturbation)
    counted = mode_agreement(select(results, chosen), sorted(modes, key=mode_order))
    return agreement_table(counted), charts.agreement_figure(counted, f"{model}: items right per mode")


def agreement_view(benchmark: str | None, perturbation: str | None, agree_model: str | None,
                   agree_modes: Sequence[str] | None, origins: Sequence[str] | None = None,
                   request: gr.Request | None = None) -> tuple[Any, Any]:  # fmt: skip
    try:
        check([benchmark, perturbation, agree_model], [agree_modes])
        results = stored_results(request=request, origins=_origins(origins))
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return agreement_table(None), empty(user_message(exc))
    filters = Filters(_benchmark(results, benchmark), perturbation=perturbation or ALL)
    return agreement(results, filters, agree_model, agree_modes or [])


# --- psychometric curves ---------------------------------------------------------------------------


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
    empty_tables = [empty_table(FIT_COLUMNS), empty_table(MAGNITUDE_COLUMNS)]
    no_polarity = ["", empty("Perceive or recall: no illusion replies."), empty_table(POLARITY_COLUMNS)]
    try:
        check([benchmark, param, mode, perturbation], [models])
        origins = frozenset(origins_for(include_probes))
        results = stored_results(request=request, origins=origins)
        benchmark = _benchmark(results, benchmark)
        swept = facets(results, benchmark).swept
        if not swept:
            return [empty("No swept numeric parameter in this benchmark's results."),
                    "Curves need a benchmark whose items sweep a number (illusion/* `difference`, "
                    "blind/touching-circles `gap`, ...).", *empty_tables, *no_polarity]  # fmt: skip
        param = param if param in swept else swept[0]
        filters = Filters(benchmark, tuple(models or ()), mode or ALL, perturbation or ALL)
        with reading(request) as stores:
            shown = curves(stores, results, filters, param, origins, colours_of(results))
            tracked = polarity_view(stores, results, filters, origins)
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return [empty("No curves."), f"⚠ {escape(user_message(exc))}", *empty_tables, *no_polarity]
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
    """The paired table and chart of A against each B; consistency and position bias beside."""
    nothing = [empty_table([]), empty("Nothing to compare.")]
    try:
        check([benchmark, axis, a, mode, perturbation], [b, models])
        origins = frozenset(origins_for(include_probes))
        results = stored_results(request=request, origins=origins)
        axis = axis if axis in AXES else "models"
        filters = Filters(_benchmark(results, benchmark), tuple(models or ()), mode or ALL, perturbation or ALL)
        colours = colours_of(results)
        result = paired(select(results, filters, ignore=(IGNORED[axis],)), axis, a, list(b or []), colours)
        rotated = select(results, filters, ignore=("perturbation",))
        if has_rotations(rotated):
            with reading(request) as stores:
                both = consistent(stores, rotated, filters.benchmark or "", origins, colours)
            rotation = [both.note, both.table, both.figure]
        else:
            rotation = ["No results under option rotations for this benchmark: run it with `--perturb "
                        "rotate-options-all` (or the Evaluate tab's rotations) to see consistency and position bias.",
                        *nothing]  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return [f"⚠ {escape(user_message(exc))}", *nothing, "", *nothing]
    return [result.note, result.table, result.figure, *rotation]


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

"""The Scoreboard tab's handlers: the filters' choices (from the store), the leaderboard and the
chosen benchmark's table. ui/scoreboard/__init__.py lays the widgets out and wires these to them; the
views of single results (Modes & latency, Curves, Compare) are in ui/scoreboard/views.py.

- `scoreboard` (API `/scoreboard`): the leaderboard across benchmarks, the chosen benchmark's
  table (with its calibration columns), its downloads, accuracy and group charts, the reliability
  diagram, and (while the Modes & latency view is open, or for an API call) mode agreement and
  latency;
- `sync`: every filter's choices, kept where still offered.

The leaderboard and the table are read off the counts the stores keep (ui/scoreboard/data.py),
never off single results: a store of a million results builds them in a fraction of a second.
Every handler reads through `ui.sessions.reading` (public mode: the operator's store and
the visitor's own) and checks its inputs against `probes.running.limits` before any work: a
text past the bound or a list of more than MAX_CHOSEN values is refused with the reason."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gradio as gr

from ui.common import escape
from ui.scoreboard import charts
from ui.scoreboard.calibration import EXPLAINED, calibration_sums, reliability, row_calibrations
from ui.scoreboard.compare import (
    AXES,
    defaults,
    values,
)
from ui.scoreboard.data import (
    ALL,
    ORIGIN_WORDS,
    OVERALL,
    Filters,
    Tally,
    benchmarks,
    counted_by,
    exports,
    facets,
    opened_next,
    origins_for,
    pooled_people,
    scoreboard_rows,
    selected_count,
)
from ui.scoreboard.items import agreement_defaults, latencies
from ui.scoreboard.leaderboard import leaderboard
from ui.scoreboard.requests import check, chosen_benchmark, colours_of, opened, refused_as, wanted_origins, warned
from ui.scoreboard.style import empty, shown_if
from ui.scoreboard.tables import CALIBRATION_COLUMNS, agreement_table, benchmark_table, empty_table, latency_table
from ui.scoreboard.views import agreement, agreement_choices_for

MAX_CHOSEN = 64  # values one multiple choice may hold (models, B's)
EMPTY_STORE = (
    "The results store is empty. Run something first (the Evaluate tab, or the command line's "
    "`python -m probes run`), then press Refresh."
)
ONLY_PROBES = "Only single probe clicks so far: tick **include single probes** to see them, or run an evaluation."
GROUP_HINT = "Choose a group under **Break down by** to see accuracy by its values."
TABLE_COLUMNS = ["model", "mode", "source", "accuracy", "95% CI", "n", *CALIBRATION_COLUMNS, "unparsed", "refused",
                 "ungraded", "errors", "latency (s)"]  # fmt: skip
# The views of single results computed only while open (`view`; None: an API call, which gets
# everything as it always has): the table and leaderboard read counts alone.
MODES_VIEW = "modes"


def _shown(view: str | None, name: str) -> bool:
    return view is None or view == name


# --- the filters' choices ----------------------------------------------------------------------


@refused_as(warned(13))
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
    view: str | None = None,
    reload: bool = False,
    request: gr.Request | None = None,
) -> list[Any]:
    """Choices from the store; a choice still offered is kept, else the default takes its place.
    Also the origins the views count (the 'include single probes' box), and the view open (the
    Table until another is chosen). The choices of the Modes and Compare views need single
    results: made here only while that view is open, else when it opens."""
    texts = [benchmark, mode, perturbation, group, agree_model, param, axis, a, view]
    tally = opened(request, texts, [models, agree_modes, b], reload)
    origins = origins_for(include_probes)
    view = view or "table"
    benchmark = opened_next(request) or benchmark  # the Human tab's "See everyone on the Scoreboard"
    names, _ = benchmarks(tally, origins)
    chosen = chosen_benchmark(tally, origins, benchmark)
    found = facets(tally, chosen, origins)
    agree = [gr.skip(), gr.skip()]
    if view == MODES_VIEW:
        agree = agreement_choices_for(tally, origins, chosen, agree_model, agree_modes)
    axis = axis if axis in AXES else "models"
    compared = [gr.skip(), gr.skip()]
    if view == "compare":
        compared = list(_compare_choices(tally, origins, chosen, axis, a, b, models, mode, perturbation))
    return [
        list(origins),
        gr.update(choices=names, value=chosen),
        gr.update(choices=found.models, value=[m for m in models or [] if m in found.models]),
        gr.update(choices=[ALL, *found.modes], value=mode if mode in found.modes else ALL),
        gr.update(choices=[ALL, *found.perturbations], value=perturbation if perturbation in found.perturbations else ALL),
        gr.update(choices=[OVERALL, *found.groups], value=group if group in found.groups else OVERALL),
        *agree,
        gr.update(choices=found.swept, value=param if param in found.swept else (found.swept or [None])[0]),
        axis,
        *compared,
        view,
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
    view: str | None,
    request: gr.Request,
) -> list[Any]:
    """The Refresh button: read the store again, then the choices."""
    fields = (include_probes, benchmark, models, mode, perturbation, group, agree_model, agree_modes, param, axis, a, b,
              view)  # fmt: skip
    return sync(*fields, reload=True, request=request)


def _compare_choices(tally: Tally, origins: Iterable[str], benchmark: str | None, axis: str, a: str | None,
                     b: Sequence[str] | None, models: Sequence[str] | None, mode: str | None,
                     perturbation: str | None) -> tuple[dict, dict]:  # fmt: skip
    filters = Filters(benchmark, tuple(models or ()), mode or ALL, perturbation or ALL)
    choices = values(tally, filters, origins, axis)
    kept_a, default_b = defaults(tally, filters, origins, axis, a if a in choices else None)
    kept_b = [v for v in b or [] if v in choices and v != kept_a]
    return gr.update(choices=choices, value=kept_a), gr.update(choices=choices, value=kept_b or default_b)


@refused_as(warned(2))
def compare_choices(benchmark: str | None, axis: str | None, a: str | None, b: Sequence[str] | None,
                    models: Sequence[str] | None, mode: str | None, perturbation: str | None,
                    include_probes: bool, request: gr.Request | None = None) -> tuple[dict, dict]:  # fmt: skip
    """A's and B's choices for the axis picked (models, modes or perturbations)."""
    tally = opened(request, [benchmark, axis, a, mode, perturbation], [b, models])
    origins = origins_for(include_probes)
    axis = axis if axis in AXES else "models"
    chosen = chosen_benchmark(tally, origins, benchmark)
    return _compare_choices(tally, origins, chosen, axis, a, b, models, mode, perturbation)


@refused_as(warned(1))
def agreement_choices(benchmark: str | None, perturbation: str | None, agree_model: str | None,
                      origins: Sequence[str] | None = None, request: gr.Request | None = None) -> dict:  # fmt: skip
    """The modes a newly chosen model was asked in, those sharing the most items chosen."""
    tally = opened(request, [benchmark, perturbation, agree_model])
    wanted = wanted_origins(origins)
    chosen = chosen_benchmark(tally, wanted, benchmark)
    _, model_modes, modes = agreement_defaults(tally, chosen, agree_model, wanted, perturbation or ALL)
    return gr.update(choices=model_modes, value=modes)


# --- the leaderboard and one benchmark -------------------------------------------------------------


def benchmark_clicked(table: Any, event: gr.SelectData) -> Any:
    """A click in a leaderboard's benchmark column opens that benchmark below."""
    columns = list(getattr(table, "columns", []))
    index = event.index[1] if isinstance(event.index, list | tuple) else None
    name = columns[index] if index is not None and 0 <= index < len(columns) else None
    if not isinstance(name, str) or name in ("model", "mode", "source", "rank", "mean", "of"):
        return gr.skip()
    check([name])
    return gr.update(value=name)


@refused_as(lambda message: _nothing(f"⚠ {escape(message)}"))
def scoreboard(
    benchmark: str | None,
    models: Sequence[str] | None,
    mode: str | None,
    perturbation: str | None,
    group: str | None,
    agree_model: str | None,
    agree_modes: Sequence[str] | None,
    origins: Sequence[str] | None = None,
    view: str | None = None,
    request: gr.Request | None = None,
) -> list[Any]:
    """The leaderboard, and for the chosen benchmark: its table, downloads, charts, mode
    agreement and latency, and how sure the models were (calibration per row, a reliability
    diagram; from kept sums, ui/scoreboard/calibration.py). `origins` None (an API call): every
    origin counts. Mode agreement and latency read single results: only while their view is
    open (`view`; None, an API call: always)."""
    tally = opened(request, [benchmark, mode, perturbation, group, agree_model, view], [models, agree_modes, origins])
    wanted = wanted_origins(origins)
    shown = tally.count(wanted)
    origins_note = _origins_note(tally, wanted)
    if not shown:
        return _nothing(ONLY_PROBES if tally.count() else EMPTY_STORE, origins_note)
    benchmark = chosen_benchmark(tally, wanted, benchmark)
    filters = Filters(benchmark, tuple(models or ()), mode or ALL, perturbation or ALL, group or OVERALL)
    rows = scoreboard_rows(tally, filters, wanted)
    sums = calibration_sums(tally, filters, wanted)
    calibrations = row_calibrations(sums)
    csv_path, json_path = exports(rows, benchmark, calibrations)
    shown_rows = rows + pooled_people(tally, filters, wanted)
    colours = colours_of(tally, wanted)
    table = benchmark_table(shown_rows, filters.group if filters.by else None, calibrations)
    sure = reliability(sums, benchmark or "", colours)
    if filters.by:
        figure, group_note = charts.group_figure(shown_rows, filters.group, colours, filters.mode != ALL)
        group_plot = shown_if(figure)
    else:  # a hint, not an empty chart
        group_plot, group_note = shown_if(None, False), GROUP_HINT
    if _shown(view, MODES_VIEW):
        agree_rows, agree_plot = agreement(tally, wanted, filters, agree_model, agree_modes or [])
        latency = latency_table(latencies(tally, filters, wanted))
    else:
        agree_rows = agree_plot = latency = gr.skip()
    board = leaderboard(tally, wanted)
    measured = sum(1 for r in rows if r.source == "measured")
    status = (
        f"**{selected_count(tally, filters, wanted)}** results in **{measured}** measured rows for "
        f"**{escape(benchmark or '')}**. Tinted rows are references: *chance*, the papers' *published* numbers, and "
        "people."
    )
    notes = "  \n".join(part for part in (table.notes, EXPLAINED if calibrations else "") if part)
    return [status, table.table, csv_path, json_path, charts.accuracy_bars(shown_rows, benchmark or "", colours),
            group_plot, group_note, agree_rows, agree_plot, latency, notes, table.phone,
            board.table, board.note, origins_note, sure.note, shown_if(sure.figure, sure.present)]  # fmt: skip


def _nothing(message: str, origins_note: str = "") -> list[Any]:
    nothing = empty("No results yet.")
    return [message, empty_table(TABLE_COLUMNS), None, None, nothing, shown_if(None, False), "", agreement_table(None), nothing,
            latency_table({}), "", "", empty_table(["model", "mode", "source"]), "", origins_note, "",
            shown_if(None, False)]  # fmt: skip


def _origins_note(tally: Tally, wanted: frozenset[str]) -> str:
    counts = counted_by(tally, wanted, 4)
    shown = {o: counts[o] for o in counts if counts[o]}
    parts = [f"{ORIGIN_WORDS.get(o, o)} {shown[o]:,}" for o in sorted(shown, key=lambda o: -shown[o])]
    total = sum(shown.values())
    text = f"Showing **{total:,}** results" + (f": {' · '.join(parts)}." if parts else ".")
    left = tally.count() - total
    if left and "probe" not in wanted:
        text += f" **{left:,}** single probe clicks are left out: tick *include single probes* to count them."
    return text

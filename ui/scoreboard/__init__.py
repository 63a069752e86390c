"""Scoreboard tab: what the store holds, as `python -m probes report` shows it and more.

First the leaderboard across benchmarks (a row per model and mode, a column per benchmark, the
reference rows pinned above). Then one benchmark, chosen with the filters (models, mode,
perturbation, a group to break down by), in four views:
- Table: accuracy with its Wilson 95% interval, n, unparsed, refused, errors and latency per
  model and mode, and how sure the models were where answers carry probabilities (mean
  p(right), Brier, ECE, n with p; a dash elsewhere), chance / published / people rows pinned and
  tinted; CSV and JSON downloads identical to `report --format csv/json`; accuracy bars; accuracy
  by the chosen group (a curve per model and mode against a swept number); a reliability diagram
  per model. A phone gets the rows as a stacked list.
- Curves: psychometric curves against a swept parameter, people pooled beside the models; on the
  illusions, perceive or recall: whether choices track the drawn difference or the inducers
  flipped against it.
- Compare: a paired comparison of two models, modes or perturbations; consistency and position
  bias when results under option rotations exist.
- Modes & latency: which items each mode gets right (the IllusionVQA paper's Venn diagram), and
  mean latency per model.

Single probe clicks (the Probe tab) are left out until "include single probes" is ticked. The
handlers are in ui/scoreboard/handlers.py (choices, leaderboard, table) and ui/scoreboard/views.py
(the views of single results, computed only while open); `scoreboard` stays importable from here
(API `/scoreboard`, the benchmark harness).
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from ui.choices import Dropdown, Radio
from ui.scoreboard.data import ALL, OVERALL
from ui.scoreboard.delete import build_delete, delete_asked, delete_choices, delete_confirmed
from ui.scoreboard.handlers import (
    TABLE_COLUMNS,
    agreement_choices,
    benchmark_clicked,
    compare_choices,
    reload_sync,
    scoreboard,
    sync,
)
from ui.scoreboard.views import (
    agreement_view,
    compare,
    compare_if_shown,
    modes_opened,
    psychometric,
    psychometric_if_shown,
)

__all__ = ["build_scoreboard", "scoreboard"]
FREE = {"allow_custom_value": True}
PRIVATE = {"api_visibility": "private"}


def build_scoreboard() -> dict[str, Any]:
    # Choices come from the store after the page is built: API callers may name values the
    # build-time lists did not hold (the handlers fall back to what the store has).
    with gr.Row(elem_id="score-top") as top:
        gr.Markdown("### Leaderboard across benchmarks", elem_id="score-heading")
        include_probes = gr.Checkbox(False, label="include single probes", elem_id="score-probes", scale=0,
                                     min_width=200, container=False)  # fmt: skip
        refresh = gr.Button("Refresh", elem_id="score-refresh", scale=0, min_width=100, size="sm")
    origins_note = gr.Markdown(elem_id="score-origins")
    # None: every origin, what /scoreboard counts when called directly; the page sets it from the box.
    origins = gr.State(None)
    # The benchmark view open: curves, comparisons, mode agreement and latencies are computed only
    # there. None until the tab is first shown (sync makes it "table"), so a direct `/scoreboard`
    # API call, which never opens a view, gets everything its outputs hold.
    view = gr.State(None)
    # wrap: a long source ("published (Rahmanzadehgervi et al.) [1]") wraps rather than being cut.
    board = gr.Dataframe(interactive=False, elem_id="score-leaderboard", max_height=420, pinned_columns=1,
                         show_label=False, wrap=True)  # fmt: skip
    board_note = gr.Markdown(elem_id="score-leaderboard-note")  # a click in a benchmark's column opens it below

    gr.Markdown("### One benchmark", elem_id="score-benchmark-heading")
    with gr.Row(elem_id="score-filters"):
        benchmark = Dropdown([], label="Benchmark", elem_id="score-benchmark", scale=2, min_width=220, **FREE)
        models = Dropdown([], multiselect=True, label="Models (none chosen: all)", elem_id="score-models", scale=3,
                             min_width=220, **FREE)  # fmt: skip
        mode = Dropdown([ALL], value=ALL, label="Mode", elem_id="score-mode", scale=1, min_width=120, **FREE)
        perturbation = Dropdown([ALL], value=ALL, label="Perturbation", elem_id="score-perturbation", scale=1,
                                   min_width=120, **FREE)  # fmt: skip
        group = Dropdown([OVERALL], value=OVERALL, label="Break down by", elem_id="score-group", scale=1,
                            min_width=120, **FREE)  # fmt: skip
    status = gr.Markdown(elem_id="score-status")
    with gr.Tabs(overflow_behavior="wrap", elem_id="score-views"):  # every view one tap away on a phone
        with gr.Tab("Table", id="score-view-table") as table_view:
            table = gr.Dataframe(headers=TABLE_COLUMNS, interactive=False, max_height=460, elem_id="score-table",
                                 show_label=False)  # fmt: skip
            phone = gr.HTML(elem_id="score-phone")
            notes = gr.Markdown(elem_id="score-notes")
            with gr.Row():
                csv_file = gr.DownloadButton("Download CSV", size="sm", elem_id="score-csv")
                json_file = gr.DownloadButton("Download JSON", size="sm", elem_id="score-json")
            bars = gr.Plot(show_label=False, elem_id="score-bars")
            group_note = gr.Markdown(elem_id="score-group-note")
            group_plot = gr.Plot(show_label=False, elem_id="score-group-plot")
            calibration_note = gr.Markdown(elem_id="score-calibration-note")
            reliability_plot = gr.Plot(show_label=False, elem_id="score-reliability")
        with gr.Tab("Curves", id="score-view-curves") as curves_view:
            param = Dropdown([], label="Swept parameter", elem_id="score-param", **FREE)
            curves_note = gr.Markdown(elem_id="score-curves-note")
            curves_plot = gr.Plot(show_label=False, elem_id="score-curves")
            fits = gr.Dataframe(interactive=False, elem_id="score-fits", label="Fits", max_height=360)
            magnitudes = gr.Dataframe(interactive=False, elem_id="score-magnitudes", label="Illusion magnitude",
                                      max_height=300)  # fmt: skip
            polarity_note = gr.Markdown(elem_id="score-polarity-note")
            polarity_plot = gr.Plot(show_label=False, elem_id="score-polarity")
            polarity_table = gr.Dataframe(interactive=False, elem_id="score-polarity-table", label="Perceive or recall",
                                          max_height=300)  # fmt: skip
        with gr.Tab("Compare", id="score-view-compare") as compare_view:
            with gr.Row():
                axis = Radio(["models", "modes", "perturbations"], value="models", label="Compare",
                                elem_id="score-axis", scale=1, min_width=200)  # fmt: skip
                a = Dropdown([], label="A", elem_id="score-a", scale=2, min_width=200, **FREE)
                b = Dropdown([], multiselect=True, label="B (one or more)", elem_id="score-b", scale=3,
                                min_width=200, **FREE)  # fmt: skip
            compare_note = gr.Markdown(elem_id="score-compare-note")
            compare_table = gr.Dataframe(interactive=False, elem_id="score-compare-table", show_label=False)
            compare_plot = gr.Plot(show_label=False, elem_id="score-compare-plot")
            rotation_note = gr.Markdown(elem_id="score-rotation-note")
            rotation_table = gr.Dataframe(interactive=False, elem_id="score-consistency", show_label=False)
            bias_plot = gr.Plot(show_label=False, elem_id="score-position-bias")
        with gr.Tab("Modes & latency", id="score-view-modes") as modes_view:
            gr.Markdown("Which items each mode gets right, for one model.")
            with gr.Row():
                agree_model = Dropdown([], label="Model", elem_id="score-agree-model", scale=1, **FREE)
                agree_modes = Dropdown([], multiselect=True, label="Modes (two or three)",
                                          elem_id="score-agree-modes", scale=2, **FREE)  # fmt: skip
            with gr.Row():
                agree_table = gr.Dataframe(interactive=False, elem_id="score-agree-table", show_label=False)
                agree_plot = gr.Plot(show_label=False, elem_id="score-agree-plot")
            gr.Markdown("Mean seconds per reply")
            latency = gr.Dataframe(interactive=False, elem_id="score-latency", show_label=False)

    deleting = build_delete()  # private mode only: built hidden on a public Space

    filters = [benchmark, models, mode, perturbation, group, agree_model, agree_modes]
    synced = [include_probes, *filters, param, axis, a, b, view]
    synced_out = [origins, *synced[1:]]
    shown = [status, table, csv_file, json_file, bars, group_plot, group_note, agree_table, agree_plot, latency,
             notes, phone, board, board_note, origins_note, calibration_note, reliability_plot]  # fmt: skip
    board_inputs = [*filters, origins, view]
    curve_inputs = [benchmark, param, models, mode, perturbation, include_probes]
    curve_outputs = [curves_plot, curves_note, fits, magnitudes, polarity_note, polarity_plot, polarity_table]
    compare_inputs = [benchmark, axis, a, b, models, mode, perturbation, include_probes]
    compare_outputs = [compare_note, compare_table, compare_plot, rotation_note, rotation_table, bias_plot]

    delete_fields = [deleting["model"], deleting["benchmark"]]

    def chain(event: Any) -> None:
        """After new choices: everything the open views show, and what may be deleted."""
        event.then(psychometric_if_shown, [view, *curve_inputs], curve_outputs, **PRIVATE).then(
            compare_if_shown, [view, *compare_inputs], compare_outputs, **PRIVATE
        ).then(delete_choices, delete_fields, delete_fields, **PRIVATE)

    chain(
        refresh.click(reload_sync, synced, synced_out, **PRIVATE).then(
            scoreboard, board_inputs, shown, api_name="scoreboard"
        )
    )
    chain(
        board.select(benchmark_clicked, board, benchmark, **PRIVATE)
        .then(sync, synced, synced_out, **PRIVATE)
        .then(scoreboard, board_inputs, shown, **PRIVATE)
    )
    tab = _enclosing_tab(top)
    for trigger in [include_probes.input, benchmark.input] + ([tab.select] if tab is not None else []):
        chain(trigger(sync, synced, synced_out, **PRIVATE).then(scoreboard, board_inputs, shown, **PRIVATE))
    for component in (models, mode, perturbation):
        chain(component.input(scoreboard, board_inputs, shown, trigger_mode="always_last", **PRIVATE))
    group.input(scoreboard, board_inputs, shown, trigger_mode="always_last", **PRIVATE)

    agreement_inputs = [benchmark, perturbation, agree_model, agree_modes, origins]
    agree_model.input(agreement_choices, [benchmark, perturbation, agree_model, origins], agree_modes, **PRIVATE).then(
        agreement_view, agreement_inputs, [agree_table, agree_plot], **PRIVATE
    )
    agree_modes.input(agreement_view, agreement_inputs, [agree_table, agree_plot], trigger_mode="always_last",
                      **PRIVATE)  # fmt: skip

    asked = [deleting["note"], deleting["confirm"]]
    for field in delete_fields:
        field.input(delete_choices, delete_fields, delete_fields, **PRIVATE).then(
            lambda: ["", gr.update(visible=False)], None, asked, **PRIVATE
        )
    deleting["ask"].click(delete_asked, delete_fields, asked, **PRIVATE)
    chain(
        deleting["confirm"]
        .click(delete_confirmed, delete_fields, asked, **PRIVATE)
        .then(reload_sync, synced, synced_out, **PRIVATE)
        .then(scoreboard, board_inputs, shown, **PRIVATE)
    )

    table_view.select(lambda: "table", None, view, **PRIVATE)
    modes_view.select(lambda: "modes", None, view, **PRIVATE).then(
        modes_opened, [benchmark, models, mode, perturbation, agree_model, agree_modes, origins],
        [agree_model, agree_modes, agree_table, agree_plot, latency], **PRIVATE,
    )  # fmt: skip
    curves_view.select(lambda: "curves", None, view, **PRIVATE).then(
        psychometric, curve_inputs, curve_outputs, **PRIVATE
    )
    param.input(psychometric, curve_inputs, curve_outputs, api_name="psychometric", trigger_mode="always_last")
    compare_view.select(lambda: "compare", None, view, **PRIVATE).then(
        compare_choices, [benchmark, axis, a, b, models, mode, perturbation, include_probes], [a, b], **PRIVATE
    ).then(compare, compare_inputs, compare_outputs, **PRIVATE)
    axis.input(compare_choices, [benchmark, axis, a, b, models, mode, perturbation, include_probes], [a, b],
               **PRIVATE).then(compare, compare_inputs, compare_outputs, **PRIVATE)  # fmt: skip
    a.input(compare_choices, [benchmark, axis, a, b, models, mode, perturbation, include_probes], [a, b],
            **PRIVATE).then(compare, compare_inputs, compare_outputs, api_name="compare")  # fmt: skip
    b.input(compare, compare_inputs, compare_outputs, trigger_mode="always_last", **PRIVATE)
    return {"refresh": refresh, "table": table, "leaderboard": board, "delete": deleting["box"]}


def _enclosing_tab(block: gr.blocks.Block) -> gr.Tab | None:
    """The tab this one is built in (app.py opens it), to refresh when a person switches to it."""
    parent = block.parent
    while parent is not None and not isinstance(parent, gr.Tab):
        parent = parent.parent
    return parent

"""The Scoreboard's "Delete stored results" (private mode only): a model's results out of the
operator's store, after a confirmation that says how many go.

Two steps, as `python -m probes delete` (count, then --yes): "Delete..." counts what would go
and shows a confirm button; only that button deletes, and it counts again first (another run may
have added results meanwhile). A public Space never offers it (the accordion is not built
visible) and the handlers refuse it there: a visitor must not take the operator's results away.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from probes.core.errors import ProbeError, UsageError
from probes.running.cells import Where
from probes.running.limits import current as limits
from ui.choices import Dropdown
from ui.common import escape
from ui.scoreboard.data import EVERY_ORIGIN, Tally, counted_by
from ui.scoreboard.requests import check, opened, refused_as, warned
from ui.sessions import shared_store

EVERY_BENCHMARK = "every benchmark"
REFUSED = "this playground is public: stored results are deleted by its operator, not from the page"


def build_delete() -> dict[str, Any]:
    """The accordion and its widgets (the caller wires them, then refreshes the scoreboard)."""
    with gr.Accordion("Delete stored results", open=False, visible=not limits().public,
                      elem_id="score-delete") as box:  # fmt: skip
        with gr.Row():
            model = Dropdown([], label="Model", elem_id="score-delete-model", scale=2, min_width=200)
            benchmark = Dropdown([EVERY_BENCHMARK], value=EVERY_BENCHMARK, label="On",
                                 elem_id="score-delete-benchmark", scale=2, min_width=200)  # fmt: skip
            ask = gr.Button("Delete...", elem_id="score-delete-ask", scale=0, min_width=120, size="sm")
        note = gr.Markdown(elem_id="score-delete-note")
        confirm = gr.Button("Yes, delete them", variant="stop", visible=False, elem_id="score-delete-confirm",
                            size="sm")  # fmt: skip
    return {"box": box, "model": model, "benchmark": benchmark, "ask": ask, "note": note, "confirm": confirm}


@refused_as(warned(2))
def delete_choices(model: str | None, benchmark: str | None, request: gr.Request | None = None) -> list[Any]:
    """Every model with results in the operator's store, and the benchmarks the chosen one has."""
    if limits().public:
        return [gr.skip(), gr.skip()]
    tally = opened(request, [model, benchmark])
    models = _models(tally)
    model = model if model in models else None
    names = sorted({head[0] for head, counts in tally.overall.items() if head[1] == model and counts.results})
    return [
        gr.update(choices=models, value=model),
        gr.update(choices=[EVERY_BENCHMARK, *names], value=benchmark if benchmark in names else EVERY_BENCHMARK),
    ]


def delete_asked(model: str | None, benchmark: str | None) -> list[Any]:
    """How many results would go, and the confirm button (or why not)."""
    try:
        where = _where(model, benchmark)
        found = shared_store().delete(where, dry_run=True)
    except ProbeError as exc:
        return [f"⚠ {escape(str(exc))}", gr.update(visible=False)]
    if not found:
        return [f"No stored result of **{escape(model or '')}** {_on(benchmark)}: nothing to delete.",
                gr.update(visible=False)]  # fmt: skip
    return [
        f"**{found:,}** results of **{escape(model or '')}** {_on(benchmark)} will be deleted from the store. This "
        "cannot be undone (its cached replies stay, so running it again costs nothing).",
        gr.update(visible=True),
    ]


def delete_confirmed(model: str | None, benchmark: str | None) -> list[Any]:
    """Delete them; the scoreboard is refreshed after this (the caller chains it)."""
    try:
        deleted = shared_store().delete(_where(model, benchmark))
    except ProbeError as exc:
        return [f"⚠ {escape(str(exc))}", gr.update(visible=False)]
    return [f"Deleted **{deleted:,}** results of **{escape(model or '')}** {_on(benchmark)}.", gr.update(visible=False)]


def _where(model: str | None, benchmark: str | None) -> Where:
    if limits().public:
        raise UsageError(REFUSED)
    check([model, benchmark])
    if not model:
        raise UsageError("choose the model whose results to delete")
    return Where(None if benchmark in (None, "", EVERY_BENCHMARK) else benchmark, [model])


def _on(benchmark: str | None) -> str:
    return "on every benchmark" if benchmark in (None, "", EVERY_BENCHMARK) else f"on **{escape(benchmark)}**"


def _models(tally: Tally) -> list[str]:
    return sorted(model for model, results in counted_by(tally, EVERY_ORIGIN, 1).items() if results)

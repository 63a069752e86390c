"""How sure the models were, on the Scoreboard: the calibration columns of the chosen benchmark's
rows (probes/analysis/calibration.py's mean_p_right, brier, ece and n_prob, for the same results
`report` reads) and a reliability diagram per model.

Both are read off calibration sums kept per cell (`Tally.calibration_of`, read once per benchmark
from the sums the store keeps, probes/running/calibration_kept.py), so a filter or a breakdown
adds a few hundred kept sums. Only results with probabilities count: a model that gave none has no figures (the table
shows a dash, the diagram no line), never any derived from its choices.

The diagram is the classic one (Guo et al. 2017): the answers binned by the probability of the
answer chosen (10 equal bins), each bin at its mean probability (x) and the share right (y), the
diagonal where a model is exactly as sure as it is right; under it, how many answers fell in each
bin (also the markers' size, and every point's hover)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import plotly.graph_objects as go

from probes.analysis import calibration_cells
from probes.analysis.calibration import BINS, Bin, Calibration
from probes.analysis.calibration_cells import Sums
from probes.analysis.scoring import wilson
from ui.scoreboard.charts import MAX_LINES
from ui.scoreboard.data import Filters, Key, Tally, passing
from ui.scoreboard.style import CHANCE_COLOUR, WHISKER, Colours, empty, label, styled_layout

# What a visitor can do about an empty diagram, in the page's words (no command-line options).
NONE_STORED = (
    "No answer probabilities are stored for these models on this benchmark, so there is nothing to "
    "calibrate: every row shows a dash. Local Hugging Face models (hf/) and OpenAI-compatible servers "
    "(OpenAI, vLLM) give the probability of each answer: the Evaluate tab and the Probe tab ask for them "
    "(answers stored before are kept as they are); Anthropic's models give none."
)
EXPLAINED = (
    "**How sure was it?** Where answers carry the model's probabilities: **mean p(right)**, the mean "
    "probability given to the right answer; **Brier**, per item the squared distances of its answers' "
    "probabilities from the truth (0 is perfect; an even guess between two answers scores 0.5); **ECE**, "
    "the expected calibration error of the chosen answer's probability (10 bins); **n with p**, the "
    "answers that carried probabilities (only these count). A dash: no probabilities."
)


def calibration_sums(tally: Tally, filters: Filters, origins: Iterable[str]) -> dict[Key, Sums]:
    """The calibration sums of the cells that pass the filters (overall, and the breakdown's)."""
    return passing(tally.calibration_of(filters.benchmark), filters, origins, filters.by)


def row_calibrations(sums: Mapping[Key, Sums]) -> dict[tuple, Calibration]:
    """Calibration per row (benchmark, model, mode, perturbation, group), as `report` keys it."""
    return calibration_cells.calibrations(sums)


def per_model(sums: Mapping[Key, Sums]) -> dict[str, Sums]:
    """Each model's overall sums, pooled over the modes, conditions and origins that pass."""
    models: dict[str, Sums] = {}
    for key, cell in sums.items():
        if not key[5]:
            models.setdefault(key[1], Sums()).add(cell)
    return {model: found for model, found in models.items() if found.n}


@dataclass(frozen=True)
class Reliability:
    figure: go.Figure
    note: str
    present: bool  # some model has probabilities under these filters


def reliability(sums: Mapping[Key, Sums], benchmark: str, colours: Colours) -> Reliability:
    """The reliability diagram of every model with probabilities (the MAX_LINES with the most)."""
    models = per_model(sums)
    if not models:
        return Reliability(empty("No answer probabilities stored for these models."), NONE_STORED, False)
    kept = sorted(models, key=lambda m: (-models[m].n, m.casefold()))[:MAX_LINES]
    note = (
        "Each point: the answers whose chosen answer had that probability (10 bins), at their mean "
        "probability and the share right, with its Wilson 95% interval; on the dotted diagonal a model is exactly "
        "as sure as it is right, under it over-confident. Point size and the bars below: answers per bin. Each "
        "model's modes and conditions under the filters are pooled: choose a mode above to see one."
    )
    if len(kept) < len(models):
        note += f" Showing the {len(kept)} of {len(models)} models with the most answers with probabilities."
    return Reliability(figure(sorted(kept, key=str.casefold), models, benchmark, colours), note, True)


def _size(n: int, largest: int) -> float:
    """Marker size by the bin's answers: area in proportion, 6 to 24 px across."""
    return 6 + 18 * math.sqrt(n / largest) if largest else 6


def _faint(colour: str, alpha: float = 0.45) -> str:
    """A "#RRGGBB" colour made translucent: the line joining a model's bins, fainter than its points."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def figure(models: list[str], sums: Mapping[str, Sums], benchmark: str, colours: Colours) -> go.Figure:
    """Points with Wilson 95% whiskers (a bin of two answers is all right or all wrong: its
    interval says how little that means), joined by a faint line; the diagonal as a legend entry;
    the answers per bin as bars underneath."""
    bins = {model: sums[model].bins() for model in models}
    largest = max(b.n for found in bins.values() for b in found)
    traces: list[dict] = [{
        "type": "scatter", "x": [0, 1], "y": [0, 1], "mode": "lines", "name": "as sure as right",
        "line": {"color": CHANCE_COLOUR, "dash": "dot", "width": 1.5}, "hoverinfo": "skip",
    }]  # fmt: skip
    width = 0.8 / BINS / len(models)
    for index, model in enumerate(models):
        colour, found = colours(model), bins[model]
        total = sums[model].calibration()
        filled = [b for b in found if b.n]
        paired = [(b, wilson(round(b.accuracy * b.n), b.n)) for b in filled]
        name = label(model)
        traces.append({
            "type": "scatter", "x": [b.confidence for b in filled], "y": [b.accuracy for b in filled],
            "mode": "lines+markers", "name": name, "legendgroup": name,
            "line": {"color": _faint(colour), "width": 1.5},
            "marker": {"color": colour, "size": [_size(b.n, largest) for b in filled], "line": {"width": 1, "color": "white"}},
            "error_y": {"type": "data", "symmetric": False, "array": [high - b.accuracy for b, (_, high) in paired],
                        "arrayminus": [b.accuracy - low for b, (low, _) in paired], "thickness": 1, "width": 3,
                        "color": WHISKER},
            "hovertext": [_hover(model, b, interval, total) for b, interval in paired],
            "hoverinfo": "text",
        })  # fmt: skip
        # The counts under the diagram: one bar per model in each bin, side by side.
        traces.append({
            "type": "bar", "xaxis": "x2", "yaxis": "y2", "x": [(b.low + b.high) / 2 + (index - (len(models) - 1) / 2) * width
                                                          for b in found],
            "y": [b.n for b in found], "width": width, "name": name, "legendgroup": name, "showlegend": False,
            "marker": {"color": colour}, "hovertext": [f"{name}<br>probability {b.low:.1f}–{b.high:.1f}: {b.n} answers"
                                                        for b in found],
            "hoverinfo": "text",
        })  # fmt: skip
    ticks = {"tickvals": [i / 5 for i in range(6)], "tickformat": ".0%", "range": [-0.02, 1.02]}
    axes = {
        "xaxis": {**ticks, "domain": [0, 1], "anchor": "y", "showticklabels": False},
        "yaxis": {**ticks, "domain": [0.34, 1], "anchor": "x", "range": [-0.04, 1.04], "title": {"text": "share right"}},
        "xaxis2": {**ticks, "domain": [0, 1], "anchor": "y2", "matches": "x",
                   "title": {"text": "probability of the chosen answer"}},
        "yaxis2": {"domain": [0, 0.24], "anchor": "x2", "title": {"text": "answers"}, "rangemode": "tozero"},
    }  # fmt: skip
    layout = styled_layout(f"Reliability: {label(benchmark)}", list(axes), 520, **axes, barmode="overlay",
                           legend={"y": -0.16})  # fmt: skip
    # Built unvalidated, as the curves are: plain numbers and names, checked by plotly in the browser.
    return go.Figure(data=traces, layout=layout, _validate=False)


def _hover(model: str, found: Bin, interval: tuple[float, float], total: Calibration | None) -> str:
    low, high = interval
    text = (
        f"{label(model)}<br>probability {found.low:.1f}–{found.high:.1f}: {found.n} answers<br>"
        f"mean probability {found.confidence:.3f}, right {100 * (found.accuracy or 0):.1f}% "
        f"(95% CI {100 * low:.1f}–{100 * high:.1f})"
    )
    if total is not None:
        text += f"<br>ECE {total.ece:.3f} over {total.n_prob} answers"
    return text

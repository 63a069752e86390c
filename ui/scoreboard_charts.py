"""The Scoreboard tab's plotly figures: accuracy per model with Wilson 95% whiskers, accuracy by
group (a curve per model when the group is a swept number), and the mode-agreement Venn diagram.

Every label that came from the store (model names people typed) is HTML-escaped: plotly renders a
small HTML subset in text, and a name must show as itself."""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Sequence

import plotly.graph_objects as go

from probes.analysis.scoring import Row
from ui.scoreboard_data import mode_order, numeric, region_name

PUBLISHED_COLOUR = "rgba(120, 120, 120, 0.55)"
HEIGHT = 420


def _label(text: str) -> str:
    return html.escape(text, quote=False)


def _whiskers(rows: Sequence[Row]) -> dict:
    return {
        "type": "data",
        "symmetric": False,
        "array": [(r.ci_high or 0) - (r.accuracy or 0) for r in rows],
        "arrayminus": [(r.accuracy or 0) - (r.ci_low or 0) for r in rows],
        "thickness": 1.5,
    }


def _hover(rows: Sequence[Row]) -> list[str]:
    return [
        f"{_label(r.model)} · {_label(r.mode)} · {_label(r.perturbation)}<br>{_label(r.group)}<br>"
        f"accuracy {r.accuracy:.1f}% (95% CI {r.ci_low:.1f}–{r.ci_high:.1f}), n={r.n}"
        for r in rows
    ]


def _combo(row: Row) -> str:
    """A measured trace's name: the mode, and the perturbation when there is one."""
    return row.mode if row.perturbation == "none" else f"{row.mode} · {row.perturbation}"


def _layout(figure: go.Figure, title: str, x_title: str) -> go.Figure:
    figure.update_layout(
        title=title,
        height=HEIGHT,
        barmode="group",
        yaxis={"title": "accuracy (%)", "range": [0, 105]},
        xaxis={"title": x_title},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 60, "r": 20, "t": 50, "b": 10},
    )
    return figure


def _chance(figure: go.Figure, rows: Sequence[Row]) -> None:
    for row in rows:
        if row.source == "chance" and row.accuracy is not None:
            figure.add_hline(
                y=row.accuracy,
                line_dash="dash",
                line_color="black",
                annotation_text=f"chance {row.accuracy:.1f}%",
                annotation_position="top right",
            )


def empty(message: str) -> go.Figure:
    figure = go.Figure()
    figure.add_annotation(text=_label(message), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    figure.update_layout(height=220, xaxis={"visible": False}, yaxis={"visible": False})
    return figure


def accuracy_bars(rows: Sequence[Row], benchmark: str) -> go.Figure:
    """Overall accuracy per model; a colour per mode (and perturbation); papers' numbers as grey
    hatched bars named "(published)"; chance as a dashed line."""
    overall = [r for r in rows if r.group == "overall"]
    measured = [r for r in overall if r.source == "measured" and r.accuracy is not None]
    if not measured:
        return empty("No measured results match these filters.")
    figure = go.Figure()
    traces: dict[str, list[Row]] = defaultdict(list)
    for row in measured:
        traces[_combo(row)].append(row)
    for name in sorted(traces, key=mode_order):
        members = traces[name]
        figure.add_bar(
            name=_label(name), x=[_label(r.model) for r in members], y=[r.accuracy for r in members],
            error_y=_whiskers(members), hovertext=_hover(members), hoverinfo="text", offsetgroup=name,
        )  # fmt: skip
    published = [r for r in overall if r.source == "published"]
    if published:
        # Beside the first measured colour's slot: the papers' bars sit at their own x labels and
        # need no slot of their own, which would thin every measured bar.
        figure.add_bar(
            name="published (paper)",
            x=[_label(f"{r.model} ({r.mode}, published)") for r in published],
            y=[r.accuracy for r in published],
            marker={"color": PUBLISHED_COLOUR, "pattern": {"shape": "/"}},
            hovertext=[_label(f"{r.model}: {r.accuracy:.1f}% in {r.paper}") for r in published],
            hoverinfo="text",
            offsetgroup=sorted(traces, key=mode_order)[0],
        )
    _chance(figure, overall)
    return _layout(figure, f"Accuracy per model: {_label(benchmark)}", "model")


def group_figure(rows: Sequence[Row], group: str) -> tuple[go.Figure, str]:
    """Accuracy by the values of `group`: a curve per model and mode against the number when every
    value is one (gap, thickness, canvas, "1/4"), else grouped bars. Returns (figure, note)."""
    prefix = f"{group}="
    grouped = [r for r in rows if r.group.startswith(prefix) and r.accuracy is not None]
    measured = [r for r in grouped if r.source == "measured"]
    if not measured:
        return empty(f"No results carry the group {group!r} under these filters."), ""
    values = {r.group[len(prefix) :] for r in grouped}
    if all(numeric(v) is not None for v in values):
        return _curve(rows, grouped, group), f"Accuracy against **{group}**, a curve per model and mode."
    return _group_bars(rows, grouped, group), f"Accuracy per **{group}** (not a number, so bars rather than a curve)."


def _series(grouped: Sequence[Row]) -> dict[tuple[str, str, str, str], list[Row]]:
    series: dict[tuple[str, str, str, str], list[Row]] = defaultdict(list)
    for row in grouped:
        series[(row.source, row.model, row.mode, row.perturbation)].append(row)
    return series


def _curve(rows: Sequence[Row], grouped: Sequence[Row], group: str) -> go.Figure:
    prefix = f"{group}="
    figure = go.Figure()
    labels: dict[float, str] = {}
    for (source, model, mode, _), members in _series(grouped).items():
        members = sorted(members, key=lambda r: numeric(r.group[len(prefix) :]))
        xs = [numeric(r.group[len(prefix) :]) for r in members]
        labels.update({x: r.group[len(prefix) :] for x, r in zip(xs, members, strict=True)})
        published = source == "published"
        name = f"{model} ({mode}, published)" if published else f"{model} · {_combo(members[0])}"
        figure.add_scatter(
            name=_label(name), x=xs, y=[r.accuracy for r in members], mode="lines+markers",
            line={"dash": "dot"} if published else {}, error_y=None if published else _whiskers(members),
            hovertext=None if published else _hover(members), hoverinfo="text" if not published else "x+y+name",
        )  # fmt: skip
    if len(labels) <= 24:  # keep "1/4" and "+0.05" as the benchmark writes them
        ticks = sorted(labels)
        figure.update_xaxes(tickvals=ticks, ticktext=[_label(labels[t]) for t in ticks])
    _chance(figure, rows)
    return _layout(figure, f"Accuracy against {_label(group)}", _label(group))


def _group_bars(rows: Sequence[Row], grouped: Sequence[Row], group: str) -> go.Figure:
    prefix = f"{group}="
    figure = go.Figure()
    for (source, model, mode, _), members in _series(grouped).items():
        published = source == "published"
        name = f"{model} ({mode}, published)" if published else f"{model} · {_combo(members[0])}"
        figure.add_bar(
            name=_label(name), x=[_label(r.group[len(prefix) :]) for r in members], y=[r.accuracy for r in members],
            error_y=None if published else _whiskers(members),
            marker={"pattern": {"shape": "/"}} if published else None,
            hovertext=None if published else _hover(members), hoverinfo="text" if not published else "x+y+name",
        )  # fmt: skip
    _chance(figure, rows)
    return _layout(figure, f"Accuracy per {_label(group)}", _label(group))


# Circle centres (radius 1) and where each region's count goes, for two and three modes.
_VENN = {
    2: {
        "centres": [(-0.6, 0.0), (0.6, 0.0)],
        "names": [(-0.9, 1.25), (0.9, 1.25)],
        "regions": {(0,): (-1.05, 0.0), (1,): (1.05, 0.0), (0, 1): (0.0, 0.0)},
    },
    3: {
        "centres": [(-0.6, 0.35), (0.6, 0.35), (0.0, -0.7)],
        "names": [(-1.2, 1.55), (1.2, 1.55), (0.0, -1.95)],
        "regions": {
            (0,): (-1.1, 0.7),
            (1,): (1.1, 0.7),
            (2,): (0.0, -1.25),
            (0, 1): (0.0, 0.9),
            (0, 2): (-0.72, -0.45),
            (1, 2): (0.72, -0.45),
            (0, 1, 2): (0.0, 0.05),
        },  # fmt: skip
    },
}
_VENN_COLOURS = ["rgba(31, 119, 180, 0.25)", "rgba(255, 127, 14, 0.25)", "rgba(44, 160, 44, 0.25)"]


def agreement_figure(agreement: dict, title: str) -> go.Figure:
    """IllusionVQA's Venn diagram: how many items each combination of modes gets right. More than
    three modes (or one) fall back to bars per combination."""
    modes, regions = agreement["modes"], agreement["regions"]
    if not agreement["items"]:
        return empty("No item was answered in all of the chosen modes.")
    layout = _VENN.get(len(modes))
    if layout is None:
        figure = go.Figure(go.Bar(x=[_label(region_name(s, modes)) for s in regions], y=list(regions.values())))
        figure.update_layout(title=_label(title), height=HEIGHT, yaxis={"title": "items"})
        return figure
    figure = go.Figure()
    for index, (x, y) in enumerate(layout["centres"]):
        figure.add_shape(type="circle", x0=x - 1, y0=y - 1, x1=x + 1, y1=y + 1,
                         fillcolor=_VENN_COLOURS[index], line={"color": _VENN_COLOURS[index].replace("0.25", "0.9")})  # fmt: skip
        name_x, name_y = layout["names"][index]
        figure.add_annotation(x=name_x, y=name_y, showarrow=False, font={"size": 14},
                              text=f"<b>{_label(modes[index])}</b> ({agreement['right'][modes[index]]} right)")  # fmt: skip
    for positions, (x, y) in layout["regions"].items():
        count = regions[tuple(modes[i] for i in positions)]
        figure.add_annotation(x=x, y=y, text=f"<b>{count}</b>", showarrow=False, font={"size": 18})
    figure.add_annotation(x=1.0, y=0.0, xref="paper", yref="paper", showarrow=False, xanchor="right",
                          text=f"none right: <b>{regions[()]}</b> · items: {agreement['items']}")  # fmt: skip
    figure.update_xaxes(visible=False, range=[-2.4, 2.4])
    figure.update_yaxes(visible=False, range=[-2.3, 1.9], scaleanchor="x")
    figure.update_layout(title=_label(title), height=HEIGHT, margin={"l": 10, "r": 10, "t": 50, "b": 10},
                         plot_bgcolor="white")  # fmt: skip
    return figure

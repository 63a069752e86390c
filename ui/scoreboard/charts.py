"""The Scoreboard tab's accuracy charts: accuracy per model and mode (horizontal bars, best first,
with Wilson 95% whiskers, the papers' numbers hatched grey and chance as a dashed line), accuracy
by a group (a curve per model and mode against a swept number, else grouped bars), and the
mode-agreement Venn diagram of the IllusionVQA paper.

A model has one colour in every chart (ui.scoreboard.style.Colours), a mode one dash (curves) or
one hatching (bars); a curve chart draws at most MAX_LINES lines and says which it left out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import plotly.graph_objects as go

from probes.analysis.scoring import Row
from ui.scoreboard.data import mode_order, numeric
from ui.scoreboard.style import (
    CHANCE_COLOUR,
    PUBLISHED_COLOUR,
    WHISKER,
    Colours,
    dash,
    empty,
    is_person,
    label,
    pattern,
    styled,
)
from ui.scoreboard.tables import group_key, region_name

MAX_LINES = 8
Key = tuple[str, str, str]  # model, mode, perturbation


def _whiskers(rows: Sequence[Row]) -> dict:
    return {
        "type": "data",
        "symmetric": False,
        "array": [(r.ci_high or 0) - (r.accuracy or 0) for r in rows],
        "arrayminus": [(r.accuracy or 0) - (r.ci_low or 0) for r in rows],
        "thickness": 1.5,
        "width": 3,
        "color": WHISKER,
    }


def _hover(rows: Sequence[Row]) -> list[str]:
    return [
        f"{label(r.model)} · {label(_condition(r))}<br>{label(r.group)}<br>"
        f"accuracy {r.accuracy:.1f}% (95% CI {r.ci_low:.1f}–{r.ci_high:.1f}), n={r.n}"
        if r.ci_low is not None
        else f"{label(r.model)} · {label(r.mode)}: {r.accuracy:.1f}%" + (f" in {label(r.paper)}" if r.paper else "")
        for r in rows
    ]


def _condition(row: Row) -> str:
    """The mode, and the perturbation when there is one."""
    return row.mode if row.perturbation == "none" else f"{row.mode} · {row.perturbation}"


def _chance(figure: go.Figure, rows: Sequence[Row], axis: str = "y") -> None:
    """Chance as a dashed line across the plot, labelled (a shape and a note added to the layout
    at once: plotly's add_hline checks every subplot, slowly)."""
    for row in rows:
        if row.source == "chance" and row.accuracy is not None and row.group == "overall":
            across = {"x0": 0, "x1": 1, "xref": "paper", "y0": row.accuracy, "y1": row.accuracy, "yref": "y"}
            if axis == "x":
                across = {"y0": 0, "y1": 1, "yref": "paper", "x0": row.accuracy, "x1": row.accuracy, "xref": "x"}
            note = {"text": f"chance {row.accuracy:.1f}%", "showarrow": False, "font": {"color": CHANCE_COLOUR},
                    **({"x": 1, "xref": "paper", "xanchor": "right", "y": row.accuracy, "yref": "y", "yanchor": "bottom"}
                       if axis == "y" else
                       {"x": row.accuracy, "xref": "x", "xanchor": "left", "y": 0, "yref": "paper", "yanchor": "bottom"})}  # fmt: skip
            figure.update_layout(
                shapes=[
                    *figure.layout.shapes,
                    {"type": "line", **across, "line": {"color": CHANCE_COLOUR, "dash": "dash"}},
                ],
                annotations=[*figure.layout.annotations, note],
            )


def pick_series(weights: dict[Key, int], chosen_mode: bool) -> tuple[list[Key], str]:
    """At most MAX_LINES series, and a sentence naming what was left out. People always stay.
    Too many: the mode with the most replies only (unless a mode was chosen), then the models
    with the most replies."""
    people = [k for k in weights if is_person(k[0])]
    machines = [k for k in weights if not is_person(k[0])]
    room = max(1, MAX_LINES - len(people))
    kept = machines
    said = ""
    if len(kept) > room and not chosen_mode:
        per_mode: dict[str, int] = defaultdict(int)
        for key in kept:
            per_mode[key[1]] += weights[key]
        top = sorted(per_mode, key=lambda m: (-per_mode[m], mode_order(m)))[0]
        kept = [k for k in kept if k[1] == top]
        said = f"the {top} ones"
    if len(kept) > room:
        kept = sorted(kept, key=lambda k: -weights[k])[:room]
        said = (said + ", " if said else "") + f"the {room} with the most replies"
    kept = sorted(kept, key=lambda k: (k[0].casefold(), mode_order(k[1]), k[2])) + sorted(people)
    if len(kept) == len(weights):
        return kept, ""
    return kept, (
        f"Showing {len(kept)} of {len(weights)} curves ({said}): choose models or a mode above to see others."
    )


def accuracy_bars(rows: Sequence[Row], benchmark: str, colours: Colours) -> go.Figure:
    """Overall accuracy per model and mode, best at the top: a model's colour, a mode's hatching,
    Wilson whiskers; the papers' numbers as grey hatched bars; chance as a dashed line."""
    overall = [r for r in rows if r.group == "overall" and r.accuracy is not None and r.source != "chance"]
    if not any(r.source == "measured" for r in overall):
        return empty("No measured results match these filters.")
    ordered = sorted(overall, key=lambda r: (r.accuracy, r.model), reverse=False)  # plotly draws bottom-up
    # Two lines a bar (model, then mode): long model ids still leave the bars room on a phone.
    names = [f"{label(r.model)}<br>{label(_condition(r))}" + (" (paper)" if r.source == "published" else "")
             for r in ordered]  # fmt: skip
    measured = [i for i, r in enumerate(ordered) if r.source == "measured"]
    published = [i for i, r in enumerate(ordered) if r.source == "published"]
    figure = go.Figure()
    if measured:
        members = [ordered[i] for i in measured]
        figure.add_bar(
            orientation="h", y=[names[i] for i in measured], x=[r.accuracy for r in members], name="measured",
            marker={"color": [colours(r.model) for r in members],
                    "pattern": {"shape": [pattern(r.mode) for r in members], "fgcolor": "rgba(255,255,255,0.7)"}},
            error_x=_whiskers(members), hovertext=_hover(members), hoverinfo="text",
        )  # fmt: skip
    if published:
        members = [ordered[i] for i in published]
        figure.add_bar(
            orientation="h", y=[names[i] for i in published], x=[r.accuracy for r in members], name="published",
            marker={"color": PUBLISHED_COLOUR, "pattern": {"shape": "/"}}, hovertext=_hover(members), hoverinfo="text",
        )  # fmt: skip
    _chance(figure, rows, axis="x")
    styled(
        figure, f"Accuracy per model: {label(benchmark)}", height=max(260, 100 + 34 * len(ordered)), showlegend=False
    )
    figure.update_layout(barmode="overlay", bargap=0.25)
    figure.update_xaxes(title="accuracy (%)", range=[0, 102])
    figure.update_yaxes(categoryorder="array", categoryarray=names)
    return figure


def group_figure(rows: Sequence[Row], group: str, colours: Colours, chosen_mode: bool) -> tuple[go.Figure, str]:
    """Accuracy by the values of `group`: a curve per model and mode against the number when every
    value is one (gap, thickness, canvas, "1/4"), else grouped bars. Returns (figure, note)."""
    prefix = f"{group}="
    grouped = [r for r in rows if r.group.startswith(prefix) and r.accuracy is not None]
    if not any(r.source == "measured" for r in grouped):
        return empty(f"No results carry the group {group!r} under these filters."), ""
    pooled = any(r.model.startswith("people (") for r in grouped)
    if pooled:  # the class as one curve, not one per person
        grouped = [r for r in grouped if not (is_person(r.model) and not r.model.startswith("people ("))]
    series: dict[tuple[str, str, str, str], list[Row]] = defaultdict(list)
    for row in grouped:
        series[(row.model, row.mode, row.perturbation, row.source)].append(row)
    weights = {k[:3]: sum(r.n or 0 for r in members) for k, members in series.items() if k[3] == "measured"}
    kept, said = pick_series(weights, chosen_mode)
    keep = set(kept)
    shown = {k: v for k, v in series.items() if k[3] != "measured" or k[:3] in keep}
    values = {r.group[len(prefix) :] for r in grouped}
    if all(numeric(v) is not None for v in values):
        figure = _curve(shown, group, colours)
        note = f"Accuracy against **{group}**: a colour per model, a dash per mode."
    else:
        figure = _group_bars(shown, group, colours)
        note = f"Accuracy per **{group}** (not a number, so bars rather than a curve)."
    _chance(figure, rows)
    return figure, note + (f" {said}" if said else "")


TICK_SLOTS = 10  # at most this many labels across the axis: a chart is 400-1200 px wide


def spaced_ticks(labels: dict[float, str], slots: int = TICK_SLOTS) -> list[float]:
    """The values to label on a numeric axis, no two closer than 1/`slots` of its span, so that
    a measured -0.1457 is not printed over -0.15. Where two are close the one written shorter
    (the rounder number, -0.15) is labelled; the points themselves are all drawn."""
    values = sorted(labels)
    if len(values) < 2:
        return values
    gap = (values[-1] - values[0]) / slots
    kept: list[float] = []
    for value in sorted(values, key=lambda v: (len(labels[v].lstrip("+-")), abs(v), v)):
        if all(abs(value - other) >= gap * 0.999 for other in kept):
            kept.append(value)
    return sorted(kept)


def _series_name(key: tuple[str, str, str, str]) -> str:
    model, mode, perturbation, source = key
    condition = mode if perturbation == "none" else f"{mode} · {perturbation}"
    return f"{model} · {condition}" + (" (paper)" if source == "published" else "")


def _curve(series: dict, group: str, colours: Colours) -> go.Figure:
    prefix = f"{group}="
    figure = go.Figure()
    labels: dict[float, str] = {}
    for key, members in sorted(
        series.items(), key=lambda kv: (kv[0][3] != "published", kv[0][0], mode_order(kv[0][1]))
    ):
        members = sorted(members, key=lambda r: group_key(r.group))
        xs = [numeric(r.group[len(prefix) :]) for r in members]
        labels.update({x: r.group[len(prefix) :] for x, r in zip(xs, members, strict=True)})
        published = key[3] == "published"
        colour = PUBLISHED_COLOUR if published else colours(key[0])
        figure.add_scatter(
            name=label(_series_name(key)), x=xs, y=[r.accuracy for r in members], mode="lines+markers",
            line={"color": colour, "dash": "dot" if published else dash(key[1]), "width": 2},
            marker={"color": colour, "size": 7}, error_y=None if published else _whiskers(members),
            hovertext=_hover(members), hoverinfo="text",
        )  # fmt: skip
    if len(labels) <= 24:  # "1/4" and "+0.05" as the benchmark writes them, none over another
        ticks = spaced_ticks(labels)
        figure.update_xaxes(tickvals=ticks, ticktext=[label(labels[t]) for t in ticks])
    styled(figure, f"Accuracy against {label(group)}")
    figure.update_xaxes(title=label(group))
    figure.update_yaxes(title="accuracy (%)", range=[0, 105])
    return figure


def _group_bars(series: dict, group: str, colours: Colours) -> go.Figure:
    prefix = f"{group}="
    figure = go.Figure()
    for key, members in sorted(
        series.items(), key=lambda kv: (kv[0][3] != "published", kv[0][0], mode_order(kv[0][1]))
    ):
        members = sorted(members, key=lambda r: group_key(r.group))
        published = key[3] == "published"
        figure.add_bar(
            name=label(_series_name(key)), x=[label(r.group[len(prefix) :]) for r in members],
            y=[r.accuracy for r in members], error_y=None if published else _whiskers(members),
            marker={"color": PUBLISHED_COLOUR if published else colours(key[0]),
                    "pattern": {"shape": "/" if published else pattern(key[1])}},
            hovertext=_hover(members), hoverinfo="text",
        )  # fmt: skip
    styled(figure, f"Accuracy per {label(group)}", barmode="group")
    figure.update_xaxes(title=label(group), type="category")
    figure.update_yaxes(title="accuracy (%)", range=[0, 105])
    return figure


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
_VENN_COLOURS = ["rgba(99, 110, 250, {a})", "rgba(239, 85, 59, {a})", "rgba(0, 204, 150, {a})"]


def agreement_figure(agreement: dict, title: str) -> go.Figure:
    """IllusionVQA's Venn diagram: how many items each combination of modes gets right. More than
    three modes (or one) fall back to bars per combination."""
    modes, regions = agreement["modes"], agreement["regions"]
    if not agreement["items"]:
        return empty("No item was answered in all of the chosen modes.")
    layout = _VENN.get(len(modes))
    if layout is None:
        figure = go.Figure(go.Bar(x=[label(region_name(s, modes)) for s in regions], y=list(regions.values())))
        styled(figure, label(title))
        figure.update_yaxes(title="items")
        return figure
    shapes, notes = [], []
    for index, (x, y) in enumerate(layout["centres"]):
        colour = _VENN_COLOURS[index]
        shapes.append({"type": "circle", "x0": x - 1, "y0": y - 1, "x1": x + 1, "y1": y + 1,
                       "fillcolor": colour.format(a=0.25), "line": {"color": colour.format(a=0.9)}})  # fmt: skip
        name_x, name_y = layout["names"][index]
        # Its count under its name, the two lines growing away from the circles: on one line, two
        # names side by side ran into each other on a phone (390 px).
        notes.append({"x": name_x, "y": name_y, "showarrow": False, "font": {"size": 14},
                      "yanchor": "bottom" if name_y > 0 else "top",
                      "text": f"<b>{label(modes[index])}</b><br>({agreement['right'][modes[index]]} right)"})  # fmt: skip
    for positions, (x, y) in layout["regions"].items():
        count = regions[tuple(modes[i] for i in positions)]
        notes.append({"x": x, "y": y, "text": f"<b>{count}</b>", "showarrow": False, "font": {"size": 18}})
    notes.append({"x": 1.0, "y": 0.0, "xref": "paper", "yref": "paper", "showarrow": False, "xanchor": "right",
                  "text": f"none right: <b>{regions[()]}</b> · items: {agreement['items']}"})  # fmt: skip
    # One layout at once: plotly checks each added shape and annotation on its own, slowly.
    figure = go.Figure(layout={"shapes": shapes, "annotations": notes})
    styled(figure, label(title))
    figure.update_xaxes(visible=False, range=[-2.4, 2.4])
    figure.update_yaxes(visible=False, range=[-2.3, 1.9], scaleanchor="x")
    return figure

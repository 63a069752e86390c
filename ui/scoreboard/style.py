"""How every Scoreboard chart looks: one colour per model (the same in every chart of a view),
one dash per mode, reference colours for people, chance and the papers' numbers, and a layout
that reads in light and dark mode alike.

Dark mode: Gradio marks the page with a `dark` class (from the browser's colour scheme or
`?__theme=dark`) but draws plotly figures as sent. The figures are therefore sent with
transparent backgrounds and grid lines in a grey that reads on white and on near-black, and
assets/app.css turns their text light under `.dark` (a client-side switch: the server does not
know the visitor's theme)."""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

import gradio as gr
import plotly.graph_objects as go

from probes.core.errors import ProbeError
from probes.core.types import Mode
from probes.people.human import is_human

# Plotly's and D3's colours without their greens (people are green, as their rows are tinted)
# and greys (references): every one reads on a white and on a near-black page.
PALETTE = (
    "#636EFA", "#EF553B", "#AB63FA", "#FFA15A", "#19D3F3", "#FF6692", "#FECB52", "#FF97FF",
    "#1F77B4", "#FF7F0E", "#D62728", "#9467BD", "#E377C2", "#BCBD22", "#17BECF",
)  # fmt: skip
PEOPLE_COLOUR = "#16A34A"
CHANCE_COLOUR = "#8C8C8C"
PUBLISHED_COLOUR = "rgba(140, 140, 140, 0.6)"
WHISKER = "rgba(128, 128, 128, 0.95)"  # interval bars: one grey that reads on both themes
GRID = "rgba(128, 128, 128, 0.28)"
TEXT = "#374151"  # light mode; app.css lightens chart text under .dark
TRANSPARENT = "rgba(0, 0, 0, 0)"
PEOPLE = "people"  # the pooled row or curve of every human/<name>
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
PATTERNS = ("", "/", ".", "x", "-", "|")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star")
HEIGHT = 420


def label(text: str) -> str:
    """Text from the store as plotly should show it: plotly reads a little HTML in labels, and a
    name a person typed must show as itself."""
    return html.escape(str(text), quote=False)


def is_person(model: str) -> bool:
    """A person, or people pooled ("people", "people (3 persons)")."""
    return model == PEOPLE or model.startswith(f"{PEOPLE} (") or is_human(model)


class Colours:
    """A model's colour: its place among the models of the store, so a model keeps its colour in
    every chart and filter of a view. People share one colour; chance is grey."""

    def __init__(self, models: Iterable[str]):
        machines = sorted({m for m in models if not is_person(m) and m != "chance"})
        self._index = {model: i for i, model in enumerate(machines)}

    def __call__(self, model: str) -> str:
        if is_person(model):
            return PEOPLE_COLOUR
        if model == "chance":
            return CHANCE_COLOUR
        index = self._index.get(model)
        if index is None:  # a model the store did not list (a published row's name): a stable pick
            index = sum(map(ord, model))
        return PALETTE[index % len(PALETTE)]


def mode_rank(label_: str) -> int:
    """0-shot, k-shot, 0-shot+CoT, k-shot+CoT, anything else: the dash and pattern of a mode."""
    try:
        mode = Mode.parse(label_)
    except ProbeError:
        return 4
    return 2 * mode.cot + (mode.shots > 0)


def dash(mode: str) -> str:
    return DASHES[mode_rank(mode)]


def pattern(mode: str) -> str:
    return PATTERNS[mode_rank(mode)]


def styled(figure: go.Figure, title: str, height: int = HEIGHT, **layout: object) -> go.Figure:
    """Transparent backgrounds, grey grids, text colour for light mode (dark mode: app.css), a
    legend under the plot and margins that grow to fit long tick labels (no cut labels). One
    update of the layout: each of plotly's updates is checked property by property."""
    names = {"xaxis", "yaxis"} | {key for key in figure.layout.to_plotly_json() if key[1:5] == "axis"}
    figure.update_layout(styled_layout(title, names, height, **layout))
    return figure


def styled_layout(title: str, axes: Iterable[str], height: int = HEIGHT, **layout: Any) -> dict:
    """What `styled` sets, as a layout to build a figure with unvalidated (plotly checks each
    property of a validated update: tens of milliseconds a chart). `axes`: the axes' names
    ("xaxis", "yaxis2", ...); an axis given in `layout` keeps its own settings over the style."""
    style = {"gridcolor": GRID, "zerolinecolor": GRID, "linecolor": GRID, "automargin": True, "showline": False}
    found: dict[str, Any] = {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        "height": height,
        "template": "none",
        "paper_bgcolor": TRANSPARENT,
        "plot_bgcolor": TRANSPARENT,
        "font": {"color": TEXT, "size": 12},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.18, "x": 0, "bgcolor": TRANSPARENT},
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10, "autoexpand": True},
        "hoverlabel": {"namelength": -1},
    }
    for name in axes:
        found[name] = {**style, **layout.pop(name, {})}
    for name, value in layout.items():
        found[name] = (
            {**found[name], **value} if isinstance(value, dict) and isinstance(found.get(name), dict) else value
        )
    return found


def empty(message: str, height: int = 200) -> go.Figure:
    figure = go.Figure()
    figure.add_annotation(text=label(message), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    styled(figure, "", height=height)
    figure.update_xaxes(visible=False)
    figure.update_yaxes(visible=False)
    return figure


def shown_if(value: Any, present: bool | None = None) -> dict:
    """A table or chart with something in it, else hidden (the note above it says why): never a
    table headed "1 2 3" nor a blank plot. `present` None: read off the value (rows, traces)."""
    if present is None:
        present = (
            bool(len(value.data))
            if isinstance(value, go.Figure)
            else bool(len(getattr(value, "columns", ())) and len(value))
        )
    return gr.update(value=value, visible=True) if present else gr.update(visible=False)

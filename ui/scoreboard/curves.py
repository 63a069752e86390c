"""Psychometric curves on the Scoreboard (issue 13): for a swept numeric parameter of the chosen
benchmark (`difference` on illusion/*, `gap` on blind/touching-circles, ...), each model's share
of "positive" replies at every level with its Wilson interval, the maximum-likelihood logistic
fit, and the point of subjective equality (PSE) with its bootstrap 95% interval; people pooled
into one "people" curve beside the models (the classroom demo: you are fooled; is the model?).

On the illusions' `difference` the fits are split by the inducers as drawn
(`probes.analysis.psychometric.magnitude_rows`): one panel with the inducers, one with them
flipped, one with none (the control), stacked on one x axis so a shift of the PSE reads at a
glance; the table below gives the illusion magnitude (half the PSE difference between the two
polarities) and the side bias. Any other sweep is one panel (`fits.fit_table`, as `report --fit`).
A fit with no PSE (`flat`, or `outside the sweep`: probes/analysis/logistic.py), from choices or
probabilities alike, draws its points and curve but no PSE marker, and a dash in the table.

Where replies carry answer probabilities (issue 26), each model's fit of its probabilities (a
graded response per item: probes/analysis/graded.py, graded_magnitude.py) is drawn beside the fit
of its choices, in the model's colour and the mode's dash but as a broad pale line with open
markers, named "· probabilities" in the legend (the choices' "· choices"); both tables say each
row's `source`, as `report --fit` does.

The fits need each reply's item parameters, which the scoreboard's cached results leave out, so
only the series drawn (at most ui.scoreboard.charts.MAX_LINES, plus people) are read from the
store with `Store.results`, one query each, and kept until the store changes; the fits are kept
too. Nothing here runs unless the Curves view asks."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import pandas as pd
import plotly.graph_objects as go

from probes.analysis.fits import fit_table
from probes.analysis.graded_magnitude import graded_magnitude_rows
from probes.analysis.psychometric import FitRow, MagnitudeRow, magnitude_rows
from probes.core.types import Result
from probes.people.human import is_human
from probes.running.store import Store
from ui.scoreboard.charts import pick_series
from ui.scoreboard.data import ALL, Filters, Tally, fingerprint, shown
from ui.scoreboard.style import (
    CHANCE_COLOUR,
    PEOPLE,
    SYMBOLS,
    Colours,
    dash,
    empty,
    is_person,
    label,
    styled,
)
from ui.scoreboard.tables import DASH

PANELS = {"+1": "with inducers", "-1": "flipped inducers", "0": "no inducers (control)"}
FIT_COLUMNS = ["model", "mode", "inducers", "source", "PSE", "PSE 95% CI", "width (25-75%)", "n", "fit"]
CHOICES, PROBABILITIES = "choices", "probabilities"  # FitRow.source: what a fit was made of
MAGNITUDE_COLUMNS = ["model", "mode", "source", "illusion magnitude", "95% CI", "side bias", "bias 95% CI", "fit"]
Head = tuple[str, str, str]  # model, mode, perturbation


@dataclass(frozen=True)
class Curves:
    figure: go.Figure
    note: str
    fits: pd.DataFrame
    magnitudes: pd.DataFrame


# --- reading what the fits need --------------------------------------------------------------

_lock = threading.Lock()
_details: OrderedDict[tuple, list[Result]] = OrderedDict()
_fits: OrderedDict[tuple, tuple] = OrderedDict()
KEPT_DETAILS = 64  # series' results kept (each one query's worth)
KEPT_FITS = 16


def _remember(cache: OrderedDict, key: tuple, value: object, size: int) -> None:
    with _lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > size:
            cache.popitem(last=False)


def _read(store: Store, stamp: tuple, benchmark: str, head: Head, cached: bool) -> list[Result]:
    key = (str(store.path), stamp, benchmark, *head)
    with _lock:
        hit = _details.get(key)
    if hit is not None:
        return hit
    results = store.results(benchmark, *head)
    if cached:
        _remember(_details, key, results, KEPT_DETAILS)
    return results


def detailed(stores: Sequence[Store], benchmark: str, heads: Sequence[Head], origins: frozenset[str]) -> list[Result]:
    """Results with their item references for these series, from every store a visitor reads
    (the operator's kept until it changes; a visitor's own read each time, being small)."""
    found = []
    for index, store in enumerate(stores):
        stamp = fingerprint(store)
        for head in heads:
            found += [r for r in _read(store, stamp, benchmark, head, index == 0) if r.origin.value in origins]
    return found


# --- choosing the series ---------------------------------------------------------------------


def series_heads(tally: Tally, filters: Filters, origins: Iterable[str]) -> tuple[list[Head], list[Head], str]:
    """The machine series to fit (at most MAX_LINES), every person's series to pool, and a note
    (read off the counts, not the results themselves)."""
    perturbation = "none" if filters.perturbation == ALL else filters.perturbation
    weights: dict[Head, int] = {}
    people: set[Head] = set()
    for (benchmark, model, mode, perturbed, _), cell in shown(tally, origins).items():
        if benchmark != filters.benchmark:
            continue
        if is_human(model):  # people are shown whatever the filters on models and modes: the reference
            people.add((model, mode, perturbed))
        elif ((not filters.models or model in filters.models) and filters.mode in (ALL, mode)
              and perturbed == perturbation):  # fmt: skip
            weights[(model, mode, perturbed)] = weights.get((model, mode, perturbed), 0) + cell.results
    kept, said = pick_series(weights, chosen_mode=filters.mode != ALL)
    return kept, sorted(people), said


# --- the fits ----------------------------------------------------------------------------------


def pooled(results: Sequence[Result]) -> list[Result]:
    """Every person as one observer, "people", as a class's curve."""
    return [replace(r, model=PEOPLE) if is_human(r.model) else r for r in results]


def _is_illusion(results: Sequence[Result], param: str) -> bool:
    if param != "difference":
        return False
    return any(r.item_ref is not None and "polarity" in r.item_ref.params for r in results[:50])


def fits(stores: Sequence[Store], tally: Tally, filters: Filters, param: str,
         origins: frozenset[str]) -> tuple[list[FitRow], list[MagnitudeRow], str]:  # fmt: skip
    """(fits per series [and inducers], magnitude rows (illusions only), a note on what was left out)."""
    heads, people, said = series_heads(tally, filters, origins)
    wanted = list(heads) + people
    key = (tuple(str(s.path) for s in stores), tuple(fingerprint(s) for s in stores), filters.benchmark, param,
           tuple(wanted), origins)  # fmt: skip
    with _lock:
        hit = _fits.get(key)
    if hit is not None:
        return hit
    results = pooled(detailed(stores, filters.benchmark or "", wanted, origins))
    if _is_illusion(results, param):
        # Beside each magnitude from choices, the one from probabilities where the model gave them.
        magnitudes = magnitude_rows(results, param) + graded_magnitude_rows(results, param)
        rows = [fit for m in magnitudes for fit in m.fits.values()]
    else:
        magnitudes, rows = [], fit_table(results, param)  # the rows `report --fit` prints
    found = (rows, magnitudes, said)
    _remember(_fits, key, found, KEPT_FITS)
    return found


def _panel(row: FitRow) -> str:
    """ "+1", "-1" or "0" for a polarity fit ("polarity=+1"), "" for a plain one."""
    return row.group.partition("polarity=")[2].partition(";")[0] if "polarity=" in row.group else ""


def _digits(rows: Sequence[FitRow]) -> int:
    """One rounding for the parameter's numbers: three significant digits of its largest level."""
    largest = max((abs(p["x"]) for r in rows for p in r.points), default=1.0) or 1.0
    return max(0, 2 - math.floor(math.log10(largest)))


def _fmt(value: float | None, digits: int) -> str:
    return DASH if value is None else f"{value:+.{digits}f}"


def _band(low: float | None, high: float | None, digits: int) -> str:
    if low is None and high is None:
        return DASH
    return f"{_fmt(low, digits) if low is not None else '-∞'} to {_fmt(high, digits) if high is not None else '+∞'}"


def curves(stores: Sequence[Store], tally: Tally, filters: Filters, param: str, origins: frozenset[str],
           colours: Colours) -> Curves:  # fmt: skip
    rows, magnitudes, said = fits(stores, tally, filters, param, origins)
    rows = [r for r in rows if r.points]
    if not rows:
        return Curves(empty(f"No replies to fit against {param!r} under these filters."), "",
                      pd.DataFrame([], columns=FIT_COLUMNS), pd.DataFrame([], columns=MAGNITUDE_COLUMNS))  # fmt: skip
    digits = _digits(rows)
    figure = _figure(rows, param, colours, digits)
    illusion = bool(magnitudes)
    note = (
        f"Each point: the share of replies choosing the target that **{param} > 0** favours, with its Wilson 95% "
        "interval; lines: logistic fits (a colour per model, a dash per mode); diamonds: the PSE, where a curve "
        "crosses 50%, with its bootstrap 95% interval. A geometry-only observer has its PSE at 0."
        if illusion
        else f"Each point: the share of *yes* (or positive) replies at that **{param}**, with its Wilson 95% interval; "
        "lines: logistic fits (a colour per model, a dash per mode); diamonds: where a curve crosses 50%."
    )
    if any(r.source == PROBABILITIES for r in rows):
        note += (
            " Open markers and broad pale lines: the same fit from the answers' **probabilities**, where the model "
            "gave them (each answer's probability of the positive target, a graded response, its mean at each "
            "level); the tables' *source* says which."
        )
    if any(is_person(r.model) for r in rows):
        note += " **people**: everyone who took these items, pooled."
    if said:
        note += f" {said}"
    return Curves(figure, note, _fit_table(rows, digits), _magnitude_table(magnitudes, digits))


def _axes(count: int, spacing: float = 0.09) -> tuple[dict, list[tuple[str, str]]]:
    """Stacked panels sharing one x axis, as plotly's make_subplots lays them out (built here:
    make_subplots alone takes a quarter of a second). Returns the layout and each panel's axes."""
    height = (1 - spacing * (count - 1)) / count
    layout: dict = {}
    names = []
    for index in range(count):
        top = 1 - index * (height + spacing)
        suffix = "" if index == 0 else str(index + 1)
        layout[f"xaxis{suffix}"] = {"anchor": f"y{suffix}", "domain": [0, 1], "showticklabels": index == count - 1,
                                    **({"matches": "x"} if index else {})}  # fmt: skip
        layout[f"yaxis{suffix}"] = {"anchor": f"x{suffix}", "domain": [max(0.0, round(top - height, 6)), round(top, 6)], "range": [-0.04, 1.04],
                                    "tickformat": ".0%"}  # fmt: skip
        names.append((f"x{suffix}", f"y{suffix}"))
    return layout, names


def _figure(rows: Sequence[FitRow], param: str, colours: Colours, digits: int) -> go.Figure:
    panels = [p for p in PANELS if any(_panel(r) == p for r in rows)] or [""]
    graded = any(r.source == PROBABILITIES for r in rows)
    layout, axes = _axes(len(panels))
    traces: list[dict] = []
    shapes: list[dict] = []
    titles: list[dict] = []
    shown: set[str] = set()
    symbols: dict[str, str] = {}
    for panel, (x_axis, y_axis) in zip(panels, axes, strict=True):
        on = {"xaxis": x_axis, "yaxis": y_axis}
        if panel:
            top = layout[f"yaxis{y_axis[1:]}"]["domain"][1]
            titles.append({"text": PANELS[panel], "x": 0.5, "y": top, "xref": "paper", "yref": "paper",
                           "xanchor": "center", "yanchor": "bottom", "showarrow": False, "font": {"size": 13}})  # fmt: skip
        for row in sorted((r for r in rows if _panel(r) == panel), key=_drawing_order):
            name = row.model if row.perturbation == "none" else f"{row.model} · {row.perturbation}"
            group = label(name if is_person(row.model) else f"{name} · {row.mode}")
            if graded and not is_person(row.model):  # both sources drawn: each named by its own
                group += f" · {row.source}"
            symbol = symbols.setdefault(row.perturbation, SYMBOLS[len(symbols) % len(SYMBOLS)])
            traces += _traces(row, on, group, colours(row.model), symbol, param, digits, group not in shown)
            if row.curve_x:
                shown.add(group)
        line = {"color": CHANCE_COLOUR, "dash": "dot", "width": 1}
        shapes.append({"type": "line", "x0": 0, "x1": 0, "y0": 0, "y1": 1, "xref": x_axis, "yref": f"{y_axis} domain",
                       "line": line, "layer": "below"})  # fmt: skip
        shapes.append({"type": "line", "x0": 0, "x1": 1, "y0": 0.5, "y1": 0.5, "xref": f"{x_axis} domain",
                       "yref": y_axis, "line": line, "layer": "below"})  # fmt: skip
    # Built unvalidated: plotly checks every property of every trace on the way in, which took
    # most of a second for a few dozen traces; these are plain numbers and names built above.
    figure = go.Figure(data=traces, layout={**layout, "shapes": shapes, "annotations": titles}, _validate=False)
    styled(figure, f"Psychometric curves against {label(param)}", height=140 + 250 * len(panels))
    last = axes[-1]
    figure.update_layout({f"xaxis{last[0][1:]}": {"title": {"text": label(param)}}})
    figure.update_layout(
        yaxis={"title": {"text": "chose the positive target" if panels != [""] else "positive replies"}}
    )
    figure.update_layout(legend={"y": -75 / (250 * len(panels))})  # under the x axis title, whatever the panels
    return figure


def _drawing_order(row: FitRow) -> tuple:
    """Models, then people; a graded fit before its choice fit, so the choices' crisp line is
    drawn over the broad pale one."""
    return (is_person(row.model), row.model, row.mode, row.source != PROBABILITIES)


def _traces(row: FitRow, on: dict, group: str, colour: str, symbol: str, param: str, digits: int,
            legend: bool) -> list[dict]:  # fmt: skip
    """One fit's points, curve and PSE. A fit of choices: filled markers with Wilson intervals, a
    line in the mode's dash, a filled diamond. A fit of probabilities (graded): open markers at
    the mean probability of each level (no binomial interval: they are not counts), a broad pale
    line in the same dash, an open diamond; each named by its source in the legend."""
    points, graded = row.points, row.source == PROBABILITIES
    marker = {"color": colour, "size": 8 if graded else 7, "symbol": f"{symbol}-open" if graded else symbol}
    if graded:
        spread, said = None, [f"{group}<br>{label(param)} {p['x']:+.{digits}f}: mean probability "
                              f"{100 * p['proportion']:.0f}% over {p['n']} answers" for p in points]  # fmt: skip
    else:
        spread = {"type": "data", "symmetric": False, "array": [p["high"] - p["proportion"] for p in points],
                  "arrayminus": [p["proportion"] - p["low"] for p in points], "thickness": 1, "width": 2}  # fmt: skip
        said = [f"{group}<br>{label(param)} {p['x']:+.{digits}f}: {p['positives']}/{p['n']} "
                f"({100 * p['proportion']:.0f}%)" for p in points]  # fmt: skip
    traces = [{
        "type": "scatter", **on, "x": [p["x"] for p in points], "y": [p["proportion"] for p in points],
        "mode": "markers", "name": group, "legendgroup": group, "showlegend": False, "marker": marker,
        "hovertext": said, "hoverinfo": "text", **({"error_y": spread} if spread else {}),
    }]  # fmt: skip
    if row.curve_x:
        width = 6 if graded else 3.5 if is_person(row.model) else 2
        traces.append({
            "type": "scatter", **on, "x": list(row.curve_x), "y": list(row.curve_p), "mode": "lines",
            "name": group, "legendgroup": group, "showlegend": legend, "hoverinfo": "skip",
            "line": {"color": colour, "dash": dash(row.mode), "width": width}, "opacity": 0.4 if graded else 1,
        })  # fmt: skip
    if row.pse is not None:
        low, high = row.pse_low, row.pse_high
        traces.append({
            "type": "scatter", **on, "x": [row.pse], "y": [0.5], "mode": "markers", "name": group,
            "legendgroup": group, "showlegend": False,
            "marker": {"color": colour, "size": 12 if graded else 11, "symbol": "diamond-open" if graded else "diamond",
                       "line": {"width": 2, "color": colour} if graded else {"width": 1, "color": "white"}},
            "error_x": {"type": "data", "symmetric": False, "thickness": 2, "width": 5,
                        "array": [0 if high is None else high - row.pse],
                        "arrayminus": [0 if low is None else row.pse - low]},
            "hovertext": [f"{group}: PSE {row.pse:+.{digits}f} (95% CI {_band(low, high, digits)})"],
            "hoverinfo": "text",
        })  # fmt: skip
    return traces


def _fit_table(rows: Sequence[FitRow], digits: int) -> pd.DataFrame:
    """People first (the reference the models are read against), then each model and mode, its
    fit of choices above its fit of probabilities (`source`, as `report --fit` marks them)."""
    records = [
        [r.model, r.mode, PANELS.get(_panel(r), "all"), r.source, _fmt(r.pse, digits),
         _band(r.pse_low, r.pse_high, digits), DASH if r.width is None else f"{r.width:.{digits}f}", str(r.n), r.status]
        for r in sorted(rows, key=lambda r: (not is_person(r.model), r.model, r.mode, list(PANELS).index(_panel(r))
                                             if _panel(r) in PANELS else 0, r.source != CHOICES))
    ]  # fmt: skip
    return pd.DataFrame(records, columns=FIT_COLUMNS)


def _source(row: MagnitudeRow) -> str:
    """What a magnitude was made of: its polarity fits' source."""
    return next((fit.source for fit in row.fits.values()), CHOICES)


def _magnitude_table(rows: Sequence[MagnitudeRow], digits: int) -> pd.DataFrame:
    records = [
        [m.model, m.mode, _source(m), _fmt(m.magnitude, digits), _band(m.magnitude_low, m.magnitude_high, digits),
         _fmt(m.bias, digits), _band(m.bias_low, m.bias_high, digits), m.status]
        for m in sorted(rows, key=lambda m: (not is_person(m.model), m.model, m.mode, _source(m) != CHOICES))
    ]  # fmt: skip
    return pd.DataFrame(records, columns=MAGNITUDE_COLUMNS)

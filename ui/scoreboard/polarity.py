"""Perceive or recall, on the Scoreboard's Curves view of an illusion: for each model (and people,
pooled), how often a choice tracks the drawn difference, the inducers flipped against it, or
neither, with Wilson intervals (`probes.analysis.polarity`, what `report --polarity` prints).

Read from the same detailed results as the curves (the series drawn there), so opening the view
costs one more pass over results already in memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from probes.analysis.polarity import PolarityRow, polarity_rows, pooled
from probes.people.human import is_human
from probes.running.store import Store
from ui.scoreboard.curves import detailed, series_heads
from ui.scoreboard.data import Filters, Tally
from ui.scoreboard.style import CHANCE_COLOUR, PEOPLE, empty, is_person, label, styled
from ui.scoreboard.tables import DASH

COLUMNS = ["model", "mode", "n", "tracks the difference", "tracks the inducers", "neither",
           "pairs: moved with the inducers", "pairs: same choice", "controls right"]  # fmt: skip
SHARES = (  # what a choice tracked, its colour: right is green as elsewhere, fooled red
    ("difference", "tracks the difference", "#22C55E"),
    ("inducers", "tracks the inducers", "#EF4444"),
    ("neither", "neither (no choice read)", CHANCE_COLOUR),
)


@dataclass(frozen=True)
class Polarity:
    figure: go.Figure
    note: str
    table: pd.DataFrame


def polarity_view(stores: Sequence[Store], tally: Tally, filters: Filters, origins: frozenset[str]) -> Polarity:
    heads, people, _ = series_heads(tally, filters, origins)
    results = detailed(stores, filters.benchmark or "", list(heads) + people, origins)
    rows = [r for r in polarity_rows(results) if r.group == "overall"]
    # People pooled as one observer, each matched pair taken within one person.
    rows = [r for r in rows if not is_human(r.model)] + pooled([r for r in rows if is_human(r.model)], PEOPLE)
    if not rows:
        return Polarity(
            empty("No illusion replies with inducers flipped against the truth under these filters."),
            "",
            pd.DataFrame([], columns=COLUMNS),
        )
    rows.sort(key=lambda r: (not is_person(r.model), r.model, r.mode))
    note = (
        "**Perceive or recall.** On the items whose inducers are flipped against the truth, the share of choices "
        "that track the **difference drawn** (what a geometry-only observer does), the **inducers** (the answer "
        "the illusion makes look true), or **neither** (no choice read), with Wilson 95% intervals. Pairs: the same "
        "targets under both polarities; a choice that *moved with the inducers* follows them, one that stays the "
        "same tracks the picture (or a fixed habit: compare the controls, the same targets without inducers)."
    )
    return Polarity(_figure(rows), note, _table(rows))


def _name(row: PolarityRow) -> str:
    name = row.model if is_person(row.model) else f"{row.model} · {row.mode}"
    return label(name if row.perturbation == "none" else f"{name} · {row.perturbation}")


def _figure(rows: Sequence[PolarityRow]) -> go.Figure:
    names = [_name(r) for r in rows]
    traces = []
    for field, title, colour in SHARES:
        shares = [getattr(r, f"{field}_share") or 0.0 for r in rows]
        lows = [getattr(r, f"{field}_low") or 0.0 for r in rows]
        highs = [getattr(r, f"{field}_high") or 0.0 for r in rows]
        traces.append({
            "type": "bar", "orientation": "h", "y": names, "x": shares, "name": title,
            "marker": {"color": colour},
            "text": [f"{s:.0f}%" if s >= 8 else "" for s in shares], "textposition": "inside",
            "hovertext": [f"{n}: {title} {s:.1f}% (95% CI {lo:.1f} to {hi:.1f}), {getattr(r, field)} of {r.n}"
                          for n, s, lo, hi, r in zip(names, shares, lows, highs, rows, strict=True)],
            "hoverinfo": "text",
        })  # fmt: skip
    figure = go.Figure(data=traces, layout={"barmode": "stack"}, _validate=False)
    styled(figure, "Incongruent items: what each choice tracked", height=160 + 46 * len(rows))
    figure.update_layout(
        xaxis={"range": [0, 100], "ticksuffix": "%"},
        yaxis={"autorange": "reversed", "automargin": True},
        legend={"orientation": "h", "y": -0.25},
    )
    return figure


def _band(share: float | None, low: float | None, high: float | None) -> str:
    return DASH if share is None else f"{share:.1f}% ({low:.1f} to {high:.1f})"


def _table(rows: Sequence[PolarityRow]) -> pd.DataFrame:
    records = [
        [r.model, r.mode, str(r.n), _band(r.difference_share, r.difference_low, r.difference_high),
         _band(r.inducers_share, r.inducers_low, r.inducers_high), _band(r.neither_share, r.neither_low, r.neither_high),
         DASH if not r.pairs else f"{r.moved} of {r.pairs} ({r.moved_share:.0f}%)",
         DASH if not r.pairs else f"{r.fixed} of {r.pairs}",
         DASH if r.control_accuracy is None else f"{r.control_accuracy:.1f}% of {r.control_n}"]
        for r in rows
    ]  # fmt: skip
    return pd.DataFrame(records, columns=COLUMNS)

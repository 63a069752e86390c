"""The Scoreboard's compare panel (issue 14): is A really better than B on the same items?

A and B are two models, two modes or two perturbations of the chosen benchmark; B may be several
(each compared with A, Holm's correction across the table). `probes.analysis.paired` pairs the
items both answered and gives the discordant counts, the accuracy difference with its paired
bootstrap 95% interval and McNemar's exact p. The chart draws each difference with its interval
against zero.

Beside accuracy, when the benchmark holds results under option rotations (`run --perturb
rotate-options-all`): consistency (right under every order of an item's options, after MMBench's
CircularEval) and position bias (how often each shown place is chosen against how often it holds
the answer), from `probes.analysis.consistency`. Both need the item references of the rotation
results, read only then (ui.scoreboard.curves.detailed)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from probes.analysis.consistency import consistency, position_bias, rotation_of
from probes.analysis.paired import Coded, CompareError, Comparison, compare_coded
from probes.running.store import Store
from ui.scoreboard.curves import detailed
from ui.scoreboard.data import Filters, Tally, mode_order, selected
from ui.scoreboard.items import compared, graded_keys
from ui.scoreboard.style import CHANCE_COLOUR, WHISKER, Colours, empty, label, pattern, styled
from ui.scoreboard.tables import DASH

AXES = {"models": "model", "modes": "mode", "perturbations": "perturbation"}
# Which filter a comparison along an axis leaves out (comparing models: every model).
IGNORED = {"models": "models", "modes": "mode", "perturbations": "perturbation"}
MAX_B = 12  # comparisons in one table
PAIRED_COLUMNS = ["A", "B", "shared items", "A only right", "B only right", "A − B (points)", "95% CI", "p",
                  "p (Holm)"]  # fmt: skip
CONSISTENCY_COLUMNS = ["model", "mode", "accuracy", "consistency", "items", "incomplete", "most over-chosen place",
                       "chosen − right (points)"]  # fmt: skip


@dataclass(frozen=True)
class Paired:
    note: str
    table: pd.DataFrame
    figure: go.Figure


@dataclass(frozen=True)
class Consistent:
    note: str
    table: pd.DataFrame
    figure: go.Figure


def values(tally: Tally, filters: Filters, origins: Iterable[str], axis: str) -> list[str]:
    """The values of the axis among the results the filters pass (the axis's own filter left out)."""
    index = {"models": 1, "modes": 2, "perturbations": 3}[axis]
    found = {key[index] for key in selected(tally, filters, origins, ignore=(IGNORED[axis],))}
    return sorted(found, key=mode_order) if axis == "modes" else sorted(found)


def defaults(tally: Tally, filters: Filters, origins: Iterable[str], axis: str,
             a: str | None = None) -> tuple[str | None, list[str]]:  # fmt: skip
    """A (unless given): the value with the most graded answers; B: the one sharing the most items with A."""
    graded = graded_keys(tally, filters, origins, IGNORED[axis], AXES[axis])
    if a not in graded:
        a = max(graded, key=lambda v: (len(graded[v]), v), default=None)
    if a is None or len(graded) < 2:
        return a, []
    shared = {v: np.intersect1d(graded[a], graded[v], assume_unique=True).size for v in graded if v != a}
    b = max(shared, key=lambda v: (shared[v], v))
    return a, [b]


def pairs(tally: Tally, filters: Filters, origins: Iterable[str], axis: str, chosen: Sequence[str]) -> Coded:
    """What pairing reads of the results of the values compared (A and the Bs) that the other filters pass."""
    return compared(tally, filters, origins, IGNORED[axis], AXES[axis], [v for v in chosen if v])


def _p(value: float) -> str:
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def paired(selected: Coded, axis: str, a: str | None, bs: Sequence[str], colours: Colours) -> Paired:
    """The paired table and its chart for A against each B, on `selected` (one benchmark)."""
    bs = [b for b in dict.fromkeys(bs) if b and b != a][:MAX_B]
    if not a or not bs:
        return Paired("Choose A and at least one B to compare.", pd.DataFrame([], columns=PAIRED_COLUMNS),
                      empty("Choose A and B."))  # fmt: skip
    try:
        rows = compare_coded(selected, [Comparison(a, b, AXES[axis]) for b in bs])
    except CompareError as exc:
        return Paired(label(str(exc)), pd.DataFrame([], columns=PAIRED_COLUMNS), empty("Nothing to compare."))
    records = [
        [r.a, r.b, str(r.n_shared), str(r.a_only), str(r.b_only), DASH if r.diff is None else f"{r.diff:+.1f}",
         DASH if r.diff_low is None else f"{r.diff_low:+.1f} to {r.diff_high:+.1f}",
         _p(r.p_value) if r.n_shared else DASH, _p(r.p_holm) if r.n_shared else DASH]
        for r in rows
    ]  # fmt: skip
    table = pd.DataFrame(records, columns=PAIRED_COLUMNS)
    usable = [r for r in rows if r.n_shared and r.diff is not None]
    if not usable:
        return Paired("A and B share no answered item here: nothing is paired.", table, empty("No shared items."))
    figure = go.Figure()
    names = [label(f"{r.a} − {r.b}") for r in usable]
    figure.add_scatter(
        x=[r.diff for r in usable], y=names, mode="markers",
        marker={"size": 12, "symbol": "diamond",
                "color": [colours(r.b) if axis == "models" else CHANCE_COLOUR for r in usable]},
        error_x={"type": "data", "symmetric": False, "array": [r.diff_high - r.diff for r in usable],
                 "arrayminus": [r.diff - r.diff_low for r in usable], "thickness": 2, "width": 6, "color": WHISKER},
        hovertext=[f"{label(r.a)} − {label(r.b)}: {r.diff:+.1f} points (95% CI {r.diff_low:+.1f} to "
                   f"{r.diff_high:+.1f}), {r.n_shared} shared items, p {_p(r.p_value)}" for r in usable],
        hoverinfo="text",
    )  # fmt: skip
    figure.update_layout(shapes=[{"type": "line", "x0": 0, "x1": 0, "y0": 0, "y1": 1, "xref": "x", "yref": "paper",
                                  "line": {"color": CHANCE_COLOUR, "dash": "dash"}}])  # fmt: skip
    widest = max(max(abs(r.diff_low), abs(r.diff_high)) for r in usable)
    styled(figure, "Paired difference in accuracy, A − B", height=max(220, 120 + 48 * len(usable)), showlegend=False)
    figure.update_xaxes(title="percentage points (A better → right)", range=[-widest * 1.15 - 1, widest * 1.15 + 1])
    figure.update_yaxes(categoryorder="array", categoryarray=names[::-1])
    note = (
        f"**{len(usable)}** comparison(s) of {axis} on the items both answered: the discordant pairs, the difference "
        "with a paired bootstrap 95% interval, McNemar's exact p and Holm's correction across the table."
    )
    return Paired(note, table, figure)


# --- consistency and position bias -------------------------------------------------------------


def has_rotations(perturbations: Iterable[str]) -> bool:
    return any(rotation_of(p) is not None for p in perturbations)


def rotation_heads(tally: Tally, filters: Filters, origins: Iterable[str]) -> list[tuple[str, str, str]]:
    """The (model, mode, perturbation) series of the filters (any perturbation) under a rotation
    of the options or none: what consistency and position bias read."""
    return sorted({(key[1], key[2], key[3]) for key in selected(tally, filters, origins, ignore=("perturbation",))
                   if rotation_of(key[3]) is not None or key[3] == "none"})  # fmt: skip


def consistent(stores: Sequence[Store], heads: Sequence[tuple[str, str, str]], benchmark: str, origins: frozenset[str],
               colours: Colours) -> Consistent:  # fmt: skip
    """Consistency across option orders and position bias, from the rotation results' item references."""
    results = detailed(stores, benchmark, heads, origins)
    rows = consistency(results)
    rotated = {(r.model, r.mode) for r in results if rotation_of(r.perturbation) is not None}
    choices = [
        r for r in results if r.item_ref is not None and r.item_ref.options_count and (r.model, r.mode) in rotated
    ]
    biases = {(b.model, b.mode): b for b in position_bias(choices, by_perturbation=False)}
    records = []
    for row in rows:
        bias = biases.get((row.model, row.mode))
        records.append([
            row.model, row.mode, DASH if row.accuracy is None else f"{row.accuracy:.1f}",
            DASH if row.consistency is None else f"{row.consistency:.1f}", str(row.items), str(row.incomplete),
            bias.over_chosen if bias else DASH, f"{bias.excess:+.1f}" if bias else DASH,
        ])  # fmt: skip
    table = pd.DataFrame(records, columns=CONSISTENCY_COLUMNS)
    note = (
        "Under every rotation of the options: **accuracy** over all orders, **consistency** the share of items right "
        "under every order (a model naming the first label always scores 1/k and 0), and the place chosen most "
        "above its share of right answers."
    )
    return Consistent(note, table, _bias_figure(list(biases.values()), colours))


def _bias_figure(biases: Sequence, colours: Colours) -> go.Figure:
    if not biases:
        return empty("No multiple-choice replies with their option counts to count places in.")
    figure = go.Figure()
    for bias in sorted(biases, key=lambda b: (b.model, mode_order(b.mode))):
        figure.add_bar(
            name=label(f"{bias.model} · {bias.mode}"), x=[s.label for s in bias.positions],
            y=[100 * (s.chosen_share - s.right_share) for s in bias.positions],
            marker={"color": colours(bias.model), "pattern": {"shape": pattern(bias.mode)}},
            hovertext=[f"{label(bias.model)} · {label(bias.mode)}: place {s.label} chosen {100 * s.chosen_share:.0f}%, "
                       f"right {100 * s.right_share:.0f}% (n {bias.n})" for s in bias.positions],
            hoverinfo="text",
        )  # fmt: skip
    figure.update_layout(shapes=[{"type": "line", "x0": 0, "x1": 1, "y0": 0, "y1": 0, "xref": "paper", "yref": "y",
                                  "line": {"color": CHANCE_COLOUR}}])  # fmt: skip
    styled(figure, "Position bias: how much more often each place is chosen than it is right", barmode="group")
    figure.update_xaxes(title="shown place", type="category")
    figure.update_yaxes(title="chosen − right (points)")
    return figure

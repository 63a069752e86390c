"""The leaderboard across benchmarks, the Scoreboard's first view (as open_vlm_leaderboard opens):
a row per model and mode, a column per benchmark with its accuracy, and the reference rows
pinned above the models: chance, people (every human/<name> pooled) and each paper's published
numbers, each tinted apart.

Only unperturbed results count here (a perturbation is an experiment on a benchmark, shown in its
own view). Accuracy is computed as `report` computes it (the mean score of the replies, errors left
out), in one pass over the results, and kept until the results change: the leaderboard reads every
benchmark, and a change of filters must not pay for that again."""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass

import pandas as pd
from pandas.io.formats.style import Styler

from probes.analysis.report import reference_rows
from probes.core.types import Result
from probes.people.human import is_human
from ui.scoreboard_data import mode_order, summary
from ui.scoreboard_style import PEOPLE
from ui.scoreboard_tables import DASH, notes, tint

FIXED = ["model", "mode", "mean", "of"]


@dataclass(frozen=True)
class Board:
    table: Styler | pd.DataFrame
    note: str  # markdown under the table: how rows are ordered, the [k] notes of published rows
    benchmarks: tuple[str, ...]
    # (model, mode, source) -> {benchmark: accuracy}: what the table shows, for tests and charts
    cells: dict[tuple[str, str, str], dict[str, float]]


_lock = threading.Lock()
_kept: dict[str, tuple[list[Result], Board]] = {}


def leaderboard(results: list[Result]) -> Board:
    """Kept for the same list of results (ui.scoreboard_data keeps that list until the store changes)."""
    with _lock:
        hit = _kept.get("board")
        if hit is not None and hit[0] is results:
            return hit[1]
    board = build(results)
    with _lock:
        _kept["board"] = (results, board)
    return board


def accuracies(results: list[Result]) -> tuple[dict[tuple[str, str, str], tuple[int, float]], int]:
    """(benchmark, model, mode) -> (n, accuracy %) over unperturbed results, people pooled; and
    how many people. Read off the views' one-pass summary (ui.scoreboard_data.summary)."""
    sums: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    persons: set[str] = set()
    for (benchmark, model, mode, perturbation, _), (_, scored, total) in summary(results).cells.items():
        if perturbation != "none":
            continue
        if is_human(model):
            persons.add(model)
            model = PEOPLE
        cell = sums[(benchmark, model, mode)]
        cell[0] += scored
        cell[1] += total
    found = {key: (int(n), round(100 * total / n, 2)) for key, (n, total) in sums.items() if n}
    return found, len(persons)


def build(results: list[Result]) -> Board:
    measured, persons = accuracies(results)
    benchmarks = tuple(sorted({b for b, _, _ in measured}))
    cells: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for (benchmark, model, mode), (_, accuracy) in measured.items():
        source = "people, pooled" if model == PEOPLE else "measured"
        name = f"{PEOPLE} ({persons} {'person' if persons == 1 else 'persons'})" if model == PEOPLE else model
        cells[(name, mode, source)][benchmark] = accuracy
    marks: dict[str, int] = {}
    for row in reference_rows(benchmarks):
        if row.group != "overall" or row.accuracy is None:
            continue
        if row.source == "chance":
            key = ("chance", "any", "chance")
        else:
            source = f"published ({(row.paper or 'paper').split(',')[0]})"
            note = getattr(row, "note", None)
            if note:
                source += f" [{marks.setdefault(note, len(marks) + 1)}]"
            key = (row.model, row.mode, source)
        cells[key][row.benchmark] = row.accuracy
    ordered = sorted(cells, key=lambda key: _rank(key, cells[key]))
    records = []
    for key in ordered:
        values = cells[key]
        mean = sum(values.values()) / len(values)
        records.append([key[0], key[1], f"{mean:.1f}", str(len(values)),
                        *(f"{values[b]:.1f}" if b in values else DASH for b in benchmarks), key[2]])  # fmt: skip
    frame = pd.DataFrame(records, columns=[*FIXED, *benchmarks, "source"]).astype(str)
    kinds = [_kind(source) for _, _, source in ordered]
    note = (
        "A row per model and mode, a column per benchmark (accuracy %, unperturbed results). *Chance* and "
        "*people* (everyone who took items, pooled) first; then the models and the papers' *published* numbers "
        "(tinted) by their **mean** over the benchmarks they have (**of** them). Click a benchmark's column to "
        "open it below."
    )
    if marks:
        note += "\n\n" + notes(marks)
    return Board(tint(frame, kinds) if records else frame, note, benchmarks, dict(cells))


def _kind(source: str) -> str:
    if source.startswith("published"):
        return "published"
    return {"chance": "chance", "people, pooled": "people"}.get(source, "measured")


def _rank(key: tuple[str, str, str], values: dict[str, float]) -> tuple:
    """Chance, then people, pinned; then models and papers together, best mean first, so that a
    published number sits beside the models it compares with."""
    pinned = {"chance": 0, "people": 1}.get(_kind(key[2]), 2)
    mean = sum(values.values()) / len(values)
    return (pinned, -round(mean, 1), -len(values), key[0].casefold(), mode_order(key[1]), key[2])

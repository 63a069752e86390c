"""The leaderboard across benchmarks, the Scoreboard's first view (as open_vlm_leaderboard opens):
a row per model and mode, a column per benchmark with its accuracy, and the reference rows
pinned above the models: chance, people (every human/<name> pooled) and each paper's published
numbers, each tinted apart.

Only unperturbed results count here (a perturbation is an experiment on a benchmark, shown in its
own view). Accuracy is computed as `report` computes it (the mean score of the replies, errors left
out), from the overall counts the stores keep (a few hundred cells for a million results), and
kept until a store changes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd
from pandas.io.formats.style import Styler

from probes.analysis.report import reference_rows
from probes.analysis.scoring import Counts
from probes.people.human import is_human
from ui.scoreboard.data import Head, Tally, derived, mode_order, shown
from ui.scoreboard.style import PEOPLE
from ui.scoreboard.tables import DASH, notes, tint

# The source beside the model it qualifies (last, it was cut off past a dozen benchmarks).
FIXED = ["model", "mode", "source", "mean", "of"]


@dataclass(frozen=True)
class Board:
    table: Styler | pd.DataFrame
    note: str  # markdown under the table: how rows are ordered, the [k] notes of published rows
    benchmarks: tuple[str, ...]
    # (model, mode, source) -> {benchmark: accuracy}: what the table shows, for tests and charts
    cells: dict[tuple[str, str, str], dict[str, float]]


def leaderboard(tally: Tally, origins: Iterable[str]) -> Board:
    """Kept with the counts (ui.scoreboard.data keeps them until a store changes)."""
    wanted = frozenset(origins)
    return derived(tally, f"leaderboard\x1f{sorted(wanted)}", lambda t: build(shown(t, wanted)))


Measured = tuple[int, float, float | None, float | None]  # n, accuracy %, Wilson 95% low and high


def accuracies(cells: Mapping[Head, Counts]) -> tuple[dict[tuple[str, str, str], Measured], int]:
    """(benchmark, model, mode) -> (n, accuracy %, interval) over unperturbed results, people
    pooled; and how many people. Read off the overall counts of the origins shown."""
    sums: dict[tuple[str, str, str], Counts] = defaultdict(Counts)
    persons: set[str] = set()
    for (benchmark, model, mode, perturbation, _), cell in cells.items():
        if perturbation != "none" or not cell.results:
            continue
        if is_human(model):
            persons.add(model)
            model = PEOPLE
        sums[(benchmark, model, mode)].add(cell)
    found = {}
    for key, cell in sums.items():
        if cell.scored:  # the row's own accuracy and interval, as `report` computes them
            row = cell.row(key[0], key[1], key[2], "none", "overall")
            found[key] = (cell.scored, row.accuracy, row.ci_low, row.ci_high)
    return found, len(persons)


def build(counts: Mapping[Head, Counts]) -> Board:
    measured, persons = accuracies(counts)
    benchmarks = tuple(sorted({b for b, _, _ in measured}))
    cells: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    texts: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)  # measured: with n and interval
    for (benchmark, model, mode), (n, accuracy, low, high) in measured.items():
        source = "people, pooled" if model == PEOPLE else "measured"
        name = f"{PEOPLE} ({persons} {'person' if persons == 1 else 'persons'})" if model == PEOPLE else model
        cells[(name, mode, source)][benchmark] = accuracy
        texts[(name, mode, source)][benchmark] = _with_interval(accuracy, low, high, n)
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
        shown = texts.get(key, {})
        records.append([key[0], key[1], key[2], f"{mean:.1f}", str(len(values)),
                        *(shown.get(b, f"{values[b]:.1f}") if b in values else DASH for b in benchmarks)])  # fmt: skip
    frame = pd.DataFrame(records, columns=[*FIXED, *benchmarks]).astype(str)
    kinds = [_kind(source) for _, _, source in ordered]
    note = (
        "A row per model and mode, a column per benchmark (accuracy %, unperturbed results; measured ones with "
        "their Wilson 95% interval and n, the replies scored). *Chance* and "
        "*people* (everyone who took items, pooled) first; then the models and the papers' *published* numbers "
        "(tinted) by their **mean** over the benchmarks they have (**of** them). Click a benchmark's column to "
        "open it below."
    )
    if marks:
        note += "\n\n" + notes(marks)
    return Board(tint(frame, kinds) if records else frame, note, benchmarks, dict(cells))


def _with_interval(accuracy: float, low: float | None, high: float | None, n: int) -> str:
    """Reads "72.3 [61.2–81.5] n=64": the number first, as it sorts and as `report` prints it."""
    if low is None or high is None:
        return f"{accuracy:.1f} n={n}"
    return f"{accuracy:.1f} [{low:.1f}–{high:.1f}] n={n}"


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

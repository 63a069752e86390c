"""The leaderboard across benchmarks, the Scoreboard's first view (as open_vlm_leaderboard opens):
a row per model and mode, a column per benchmark with its accuracy, and the reference rows
pinned above the models: chance, people (every human/<name> pooled) and each paper's published
numbers, each tinted apart.

Only unperturbed results count here (a perturbation is an experiment on a benchmark, shown in its
own view). Accuracy is computed as `report` computes it (the mean score of the replies, errors left
out), from the overall counts the stores keep (a few hundred cells for a million results), and
kept until a store changes."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd
from pandas.io.formats.style import Styler

from probes.analysis.report import reference_rows
from probes.analysis.scoring import Counts
from probes.people.human import is_human
from ui.scoreboard.data import Head, Tally, derived, mode_order, shown
from ui.scoreboard.style import PEOPLE
from ui.scoreboard.tables import DASH, notes, tint

# The source beside the model it qualifies (last, it was cut off past a dozen benchmarks); then the
# rank and the mean it ranks by, over the benchmarks every ranked row has.
FIXED = ["model", "mode", "source", "rank", "mean"]
MAX_NAMED = 12  # rows left out of the ranking named in the note (per missing set); past it, counted
Z95 = 1.959964


@dataclass(frozen=True)
class Board:
    table: Styler | pd.DataFrame
    note: str  # markdown under the table: what the rank is over, what it left out, the [k] notes of published rows
    benchmarks: tuple[str, ...]
    # (model, mode, source) -> {benchmark: accuracy}: what the table shows, for tests and charts
    cells: dict[tuple[str, str, str], dict[str, float]]
    ranked_over: tuple[str, ...] = ()  # the benchmarks the rank's mean is over (every ranked row has them)
    ranked: tuple[tuple[str, str, str], ...] = ()  # the ranked rows, best first
    left_out: dict[tuple[str, str, str], tuple[str, ...]] = field(default_factory=dict)  # row -> what it lacks


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
    spreads: dict[tuple[str, str, str], dict[str, Measured]] = defaultdict(dict)  # measured: n and interval
    for (benchmark, model, mode), figures in measured.items():
        source = "people, pooled" if model == PEOPLE else "measured"
        name = f"{PEOPLE} ({persons} {'person' if persons == 1 else 'persons'})" if model == PEOPLE else model
        cells[(name, mode, source)][benchmark] = figures[1]
        spreads[(name, mode, source)][benchmark] = figures
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
    contenders = [key for key in cells if _kind(key[2]) in ("measured", "published")]
    over = ranked_over({key: frozenset(cells[key]) for key in contenders})
    ranked = sorted(
        (key for key in contenders if over <= cells[key].keys()), key=lambda key: _rank(key, cells[key], over)
    )
    left_out = {key: tuple(sorted(over - cells[key].keys())) for key in contenders if key not in ranked}
    pinned = sorted((key for key in cells if key not in contenders), key=lambda key: _kind(key[2]) != "chance")
    unranked = sorted(left_out, key=lambda key: (key[0].casefold(), mode_order(key[1]), key[2]))
    records, kinds = [], []
    for key in [*pinned, *ranked, *unranked]:
        rank = str(ranked.index(key) + 1) if key in ranked else ("" if key in pinned else DASH)
        mean = _mean_text(cells[key], spreads.get(key, {}), over) if over and over <= cells[key].keys() else DASH
        shown = {b: _with_interval(*spreads[key][b]) if b in spreads.get(key, {}) else f"{v:.1f}"
                 for b, v in cells[key].items()}  # fmt: skip
        records.append([key[0], key[1], key[2], rank, mean, *(shown.get(b, DASH) for b in benchmarks)])
        kinds.append(_kind(key[2]))
    frame = pd.DataFrame(records, columns=[*FIXED, *benchmarks]).astype(str)
    note = (
        "A row per model and mode, a column per benchmark (accuracy %, unperturbed results; measured ones with "
        "their Wilson 95% interval and n, the replies scored). *Chance* and *people* (everyone who took items, "
        "pooled) first; then the models and the papers' *published* numbers (tinted), "
        + _ranking_words(over, left_out)
        + " Click a benchmark's column to open it below."
    )
    if marks:
        note += "\n\n" + notes(marks)
    table = tint(frame, kinds) if records else frame
    return Board(table, note, benchmarks, dict(cells), tuple(sorted(over)), tuple(ranked), left_out)


def ranked_over(rows: Mapping[tuple[str, str, str], frozenset[str]]) -> frozenset[str]:
    """The benchmarks a ranking is over: a set every ranked row has a figure on, so that each mean
    is over the same benchmarks (a mean over different ones ranks unlike things). Among the sets
    the rows have and those they share: one that ranks at least two measured rows where any does
    (a ranking compares), then the most measured work (rows ranked times benchmarks), the most
    measured rows, then the papers' rows."""
    found = {benchmarks for benchmarks in rows.values() if benchmarks}
    while True:  # every set two rows share, until nothing new (a few dozen rows, a few dozen benchmarks)
        shared = {a & b for a in found for b in found if a & b} - found
        if not shared or len(found) > 512:
            break
        found |= shared

    def worth(benchmarks: frozenset[str]) -> tuple:
        having = [key for key, has in rows.items() if benchmarks <= has]
        measured = sum(1 for key in having if _kind(key[2]) == "measured")
        published = len(having) - measured
        return (min(measured, 2), measured * len(benchmarks), measured, published * len(benchmarks),
                len(benchmarks), sorted(benchmarks))  # fmt: skip

    return max(found, key=worth, default=frozenset())


def _ranking_words(over: frozenset[str], left_out: Mapping[tuple[str, str, str], tuple[str, ...]]) -> str:
    if not over:
        return "not ranked: no benchmark has a figure from them."
    said = (f"**ranked** by their **mean** over {', '.join(sorted(over))}, the "
            f"{'benchmark' if len(over) == 1 else 'benchmarks'} every ranked row has (a mean over different "
            "benchmarks would rank unlike things); a measured mean has the interval its benchmarks' intervals give, "
            "and n over them.")  # fmt: skip
    lacking: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for model, mode, source in sorted(left_out, key=lambda key: (key[0].casefold(), mode_order(key[1]))):
        lacking[left_out[(model, mode, source)]].append(model if mode == "0-shot" else f"{model} {mode}")
    if lacking:
        groups = []
        for missing, names in sorted(lacking.items()):
            more = f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
            groups.append(f"for want of a figure on {', '.join(missing)}: {', '.join(names[:MAX_NAMED])}{more}")
        said += f" **Left out of the ranking** (shown last), {'; '.join(groups)}."
    return said


def _mean_text(values: Mapping[str, float], spreads: Mapping[str, Measured], over: frozenset[str]) -> str:
    """The mean over `over`; for measured rows with its interval (each benchmark's Wilson interval
    read as a normal one, combined) and n (the replies scored over them)."""
    mean = sum(values[b] for b in over) / len(over)
    if not over <= spreads.keys() or any(spreads[b][2] is None or spreads[b][3] is None for b in over):
        return f"{mean:.1f}"
    spread = math.sqrt(sum(((spreads[b][3] - spreads[b][2]) / (2 * Z95)) ** 2 for b in over)) / len(over)  # type: ignore[operator]
    low, high = max(0.0, mean - Z95 * spread), min(100.0, mean + Z95 * spread)
    return _with_interval(sum(spreads[b][0] for b in over), mean, low, high)


def _with_interval(n: int, accuracy: float, low: float | None, high: float | None) -> str:
    """Reads "72.3 [61.2–81.5] n=64": the number first, as it sorts and as `report` prints it."""
    if low is None or high is None:
        return f"{accuracy:.1f} n={n}"
    return f"{accuracy:.1f} [{low:.1f}–{high:.1f}] n={n}"


def _kind(source: str) -> str:
    if source.startswith("published"):
        return "published"
    return {"chance": "chance", "people, pooled": "people"}.get(source, "measured")


def _rank(key: tuple[str, str, str], values: dict[str, float], over: frozenset[str]) -> tuple:
    """Best mean over `over` first, models and papers together, so that a published number sits
    beside the models it compares with."""
    mean = sum(values[b] for b in over) / len(over) if over else 0.0
    return (-round(mean, 1), key[0].casefold(), mode_order(key[1]), key[2])

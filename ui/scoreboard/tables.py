"""The Scoreboard tab's tables, as people read them: reference rows (chance, the papers' numbers,
people) pinned at the top and tinted apart from the models, one rounding (accuracy and its
interval to one decimal, seconds to two), the benchmark named once above the table rather than on
every row, the breakdown's values under the group's own name, and a published row measured on
another item set marked [k] with its note below the table. A phone gets the same rows as a
stacked list (model, mode, accuracy, interval, n) instead of a table twelve columns wide.

Tables are pandas Stylers (Gradio draws their cell colours); every colour is a translucent tint,
so it reads on the light and the dark theme alike."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
from pandas.io.formats.style import Styler

from probes.analysis.calibration import Calibration
from probes.analysis.scoring import Row
from probes.people.human import is_human
from ui.scoreboard.data import mode_order, numeric
from ui.scoreboard.style import PEOPLE

DASH = "–"
# The calibration columns (probes/analysis/calibration.py): a dash where a row has no answer
# probabilities (a reference row, a model that gave none).
CALIBRATION_COLUMNS = ["mean p(right)", "Brier", "ECE", "n with p"]
Calibrations = Mapping[tuple, Calibration]  # by (benchmark, model, mode, perturbation, group)
TINTS = {
    "chance": "rgba(140, 140, 140, 0.20)",
    "published": "rgba(234, 179, 8, 0.16)",
    "people": "rgba(34, 197, 94, 0.16)",
    "human": "rgba(34, 197, 94, 0.08)",
}
KIND_ORDER = {"chance": 0, "people": 1, "published": 2, "measured": 3, "human": 4}


def kind(row: Row) -> str:
    """chance, published, people (pooled), human (one person) or measured (a model)."""
    if row.source != "measured":
        return row.source if row.source in KIND_ORDER else "published"
    if row.model.startswith(PEOPLE):
        return "people"
    return "human" if is_human(row.model) or row.mode == "human" else "measured"


def source_label(row: Row, marks: dict[str, int] | None = None) -> str:
    if row.source == "published" and row.paper:
        text = f"published ({row.paper.split(',')[0]})"
    else:
        text = {"people": "people, pooled", "human": "human"}.get(kind(row), row.source)
    note = getattr(row, "note", None)  # Row.note is newer than some stores' code: read it softly
    if note and marks is not None:
        text += f" [{marks.setdefault(note, len(marks) + 1)}]"
    return text


def group_key(group: str) -> tuple:
    """Overall first, then by group name, numbers (including "1/4") in numeric order, as `report`."""
    if group == "overall":
        return (0, "", 0.0, "")
    name, _, value = group.partition("=")
    number = numeric(value)
    return (1, name, math.inf if number is None else number, value)


def _order(row: Row) -> tuple:
    return (KIND_ORDER[kind(row)], row.model.casefold(), mode_order(row.mode), row.perturbation, group_key(row.group))


def pinned(rows: Sequence[Row]) -> list[Row]:
    """Chance, people and the papers' numbers first, then the models and each person."""
    return sorted(rows, key=_order)


def _number(value: float | int | None, digits: int | None = None) -> str:
    if value is None:
        return DASH
    return f"{value:.{digits}f}" if digits is not None else str(value)


def interval(row: Row) -> str:
    return DASH if row.ci_low is None or row.ci_high is None else f"{row.ci_low:.1f}{DASH}{row.ci_high:.1f}"


@dataclass(frozen=True)
class Shown:
    table: Styler
    notes: str  # markdown: the [k] notes of published rows
    phone: str  # HTML: the same rows stacked for a narrow screen


def tint(frame: pd.DataFrame, kinds: Sequence[str]) -> Styler:
    colours = [TINTS.get(k, "") for k in kinds]

    def row_style(row: pd.Series) -> list[str]:
        colour = colours[row.name]
        return [f"background-color: {colour}" if colour else ""] * len(row)

    return frame.style.apply(row_style, axis=1)


def calibration_of(row: Row, calibrations: Calibrations) -> Calibration | None:
    return calibrations.get((row.benchmark, row.model, row.mode, row.perturbation, row.group))


def calibration_cells(found: Calibration | None) -> list[str]:
    if found is None:
        return [DASH] * len(CALIBRATION_COLUMNS)
    return [f"{found.mean_p_right:.3f}", f"{found.brier:.3f}", f"{found.ece:.3f}", str(found.n_prob)]


def benchmark_table(rows: Sequence[Row], group: str | None, calibrations: Calibrations | None = None) -> Shown:
    """The table of one benchmark: a column for the breakdown's values (headed by the group's
    name) when there is one, perturbation only when some row is perturbed, and the calibration
    columns (dashes where a row has no probabilities)."""
    calibrations = calibrations or {}
    rows = pinned(rows)
    perturbed = any(r.perturbation != "none" for r in rows)
    prefix = f"{group}="
    marks: dict[str, int] = {}
    # The source beside the name: a reference row says what it is before its numbers.
    columns = ["model", "mode", "source"] + (["perturbation"] if perturbed else []) + ([group] if group else [])
    # How sure beside how right: the calibration next to accuracy and n, where a wide table still shows it.
    columns += ["accuracy", "95% CI", "n", *CALIBRATION_COLUMNS, "unparsed", "refused", "ungraded", "errors",
                "latency (s)"]  # fmt: skip
    records = []
    for row in rows:
        record = [row.model, row.mode, source_label(row, marks)] + ([row.perturbation] if perturbed else [])
        if group:
            record.append("all" if row.group == "overall" else row.group.removeprefix(prefix))
        record += [_number(row.accuracy, 1), interval(row), _number(row.n),
                   *calibration_cells(calibration_of(row, calibrations)), _number(row.unparsed),
                   _number(row.refused), _number(row.ungraded), _number(row.errors),
                   _number(row.mean_latency, 2)]  # fmt: skip
        records.append(record)
    frame = pd.DataFrame(records, columns=columns).astype(str)
    return Shown(tint(frame, [kind(r) for r in rows]), notes(marks), phone_list(rows, group, marks, calibrations))


def notes(marks: dict[str, int]) -> str:
    return "\n".join(
        f"[{k}] {html.escape(note, quote=False)}  " for note, k in sorted(marks.items(), key=lambda kv: kv[1])
    )


def phone_list(rows: Sequence[Row], group: str | None, marks: dict[str, int],
               calibrations: Calibrations | None = None) -> str:  # fmt: skip
    """One line per row for a narrow screen: model, then mode (and group value), accuracy, the
    interval and n, and the calibration where the row has probabilities; reference rows carry
    their kind and tint."""
    prefix = f"{group}="
    items = []
    for row in rows:
        detail = row.mode if row.perturbation == "none" else f"{row.mode} · {row.perturbation}"
        if group:
            detail += f" · {group} {'all' if row.group == 'overall' else row.group.removeprefix(prefix)}"
        what = kind(row)
        tag = "" if what == "measured" else f'<span class="score-kind">{html.escape(source_label(row, marks))}</span>'
        n = "" if row.n is None else f"n {row.n}"
        ci = "" if row.ci_low is None else f"95% CI {interval(row)}"
        found = calibration_of(row, calibrations or {})
        sure = (
            ""
            if found is None
            else f'<span class="score-cal">p(right) {found.mean_p_right:.3f} · Brier {found.brier:.3f} · '
            f"ECE {found.ece:.3f} · n with p {found.n_prob}</span>"
        )
        items.append(
            f'<li class="score-{what}"><span class="score-who">{html.escape(row.model)}</span>{tag}'
            f'<span class="score-detail">{html.escape(detail)}</span>'
            f'<span class="score-acc">{_number(row.accuracy, 1)}%</span>'
            f'<span class="score-ci">{ci}</span><span class="score-n">{n}</span>{sure}</li>'
        )
    return f'<ul class="score-phone-list">{"".join(items)}</ul>' if items else ""


def empty_table(columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame([], columns=list(columns))


# --- latency and mode agreement --------------------------------------------------------------


def latency_table(latencies: Mapping[tuple[str, str], tuple[int, float, float]]) -> pd.DataFrame:
    """Mean and median seconds per reply, per model and mode (ui.scoreboard.items.latencies)."""
    records = [
        [model, mode, replies, f"{mean:.2f}", f"{median:.2f}"]
        for (model, mode), (replies, mean, median) in sorted(latencies.items(),
                                                             key=lambda kv: (kv[0][0], mode_order(kv[0][1])))
    ]  # fmt: skip
    return pd.DataFrame(records, columns=["model", "mode", "replies", "mean (s)", "median (s)"]).astype(str)


def region_name(subset: Sequence[str], modes: Sequence[str]) -> str:
    """ "0-shot only", "0-shot and 4-shot only", "both", "all 3", "none"."""
    if not subset:
        return "none"
    if len(subset) == len(modes) > 1:
        return "both" if len(modes) == 2 else f"all {len(modes)}"
    return " and ".join(subset) + " only"


def agreement_table(agreement: dict | None) -> pd.DataFrame:
    """One line per Venn region; no lines (but the headers) before a model and modes are chosen."""
    if agreement is None:
        return pd.DataFrame([], columns=["right in", "items", "% of items"])
    modes, items = agreement["modes"], agreement["items"]
    records = [
        [region_name(subset, modes), count, f"{100 * count / items:.1f}" if items else DASH]
        for subset, count in sorted(agreement["regions"].items(), key=lambda kv: (-len(kv[0]), kv[0]))
    ]
    return pd.DataFrame(records, columns=["right in", "items", "% of items"]).astype(str)

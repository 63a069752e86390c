"""Scoreboard rows as a plain-text table for the terminal, with the published rows' notes below it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from probes.analysis.calibration import Calibration
from probes.analysis.scoring import Row

HEADER = ("benchmark", "model", "mode", "perturbation", "group", "n", "accuracy", "95% CI", "unparsed", "refused",
          "ungraded", "errors", "source")  # fmt: skip
CALIBRATION = ("p_right", "brier", "ece", "n_prob")


def table(rows: Sequence[Row], calibrations: Mapping[tuple, Calibration] | None = None) -> str:
    """One line per row; a published row with a note (measured on another item set, or another
    question) is marked [k] in the source column and the notes are listed below the table.
    With `calibrations` (some result has probabilities), their columns follow."""
    lines: list[tuple[str, ...]] = [HEADER + (CALIBRATION if calibrations else ())]
    notes: dict[str, int] = {}
    for row in rows:
        accuracy = "-" if row.accuracy is None else f"{row.accuracy:.2f}"
        interval = "-" if row.ci_low is None else f"{row.ci_low:.1f}-{row.ci_high:.1f}"
        source = f"published ({row.paper.split(',')[0]})" if row.paper else row.source
        if row.note:
            source += f" [{notes.setdefault(row.note, len(notes) + 1)}]"
        n, unparsed, refused, ungraded, errors = (
            "-" if v is None else str(v) for v in (row.n, row.unparsed, row.refused, row.ungraded, row.errors)
        )
        line = (row.benchmark, row.model, row.mode, row.perturbation, row.group, n, accuracy, interval, unparsed,
                refused, ungraded, errors, source)  # fmt: skip
        if calibrations:
            found = calibrations.get((row.benchmark, row.model, row.mode, row.perturbation, row.group))
            line += (
                tuple(f"{v:.3f}" for v in (found.mean_p_right, found.brier, found.ece)) + (str(found.n_prob),)
                if found
                else ("-",) * 4
            )
        lines.append(line)
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    text = "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in lines)
    return text + "".join(f"\n[{number}] {note}" for note, number in notes.items())

"""Measuring red targets from their pixels: lengths, areas, gaps and fitted lines.

Each function reads one target as the set of its pixels, (rows, columns), wherever that set
came from: the generator's own target (ground truth) or a red blob that `baseline/pixels` found
in an image (the geometry-only observer). One definition of each measurement serves both, so
the label and the observer cannot disagree about what "longer" means; they differ in how they
find the targets (the generator knows them, the observer segments the picture).

A comparison of two targets says which is favoured by the measured difference, or that they are
equal: exactly equal counts for counted quantities (length in columns, area in pixels, the gap
in pixels between two lines), and within a stated tolerance for quantities read off a fitted
line (a tilted line's length, the Poggendorff offset), whose rasterisation moves them by up to a
pixel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from probes.stimuli.illusions.drawing import Pixels

Favours = Literal["positive", "negative", "equal"]


class MeasureError(ValueError):
    """A target has too few pixels to measure (it fell off the canvas or is hidden)."""


@dataclass(frozen=True)
class Measured:
    """What was measured on the drawn targets.

    `difference` is the measured difference in `unit`, signed so that a positive value favours
    the target that pyllusion's `difference > 0` favours (the top line, the left circle ...).
    Within `tolerance` (inclusive) the targets count as equal.
    """

    values: dict[str, float]
    difference: float
    unit: str
    tolerance: float = 0.0

    @property
    def favours(self) -> Favours:
        if abs(self.difference) <= self.tolerance:
            return "equal"
        return "positive" if self.difference > 0 else "negative"

    def as_params(self) -> dict[str, float | str]:
        """Flat values for an item's parameters (JSON-friendly, rounded)."""
        out: dict[str, float | str] = {f"measured_{k}": round(float(v), 3) for k, v in self.values.items()}
        out["measured_difference"] = round(float(self.difference), 3)
        out["measured_unit"] = self.unit
        out["measured_tolerance"] = self.tolerance
        out["measured_favours"] = self.favours
        return out


def _check(pixels: Pixels, least: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = pixels
    if len(rows) < least:
        raise MeasureError(f"a target has {len(rows)} pixels; it cannot be measured")
    return np.asarray(rows), np.asarray(cols)


def width_px(pixels: Pixels) -> int:
    """Horizontal extent in whole pixels: a horizontal line's length, a disc's diameter."""
    _, cols = _check(pixels, 1)
    return int(cols.max() - cols.min() + 1)


def area_px(pixels: Pixels) -> int:
    return int(len(_check(pixels, 1)[0]))


def centre(pixels: Pixels) -> tuple[float, float]:
    """(x, y) of the pixel centres' mean."""
    rows, cols = _check(pixels, 1)
    return float(cols.mean() + 0.5), float(rows.mean() + 0.5)


def feret_length(pixels: Pixels) -> float:
    """Length along the target's own axis: the spread of its pixel centres along their principal
    direction, plus one pixel (so a horizontal line of n columns measures n)."""
    rows, cols = _check(pixels)
    xs, ys = cols + 0.5, rows + 0.5
    dx, dy = xs - xs.mean(), ys - ys.mean()
    covariance = np.array([[dx @ dx, dx @ dy], [dx @ dy, dy @ dy]])
    values, vectors = np.linalg.eigh(covariance)
    axis = vectors[:, int(np.argmax(values))]
    along = dx * axis[0] + dy * axis[1]
    return float(along.max() - along.min() + 1.0)


def column_line(pixels: Pixels) -> tuple[float, float]:
    """(slope, intercept) of the line y = slope * x + intercept through the middle of the
    target's full columns (pixel-centre coordinates, y down), by least squares. A column counts
    when its run is within a pixel of the usual (median) run: the slanted cut of a square line
    end leaves short runs whose middles are off the axis, and would tilt the fit."""
    rows, cols = _check(pixels)
    columns, index = np.unique(cols, return_inverse=True)
    counts = np.bincount(index)
    middles = np.bincount(index, weights=rows + 0.5) / counts
    full = counts >= np.median(counts) - 1
    if full.sum() < 2:
        raise MeasureError("a target spans fewer than two columns; a line was expected")
    slope, intercept = np.polyfit(columns[full] + 0.5, middles[full], 1)
    return float(slope), float(intercept)


def end_gaps(upper: Pixels, lower: Pixels) -> tuple[int, int]:
    """The white pixels between two near-horizontal lines, counted down the first and the last
    column that both lines cross: (left gap, right gap)."""
    up_rows, up_cols = _check(upper)
    low_rows, low_cols = _check(lower)
    shared = np.intersect1d(up_cols, low_cols)
    if len(shared) < 2:
        raise MeasureError("the two lines share fewer than two columns")
    gaps = []
    for column in (shared[0], shared[-1]):
        bottom_of_upper = up_rows[up_cols == column].max()
        top_of_lower = low_rows[low_cols == column].min()
        gaps.append(int(top_of_lower - bottom_of_upper - 1))
    return gaps[0], gaps[1]

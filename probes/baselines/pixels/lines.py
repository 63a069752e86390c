"""Where a blue and a red line plot meet, by reconstructing both lines from their pixels.

Each line is a function of x through three points at evenly spaced x (left end, middle, right
end). Column by column, the centre of each colour's ink gives the line's height there; a least
squares fit of a two-segment line (a knot at the middle of the plot) through those centres
recovers its three points to a fraction of a pixel. Columns where the two colours come close
are left out of the fits: the line drawn on top hides part of the other there. The meetings
are then counted on the fitted lines exactly as a geometer would: sign changes of the height
difference between the knots, plus knots where the lines touch. On a grey copy the two lines
are two greys (`_grey_traces`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from probes.baselines.pixels.imaging import AnalysisError, colour_coverage, colourless, ink
from probes.core.truth import grey_of

BLUE = (0.0, 0.0, 1.0)
RED = (1.0, 0.0, 0.0)
BLUE_GREY, RED_GREY = grey_of((0, 0, 255)), grey_of((255, 0, 0))  # 29 and 76 in a grey copy
PURE_TOLERANCE = 12  # a stretch whose darkest pixel is this much lighter than red's grey is a fringe
CLEARANCE = 3  # px between the two colours' ink for a column to count in the fits
MIN_COLUMNS = 8  # per segment: fewer columns of clean ink than this and the fit is a guess


@dataclass(frozen=True)
class Trace:
    """One colour's ink, summed per column of the image."""

    amount: np.ndarray  # ink per column, px (the stroke's vertical thickness where it is whole)
    centre: np.ndarray  # ink-weighted mean height per column (NaN where there is none)
    top: np.ndarray  # first row with a trace of the colour (a large number where none)
    bottom: np.ndarray  # last such row (a negative number where none)

    @classmethod
    def of(cls, coverage: np.ndarray, ys: np.ndarray, xs: np.ndarray, width: int) -> Trace:
        amount = np.bincount(xs, weights=coverage, minlength=width)
        moment = np.bincount(xs, weights=coverage * (ys + 0.5), minlength=width)
        with np.errstate(invalid="ignore", divide="ignore"):
            centre = np.where(amount > 0.5, moment / amount, np.nan)
        trace = coverage > 0.05
        top, bottom = np.full(width, 1 << 30), np.full(width, -(1 << 30))
        np.minimum.at(top, xs[trace], ys[trace])
        np.maximum.at(bottom, xs[trace], ys[trace])
        return cls(amount, centre, top, bottom)

    @property
    def columns(self) -> np.ndarray:
        """Columns where the colour is solidly drawn."""
        return np.flatnonzero(self.amount > 0.5)


def count_line_meetings(image: Image.Image) -> int:
    blue, red, clean, columns = (_grey_traces if colourless(image) else _colour_traces)(image)
    if not len(blue.columns) or not len(red.columns):
        raise AnalysisError("expected a blue and a red line; one of them is missing")
    x0, x1 = float(columns[0]), float(columns[-1] + 1)
    blue_line = _fit_two_segments(blue.centre, clean, x0, x1, "blue")
    red_line = _fit_two_segments(red.centre, clean, x0, x1, "red")
    stroke = float(np.median(np.concatenate([blue.amount[clean], red.amount[clean]])))
    return _meetings(blue_line - red_line, tolerance=max(1.0, 0.25 * stroke))


def _colour_traces(image: Image.Image) -> tuple[Trace, Trace, np.ndarray, np.ndarray]:
    """Each colour's trace, the columns where the two are clear of each other, and the columns
    drawn at all."""
    rgb = np.asarray(image.convert("RGB"))
    ys, xs = np.nonzero(ink(image) > 4)  # the lines are thin: work on their pixels only
    colours = rgb[ys, xs]
    blue = Trace.of(colour_coverage(colours, BLUE), ys, xs, rgb.shape[1])
    red = Trace.of(colour_coverage(colours, RED), ys, xs, rgb.shape[1])
    clean = (blue.bottom + CLEARANCE < red.top) | (red.bottom + CLEARANCE < blue.top)
    return blue, red, clean, np.union1d(blue.columns, red.columns)


def _grey_traces(image: Image.Image) -> tuple[Trace, Trace, np.ndarray, np.ndarray]:
    """The same from a grey copy, where the two lines are two greys: blue turns near-black, red
    a dark grey. Column by column, each stretch of ink is one line where the two are apart; it
    is told by its darkest pixel (a stroke this wide covers at least one pixel of every column
    in full) and read as a blend of that grey over white. Only columns that hold one stretch of
    each grey, clear of each other, are used: where the lines come together a single stretch
    holds both, and nothing says which of its pixels is which line."""
    grey = np.asarray(image.convert("L"), dtype=np.int16)
    width = grey.shape[1]
    xs, ys = np.nonzero((255 - grey).T > 4)  # column by column, top to bottom
    if not len(xs):
        raise AnalysisError("the image is blank: nothing is drawn on it")
    level = grey[ys, xs]
    starts = np.flatnonzero(np.concatenate(([True], (xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1] + 1))))
    run = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(xs))))  # each pixel's stretch
    darkest = np.minimum.reduceat(level, starts)
    # Which grey each stretch is: the nearer of the two, if its darkest pixel reaches one of them.
    labels = np.where(np.abs(darkest - BLUE_GREY) <= np.abs(darkest - RED_GREY), 0, 1)
    labels[darkest > RED_GREY + PURE_TOLERANCE] = -1  # a faint fringe, no line's core
    run_column = xs[starts]
    per_column = np.bincount(run_column, minlength=width)
    blues = np.bincount(run_column[labels == 0], minlength=width)
    reds = np.bincount(run_column[labels == 1], minlength=width)
    both = (per_column == 2) & (blues == 1) & (reds == 1)
    drawn = np.bincount(xs, weights=(255 - level) / (255 - BLUE_GREY), minlength=width)
    traces = []
    for label, grey_level in ((0, BLUE_GREY), (1, RED_GREY)):
        mine = (labels[run] == label) & both[xs]
        coverage = np.clip((255 - level[mine]) / (255 - grey_level), 0.0, 1.0)
        traces.append(Trace.of(coverage, ys[mine], xs[mine], width))
    blue, red = traces
    clean = both & ((blue.bottom + CLEARANCE < red.top) | (red.bottom + CLEARANCE < blue.top))
    return blue, red, clean, np.flatnonzero(drawn > 0.5)


def _fit_two_segments(centres: np.ndarray, clean: np.ndarray, x0: float, x1: float, name: str) -> np.ndarray:
    """Heights at (left end, middle, right end) of the best continuous two-segment line."""
    xs = np.arange(len(centres)) + 0.5
    use = clean & ~np.isnan(centres) & (xs > x0) & (xs < x1)
    middle = (x0 + x1) / 2
    left, right = use & (xs < middle), use & (xs >= middle)
    if left.sum() < MIN_COLUMNS or right.sum() < MIN_COLUMNS:
        raise AnalysisError(f"too little of the {name} line is visible to follow it")
    basis = _hat_basis(xs[use], x0, middle, x1)
    heights, *_ = np.linalg.lstsq(basis, centres[use], rcond=None)
    return heights


def _hat_basis(xs: np.ndarray, x0: float, middle: float, x1: float) -> np.ndarray:
    """Piecewise-linear interpolation weights of each x on the knots (x0, middle, x1)."""
    left = np.clip((middle - xs) / (middle - x0), 0.0, 1.0)
    right = np.clip((xs - middle) / (x1 - middle), 0.0, 1.0)
    return np.stack([left, 1.0 - left - right, right], axis=1)


def _meetings(difference: np.ndarray, tolerance: float) -> int:
    """Distinct points where two two-segment lines meet, from their height difference at the
    three knots (linear in between): a knot within `tolerance` is a touch, and a segment whose
    ends lie on opposite sides holds one crossing."""
    signs = np.where(np.abs(difference) <= tolerance, 0, np.sign(difference)).astype(int)
    touches = int((signs == 0).sum())
    crossings = int(((signs[:-1] * signs[1:]) < 0).sum())
    return touches + crossings

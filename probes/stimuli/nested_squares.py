"""Squares nested one inside the other, none touching ("VLMs are blind", task 5).

Looks like the paper's released images: a white square canvas (1000 px there) with black,
axis-aligned square outlines with sharp (mitred) corners. The release draws with matplotlib on
a 10-inch figure, so its "thickness 2, 3, 4" are points: 2.8, 4.2 and 5.6 px at 1000 px, as
measured on its images. Here too the stroke is `thickness * canvas / 720` px, centred on each
square's outline, with exact area anti-aliasing (each pixel is covered by the fraction of its
area under the stroke). The release's images are RGBA with an opaque white background; these
are RGB, which shows the same.

Geometry is in fractions of the canvas side: each square is (left, top, side) of its outline's
centre line, x right and y down. Each square must lie strictly inside the one before it with
white between their strokes all round.
"""

from __future__ import annotations

from dataclasses import dataclass

from probes.stimuli.lazy_numpy import np
from probes.stimuli.raster import Colour, Drawn, blank

# Bump when the drawing changes: image references (and so cached answers) are keyed by it.
VERSION = 1
INK: Colour = (0, 0, 0)
POINTS_PER_CANVAS = 720  # the stroke in px is thickness * canvas / 720 (points on a 10-inch figure)

Square = tuple[float, float, float]  # left, top, side


@dataclass(frozen=True)
class NestedSquares(Drawn):
    squares: tuple[Square, ...]  # outermost first
    thickness: float  # stroke width in points (the paper's 2, 3, 4)
    canvas: int = 1000  # side of the square canvas, px

    def __post_init__(self) -> None:
        if not self.squares:
            raise ValueError("draw at least one square")
        if not 0 < self.thickness <= 20:
            raise ValueError(f"thickness must be in (0, 20] points; got {self.thickness}")
        if not 64 <= self.canvas <= 4096:
            raise ValueError(f"canvas must be 64 to 4096 px; got {self.canvas}")
        stroke = self.stroke / self.canvas
        for left, top, side in self.squares:
            if side <= 2 * stroke or left - stroke / 2 < 0 or top - stroke / 2 < 0:
                raise ValueError(f"square {(left, top, side)} is off the canvas or thinner than its stroke")
            if left + side + stroke / 2 > 1 or top + side + stroke / 2 > 1:
                raise ValueError(f"square {(left, top, side)} is off the canvas")
        gaps = self.gaps()
        if gaps and min(gaps) <= 0:
            raise ValueError(f"each square must lie inside the one before it without touching; gaps {gaps} px")

    @property
    def ref(self) -> str:
        squares = ";".join("/".join(repr(float(v)) for v in square) for square in self.squares)
        return f"nested-squares/v{VERSION}:squares={squares},thickness={self.thickness!r},canvas={self.canvas}"

    @property
    def stroke(self) -> float:
        """The stroke width in px."""
        return self.thickness * self.canvas / POINTS_PER_CANVAS

    @property
    def depth(self) -> int:
        """How many squares are drawn (each strictly inside the one before: checked on creation)."""
        return len(self.squares)

    def gaps(self) -> list[float]:
        """For each square after the first, the least white between its stroke and the stroke
        of the square around it, in px (negative if they touch or cross)."""
        result = []
        for (ol, ot, os), (il, it, is_) in zip(self.squares, self.squares[1:], strict=False):
            sides = (il - ol, it - ot, (ol + os) - (il + is_), (ot + os) - (it + is_))
            result.append(min(sides) * self.canvas - self.stroke)
        return result

    def draw(self) -> np.ndarray:
        canvas = blank(self.canvas, self.canvas)
        for left, top, side in self.squares:
            stroke_square(canvas, left * self.canvas, top * self.canvas, side * self.canvas, self.stroke, INK)
        return canvas


def _span_coverage(start: float, end: float, first: int, count: int) -> np.ndarray:
    """How much of each pixel [i, i + 1) for i = first .. first + count - 1 lies in [start, end]."""
    pixels = np.arange(first, first + count, dtype=np.float64)
    return np.clip(np.minimum(pixels + 1, end) - np.maximum(pixels, start), 0.0, 1.0)


def stroke_square(canvas: np.ndarray, left: float, top: float, side: float, width: float, colour: Colour) -> None:
    """An axis-aligned square outline of the given stroke width, centred on the square's edges,
    with sharp corners; each pixel is blended by the exact area the stroke covers (the outer
    box's area minus the inner box's, both separable). Only the four edge bands are touched,
    not the white inside."""
    height, width_px = canvas.shape[:2]
    half = width / 2
    x0, x1 = max(0, int(left - half) - 1), min(width_px, int(left + side + half) + 2)
    y0, y1 = max(0, int(top - half) - 1), min(height, int(top + side + half) + 2)
    if x0 >= x1 or y0 >= y1:
        return
    outer_x = _span_coverage(left - half, left + side + half, x0, x1 - x0)
    inner_x = _span_coverage(left + half, left + side - half, x0, x1 - x0)
    outer_y = _span_coverage(top - half, top + side + half, y0, y1 - y0)
    inner_y = _span_coverage(top + half, top + side - half, y0, y1 - y0)
    # Rows crossing the top or bottom edge: coverage varies along the whole row.
    rows = np.nonzero(outer_y != inner_y)[0]
    coverage = np.outer(outer_y[rows], outer_x) - np.outer(inner_y[rows], inner_x)
    _blend(canvas, y0 + rows, np.arange(x0, x1), coverage, colour)
    # Rows in between: only the columns of the left and right edges are inked.
    rows = np.nonzero((outer_y == inner_y) & (outer_y > 0))[0]
    columns = np.nonzero(outer_x != inner_x)[0]
    coverage = np.outer(outer_y[rows], outer_x[columns] - inner_x[columns])
    _blend(canvas, y0 + rows, x0 + columns, coverage, colour)


def _blend(canvas: np.ndarray, rows: np.ndarray, columns: np.ndarray, coverage: np.ndarray, colour: Colour) -> None:
    if coverage.size == 0:
        return
    index = np.ix_(rows, columns)
    region = canvas[index].astype(np.float32)
    region += (np.asarray(colour, dtype=np.float32) - region) * coverage[..., None].astype(np.float32)
    canvas[index] = np.rint(region).astype(np.uint8)

"""Two 2-segment piecewise-linear functions, blue and red ("VLMs are blind", task 1).

Each line is three points at fixed, evenly spaced x (left edge, middle, right edge) with its
own y values. Coordinates are the plot's: x and y in [0, 1], y up. The look follows the
paper's released images (matplotlib, axes off): a white square canvas, pure blue (0, 0, 255)
and pure red (255, 0, 0) lines with flat (butt) ends and round joins, red drawn over blue;
the plot area fills the canvas but for an inset of 1/192 of its side; and the line width is
`thickness` points on a 5-inch figure, i.e. thickness * resolution / 360 px (2.13 px for
thickness 2 at 384 px, 12.8 px for thickness 4 at 1152 px), as measured on the release. So a
layout looks the same at every resolution.

The ground truth is the number of distinct points the two polylines share, computed exactly
(rational arithmetic) from the segments drawn: a crossing, a touch at a vertex or a shared
end point each count once. Lines that share a stretch (collinear overlap) have no count and
are refused.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

from probes.stimuli.lazy_numpy import np
from probes.stimuli.raster import Colour, Drawn, blank

# Bump when the drawing changes: image references (and so cached answers) are keyed by it.
VERSION = 1
BLUE: Colour = (0, 0, 255)
RED: Colour = (255, 0, 0)
XS = (Fraction(0), Fraction(1, 2), Fraction(1))  # fixed, evenly spaced x of the three points
INSET = 1 / 192  # blank margin around the plot area, as a fraction of the canvas side
POINTS_PER_CANVAS = 360  # the line width in px is thickness * resolution / 360

Point = tuple[Fraction, Fraction]


@dataclass(frozen=True)
class LinePlot(Drawn):
    blue: tuple[float, float, float]  # y of the left, middle and right point, in [0, 1], y up
    red: tuple[float, float, float]
    thickness: float  # line width in points (the paper's 2, 3, 4)
    resolution: int  # side of the square canvas, px

    def __post_init__(self) -> None:
        for name in ("blue", "red"):
            ys = getattr(self, name)
            if len(ys) != 3 or not all(0 <= y <= 1 for y in ys):
                raise ValueError(f"{name} needs three y values in [0, 1]; got {ys!r}")
        if not 0 < self.thickness <= 20:
            raise ValueError(f"thickness must be in (0, 20] points; got {self.thickness}")
        if not 32 <= self.resolution <= 4096:
            raise ValueError(f"resolution must be 32 to 4096 px; got {self.resolution}")
        self.points()  # refuses lines that overlap along a stretch

    @property
    def ref(self) -> str:
        return (
            f"line-plot/v{VERSION}:blue={_ys(self.blue)},red={_ys(self.red)},"
            f"thickness={self.thickness!r},resolution={self.resolution}"
        )

    def polyline(self, colour: str) -> list[Point]:
        """The line's three points in exact plot coordinates."""
        ys = self.blue if colour == "blue" else self.red
        return [(x, _exact(y)) for x, y in zip(XS, ys, strict=True)]

    def points(self) -> list[Point]:
        """Where the blue and the red line meet, left to right."""
        return list(self._meetings)

    @functools.cached_property
    def _meetings(self) -> tuple[Point, ...]:
        # Exact rational arithmetic is slow-ish; a plot is asked about several times.
        return tuple(intersection_points(self.polyline("blue"), self.polyline("red")))

    @property
    def intersections(self) -> int:
        return len(self.points())

    @property
    def line_width(self) -> float:
        """The stroke width in px."""
        return self.thickness * self.resolution / POINTS_PER_CANVAS

    def to_pixels(self, x: float, y: float) -> tuple[float, float]:
        """Plot coordinates -> pixel coordinates (x right, y down)."""
        inset = self.resolution * INSET
        span = self.resolution - 2 * inset
        return inset + float(x) * span, inset + (1 - float(y)) * span

    def draw(self) -> np.ndarray:
        canvas = blank(self.resolution, self.resolution)
        for colour, rgb in (("blue", BLUE), ("red", RED)):  # red on top, as in the release
            points = [self.to_pixels(x, y) for x, y in self.polyline(colour)]
            stroke_plot_line(canvas, points, self.line_width, rgb)
        return canvas


def _exact(y: float) -> Fraction:
    # Through the shortest decimal text, so 0.3 is exactly 3/10 (hand-built meetings are exact).
    return Fraction(repr(float(y)))


def _ys(values: tuple[float, ...]) -> str:
    return "/".join(repr(float(v)) for v in values)


# --- exact geometry ---------------------------------------------------------------------


def _cross(o: Point, a: Point, b: Point) -> Fraction:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _on_segment(p: Point, a: Point, b: Point) -> bool:
    return (
        _cross(a, b, p) == 0
        and min(a[0], b[0]) <= p[0] <= max(a[0], b[0])
        and min(a[1], b[1]) <= p[1] <= max(a[1], b[1])
    )


def segment_intersection(a: Point, b: Point, c: Point, d: Point) -> Point | None:
    """The one point segments ab and cd share, or None; ValueError if they share a stretch."""
    denominator = (b[0] - a[0]) * (d[1] - c[1]) - (b[1] - a[1]) * (d[0] - c[0])
    if denominator == 0:
        if _cross(a, b, c) != 0:
            return None  # parallel, apart
        shared = {p for p in (a, b, c, d) if _on_segment(p, a, b) and _on_segment(p, c, d)}
        if len(shared) > 1:
            raise ValueError("the lines overlap along a stretch: the number of meetings is not defined")
        return shared.pop() if shared else None
    # a + t (b - a) = c + u (d - c), solved with 2-D cross products.
    t = ((c[0] - a[0]) * (d[1] - c[1]) - (c[1] - a[1]) * (d[0] - c[0])) / denominator
    u = ((c[0] - a[0]) * (b[1] - a[1]) - (c[1] - a[1]) * (b[0] - a[0])) / denominator
    if 0 <= t <= 1 and 0 <= u <= 1:
        return (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]))
    return None


def intersection_points(first: list[Point], second: list[Point]) -> list[Point]:
    """Distinct points two polylines share (a meeting at a shared vertex counts once)."""
    found: set[Point] = set()
    for (a, b), (c, d) in itertools.product(itertools.pairwise(first), itertools.pairwise(second)):
        point = segment_intersection(a, b, c, d)
        if point is not None:
            found.add(point)
    return sorted(found)


# --- how clearly the drawing shows the count ------------------------------------------


def _distance_to_segment(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    dx, dy = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else min(1.0, max(0.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2))
    return math.hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dy)


def _floats(points: list[Point]) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in points]


def clearance(plot: LinePlot) -> dict[str, float]:
    """Measures of visual ambiguity, in fractions of the plot side (so independent of the
    resolution, as the line width scales with it too):

    - `separation`: the least distance between two meeting points (inf with fewer than two);
    - `vertex_gap`: the least distance from a meeting point to any vertex or end of either
      line (a crossing there merges with the corner);
    - `angle`: the least angle, in degrees, at which the lines cross (grazing lines look
      like one);
    - `near_miss`: the least distance from a vertex or end of one line to the other line,
      among those not at a meeting point (a near miss looks like a touch).
    """
    blue, red = _floats(plot.polyline("blue")), _floats(plot.polyline("red"))
    meetings = _floats(plot.points())
    separation = min((math.dist(p, q) for p, q in itertools.combinations(meetings, 2)), default=math.inf)
    vertex_gap = min((math.dist(p, v) for p in meetings for v in blue + red), default=math.inf)
    angles = []
    for (a, b), (c, d) in itertools.product(itertools.pairwise(blue), itertools.pairwise(red)):
        for p in meetings:
            if _distance_to_segment(p, a, b) < 1e-12 and _distance_to_segment(p, c, d) < 1e-12:
                turn = abs(math.atan2(b[1] - a[1], b[0] - a[0]) - math.atan2(d[1] - c[1], d[0] - c[0]))
                angles.append(math.degrees(min(turn, math.pi - turn)))
    near_miss = math.inf
    for line, other in ((blue, red), (red, blue)):
        for v in line:
            if any(math.dist(v, p) < 1e-12 for p in meetings):
                continue
            near_miss = min(near_miss, *(_distance_to_segment(v, a, b) for a, b in itertools.pairwise(other)))
    return {
        "separation": separation,
        "vertex_gap": vertex_gap,
        "angle": min(angles, default=90.0),
        "near_miss": near_miss,
    }


# --- drawing ----------------------------------------------------------------------------


def stroke_plot_line(canvas: np.ndarray, points: list[tuple[float, float]], width: float, colour: Colour) -> None:
    """A polyline as matplotlib draws a plot line: flat (butt) ends at the first and last
    point, round joins between segments; anti-aliased from a signed distance (the stroke's
    edge is blended over one pixel), painted once so joins are not darker.

    The line is the graph of a function of x with slopes of at most a few pixels per column,
    so only a band of pixels around it in each column is computed (a few per cent of the
    canvas), not its bounding box."""
    height, width_px = canvas.shape[:2]
    half = width / 2
    columns = np.arange(max(0, int(points[0][0] - half - 2)), min(width_px, int(points[-1][0] + half + 3)))
    if len(columns) == 0:
        return
    centres = columns + 0.5
    low = np.full(len(columns), np.inf)
    high = np.full(len(columns), -np.inf)
    for (ax, ay), (bx, by) in itertools.pairwise(points):
        slope = (by - ay) / (bx - ax) if bx != ax else 0.0
        reach = (half + 2) * math.hypot(1, slope) + abs(slope) + 1  # stroke's vertical extent
        along = ay + slope * (np.clip(centres, min(ax, bx), max(ax, bx)) - ax)
        # Only the columns this segment's stroke can reach (a round join or flat end included).
        near = (centres >= min(ax, bx) - half - 2) & (centres <= max(ax, bx) + half + 2)
        low = np.where(near, np.minimum(low, along - reach), low)
        high = np.where(near, np.maximum(high, along + reach), high)
    top = np.clip(np.floor(low), 0, height).astype(int)
    bottom = np.clip(np.ceil(high), 0, height).astype(int)
    rows = int((bottom - top).max(initial=0))
    if rows <= 0:
        return
    yy = top[None, :] + np.arange(rows)[:, None]
    xx = np.broadcast_to(columns[None, :], yy.shape)
    inside = yy < bottom[None, :]
    yy, xx = yy[inside], xx[inside]
    signed = _signed_distance(points, half, xx.astype(np.float32) + 0.5, yy.astype(np.float32) + 0.5)
    coverage = np.clip(0.5 - signed, 0.0, 1.0)
    ink = coverage > 0
    yy, xx, coverage = yy[ink], xx[ink], coverage[ink]
    region = canvas[yy, xx].astype(np.float32)
    region += (np.asarray(colour, dtype=np.float32) - region) * coverage[:, None]
    canvas[yy, xx] = np.rint(region).astype(np.uint8)


def _signed_distance(points: list[tuple[float, float]], half: float, px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """Signed distance from pixel centres to the stroke's edge (negative inside)."""
    signed = np.full(px.shape, np.inf, dtype=np.float32)
    last = len(points) - 2
    for index, ((ax, ay), (bx, by)) in enumerate(itertools.pairwise(points)):
        dx, dy = bx - ax, by - ay
        length = math.hypot(dx, dy)
        if length == 0:
            continue
        ux, uy = dx / length, dy / length
        along = (px - ax) * ux + (py - ay) * uy
        across = np.abs((px - ax) * uy - (py - ay) * ux)
        nearest = np.clip(along, 0.0, length)
        distance = np.hypot(px - (ax + nearest * ux), py - (ay + nearest * uy)) - half
        # Flat ends: beyond the first or last point the stroke stops square (a box distance).
        if index == 0:
            distance = np.where(along < 0, np.maximum(across - half, -along), distance)
        if index == last:
            distance = np.where(along > length, np.maximum(across - half, along - length), distance)
        np.minimum(signed, distance, out=signed)
    return signed

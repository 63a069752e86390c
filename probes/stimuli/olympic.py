"""Equal circles or pentagons overlapping in two staggered rows, like the Olympic logo ("VLMs are
blind", task 4).

Looks like the paper's released images: outlines only, on a white square canvas, black or each
shape in its own matplotlib "tab10" colour, the strokes as thin as the release's (matplotlib
line widths 0.5 and 1 point on a figure 3.85 inches wide, so 0.7 to 4.2 px).

The layout is a zig-zag: shape i sits half a step right of shape i - 1, on the top row when i is
even and on the bottom row when i is odd. Each shape crosses its neighbours on the other row
(two crossings per pair) and keeps a gap to its neighbours on its own row. The group is centred
across the canvas, and the top row's centres sit at 0.40 of its height, as in the release.

Spacing, as measured on the released images (`bench/released_geometry.py`), in units of the
shape's size (circle diameter, pentagon side):
- circles: same-row neighbours 1.05 apart (centre to centre) and the bottom row 0.50 below the
  top one, as the release: the rings interlock as deeply (0.27 of a diameter) and same-row
  neighbours nearly touch (0.05 apart; a third outline passes as near the crossings). That is
  the paper's difficulty; at the smallest default image (384 px, 1/10, 1 point) it leaves half
  a pixel of white, so `MIN_WHITE` is 0.5 px.
- pentagons: same-row neighbours 1.74 apart (the release: 1.72) and the bottom row 0.75 below
  the top one (the release: 0.945). At the release's drop the bottom row's side corners land
  exactly on the top row's bottom sides (0.01 sides apart), a touch that is neither a crossing
  nor a gap, so a careful counter could not tell what is drawn; at 0.75 every corner stays
  0.18 sides from any crossing and 0.11 from any other outline. 1.74 rather than 1.72 leaves
  same-row neighbours 0.12 sides apart, enough for the thinnest white between them to survive
  anti-aliasing (at 1.72, 3 of the 70 default and few-shot images no longer read back their
  count from the pixels). The spacing is 1.2% off the release's, the logo's vertical centre
  under 2%.
The release puts the first shape on the bottom row for odd N (more shapes below); we keep the
Olympic logo's order (more on top). Neither changes the count or the spacing.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

from probes.stimuli.lazy_numpy import np
from probes.stimuli.raster import Drawn, blank, stroke_circle, stroke_polyline

# Bump when the drawing changes: image references (and so cached answers) are keyed by it.
VERSION = 2  # 2: the release's spacing and vertical placement
SHAPES = ("circle", "pentagon")
COLOURS = ("black", "colored")  # the release's names for the two looks
BLACK = (0, 0, 0)
# matplotlib's tab10 in order, without its grey: the release colours each shape from tab10.
PALETTE = (
    (31, 119, 180),  # blue
    (255, 127, 14),  # orange
    (44, 160, 44),  # green
    (214, 39, 40),  # red
    (148, 103, 189),  # purple
    (140, 86, 75),  # brown
    (227, 119, 194),  # pink
    (188, 189, 34),  # olive
    (23, 190, 207),  # cyan
)
PALETTE_NAMES = ("blue", "orange", "green", "red", "purple", "brown", "pink", "olive", "cyan")
# The release is a matplotlib figure 3.85 inches wide saved at canvas / 3.85 dpi: a line width
# of w points is w * canvas / (3.85 * 72) px (measured: 4.2 px for 1 point at 1155 px).
POINTS_PER_CANVAS = 3.85 * 72
# Layout in units of the shape's size (circle diameter, pentagon side): distance between the
# centres of same-row neighbours, and how far the bottom row sits below the top row.
STEP = {"circle": 1.05, "pentagon": 1.74}
DROP = {"circle": 0.50, "pentagon": 0.75}
TOP_ROW = 0.40  # height of the top row's centres, as a fraction of the canvas (the release)
RADIUS = {"circle": 0.5, "pentagon": 1 / (2 * math.sin(math.pi / 5))}  # centre to farthest point, sizes
MARGIN = 0.02  # least white between the outlines and the canvas edge, as a fraction of the canvas
MIN_WHITE = 0.5  # px of white, besides the strokes, between outlines that do not cross


def pentagon_corners(cx: float, cy: float, side: float) -> list[tuple[float, float]]:
    """A regular pentagon standing on one side, point up (as in the release), clockwise."""
    radius = side / (2 * math.sin(math.pi / 5))
    return [
        (cx + radius * math.sin(2 * math.pi * k / 5), cy - radius * math.cos(2 * math.pi * k / 5)) for k in range(5)
    ]


def _outline(shape: str, cx: float, cy: float, size: float, segments: int = 128) -> np.ndarray:
    """A closed outline as its corners (a circle as a fine polygon), for geometry checks."""
    if shape == "pentagon":
        return np.array(pentagon_corners(cx, cy, size))
    angles = np.linspace(0, 2 * math.pi, segments, endpoint=False)
    return np.stack([cx + size / 2 * np.cos(angles), cy + size / 2 * np.sin(angles)], axis=1)


def centres(shape: str, count: int) -> list[tuple[float, float]]:
    """Shape centres in size units, before centring on the canvas: the zig-zag."""
    return [(i * STEP[shape] / 2, DROP[shape] if i % 2 else 0.0) for i in range(count)]


def _crossings(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points where two closed outlines cross, and the angle (degrees, 0..90) of each."""
    a0, a1 = a, np.roll(a, -1, axis=0)
    b0, b1 = b, np.roll(b, -1, axis=0)
    d, e = (a1 - a0)[:, None], (b1 - b0)[None]
    w = b0[None] - a0[:, None]
    den = d[..., 0] * e[..., 1] - d[..., 1] * e[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[..., 0] * e[..., 1] - w[..., 1] * e[..., 0]) / den
        u = (w[..., 0] * d[..., 1] - w[..., 1] * d[..., 0]) / den
    hit = (den != 0) & (t >= 0) & (t < 1) & (u >= 0) & (u < 1)
    i, j = np.nonzero(hit)
    points = a0[i] + t[i, j][:, None] * (a1 - a0)[i]
    sines = np.abs(den[i, j]) / (np.linalg.norm(d[i, 0], axis=1) * np.linalg.norm(e[0, j], axis=1))
    return points, np.degrees(np.arcsin(np.clip(sines, 0, 1)))


def _distance(points: np.ndarray, outline: np.ndarray) -> float:
    """Least distance from any of the points to a closed outline."""
    a0, a1 = outline, np.roll(outline, -1, axis=0)
    d = a1 - a0
    rel = points[:, None] - a0[None]
    t = np.clip((rel * d[None]).sum(-1) / (d * d).sum(-1)[None], 0, 1)
    return float(np.linalg.norm(rel - t[..., None] * d[None], axis=-1).min())


@dataclass(frozen=True)
class Clearance:
    """How unambiguous a layout is, in units of the shape's size."""

    gap: float  # least distance between outlines that do not cross
    near: float  # least distance from a crossing to a third outline, or to another crossing
    corner: float  # least distance from a crossing to a corner of either pentagon (inf for circles)
    angle: float  # smallest crossing angle, degrees
    crossings: tuple[int, ...]  # crossings per neighbouring pair

    @property
    def least(self) -> float:
        return min(self.gap, self.near, self.corner)


@functools.lru_cache(maxsize=64)
def clearance(shape: str, count: int) -> Clearance:
    """Measure the layout: every neighbouring pair must cross exactly twice and nothing else
    may touch; the smallest distances say how far the layout is from any grazing."""
    middles = np.array(centres(shape, count))
    outlines = [_outline(shape, x, y, 1.0) for x, y in middles]
    reach = RADIUS[shape]  # no point of an outline is farther than this from its centre
    gap = near = corner = math.inf
    angle = 90.0
    per_pair: list[int] = []
    found: list[tuple[np.ndarray, int, int]] = []
    for i, j in itertools.combinations(range(count), 2):
        apart = float(np.linalg.norm(middles[i] - middles[j])) - 2 * reach
        if j > i + 1 and apart > 0.5:  # far apart: at least `apart` between them, cannot cross
            gap = min(gap, apart)
            continue
        points, angles = _crossings(outlines[i], outlines[j])
        if j == i + 1:
            per_pair.append(len(points))
            found.extend((p, i, j) for p in points)
            angle = min(angle, float(angles.min(initial=90.0)))
            if shape == "pentagon" and len(points):
                corners = np.concatenate([outlines[i], outlines[j]])
                corner = min(corner, float(np.linalg.norm(points[:, None] - corners[None], axis=-1).min()))
        elif len(points):
            per_pair.append(-len(points))  # shapes that are not neighbours must not cross at all
        else:
            gap = min(gap, _distance(outlines[i], outlines[j]), _distance(outlines[j], outlines[i]))
    for point, i, j in found:
        for k in set(range(count)) - {i, j}:
            apart = float(np.linalg.norm(point - middles[k])) - reach
            near = min(near, apart if apart > 0.5 else _distance(point[None], outlines[k]))
    for (p, *_), (q, *_) in itertools.combinations(found, 2):
        near = min(near, float(np.linalg.norm(p - q)))
    return Clearance(gap, near, corner, angle, tuple(per_pair))


@dataclass(frozen=True)
class OlympicShapes(Drawn):
    shape: str  # "circle" or "pentagon"
    count: int  # N, the number of shapes drawn
    canvas: int  # side of the square canvas, px
    size: float  # circle diameter or pentagon side, as a fraction of the canvas
    thickness: float  # line width in matplotlib points (0.5 or 1 in the release)
    colour: str  # "black", or "colored": each shape its own tab10 colour

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)}; got {self.shape!r}")
        if self.colour not in COLOURS:
            raise ValueError(f"colour must be one of {', '.join(COLOURS)}; got {self.colour!r}")
        if not 1 <= self.count <= 12:
            raise ValueError(f"count must be 1 to 12 shapes; got {self.count}")
        if not 64 <= self.canvas <= 4096:
            raise ValueError(f"canvas must be 64 to 4096 px; got {self.canvas}")
        if not 0 < self.size <= 0.5:
            raise ValueError(f"size is a fraction of the canvas in (0, 0.5]; got {self.size}")
        if not 0 < self.thickness <= 10:
            raise ValueError(f"thickness is a line width of 0 to 10 points; got {self.thickness}")
        x0, y0, x1, y1 = self.extent()
        if min(x0, y0) < MARGIN * self.canvas or max(x1, y1) > (1 - MARGIN) * self.canvas:
            raise ValueError(
                f"{self.count} {self.shape}s of size {self.size:.4g} do not fit on the canvas "
                f"({(x1 - x0) / self.canvas:.2f} of its width)"
            )
        if self.white_px() < MIN_WHITE:
            raise ValueError(
                f"{self.count} {self.shape}s of size {self.size:.4g} at {self.canvas} px leave only "
                f"{self.white_px():.1f} px of white between strokes that nearly touch"
            )

    @property
    def ref(self) -> str:
        return (
            f"olympic/v{VERSION}:shape={self.shape},count={self.count},canvas={self.canvas},"
            f"size={self.size!r},thickness={self.thickness!r},colour={self.colour}"
        )

    @property
    def size_px(self) -> float:
        return self.size * self.canvas

    @property
    def width_px(self) -> float:
        return self.thickness * self.canvas / POINTS_PER_CANVAS

    def white_px(self) -> float:
        """The least white, in px, between strokes that come close without crossing."""
        if self.count < 2:
            return math.inf
        return clearance(self.shape, self.count).least * self.size_px - self.width_px

    def _relative_extent(self) -> tuple[float, float, float, float]:
        outlines = [_outline(self.shape, x, y, 1.0) for x, y in centres(self.shape, self.count)]
        points = np.concatenate(outlines)
        return (*points.min(axis=0), *points.max(axis=0))

    def _shift(self) -> tuple[float, float]:
        """Where the relative layout's origin goes, px: the group centred across the canvas,
        the top row's centres at TOP_ROW of its height."""
        x0, _, x1, _ = self._relative_extent()
        return self.canvas / 2 - (x0 + x1) / 2 * self.size_px, TOP_ROW * self.canvas

    def placed_centres(self) -> list[tuple[float, float]]:
        """Shape centres in px (x right, y down)."""
        shift_x, shift_y = self._shift()
        return [(shift_x + x * self.size_px, shift_y + y * self.size_px) for x, y in centres(self.shape, self.count)]

    def extent(self) -> tuple[float, float, float, float]:
        """The outlines' bounding box in px, strokes included: (left, top, right, bottom)."""
        x0, y0, x1, y1 = self._relative_extent()
        shift_x, shift_y = self._shift()
        half = self.width_px / 2
        return (
            shift_x + x0 * self.size_px - half,
            shift_y + y0 * self.size_px - half,
            shift_x + x1 * self.size_px + half,
            shift_y + y1 * self.size_px + half,
        )

    def outlines(self) -> list[tuple[float, float, tuple[int, int, int]]]:
        """What is drawn: one (centre x, centre y, colour) per shape, in drawing order."""
        colours = [BLACK if self.colour == "black" else PALETTE[i % len(PALETTE)] for i in range(self.count)]
        return [(x, y, colour) for (x, y), colour in zip(self.placed_centres(), colours, strict=True)]

    def rows(self) -> tuple[int, int]:
        """How many shapes sit on the top and on the bottom row (from what is drawn)."""
        ys = [y for _, y, _ in self.outlines()]
        tops = sum(1 for y in ys if y <= min(ys) + 1e-6)
        return tops, len(ys) - tops

    def draw(self) -> np.ndarray:
        canvas = blank(self.canvas, self.canvas)
        for x, y, colour in self.outlines():
            if self.shape == "circle":
                stroke_circle(canvas, x, y, self.size_px / 2, self.width_px, colour)
            else:
                corners = pentagon_corners(x, y, self.size_px)
                stroke_polyline(canvas, [*corners, corners[0]], self.width_px, colour)
        return canvas

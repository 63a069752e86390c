"""Drawing for the illusion stimuli: exact, hard-edged targets and fast inducers on one canvas.

Targets are rasterised here, not by Pillow, by the plain sampling rule: a pixel belongs to a
shape when its centre lies inside it. Every target pixel is pure red (255, 0, 0) and every other
pixel is not, so a target is exactly a set of pixels, and its length (columns), area (pixels),
edges (rows) and fitted axis are read from that set without any threshold. No anti-aliasing, on
purpose: blended edges would make "how long is this line" a matter of where one puts the
threshold, and a 1 % difference would show only as a change of edge shade. Hard edges keep the
ground truth a count, and shapes that mirror each other about the figure's centre (kept on a
pixel corner) rasterise to mirror-identical pixel sets, so targets that are nominally equal are
exactly equal on screen.

Inducers (black fins, circles, side lines; the grey occluder) need no measuring: Pillow draws them
in C, hard-edged like the targets, which keeps a drawing well below the cost of encoding its PNG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw

RED = (255, 0, 0)
BLACK = (0, 0, 0)
GREY = (128, 128, 128)  # pyllusion's "grey" (the Poggendorff occluder)
# pyllusion draws lines `outline=20` px wide on a canvas three times larger, then shrinks it.
LINE_WIDTH = 20 / 3
RING_WIDTH = 10 / 3  # Delboeuf's outer circle, `outline=10`

Point = tuple[float, float]
Pixels = tuple[np.ndarray, np.ndarray]  # (rows, columns) of every pixel of a shape


@dataclass(frozen=True)
class Segment:
    """A straight band of the given width with square ends, from `start` to `end` (px, y down)."""

    start: Point
    end: Point
    width: float = LINE_WIDTH


@dataclass(frozen=True)
class Disc:
    centre: Point
    radius: float


@dataclass(frozen=True)
class Ring:
    """A circle's outline, `width` px drawn inward from the radius (as Pillow's ellipse outline)."""

    centre: Point
    radius: float
    width: float = RING_WIDTH


@dataclass(frozen=True)
class Box:
    """An axis-aligned filled rectangle, [left, right) x [top, bottom) in px."""

    left: float
    top: float
    right: float
    bottom: float

    def columns(self) -> tuple[int, int]:
        return round(self.left), round(self.right)

    def rows(self) -> tuple[int, int]:
        return round(self.top), round(self.bottom)


Shape = Segment | Disc | Ring | Box


@dataclass(frozen=True)
class Scene:
    """What one stimulus draws: named red targets, inducers in their colours, and the box (if
    any) that hides part of the targets (the Poggendorff occluder, drawn only with the inducers)."""

    canvas: int
    targets: dict[str, Shape]
    inducers: tuple[tuple[Shape, tuple[int, int, int]], ...] = ()
    occluder: Box | None = None
    view: tuple[Point, ...] = field(default=())  # points that must stay on the canvas (jitter)


def target_pixels(shape: Shape, canvas: int, hidden: Box | None = None) -> Pixels:
    """The pixels of a target, by the centre rule, clipped to the canvas and outside `hidden`."""
    if isinstance(shape, Segment):
        rows, cols = _segment_pixels(shape, canvas)
    elif isinstance(shape, Disc):
        rows, cols = _disc_pixels(shape, canvas)
    else:
        raise TypeError(f"targets are segments or discs, not {type(shape).__name__}")
    if hidden is not None:
        (c0, c1), (r0, r1) = hidden.columns(), hidden.rows()
        keep = ~((cols >= c0) & (cols < c1) & (rows >= r0) & (rows < r1))
        rows, cols = rows[keep], cols[keep]
    return rows, cols


def _column_runs(columns: np.ndarray, low: np.ndarray, high: np.ndarray, canvas: int) -> Pixels:
    """Every pixel of the columns whose centre lies in [low, high] (per column, y down), clipped
    to the canvas: built column by column, so a long line costs its pixels, not its bounding box."""
    first = np.maximum(np.ceil(low - 0.5 - 1e-9), 0).astype(np.int64)
    last = np.minimum(np.floor(high - 0.5 + 1e-9), canvas - 1).astype(np.int64)
    counts = np.maximum(last - first + 1, 0)
    cols = np.repeat(columns, counts)
    starts = np.repeat(first, counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return starts + offsets, cols


def _segment_pixels(segment: Segment, canvas: int) -> Pixels:
    (ax, ay), (bx, by) = segment.start, segment.end
    length = math.hypot(bx - ax, by - ay)
    if length == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    nx, ny = -(by - ay) / length * segment.width / 2, (bx - ax) / length * segment.width / 2
    corners = [(ax + nx, ay + ny), (bx + nx, by + ny), (bx - nx, by - ny), (ax - nx, ay - ny)]
    xs = [x for x, _ in corners]
    columns = np.arange(max(0, math.floor(min(xs) - 0.5)), min(canvas, math.ceil(max(xs) + 0.5)))
    centres = columns + 0.5
    low = np.full(len(columns), np.inf)
    high = np.full(len(columns), -np.inf)
    # The band is a convex quadrilateral: each column's centre line crosses two of its edges
    # (vertical edges are met by their neighbours' ends), and the pixels between are inside.
    for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True):
        if x0 == x1:
            continue
        lo, hi = min(x0, x1), max(x0, x1)
        on = (centres >= lo - 1e-9) & (centres <= hi + 1e-9)
        y = y0 + (y1 - y0) * (centres[on] - x0) / (x1 - x0)
        low[on] = np.minimum(low[on], y)
        high[on] = np.maximum(high[on], y)
    crossed = np.isfinite(low)
    return _column_runs(columns[crossed], low[crossed], high[crossed], canvas)


def _disc_pixels(disc: Disc, canvas: int) -> Pixels:
    cx, cy = disc.centre
    r = disc.radius
    columns = np.arange(max(0, math.floor(cx - r - 0.5)), min(canvas, math.ceil(cx + r + 0.5)))
    dx = columns + 0.5 - cx
    inside = dx * dx <= r * r + 1e-9
    half = np.sqrt(np.maximum(r * r - dx[inside] ** 2, 0.0))
    return _column_runs(columns[inside], cy - half, cy + half, canvas)


def render(scene: Scene, pixels: dict[str, Pixels], with_inducers: bool) -> Image.Image:
    """The picture: white, the inducers (if any), then every target pixel red.

    Inducers are all greys (black, the occluder's grey), so they are drawn on one 8-bit plane;
    the red targets then differ only in their red plane (255) from their green and blue (0).
    Three planes merged by Pillow cost a fifth of drawing on an RGB canvas and copying it."""
    plane = Image.new("L", (scene.canvas, scene.canvas), 255)
    if with_inducers and scene.inducers:
        draw = ImageDraw.Draw(plane)
        for shape, colour in scene.inducers:
            if len(set(colour)) != 1:
                raise ValueError(f"inducers are drawn in greys; got {colour}")
            _draw_inducer(draw, shape, colour[0])
    level = np.array(plane)
    if with_inducers and scene.occluder is not None:
        (c0, c1), (r0, r1) = scene.occluder.columns(), scene.occluder.rows()
        level[max(0, r0) : max(0, r1), max(0, c0) : max(0, c1)] = GREY[0]
    red = level.copy()
    for rows, cols in pixels.values():
        red[rows, cols] = RED[0]
        level[rows, cols] = RED[1]
    others = Image.fromarray(level, "L")
    return Image.merge("RGB", (Image.fromarray(red, "L"), others, others))


def _draw_inducer(draw: ImageDraw.ImageDraw, shape: Shape, colour: int) -> None:
    if isinstance(shape, Segment):
        (ax, ay), (bx, by) = shape.start, shape.end
        length = math.hypot(bx - ax, by - ay)
        if length == 0:
            return
        # Pillow's polygon fill works on pixel corners; the shift puts the band where the
        # centre rule would (a band from x=10 to x=20 covers pixels 10..19).
        nx, ny = -(by - ay) / length * shape.width / 2, (bx - ax) / length * shape.width / 2
        corners = [(ax + nx, ay + ny), (bx + nx, by + ny), (bx - nx, by - ny), (ax - nx, ay - ny)]
        draw.polygon([(x - 0.5, y - 0.5) for x, y in corners], fill=colour)
    elif isinstance(shape, Disc):
        (cx, cy), r = shape.centre, shape.radius
        draw.ellipse((cx - r, cy - r, cx + r - 1, cy + r - 1), fill=colour)
    elif isinstance(shape, Ring):
        (cx, cy), r = shape.centre, shape.radius
        draw.ellipse((cx - r, cy - r, cx + r - 1, cy + r - 1), outline=colour, width=max(1, round(shape.width)))
    else:
        draw.rectangle((shape.left, shape.top, shape.right - 1, shape.bottom - 1), fill=colour)


def extent(shape: Shape) -> list[Point]:
    """Points on the outline of a shape's bounding box (for keeping a figure on the canvas)."""
    if isinstance(shape, Segment):
        half = shape.width / 2
        (ax, ay), (bx, by) = shape.start, shape.end
        return [(ax - half, ay - half), (ax + half, ay + half), (bx - half, by - half), (bx + half, by + half)]
    if isinstance(shape, Disc | Ring):
        (cx, cy), r = shape.centre, shape.radius
        return [(cx - r, cy - r), (cx + r, cy + r)]
    return [(shape.left, shape.top), (shape.right, shape.bottom)]

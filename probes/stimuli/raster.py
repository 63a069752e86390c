"""Anti-aliased drawing on numpy canvases: exact coverage from signed distances.

Each shape's pixel coverage is its signed distance to the pixel centre clipped to [0, 1] around
the edge, which anti-aliases like 4x4 supersampling at a fraction of the cost. The canvas stays
8-bit; only a shape's bounding box is blended in floating point.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod

from PIL import Image

from probes.stimuli.lazy_numpy import np

Colour = tuple[int, int, int]


def blank(width: int, height: int, colour: Colour = (255, 255, 255)) -> np.ndarray:
    # Filling row by row from one prepared row is several times faster than broadcasting a
    # colour triple over the whole canvas.
    row = np.tile(np.asarray(colour, dtype=np.uint8), (width, 1))
    return np.repeat(row[None], height, axis=0)


def fill_disc(canvas: np.ndarray, cx: float, cy: float, radius: float, colour: Colour) -> None:
    """Paint a filled disc centred at (cx, cy) in pixel coordinates (x right, y down)."""
    height, width = canvas.shape[:2]
    x0, x1 = max(0, int(cx - radius - 2)), min(width, int(cx + radius + 3))
    y0, y1 = max(0, int(cy - radius - 2)), min(height, int(cy + radius + 3))
    if x0 >= x1 or y0 >= y1:
        return
    ys, xs = np.ogrid[y0:y1, x0:x1]
    distance = np.hypot(xs + 0.5 - cx, ys + 0.5 - cy, dtype=np.float32)
    coverage = np.clip(radius + 0.5 - distance, 0.0, 1.0)[..., None]
    region = canvas[y0:y1, x0:x1].astype(np.float32)
    region += (np.asarray(colour, dtype=np.float32) - region) * coverage
    canvas[y0:y1, x0:x1] = np.rint(region).astype(np.uint8)


def to_image(canvas: np.ndarray) -> Image.Image:
    return Image.fromarray(canvas, "RGB")


class Drawn(ABC):
    """A stimulus drawn on a canvas: `draw()` gives its pixels (height x width x 3, uint8, C
    order), `render()` the picture made of them. A runner hashes and encodes the pixels
    themselves: making a Pillow picture of them and reading its bytes back was a third of a
    first run's image work, and those two steps let go of the GIL dozens of times an image."""

    @abstractmethod
    def draw(self) -> np.ndarray:
        """The canvas, drawn afresh."""

    def render(self) -> Image.Image:
        return to_image(self.draw())


def _blend(canvas: np.ndarray, x0: int, y0: int, coverage: np.ndarray, colour: Colour) -> None:
    height, width = coverage.shape
    region = canvas[y0 : y0 + height, x0 : x0 + width].astype(np.float32)
    region += (np.asarray(colour, dtype=np.float32) - region) * coverage[..., None]
    canvas[y0 : y0 + height, x0 : x0 + width] = np.rint(region).astype(np.uint8)


def _box(canvas: np.ndarray, xs: list[float], ys: list[float], margin: float) -> tuple[int, int, int, int] | None:
    height, width = canvas.shape[:2]
    x0, x1 = max(0, int(min(xs) - margin - 2)), min(width, int(max(xs) + margin + 3))
    y0, y1 = max(0, int(min(ys) - margin - 2)), min(height, int(max(ys) + margin + 3))
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None


def stroke_segment(
    canvas: np.ndarray, start: tuple[float, float], end: tuple[float, float], width: float, colour: Colour
) -> None:
    """A straight line of the given width with round caps, from `start` to `end` (x, y)."""
    box = _box(canvas, [start[0], end[0]], [start[1], end[1]], width / 2)
    if box is None:
        return
    x0, y0, x1, y1 = box
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32) + 0.5
    ax, ay = start
    dx, dy = end[0] - ax, end[1] - ay
    length2 = dx * dx + dy * dy
    t = np.clip(((xs - ax) * dx + (ys - ay) * dy) / length2, 0.0, 1.0) if length2 else np.zeros_like(xs)
    distance = np.hypot(xs - (ax + t * dx), ys - (ay + t * dy))
    _blend(canvas, x0, y0, np.clip(width / 2 + 0.5 - distance, 0.0, 1.0), colour)


def stroke_polyline(canvas: np.ndarray, points: list[tuple[float, float]], width: float, colour: Colour) -> None:
    """Connected segments drawn as one stroke (joins are not painted twice)."""
    box = _box(canvas, [p[0] for p in points], [p[1] for p in points], width / 2)
    if box is None or len(points) < 2:
        return
    x0, y0, x1, y1 = box
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32) + 0.5
    distance = np.full(xs.shape, np.inf, dtype=np.float32)
    for (ax, ay), (bx, by) in itertools.pairwise(points):
        dx, dy = bx - ax, by - ay
        length2 = dx * dx + dy * dy
        t = np.clip(((xs - ax) * dx + (ys - ay) * dy) / length2, 0.0, 1.0) if length2 else np.zeros_like(xs)
        np.minimum(distance, np.hypot(xs - (ax + t * dx), ys - (ay + t * dy)), out=distance)
    _blend(canvas, x0, y0, np.clip(width / 2 + 0.5 - distance, 0.0, 1.0), colour)


def stroke_circle(canvas: np.ndarray, cx: float, cy: float, radius: float, width: float, colour: Colour) -> None:
    """A circle's outline of the given width, centred on the radius."""
    box = _box(canvas, [cx - radius, cx + radius], [cy - radius, cy + radius], width / 2)
    if box is None:
        return
    x0, y0, x1, y1 = box
    ys, xs = np.ogrid[y0:y1, x0:x1]
    distance = np.abs(np.hypot(xs + 0.5 - cx, ys + 0.5 - cy, dtype=np.float32) - radius)
    _blend(canvas, x0, y0, np.clip(width / 2 + 0.5 - distance, 0.0, 1.0), colour)

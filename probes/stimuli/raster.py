"""Anti-aliased drawing on numpy canvases: exact coverage from signed distances.

Each shape's pixel coverage is its signed distance to the pixel centre clipped to [0, 1] around
the edge, which anti-aliases like 4x4 supersampling at a fraction of the cost.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

Colour = tuple[int, int, int]


def blank(width: int, height: int, colour: Colour = (255, 255, 255)) -> np.ndarray:
    canvas = np.empty((height, width, 3), dtype=np.float32)
    canvas[:] = colour
    return canvas


def fill_disc(canvas: np.ndarray, cx: float, cy: float, radius: float, colour: Colour) -> None:
    """Paint a filled disc centred at (cx, cy) in pixel coordinates (x right, y down)."""
    height, width = canvas.shape[:2]
    x0, x1 = max(0, int(cx - radius - 2)), min(width, int(cx + radius + 3))
    y0, y1 = max(0, int(cy - radius - 2)), min(height, int(cy + radius + 3))
    if x0 >= x1 or y0 >= y1:
        return
    ys, xs = np.ogrid[y0:y1, x0:x1]
    distance = np.hypot(xs + 0.5 - cx, ys + 0.5 - cy)
    coverage = np.clip(radius + 0.5 - distance, 0.0, 1.0)[..., None]
    region = canvas[y0:y1, x0:x1]
    region += (np.asarray(colour, dtype=np.float32) - region) * coverage


def to_image(canvas: np.ndarray) -> Image.Image:
    return Image.fromarray(np.rint(canvas).clip(0, 255).astype(np.uint8), "RGB")

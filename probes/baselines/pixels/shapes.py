"""Counting outlined shapes: nested squares, and the Olympic-like rows of circles or pentagons.

Nested squares never touch, so each square is one connected outline. Olympic shapes overlap
their neighbours in the other row, so the whole drawing is one tangle; but the top of the
drawing holds only the tops of the upper row's shapes, each a separate cap, and the bottom
only the bottoms of the lower row's: two thin strips counted separately give both rows.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from probes.baselines.pixels.imaging import AnalysisError, components, dilate, ink_box, ink_mask, significant

SPECK = 0.05  # outlines under this fraction of the largest one's area are noise (or text)
STRIP = 0.06  # the strips at the top and bottom, as a fraction of the drawing's height
FAINT = 0.12  # share of the strokes' full ink that counts: thin pastel outlines are faint


def count_nested_squares(image: Image.Image) -> int:
    found = components(ink_mask(image, 0.4))
    if not len(found):
        raise AnalysisError("the image is blank: no squares drawn")
    outlines = significant(found, SPECK)
    squarish = np.abs(found.width - found.height) <= 0.1 * np.maximum(found.width, found.height) + 2
    if not squarish[outlines].all():
        raise AnalysisError("an outline is not square: this does not look like nested squares")
    return int(outlines.sum())


def count_olympic_shapes(image: Image.Image) -> int:
    """How many shapes in two staggered rows: caps along the top plus caps along the bottom."""
    mask = ink_mask(image, FAINT)
    top, bottom, left, right = ink_box(mask)
    strip = max(2, int(round(STRIP * (bottom - top + 1))))
    upper = _caps(mask[top : top + strip, left : right + 1])
    lower = _caps(mask[bottom + 1 - strip : bottom + 1, left : right + 1])
    if upper == 0 or lower == 0:
        raise AnalysisError("no shapes found along the top or the bottom of the drawing")
    return upper + lower


def _caps(strip: np.ndarray) -> int:
    """Separate pieces of outline in a strip (a shape's top or bottom is one piece)."""
    found = components(dilate(strip))
    if not len(found):
        return 0
    return int((found.width >= 0.25 * found.width.max()).sum())

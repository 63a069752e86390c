"""A table's rows and columns, from projections of its ink.

A grid line runs (nearly) the whole height or width of the table, while a word in a cell
covers a small part of it; so the columns of pixels that are mostly ink are the vertical lines,
the rows that are mostly ink the horizontal ones, and n lines bound n - 1 cells.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from probes.baselines.pixels.imaging import AnalysisError, ink_box, ink_mask, runs_1d

LINE_FILL = 0.6  # a grid line is ink over at least this share of the table's extent


def read_grid(image: Image.Image) -> tuple[int, int]:
    """(rows, columns) of the table in the image."""
    mask = ink_mask(image, 0.5)
    top, bottom, left, right = ink_box(mask)
    table = mask[top : bottom + 1, left : right + 1]
    vertical = _count_lines(table.mean(axis=0))
    horizontal = _count_lines(table.mean(axis=1))
    if vertical < 2 or horizontal < 2:
        raise AnalysisError(f"no table found: {horizontal} horizontal and {vertical} vertical lines span the drawing")
    return horizontal - 1, vertical - 1


def _count_lines(profile: np.ndarray) -> int:
    """Runs of neighbouring pixel rows (or columns) that are mostly ink: one per line."""
    starts, _ = runs_1d(profile >= LINE_FILL)
    return len(starts)

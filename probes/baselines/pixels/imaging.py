"""Small numpy helpers for reading drawings: ink, colour masks, runs, connected components.

Everything here is vectorised numpy (no scipy, no OpenCV): connected components are found on
row runs, joined by a union-find that hooks whole arrays of roots at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageChops

GREY_SPREAD = 2  # channels this close read as grey: a grey picture re-saved in colour rounds a little


class AnalysisError(ValueError):
    """The picture does not look like the stimulus the question is about."""


def colourless(image: Image.Image) -> bool:
    """Whether the picture carries no colour (every pixel's channels equal, up to rounding): a
    grayscale copy, where a colour named by the question shows only as its grey
    (`probes.core.truth.grey_of`)."""
    if image.mode in ("L", "LA", "1", "I", "F") or image.mode.startswith("I;16"):
        return True
    darkest, lightest = channel_extremes(image)
    return int(np.max(lightest.astype(np.int16) - darkest, initial=0)) <= GREY_SPREAD


def ink(image: Image.Image) -> np.ndarray:
    """How far each pixel is from white, 0..255 (uint8): 255 - its smallest channel. Saturated
    colours and black both read as full ink; anti-aliased edges read as their coverage."""
    return 255 - channel_extremes(image)[0]


def channel_extremes(image: Image.Image) -> tuple[np.ndarray, np.ndarray]:
    """Each pixel's smallest and largest channel (uint8); Pillow does this far faster than numpy
    reductions over the channel axis."""
    red, green, blue = image.convert("RGB").split()
    darkest = ImageChops.darker(ImageChops.darker(red, green), blue)
    lightest = ImageChops.lighter(ImageChops.lighter(red, green), blue)
    return np.asarray(darkest), np.asarray(lightest)


def ink_mask(image: Image.Image, fraction: float) -> np.ndarray:
    """Pixels with more than `fraction` of the drawing's full ink (see `ink_threshold`)."""
    level = ink(image)
    return level > ink_threshold(level, fraction)


def ink_threshold(level: np.ndarray, fraction: float) -> float:
    """`fraction` of the ink that the drawing's solid strokes reach. Relative, so that grey
    instead of black, or hair-thin strokes after a downscale, read like the original."""
    drawn = level[level > 12]
    peak = float(np.percentile(drawn, 99)) if drawn.size else 255.0
    return fraction * peak


def dilate(mask: np.ndarray, radius: int = 1) -> np.ndarray:
    """Grow a mask by `radius` px in every direction (a square), from running sums along rows
    then columns: closes breaks up to twice the radius wide."""
    out = mask
    for axis in (0, 1):
        counts = np.cumsum(out, axis=axis, dtype=np.int32)
        counts = np.concatenate([np.zeros_like(counts.take([0], axis=axis)), counts], axis=axis)
        size = out.shape[axis]
        high = np.minimum(np.arange(size) + radius + 1, size)
        low = np.maximum(np.arange(size) - radius, 0)
        out = (counts.take(high, axis=axis) - counts.take(low, axis=axis)) > 0
    return out


def colour_coverage(rgb: np.ndarray, colour: tuple[float, float, float], tolerance: float = 0.3) -> np.ndarray:
    """How much of `colour` (0..1 per channel) was blended over white in each of the N x 3 pixels
    (0..255), in [0, 1]; 0 for pixels of another colour (see `blend_fit`)."""
    coverage, misfit = blend_fit(rgb, colour)
    return np.where(misfit <= tolerance, coverage, 0.0).astype(np.float32)


def nearest_colour(rgb: np.ndarray, colours: list[np.ndarray], tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """For each of the N x 3 pixels (0..255): the index of the colour it is a blend of (-1 for
    none within `tolerance`) and how much of it."""
    fits = [blend_fit(rgb, tuple(colour)) for colour in colours]
    coverage = np.stack([c for c, _ in fits])
    misfit = np.stack([m for _, m in fits])
    best = misfit.argmin(axis=0)
    chosen = np.take_along_axis(misfit, best[None], axis=0)[0] <= tolerance
    return np.where(chosen, best, -1), np.take_along_axis(coverage, best[None], axis=0)[0]


def blend_fit(rgb: np.ndarray, colour: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Read N x 3 pixels (0..255) as white + c * (colour - white): c in [0, 1], and the misfit,
    how far each pixel's departure from white strays from that direction (0: a pure blend;
    about the sine of the angle between the two)."""
    direction = np.asarray(colour, dtype=np.float32) - 1.0
    offset = rgb.astype(np.float32) / 255.0 - 1.0
    c = np.clip(offset @ direction / float(direction @ direction), 0.0, 1.0)
    off_line = np.linalg.norm(offset - c[:, None] * direction, axis=1)
    departure = np.linalg.norm(offset, axis=1)
    return c, off_line / np.maximum(departure, 1e-6)


def runs_1d(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) indices of each run of True in a 1-D boolean array."""
    padded = np.concatenate(([False], flags.astype(bool), [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return edges[0::2], edges[1::2]


@dataclass(frozen=True)
class Components:
    """Connected components of a mask: one entry per component, largest first."""

    area: np.ndarray
    top: np.ndarray
    bottom: np.ndarray  # inclusive
    left: np.ndarray
    right: np.ndarray  # inclusive
    # The runs that make up each component, to paint or measure one of them.
    run_row: np.ndarray
    run_start: np.ndarray
    run_end: np.ndarray
    run_label: np.ndarray

    def __len__(self) -> int:
        return len(self.area)

    @property
    def height(self) -> np.ndarray:
        return self.bottom - self.top + 1

    @property
    def width(self) -> np.ndarray:
        return self.right - self.left + 1

    def labels(self, shape: tuple[int, int]) -> np.ndarray:
        """An image of component numbers: 0 for background, index + 1 for each component."""
        rows, columns, run = _run_pixels(self.run_row, self.run_start, self.run_end)
        out = np.zeros(shape, dtype=np.int32)
        out[rows, columns] = self.run_label[run] + 1
        return out

    def crop(self, index: int) -> np.ndarray:
        """One component's pixels within its bounding box."""
        pick = self.run_label == index
        rows, columns, _ = _run_pixels(self.run_row[pick], self.run_start[pick], self.run_end[pick])
        out = np.zeros((self.height[index], self.width[index]), dtype=bool)
        out[rows - self.top[index], columns - self.left[index]] = True
        return out


def _run_pixels(rows: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every pixel of the runs: (row, column, which run)."""
    lengths = ends - starts
    run = np.repeat(np.arange(len(lengths)), lengths)
    columns = starts[run] + np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return rows[run], columns, run


def _row_runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every horizontal run of True: (row, start, end exclusive), in row-major order."""
    height, width = mask.shape
    padded = np.zeros((height, width + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    steps = np.diff(padded, axis=1)
    rows_s, starts = np.nonzero(steps == 1)
    _, ends = np.nonzero(steps == -1)
    return rows_s, starts, ends


def _touching_run_pairs(
    rows: np.ndarray, starts: np.ndarray, ends: np.ndarray, width: int, diagonal: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (i, j) of runs in consecutive rows that touch (share a column, or a corner too
    when `diagonal`). Runs in a row are disjoint and sorted, so the partners of a run form a
    contiguous range found by binary search."""
    stride = width + 2
    slack = 1 if diagonal else 0
    key_start, key_end = rows * stride + starts, rows * stride + ends
    above = rows - 1
    # Partners i of run j sit in row rows[j] - 1 with end_i > start_j - slack and start_i < end_j + slack.
    low = np.searchsorted(key_end, above * stride + starts - slack, side="right")
    high = np.searchsorted(key_start, above * stride + ends + slack, side="left")
    row_first = np.searchsorted(rows, above, side="left")
    row_last = np.searchsorted(rows, above, side="right")
    low, high = np.maximum(low, row_first), np.minimum(high, row_last)
    counts = np.maximum(high - low, 0)
    j = np.repeat(np.arange(len(rows)), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    i = np.repeat(low, counts) + offsets
    return i, j


def _union(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Root of every node after joining each pair (a[k], b[k]); roots are the smallest index."""
    parent = np.arange(n)
    while True:
        while True:  # pointer jumping: every node points at its root
            jumped = parent[parent]
            if np.array_equal(jumped, parent):
                break
            parent = jumped
        ra, rb = parent[a], parent[b]
        differ = ra != rb
        if not differ.any():
            return parent
        low, high = np.minimum(ra[differ], rb[differ]), np.maximum(ra[differ], rb[differ])
        np.minimum.at(parent, high, low)


def components(mask: np.ndarray, diagonal: bool = True) -> Components:
    """Connected components of a boolean mask (8-connected when `diagonal`, else 4)."""
    rows, starts, ends = _row_runs(mask)
    i, j = _touching_run_pairs(rows, starts, ends, mask.shape[1], diagonal)
    roots = _union(len(rows), i, j)
    _, labels = np.unique(roots, return_inverse=True)
    count = int(labels.max()) + 1 if len(labels) else 0
    lengths = ends - starts
    area = np.bincount(labels, weights=lengths, minlength=count).astype(np.int64)
    top, bottom = np.full(count, mask.shape[0]), np.full(count, -1)
    left, right = np.full(count, mask.shape[1]), np.full(count, -1)
    np.minimum.at(top, labels, rows)
    np.maximum.at(bottom, labels, rows)
    np.minimum.at(left, labels, starts)
    np.maximum.at(right, labels, ends - 1)
    order = np.argsort(-area, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(count)
    return Components(
        area=area[order],
        top=top[order],
        bottom=bottom[order],
        left=left[order],
        right=right[order],
        run_row=rows,
        run_start=starts,
        run_end=ends,
        run_label=rank[labels] if count else labels,
    )


def significant(found: Components, fraction: float) -> np.ndarray:
    """Which components are at least `fraction` of the largest one's area (not specks)."""
    if not len(found):
        return np.zeros(0, dtype=bool)
    return found.area >= fraction * found.area[0]


def ink_box(mask: np.ndarray) -> tuple[int, int, int, int]:
    """(top, bottom, left, right), inclusive, of the True pixels; AnalysisError if none."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if not len(rows):
        raise AnalysisError("the image is blank: nothing is drawn on it")
    return int(rows[0]), int(rows[-1]), int(cols[0]), int(cols[-1])

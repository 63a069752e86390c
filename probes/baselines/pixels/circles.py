"""Two filled circles: apart, touching, or overlapping?

Read from the union of the two discs, whatever their colours: the discs are equal, so the
drawing is symmetric about its centre of mass and the narrowest place, the "neck", lies there,
across the line through both centres. Apart discs leave white at the neck; discs that just
touch meet in a waist of a few anti-aliased pixels; overlapping discs share a chord.

A chord c across two discs of diameter D that overlap by a depth o obeys c^2 = 2 D o (for
small o), so the neck gives the depth directly: a tangency reads under 1 px (the blur of the
edges), the paper's smallest overlap (0.05 diameters: 2.7 px at 384 px and diameter 1/7) reads
3 px or more, and it grows with the image while the blur does not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from probes.baselines.pixels.imaging import AnalysisError, components, ink, ink_threshold, significant

OVERLAP_DEPTH = 1.7  # px of overlap (read from the neck) above which the discs overlap
SPECK = 0.02  # components below this fraction of the largest are noise


@dataclass(frozen=True)
class CirclePair:
    apart: bool
    neck: float  # the chord across the neck, in px (0 when apart)
    diameter: float  # px

    @property
    def touching(self) -> bool:
        return not self.apart

    @property
    def overlapping(self) -> bool:
        return not self.apart and self.depth > OVERLAP_DEPTH

    @property
    def depth(self) -> float:
        """How deep the discs overlap, in px, from the neck chord."""
        return self.neck**2 / (2 * self.diameter)


def read_circle_pair(image: Image.Image) -> CirclePair:
    level = ink(image)
    found = components(level > ink_threshold(level, 0.5), diagonal=False)
    blobs = int(significant(found, SPECK).sum())
    if blobs not in (1, 2):
        raise AnalysisError(f"expected two discs, found {blobs} separate shapes")
    top, bottom = found.top[:blobs].min(), found.bottom[:blobs].max()
    left, right = found.left[:blobs].min(), found.right[:blobs].max()
    # Only the discs' surroundings matter; floats over the whole canvas would cost more than the rest.
    top, left = max(0, top - 2), max(0, left - 2)
    crop = level[top : bottom + 3, left : right + 3].astype(np.float32)
    coverage = crop / max(float(np.percentile(crop, 99.9)), 1.0)
    ys, xs = np.nonzero(coverage > 0.02)
    weights = np.clip(coverage[ys, xs], 0.0, 1.0)
    centre, axis = _principal_axis(xs, ys, weights)
    across = np.array([-axis[1], axis[0]])
    diameter = _extent(xs, ys, weights, centre, across)
    if blobs == 2:
        return CirclePair(apart=True, neck=0.0, diameter=diameter)
    neck = _chord(coverage, centre, across, half_length=diameter)
    return CirclePair(apart=False, neck=neck, diameter=diameter)


def _principal_axis(xs: np.ndarray, ys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coverage-weighted centre and the unit direction of greatest spread (centre to centre)."""
    total = weights.sum()
    centre = np.array([(xs * weights).sum() / total, (ys * weights).sum() / total])
    dx, dy = xs - centre[0], ys - centre[1]
    covariance = np.array(
        [[(weights * dx * dx).sum(), (weights * dx * dy).sum()], [(weights * dx * dy).sum(), (weights * dy * dy).sum()]]
    )
    values, vectors = np.linalg.eigh(covariance)
    return centre + 0.5, vectors[:, int(np.argmax(values))]


def _extent(xs: np.ndarray, ys: np.ndarray, weights: np.ndarray, centre: np.ndarray, direction: np.ndarray) -> float:
    """Width of the drawing along `direction`: the discs' diameter when taken across the axis."""
    along = (xs + 0.5 - centre[0]) * direction[0] + (ys + 0.5 - centre[1]) * direction[1]
    solid = weights > 0.5
    if not solid.any():
        raise AnalysisError("nothing solid is drawn")
    return float(along[solid].max() - along[solid].min() + 1.0)


def _chord(coverage: np.ndarray, centre: np.ndarray, direction: np.ndarray, half_length: float) -> float:
    """Length of ink along the line through `centre` in `direction`, sampled bilinearly."""
    step = 0.25
    t = np.arange(-half_length, half_length + step, step)
    x, y = centre[0] + t * direction[0] - 0.5, centre[1] + t * direction[1] - 0.5
    return float(_bilinear(coverage, x, y).clip(0.0, 1.0).sum() * step)


def _bilinear(image: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    height, width = image.shape
    inside = (x >= 0) & (y >= 0) & (x <= width - 1) & (y <= height - 1)
    x, y = np.clip(x, 0, width - 1.001), np.clip(y, 0, height - 1.001)
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = x - x0, y - y0
    top = image[y0, x0] * (1 - fx) + image[y0, x0 + 1] * fx
    bottom = image[y0 + 1, x0] * (1 - fx) + image[y0 + 1, x0 + 1] * fx
    return np.where(inside, top * (1 - fy) + bottom * fy, 0.0)

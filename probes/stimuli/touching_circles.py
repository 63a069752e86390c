"""Two filled circles of equal size, a given gap apart ("VLMs are blind", task 2).

Looks like the paper's released images: a white square canvas, a blue and a magenta disc
centred on the canvas along the given orientation, magenta on top where they overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from probes.stimuli.lazy_numpy import np
from probes.stimuli.raster import Drawn, blank, fill_disc

# Bump when the drawing changes: image references (and so cached answers) are keyed by it.
VERSION = 1
BLUE = (0, 117, 255)
MAGENTA = (234, 0, 255)
ORIENTATIONS = {"vertical": 90, "horizontal": 0, "diagonal_1": -45, "diagonal_2": 45}


@dataclass(frozen=True)
class TwoCircles(Drawn):
    canvas: int  # side of the square canvas, px
    diameter: float  # as a fraction of the canvas side (1/4 ... 1/7 in the paper)
    gap: float  # distance between the perimeters as a fraction of the diameter; < 0 overlaps
    orientation: str  # a key of ORIENTATIONS (angle of the line through both centres)

    def __post_init__(self) -> None:
        if self.orientation not in ORIENTATIONS:
            raise ValueError(f"orientation must be one of {', '.join(ORIENTATIONS)}; got {self.orientation!r}")
        if not 0 < self.diameter <= 0.5:
            raise ValueError(f"diameter is a fraction of the canvas in (0, 0.5]; got {self.diameter}")
        if not -1 < self.gap <= 2:
            raise ValueError(f"gap is a fraction of the diameter in (-1, 2]; got {self.gap}")
        if not 16 <= self.canvas <= 4096:
            raise ValueError(f"canvas must be 16 to 4096 px; got {self.canvas}")

    @property
    def ref(self) -> str:
        return (
            f"two-circles/v{VERSION}:canvas={self.canvas},diameter={self.diameter!r},"
            f"gap={self.gap!r},orientation={self.orientation}"
        )

    @property
    def touching(self) -> bool:
        return self.gap <= 0

    @property
    def overlapping(self) -> bool:
        return self.gap < 0

    def centres(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """(blue, magenta) centres in pixels, x right and y down."""
        diameter_px = self.diameter * self.canvas
        half = (diameter_px + self.gap * diameter_px) / 2
        angle = math.radians(ORIENTATIONS[self.orientation])
        dx, dy = half * math.cos(angle), -half * math.sin(angle)
        middle = self.canvas / 2
        return (middle - dx, middle - dy), (middle + dx, middle + dy)

    def draw(self) -> np.ndarray:
        canvas = blank(self.canvas, self.canvas)
        radius = self.diameter * self.canvas / 2
        (bx, by), (mx, my) = self.centres()
        fill_disc(canvas, bx, by, radius, BLUE)
        fill_disc(canvas, mx, my, radius, MAGENTA)
        return canvas

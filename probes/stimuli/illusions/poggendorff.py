"""Poggendorff: a red diagonal line interrupted by a grey rectangle; is its right part in line?

pyllusion 1.4 `Poggendorff`: the left segment leaves the centre up-left at `illusion_strength`
degrees from the horizontal, the right one down-right, parallel to it, starting `difference`
units higher (`difference > 0`: the right segment sits above the left one's continuation). A
positive strength with a positive difference is incongruent (pyllusion's labels). The grey
rectangle (0.5 x 1.75 units) hides the middle: the red targets are the visible parts only, and
the control without inducers draws exactly those red pixels without the rectangle.

Measured: a line through the middle of every column of each segment (least squares); the
offset is the left line's height minus the right line's at the middle of the gap, positive when
the right segment is higher. Fitted lines are good to a fraction of a pixel, so the segments
count as aligned within TOLERANCE px.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from probes.stimuli.illusions.base import Illusion
from probes.stimuli.illusions.drawing import Box, Pixels, Scene, extent
from probes.stimuli.illusions.measure import Measured, MeasureError, column_line

TOLERANCE = 1.0  # px
MAX_STRENGTH = 60.0  # steeper, and the visible parts beside the rectangle shrink to nothing


@dataclass(frozen=True)
class Poggendorff(Illusion):
    family = "poggendorff"
    pyllusion_class = "Poggendorff"
    positive, negative = "above", "below"  # where the right segment sits
    zero_is_positive = True  # `if difference < 0: angle = 90 + strength`
    target_axis = "x"
    swapped_by = frozenset({"rows", "columns"})  # either way the right segment moves to the other side of the line
    strength_shapes_targets = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if abs(self.illusion_strength) > MAX_STRENGTH:
            raise ValueError(f"Poggendorff strength must be within +/-{MAX_STRENGTH:g} degrees")

    def scene(self) -> Scene:
        p = self.pyllusion_parameters()
        targets = {"left": self.segment(p, "Left"), "right": self.segment(p, "Right")}
        half_width, half_height = float(p["Rectangle_Width"]) / 2, float(p["Rectangle_Height"]) / 2
        (left, top), (right, bottom) = self.px(-half_width, half_height), self.px(half_width, -half_height)
        occluder = Box(left, top, right, bottom)
        view = [point for shape in [*targets.values(), occluder] for point in extent(shape)]
        return Scene(self.canvas, targets, (), occluder=occluder, view=tuple(view))

    @classmethod
    def measure_pixels(cls, targets: dict[str, Pixels]) -> Measured:
        left_slope, left_intercept = column_line(targets["left"])
        right_slope, right_intercept = column_line(targets["right"])
        left_end, right_start = int(np.max(targets["left"][1])), int(np.min(targets["right"][1]))
        if right_start <= left_end:
            raise MeasureError("the right segment does not start right of the left one")
        middle = (left_end + right_start + 1) / 2
        offset = (left_slope * middle + left_intercept) - (right_slope * middle + right_intercept)
        values = {"offset_px": offset, "gap_px": right_start - left_end - 1}
        return Measured(values, offset, "px", TOLERANCE)

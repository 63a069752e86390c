"""Vertical-horizontal: two red lines side by side; one of them tilted towards the vertical.

pyllusion 1.4 `VerticalHorizontal`: `difference > 0` makes the left line longer, left =
(1 + |d|) x `size_min`; `illusion_strength` (degrees) tilts one line up from the horizontal:
positive tilts the right (shorter) line, which then looks longer (incongruent), negative tilts
the left one. There are no separate inducers: the tilt is the inducer, so the control without
inducers is both lines horizontal (strength 0).

Measured: each line's length along its own axis (the spread of its pixels, plus one pixel).
A tilted line's pixels trace its ends only to about a pixel each, so the two lines count as
equal within TOLERANCE px.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from probes.stimuli.illusions.base import Illusion
from probes.stimuli.illusions.drawing import Pixels, Scene, extent
from probes.stimuli.illusions.measure import Measured, feret_length

TOLERANCE = 2.0  # px: a pixel at each end of a tilted line


@dataclass(frozen=True)
class VerticalHorizontal(Illusion):
    size_min: float = 0.5  # the shorter line's length, pyllusion units

    family = "vertical-horizontal"
    pyllusion_class = "VerticalHorizontal"
    positive, negative = "left", "right"
    zero_is_positive = True  # `if difference >= 0` in pyllusion
    target_axis = "x"
    swapped_by = frozenset({"columns"})  # mirrored, the left line is the right one
    strength_shapes_targets = True
    has_inducers = False

    def pyllusion_arguments(self) -> dict[str, Any]:
        arguments = {**super().pyllusion_arguments(), "size_min": self.size_min}
        if self.inducers == "none":
            arguments["illusion_strength"] = 0.0
        return arguments

    def scene(self) -> Scene:
        p = self.pyllusion_parameters()
        targets = {"left": self.segment(p, "Left"), "right": self.segment(p, "Right")}
        view = [point for shape in targets.values() for point in extent(shape)]
        return Scene(self.canvas, targets, (), view=tuple(view))

    @classmethod
    def measure_pixels(cls, targets: dict[str, Pixels]) -> Measured:
        left, right = feret_length(targets["left"]), feret_length(targets["right"])
        return Measured({"left_px": left, "right_px": right}, left - right, "px", TOLERANCE)

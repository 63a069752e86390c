"""Ponzo: two horizontal red lines between two converging black lines (railway tracks).

pyllusion 1.4 `Ponzo`: `difference > 0` makes the top line longer, top = (1 + |d|) x
`size_min`; `illusion_strength` is the side lines' tilt in degrees, positive making them
converge downwards, towards the shorter bottom line, which then looks longer (incongruent;
the line nearer the vertex looks longer). The side lines
run past the canvas, as pyllusion draws them. Measured: each red line's length in whole pixels;
equal when the counts are equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from probes.stimuli.illusions.base import Illusion
from probes.stimuli.illusions.drawing import BLACK, Pixels, Scene, extent
from probes.stimuli.illusions.measure import Measured, width_px


@dataclass(frozen=True)
class Ponzo(Illusion):
    size_min: float = 0.5
    distance: float = 1.0

    family = "ponzo"
    pyllusion_class = "Ponzo"
    positive, negative = "top", "bottom"
    zero_is_positive = False  # `angle = -angle if difference > 0`: zero draws as a negative difference
    target_axis = "y"
    swapped_by = frozenset({"rows"})  # upside down the top line is the bottom one

    def pyllusion_arguments(self) -> dict[str, Any]:
        return {**super().pyllusion_arguments(), "size_min": self.size_min, "distance": self.distance}

    def scene(self) -> Scene:
        p = self.pyllusion_parameters()
        targets = {"top": self.segment(p, "Top"), "bottom": self.segment(p, "Bottom")}
        sides = tuple((self.segment(p, side), BLACK) for side in ("Left", "Right"))
        # The side lines run off the canvas by design; where they cross near its top and bottom
        # edges must stay on it, so the figure only ever moves a little up or down.
        view = [point for shape in targets.values() for point in extent(shape)]
        for side in ("Left", "Right"):
            x1, y1, x2, y2 = (float(p[f"{side}_{k}"]) for k in ("x1", "y1", "x2", "y2"))
            for y in (-0.96, 0.96):
                view.append(self.px(x1 + (x2 - x1) * (y - y1) / (y2 - y1), y))
        return Scene(self.canvas, targets, sides, view=tuple(view))

    @classmethod
    def measure_pixels(cls, targets: dict[str, Pixels]) -> Measured:
        top, bottom = width_px(targets["top"]), width_px(targets["bottom"])
        return Measured({"top_px": top, "bottom_px": bottom}, top - bottom, "px")

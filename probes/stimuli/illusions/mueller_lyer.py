"""Mueller-Lyer: two horizontal red lines, one above the other, with black fins at their ends.

pyllusion 1.4 `MullerLyer` (geometry from `get_parameters()`): `difference > 0` makes the top
line longer, top = (1 + |d|) x `size_min`; `illusion_strength` is the fins' angle in degrees,
positive putting arrowheads (<->) on the longer top line, so that it looks shorter
(incongruent). `distance` separates the lines. Measured: each line's length in whole pixels
(columns of red); equal when the counts are equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from probes.stimuli.illusions.base import Illusion
from probes.stimuli.illusions.drawing import BLACK, Pixels, Scene, extent
from probes.stimuli.illusions.measure import Measured, width_px

FINS = [f"Distractor_{which}{side}" for which in ("TopLeft", "TopRight", "BottomLeft", "BottomRight") for side in "12"]


@dataclass(frozen=True)
class MuellerLyer(Illusion):
    size_min: float = 0.5  # the shorter line's length, pyllusion units
    distance: float = 1.0  # between the two lines

    family = "mueller-lyer"
    pyllusion_class = "MullerLyer"
    positive, negative = "top", "bottom"
    zero_is_positive = True  # `if difference >= 0` in pyllusion
    target_axis = "y"
    swapped_by = frozenset({"rows"})  # upside down the top line is the bottom one

    def pyllusion_arguments(self) -> dict[str, Any]:
        return {**super().pyllusion_arguments(), "size_min": self.size_min, "distance": self.distance}

    def scene(self) -> Scene:
        p = self.pyllusion_parameters()
        targets = {"top": self.segment(p, "Top"), "bottom": self.segment(p, "Bottom")}
        fins = tuple((self.segment(p, name), BLACK) for name in FINS)
        view = [point for shape in [*targets.values(), *(f for f, _ in fins)] for point in extent(shape)]
        return Scene(self.canvas, targets, fins, view=tuple(view))

    @classmethod
    def measure_pixels(cls, targets: dict[str, Pixels]) -> Measured:
        top, bottom = width_px(targets["top"]), width_px(targets["bottom"])
        return Measured({"top_px": top, "bottom_px": bottom}, top - bottom, "px")

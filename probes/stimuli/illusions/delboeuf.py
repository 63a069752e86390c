"""Delboeuf: two red discs side by side, each inside a thin black circle.

pyllusion 1.4 `Delboeuf`: `difference` is an AREA ratio, `difference > 0` makes the left disc
bigger (diameter sqrt(1 + |d|) x `size_min`; pyllusion's `Size_Inner_Difference` is not used).
`illusion_strength` widens one outer circle (by sqrt(1 + |s|)), positive around the bigger left
disc, so that it looks smaller (incongruent). Measured: each red disc's area in pixels; equal
when the counts are equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from probes.stimuli.illusions.base import Illusion
from probes.stimuli.illusions.drawing import BLACK, Disc, Pixels, Ring, Scene, extent
from probes.stimuli.illusions.ebbinghaus import measure_discs
from probes.stimuli.illusions.measure import Measured


@dataclass(frozen=True)
class Delboeuf(Illusion):
    size_min: float = 0.25
    distance: float = 1.0

    family = "delboeuf"
    pyllusion_class = "Delboeuf"
    positive, negative = "left", "right"
    zero_is_positive = False  # `if difference > 0` in pyllusion
    target_axis = "x"
    swapped_by = frozenset({"columns"})  # mirrored, the left disc is the right one

    def pyllusion_arguments(self) -> dict[str, Any]:
        return {**super().pyllusion_arguments(), "size_min": self.size_min, "distance": self.distance}

    def scene(self) -> Scene:
        p = self.pyllusion_parameters()
        radius = self.scale / 2
        targets, rings = {}, []
        for side in ("Left", "Right"):
            centre = self.px(float(p[f"Position_{side}"]), 0.0)
            targets[side.lower()] = Disc(centre, float(p[f"Size_Inner_{side}"]) * radius)
            rings.append((Ring(centre, float(p[f"Size_Outer_{side}"]) * radius), BLACK))
        view = [point for shape in [*targets.values(), *(r for r, _ in rings)] for point in extent(shape)]
        return Scene(self.canvas, targets, tuple(rings), view=tuple(view))

    @classmethod
    def measure_pixels(cls, targets: dict[str, Pixels]) -> Measured:
        return measure_discs(targets)

"""Ebbinghaus: two red discs side by side, each in a ring of black discs.

pyllusion 1.4 `Ebbinghaus`: `difference` is an AREA ratio, `difference > 0` makes the left disc
bigger (its diameter sqrt(1 + |d|) x `size_min`); pyllusion's `Size_Inner_Difference` is not
used (its formula has an operator-precedence slip). `illusion_strength` scales the surrounding
discs (left ones by sqrt(1 + |s|/2), right ones by its inverse), positive surrounding the bigger
left disc with bigger discs, so that it looks smaller (incongruent). Measured: each red disc's
area in pixels; equal when the counts are equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from probes.stimuli.illusions.base import Illusion
from probes.stimuli.illusions.drawing import BLACK, Disc, Pixels, Scene, extent
from probes.stimuli.illusions.measure import Measured, area_px, width_px


@dataclass(frozen=True)
class Ebbinghaus(Illusion):
    size_min: float = 0.25  # the smaller red disc's diameter, pyllusion units
    distance: float = 1.0  # between the two red discs' centres

    family = "ebbinghaus"
    pyllusion_class = "Ebbinghaus"
    positive, negative = "left", "right"
    zero_is_positive = False  # `if difference > 0` in pyllusion
    target_axis = "x"
    swapped_by = frozenset({"columns"})  # mirrored, the left disc is the right one

    def pyllusion_arguments(self) -> dict[str, Any]:
        return {**super().pyllusion_arguments(), "size_min": self.size_min, "distance": self.distance}

    def scene(self) -> Scene:
        p = self.pyllusion_parameters()
        radius = self.scale / 2  # pyllusion: diameter in px = size x height / 2
        targets, rings = {}, []
        for side in ("Left", "Right"):
            position = float(p[f"Position_{side}"])
            targets[side.lower()] = Disc(self.px(position, 0.0), float(p[f"Size_Inner_{side}"]) * radius)
            # As pyllusion's image code: the ring is re-centred on its red disc.
            xs = np.asarray(p[f"Position_Outer_x_{side}"], dtype=float)
            xs = xs + (position - xs.mean())
            ys = np.asarray(p[f"Position_Outer_y_{side}"], dtype=float)
            size = float(p[f"Size_Outer_{side}"]) * radius
            rings += [(Disc(self.px(float(x), float(y)), size), BLACK) for x, y in zip(xs, ys, strict=True)]
        view = [point for shape in [*targets.values(), *(r for r, _ in rings)] for point in extent(shape)]
        return Scene(self.canvas, targets, tuple(rings), view=tuple(view))

    @classmethod
    def measure_pixels(cls, targets: dict[str, Pixels]) -> Measured:
        return measure_discs(targets)


def measure_discs(targets: dict[str, Pixels]) -> Measured:
    """Two red discs compared by area (the quantity pyllusion's difference is defined on)."""
    left, right = area_px(targets["left"]), area_px(targets["right"])
    values = {
        "left_area_px": left,
        "right_area_px": right,
        "left_diameter_px": width_px(targets["left"]),
        "right_diameter_px": width_px(targets["right"]),
    }
    return Measured(values, left - right, "px^2")

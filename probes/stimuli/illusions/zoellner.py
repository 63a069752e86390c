"""Zoellner: two long red lines, nearly horizontal, crossed by short black slanted lines.

pyllusion 1.4 `Zollner`: the red lines sit at 90 +/- d degrees (the angle between them is
2|d|); `difference > 0` makes them converge to the left (they are closer together on the left),
as the Illusion Game scores it ("arrow left"); parallel iff d = 0. `illusion_strength` is the
crossing lines' angle; pyllusion calls a positive strength congruent for this figure.
`distractors_n` crossing lines of length `distractors_length` sit on each red line.

Measured: the white gap between the two red lines, counted in whole pixels down the first and
the last column of the canvas. Rounding keeps the order of two gaps (each edge moves
monotonically along the line), so the measured side is never the wrong one; equal when the two
counts are equal. The fitted angle of each line is kept too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from probes.stimuli.illusions.base import Illusion
from probes.stimuli.illusions.drawing import BLACK, Pixels, Scene, Segment, extent
from probes.stimuli.illusions.measure import Measured, column_line, end_gaps


@dataclass(frozen=True)
class Zoellner(Illusion):
    distractors_n: int = 8
    distractors_length: float = 0.66

    family = "zoellner"
    pyllusion_class = "Zollner"
    positive, negative = "left", "right"  # the side where the lines are closer together
    zero_is_positive = True  # pyllusion flips `difference`, then `if difference <= 0`
    target_axis = "y"
    swapped_by = frozenset({"columns"})  # mirrored, the side where the lines close in changes

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 1 <= self.distractors_n <= 40:
            raise ValueError(f"distractors_n must be 1 to 40; got {self.distractors_n}")

    def pyllusion_arguments(self) -> dict[str, Any]:
        return {
            **super().pyllusion_arguments(),
            "distractors_n": int(self.distractors_n),
            "distractors_length": self.distractors_length,
        }

    def scene(self) -> Scene:
        p = self.pyllusion_parameters()
        targets = {"top": self.segment(p, "Top"), "bottom": self.segment(p, "Bottom")}
        crossing = []
        for position in ("Top", "Bottom"):
            for i in range(int(p["Distractors_n"])):
                start = self.px(float(p[f"Distractors_{position}_x1"][i]), float(p[f"Distractors_{position}_y1"][i]))
                end = self.px(float(p[f"Distractors_{position}_x2"][i]), float(p[f"Distractors_{position}_y2"][i]))
                crossing.append((Segment(start, end), BLACK))
        # The red lines run off both sides by design; the crossing lines and the lines' middles stay on.
        view = [point for shape, _ in crossing for point in extent(shape)]
        view += [self.px(0.0, 0.33), self.px(0.0, -0.33)]
        return Scene(self.canvas, targets, tuple(crossing), view=tuple(view))

    @classmethod
    def measure_pixels(cls, targets: dict[str, Pixels]) -> Measured:
        left_gap, right_gap = end_gaps(targets["top"], targets["bottom"])
        top_slope, _ = column_line(targets["top"])
        bottom_slope, _ = column_line(targets["bottom"])
        values = {
            "gap_left_px": left_gap,
            "gap_right_px": right_gap,
            "angle_between_deg": math.degrees(math.atan(-top_slope) - math.atan(-bottom_slope)),
        }
        return Measured(values, right_gap - left_gap, "px")

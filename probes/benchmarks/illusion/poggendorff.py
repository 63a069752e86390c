"""illusion/poggendorff: a red diagonal line runs behind a grey rectangle; does its right part
come out above or below where the left part points?

Parameters (pyllusion 1.4 `Poggendorff`): `difference` (> 0: the right segment sits that many
units above the left one's continuation), `illusion_strength` (the line's angle from the
horizontal, degrees, up to +/-60 here); plus `design`, `inducers`, `canvas`, `seed`, `jitter`
(see the package docstring). The control without inducers shows the same red segments without
the rectangle, one for each tilt. Default: the Illusion Game's series 1, 672 images, 1344 items.
Source: Makowski et al. (2021; 2023); Poggendorff's figure, published by Zoellner (1860).
"""

from __future__ import annotations

from probes.benchmarks.illusion import SOURCE
from probes.benchmarks.illusion.common import IllusionBenchmark, illusion_params
from probes.core.errors import BenchmarkError
from probes.core.registry import register
from probes.stimuli.illusions.measure import Measured
from probes.stimuli.illusions.poggendorff import Poggendorff


class PoggendorffLine(IllusionBenchmark):
    id = "illusion/poggendorff"
    title = "Poggendorff: is the right segment above or below the line?"
    source = SOURCE
    stimulus = Poggendorff
    options = ("Above", "Below")
    prompts = {
        "above-below": (
            "The red line is interrupted by the grey rectangle. Is the red segment on the right above or below "
            "the straight continuation of the segment on the left? Answer with the letter of your choice."
        ),
        "extend": (
            "Imagine extending the left red segment in a straight line behind the grey rectangle. Does the right "
            "red segment lie above or below that extension? Answer with the letter of your choice."
        ),
    }
    params = illusion_params("poggendorff", {})

    def describe(self, measured: Measured) -> str:
        offset = measured.values["offset_px"]
        side = "above" if offset > 0 else "below"
        return f"The right red segment sits {abs(offset):.1f} pixels {side} the straight continuation of the left one."


@register("illusion/poggendorff", generated=PoggendorffLine)
def poggendorff(data: str | None = None, params=None):
    if data is not None:
        raise BenchmarkError("illusion/poggendorff is generated: it reads no --data")
    return PoggendorffLine(params)

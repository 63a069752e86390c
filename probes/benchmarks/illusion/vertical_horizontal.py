"""illusion/vertical-horizontal: which of two red lines is longer, when one of them is tilted
towards the vertical (vertical lines look longer)?

Parameters (pyllusion 1.4 `VerticalHorizontal`): `difference` (> 0: the left line is longer),
`illusion_strength` (degrees the right line is tilted up from the horizontal; negative tilts
the left line), `size_min`; plus `design`, `inducers`, `canvas`, `seed`, `jitter` (see the
package docstring). The tilt is the inducer: the control without inducers is strength 0 (both
lines horizontal), already in the designs, so this figure has no separate "none" items.
Default: the Illusion Game's series 1, 336 images, 672 items. VLMBias's design varies
`size_min` at strength 0 (with pyllusion 1.4's geometry, two horizontal lines).
Source: Makowski et al. (2021; 2023); Oppel (1855), Fick (1851).
"""

from __future__ import annotations

from probes.benchmarks.generated import Param
from probes.benchmarks.illusion import SOURCE
from probes.benchmarks.illusion.common import IllusionBenchmark, illusion_params
from probes.core.errors import BenchmarkError
from probes.core.registry import register
from probes.stimuli.illusions.measure import Measured
from probes.stimuli.illusions.vertical_horizontal import VerticalHorizontal


class VerticalHorizontalLines(IllusionBenchmark):
    id = "illusion/vertical-horizontal"
    title = "Vertical-horizontal: which red line is longer?"
    source = SOURCE
    stimulus = VerticalHorizontal
    options = ("Left", "Right")
    extras = ("size_min",)
    prompts = {
        "which-longer": "Which red line is longer: the left one or the right one? Answer with the letter of your choice.",
        "longer-line": "Compare the lengths of the two red lines. Which of them is longer? Answer with the letter of your choice.",
    }
    params = illusion_params("vertical-horizontal", {"size_min": Param((0.5,), float, minimum=0.01, maximum=2)})

    def describe(self, measured: Measured) -> str:
        v = measured.values
        return f"The left red line is about {v['left_px']:.0f} pixels long and the right one about {v['right_px']:.0f}."


@register("illusion/vertical-horizontal", generated=VerticalHorizontalLines)
def vertical_horizontal(data: str | None = None, params=None):
    if data is not None:
        raise BenchmarkError("illusion/vertical-horizontal is generated: it reads no --data")
    return VerticalHorizontalLines(params)

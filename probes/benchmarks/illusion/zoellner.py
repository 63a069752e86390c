"""illusion/zoellner: on which side do two long red lines come closer together, when short
slanted lines across them make parallel lines look tilted?

Parameters (pyllusion 1.4 `Zollner`): `difference` (degrees; the lines sit at 90 +/- d, so the
angle between them is 2|d|; > 0: they converge to the left), `illusion_strength` (the crossing
lines' angle, degrees; pyllusion calls positive congruent here), `distractors_n`,
`distractors_length`; plus `design`, `inducers`, `canvas`, `seed`, `jitter` (see the package
docstring). Default: the Illusion Game's series 1, 384 images, 768 items.
Source: Makowski et al. (2021; 2023); Zoellner (1860).
"""

from __future__ import annotations

from probes.benchmarks.generated import Param
from probes.benchmarks.illusion import SOURCE
from probes.benchmarks.illusion.common import IllusionBenchmark, illusion_params
from probes.core.errors import BenchmarkError
from probes.core.registry import register
from probes.stimuli.illusions.measure import Measured
from probes.stimuli.illusions.zoellner import Zoellner


class ZoellnerLines(IllusionBenchmark):
    id = "illusion/zoellner"
    title = "Zoellner: towards which side do the red lines converge?"
    source = SOURCE
    stimulus = Zoellner
    options = ("Left", "Right")
    extras = ("distractors_n", "distractors_length")
    prompts = {
        "closer-side": (
            "The two long red lines may not be exactly parallel. On which side are they closer together: "
            "the left or the right? Answer with the letter of your choice."
        ),
        "converge": "Towards which side do the two long red lines converge? Answer with the letter of your choice.",
    }
    params = illusion_params(
        "zoellner",
        {
            "distractors_n": Param((8,), int, minimum=1, maximum=40),
            "distractors_length": Param((0.66,), float, minimum=0.01, maximum=2),
        },
    )

    def describe(self, measured: Measured) -> str:
        v = measured.values
        return (
            f"At the left edge the red lines are {v['gap_left_px']:.0f} pixels apart, "
            f"at the right edge {v['gap_right_px']:.0f} pixels."
        )


@register("illusion/zoellner", generated=ZoellnerLines)
def zoellner(data: str | None = None, params=None):
    if data is not None:
        raise BenchmarkError("illusion/zoellner is generated: it reads no --data")
    return ZoellnerLines(params)

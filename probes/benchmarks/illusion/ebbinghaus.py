"""illusion/ebbinghaus: which of two red discs is bigger, when a ring of big discs around one and
of small discs around the other make them look different?

Parameters (pyllusion 1.4 `Ebbinghaus`): `difference` (an AREA ratio; > 0: the left disc is
bigger, by sqrt(1 + |d|) in diameter), `illusion_strength` (positive: bigger surrounding discs
around the left disc), `size_min`, `distance`; plus `design`, `inducers`, `canvas`, `seed`,
`jitter` (see the package docstring). Default: the Illusion Game's series 1 (`distance` 0.9),
384 images, 768 items. Source: Makowski et al. (2021; 2023); Ebbinghaus (1902).
"""

from __future__ import annotations

from probes.benchmarks.generated import Param
from probes.benchmarks.illusion import SOURCE
from probes.benchmarks.illusion.common import IllusionBenchmark, illusion_params
from probes.core.errors import BenchmarkError
from probes.core.registry import register
from probes.stimuli.illusions.ebbinghaus import Ebbinghaus
from probes.stimuli.illusions.measure import Measured

PROMPTS = {
    "which-bigger": "Which red circle is bigger: the left one or the right one? Answer with the letter of your choice.",
    "larger-circle": "Compare the two red circles. Which of them is larger? Answer with the letter of your choice.",
}


def describe_discs(measured: Measured) -> str:
    v = measured.values
    return (
        f"The left red circle covers {v['left_area_px']:.0f} pixels ({v['left_diameter_px']:.0f} across) "
        f"and the right one {v['right_area_px']:.0f} pixels ({v['right_diameter_px']:.0f} across)."
    )


class EbbinghausCircles(IllusionBenchmark):
    id = "illusion/ebbinghaus"
    title = "Ebbinghaus: which red circle is bigger?"
    source = SOURCE
    stimulus = Ebbinghaus
    options = ("Left", "Right")
    extras = ("size_min", "distance")
    prompts = PROMPTS
    params = illusion_params(
        "ebbinghaus",
        {
            "size_min": Param((0.25,), float, minimum=0.01, maximum=2),
            "distance": Param((1.0,), float, minimum=0.01, maximum=3),
        },
    )

    def describe(self, measured: Measured) -> str:
        return describe_discs(measured)


@register("illusion/ebbinghaus", generated=EbbinghausCircles)
def ebbinghaus(data: str | None = None, params=None):
    if data is not None:
        raise BenchmarkError("illusion/ebbinghaus is generated: it reads no --data")
    return EbbinghausCircles(params)

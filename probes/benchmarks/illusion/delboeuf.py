"""illusion/delboeuf: which of two red discs is bigger, when a black circle around each, tight
around one and wide around the other, makes them look different?

Parameters (pyllusion 1.4 `Delboeuf`): `difference` (an AREA ratio; > 0: the left disc is
bigger), `illusion_strength` (positive: the wider circle around the left disc), `size_min`,
`distance`; plus `design`, `inducers`, `canvas`, `seed`, `jitter` (see the package docstring).
Default: the Illusion Game's series 1 (`distance` 0.9), 384 images, 768 items. VLMBias has no
Delboeuf figure, so there is no `vlmbias` design here.
Source: Makowski et al. (2021; 2023); Delboeuf (1865).
"""

from __future__ import annotations

from probes.benchmarks.generated import Param
from probes.benchmarks.illusion import SOURCE
from probes.benchmarks.illusion.common import IllusionBenchmark, illusion_params
from probes.benchmarks.illusion.ebbinghaus import PROMPTS, describe_discs
from probes.core.errors import BenchmarkError
from probes.core.registry import register
from probes.stimuli.illusions.delboeuf import Delboeuf
from probes.stimuli.illusions.measure import Measured


class DelboeufCircles(IllusionBenchmark):
    id = "illusion/delboeuf"
    title = "Delboeuf: which red circle is bigger?"
    source = SOURCE
    stimulus = Delboeuf
    options = ("Left", "Right")
    extras = ("size_min", "distance")
    prompts = PROMPTS
    params = illusion_params(
        "delboeuf",
        {
            "size_min": Param((0.25,), float, minimum=0.01, maximum=2),
            "distance": Param((1.0,), float, minimum=0.01, maximum=3),
        },
    )

    def describe(self, measured: Measured) -> str:
        return describe_discs(measured)


@register("illusion/delboeuf", generated=DelboeufCircles)
def delboeuf(data: str | None = None, params=None):
    if data is not None:
        raise BenchmarkError("illusion/delboeuf is generated: it reads no --data")
    return DelboeufCircles(params)

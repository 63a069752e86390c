"""illusion/mueller-lyer: which of two red lines, one above the other, is longer, when fins at
their ends make one look longer?

Parameters (pyllusion 1.4 `MullerLyer`): `difference` (> 0: the top line is longer, top =
(1 + |d|) x `size_min`), `illusion_strength` (the fins' angle, degrees; positive puts arrowheads
(<->) on the top line), `size_min`, `distance`; plus `design`, `inducers`, `canvas`, `seed`,
`jitter` (see the package docstring). Default: the Illusion Game's series 1 (differences
+/-0.066 to +/-0.46, strengths 42, 28, 14, 0 with both polarities), 384 images, 768 items.
Source: Makowski et al. (2021; 2023); Mueller-Lyer (1889).
"""

from __future__ import annotations

from probes.benchmarks.generated import Param
from probes.benchmarks.illusion import SOURCE
from probes.benchmarks.illusion.common import IllusionBenchmark, illusion_params
from probes.core.errors import BenchmarkError
from probes.core.registry import register
from probes.stimuli.illusions.measure import Measured
from probes.stimuli.illusions.mueller_lyer import MuellerLyer


class MuellerLyerLines(IllusionBenchmark):
    id = "illusion/mueller-lyer"
    title = "Mueller-Lyer: which red line is longer?"
    source = SOURCE
    stimulus = MuellerLyer
    options = ("Top", "Bottom")
    extras = ("size_min", "distance")
    prompts = {
        "which-longer": "Which red line is longer: the top one or the bottom one? Answer with the letter of your choice.",
        "longer-line": "Compare the two horizontal red lines. Which of them is longer? Answer with the letter of your choice.",
    }
    params = illusion_params(
        "mueller-lyer",
        {
            "size_min": Param((0.5,), float, minimum=0.01, maximum=2),
            "distance": Param((1.0,), float, minimum=0.01, maximum=3),
        },
    )

    def describe(self, measured: Measured) -> str:
        v = measured.values
        return f"The top red line is {v['top_px']:.0f} pixels long and the bottom one {v['bottom_px']:.0f} pixels."


@register("illusion/mueller-lyer", generated=MuellerLyerLines)
def mueller_lyer(data: str | None = None, params=None):
    if data is not None:
        raise BenchmarkError("illusion/mueller-lyer is generated: it reads no --data")
    return MuellerLyerLines(params)

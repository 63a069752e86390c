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

from probes.benchmarks.illusion.lines import TwoLines, generated_only, line_params
from probes.core.registry import register
from probes.stimuli.illusions.mueller_lyer import MuellerLyer


class MuellerLyerLines(TwoLines):
    id = "illusion/mueller-lyer"
    title = "Mueller-Lyer: which red line is longer?"
    stimulus = MuellerLyer
    params = line_params("mueller-lyer")


mueller_lyer = register("illusion/mueller-lyer", generated=MuellerLyerLines)(generated_only(MuellerLyerLines))

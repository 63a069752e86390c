"""illusion/ponzo: which of two red lines, one above the other, is longer, when converging
side lines (railway tracks) make the one nearer their vertex look longer?

Parameters (pyllusion 1.4 `Ponzo`): `difference` (> 0: the top line is longer),
`illusion_strength` (the side lines' tilt, degrees; positive makes them converge downwards,
towards the shorter bottom line), `size_min`, `distance`; plus `design`, `inducers`, `canvas`, `seed`, `jitter` (see the
package docstring). Default: the Illusion Game's series 1, 384 images, 768 items.
Source: Makowski et al. (2021; 2023); Ponzo (1911).
"""

from __future__ import annotations

from probes.benchmarks.illusion.lines import TwoLines, generated_only, line_params
from probes.core.registry import register
from probes.stimuli.illusions.ponzo import Ponzo


class PonzoLines(TwoLines):
    id = "illusion/ponzo"
    title = "Ponzo: which red line is longer?"
    stimulus = Ponzo
    params = line_params("ponzo")


ponzo = register("illusion/ponzo", generated=PonzoLines)(generated_only(PonzoLines))

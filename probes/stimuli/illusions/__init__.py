"""Parametric visual illusions drawn from pyllusion's geometry (Makowski et al., 2021): the
Mueller-Lyer, Ponzo, Ebbinghaus, Delboeuf, vertical-horizontal, Zoellner and Poggendorff
figures, red targets and black inducers on white, one module per figure. `base` holds what
they share (parameters, strength polarity, pixel mapping); `drawing` draws hard-edged targets
that `measure` reads back exactly."""

from probes.stimuli.illusions.base import INDUCERS, Illusion
from probes.stimuli.illusions.delboeuf import Delboeuf
from probes.stimuli.illusions.ebbinghaus import Ebbinghaus
from probes.stimuli.illusions.mueller_lyer import MuellerLyer
from probes.stimuli.illusions.poggendorff import Poggendorff
from probes.stimuli.illusions.ponzo import Ponzo
from probes.stimuli.illusions.vertical_horizontal import VerticalHorizontal
from probes.stimuli.illusions.zoellner import Zoellner

FAMILIES: dict[str, type[Illusion]] = {
    cls.family: cls for cls in (MuellerLyer, Ponzo, Ebbinghaus, Delboeuf, VerticalHorizontal, Zoellner, Poggendorff)
}

__all__ = ["FAMILIES", "INDUCERS", "Illusion"]

"""Parametric illusions (illusion/*): is a model fooled like a person, or does it answer by geometry?

Seven figures drawn from pyllusion 1.4's geometry (Makowski et al., 2021): Mueller-Lyer, Ponzo,
Ebbinghaus, Delboeuf, vertical-horizontal, Zoellner, Poggendorff. Each item shows red targets
(and black inducers) and asks a two-alternative question about the targets, so a psychometric
curve can be fitted: P(choosing the target that `difference > 0` favours) against `difference`.
One module per figure; `common` holds what they share, `lines` what the two figures of lines
(Mueller-Lyer, Ponzo) share, `designs` the named designs.

Conventions (what `python -m probes report --fit` and the Scoreboard read):

- `difference` is pyllusion's, with its sign convention (Mueller-Lyer and Ponzo: > 0 makes the
  top line longer; Ebbinghaus, Delboeuf, vertical-horizontal: the left target bigger; Zoellner:
  the lines converge to the left; Poggendorff: the right segment sits higher).
- `illusion_strength` is pyllusion's strength *as drawn for a positive difference*, and the
  inducers stay put while `difference` sweeps through zero (pyllusion itself re-aims them at the
  bigger target; a psychometric curve needs them fixed). For a negative difference pyllusion
  names the same picture with the opposite sign: that is `pyllusion_strength`. `congruence` is
  pyllusion's label for these inducers at a positive difference, the other label at a negative
  one (congruent, incongruent; neutral at strength 0; n/a at difference 0; none without
  inducers); pyllusion's own Poggendorff label does not flip with the difference, its picture does. `polarity` is +1 for positive strengths, -1 for negative ones, 0
  for controls: `probes.analysis.psychometric` fits each polarity apart, and illusion magnitude
  is half the PSE difference between opposite polarities (a side or position bias cancels).
- Controls, parameter and group `inducers`: "with" draws each strength of the design, "flipped"
  its opposite polarity (strength negated), "none" the same targets without inducers
  (pyllusion's `target_only`; for the vertical-horizontal figure, whose tilt is its inducer,
  both lines horizontal; for Poggendorff the same red segments without the grey rectangle).
  Strengths in a design are magnitudes; the group `illusion_strength` is the signed strength
  drawn ("none" for the controls).
- Options are the two answers ("Top"/"Bottom", "Left"/"Right", "Above"/"Below"), shown in an
  order that alternates with the seed and between the two wordings (each image is asked both
  ways round). Each item's params carry `positive_answer`: the parsed value (the option's index
  as shown, 0 for the first) that means "chose the target that `difference > 0` favours".
- Ground truth comes from the pixels drawn, never from the nominal difference: each target is
  measured on the rendered raster (lengths and gaps in whole pixels, discs by pixel area; tilted
  lines by fitted axes within a stated tolerance), and the measurements are in the item's params
  (`measured_*`, `measured_favours`). When the difference does not survive rendering (two lines
  of 128 px), the item is *equal*: it is still asked (it is the point of subjective equality's
  neighbourhood, and difference 0 is half of the VLMBias design), but no option is right, so its
  target is None and it is not graded: accuracy counts the unequal items only, while the
  psychometric fit uses every answered item through `positive_answer`.
- Nuisance jitter per level, so that a greedy reply does not make a step function: each `seed`
  is a copy of every level with its own position (up to 6 % of the canvas) and `size_min`
  (x 0.9 to 1.1, shrunk where the figure would leave the canvas), the same for every strength
  and control of that level, so they show the very same targets. `--param jitter=off` draws
  pyllusion's figure centred at its own sizes.

Designs (`--param design=NAME`; any parameter given with `--param` replaces the design's values):
`illusion-game` (default: the Illusion Game's series 1, 8 differences x 7 strengths),
`illusion-game-2` (its series 2), `vlmbias` (VLMBias's illusion domain: with `--param jitter=off
--param seed=0`, the "with" items are its unequal stimuli and one polarity of its equal ones, the
"flipped" equal ones its other polarity; the flipped unequal ones are a control it lacks). Default sets:
384 images (768 items) per figure, 336 (672) for vertical-horizontal, 672 (1344) for
Poggendorff, whose controls keep each tilt: 8 differences x 3 canvases x 2 seeds x the strengths
and controls.
"""

SOURCE = (
    "Makowski et al., A Parametric Framework to Generate Visual Illusions using Python (2021); "
    "designs: Makowski et al., Illusion Game (Scientific Reports, 2023)"
)

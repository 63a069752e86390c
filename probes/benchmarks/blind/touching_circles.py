"""blind/touching-circles (BlindTest task 2): are two filled circles touching, or overlapping?

Parameters, as the paper: diameter 1/4, 1/5, 1/6, 1/7 of the canvas; gap between the perimeters
-0.15 to 0.5 times the diameter in steps of 0.05 (14 values); orientation 90, 0, -45, 45 degrees
(vertical, horizontal, diagonal_1, diagonal_2, as the released file names call them); canvas
384, 769, 1155 px: 672 images, each asked with both prompts = 1344 items. Ground truth from the
gap d: touching iff d <= 0, overlapping iff d < 0. Chance 50%. Groups: prompt, canvas, diameter,
gap, orientation; every parameter can be fixed or swept (`--param gap=-0.1,0,0.1`).
Source: Rahmanzadehgervi et al., Vision language models are blind (2024), seed 002.
"""

from __future__ import annotations

import itertools
import random

from probes.benchmarks.blind import SOURCE, BlindTruth
from probes.benchmarks.blind.released import released
from probes.benchmarks.generated import (
    EXAMPLE_SEED_BASE,
    GeneratedBenchmark,
    Param,
    fraction,
    fraction_label,
)
from probes.core.registry import register
from probes.core.types import AnswerKind
from probes.stimuli.touching_circles import ORIENTATIONS, TwoCircles


class TouchingCircles(BlindTruth, GeneratedBenchmark):
    id = "blind/touching-circles"
    title = "Two circles: touching or overlapping?"
    source = SOURCE
    chance = 50.0
    kind = AnswerKind.YES_NO
    prompts = {
        "touching": "Are the two circles touching each other? Answer with Yes/No.",
        "overlapping": "Are the two circles overlapping? Answer with Yes/No.",
    }
    params = {
        "canvas": Param((384, 769, 1155), int, pixels=True),
        "diameter": Param(
            tuple(fraction(f"1/{n}") for n in (4, 5, 6, 7)), fraction, fraction_label, minimum=0.01, maximum=0.5
        ),
        "gap": Param(
            tuple(round(-0.15 + 0.05 * i, 2) for i in range(14)), lambda t: round(float(t), 4), "{:+.2f}".format
        ),
        "orientation": Param(tuple(ORIENTATIONS), choices=tuple(ORIENTATIONS)),
    }

    def design(self) -> list[TwoCircles]:
        grid = self.grid
        return [
            TwoCircles(canvas, float(diameter), gap, orientation)
            for canvas, diameter, gap, orientation in itertools.product(
                grid["canvas"], grid["diameter"], grid["gap"], grid["orientation"]
            )
        ]

    def example_design(self) -> list[TwoCircles]:
        """16 stimuli with continuous random parameters (never on the test grid), alternating
        touching and apart so that any four examples hold two of each."""
        examples = []
        for index in range(16):
            rng = random.Random(EXAMPLE_SEED_BASE + index)
            together = index % 4 in (0, 3)
            gap = rng.uniform(-0.15, -0.03) if together else rng.uniform(0.03, 0.5)
            canvas, diameter = rng.choice([384, 769, 1155]), rng.uniform(1 / 7, 1 / 4)
            examples.append(TwoCircles(canvas, round(diameter, 4), round(gap, 4), rng.choice(list(ORIENTATIONS))))
        return examples

    def truth(self, stimulus: TwoCircles, prompt: str) -> str:
        answer = stimulus.touching if prompt == "touching" else stimulus.overlapping
        return "yes" if answer else "no"

    def answer_space(self, stimulus: TwoCircles, prompt: str) -> tuple[str, ...]:
        return ("Yes", "No")

    def reasoning(self, stimulus: TwoCircles, prompt: str) -> str:
        gap_px = round(abs(stimulus.gap) * stimulus.diameter * stimulus.canvas)
        amount = "less than a pixel" if gap_px == 0 else "1 pixel" if gap_px == 1 else f"about {gap_px} pixels"
        if stimulus.gap < 0:
            seen = f"The blue and the magenta circles overlap: their edges cross by {amount}."
        elif stimulus.gap == 0:
            seen = "The blue and the magenta circles meet at exactly one point, without overlapping."
        else:
            seen = f"There is a gap of {amount} of white between the blue and the magenta circles."
        yes = self.truth(stimulus, prompt) == "yes"
        verb = "touching" if prompt == "touching" else "overlapping"
        return f"{seen} So they are {'' if yes else 'not '}{verb}."


@register("blind/touching-circles", generated=TouchingCircles)
def touching_circles(data: str | None = None, params=None):
    if data is not None:
        return released(TouchingCircles.id, data, TouchingCircles, params)
    return TouchingCircles(params)

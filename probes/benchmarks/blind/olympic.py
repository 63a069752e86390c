"""blind/olympic-circles and blind/olympic-pentagons (BlindTest task 4): how many overlapping
shapes are there, arranged in two staggered rows like the Olympic logo?

N equal outlines (circles; separately, regular pentagons) in a zig-zag over two rows, each
crossing its neighbours on the other row; white canvas; black, or each shape in its own tab10
colour as in the release. Parameters (each can be fixed or swept with `--param NAME=V1,V2`):
- `count`: N, 5, 6, 7, 8, 9 (the answer; a group);
- `canvas`: 384, 769, 1155 px;
- `size`: circle diameter 1/10 or 1/7 of the canvas; pentagon side 1/20 or 1/14 (see below);
- `thickness`: line width 0.5 or 1 point, as the release names it (matplotlib on a figure
  3.85 inches wide: 0.7 / 1.4 px at 384 px up to 2.1 / 4.2 px at 1155 px, as measured);
- `colour`: black or colored (tab10, a different colour per shape).

Sizes. The paper's text says diameter (pentagon side) C/5 or C/10, but at C/5 a zig-zag of 9
circles (5 on the top row) is wider than the canvas, and 9 pentagons of side C/10 barely fit.
The released images are named `diameter_0.1` / `diameter_0.142857` for circles and
`side_0.05` / `side_0.0714` for pentagons, and measure so: we follow the release.

Count. The paper counts 3 resolutions x 5 N x 2 sizes = "60 images" per shape, and says the
images are repeated with two line thicknesses: 3 x 5 x 2 x 2 = 60 (its product without the
thickness is 30), and its accuracies are multiples of 1/120 (60 images x 2 prompts). So the
default design is the full product canvas x N x size x thickness = 60 images per shape, each
asked with both prompts = 120 items per shape. The release also has black and coloured images;
colour is not crossed (that would double the count) but assigned in a balanced, deterministic
way: colour = the (i + j + k + l)-th value of the `colour` list, i, j, k, l being the positions
of canvas, N, size and thickness in their lists. So 30 black and 30 coloured images, 10 / 10 per
canvas, 6 / 6 per N, 15 / 15 per size and per thickness. Sweeping `colour=black` gives an
all-black set; a single-valued list fixes it.

Layout, as measured on the release (`bench/released_geometry.py`): the top row's centres at
0.40 of the height, the group centred across; circles 1.05 diameters apart on a row with the
bottom row half a diameter lower, exactly as released (rings interlocking 0.27 of a diameter
deep, same-row neighbours nearly touching); pentagons 1.74 sides apart (released: 1.72) with
the bottom row 0.75 sides lower (released: 0.945, where corners land exactly on the sides of
the pentagons above: see `probes.stimuli.olympic` for why we do not). Otherwise the look is the
release's (two rows, half a step apart, thin strokes, tab10).
Ground truth: the number of outlines drawn. Answers 5..9, chance 20%.
Groups: count (N), canvas, size, thickness, colour, prompt (the paper reports per shape).
Source: Rahmanzadehgervi et al., Vision language models are blind (2024), seed 002.
"""

from __future__ import annotations

import itertools
import random
from typing import Any, ClassVar

from probes.benchmarks.blind import SOURCE, BlindTruth
from probes.benchmarks.blind.released import released
from probes.benchmarks.generated import (
    EXAMPLE_SEED_BASE,
    GeneratedBenchmark,
    Param,
    format_answer,
    fraction,
    fraction_label,
)
from probes.core.registry import register
from probes.core.types import AnswerKind
from probes.stimuli.olympic import COLOURS, PALETTE_NAMES, OlympicShapes

PROMPTS = {
    "how_many": "How many {shapes} are in the image? Answer with only the number in numerical format.",
    "count": "Count the {shapes} in the image. Answer with a number in curly brackets e.g. {3}.",
}
CANVASES = (384, 769, 1155)
EXAMPLE_CANVASES = (400, 512, 640, 800, 1000)  # few-shot canvases, none of the test grid's


class OlympicBenchmark(BlindTruth, GeneratedBenchmark):
    shape: ClassVar[str]
    sizes: ClassVar[tuple[str, str]]  # the release's two sizes
    source = SOURCE
    chance = 20.0
    kind = AnswerKind.NUMBER
    prompts = PROMPTS

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.params = {
            "count": Param((5, 6, 7, 8, 9), int, minimum=1, maximum=30),
            "canvas": Param(CANVASES, int, pixels=True),
            "size": Param(tuple(fraction(s) for s in cls.sizes), fraction, fraction_label),
            "thickness": Param((0.5, 1.0), float, "{:g}".format),
            "colour": Param(COLOURS, choices=COLOURS),
        }

    @property
    def plural(self) -> str:
        return f"{self.shape}s"

    def design(self) -> list[OlympicShapes]:
        grid = self.grid
        stimuli = []
        for (i, canvas), (j, count), (k, size), (m, thickness) in itertools.product(
            enumerate(grid["canvas"]), enumerate(grid["count"]), enumerate(grid["size"]), enumerate(grid["thickness"])
        ):
            colour = grid["colour"][(i + j + k + m) % len(grid["colour"])]
            stimuli.append(OlympicShapes(self.shape, count, canvas, float(size), thickness, colour))
        return stimuli

    def example_design(self) -> list[OlympicShapes]:
        """10 stimuli on canvases off the test grid with sizes between the two test sizes,
        cycling N through 5..9 (so any five examples hold each answer once) and the colours."""
        low, high = (float(fraction(s)) for s in self.sizes)
        examples = []
        for index in range(10):
            rng = random.Random(f"{self.id}:example:{EXAMPLE_SEED_BASE + index}")
            examples.append(
                OlympicShapes(
                    self.shape,
                    5 + index % 5,
                    rng.choice(EXAMPLE_CANVASES),
                    round(rng.uniform(low, high), 4),
                    rng.choice((0.5, 1.0)),
                    COLOURS[index % 2],
                )
            )
        return examples

    def question(self, stimulus: OlympicShapes, prompt: str) -> str:
        return self.prompts[prompt].replace("{shapes}", self.plural)

    def truth(self, stimulus: OlympicShapes, prompt: str) -> int:
        return len(stimulus.outlines())

    def answer_space(self, stimulus: OlympicShapes, prompt: str) -> tuple[str, ...]:
        question = self.question(stimulus, prompt)
        return tuple(format_answer(question, self.kind, n) for n in range(5, 10))

    def reasoning(self, stimulus: OlympicShapes, prompt: str) -> str:
        top, bottom = stimulus.rows()
        total = len(stimulus.outlines())
        if stimulus.colour == "colored":
            names = ", ".join(PALETTE_NAMES[i % len(PALETTE_NAMES)] for i in range(total))
            seen = f"Each {self.shape} has its own colour; from left to right: {names}."
        else:
            seen = f"Following each black outline around, every {self.shape} closes on itself."
        if not bottom:  # a single shape (count 1): no rows, nothing overlapping
            return f"There is one {self.shape}, overlapping nothing; its outline closes. So there is 1 {self.shape}."
        return (
            f"The {self.plural} sit in two staggered rows, each overlapping its neighbours on the other "
            f"row: {top} on the top row and {bottom} on the bottom row. {seen} "
            f"So there are {top} + {bottom} = {total} {self.plural}."
        )


class OlympicCircles(OlympicBenchmark):
    id = "blind/olympic-circles"
    title = "Olympic-like circles: how many circles?"
    shape = "circle"
    sizes = ("1/10", "1/7")


class OlympicPentagons(OlympicBenchmark):
    id = "blind/olympic-pentagons"
    title = "Olympic-like pentagons: how many pentagons?"
    shape = "pentagon"
    sizes = ("1/20", "1/14")


@register("blind/olympic-circles", generated=OlympicCircles)
def olympic_circles(data: str | None = None, params=None):
    if data is not None:
        return released(OlympicCircles.id, data, OlympicCircles, params)
    return OlympicCircles(params)


@register("blind/olympic-pentagons", generated=OlympicPentagons)
def olympic_pentagons(data: str | None = None, params=None):
    if data is not None:
        return released(OlympicPentagons.id, data, OlympicPentagons, params)
    return OlympicPentagons(params)

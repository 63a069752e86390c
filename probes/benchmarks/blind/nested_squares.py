"""blind/nested-squares (BlindTest task 5): how many squares, each nested inside the last?

N squares are drawn one inside the other, none touching: the outermost with a random side
(28% to 40% of the canvas) at a random place, each next one 0.75 times the side of the one
around it less 1.93% of the canvas (see below), at a random offset that leaves white between
the two strokes on every side (at least 0.8% of the canvas, 8 px at 1000 px, besides the
stroke). Black outlines on a white 1000 px canvas, like the paper's released images.

Parameters (each can be fixed or swept with `--param NAME=V1,V2`):
- `depth`: N, the number of squares, 2, 3, 4, 5 (the answer; a group);
- `thickness`: stroke width in points, 2, 3, 4 (2.8, 4.2, 5.6 px at 1000 px, as measured on
  the release, whose matplotlib figure is 10 inches at 100 dpi; the paper calls them px);
- `canvas`: canvas side, 1000 px (the release's size; the stroke scales with it);
- `repeats`: random layouts per (depth, thickness, canvas), 10;
- `seed`: draws a different set (default 0; `generate --seed`).

The paper's design exactly: 4 depths x 3 thicknesses x 10 layouts = 120 images, each asked
with both released prompts = 240 items. Inner squares as in the released images rather than
the paper's text: the text says each is 0.75 of the one around it, but every released image
(measured in `bench/released_geometry.py`) makes it 0.75 x d - 19.3 px at 1000 px (a matplotlib
"padding" of 0.75 of its 30 axis units), so an inner square is 0.56 to 0.69 of its outer one,
about 0.67 on average, not 0.75. We draw 0.75 x d - 0.0193 x canvas (`SHRINK`, `PADDING`).
Ground truth: the number of squares drawn; the stimulus checks on creation that each lies
strictly inside the one before with white between the strokes, and the design redraws any
layout with less white than the minimum. Answers 2..5, chance 25%.
Groups: depth, thickness, canvas, prompt.
Source: Rahmanzadehgervi et al., Vision language models are blind (2024), seed 002.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from probes.benchmarks.blind import SOURCE, BlindTruth
from probes.benchmarks.blind.released import released
from probes.benchmarks.generated import EXAMPLE_SEED_BASE, GeneratedBenchmark, Param
from probes.core.registry import register
from probes.core.types import AnswerKind
from probes.stimuli.nested_squares import POINTS_PER_CANVAS, NestedSquares

# Each square's side is SHRINK times the one around it less PADDING (a fraction of the canvas):
# the release's rule, measured on its images (0.75 x d - 19.3 px at 1000 px).
SHRINK = 0.75
PADDING = 0.0193
OUTER_SIDE = (0.28, 0.40)  # outermost side, as a fraction of the canvas
REGION = (0.18, 0.82)  # the outermost square lies within this band in x and y, as in the release
MIN_WHITE = 0.008  # least white between two squares' strokes, as a fraction of the canvas
MAX_DRAWS = 1000


def draw_squares(depth: int, thickness: float, canvas: int, key: str) -> NestedSquares:
    """A random layout of `depth` nested squares; pure in `key`."""
    rng = random.Random(key)
    stroke = thickness / POINTS_PER_CANVAS  # as a fraction of the canvas
    least = MIN_WHITE + stroke  # between the centre lines of two nested outlines
    for _ in range(MAX_DRAWS):
        side = rng.uniform(*OUTER_SIDE)
        squares = [(rng.uniform(REGION[0], REGION[1] - side), rng.uniform(REGION[0], REGION[1] - side), side)]
        for _ in range(depth - 1):
            left, top, side = squares[-1]
            inner = side * SHRINK - PADDING
            slack = side - inner - 2 * least
            if slack < 0:
                break
            squares.append((left + least + rng.uniform(0, slack), top + least + rng.uniform(0, slack), inner))
        squares = [tuple(round(v, 5) for v in square) for square in squares]
        if len(squares) < depth:
            continue
        try:
            layout = NestedSquares(tuple(squares), thickness, canvas)
        except ValueError:
            continue
        if min(layout.gaps(), default=canvas) >= MIN_WHITE * canvas - 0.05:  # rounding may shave 0.01 px
            return layout
    raise ValueError(f"no layout of {depth} nested squares fits at thickness {thickness} ({key})")


class NestedSquaresBenchmark(BlindTruth, GeneratedBenchmark):
    id = "blind/nested-squares"
    title = "Nested squares: how many squares?"
    source = SOURCE
    chance = 25.0
    kind = AnswerKind.NUMBER
    prompts = {
        "count": "Count total number of squares in the image. Answer with only the number in numerical format in curly brackets e.g. {3}.",
        "how_many": "How many squares are in the image? Please answer with a number in curly brackets e.g., {10}.",
    }
    params = {
        "depth": Param((2, 3, 4, 5), int, minimum=1, maximum=20),
        "thickness": Param((2, 3, 4), int, minimum=1, maximum=100),
        "canvas": Param((1000,), int, pixels=True),
        "repeats": Param((10,), int, multiplies=True),
        "seed": Param((0,), int),
    }

    def design(self) -> list[NestedSquares]:
        grid = self.grid
        if len(grid["repeats"]) != 1 or grid["repeats"][0] < 1:
            raise ValueError("repeats is the number of layouts per cell: give one positive number")
        for depth in grid["depth"]:
            if not 1 <= depth <= 6:
                raise ValueError(f"depth must be 1 to 6 squares; got {depth}")
        self._seeds: dict[NestedSquares, int] = {}  # the design seed each layout was drawn from
        for seed, depth, thickness, canvas in itertools.product(
            grid["seed"], grid["depth"], grid["thickness"], grid["canvas"]
        ):
            for index in range(grid["repeats"][0]):
                key = f"{self.id}:{seed}:{depth}:{thickness}:{canvas}:{index}"
                self._seeds.setdefault(draw_squares(depth, thickness, canvas, key), seed)
        return list(self._seeds)

    def stimulus_params(self, stimulus: NestedSquares) -> dict[str, Any]:
        values = {"depth": stimulus.depth, "thickness": stimulus.thickness, "canvas": stimulus.canvas}
        if stimulus in getattr(self, "_seeds", {}):
            values["seed"] = self._seeds[stimulus]
        return values

    def example_design(self) -> list[NestedSquares]:
        """12 layouts from seeds no test item uses, cycling the depths 2..5 (so any four
        examples hold one of each) and the thicknesses."""
        examples = []
        for index in range(12):
            depth, thickness = 2 + index % 4, (2, 3, 4)[index % 3]
            examples.append(draw_squares(depth, thickness, 1000, f"{self.id}:example:{EXAMPLE_SEED_BASE + index}"))
        return examples

    def truth(self, stimulus: NestedSquares, prompt: str) -> int:
        return stimulus.depth

    def answer_space(self, stimulus: NestedSquares, prompt: str) -> tuple[str, ...]:
        return ("{2}", "{3}", "{4}", "{5}")

    def reasoning(self, stimulus: NestedSquares, prompt: str) -> str:
        sides = [f"about {side * stimulus.canvas:.0f} px" for _, _, side in stimulus.squares]
        if len(sides) == 1:
            return f"There is one square, {sides[0]} wide, with only white inside it. That makes 1 square."
        ordinals = ("first", "second", "third", "fourth", "fifth", "sixth")
        steps = ", ".join(f"the {ordinals[i]} {sides[i]} wide" for i in range(len(sides)))
        return (
            f"Going from the outside in, each square sits inside the previous one without "
            f"touching it: {steps}. Inside the last one there is only white. "
            f"That makes {stimulus.depth} squares."
        )


@register("blind/nested-squares", generated=NestedSquaresBenchmark)
def nested_squares(data: str | None = None, params=None):
    if data is not None:  # the paper's own release (XAI/vlmsareblind), from the Hub or a copy
        return released(NestedSquaresBenchmark.id, data, NestedSquaresBenchmark, params)
    return NestedSquaresBenchmark(params)

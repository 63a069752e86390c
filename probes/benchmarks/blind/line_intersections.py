"""blind/line-intersections (BlindTest task 1): how many times do a blue and a red line meet?

Each image is a line plot of two 2-segment piecewise-linear functions, blue and red, each
through three points at fixed, evenly spaced x (left edge, middle, right edge) and random y,
on a white canvas with no axes, drawn so that they meet exactly 0, 1 or 2 times.

Parameters (each can be fixed or swept with `--param NAME=V1,V2`):
- `intersections`: the count to draw, 0, 1, 2 (the answer; a group);
- `thickness`: line width in points, 2, 3, 4 (the paper's result table is by thickness);
- `resolution`: canvas side, 384, 768, 1152 px (the released file names show these three;
  the paper's text does not mention them); the line width scales with it (thickness *
  resolution / 360 px), so the same layout looks the same at every resolution;
- `images`: how many images in all (150, the paper's count), spread evenly over the values of
  intersections x thickness x resolution (one value only);
- `seed`: draws a different set (default 0; `generate --seed`).

The paper: 150 images balanced over 0/1/2 meetings and thickness 2/3/4. 150 is not a multiple
of the 9 (count, thickness) pairs, so no design is balanced in every pair; ours keeps every
marginal exact and every pair within one image: 50 images per count, 50 per thickness, 50 per
resolution, and 16 or 17 per (count, thickness), (count, resolution) and (thickness,
resolution) pair (5 or 6 per triple). The cells that get the extra image are the first ones
of a sheared (Latin) order of the grid; any other `images` value is spread the same way.
The paper's table reports whole percentages per thickness, consistent with 50 images x 2
prompts = 100 items per thickness. Each image is asked with both prompts: 300 items.

Ground truth: the number of distinct points the two polylines drawn share, computed exactly
from their segments (a crossing, a touch at a vertex, a shared end point each count once);
lines that share a stretch are refused. Random draws are redrawn (deterministically, from the
seed) until the count is the one asked for and the picture is unambiguous: meeting points at
least 8% of the plot apart, at least 5% from any vertex or end of either line, crossing at 20
degrees or more, and no vertex or end of one line within 4% of the other line unless it is a
meeting point (so near misses do not look like touches). Answers 0..2, chance 33.33%.
Groups: intersections, thickness, resolution, prompt.
Source: Rahmanzadehgervi et al., Vision language models are blind (2024), seed 002.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from typing import Any

from probes.benchmarks.blind import SOURCE, BlindTruth
from probes.benchmarks.blind.released import released
from probes.benchmarks.generated import EXAMPLE_SEED_BASE, GeneratedBenchmark, Param
from probes.core.registry import register
from probes.core.truth import grey_of
from probes.core.types import AnswerKind
from probes.stimuli.line_intersections import BLUE, RED, LinePlot, clearance

# Visual-ambiguity limits, in fractions of the plot side (the line width is a fixed fraction
# too: at most 4/360 = 1.1% for thickness 4, so every limit is several line widths).
MIN_SEPARATION = 0.08
MIN_VERTEX_GAP = 0.05
MIN_ANGLE = 20.0
MIN_NEAR_MISS = 0.04
MAX_DRAWS = 100_000


def unambiguous(plot: LinePlot) -> bool:
    measures = clearance(plot)
    return (
        measures["separation"] >= MIN_SEPARATION
        and measures["vertex_gap"] >= MIN_VERTEX_GAP
        and measures["angle"] >= MIN_ANGLE
        and measures["near_miss"] >= MIN_NEAR_MISS
    )


def draw_plot(count: int, thickness: float, resolution: int, key: str) -> LinePlot:
    """A random plot whose lines meet exactly `count` times, unambiguously; pure in `key`."""
    rng = random.Random(key)
    for _ in range(MAX_DRAWS):
        blue = tuple(round(rng.random(), 4) for _ in range(3))
        red = tuple(round(rng.random(), 4) for _ in range(3))
        # A cheap screen before the exact count: the lines must be well apart at the three
        # shared x (a near miss otherwise) and swap places `count` times between them.
        apart = [b - r for b, r in zip(blue, red, strict=True)]
        if min(map(abs, apart)) < MIN_NEAR_MISS or sum(a * b < 0 for a, b in itertools.pairwise(apart)) != count:
            continue
        try:
            plot = LinePlot(blue, red, thickness, resolution)
        except ValueError:  # the lines overlap along a stretch: draw again
            continue
        if plot.intersections == count and unambiguous(plot):
            return plot
    raise ValueError(f"no unambiguous plot with {count} meetings in {MAX_DRAWS} draws ({key})")


def sheared_order(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Every cell of a grid (as value indices), ordered so that each run of cells holds each
    value of every factor, and each pair of values, as evenly as the sizes allow: a mixed-radix
    count whose digits are sheared (factor f adds f - g times digit g), a Latin arrangement."""
    cells = []
    for number in range(math.prod(sizes)):
        digits, rest = [], number
        for size in sizes:
            digits.append(rest % size)
            rest //= size
        cells.append(
            tuple((digits[f] + sum((f - g) * digits[g] for g in range(f))) % size for f, size in enumerate(sizes))
        )
    return cells


def spread(total: int, axes: Sequence[Sequence[Any]]) -> dict[tuple[Any, ...], int]:
    """How many images each cell of the grid gets: `total` spread evenly, the remainder going
    to the first cells of the sheared order (so every factor, and every pair of factors, stays
    within one image of balanced where the sizes allow)."""
    order = sheared_order([len(axis) for axis in axes])
    base, extra = divmod(total, len(order))
    counts = {tuple(values): base for values in itertools.product(*axes)}
    for cell in order[:extra]:
        counts[tuple(axis[i] for axis, i in zip(axes, cell, strict=True))] += 1
    return counts


class LineIntersections(BlindTruth, GeneratedBenchmark):
    id = "blind/line-intersections"
    title = "Line plots: how many times do the blue and red lines meet?"
    source = SOURCE
    chance = 100 / 3
    kind = AnswerKind.NUMBER
    told_apart_in_grey = (
        f"the blue and the red line turn two different greys ({grey_of(BLUE)} and {grey_of(RED)} of 255), and "
        "where two lines meet does not depend on which one is which"
    )
    prompts = {
        "touch": "How many times do the blue and red lines touch each other? Answer with a number in curly brackets, e.g., {5}.",
        "count": "Count the intersection points where the blue and red lines meet. Put your answer in curly brackets, e.g., {2}.",
    }
    params = {
        "intersections": Param((0, 1, 2), int, choices=(0, 1, 2)),
        "thickness": Param((2, 3, 4), int, minimum=1, maximum=100),
        "resolution": Param((384, 768, 1152), int, pixels=True),
        "images": Param((150,), int, multiplies=True),
        "seed": Param((0,), int),
    }

    def design(self) -> list[LinePlot]:
        grid = self.grid
        if len(grid["images"]) != 1 or grid["images"][0] < 1:
            raise ValueError("images is the size of the set: give one positive number")
        for thickness in grid["thickness"]:
            if not 0 < thickness <= 20:
                raise ValueError(f"thickness must be 1 to 20 points; got {thickness}")
        axes = (grid["intersections"], grid["thickness"], grid["resolution"])
        counts = spread(grid["images"][0], axes)
        self._seeds: dict[LinePlot, int] = {}  # the design seed each plot was drawn from
        for seed in grid["seed"]:
            for (count, thickness, resolution), n in counts.items():
                for index in range(n):
                    key = f"{self.id}:{seed}:{count}:{thickness}:{resolution}:{index}"
                    self._seeds.setdefault(draw_plot(count, thickness, resolution, key), seed)
        return list(self._seeds)

    def stimulus_params(self, stimulus: LinePlot) -> dict[str, Any]:
        values = {
            "intersections": stimulus.intersections,
            "thickness": stimulus.thickness,
            "resolution": stimulus.resolution,
        }
        if stimulus in getattr(self, "_seeds", {}):
            values["seed"] = self._seeds[stimulus]
        return values

    def example_design(self) -> list[LinePlot]:
        """12 plots from seeds no test item uses, cycling 0, 1, 2 meetings (so any three
        examples hold one of each) and the thicknesses and resolutions."""
        examples = []
        for index in range(12):
            count = index % 3
            thickness = (2, 3, 4)[(index // 3) % 3]
            resolution = (384, 768, 1152)[(index + index // 3) % 3]
            key = f"{self.id}:example:{EXAMPLE_SEED_BASE + index}"
            examples.append(draw_plot(count, thickness, resolution, key))
        return examples

    def truth(self, stimulus: LinePlot, prompt: str) -> int:
        return stimulus.intersections

    def answer_space(self, stimulus: LinePlot, prompt: str) -> tuple[str, ...]:
        return ("{0}", "{1}", "{2}")

    def reasoning(self, stimulus: LinePlot, prompt: str) -> str:
        blue, red = stimulus.polyline("blue"), stimulus.polyline("red")
        points = stimulus.points()
        if not points:
            above = "blue" if blue[0][1] > red[0][1] else "red"
            below = "red" if above == "blue" else "blue"
            return (
                f"The {above} line stays above the {below} line across the whole plot, with white "
                "space between them everywhere, so they never touch: 0 times."
            )
        places = [f"{100 * float(x):.0f}% across and {100 * float(y):.0f}% up" for x, y in points]
        word = "once" if len(points) == 1 else "twice"
        return (
            f"Following both lines from left to right, they meet {word}: at about "
            f"{' and at about '.join(places)}. Elsewhere there is white space between them, "
            f"so they touch {len(points)} time{'s' if len(points) > 1 else ''}."
        )


@register("blind/line-intersections", generated=LineIntersections)
def line_intersections(data: str | None = None, params=None):
    if data is not None:  # the paper's own release (XAI/vlmsareblind), from the Hub or a copy
        return released(LineIntersections.id, data, LineIntersections, params)
    return LineIntersections(params)

"""blind/grid-count (BlindTest task 6): how many rows and columns does a table have?

Probes counting adjacent shapes (the cells of a grid), with and without the help of text. As
the paper: grids of N x N, N x (N+1) and (N+1) x N cells (rows x columns); two line
thicknesses; square canvases of 500, 1250 and 2000 px; blank, or with one random English word
per cell ("text"). Both prompts; an answer is right only if both numbers are.

Size. The paper says N in 3..9 and "2 x 222 = 444 images". N in 3..9 gives 21 shapes x 2
thicknesses x 3 canvases = 126 images per version, not 222. 222 = 37 shapes x 6, and 37 is
exactly what the authors' released generator loops over: N from 3 to 15 with no side above 15
(13 squares, 12 N x (N+1), 12 (N+1) x N). So the default is N = 3..15 with that cap: 222 blank +
222 text = 444 images, 888 items, as the paper's count. (The file names of the authors'
published per-model examples only show grids up to 10 x 10, so their evaluation may have used
fewer; `--param n=3,4,5,6,7,8,9` gives the paper's stated N range, 126 images per version.)

Look, from the released images (grid_{rows}x{cols}_{canvas}_{width}.png_{blank|text}.png):
the grid fills the canvas, its outer border on the canvas edge; lines are black; their width
"10" or "20" is px at a 2000 px canvas (the images were drawn at 2000 and resized), so 2.5/5 px
at 500 and 6.25/12.5 px at 1250; words are black, 0.2 of the smaller cell side high, centred in
their cells. Words: a distinct seeded choice per cell from a built-in list of common short
English words (the release used a fixed alphabetical list); the same words at every canvas and
thickness of a shape.

Parameters (each can be fixed or swept with --param): `grid` (blank/text), `n`, `shape`
(square = N x N, wide = N x (N+1), tall = (N+1) x N), `canvas`, `thickness` (px at 2000),
`seed` (the words). Groups, as the paper's table (grid type) plus: canvas, thickness, size
("5x6", rows x columns), n, shape, prompt. Ground truth is the number of gaps between the
lines drawn. The paper gives no chance rate; `chance` is None and `answer_space` lists every
(rows, columns) of the design in the prompt's format (1 in 37 by default).
Source: Rahmanzadehgervi et al., Vision language models are blind (2024), seed 002.
"""

from __future__ import annotations

import itertools
import random

from probes.benchmarks.blind import SOURCE, BlindTruth
from probes.benchmarks.blind.released import released
from probes.benchmarks.generated import EXAMPLE_SEED_BASE, GeneratedBenchmark, Param, format_answer
from probes.core.registry import register
from probes.core.types import AnswerKind
from probes.stimuli.grid_count import GRID_TYPES, SHAPES, Grid

MAX_SIDE = 15  # the released generator's cap: no grid has more than 15 rows or columns


def shape_size(n: int, shape: str) -> tuple[int, int]:
    """(rows, columns) of a shape of base size N."""
    return {"square": (n, n), "wide": (n, n + 1), "tall": (n + 1, n)}[shape]


class GridCount(BlindTruth, GeneratedBenchmark):
    id = "blind/grid-count"
    title = "Grids: how many rows and columns?"
    source = SOURCE
    chance = None  # the paper gives none; a uniform guess over the design's 37 sizes is 2.7%
    kind = AnswerKind.PAIR
    prompts = {
        "count": (
            "Count the number of rows and columns and answer with numbers in curly brackets. "
            "For example, rows={5} columns={6}"
        ),
        "how-many": (
            "How many rows and columns are in the table? Answer with only the numbers in a pair "
            "(row, column), e.g., (5,6)"
        ),
    }
    params = {
        "grid": Param(GRID_TYPES, choices=GRID_TYPES),
        "n": Param(tuple(range(3, MAX_SIDE + 1)), int, minimum=1, maximum=40),
        "shape": Param(SHAPES, choices=SHAPES),
        "canvas": Param((500, 1250, 2000), int, pixels=True),
        "thickness": Param((10, 20), int, minimum=1, maximum=200),
        "seed": Param((0,), int),
    }

    def design(self) -> list[Grid]:
        grid = self.grid
        sizes = [shape_size(n, shape) for n, shape in itertools.product(grid["n"], grid["shape"])]
        sizes = [(rows, columns) for rows, columns in sizes if max(rows, columns) <= MAX_SIDE]
        if not sizes:
            raise ValueError(f"no grid of these n and shapes stays within {MAX_SIDE} rows and columns")
        self._sizes = sorted(set(sizes))
        return [
            Grid(rows, columns, canvas, thickness, kind, seed)
            for kind, (rows, columns), canvas, thickness, seed in itertools.product(
                grid["grid"], sizes, grid["canvas"], grid["thickness"], grid["seed"]
            )
        ]

    def example_design(self) -> list[Grid]:
        """16 grids off the test design: shapes two or more apart (3 x 5, 7 x 4 ...), canvases
        between the paper's, so that no example is a test image and their answers differ."""
        examples = []
        for index in range(16):
            rng = random.Random(EXAMPLE_SEED_BASE + index)
            rows = rng.randint(3, 12)
            columns = rows + rng.choice([-3, -2, 2, 3])
            columns = columns if columns >= 3 else rows + 2
            canvas = rng.choice([640, 900, 1500])
            examples.append(
                Grid(rows, columns, canvas, rng.choice([10, 20]), GRID_TYPES[index % 2], EXAMPLE_SEED_BASE + index)
            )
        return examples

    def truth(self, stimulus: Grid, prompt: str) -> tuple[int, int]:
        return stimulus.counted

    def groups(self, stimulus: Grid, prompt: str) -> dict[str, str]:
        return {**super().groups(stimulus, prompt), "size": stimulus.size}

    def answer_space(self, stimulus: Grid, prompt: str) -> tuple[str, ...]:
        question = self.prompts[prompt]
        return tuple(format_answer(question, self.kind, size) for size in self._sizes)

    def reasoning(self, stimulus: Grid, prompt: str) -> str:
        rows, columns = stimulus.counted
        cells = " Each cell holds one word." if stimulus.grid == "text" else ""
        rows_said = "1 row" if rows == 1 else f"{rows} rows"
        columns_said = "1 column" if columns == 1 else f"{columns} columns"
        return (
            f"There are {rows + 1} horizontal lines, including the top and bottom borders, so {rows_said}; "
            f"and {columns + 1} vertical lines, including the left and right borders, so {columns_said}.{cells}"
        )


@register("blind/grid-count", generated=GridCount)
def grid_count(data: str | None = None, params=None):
    if data is not None:
        return released(GridCount.id, data, GridCount, params)
    return GridCount(params)

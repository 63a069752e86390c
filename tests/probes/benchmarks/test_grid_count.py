"""blind/grid-count: the paper's design, and ground truth that the pixels agree with."""

import io
import random
from collections import Counter

import numpy as np
import pytest

from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind
from probes.reading.parsing import parse
from probes.stimuli.grid_count import WORDS, Grid

COUNT = (
    "Count the number of rows and columns and answer with numbers in curly brackets. For example, rows={5} columns={6}"
)
HOW_MANY = (
    "How many rows and columns are in the table? Answer with only the numbers in a pair (row, column), e.g., (5,6)"
)


@pytest.fixture(scope="module")
def grids():
    return get_benchmark("blind/grid-count")


def test_size_and_design_follow_the_paper(grids):
    items = grids.items()
    assert len(items) == 888
    assert grids.size_note() == "888 items (444 images x 2 prompts)"
    images = {item.images[0].ref: item for item in items}
    assert Counter(i.params["grid"] for i in images.values()) == {"blank": 222, "text": 222}
    sizes = {i.groups["size"] for i in images.values()}
    # N x N for N = 3..15, N x (N+1) and (N+1) x N for N = 3..14: the released generator's 37
    assert len(sizes) == 37 and "15x15" in sizes and "9x10" in sizes and "10x9" in sizes and "15x16" not in sizes
    per_size = Counter((i.params["grid"], i.groups["size"]) for i in images.values())
    assert set(per_size.values()) == {6}  # 3 canvases x 2 thicknesses
    assert {i.params["canvas"] for i in items} == {500, 1250, 2000}
    assert {i.params["thickness"] for i in items} == {10, 20}
    assert {item.question for item in items} == {COUNT, HOW_MANY}


def test_the_papers_stated_n_range_is_a_sweep():
    stated = get_benchmark("blind/grid-count", params={"n": [str(n) for n in range(3, 10)]})
    assert len(stated.items()) == 2 * 2 * 21 * 3 * 2  # 126 images per version


def test_targets_groups_and_answer_space(grids):
    for item in grids.items():
        rows, columns = item.target
        assert item.groups["size"] == f"{rows}x{columns}"
        assert set(item.groups) == {"prompt", "grid", "n", "shape", "canvas", "thickness", "size"}
        assert len(item.answer_space) == 37
    count_item = next(i for i in grids.items() if i.question == COUNT)
    pair_item = next(i for i in grids.items() if i.question == HOW_MANY)
    assert "rows={9} columns={10}" in count_item.answer_space
    assert "(9,10)" in pair_item.answer_space
    for item in (count_item, pair_item):
        assert parse(grids.render_answer(item, cot=False), AnswerKind.PAIR).value == item.target


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of each run of True."""
    edges = np.diff(np.concatenate([[0], mask.astype(int), [0]]))
    starts, ends = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
    return list(zip(starts.tolist(), (ends - starts).tolist(), strict=True))


def _count_from_pixels(spec: Grid) -> tuple[int, int, list[int]]:
    """Rows and columns read from the image alone: grid lines are the pixel rows (columns)
    that are dark nearly all the way across; words never span a cell, so they do not count."""
    dark = np.asarray(spec.render().convert("L")) < 128
    horizontal, vertical = _runs(dark.mean(axis=1) > 0.9), _runs(dark.mean(axis=0) > 0.9)
    widths = [length for _, length in horizontal + vertical]
    return len(horizontal) - 1, len(vertical) - 1, widths


SAMPLE = [
    Grid(3, 3, 500, 10, "blank"),
    Grid(3, 4, 2000, 20, "text"),
    Grid(10, 9, 1250, 10, "blank"),
    Grid(8, 7, 1250, 20, "text"),
    Grid(15, 14, 500, 10, "text"),
    Grid(15, 15, 500, 20, "text"),
    Grid(14, 15, 2000, 10, "blank"),
]


@pytest.mark.parametrize("spec", SAMPLE, ids=lambda s: f"{s.grid}-{s.size}-{s.canvas}-{s.thickness}")
def test_pixels_agree_with_the_label(spec):
    rows, columns, widths = _count_from_pixels(spec)
    assert (rows, columns) == spec.counted == (spec.rows, spec.columns)
    # the line width is "10" or "20" px at 2000, scaled with the canvas
    expected = spec.thickness * spec.canvas / 2000
    assert all(abs(width - expected) <= 1.5 for width in widths)


def test_pixels_agree_with_the_label_on_a_sample_of_the_design(grids):
    for spec in random.Random(5).sample(grids.design(), 8):
        rows, columns, _ = _count_from_pixels(spec)
        assert (rows, columns) == grids.truth(spec, "count")
        # words, and only in text grids: ink inside the first cell
        grey = np.asarray(spec.render().convert("L"))
        (_, top), (bottom, _) = spec.horizontal_lines()[:2]
        (_, left), (right, _) = spec.vertical_lines()[:2]
        cell = grey[int(top) + 2 : int(bottom) - 1, int(left) + 2 : int(right) - 1]
        assert (cell.min() < 128) == (spec.grid == "text")


@pytest.mark.parametrize("grid", ["blank", "text"])
@pytest.mark.parametrize("canvas", [500, 2000])
def test_a_grid_of_9_by_10(grid, canvas):
    """9 x 10 is 9 rows (10 horizontal lines) and 10 columns (11 vertical lines), as the
    released file names read rows x columns."""
    spec = Grid(9, 10, canvas, 10, grid)
    rows, columns, _ = _count_from_pixels(spec)
    assert (rows, columns) == (9, 10)
    assert len(spec.horizontal_lines()) == 10 and len(spec.vertical_lines()) == 11
    benchmark = get_benchmark("blind/grid-count", params={"n": ["9"], "shape": ["wide"], "grid": [grid]})
    assert {item.target for item in benchmark.items()} == {(9, 10)}
    assert {item.groups["size"] for item in benchmark.items()} == {"9x10"}


def test_the_grid_fills_the_canvas_edge_to_edge():
    dark = np.asarray(Grid(5, 5, 1250, 20).render().convert("L")) < 128
    assert dark[:, 0].all() and dark[:, -1].all() and dark[0].all() and dark[-1].all()


@pytest.mark.parametrize("rows, columns", [(15, 15), (14, 15), (15, 14), (3, 4), (4, 3)])
@pytest.mark.parametrize("canvas", [500, 1250, 2000])
def test_words_sit_inside_their_cells(rows, columns, canvas):
    for thickness in (10, 20):
        spec = Grid(rows, columns, canvas, thickness, "text")
        horizontal, vertical = spec.horizontal_lines(), spec.vertical_lines()
        boxes = spec.word_boxes()
        assert len(boxes) == rows * columns and len({word for word, _, _ in boxes}) == rows * columns
        for index, (_, _, (left, top, right, bottom)) in enumerate(boxes):
            r, c = divmod(index, columns)
            assert vertical[c][1] < left and right < vertical[c + 1][0]
            assert horizontal[r][1] < top and bottom < horizontal[r + 1][0]


def test_words_come_from_the_seed_and_repeat_across_canvases():
    words = Grid(6, 7, 500, 10, "text").words()
    assert words == Grid(6, 7, 2000, 20, "text").words()
    assert words != Grid(6, 7, 500, 10, "text", seed=1).words()
    assert len(WORDS) == len(set(WORDS)) >= 225
    # the blank version is really blank: no ink inside the cells
    blank = np.asarray(Grid(6, 7, 500, 10).render().convert("L"))
    assert blank[20:60, 20:50].min() == 255


def test_rendering_is_deterministic_and_antialiased():
    spec = Grid(7, 8, 1250, 10, "text", seed=3)
    first, second = io.BytesIO(), io.BytesIO()
    spec.render().save(first, "PNG")
    Grid(7, 8, 1250, 10, "text", seed=3).render().save(second, "PNG")
    assert first.getvalue() == second.getvalue()
    assert len(Grid(7, 8, 1250, 10).render().getcolors(1 << 20)) > 2  # 6.25 px lines blend at their edges


def test_few_shot_examples_are_off_the_test_grid(grids):
    test_refs = {item.images[0].ref for item in grids.items()}
    examples = grids.examples()
    assert examples and not any(e.images[0].ref in test_refs for e in examples)
    test_sizes = {item.target for item in grids.items()}
    assert not {e.target for e in examples} & test_sizes
    item = grids.items()[0]
    chosen = grids.select_examples(item, 4)
    assert [e.question for e in chosen] == [item.question] * 4
    assert len({e.target for e in chosen}) >= 3
    assert all(e.reasoning for e in chosen)


def test_parameters_can_be_fixed_or_swept():
    swept = get_benchmark("blind/grid-count", params={"n": ["5"], "canvas": ["500"], "grid": ["text"]})
    assert sorted({i.target for i in swept.items()}) == [(5, 5), (5, 6), (6, 5)]
    assert len(swept.items()) == 3 * 2 * 2
    with pytest.raises(BenchmarkError, match="grid"):
        get_benchmark("blind/grid-count", params={"grid": ["dotted"]})
    with pytest.raises(BenchmarkError, match="no parameter gap"):
        get_benchmark("blind/grid-count", params={"gap": ["1"]})


@pytest.mark.parametrize(
    "reply",
    [
        "rows={5} columns={6}",
        "(5,6)",
        "(5, 6)",
        "5 rows and 6 columns",
        "There are 5 rows and 6 columns.",
        "Rows: 5, Columns: 6",
        "rows = 5, columns = 6",
        "The table has 5 rows and 6 columns, so the answer is (5,6).",
    ],
)
def test_replies_to_the_prompts_parse(reply):
    assert parse(reply, AnswerKind.PAIR).value == (5, 6)

"""blind/nested-squares: the paper's design, and ground truth that the pixels agree with."""

import io
from collections import Counter

import numpy as np
import pytest

from probes.benchmarks.blind.nested_squares import MIN_WHITE, PADDING, SHRINK
from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind
from probes.reading.parsing import parse
from probes.stimuli.nested_squares import NestedSquares

PROMPTS = {
    "Count total number of squares in the image. Answer with only the number in numerical format in curly brackets e.g. {3}.",
    "How many squares are in the image? Please answer with a number in curly brackets e.g., {10}.",
}


@pytest.fixture(scope="module")
def squares():
    return get_benchmark("blind/nested-squares")


def _layouts(benchmark) -> list[NestedSquares]:
    return list({item.images[0].ref: item.images[0].load.args[0] for item in benchmark.items()}.values())


def test_size_and_design_follow_the_paper(squares):
    items = squares.items()
    assert len(items) == 240 and squares.size_note() == "240 items (120 images x 2 prompts)"
    assert {item.question for item in items} == PROMPTS
    cells = Counter((layout.depth, layout.thickness) for layout in _layouts(squares))
    assert len(cells) == 4 * 3 and set(cells.values()) == {10}
    assert squares.chance == 25.0
    assert {i.target for i in items} == {2, 3, 4, 5}
    assert all(i.kind is AnswerKind.NUMBER and i.target == i.params["depth"] for i in items)
    assert set(items[0].groups) == {"prompt", "depth", "thickness", "canvas"}


def test_geometry_nests_with_visible_white_and_the_release_shrink(squares):
    for layout in _layouts(squares):
        assert len(layout.squares) == layout.depth
        assert min(layout.gaps()) >= MIN_WHITE * layout.canvas - 0.05
        for (_, _, outer), (_, _, inner) in zip(layout.squares, layout.squares[1:], strict=False):
            # The release's rule, measured on its images (not the paper's text's 0.75 alone).
            assert inner == pytest.approx(SHRINK * outer - PADDING, abs=2e-5)


def _components(mask: np.ndarray) -> list[np.ndarray]:
    """8-connected components of a boolean mask (pixel coordinates), by flood fill."""
    remaining = set(zip(*np.nonzero(mask), strict=True))
    found = []
    while remaining:
        stack = [remaining.pop()]
        members = list(stack)
        while stack:
            y, x = stack.pop()
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    neighbour = (y + dy, x + dx)
                    if neighbour in remaining:
                        remaining.remove(neighbour)
                        stack.append(neighbour)
                        members.append(neighbour)
        found.append(np.array(members))
    return found


def _squares_in_pixels(image) -> int:
    """Count the squares from the image alone: each outline is one connected blob of ink (none
    touch); check each blob is a square outline and each lies strictly inside the previous."""
    ink = np.asarray(image.convert("L")) < 160
    boxes = []
    for members in _components(ink):
        (top, left), (bottom, right) = members.min(0), members.max(0)
        height, width = bottom - top + 1, right - left + 1
        assert abs(height - width) <= 1, "not a square"
        assert len(members) < 0.5 * height * width, "not an outline"
        boxes.append((top, left, bottom, right))
    boxes.sort(key=lambda box: box[2] - box[0], reverse=True)
    for outer, inner in zip(boxes, boxes[1:], strict=False):
        assert outer[0] < inner[0] and outer[1] < inner[1] and inner[2] < outer[2] and inner[3] < outer[3]
    return len(boxes)


def test_pixels_agree_with_the_truth_on_a_sample(squares):
    sample = _layouts(squares)[::11]
    assert {layout.depth for layout in sample} == {2, 3, 4, 5}
    for layout in sample:
        assert _squares_in_pixels(layout.render()) == layout.depth, layout.ref


def test_hand_built_layouts():
    concentric = NestedSquares(((0.2, 0.2, 0.6), (0.3, 0.3, 0.4), (0.4, 0.4, 0.2)), thickness=4)
    assert concentric.depth == 3 and _squares_in_pixels(concentric.render()) == 3
    assert concentric.gaps() == pytest.approx([100 - 4000 / 720] * 2)
    with pytest.raises(ValueError, match="without touching"):  # inner stroke on the outer one
        NestedSquares(((0.2, 0.2, 0.6), (0.2, 0.3, 0.4)), thickness=2)
    with pytest.raises(ValueError, match="without touching"):  # sticks out
        NestedSquares(((0.2, 0.2, 0.3), (0.3, 0.3, 0.4)), thickness=2)
    with pytest.raises(ValueError, match="off the canvas"):
        NestedSquares(((0.7, 0.2, 0.4),), thickness=2)


def test_look_matches_the_release():
    layout = NestedSquares(((0.3, 0.3, 0.4),), thickness=2)
    image = layout.render()
    assert image.mode == "RGB" and image.size == (1000, 1000)
    pixels = np.asarray(image).astype(int)
    # A black stroke of thickness * canvas / 720 px (2.78 here) centred on the outline.
    assert (255 - pixels[500, 290:310, 0]).sum() / 255 == pytest.approx(2000 / 720, abs=0.01)
    assert pixels[500, 300].tolist() == [0, 0, 0] and pixels[500, 500].tolist() == [255, 255, 255]


def test_rendering_is_deterministic_and_antialiased(squares):
    layout = _layouts(squares)[5]
    first, second = io.BytesIO(), io.BytesIO()
    layout.render().save(first, "PNG")
    NestedSquares(layout.squares, layout.thickness, layout.canvas).render().save(second, "PNG")
    assert first.getvalue() == second.getvalue()
    assert len(layout.render().getcolors(1 << 20)) > 2
    again = get_benchmark("blind/nested-squares")
    assert [i.images[0].ref for i in again.items()] == [i.images[0].ref for i in squares.items()]


def test_few_shot_examples_are_off_the_test_set_and_balanced(squares):
    test_refs = {item.images[0].ref for item in squares.items()}
    examples = squares.examples()
    assert examples and not any(e.images[0].ref in test_refs for e in examples)
    item = squares.items()[0]
    chosen = squares.select_examples(item, 4)
    assert [e.question for e in chosen] == [item.question] * 4
    assert sorted(e.target for e in chosen) == [2, 3, 4, 5]
    assert all(e.reasoning for e in chosen)
    assert squares.render_answer(chosen[0], cot=False) == "{2}"


def test_parameters_can_be_fixed_or_swept():
    swept = get_benchmark(
        "blind/nested-squares", params={"depth": ["5"], "thickness": ["4"], "repeats": ["3"], "canvas": ["500"]}
    )
    layouts = _layouts(swept)
    assert len(swept.items()) == 6 and len(layouts) == 3
    assert all(layout.depth == 5 and layout.canvas == 500 and min(layout.gaps()) >= 3.9 for layout in layouts)
    other = get_benchmark("blind/nested-squares", params={"seed": ["1"]})
    assert {i.params["seed"] for i in other.items()} == {1}
    assert not {i.images[0].ref for i in other.items()} & {i.images[0].ref for i in swept.items()}
    with pytest.raises(BenchmarkError, match="one positive number"):
        get_benchmark("blind/nested-squares", params={"repeats": ["10", "20"]})
    with pytest.raises(BenchmarkError, match="no parameter gap"):
        get_benchmark("blind/nested-squares", params={"gap": ["1"]})


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("{4}", 4),
        ("3", 3),
        ("There are 5 squares in the image.", 5),
        ("I count five nested squares: {5}", 5),
        ("Counting from the outside in: 1, 2, 3, 4. There are {4} squares in total.", 4),
        ("Answer: {2}", 2),
        ("Following the example e.g. {3}, the answer is {4}", 4),
    ],
)
def test_typical_replies_parse(reply, value):
    assert parse(reply, AnswerKind.NUMBER).value == value

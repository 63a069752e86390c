"""blind/touching-circles: the paper's design, and ground truth that the pixels agree with."""

import io
from collections import Counter

import numpy as np
import pytest

from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.stimuli.touching_circles import BLUE, MAGENTA, TwoCircles

PROMPTS = {
    "Are the two circles touching each other? Answer with Yes/No.",
    "Are the two circles overlapping? Answer with Yes/No.",
}


@pytest.fixture(scope="module")
def circles():
    return get_benchmark("blind/touching-circles")


def test_size_and_design_follow_the_paper(circles):
    items = circles.items()
    assert len(items) == 1344
    assert len({item.images[0].ref for item in items}) == 672
    assert {item.question for item in items} == PROMPTS
    params = Counter((i.params["canvas"], round(i.params["diameter"], 4), i.params["orientation"]) for i in items)
    assert len(params) == 3 * 4 * 4 and set(params.values()) == {28}  # 14 gaps x 2 prompts each
    assert sorted({i.groups["gap"] for i in items}, key=float)[0] == "-0.15"
    assert len({i.groups["gap"] for i in items}) == 14
    assert circles.size_note() == "1344 items (672 images x 2 prompts)"


def test_ground_truth_from_the_gap_and_the_prompt(circles):
    answers = Counter(
        (i.groups["prompt"], float(i.groups["gap"]) <= 0, float(i.groups["gap"]) < 0, i.target) for i in circles.items()
    )
    # touching: yes iff gap <= 0 (4 gap values); overlapping: yes iff gap < 0 (3 gap values)
    assert answers[("touching", True, True, "yes")] == 3 * 48
    assert answers[("touching", True, False, "yes")] == 48
    assert answers[("overlapping", True, False, "no")] == 48
    assert sum(1 for i in circles.items() if i.groups["prompt"] == "touching" and i.target == "yes") == 192
    assert sum(1 for i in circles.items() if i.groups["prompt"] == "overlapping" and i.target == "yes") == 144


def _white_between_centres(spec: TwoCircles) -> int:
    """Count white pixels on the segment between the two centres, read from the image alone
    (the centres are found as the colour blobs' centroids, not taken from the generator)."""
    pixels = np.asarray(spec.render()).astype(int)
    blue = np.argwhere(np.abs(pixels - BLUE).sum(-1) < 30).mean(0)
    magenta = np.argwhere(np.abs(pixels - MAGENTA).sum(-1) < 30).mean(0)
    steps = np.linspace(0, 1, 4000)
    points = np.rint(blue[None] * (1 - steps[:, None]) + magenta[None] * steps[:, None]).astype(int)
    points = np.unique(points, axis=0)
    return int((pixels[points[:, 0], points[:, 1]].min(-1) > 245).sum())


@pytest.mark.parametrize("canvas", [384, 1155])
@pytest.mark.parametrize("orientation", ["vertical", "horizontal", "diagonal_1", "diagonal_2"])
@pytest.mark.parametrize("gap", [-0.15, -0.05, 0.0, 0.05, 0.5])
def test_pixels_agree_with_the_label(canvas, orientation, gap):
    spec = TwoCircles(canvas, 1 / 7, gap, orientation)
    white = _white_between_centres(spec)
    if spec.touching:
        assert white == 0
    else:
        assert white >= 2  # even the smallest gap (0.05 x 55 px) shows white


def test_overlap_is_drawn_magenta_on_top_like_the_paper():
    pixels = np.asarray(TwoCircles(384, 1 / 4, -0.15, "horizontal").render()).astype(int)
    assert (np.abs(pixels[192, 190:194] - MAGENTA).sum(-1) < 10).all()


def test_rendering_is_deterministic_and_antialiased():
    spec = TwoCircles(769, 1 / 5, 0.1, "diagonal_2")
    first, second = io.BytesIO(), io.BytesIO()
    spec.render().save(first, "PNG")
    TwoCircles(769, 1 / 5, 0.1, "diagonal_2").render().save(second, "PNG")
    assert first.getvalue() == second.getvalue()
    colours = len(spec.render().getcolors(1 << 20))
    assert colours > 10  # edge blends, not just three flat colours


def test_few_shot_examples_are_off_the_test_grid_and_balanced(circles):
    test_refs = {item.images[0].ref for item in circles.items()}
    examples = circles.examples()
    assert examples and not any(e.images[0].ref in test_refs for e in examples)
    item = circles.items()[0]
    chosen = circles.select_examples(item, 4)
    assert [e.question for e in chosen] == [item.question] * 4
    assert sorted(e.target for e in chosen) == ["no", "no", "yes", "yes"]
    assert all(e.reasoning for e in chosen)


def test_parameters_can_be_fixed_or_swept():
    swept = get_benchmark("blind/touching-circles", params={"gap": ["-0.1", "0", "0.1"], "canvas": ["384"]})
    assert len(swept.items()) == 3 * 1 * 4 * 4 * 2
    assert {i.groups["gap"] for i in swept.items()} == {"-0.10", "+0.00", "+0.10"}
    with pytest.raises(BenchmarkError, match="no parameter thickness"):
        get_benchmark("blind/touching-circles", params={"thickness": ["2"]})
    with pytest.raises(BenchmarkError, match="orientation"):
        get_benchmark("blind/touching-circles", params={"orientation": ["sideways"]})

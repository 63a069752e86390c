"""blind/line-intersections: the paper's design, and ground truth that the pixels agree with."""

import io
import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from probes.benchmarks.blind.line_intersections import (
    MIN_ANGLE,
    MIN_NEAR_MISS,
    MIN_SEPARATION,
    MIN_VERTEX_GAP,
    sheared_order,
    spread,
)
from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind
from probes.reading.parsing import parse
from probes.stimuli.line_intersections import LinePlot, clearance, segment_intersection

PROMPTS = {
    "How many times do the blue and red lines touch each other? Answer with a number in curly brackets, e.g., {5}.",
    "Count the intersection points where the blue and red lines meet. Put your answer in curly brackets, e.g., {2}.",
}


@pytest.fixture(scope="module")
def lines():
    return get_benchmark("blind/line-intersections")


def test_size_and_balance_follow_the_paper(lines):
    items = lines.items()
    assert len(items) == 300 and lines.size_note() == "300 items (150 images x 2 prompts)"
    assert {item.question for item in items} == PROMPTS
    images = {item.images[0].ref: item for item in items}
    assert len(images) == 150
    for name in ("intersections", "thickness", "resolution"):
        assert set(Counter(i.params[name] for i in images.values()).values()) == {50}, name
    for first, second in itertools.combinations(("intersections", "thickness", "resolution"), 2):
        pairs = Counter((i.params[first], i.params[second]) for i in images.values())
        assert len(pairs) == 9 and set(pairs.values()) <= {16, 17}, (first, second)
    assert lines.chance == pytest.approx(33.33, abs=0.01)
    assert all(i.kind is AnswerKind.NUMBER and i.answer_space == ("{0}", "{1}", "{2}") for i in items)
    assert set(items[0].groups) == {"prompt", "intersections", "thickness", "resolution"}


def test_truth_is_the_geometry_and_every_plot_is_unambiguous(lines):
    for item in lines.items():
        plot = item.images[0].load.args[0]
        assert item.target == plot.intersections == item.params["intersections"]
        measures = clearance(plot)
        assert measures["separation"] >= MIN_SEPARATION and measures["vertex_gap"] >= MIN_VERTEX_GAP
        assert measures["angle"] >= MIN_ANGLE and measures["near_miss"] >= MIN_NEAR_MISS


def _crossings_in_pixels(image) -> int:
    """Count where the lines swap places, from the image alone: in each column, the blue and the
    red line's centre rows (each is the graph of a function of x); a crossing is a change of
    which one is higher, between columns where the two are clearly apart."""
    pixels = np.asarray(image).astype(int)
    blue = (pixels[..., 2] - pixels[..., 0]) > 120
    red = (pixels[..., 0] - pixels[..., 2]) > 120
    rows = np.arange(pixels.shape[0])[:, None]
    has = blue.any(0) & red.any(0)
    blue_y = (blue * rows).sum(0) / np.maximum(blue.sum(0), 1)
    red_y = (red * rows).sum(0) / np.maximum(red.sum(0), 1)
    width = max(blue.sum(0).max(), 3)
    apart = has & (np.abs(blue_y - red_y) > width)
    signs = np.sign(blue_y - red_y)[apart]
    return int((signs[1:] != signs[:-1]).sum())


def test_pixels_agree_with_the_truth_on_a_sample(lines):
    plots = [item.images[0].load.args[0] for item in lines.items()[::2]]
    sample = [p for p in plots if p.resolution == 384][::3] + [p for p in plots if p.resolution == 1152][:3]
    assert {p.intersections for p in sample} == {0, 1, 2}
    for plot in sample:
        assert _crossings_in_pixels(plot.render()) == plot.intersections, plot.ref


def _touching_in_pixels(image) -> bool:
    """Is any blue ink right next to (or under) red ink? (No white between the lines.)"""
    pixels = np.asarray(image).astype(int)
    blue = (pixels[..., 2] - pixels[..., 0]) > 60
    red = (pixels[..., 0] - pixels[..., 2]) > 60
    grown = red.copy()
    grown[1:] |= red[:-1]
    grown[:-1] |= red[1:]
    grown[:, 1:] |= red[:, :-1]
    grown[:, :-1] |= red[:, 1:]
    return bool((grown & blue).any())


def test_hand_built_meeting_at_a_vertex_counts_once():
    # Both lines bend at (0.5, 0.5) and bounce apart: they touch there, once.
    touch = LinePlot(blue=(0.2, 0.5, 0.2), red=(0.8, 0.5, 0.8), thickness=3, resolution=384)
    assert touch.points() == [(Fraction(1, 2), Fraction(1, 2))] and touch.intersections == 1
    assert _touching_in_pixels(touch.render())
    # Crossing through the shared vertex is one meeting too, not one per segment pair.
    through = LinePlot(blue=(0.2, 0.5, 0.9), red=(0.8, 0.5, 0.6), thickness=2, resolution=384)
    assert through.intersections == 1
    # The blue corner resting on a straight red line.
    on_line = LinePlot(blue=(0.9, 0.5, 0.9), red=(0.3, 0.5, 0.7), thickness=2, resolution=384)
    assert on_line.points() == [(Fraction(1, 2), Fraction(1, 2))]
    # A shared end point at the left edge, plus a crossing elsewhere: two meetings.
    ends = LinePlot(blue=(0.3, 0.9, 0.1), red=(0.3, 0.1, 0.9), thickness=2, resolution=384)
    assert ends.points() == [(Fraction(0), Fraction(3, 10)), (Fraction(3, 4), Fraction(1, 2))]


def test_hand_built_zero_and_two_crossings_with_pixels():
    apart = LinePlot(blue=(0.8, 0.9, 0.7), red=(0.2, 0.1, 0.3), thickness=4, resolution=384)
    assert apart.intersections == 0 and _crossings_in_pixels(apart.render()) == 0
    assert not _touching_in_pixels(apart.render())
    twice = LinePlot(blue=(0.1, 0.9, 0.1), red=(0.5, 0.5, 0.5), thickness=2, resolution=768)
    assert twice.points() == [(Fraction(1, 4), Fraction(1, 2)), (Fraction(3, 4), Fraction(1, 2))]
    assert _crossings_in_pixels(twice.render()) == 2


def test_overlapping_lines_are_refused():
    with pytest.raises(ValueError, match="overlap"):
        LinePlot(blue=(0.1, 0.5, 0.9), red=(0.3, 0.5, 0.9), thickness=2, resolution=384)
    assert segment_intersection((0, 0), (1, 1), (0, 1), (1, 2)) is None  # parallel, apart
    with pytest.raises(ValueError):
        LinePlot(blue=(0.1, 1.5, 0.9), red=(0.3, 0.5, 0.9), thickness=2, resolution=384)


def test_look_matches_the_release():
    plot = LinePlot(blue=(0.5, 0.5, 0.5), red=(0.2, 0.2, 0.2), thickness=4, resolution=1152)
    pixels = np.asarray(plot.render()).astype(int)
    assert pixels.shape == (1152, 1152, 3)
    # Width thickness * resolution / 360 px (12.8 here), flat ends 6 px from the edges.
    column = pixels[:, 576]
    assert (255 - column[:, 0]).sum() / 255 == pytest.approx(12.8, abs=0.05)
    assert (pixels[:, :5].min() == 255) and pixels[576, 7].tolist() == [0, 0, 255]
    assert plot.to_pixels(0, 1) == (6.0, 6.0)


def test_rendering_is_deterministic_and_antialiased(lines):
    plot = lines.items()[7].images[0].load.args[0]
    first, second = io.BytesIO(), io.BytesIO()
    plot.render().save(first, "PNG")
    LinePlot(plot.blue, plot.red, plot.thickness, plot.resolution).render().save(second, "PNG")
    assert first.getvalue() == second.getvalue()
    assert len(plot.render().getcolors(1 << 20)) > 10
    again = get_benchmark("blind/line-intersections")
    assert [i.images[0].ref for i in again.items()] == [i.images[0].ref for i in lines.items()]


def test_few_shot_examples_are_off_the_test_set_and_balanced(lines):
    test_refs = {item.images[0].ref for item in lines.items()}
    examples = lines.examples()
    assert examples and not any(e.images[0].ref in test_refs for e in examples)
    item = lines.items()[0]
    chosen = lines.select_examples(item, 3)
    assert [e.question for e in chosen] == [item.question] * 3
    assert sorted(e.target for e in chosen) == [0, 1, 2]
    assert all(e.reasoning for e in chosen)
    assert lines.render_answer(chosen[1], cot=False) == "{1}"


def test_parameters_can_be_fixed_or_swept():
    small = get_benchmark(
        "blind/line-intersections", params={"thickness": ["2"], "resolution": ["384"], "images": ["9"], "seed": ["3"]}
    )
    assert len(small.items()) == 18
    assert Counter(i.target for i in small.items()) == {0: 6, 1: 6, 2: 6}
    assert {i.params["seed"] for i in small.items()} == {3}
    two = get_benchmark("blind/line-intersections", params={"intersections": ["2"], "images": ["4"]})
    assert {i.target for i in two.items()} == {2}
    with pytest.raises(BenchmarkError, match="one positive number"):
        get_benchmark("blind/line-intersections", params={"images": ["150", "300"]})
    with pytest.raises(BenchmarkError, match="intersections"):
        get_benchmark("blind/line-intersections", params={"intersections": ["3"]})
    with pytest.raises(BenchmarkError, match="no parameter gap"):
        get_benchmark("blind/line-intersections", params={"gap": ["1"]})


def test_the_sheared_order_is_latin():
    order = sheared_order([3, 3, 3])
    assert sorted(order) == sorted(itertools.product(range(3), repeat=3))
    for start in range(0, 27, 3):
        block = order[start : start + 3]
        assert all(len({cell[f] for cell in block}) == 3 for f in range(3))
    counts = spread(150, [(0, 1, 2), (2, 3, 4), (384, 768, 1152)])
    assert sum(counts.values()) == 150 and set(counts.values()) == {5, 6}


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("{2}", 2),
        ("1", 1),
        ("The lines intersect at {1} point.", 1),
        ("The blue and red lines touch each other 2 times.", 2),
        ("**Answer:** {0}", 0),
        ("Looking at the plot, the lines cross once on the left.\n\n{1}", 1),
        ("Following the format e.g., {5}, my answer is {2}", 2),
        ("Zero", 0),
    ],
)
def test_typical_replies_parse(reply, value):
    assert parse(reply, AnswerKind.NUMBER).value == value


def test_band_drawing_equals_drawing_the_whole_canvas():
    """Only a band around each line is computed; it must paint what the whole canvas would."""
    from probes.stimuli.line_intersections import BLUE, RED, _signed_distance

    plot = LinePlot(blue=(0.0, 1.0, 0.02), red=(0.97, 0.03, 1.0), thickness=4, resolution=384)
    ys, xs = np.mgrid[0:384, 0:384].astype(np.float32) + 0.5
    canvas = np.full((384, 384, 3), 255.0, dtype=np.float32)
    for colour, rgb in (("blue", BLUE), ("red", RED)):
        points = [plot.to_pixels(x, y) for x, y in plot.polyline(colour)]
        coverage = np.clip(0.5 - _signed_distance(points, plot.line_width / 2, xs, ys), 0, 1)[..., None]
        canvas = np.rint(canvas + (np.asarray(rgb, dtype=np.float32) - canvas) * coverage)
    assert np.array_equal(canvas.astype(np.uint8), np.asarray(plot.render()))

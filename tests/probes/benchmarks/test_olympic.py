"""blind/olympic-circles and blind/olympic-pentagons: the design, and counts read back from pixels."""

import io
from collections import Counter

import numpy as np
import pytest

from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind, Status
from probes.reading.parsing import parse
from probes.stimuli.olympic import PALETTE, SHAPES, OlympicShapes, clearance

IDS = {"circle": "blind/olympic-circles", "pentagon": "blind/olympic-pentagons"}
PROMPTS = {
    "circle": {
        "How many circles are in the image? Answer with only the number in numerical format.",
        "Count the circles in the image. Answer with a number in curly brackets e.g. {3}.",
    },
    "pentagon": {
        "How many pentagons are in the image? Answer with only the number in numerical format.",
        "Count the pentagons in the image. Answer with a number in curly brackets e.g. {3}.",
    },
}


@pytest.fixture(scope="module", params=SHAPES)
def bench(request):
    return request.param, get_benchmark(IDS[request.param])


# --- reading the image alone ------------------------------------------------------------


def _components(mask: np.ndarray, diagonal: bool = False) -> list[list[tuple[int, int, int]]]:
    """Connected components of a boolean mask (4-connected, or 8-connected with `diagonal`),
    as lists of runs (row, start, end); union-find over the runs of each row, so it stays fast
    on 1155 px images."""
    parent: list[int] = []

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    runs: list[tuple[int, int, int]] = []
    previous: list[int] = []
    reach = int(diagonal)
    for row in range(mask.shape[0]):
        padded = np.concatenate([[False], mask[row], [False]])
        edges = np.flatnonzero(np.diff(padded.astype(np.int8))).tolist()
        current = []
        for start, end in zip(edges[::2], edges[1::2], strict=True):
            parent.append(len(runs))
            current.append(len(runs))
            runs.append((row, start, end))
        i = j = 0  # both rows' runs are sorted: walk them together
        while i < len(previous) and j < len(current):
            _, s0, e0 = runs[previous[i]]
            _, s1, e1 = runs[current[j]]
            if s0 < e1 + reach and s1 < e0 + reach:
                parent[find(current[j])] = find(previous[i])
            if e0 < e1:
                i += 1
            else:
                j += 1
        previous = current
    groups: dict[int, list[tuple[int, int, int]]] = {}
    for index, run in enumerate(runs):
        groups.setdefault(find(index), []).append(run)
    return list(groups.values())


def _ink(pixels: np.ndarray) -> np.ndarray:
    return pixels.min(axis=-1) < 215


def count_from_pixels(image) -> int:
    """N read from the image alone. The outlines form one connected drawing in which each
    neighbouring pair crosses twice; such a chain of N closed curves bounds 2N - 1 white
    regions (Euler: 2(N - 1) crossings, 4N - 4 arcs, so 2N faces with the outside). Drawing
    one shape more or less changes the count of enclosed regions by two. White specks of a
    few pixels where two anti-aliased strokes cross are not regions."""
    ink = _ink(np.asarray(image))
    # Ink is 8-connected (a thin diagonal stroke touches only at corners), white 4-connected.
    assert len(_components(ink, diagonal=True)) == 1, "the shapes should form one connected drawing"
    height, width = ink.shape
    holes = [
        c
        for c in _components(~ink)
        if sum(e - s for _, s, e in c) >= 12 and not any(r in (0, height - 1) or s == 0 or e == width for r, s, e in c)
    ]
    assert len(holes) % 2 == 1
    return (len(holes) + 1) // 2


def _painted(pixels: np.ndarray, colour) -> np.ndarray:
    """Pixels that are the colour blended with white (thin strokes never reach full colour):
    on the line from white to the colour, at least a third of the way."""
    direction = np.asarray(colour) - 255
    share = ((pixels - 255) * direction).sum(-1) / (direction * direction).sum()
    off_line = np.abs(pixels - 255 - share[..., None] * direction).sum(-1)
    return (share > 0.33) & (off_line < 14)


def colours_from_pixels(image) -> int:
    """How many tab10 colours are painted in the image."""
    pixels = np.asarray(image)
    inked = pixels[_ink(pixels)].astype(int)  # only the few non-white pixels
    return sum(1 for colour in PALETTE if _painted(inked, colour).sum() >= 20)


def bounding_boxes_from_pixels(image, colour) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(_painted(np.asarray(image).astype(int), colour))
    return xs.min(), ys.min(), xs.max(), ys.max()


# --- design -------------------------------------------------------------------------------


def test_size_and_design_follow_the_paper_and_release(bench):
    shape, benchmark = bench
    items = benchmark.items()
    assert len(items) == 120 and benchmark.size_note() == "120 items (60 images x 2 prompts)"
    assert len({item.images[0].ref for item in items}) == 60
    assert {item.question for item in items} == PROMPTS[shape]
    cells = Counter(
        (i.params["canvas"], i.params["count"], round(i.params["size"], 4), i.params["thickness"]) for i in items
    )
    assert len(cells) == 3 * 5 * 2 * 2 and set(cells.values()) == {2}
    sizes = {"circle": {"1/10", "1/7"}, "pentagon": {"1/20", "1/14"}}[shape]
    assert {i.groups["size"] for i in items} == sizes
    assert {i.groups["thickness"] for i in items} == {"0.5", "1"}
    assert set(items[0].groups) == {"prompt", "count", "canvas", "size", "thickness", "colour"}


def test_colour_is_balanced_over_every_other_parameter(bench):
    _, benchmark = bench
    images = {item.images[0].ref: item for item in benchmark.items()}.values()
    assert Counter(i.groups["colour"] for i in images) == {"black": 30, "colored": 30}
    for name, per_level in (("canvas", 10), ("count", 6), ("size", 15), ("thickness", 15)):
        tally = Counter((i.groups[name], i.groups["colour"]) for i in images)
        assert set(tally.values()) == {per_level}, name


def test_answers_are_the_number_of_shapes_drawn(bench):
    _, benchmark = bench
    items = benchmark.items()
    assert Counter(i.target for i in items) == {n: 24 for n in range(5, 10)}
    assert all(i.target == i.params["count"] for i in items)
    item = items[0]
    assert len(item.answer_space) == 5
    assert all(("{" in a) == ("curly" in item.question) for a in item.answer_space)


# --- geometry and pixels --------------------------------------------------------------------


# The release's spacing (probes/stimuli/olympic.py): same-row circles 0.05 diameters apart (and a
# third outline as near the crossings), same-row pentagons 0.10 sides apart with every corner at
# least 0.17 sides from another outline. (Before matching the release: 0.2 for both.)
LEAST = {"circle": 0.049, "pentagon": 0.099}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("count", [2, 3, 5, 6, 9, 12])
def test_layout_never_grazes(shape, count):
    measured = clearance(shape, count)
    assert measured.crossings == (2,) * (count - 1)  # neighbours cross twice, nobody else
    assert measured.least >= LEAST[shape] and measured.angle >= 35
    assert measured.corner >= 0.16  # no pentagon corner on another's side (inf for circles)


@pytest.mark.parametrize(
    "spec",
    [
        OlympicShapes("circle", 5, 384, 1 / 10, 0.5, "black"),
        OlympicShapes("circle", 9, 384, 1 / 7, 1.0, "black"),
        OlympicShapes("circle", 6, 769, 1 / 10, 1.0, "colored"),
        OlympicShapes("circle", 8, 1155, 1 / 7, 0.5, "black"),
        OlympicShapes("pentagon", 5, 384, 1 / 20, 0.5, "colored"),
        OlympicShapes("pentagon", 9, 384, 1 / 20, 1.0, "black"),
        OlympicShapes("pentagon", 7, 769, 1 / 14, 0.5, "black"),
        OlympicShapes("pentagon", 6, 1155, 1 / 14, 1.0, "colored"),
    ],
    ids=lambda s: f"{s.shape}-{s.count}-{s.canvas}-{s.colour}",
)
def test_pixels_agree_with_the_label(spec):
    image = spec.render()
    assert count_from_pixels(image) == spec.count
    if spec.colour == "colored":
        assert colours_from_pixels(image) == spec.count
    else:
        assert colours_from_pixels(image) == 0


def test_the_pixel_count_tells_n_from_its_neighbours():
    counts = [count_from_pixels(OlympicShapes("circle", n, 384, 1 / 10, 1.0, "black").render()) for n in (4, 5, 6)]
    assert counts == [4, 5, 6]


def test_every_default_image_reads_back_on_a_sample(bench):
    shape, benchmark = bench
    images = list({item.images[0].ref: item for item in benchmark.items()}.values())
    for item in images[::7]:
        image = item.images[0].load()
        assert count_from_pixels(image) == item.target


def test_bounding_box_holds_the_n_positions():
    """Coloured shapes: each colour's ink spans one shape, left to right in drawing order."""
    spec = OlympicShapes("circle", 7, 769, 1 / 10, 1.0, "colored")
    image = spec.render()
    boxes = [bounding_boxes_from_pixels(image, PALETTE[i]) for i in range(7)]
    lefts = [box[0] for box in boxes]
    assert lefts == sorted(lefts)
    diameter = spec.size * spec.canvas
    for x0, y0, x1, y1 in boxes:
        assert abs((x1 - x0) - diameter) < 3 + spec.width_px and abs((y1 - y0) - diameter) < 3 + spec.width_px
    top, bottom = spec.rows()
    assert (top, bottom) == (4, 3)
    assert len({round(box[1] / 5) for box in boxes}) == 2  # two rows


def test_line_width_matches_the_release():
    # The release draws 1 point at 1155 px as 4.2 px of ink across a vertical stroke.
    spec = OlympicShapes("circle", 5, 1155, 1 / 7, 1.0, "black")
    pixels = np.asarray(spec.render()).astype(int)
    x, y = spec.outlines()[0][:2]
    row = int(y)
    left = int(x - spec.size * spec.canvas / 2)
    ink = (255 - pixels[row, left - 6 : left + 6].min(-1)).sum() / 255
    assert 3.8 < ink < 4.6


def test_rendering_is_deterministic_and_antialiased():
    spec = OlympicShapes("pentagon", 7, 769, 1 / 14, 0.5, "colored")
    first, second = io.BytesIO(), io.BytesIO()
    spec.render().save(first, "PNG")
    OlympicShapes("pentagon", 7, 769, 1 / 14, 0.5, "colored").render().save(second, "PNG")
    assert first.getvalue() == second.getvalue()
    assert len(spec.render().getcolors(1 << 20)) > 20


def test_invalid_or_crowded_stimuli_are_refused():
    with pytest.raises(ValueError, match="do not fit"):
        OlympicShapes("circle", 9, 384, 1 / 5, 1.0, "black")  # the paper's C/5: too wide for 9
    with pytest.raises(ValueError, match="white"):
        OlympicShapes("pentagon", 5, 384, 1 / 40, 1.0, "black")
    with pytest.raises(ValueError, match="shape"):
        OlympicShapes("square", 5, 384, 1 / 10, 1.0, "black")


# --- few-shot, sweeps, parsing ----------------------------------------------------------------


def test_few_shot_examples_are_off_the_test_grid_and_balanced(bench):
    _, benchmark = bench
    test_refs = {item.images[0].ref for item in benchmark.items()}
    examples = benchmark.examples()
    assert examples and not any(e.images[0].ref in test_refs for e in examples)
    for item in (benchmark.items()[0], benchmark.items()[1]):
        chosen = benchmark.select_examples(item, 5)
        assert [e.question for e in chosen] == [item.question] * 5
        assert sorted(e.target for e in chosen) == [5, 6, 7, 8, 9]
        assert all(e.reasoning and str(e.target) in e.reasoning for e in chosen)
        answer = benchmark.render_answer(chosen[0], cot=False)
        assert answer == (f"{{{chosen[0].target}}}" if "curly" in item.question else str(chosen[0].target))


def test_parameters_can_be_fixed_or_swept():
    swept = get_benchmark("blind/olympic-circles", params={"count": ["5", "7"], "colour": ["black"]})
    assert len(swept.items()) == 2 * 3 * 2 * 2 * 2
    assert {i.groups["colour"] for i in swept.items()} == {"black"}
    bigger = get_benchmark("blind/olympic-pentagons", params={"count": ["10", "11"], "canvas": ["1155"]})
    assert {i.target for i in bigger.items()} == {10, 11}
    with pytest.raises(BenchmarkError, match="do not fit"):
        get_benchmark("blind/olympic-circles", params={"size": ["1/5"]})
    with pytest.raises(BenchmarkError, match="colour"):
        get_benchmark("blind/olympic-circles", params={"colour": ["rainbow"]})
    with pytest.raises(BenchmarkError, match="no parameter"):
        get_benchmark("blind/olympic-circles", params={"gap": ["2"]})


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("7", 7),
        ("{7}", 7),
        ("7.", 7),
        ("**7**", 7),
        ("Seven", 7),
        ("There are 7 circles in the image.", 7),
        ("I count 6 pentagons.", 6),
        ("9 pentagons", 9),
        ("Counting the circles: the top row has 4 and the bottom row has 3, so 7 in total.", 7),
        ("Count the circles, e.g. {3}: there are 5 circles. {5}", 5),
        ("The number of circles is 6.", 6),
    ],
)
def test_typical_replies_parse(reply, value):
    parsed = parse(reply, AnswerKind.NUMBER)
    assert parsed.status is Status.ANSWERED and parsed.value == value
